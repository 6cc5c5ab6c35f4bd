/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run context: a run (Run) and the manager that holds it, and what a feature of a run (feature.h) may
 * call on the core: find a run, stop it, the caller's tenant, the bus calls for units of sbx's own, and the
 * run's object. Feature modules include this header, never manager.h. */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "network.h"
#include "polkit.h"
#include "policy.h"
#include "record.h"
#include "store.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

typedef struct Manager Manager;
typedef struct Pool Pool;

/* Runs' start jobs sbxd has with systemd at once; more wait in sbxd, in order (docs/scale.md). */
#define MANAGER_STARTS_MAX 8U

typedef struct Run {
        Manager *manager;
        char id[RUN_ID_LEN + 1];
        char *unit;
        char *unit_path;
        char *client;              /* unique bus name of the requester (on sbxd's own socket: its name there) */
        sd_bus *client_bus;        /* the requester's connection on sbxd's own socket (direct.h), or NULL */
        RunRecord *record;
        char *cgroup_path;         /* where the unit's cgroup lives while it runs */
        sd_bus_message *pending;   /* the Run() call, answered when the start job is queued */
        sd_bus_message *queued_start; /* its StartTransientUnit call, waiting for a free start slot */
        bool start_counted;        /* one of the MANAGER_STARTS_MAX start jobs in flight is its */
        sd_bus_slot *slot_props, *slot_client, *slot_client_owner, *slot_start, *slot_state, *slot_getall,
                *slot_unref;
        sd_event_source *removal_timeout;
        sd_event_source *attach_timeout; /* an adopted run without a client: how long it may wait for one */
        sd_event_source *journal_retry;  /* its unit ended while no sbxd ran: read the journal once more */
        char *workspace;           /* host path bound as the workspace, or NULL */
        char *dataset;             /* host path bound as the dataset, or NULL (also: not known, adopted) */
        char *cache_owner;         /* names its caller's caches (caches.h), or NULL: none, or not known */
        RunNet *net;               /* its egress policy, resolver and telemetry */
        char *netns_path;          /* its network namespace (modes public, allowlist), or NULL */
        uint64_t cpu_base_usec;    /* CPU time its unit had used before the run (a pooled unit's checks) */
        RunLimitEvents base_events;/* and the limit events it had met then */
        RunLimitEvents stop_events;/* read by sbxd at the unit's stop-post (known: read), and its peaks: */
        uint64_t stop_memory_peak, stop_tasks_peak; /* what the figures reader's file stands in for */
        uint64_t stop_disk_used;   /* its space then (UINT64_MAX: not measured), and whether it was full */
        bool stop_disk_full;
        uint64_t stop_cpu_usec;    /* cpu.stat's usage_usec then (UINT64_MAX: not read) */
        /* The unit's Service properties as its last PropertiesChanged gave them: systemd sends them just
         * before the Unit's own (ActiveState, SubState), so at stop-post they say how the command ended. */
        char *svc_result, *svc_status;
        int32_t svc_code, svc_exit_status;
        char *helper_status;       /* the helper's FINISHED line on the run's control channel (run_watch_report()),
                                    * before systemd passes on the same as StatusText */
        sd_event_source *report_source; /* that channel (sbxd's end), until FINISHED or its close */
        bool answer_at_stop_post;  /* its answer (Exited) may go at stop-post: nothing of the end is part of
                                    * it (no workspace to hand back, not a sandbox, not adopted) */
        bool answered_early;       /* and it went then: the outcome is what Exited said */
        bool before_reader;        /* answered at its helper's report: the figures reader (after it) has not run */
        char *space_path;          /* its space (SBX_SPACE_DIR/RUN), or NULL: none */
        char *space_unit;          /* the unit that makes and removes it (sbx-space@RUN.service) */
        bool awaiting_aux;         /* its unit is gone; the record is written once what its space unit
                                    * and its network unit remove is gone too (run_aux_gone()) */
        bool refused;              /* sbxd could not put its policy in place: stopped before the command */
        bool job_failed;           /* the start job did not finish "done": the command never started */
        dev_t ws_dev;
        ino_t ws_ino;
        bool ws_back;              /* at its command's end (Exited) the workspace was its owner's again: the
                                    * next run may take it while this one's cleanup goes on */
        bool job_done;
        bool stop_requested;
        bool finalizing;
        bool wait_cleanup;         /* its client wants no Exited, only Finished (request key wait_cleanup) */
        int cancel_signal;
        bool idle_stop;            /* a sandbox stopped at its idle timeout */
        struct Sandbox *sandbox;   /* a sandbox (sandbox.h), or NULL for a run of one command */
        struct PoolClaim *claim;   /* a pooled unit being handed this run (pool.h), or NULL */
        struct Capture *capture;   /* its output being captured (capture.h), or NULL */
        struct RunCredentialFiles *cred_files; /* its credentials for its unit (credentials.h), or NULL */
        sd_bus_track *watchers;    /* peers that called Subscribe() on its object (objects.h) */
        struct Run *next;
} Run;

typedef struct CacheRemoving {
        char *dir;                 /* OWNER/PROFILE/CACHE */
        char *unit;                /* the one-shot unit removing it */
        usec_t until;              /* monotonic: new runs keep off it until the unit is done, or then */
} CacheRemoving;

struct Manager {
        sd_event *event;
        sd_bus *bus;
        Store store;
        Run *runs;
        NetManager *net;
        sd_bus_slot *slot_job_removed, *slot_unit_removed, *slot_systemd_owner;
        char *systemd_owner;       /* unique bus name of PID 1: the only sender of unit signals we believe */
        PolkitRegistry polkit;     /* questions to polkit still out */
        Pool *pool;                /* the warm pool (pool.h) */
        struct DirectServer *direct; /* sbxd's own socket (direct.h), or NULL: clients use the system bus */
        unsigned n_starting;       /* runs' start jobs in flight (at most MANAGER_STARTS_MAX) */
        sd_event_source *store_retry, *store_post; /* records kept in memory written again (store.h) */
        CacheRemoving *caches_removing; /* caches whose removal the reaper started (caches.h) */
        size_t n_caches_removing;
};

/* Whom polkit may let see and manage every tenant's runs. */
#define POLKIT_ACTION_MANAGE_ALL "org.sbx.manage-all-runs"

/* ---- the manager's (manager.c) ---- */

/* A run sbxd follows, by id, or NULL. */
Run *manager_find_run(Manager *m, const char *id);
/* The caller's tenant id (and uid), from the credentials the bus recorded. */
int manager_caller_tenant(Manager *m, sd_bus_message *msg, char tenant[static TENANT_ID_LEN + 1], uid_t *ret_uid);
/* The record of a run the caller may see (1, *ret set); 0: polkit is being asked and method runs again
 * with its answer; a named error in error otherwise. */
int manager_lookup_owned(Manager *m, sd_bus_message *msg, const char *id, sd_bus_message_handler_t method,
                         RunRecord **ret, sd_bus_error *error);

/* A StartTransientUnit call for unit (mode "fail"), its a(sv) of properties open. */
int manager_new_transient_call(Manager *m, const char *unit, sd_bus_message **ret);
/* A privileged one-shot unit of sbx's own (a removal): the call with its description, type, slice and
 * collection, its a(sv) open for more; then sent with argv as its ExecStart=, not waited for (callback
 * NULL) or its reply given to callback (ret_slot: the call's slot, or NULL for a floating one). The start
 * job's end comes as JobRemoved (the job_removed hooks). */
int manager_new_oneshot_call(Manager *m, const char *unit, const char *desc, sd_bus_message **ret);
int manager_send_oneshot_call(Manager *m, sd_bus_message *call, char **argv, sd_bus_slot **ret_slot,
                              sd_bus_message_handler_t callback, void *userdata);
/* An Exec property (ExecStart, ExecStartPre, ExecStopPost) of a StartTransientUnit call, of the kind a
 * daemon-reload keeps; the unit needs PermissionsStartOnly=yes for privileged ExecStartPre/ExecStopPost. */
int manager_append_exec(sd_bus_message *m, const char *name, char **argv, bool ignore_failure);
int manager_unit_object_path(const char *unit, char **ret);

/* Whether the dynamic user of a run's unit still exists (for the reaper). */
bool manager_unit_user_exists(Manager *m, const char *unit);
bool manager_run_mounts_gone(const char *run_id);

/* The stack size limit a run's command gets (RLIMIT_STACK's soft value; UINT64_MAX: none): execve()'s
 * ARG_MAX follows from it (command.h). */
uint64_t manager_stack_limit(void);
/* The host's own addresses as "ADDR/32" or "ADDR/128", as they are now (for a run's egress policy). */
int manager_host_addresses(char ***ret);
/* A host directory of the caller's a run binds or writes into (workspace, dataset, export): walked without
 * following symlinks, owned by the caller (uid; root may name any); exclusive: no other run's workspace
 * overlaps it. Its stat in *ret_st. A named error in error otherwise. */
int manager_check_host_dir(Manager *m, const char *what, const char *path, uid_t uid, bool exclusive,
                           struct stat *ret_st, sd_bus_error *error);

/* ---- the run core's (run.c) ---- */

/* Stops the run's unit (sig: what the record says it was stopped with). */
int run_stop(Run *run, int sig);
/* Adds the profile's syscall rules to the helper's command line (--seccomp-filter=): a negative errno,
 * with a message in *ret_why when the rules cannot be compiled. */
int run_add_seccomp(RunPlan *plan, char **ret_why);
/* StartTransientUnit of a run's (kind "run") or sandbox's unit: its name, user, description, slice, stdio,
 * with the a(sv) left open for more; run_finish_start_call() adds the plan, closes it, and adds the
 * aux units the run's unit binds to (its space unit, its network unit), which end with it. */
int run_new_start_call(Manager *m, const char *unit, const char *id, const char *kind, const char *slice,
                       const int fds[3], const RunPlan *plan, sd_bus_message **ret);
int run_finish_start_call(sd_bus_message *call, const RunPlan *plan, const char *id);
/* Sets up run's space fields (space_path, space_unit, record->disk_max) from the plan. */
int run_init_space(Run *run, const RunPlan *plan);
/* A pooled unit took the run's command (error NULL: its Run() call is answered), or could not be given
 * it (the run is refused, with that message, and stopped). */
void run_claimed(Run *run, const char *error);
/* Takes what the run's unit used and met before the run (a pooled unit's checks): not the run's. */
void run_take_base_figures(Run *run);
/* A match on the PropertiesChanged of a unit that will serve a run (a pooled unit's), made when the unit is
 * started: the run that takes the unit takes it with run_take_watch() (*slot NULL then), without a bus round
 * trip on its way; until then its signals are ignored. */
int run_watch_unit_ahead(Manager *m, const char *unit_path, sd_bus_slot **ret);
void run_take_watch(Run *run, sd_bus_slot **slot);
/* Takes sbxd's end of the run's control channel (sandbox-proto.h), once the command is on it: its helper's
 * FINISHED may answer the run a hop before systemd passes on the same line (run_answer_at_finish()).
 * Closed either way. */
int run_watch_report(Run *run, int fd);

/* ---- the run's object (objects.c) ---- */

/* A figure of the run's cgroup while it is there ("memory.current", "cpu.stat" key "usage_usec"), or
 * UINT64_MAX (also once the run ends). */
uint64_t run_cgroup_figure(const Run *run, const char *file, const char *key);
/* The same in two steps: a file of the run's cgroup read (0, or -errno; -ESTALE once the run ends), and
 * a figure in such a text (NULL: none), UINT64_MAX if it is not there. */
int run_cgroup_read(const Run *run, const char *file, char **ret_text);
uint64_t cgroup_text_figure(const char *text, const char *key);
/* The run's D-Bus object: "/org/sbx/run/<id>" or "/org/sbx/sandbox/<id>" */
int run_object_path(const Run *run, char **ret);
/* Sends the run's changing properties (those marked to emit a change) to its client and subscribers. */
void run_object_changed(Run *run);
/* Right after an answer (Exited, ExecFinished) went out: the CPU to its caller first, once. A socket's
 * reader is woken as if the writer were about to sleep, on the writer's CPU, so the caller would wait
 * there for what sbxd does next (the record, the run's cleanup), with the other CPUs idle. */
void run_yield_to_caller(void);
