/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run record's data: the RunRecord and the types of its sections. record.h has the functions of the
 * record as a whole; each section that has a file of its own (record-credentials.h, record-export.h,
 * record-image.h) declares its functions there, on these types alone. */

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "ceilings.h"
#include "egress/egress-api.h"
#include "profile.h"
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
        STOP_IDLE_TIMEOUT, /* a sandbox ran no command for its idle timeout */
        STOP_OUTPUT_LIMIT, /* the command wrote past the profile's output limit and was ended */
        _STOP_REASON_MAX,
        _STOP_REASON_INVALID = -EINVAL,
} StopReason;

/* Calls of one syscall that the profile's argument-level rules denied (the exec helper counts them). */
typedef struct DeniedSyscall {
        char *name;                /* [a-z0-9_]+: a name, or the number where the helper knew none */
        uint64_t count;
} DeniedSyscall;

#define RECORD_DENIED_MAX 512      /* distinct syscalls kept */

/* ---- network: what the run's egress enforcement and its resolver decided (no payload, ever) ---- */

#define RECORD_NET_DESTINATIONS_MAX 1024 /* distinct destinations kept; more are counted, not listed */
#define RECORD_NET_NAMES_MAX 1024        /* distinct (name, verdict) pairs kept; likewise */
#define RECORD_NET_NAME_ADDRESSES_MAX 16 /* addresses (and blocked addresses) listed per name: the first */
#define RECORD_NET_NAME_MAX 253          /* a DNS name in text form, without the final dot */

typedef struct NetAddress {
        int family;                /* AF_INET or AF_INET6 */
        uint8_t bytes[16];         /* network byte order; AF_INET: the first 4, the rest 0 */
} NetAddress;

/* What the run's resolver did with a name. */
typedef enum NameVerdict {
        NAME_ALLOWED,              /* the profile allows it: answered, its addresses allowed to the run */
        NAME_REFUSED,              /* the profile does not name it: refused, not asked upstream */
        NAME_FAILED,               /* allowed, but the lookup failed upstream */
        _NAME_VERDICT_MAX,
        _NAME_VERDICT_INVALID = -EINVAL,
} NameVerdict;

/* Calls to one destination with one outcome. A call denied at socket creation (reason
 * EGRESS_REASON_SOCKET) has no address: address.family is then the socket's family, port its type. */
typedef struct NetDestinationStat {
        NetAddress address;
        uint16_t port;             /* host byte order */
        uint8_t protocol;          /* IPPROTO_TCP, IPPROTO_UDP, ...: the socket's protocol */
        bool allowed;
        int reason;                /* enum egress_reason when denied; -1 when allowed */
        char *name;                /* the allowed name that gave the run this address, or NULL */
        uint64_t count;
        usec_t first, last;        /* CLOCK_REALTIME of the first and the last call */
} NetDestinationStat;

/* Lookups of one name with one verdict. */
typedef struct NetNameStat {
        char *name;                /* lower case, no final dot */
        NameVerdict verdict;
        uint64_t count;
        NetAddress *addresses;     /* NAME_ALLOWED: the answers allowed to the run (union over lookups) */
        size_t n_addresses;
        NetAddress *blocked;       /* answers dropped as DNS rebinding (private, loopback, ... ranges) */
        size_t n_blocked;
} NetNameStat;

typedef struct RunNetwork {
        NetworkMode mode;
        NetDestinationStat *destinations; /* in the order first seen */
        size_t n_destinations;
        NetNameStat *names;        /* in the order first seen */
        size_t n_names;
        uint64_t denied;           /* denied calls, listed or not */
        uint64_t dns_refused;      /* refused lookups, listed or not */
        uint64_t events_lost;      /* events the kernel could not post (ring buffer full): not counted */
        uint64_t destinations_overflow; /* calls to destinations past RECORD_NET_DESTINATIONS_MAX */
        uint64_t names_overflow;   /* lookups of names past RECORD_NET_NAMES_MAX */
        bool entries_removed;      /* the run's entries in the egress maps were removed and are verified
                                    * gone (also true when it never had any) */
} RunNetwork;

/* One command run in a sandbox: figures only, never its command line or output. */
typedef enum ExecResult {
        EXEC_RUNNING,      /* not over yet (a running sandbox's record) */
        EXEC_EXITED,       /* exit_code */
        EXEC_SIGNAL,       /* exit_signal */
        EXEC_TIMEOUT,      /* killed at its timeout */
        EXEC_NOT_STARTED,  /* the helper could not set it up (exit_code 123); not found or not
                            * executable are EXEC_EXITED with 127 or 126 */
        EXEC_BUSY,         /* refused: too many commands running in the sandbox */
        EXEC_LOST,         /* the sandbox ended (or its supervisor failed) before it reported */
        EXEC_OUTPUT_LIMIT, /* ended when it wrote past its output limit */
        _EXEC_RESULT_MAX,
        _EXEC_RESULT_INVALID = -EINVAL,
} ExecResult;

#define RECORD_EXECS_MAX 10000 /* execs listed in a record; later ones are only counted */

typedef struct RunExec {
        char id[RUN_ID_LEN + 1];   /* opaque operation id */
        usec_t started_at;         /* CLOCK_REALTIME */
        usec_t duration;
        ExecResult result;
        int exit_code;             /* -1 if none */
        int exit_signal;           /* 0 if none */
        uint64_t output_bytes;
        bool output_truncated;
        uint64_t denied_syscalls;
} RunExec;

typedef struct RunSandbox {
        char *name;                /* NULL: none */
        usec_t idle_timeout;       /* 0: none */
        bool detach;               /* outlives its creator's connection */
        RunExec *execs;
        size_t n_execs;
        uint64_t execs_total;      /* also those past RECORD_EXECS_MAX */
} RunSandbox;

/* The run's ceilings as they were applied (the profile's, or lower ones the request asked for), and how
 * far a caller of the profile may set each: the "up to" of an observation (src/record/observe.h). */
typedef struct RunLimits {
        bool known;                /* false: a record of an earlier version, without "limits" */
        uint64_t memory;           /* bytes (MemoryMax=) */
        uint64_t tasks;            /* TasksMax= */
        uint64_t cpu_percent;      /* CPUQuota=, 100 = one CPU; 0: no quota */
        usec_t wall_time;          /* RuntimeMaxSec=; 0: none */
        uint64_t output;           /* bytes of stdout+stderr; 0: not limited */
        /* the most a request may set where it is above the run's own (the profile's ceiling, if the
         * profile lets callers set it); 0: cannot be raised */
        uint64_t memory_raise, tasks_raise, cpu_percent_raise;
        usec_t wall_time_raise;
        /* Ceiling bits (src/shared/ceilings.h) of the ceilings above that the kernel did not enforce: 0 in
         * every build but a testbed one on a host without their cgroup controllers (docs/testbed.md) */
        unsigned unenforced;
} RunLimits;

/* How often the run met its ceilings, as the kernel counted in its cgroup (docs/limits.md). Read by a
 * privileged process of the unit once the run's processes are gone, never by the run's user. */
typedef struct RunLimitEvents {
        bool known;                /* false: not measured (an earlier version, or the reader failed) */
        uint64_t memory_max;       /* memory.events "max": usage reached MemoryMax= and was reclaimed */
        uint64_t oom;              /* memory.events "oom": allocations that failed after reclaim */
        uint64_t oom_kill;         /* memory.events "oom_kill": processes the OOM killer ended */
        uint64_t fork_refused;     /* pids.events "max": fork()/clone() refused at TasksMax= */
        uint64_t cpu_throttled;    /* cpu.stat "nr_throttled": periods the quota stopped the run */
        uint64_t cpu_throttled_usec; /* cpu.stat "throttled_usec" */
} RunLimitEvents;

/* ---- credentials (docs/credentials.md): names and figures, never a value, a body, a query string ---- */

#define RECORD_BROKERED_MAX 1024   /* brokered requests listed; later ones are only counted */
#define BROKER_OP_ID_LEN 16

/* One request the broker handled for the run (a line of its operations log, SBX_GRANTS_DIR/RUN.ops). */
typedef struct BrokerOp {
        char id[BROKER_OP_ID_LEN + 1]; /* opaque operation id, lower-case hex */
        char *grant;               /* NULL: the request named no grant of the run's */
        char *method;              /* NULL: none valid */
        char *host;                /* NULL: refused before the URL was understood */
        uint16_t port;             /* 0 with host NULL */
        char *path_prefix;         /* the grant's path prefix (never the request's path); NULL with host */
        char *verdict;             /* "done", "refused" or "failed" */
        char *reason;              /* NULL for "done"; else a token of the broker's (sbx-fetch(1)) */
        int status;                /* the upstream's HTTP status; -1: none */
        uint64_t request_bytes;    /* the request's body */
        uint64_t response_bytes;   /* the response's body, as returned to the run */
        usec_t started_at;         /* CLOCK_REALTIME */
        usec_t duration;
} BrokerOp;

typedef struct RunCredentials {
        char **files;              /* credentials the run received as files (sorted) */
        char **grants;             /* the broker grants it had (sorted) */
        BrokerOp *brokered;        /* in the order the broker logged them */
        size_t n_brokered;
        uint64_t brokered_total;   /* also those past RECORD_BROKERED_MAX */
        /* cleanup: the unit's credentials directory, sbx's staged copies and the run's grant file and
         * operations log are gone (part of cleanup.completed) */
        bool gone;
} RunCredentials;

/* One item of a reviewed export: exported (delivered), held (for approval) or refused. Texts are
 * the reviewer's, made printable (control characters and bytes that are not UTF-8 become '?'). */
typedef struct ExportItem {
        char *path;                /* relative to the exported tree, '/'-separated */
        char *entry;               /* a refused archive entry: its name in the archive; NULL otherwise */
        char *id;                  /* held: "hN", what approve and reject name; NULL otherwise */
        char *type;                /* MIME type (libmagic's); NULL for refusals before the review */
        char *reason;              /* held and refused: why; NULL for exported */
        char **notes;              /* what the review changed or found ("exec bits dropped", ...) */
        uint64_t size;
        char sha256[65];           /* lower-case hex of what was delivered; empty: none */
        unsigned mode;             /* permission bits delivered (exported, held) */
} ExportItem;

#define RECORD_EXPORT_ITEMS_MAX 100000 /* items of each list kept */

typedef struct RunExport {
        char *destination;         /* the caller's directory, as sbxd resolved it */
        bool reviewed;             /* the review ran to its end and its report was read */
        bool source_missing;       /* the run left no ~/out */
        char *error;               /* why the review did not finish (nothing listed is then certain) */
        ExportItem *exported, *held, *refused;
        size_t n_exported, n_held, n_refused;
        uint64_t exported_bytes;
} RunExport;

/* The base image a run ran on (docs/images.md): its name and "sha256:<hex>" digest, and whether dm-verity
 * verified what it read of it. */
typedef struct RunRecordImage {
        char *name;
        char digest[7 + 64 + 1];
        bool verity;
} RunRecordImage;

typedef struct RunRecord {
        char run_id[RUN_ID_LEN + 1];
        char *unit;
        char tenant[TENANT_ID_LEN + 1];
        char *profile;
        char *policy_digest;
        char *profile_digest;      /* "sha256:<hex>" of the profile file the run started with; NULL in
                                    * records of earlier versions */
        bool finished;
        bool exited;               /* the command ended and its outcome is known, the cleanup goes on
                                    * (state "exited"); finished wins */
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
        /* The run's dynamic user no longer resolves (records of earlier versions: not measured, true), and,
         * for a run with a workspace (has_workspace), the workspace's root is no longer a dynamic user's:
         * its hand-over back to the caller happened. */
        bool user_gone;
        /* No mount point in the host's mount table names the run (its id): its space, its network
         * namespace and whatever else was mounted for it are unmounted (records of earlier versions: not
         * measured, true). */
        bool mounts_gone;
        bool has_workspace;
        bool workspace_returned;
        /* The run's space (HOME, /tmp, /var/tmp, /dev/shm on one tmpfs): its cap in bytes (0: no space,
         * records of earlier versions), what it held when the command ended (UINT64_MAX: unknown), whether
         * it was full then (a write past the cap failed with ENOSPC), and whether it is gone (unmounted,
         * its directory removed: part of cleanup.completed). */
        uint64_t disk_max;
        uint64_t disk_used;
        bool disk_full;
        bool space_gone;
        /* The Landlock ABI of the ruleset the command ran under (docs/security.md, "Landlock"); 0: none
         * (files.landlock "best-effort" on a kernel without it); -1: not reported (the helper did not get
         * as far, records of earlier versions). */
        int landlock_abi;
        /* process.isolation of its profile (records of earlier versions: kernel), and for gvisor the version
         * of the runsc that ran the command (NULL: not reported, the command did not start) */
        Isolation isolation;
        char *runsc_version;
        char *error;               /* why it failed to start or was refused; NULL otherwise */
        RunNetwork *network;       /* NULL: no network section (records of older versions) */
        RunSandbox *sandbox;       /* NULL: a run (one command), not a sandbox */
        bool pooled;               /* served by a unit of the profile's warm pool ("start": "pool"), not
                                    * a unit started for it ("cold"); docs/pool.md */
        RunLimits limits;
        RunLimitEvents limit_events;
        RunCapture capture;        /* temporary elevated capture of its output (docs/capture.md) */
        RunCredentials *credentials; /* NULL: the run had no credentials and no grants */
        RunExport *export;         /* NULL: the run did not export through review */
        RunRecordImage *image;     /* NULL: the run ran on the host's OS (and records of older versions) */
} RunRecord;
