/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's command line and the environment variables its caller sets (docs/limits.md, sbxctl(1)): what
 * execve() accepts and what the profile lets a caller set. Pure: sbxctl checks a request with it before
 * sending it, sbxd again before starting anything. Arguments and values are bytes (anything but NUL);
 * the command line and the environment never reach a unit's properties, the record or the journal. */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "util.h"


/* fs/exec.c: one string at most 32 pages (MAX_ARG_STRLEN); all of them, with a pointer each, within a
 * quarter of the stack size limit, at most three quarters of _STK_LIM (6 MiB), at least ARG_MAX (32 pages) */
#define COMMAND_STRING_MAX (32U * 4096U)
#define COMMAND_ARG_MAX_MIN (32U * 4096U)
#define COMMAND_ARG_MAX_CEILING (6U * 1024U * 1024U)
/* kept free for what the run's command gets besides the request's: the environment the unit sets (HOME,
 * PATH, USER...) and the path execvp() finds the program at */
#define COMMAND_RESERVE (8U * 1024U)

/* The bytes execve() takes for strings and their pointers, with this stack size limit (RLIMIT_STACK's
 * soft value; RLIM_INFINITY as UINT64_MAX), less COMMAND_RESERVE. */
uint64_t command_size_limit(uint64_t stack_limit);

/* The bytes argv and env take in execve()'s count: each string with its NUL, and a pointer each. */
uint64_t command_size(char **argv, char **env);

/* argv (at least one string, the first not empty) and env ("NAME=VALUE" entries, may be NULL) within what
 * execve() accepts under stack_limit. -E2BIG with a message naming the limit, -EINVAL for an empty
 * command. */
int command_check(char **argv, char **env, uint64_t stack_limit, char **ret_error);

/* NAME of a "NAME=VALUE" entry: not empty, not starting with a digit, printable ASCII but "=" (as systemd
 * has it). */
bool environment_name_is_valid(const char *name, size_t len);

/* The names a caller may not set unless the profile's environment.deny leaves them out (the dynamic
 * loader's, glibc's list of variables it ignores in set-user-ID programs, and sbx's own). NULL-terminated. */
extern const char *const environment_deny_default[];

/* Each entry "NAME=VALUE" with a valid NAME profile 'profile' lets a caller set: matched by a pattern of
 * allow and by none of deny (its environment.allow and .deny, fnmatch() globs). -EINVAL for a malformed
 * entry, -EPERM for a name the profile refuses, with a message naming the entry (never its value). */
int environment_check(char **allow, char **deny, const char *profile, char **env, char **ret_error);

/* The stack size limit command_check() assumes when none is known (systemd's default soft limit). */
#define COMMAND_STACK_DEFAULT (8U * 1024U * 1024U)
