/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The policy compiler: a profile plus a run request become a RunPlan — the unit's property table and
 * the exec helper's command line. Pure: no D-Bus, no syscalls; every refusal comes with a one-line
 * message naming the field and the limit. */

#include <sys/types.h>

#include "profile.h"
#include "proptable.h"

#define SBX_HOME "/home/sbx"
#define SBX_WORKSPACE SBX_HOME "/workspace"
#define SBX_ARGV_MAX_BYTES (256U * 1024U)
#define SBX_ARGV_MAX_ARGS 4096U

typedef struct RunRequest {
        char *profile;        /* NULL: PROFILE_DEFAULT */
        char *workspace;      /* NULL: private; else absolute path on the host */
        char **argv;
        uint64_t memory_max;  /* 0: the profile's */
        uint64_t tasks_max;   /* 0: the profile's */
        usec_t runtime_max;   /* 0: the profile's */
        char *term;           /* TERM to pass, or NULL */
        uid_t workspace_uid;  /* owner of the workspace (set by sbxd after checking it) */
        gid_t workspace_gid;
} RunRequest;

RunRequest *run_request_free(RunRequest *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunRequest *, run_request_free);

typedef struct RunPlan {
        const Profile *profile;
        PropTable *props;
        char **exec_argv;     /* sbx-exec command line, the workload's argv after "--" */
        char **pre_argv;      /* privileged ExecStartPre= (workspace hand-over in), or NULL */
        char **post_argv;     /* privileged ExecStopPost= (workspace hand-over back), or NULL */
        char digest[72];      /* sha256 of the rendered properties */
} RunPlan;

RunPlan *run_plan_free(RunPlan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunPlan *, run_plan_free);

/* Checks what can be checked without touching the system. On failure returns a negative errno
 * (-ENOENT unknown profile, -EPERM a system directory or a limit above the profile's, -E2BIG too many
 * or too long arguments, -EINVAL anything else) and a one-line message in *ret_error. */
int run_request_validate(const RunRequest *req, char **ret_error);

int policy_compile(const RunRequest *req, const char *exec_path, RunPlan **ret, char **ret_error);
