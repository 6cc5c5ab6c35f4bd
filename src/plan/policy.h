/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The policy compiler: a profile plus a run request become a RunPlan — the unit's property table and
 * the exec helper's command line. Pure: no D-Bus, no syscalls; every refusal comes with a one-line
 * message naming the field and the limit. */

#include <sys/types.h>

#include "image.h"
#include "profile.h"
#include "proptable.h"
#include "record.h"

/* SBX_HOME and SBX_USER_NAME, the run's user's home and name inside a run, come from config.h (meson.build):
 * nss/nss-sbx.c names the same user */
#define SBX_WORKSPACE SBX_HOME "/workspace"
#define SBX_DATASET SBX_HOME "/dataset"
#define SBX_CREDENTIALS_MAX 16U
/* given by value (D-Bus "credential_fds"): a message on the system bus carries at most 16 descriptors,
 * and Run's has three of its own */
#define SBX_CREDENTIAL_FDS_MAX 8U
/* The broker's socket (units/sbx-broker.socket): its directory is bound into a run with grants, at the
 * same place, and SBX_BROKER names the socket */
#define SBX_BROKER_DIR "/run/sbx/broker"
#define SBX_BROKER_SOCKET SBX_BROKER_DIR "/socket"
/* A run's grants, written by sbxd for the broker; the broker's operations log beside them */
#define SBX_GRANTS_DIR "/run/sbx/grants"

/* A terminal for the command (docs/dbus.md, request key "tty"): its fds are one stream socket of
 * tty-proto.h, and the exec helper gives the command a pseudo-terminal of the run's own devpts. */
typedef struct RunTerminal {
        bool on;
        unsigned rows, cols;  /* the caller's window at start; 0: not known */
        char *term;           /* TERM to pass, or NULL */
} RunTerminal;

typedef struct RunRequest {
        char *profile;        /* NULL: PROFILE_DEFAULT */
        char *workspace;      /* NULL: private; else absolute path on the host */
        char *dataset;        /* NULL: none; else absolute path on the host, bound read-only */
        char **argv;          /* bytes but NUL; within what execve() takes (command.h) */
        char **argv_bytes;    /* D-Bus "argv_bytes": the command line given as bytes, moved to argv */
        char **env;           /* "NAME=VALUE" entries the command gets on top of the unit's (command.h) */
        uint64_t stack_limit; /* the stack size limit the command gets (execve()'s ARG_MAX follows from
                               * it); 0: COMMAND_STACK_DEFAULT */
        uint64_t memory_max;  /* 0: the profile's */
        uint64_t tasks_max;   /* 0: the profile's */
        usec_t runtime_max;   /* 0: the profile's */
        unsigned cpu_quota_percent; /* 0: the profile's */
        char *network;        /* NULL: the profile's; else a mode name to narrow to ("none") */
        char *term;           /* TERM to pass, or NULL */
        RunTerminal tty;      /* "tty": a terminal for the command (its term moves to term) */
        uid_t workspace_uid;  /* owner of the workspace (set by sbxd after checking it) */
        gid_t workspace_gid;
        dev_t workspace_dev;  /* the directory sbxd checked: the exec helper refuses to run if what got */
        ino_t workspace_ino;  /* bound is another one (0/0: not checked) */
        mode_t workspace_mode;/* its mode (permission bits), given back at the end (only if checked) */
        dev_t dataset_dev;
        ino_t dataset_ino;
        char *cache_owner;    /* names the caller's caches (an id of its own, not its tenant id), or NULL:
                               * no caches */
        char **host_addresses;/* the host's own addresses ("ADDR/32", "ADDR/128"), denied to network mode
                               * "public" on top of the non-public ranges (set by sbxd) */
        char **busy_caches;   /* names of the profile's caches in use by another run: ephemeral here */
        char **caches_ro;     /* names of the profile's caches this run may read but not write */
        char *run_id;         /* the run's id (set by sbxd; needed for a network namespace of its own) */
        char *netns_path;     /* the run's network namespace (policy_netns_path()), modes other than none */
        uint64_t host_netns_ino; /* inode of the host's network namespace: the run's must be another one */
        unsigned unenforced_ceilings; /* Ceiling bits (ceilings.h) a testbed build cannot enforce on this host
                                       * (set by sbxd: ceilings_unenforced()); 0 in every other build */
        bool sandbox;         /* a sandbox: no command; the helper serves sbxd's (helper/serve.h) */
        usec_t idle_timeout;  /* a sandbox: ends after this long without a command; 0: never */
        bool detach;          /* a sandbox: outlives its creator's connection */
        bool wait_cleanup;    /* a run: its client is told the end at Finished only, no Exited first */
        char *sandbox_name;   /* a sandbox: a name its owner can use instead of its id, or NULL */
        /* Credentials the run receives as files in its credentials directory, each one the profile's
         * credentials.files allows (sbxd delivers them with LoadCredentialEncrypted=, never part of the
         * property table): the caller's stored secrets by name, and values given as file descriptors
         * (the request's own, closed with it) */
        char **credentials;
        char **credential_fd_names;
        int *credential_fds;
        bool pool;            /* a unit of the profile's warm pool: no command yet; its helper waits
                               * for one run's (--pool, docs/pool.md) */
        /* Reviewed export (docs/export.md): the caller's directory the run's ~/out is reviewed into
         * when it ends (set by sbxd from the request's directory fd, after checking it), or NULL */
        char *export_dir;
        uid_t export_uid;     /* the caller: owner of what is delivered */
        gid_t export_gid;
        dev_t export_dev;     /* the directory sbxd checked: the reviewer refuses another one */
        ino_t export_ino;
        /* A base image (docs/images.md): the request's "NAME[@sha256:HEX]", which may only name the
         * profile's files.image again (to pin its digest), or NULL; and the image sbxd found in the store
         * and checked for the run (the profile's, narrowed by the request), NULL for a run on the host's OS */
        char *image;
        RunImage *run_image;
} RunRequest;

RunRequest *run_request_free(RunRequest *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunRequest *, run_request_free);

typedef struct RunPlan {
        const Profile *profile;
        SyscallRule *rules;   /* sbx's own argument-level rules, then the profile's (an owned array whose */
        size_t n_rules;       /* strings belong to the profile and a static table) */
        PropTable *props;
        char **exec_argv;     /* sbx-exec command line, the workload's argv after "--" */
        char **pre_argv;      /* privileged ExecStartPre= (workspace hand-over in), or NULL */
        char **post_argv;     /* privileged ExecStopPost= (workspace hand-over back), or NULL */
        char **figures_argv;  /* privileged ExecStopPost=, first: reads the run's cgroup before it goes
                               * (sbx-exec --figures; docs/limits.md) */
        char *image_unit;     /* a run on a base image: the unit that keeps the image mounted
                               * (sbx-image@DIGEST.service), which the run Requires= and is ordered After= */
        RunLimits limits;     /* the run's ceilings, for its record */
        char digest[72];      /* sha256 of the rendered properties */
        NetworkMode network;  /* the run's network mode (the profile's, or the request's narrower one) */
        /* Modes other than none: the run's network unit sbx-net@RUN.service, which makes the namespace
         * (privileged ExecStartPre=), connects it to the host's network with slirp4netns (ExecStart=) and
         * removes it (privileged ExecStopPost=). The run's unit binds to it. NULL for mode none. */
        PropTable *net_props;
        char **net_exec_argv, **net_pre_argv, **net_post_argv;
        /* The run's space unit sbx-space@RUN.service (only with req->run_id): one tmpfs of disk_max bytes
         * at SBX_SPACE_DIR/RUN, made before the run's unit starts (ExecStart=) and removed after it
         * ended (ExecStopPost=); the run's unit binds to it. */
        PropTable *space_props;
        char **space_exec_argv, **space_post_argv;
        /* A run with --export: its export unit sbx-export@RUN.service, bound to the space unit and bound
         * to by the run's; it does nothing at start and, when the run is gone and the unit stops, reviews
         * the run's ~/out into the caller's directory (ExecStop=, sbx-export(8)). NULL otherwise. */
        PropTable *export_props;
        char **export_stop_argv;
        uint64_t disk_max;    /* the cap of the run's space: the profile's disk, whole pages */
} RunPlan;

RunPlan *run_plan_free(RunPlan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunPlan *, run_plan_free);

/* Checks what can be checked without touching the system. On failure returns a negative errno (-EPERM
 * a system directory, an option the profile does not offer or a limit above the profile's, -E2BIG too
 * many or too long arguments, -EINVAL anything
 * else) and a one-line message in *ret_error. Finding the profile is profile_load()'s job. */
bool run_request_term_is_valid(const char *term);
/* Whether the request gives the run any credential (stored or as a file descriptor). */
bool run_request_has_credentials(const RunRequest *req);
int run_request_validate(const Profile *p, const RunRequest *req, char **ret_error);

/* policy-image.c: a request's image checked against the profile's (-EPERM another name, -EINVAL a bad
 * reference; pinned digests that differ are left to sbxd, which reports a mismatch); the run's image
 * properties (-EINVAL if the profile has a base image but sbxd prepared none); the exec helper's command
 * lines as they run inside the image. */
int policy_image_validate(const Profile *p, const RunRequest *req, char **ret_error);
int policy_image_compile(const Profile *p, const RunRequest *req, const char *exec_path, RunPlan *plan, PropTable *t,
                         char **ret_error);
int policy_image_wrap(const RunRequest *req, const char *exec_path, RunPlan *plan);

/* The exec helper's Landlock options for a run (helper/landlock.h, docs/security.md "Landlock"):
 * "--landlock=required|best-effort" (files.landlock), "--landlock-ro=/" (read and execute: the OS as its
 * mounts show it) and "--landlock-rw=PATH" for every place the run writes: its space (HOME, which holds
 * the workspace and out/, /tmp, /var/tmp, /dev/shm), the device nodes a command writes to, the profile's
 * files.read_write and the state directories of the caches HOME links to (those the run may write). */
int policy_landlock_options(const Profile *p, const RunRequest *req, char ***ret);

/* Compiles the profile p (already loaded, named by req->profile) and the request into a plan. */
int policy_compile(const Profile *p, const RunRequest *req, const char *exec_path, RunPlan **ret,
                   char **ret_error);

/* How long a pooled unit may wait for its run (TimeoutStartSec=): then systemd ends it and sbxd starts
 * another. A claim takes only units that waited less than POLICY_POOL_CLAIM_MAX_USEC. */
#define POLICY_POOL_WAIT_MAX_USEC (10 * 60 * USEC_PER_SEC)
#define POLICY_POOL_CLAIM_MAX_USEC (9 * 60 * USEC_PER_SEC)

/* Whether a run compiled as run can be served by the pooled unit compiled as member (both by
 * policy_compile() from a profile of the same name, the member with req->pool): the same unit properties
 * but for those a claim applies (MemoryMax=, TasksMax=, CPUQuota=) and those that make the unit a pooled
 * one (Type=, TimeoutStartSec=), and the same helper options but for the expectations of those ceilings
 * (which sbxd checks in the cgroup instead). Returns 1 if it can; 0 with a message in *ret_why naming the
 * first difference if not; a negative errno on error. Pure. */
int policy_pool_match(const RunPlan *member, const RunPlan *run, char **ret_why);

/* The ceilings a claim applies to the pooled unit: the run's own. */
typedef struct PoolLimits {
        uint64_t memory_max;             /* bytes (whole pages) */
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec; /* UINT64_MAX: no quota */
} PoolLimits;
int policy_pool_limits(const RunPlan *run, PoolLimits *ret);

/* Inserts one option for the exec helper (e.g. "--seccomp-filter=HEX") before the "--" that ends its
 * options in plan->exec_argv. */
int run_plan_add_exec_option(RunPlan *plan, const char *option);

/* The profile's fixed hardening: every property of a run's unit that no request can change. The same
 * properties are part of every run's transient unit; the generator also writes them as the prefix
 * drop-in sbx-NAME-.service.d/, together with Environment=SBX_PROFILE_DIGEST=<p->digest>, which the
 * exec helper checks against the digest sbxd compiled from. */
int policy_compile_fixed(const Profile *p, PropTable **ret);
/* The syscalls every run is denied whatever its profile allows (NULL-terminated): in the unit's filter,
 * and in gVisor's for the gVisor tier. */
extern const char *const policy_fixed_denied_syscalls[];

/* Whether path is prefix or below it (whole components; everything is below "/"). */
bool policy_path_is_below(const char *path, const char *prefix);

/* The run's user (policy-identity.c, docs/sandboxes.md "The run's user"): for a run on the host's OS,
 * BindReadOnlyPaths= of SBX_IDENTITY_DIR's nsswitch.conf, passwd and group over /etc (those the profile
 * does not hide) and InaccessiblePaths= of the host's other files that name its users
 * (policy_identity_hidden); nothing for a run on a base image, which keeps the image's /etc. Part of
 * policy_compile_fixed(). */
extern const char *const policy_identity_files[];
extern const char *const policy_identity_hidden[];
int policy_identity_compile(const Profile *p, PropTable *t);

/* The profile's slice sbx-NAME.slice: the aggregate ceilings (may be an empty table). */
int policy_compile_slice(const Profile *p, PropTable **ret);

/* The rules sbx adds to every profile's syscall_rules (TIOCSTI, TIOCLINUX, io_uring_setup). */
const SyscallRule *policy_baseline_rules(size_t *ret_n);

/* The network mode a request gets: the profile's, or the one it narrows to. */
NetworkMode policy_run_network(const Profile *p, const RunRequest *req);

/* A run's network namespace and network unit (modes public and allowlist). */
#define SBX_NETNS_DIR "/run/sbx/netns"
int policy_netns_path(const char *run_id, char **ret);      /* SBX_NETNS_DIR/RUN */
int policy_net_unit_name(const char *run_id, char **ret);   /* sbx-net@RUN.service */

/* A run's space: one tmpfs of the profile's disk size for everything the run can write outside its
 * workspace, mounted on the host by the run's space unit; each of the places below is a directory in it,
 * bound into the run's unit. */
#define SBX_SPACE_DIR "/run/sbx/space"
typedef struct PolicySpaceDir {
        const char *path;     /* inside the unit */
        const char *name;     /* the directory in the space */
        mode_t mode;
} PolicySpaceDir;
extern const PolicySpaceDir policy_space_dirs[]; /* ends with an entry whose path is NULL */
/* The run's own devpts instance, mounted by the space unit in the space (not part of its size) and bound
 * over the unit's /dev/pts: its terminals (helper/terminal.h) are the run's alone, and nothing of the
 * host's is there (/dev/ptmx, a device node or a link to pts/ptmx, opens the instance beside it). */
#define SBX_SPACE_PTS "pts"
#define SBX_SPACE_PTS_OPTIONS "newinstance,ptmxmode=0666,mode=0620,max=256"
int policy_space_path(const char *run_id, char **ret);       /* SBX_SPACE_DIR/RUN */
int policy_space_unit_name(const char *run_id, char **ret);  /* sbx-space@RUN.service */
/* A run's export: the unit, and the directory of its review (staging, held items, report) */
#define SBX_EXPORTS_DIR SBX_STATEDIR "/exports"
#define SBX_EXPORT_OUT SBX_HOME "/out"
int policy_export_unit_name(const char *run_id, char **ret); /* sbx-export@RUN.service */
int policy_export_dir(const char *run_id, char **ret);       /* SBX_EXPORTS_DIR/RUN */
/* The reviewer's command for a tree in a run's HOME (rel: "out" at a run's end, the caller's path
 * for a live sandbox) into the caller's directory (the request's export_*); report: where it writes
 * its report; first_held_id: the number of its first held item's id (0: the reviewer's default, h1). */
int policy_export_argv(const Profile *p, const RunRequest *req, const char *rel, const char *report,
                       uint64_t first_held_id, char ***ret);
/* How long a review may take (docs/export.md). */
#define EXPORT_REVIEW_TIMEOUT_SEC 600
/* The properties of a unit that runs the reviewer: root, with what reading any file of the run's and
 * writing the caller's take, and nothing else. at_stop: the review is the unit's ExecStop= (a run's
 * export unit, active from the run's start to its end); else its ExecStart= (a live sandbox's). */
int policy_export_unit_props(const RunRequest *req, bool at_stop, PropTable **ret);
/* The request's export directory for profile p: the profile exports, the directory is not a system one and
 * overlaps neither the request's workspace nor its dataset. */
int policy_export_check_dest(const Profile *p, const RunRequest *req, char **ret_error);

/* An export from a live sandbox (docs/export.md): a privileged one-shot unit that reviews rel, a path in the
 * sandbox's HOME, into the caller's directory (req: the sandbox's run id, workspace and dataset, and the
 * checked export_*), as it starts. tag (lower-case hex) tells this export from the sandbox's others: its
 * unit is sbx-export@RUN-TAG.service, its report SBX_EXPORTS_DIR/RUN/report-TAG.json. Held items are
 * numbered from first_held_id on. */
typedef struct ExportLivePlan {
        char *unit;
        char *report;
        PropTable *props;
        char **argv;          /* its ExecStart= */
} ExportLivePlan;
ExportLivePlan *export_live_plan_free(ExportLivePlan *x);
DEFINE_TRIVIAL_CLEANUP_FUNC(ExportLivePlan *, export_live_plan_free);
/* -EINVAL (a path that is not one, a directory refused: see run_request_validate()) or -EPERM (the profile
 * does not export, a system directory) with a message in *ret_error. */
int policy_compile_live_export(const Profile *p, const RunRequest *req, const char *rel, const char *tag,
                               uint64_t first_held_id, ExportLivePlan **ret, char **ret_error);
/* The profile's disk rounded down to whole pages (tmpfs counts pages): the size of a run's space. */
uint64_t policy_disk_max(const Profile *p);

/* Unit names: sbx-NAME-RUN.service in sbx-NAME.slice (below SBX_SLICE_PARENT, util.h). */
int policy_unit_name(const char *profile, const char *run_id, char **ret);
int policy_slice_name(const char *profile, char **ret);
int policy_dropin_dir_name(const char *profile, char **ret); /* "sbx-NAME-.service.d" */
/* The run's cgroup as the host sees it: /sys/fs/cgroup/sbx.slice/sbx-NAME.slice/sbx-NAME-RUN.service
 * (profile names have no '-', so the slice has no deeper parents). Inside the unit /sys/fs/cgroup is an
 * empty read-only tmpfs with only this directory bound back, read-only, at the same path. */
int policy_cgroup_path(const char *profile, const char *run_id, char **ret);
