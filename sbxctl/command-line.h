/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The command line and environment of run and exec: the options -E/--setenv and --env-file, checked as sbxd
 * checks them, and sent as bytes. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

/* The options: 1, or minus the exit status. */
int command_option_setenv(const char *spec);
int command_option_env_file(const char *path);
/* -E or --env-file was given */
bool command_env_given(void);
/* The environment entries of the options, and cmd and them checked as sbxd does (command.h). 0, or the
 * exit status (the error printed). */
int command_prepare(char **cmd, char ***ret_env);
