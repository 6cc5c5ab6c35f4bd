/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run record: what sbx keeps about each run, as JSON. Pure (json-c only). It holds no command line,
 * no output, no user name and no uid: the tenant is a keyed hash. */

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define RECORD_VERSION 1
#define TENANT_ID_LEN 32

typedef enum StopReason {
        STOP_SUCCESS,
        STOP_EXIT_CODE,
        STOP_SIGNAL,
        STOP_CORE_DUMP,
        STOP_TIMEOUT,
        STOP_OOM_KILL,
        STOP_CANCELLED,
        STOP_START_FAILED,
        STOP_REFUSED,  /* the exec helper found a limit not in force and did not run the command */
        STOP_LOST,     /* sbxd lost track of the unit (e.g. restarted while it ran) */
        _STOP_REASON_MAX,
        _STOP_REASON_INVALID = -EINVAL,
} StopReason;

const char *stop_reason_to_string(StopReason r);
StopReason stop_reason_from_string(const char *s);
/* Maps a systemd service Result= value ("success", "exit-code", "timeout", ...) to a stop reason;
 * an unknown value gives _STOP_REASON_INVALID. */
StopReason stop_reason_from_unit_result(const char *result);

/* Calls of one syscall that the profile's argument-level rules denied (the exec helper counts them). */
typedef struct DeniedSyscall {
        char *name;                /* [a-z0-9_]+: a name, or the number where the helper knew none */
        uint64_t count;
} DeniedSyscall;

#define RECORD_DENIED_MAX 512      /* distinct syscalls kept */

typedef struct RunRecord {
        char run_id[RUN_ID_LEN + 1];
        char *unit;
        char tenant[TENANT_ID_LEN + 1];
        char *profile;
        char *policy_digest;
        bool finished;
        usec_t started_at;
        usec_t ended_at;           /* 0 while running */
        StopReason stop_reason;    /* _STOP_REASON_INVALID while running */
        int exit_code;             /* -1 if none */
        int exit_signal;           /* 0 if none */
        uint64_t cpu_usec;         /* UINT64_MAX: unknown */
        uint64_t memory_peak;      /* UINT64_MAX: unknown */
        uint64_t tasks_peak;       /* UINT64_MAX: unknown */
        uint64_t output_bytes;     /* bytes the command wrote to stdout and stderr, also those past the
                                    * profile's output limit; UINT64_MAX: not counted (no limit) */
        bool output_truncated;     /* the output was cut at the limit */
        DeniedSyscall *denied;     /* in the order the helper reported them */
        size_t n_denied;
        bool unit_gone;
        bool cgroup_gone;
        char *error;               /* why it failed to start or was refused; NULL otherwise */
} RunRecord;

RunRecord *run_record_new(void);
RunRecord *run_record_free(RunRecord *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunRecord *, run_record_free);

/* Adds count denied calls of the syscall name (merged with an entry of that name). -EINVAL: not a
 * name; -E2BIG: RECORD_DENIED_MAX distinct names already; -ERANGE: the sum overflows. */
int run_record_add_denied(RunRecord *r, const char *name, uint64_t count);
/* Replaces r's denied calls with the exec helper's list "ioctl:2,io_uring_setup:1" (read up to the first
 * white space or the end). -EBADMSG: not such a list; -E2BIG, -ERANGE: as run_record_add_denied();
 * -ENOMEM. On any error r is unchanged. */
int run_record_parse_denied(RunRecord *r, const char *list);
uint64_t run_record_get_denied(const RunRecord *r, const char *name);

int run_record_to_json(const RunRecord *r, char **ret);
/* Parses and checks a record; on failure ret_error names the key. */
int run_record_from_json(const char *json, RunRecord **ret, char **ret_error);

/* Exit status sbxctl reports for a finished record (see docs/design.md). */
int run_record_exit_status(const RunRecord *r);
