/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A sandbox's exec helper (--serve): after the same checks as a run's, it stays in the unit and runs
 * the commands sbxd sends over the control channel (src/shared/sandbox-proto.h), each from inside the
 * unit (same user, namespaces, cgroup, seccomp, egress policy: everything the unit has), in a session
 * of its own, under a supervisor of its own (the profile's syscall rules, the output ceiling, the
 * timeout, signals passed on), and reports each one's figures. It ends when the channel closes (sbxd
 * asked it to, or is gone) or the unit is stopped. */

#include "supervise.h"

typedef struct ServeConfig {
        const char *seccomp_hex;      /* the profile's syscall rules (--seccomp-filter=), or NULL */
        uint64_t output_max;          /* the profile's output ceiling per command; 0: none */
        bool output_cut;              /* past it: drop the rest, the command goes on (else it is ended) */
        bool spawn_shared;            /* the command's child may share the supervisor's memory (spawn-child.h) */
        /* the command's side of spawn_child(): sets the command up (envp: its whole environment,
         * spawn_environ()) and execs it; never returns */
        void (*exec_child)(char **argv, char **envp, Supervisor *sup);
} ServeConfig;

/* ctl: the control channel. Returns 0 when the channel closed, a negative errno on failure. */
int serve(int ctl, const ServeConfig *cfg);

/* A run's helper: waits for exactly one EXEC (sbxd queued it before the unit started); a pooled unit's
 * (--pool, pooled) first says READY on ctl. Returns 1 with the command line and environment in *ret_argv
 * and *ret_env (command_fd_free()) and its stdin, stdout and stderr in fds; 0 when the channel closed,
 * -ECANCELED when the unit is being stopped first (SIGTERM); another negative errno on failure. The EXEC's timeout and output
 * ceiling are not used: a run has the unit's RuntimeMaxSec= and the helper's options. Whether the command
 * gets a terminal (SBX_EXEC_TTY) goes to sup's tty fields. */
int serve_wait_one(int ctl, bool pooled, char ***ret_argv, char ***ret_env, int fds[3], Supervisor *sup);
