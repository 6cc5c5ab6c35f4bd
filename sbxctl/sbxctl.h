/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What sbxctl.c gives its verb files: the options after a subcommand, and the verbs it dispatches to. */

#include "common.h"

/* The options after the first word (a subcommand's); 1 to go on, else minus the exit status. */
int parse_argv_after_first(int argc, char *argv[]);

/* sbxctl cache (caches.c) */
int verb_cache(int argc, char **argv);

/* sbxctl export (export.c) */
int verb_export(int argc, char **argv);

/* sbxctl image (image.c) */
int verb_image(int argc, char **argv);

/* The command line and environment of run and exec (command.c). The options: 1, or minus the exit status. */
int command_option_setenv(const char *spec);
int command_option_env_file(const char *path);
/* -E or --env-file was given */
bool command_env_given(void);
/* The environment entries of the options, and cmd and them checked as sbxd does (command.h). 0, or the
 * exit status (the error printed). */
int command_prepare(char **cmd, char ***ret_env);
/* Into an open a{sv}: "argv_bytes" (cmd) and, if any, "environment" (env), as byte arrays. */
int command_append(sd_bus_message *m, char **cmd, char **env);
