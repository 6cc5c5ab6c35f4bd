/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sbxctl program (front.c) and its run and exec on sbxd's own socket (run-direct.c). */

/* run_direct(): not a run for this path; sbxctl-bus takes the command line, nothing having been said. */
#define RUN_DIRECT_ELSEWHERE (-1)

/* sbxctl run, its options read: the words after them in argc/argv, orig_argv the whole command line as it
 * came (for sbxctl-bus, should sbxd go away mid-run). sbxctl's exit status, or RUN_DIRECT_ELSEWHERE. */
int run_direct(int argc, char **argv, char **orig_argv);
/* sbxctl exec, the options before the verb read: the sandbox and the words after it in argc/argv. The same. */
int exec_direct(int argc, char **argv, char **orig_argv);

/* sbxctl-bus: the one beside this program (a build tree), else SBXCTL_BUS_PATH. */
const char *sbxctl_bus_path(void);
