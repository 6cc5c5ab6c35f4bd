/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What sbxctl's modules share: the options, the one-line errors with their exit codes, calls to sbxd. */

#include <stdbool.h>
#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "record.h"

extern bool arg_json;
extern bool arg_quiet;
extern bool arg_legend;
extern const char *arg_export_to;       /* export --to=DIR */

/* One line on stderr ("sbxctl: ..."), and the exit code given back. */
_printf_(2, 3) int complain(int code, const char *fmt, ...);
#define refused(...) complain(SBX_EXIT_REFUSED, __VA_ARGS__)
#define failed(...) complain(SBX_EXIT_FAILURE, __VA_ARGS__)

/* A method of sbxd's: 0, or sbxctl's exit status (the error printed). */
int call_daemon_reply(const char *method, sd_bus_message **ret_reply, const char *types, ...);
/* The same with a timeout of its own (a call that may take long: an image import). */
int call_daemon_reply_timeout(uint64_t usec, const char *method, sd_bus_message **ret_reply, const char *types, ...);
/* A reply of one JSON array (a list method's): in *ret; with --json printed instead, and *ret NULL. 0, or
 * sbxctl's exit status. */
int reply_json_array(sd_bus_message *reply, json_object **ret);
/* The options after the first word (a subcommand's); 1 to go on, else minus the exit status. */
int parse_argv_after_first(int argc, char *argv[]);
/* A run's record from sbxd (Get). */
int get_record(const char *id, RunRecord **ret);

/* sbxctl cache (caches.c) */
int verb_cache(int argc, char **argv);

/* sbxctl export (export.c) */
int verb_export(int argc, char **argv);
/* The end-of-run lines of a run's export: one per refused and held item, and what was delivered.
 * Returns true if the review did not finish. */
bool print_export_summary(const RunRecord *r);

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
