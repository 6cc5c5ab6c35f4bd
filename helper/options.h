/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbx-exec's command line: what sbxd asks of the helper (the expected confinement to re-check, the
 * run's caches, workspace and output limit) and the privileged modes of the other units it starts
 * (hand-over, figures, BPF file system, network namespace, space, cache removal). One table row an
 * option (options.c); sbx-exec.c only reads the result. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

typedef struct ExecOptions {
        uint64_t expect_memory_max;
        uint64_t expect_tasks_max;
        uint64_t expect_swap_max;
        uint64_t expect_cpu_percent;        /* 0: no quota promised */
        unsigned unenforced;                /* Ceiling bits a testbed build may find without a file */
        const char *expect_network;         /* "none", "egress" */
        bool expect_egress;                 /* sbx's egress programs judge this run's sockets */
        uint64_t expect_netns_not;          /* inode of the host's network namespace */
        const char *netns_op;               /* "create:PATH", "remove:PATH" (the network unit) */
        const char *figures;                /* write the cgroup's figures there (ExecStopPost=+) */
        const char *bpffs;                  /* mount the BPF file system there (sbx-bpffs.service) */
        const char *expect_profile_digest;
        char **caches;                      /* "STATEDIR:PATH" pairs: HOME/PATH becomes a link to STATEDIR */
        bool workspace_private;
        const char *handover;               /* "in" or "out": privileged ExecStartPre=+/ExecStopPost=+ mode */
        uid_t owner_uid;
        gid_t owner_gid;
        dev_t owner_dev;
        ino_t owner_ino;
        mode_t workspace_mode;              /* the workspace's mode sbxd found: restored at hand-over out */
        char **expect_denied;               /* addresses a datagram to must fail with EPERM */
        char **expect_dirs;                 /* "PATH:DEV:INO": PATH must be the directory sbxd checked */
        const char *seccomp_filter;         /* hex of the program for the profile's syscall rules */
        bool spawn_shared;                  /* no rule catches a call of the command's child (spawn-child.h) */
        uint64_t output_max;                /* bytes of stdout+stderr; 0: not limited */
        bool output_cut;                    /* past it: drop the rest and go on (else end the command) */
        bool serve;                         /* a sandbox: no command; serve sbxd's on stdin (serve.h) */
        bool pool;                          /* a pooled unit: wait for one run's command on stdin */
        uint64_t expect_disk_max;           /* the run's space: HOME, /tmp... on one tmpfs this big */
        bool remove_caches;                 /* remove the caches named by the arguments (the reaper) */
        const char *space_op;               /* "create:PATH", "remove:PATH" (the space unit) */
        uint64_t space_size;
        char **cache_images;                /* "OWNER/PROFILE/CACHE:SIZE": the space unit mounts their file systems */
        bool export_out;                    /* make HOME/out, reviewed out of the run at its end */
        LandlockMode landlock;              /* not given: no Landlock ruleset */
        char **landlock_ro;                 /* read and execute below these */
        char **landlock_rw;                 /* everything below these */
        const char *gvisor_network;         /* the gVisor tier (helper/gvisor.h): runsc's network mode,
                                             * "none" or "host"; NULL: the kernel tier */
        char **gvisor_allow;                /* the profile's syscall lists, applied inside gVisor */
        char **gvisor_deny;
} ExecOptions;

#define EXEC_OPTIONS_INIT                                                                                  \
        {                                                                                                  \
                .expect_memory_max = UINT64_MAX, .expect_tasks_max = UINT64_MAX, .workspace_private = true, \
                .owner_uid = (uid_t) -1, .owner_gid = (gid_t) -1, .workspace_mode = (mode_t) -1,           \
                .landlock = _LANDLOCK_MODE_INVALID,                                                        \
        }

/* A decimal uint64_t, the whole of s. */
int exec_parse_u64(const char *s, uint64_t *ret);

/* Fills o from argv. Returns the index of the first argument after the options (the workspace of a
 * hand-over, the caches to remove, the bridge's command line), or -EINVAL when an option or their
 * combination is not one sbxd gives. */
int exec_options_parse(ExecOptions *o, int argc, char *argv[]);
