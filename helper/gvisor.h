/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The gVisor tier (process.isolation "gvisor", docs/security.md "Isolation tiers"): the command runs in
 * runsc, gVisor's kernel in user space, as the exec helper's child inside the run's own unit, so that the
 * unit's user, hardening, cgroup ceilings, network namespace and egress programs hold around runsc as
 * around any command. The helper writes the container's OCI bundle where the command cannot see it (the
 * unit's /dev/shm: gVisor gives the command a /dev of its own), starts "runsc run" with the flags an
 * unprivileged runsc of Debian 12 needs, and tells afterwards whether the command started at all. */

#include <stdbool.h>

#define GVISOR_RUNSC "/usr/bin/runsc"
#define GVISOR_DIR "/dev/shm/.sbx-gvisor"

typedef struct Gvisor {
        char *version; /* runsc's own ("0.0~20221219.0") */
        char **argv;   /* runsc's command line */
} Gvisor;

#define GVISOR_INIT {}

void gvisor_done(Gvisor *g);

/* Finds runsc and its version, writes the bundle of the command (argv, env: its environment, whole; cwd)
 * with the profile's syscall lists (systemd groups and names) for gVisor's own filter, and makes runsc's
 * command line (network: "none" or "host"). On failure a negative errno and the refusal's message. */
int gvisor_prepare(Gvisor *g, const char *network, char **allow, char **deny, char **argv, char **env, const char *cwd,
                   char **ret_error);

/* Whether the command's program can be run in the view gVisor gives it (the unit's, where it differs
 * only in /proc, /sys and /dev): argv0 as it is if it has a '/', else searched in env's PATH. 0, -ENOENT
 * or -EACCES: what the kernel tier's child reports (127, 126), which runsc would report as its own
 * failure to start. */
int gvisor_find_command(const char *argv0, char **env);

/* After runsc ended: whether it started the command (its pid file). 0 if so; else -ESRCH and why runsc
 * could not (the last error it logged). */
int gvisor_check_started(char **ret_error);

/* The environment the command gets: the helper's own without what is for the helper alone, with the
 * caller's entries ("NAME=VALUE") over it, as the kernel tier's child builds it with putenv(). */
int gvisor_environment(char **base, char **caller, char ***ret);
