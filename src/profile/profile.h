/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A sandbox profile: the ceiling of what a run may get, parsed from a JSON document (format version 1,
 * docs/profiles.md). Parsing is pure: text in, a validated Profile or a one-line error out. Finding the
 * file on the search path is profile-load.c's job. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "export-policy.h"
#include "grant.h"
#include "macro.h"
#include "profile-name.h"
#include "util.h"

#define PROFILE_DEFAULT "offline"
#define PROFILE_FORMAT_VERSION 1
#define PROFILE_SUFFIX ".json"

typedef enum NetworkMode {
        NETWORK_NONE,      /* own network namespace with only lo */
        NETWORK_PUBLIC,    /* every public address; every non-public range denied (src/plan/egress-policy.h) */
        NETWORK_ALLOWLIST, /* named destinations only (addresses, and names through sbx's resolver) */
        _NETWORK_MODE_MAX,
        _NETWORK_MODE_INVALID = -EINVAL,
} NetworkMode;

const char *network_mode_to_string(NetworkMode m);
NetworkMode network_mode_from_string(const char *s);

typedef enum NetProtocol {
        NET_PROTOCOL_ANY,  /* TCP and UDP */
        NET_PROTOCOL_TCP,
        NET_PROTOCOL_UDP,
        _NET_PROTOCOL_MAX,
        _NET_PROTOCOL_INVALID = -EINVAL,
} NetProtocol;

const char *net_protocol_to_string(NetProtocol p);
NetProtocol net_protocol_from_string(const char *s);

/* Ports lo..hi, inclusive, 1 <= lo <= hi <= 65535 */
typedef struct PortRange {
        uint16_t lo, hi;
} PortRange;

#define PROFILE_DESTINATIONS_MAX 1024
#define PROFILE_POOL_SIZE_MAX 16U /* pool.size */

/* One element of network.destinations. */
typedef struct NetDestination {
        size_t rule;       /* its position in network.destinations (telemetry names it by this) */
        char *host;        /* a DNS name in lower case ("pypi.org"), or a wildcard "*.example.org" for any
                            * name strictly below the domain; or NULL */
        char *address;     /* an address or CIDR prefix as written ("192.0.2.0/24", "2001:db8::/32"), or NULL */
        PortRange *ports;  /* n_ports ranges, not overlapping, in the order written; none: every port */
        size_t n_ports;
        NetProtocol protocol;
        bool private;      /* address: may lie in a private or shared range; host: its answers in such
                            * ranges are allowed (otherwise dropped as DNS rebinding) */
} NetDestination;

typedef enum SyscallCmp {
        SYSCALL_CMP_EQ,
        SYSCALL_CMP_NE,
        SYSCALL_CMP_LT,
        SYSCALL_CMP_LE,
        SYSCALL_CMP_GT,
        SYSCALL_CMP_GE,
        SYSCALL_CMP_MASKED_EQ,
        _SYSCALL_CMP_MAX,
        _SYSCALL_CMP_INVALID = -EINVAL,
} SyscallCmp;

const char *syscall_cmp_to_string(SyscallCmp c);
SyscallCmp syscall_cmp_from_string(const char *s);

/* An argument-level rule systemd's SystemCallFilter= cannot express. A matching call fails with EPERM
 * and is counted in the run's record. */
typedef struct SyscallRule {
        char *syscall;     /* name as libseccomp knows it */
        int nr;            /* libseccomp's number for the native architecture */
        bool has_arg;      /* false: every call of the syscall is denied */
        unsigned arg;      /* 0..5 */
        SyscallCmp cmp;
        uint64_t value;
        uint64_t mask;     /* SYSCALL_CMP_MASKED_EQ only */
        bool arg32;        /* compare the low 32 bits only (the kernel truncates e.g. ioctl's request) */
        char *value_name;  /* the symbolic name the value was given as ("TIOCSTI"), or NULL */
} SyscallRule;

typedef struct ProfileCache {
        char *name;        /* [a-z0-9_]{1,32} */
        char *path;        /* relative to HOME, normalized, no "..": e.g. ".cache/pip" */
        uint64_t max_size; /* bytes: the cache's own file system (a write past it fails with ENOSPC) */
} ProfileCache;

#define PROFILE_CACHE_SIZE_DEFAULT (UINT64_C(1) << 30)
#define PROFILE_CACHE_SIZE_MIN (UINT64_C(8) << 20)
#define PROFILE_CACHE_SIZE_MAX (UINT64_C(1) << 40)

/* A per-run option a caller may set: allowed, and the lowest value accepted. The highest is always
 * the profile's own value. */
typedef struct RequestBound {
        bool allowed;
        uint64_t min;
} RequestBound;

/* resources.output_action: what a run's output past resources.output does */
typedef enum OutputAction {
        OUTPUT_ACTION_STOP, /* the run ends, stop reason "output-limit" */
        OUTPUT_ACTION_CUT,  /* the rest is dropped, the run goes on */
        _OUTPUT_ACTION_MAX,
        _OUTPUT_ACTION_INVALID = -EINVAL,
} OutputAction;

/* files.landlock: what a run does on a kernel without Landlock (docs/security.md, "Landlock") */
typedef enum LandlockMode {
        LANDLOCK_MODE_REQUIRED,    /* it is refused */
        LANDLOCK_MODE_BEST_EFFORT, /* it runs without */
        _LANDLOCK_MODE_MAX,
        _LANDLOCK_MODE_INVALID = -EINVAL,
} LandlockMode;

const char *landlock_mode_to_string(LandlockMode m);
LandlockMode landlock_mode_from_string(const char *s);

/* process.isolation: which kernel the command's system calls reach (docs/security.md, "Isolation tiers") */
typedef enum Isolation {
        ISOLATION_KERNEL, /* the host's, behind the unit's hardening, seccomp and Landlock (the default) */
        ISOLATION_GVISOR, /* gVisor's (runsc), a kernel in user space inside the same unit */
        _ISOLATION_MAX,
        _ISOLATION_INVALID = -EINVAL,
} Isolation;

const char *isolation_to_string(Isolation i);
Isolation isolation_from_string(const char *s);

/* The least a run of the gVisor tier can start with: runsc's own processes and threads (a sentry, a
 * gofer, their stubs) and its memory, on top of the command's (docs/security.md) */
#define PROFILE_GVISOR_TASKS_MIN 64
#define PROFILE_GVISOR_MEMORY_MIN (UINT64_C(128) << 20)

typedef struct Profile {
        char *name;        /* from the file name: [a-z][a-z0-9_]{0,31} */
        char *path;        /* the file it was read from, or NULL */
        char *description;
        char digest[72];   /* "sha256:<hex>" of the file's bytes */

        /* files */
        char **read_only;  /* host paths visible read-only at the same place */
        char **read_write; /* host paths visible writable at the same place */
        char **hidden;     /* host paths made inaccessible */
        LandlockMode landlock; /* the command's second wall: required (default) or best-effort */
        bool landlock_given;   /* files.landlock is in the document */
        bool workspace;    /* a caller may bind a writable workspace directory */
        bool base_image;   /* files.base is "image" */
        char *image;       /* files.base "image": the base image, "NAME" or "NAME@sha256:HEX" (image.h,
                            * docs/images.md); NULL: the host's OS (files.base "host") */

        /* processes and kernel */
        char **syscall_allow;   /* systemd groups ("@system-service") and names */
        char **syscall_deny;
        SyscallRule *rules;
        size_t n_rules;
        uint64_t namespaces;    /* CLONE_NEW* flags a run may create; 0: none */
        bool write_execute_memory; /* false: MemoryDenyWriteExecute=yes */
        Isolation isolation;       /* process.isolation */

        /* network */
        NetworkMode network;
        NetDestination *destinations;
        size_t n_destinations;

        /* resources of one run */
        uint64_t memory_max;       /* bytes */
        uint64_t swap_max;         /* bytes */
        unsigned cpu_quota_percent;/* 100 = one CPU; 0: no quota */
        uint64_t tasks_max;
        usec_t runtime_max;
        uint64_t disk_max;         /* size of each private tmpfs: HOME, /tmp, /var/tmp */
        uint64_t output_max;       /* bytes of stdout+stderr; 0: not limited */
        OutputAction output_action;/* what reaching output_max does */

        /* all runs of the profile together (the profile's slice); 0: not limited */
        uint64_t slice_memory_max;
        uint64_t slice_tasks_max;
        unsigned slice_cpu_quota_percent;

        /* lifetime: named caches persist per caller across runs; none: everything is ephemeral */
        ProfileCache *caches;
        size_t n_caches;

        /* environment: the names a caller may set (fnmatch() globs): matched by one of allow and none of
         * deny (command.h) */
        char **environment_allow;
        char **environment_deny;

        /* credentials: secrets of the caller's a run may receive as files, and the broker's grants */
        char **credential_files;
        Grant *grants;             /* broker grants (grant.h), in the document's order */
        size_t n_grants;

        /* export: what a run may hand out through review (export-policy.h); enabled false: --export is
         * refused */
        ExportPolicy export;

        /* pool.size: units of this profile kept started, waiting for a run each (docs/pool.md); 0: none */
        unsigned pool_size;

        /* what a caller may set per run */
        struct {
                RequestBound memory, tasks, runtime, cpu;
                bool network_none;      /* may narrow the network to none */
                char **dataset_under;   /* may bind one read-only dataset below one of these; NULL: no */
        } request;
} Profile;

Profile *profile_free(Profile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Profile *, profile_free);

/* NULL-terminated, sorted list of the systemd syscall group names a profile may use. */
const char *const *profile_syscall_groups(void);

/* Parses and validates one profile document. name: the profile's name (from the file name); path: the
 * file, used in messages (may be NULL: "<input>"). On error returns a negative errno (-EINVAL for
 * anything wrong in the document, -ENOMEM) and, for -EINVAL, a one-line message in *ret_error of the
 * form "PATH:LINE:COLUMN: what" for syntax errors and "PATH: key.path: what was expected" otherwise. */
int profile_parse(const char *text, size_t size, const char *name, const char *path, Profile **ret,
                  char **ret_error);
