/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's life in sbxd, stage by stage (docs/design.md, "How the code is laid out"): its request becomes a
 * plan (run_start_request(): stdio, profile, checks, plan inputs, plan), the run and its record are made and
 * every feature prepares it (prepare), its unit starts by StartTransientUnit or by a feature's route
 * (start), its start job ends (started: run_on_job_removed()), its command's end and outcome are told
 * (exited: the Exited signal, the cleanup still to come), its unit goes (ended), what its end undid is
 * measured (cleanup measured: run_complete()), and its record is written (record final). At each stage the
 * core walks the features' hooks (feature.h) and never names a feature. Everything here is asynchronous on
 * one sd-event loop. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <linux/magic.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "bus-errors.h"
#include "ceilings.h"
#include "feature.h"
#include "fileio.h"
#include "log.h"
#include "message-ids.h"
#include "observe.h"
#include "profile-load.h"
#include "run-core.h"
#include "run.h"
#include "sandbox-proto.h"
#include "seccomp-filter.h"
#include "unit-bus.h"

#define UNIT_REMOVAL_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* the export unit's TimeoutStopSec= (policy.c) and a margin */
#define EXPORT_REVIEW_TIMEOUT_USEC (630 * USEC_PER_SEC)

/* The stages below call ahead to the ones that follow (a run's end may come at any stage). */
static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error);
static int on_properties_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error);
static void run_read_stop_figures(Run *run);
static void run_answer_at_stop_post(Run *run);
static void run_answer_at_finish(Run *run);
static void run_finalize(Run *run);
static void run_exited(Run *run);
static int on_getall_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error);
static void run_release_unit(Run *run);
static void run_drop_figures(Run *run);
static int on_unref_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error);
static int on_removal_timeout(sd_event_source *s, uint64_t usec, void *userdata);
static void run_unit_gone(Run *run);
static void run_send_record(Run *run, const char *member);
static void log_run_finished(Run *run);

Run *run_free(Run *run) {
        if (!run)
                return NULL;
        if (run->manager) {
                for (Run **p = &run->manager->runs; *p; p = &(*p)->next)
                        if (*p == run) {
                                *p = run->next;
                                break;
                        }
        }
        sd_bus_slot_unref(run->slot_props);
        sd_bus_slot_unref(run->slot_client);
        sd_bus_slot_unref(run->slot_client_owner);
        sd_bus_slot_unref(run->slot_start);
        sd_bus_slot_unref(run->slot_getall);
        sd_bus_slot_unref(run->slot_state);
        sd_bus_slot_unref(run->slot_unref);
        sd_bus_track_unref(run->watchers);
        sd_event_source_disable_unref(run->removal_timeout);
        sd_event_source_disable_unref(run->attach_timeout);
        sd_event_source_disable_unref(run->journal_retry);
        sd_bus_message_unref(run->pending);
        sd_bus_message_unref(run->queued_start);
        if (run->start_counted && run->manager)
                run->manager->n_starting--;
        FEATURE_FOREACH(f)
                if ((*f)->free_run)
                        (*f)->free_run(run);
        free(run->netns_path);
        free(run->space_path);
        free(run->space_unit);
        run_record_free(run->record);
        free(run->unit);
        free(run->unit_path);
        free(run->client);
        sd_bus_unref(run->client_bus);
        free(run->cgroup_path);
        free(run->workspace);
        free(run->dataset);
        free(run->cache_owner);
        free(run->svc_result);
        free(run->svc_status);
        free(run->helper_status);
        sd_event_source_disable_unref(run->report_source);
        free(run);
        return NULL;
}

bool run_cgroup_exists(const char *path) {
        struct stat st;
        return path && stat(path, &st) >= 0;
}

/* The run's space is gone once its directory is: its unit removes it only after unmounting it. */
static bool space_gone(const Run *run) {
        struct stat st;

        return !run->space_path || (lstat(run->space_path, &st) < 0 && errno == ENOENT);
}

/* What the run's aux units remove once its unit is gone: its space (the space unit), and its network
 * namespace's bind mount (the network unit's ExecStopPost=), which is often still there when the run's
 * and its space's units are gone already. */
static bool run_aux_gone(const Run *run) {
        return space_gone(run) && (!run->netns_path || manager_run_mounts_gone(run->id));
}

/* What the end of the run must have undone besides its unit and cgroup: its dynamic user, its mounts,
 * and the hand-over of its workspace (whose root then belongs to no dynamic user). */
static void run_measure_cleanup(Run *run) {
        struct stat st;

        run->record->user_gone = !manager_unit_user_exists(run->manager, run->unit);
        run->record->mounts_gone = manager_run_mounts_gone(run->id);
        run->record->has_workspace = run->workspace != NULL;
        /* measured at Exited already when it was back then: by now another run may have it */
        run->record->workspace_returned =
                run->workspace && (run->ws_back || (stat(run->workspace, &st) >= 0 && !uid_is_dynamic(st.st_uid)));
}

/* The run's Run() (or CreateSandbox) call, its unit's start job queued: answered with its id, unless a
 * feature takes it to answer later (a sandbox's, when its helper is ready). */
static void run_answer(Run *run, sd_bus_message *call) {
        FEATURE_FOREACH(f)
                if ((*f)->answer && (*f)->answer(run, call) > 0)
                        return;
        (void) sd_bus_reply_method_return(call, "s", run->id);
}

/* ---- request, plan, prepare: a run's way from its request to its unit ------------------------ */

int run_add_seccomp(RunPlan *plan, char **ret_why) {
        _cleanup_free_ char *hex = NULL, *opt = NULL;
        int r;

        /* The argument-level syscall rules become a seccomp program the exec helper installs right before
         * the command starts. None: the gVisor tier (policy.c). */
        if (plan->n_rules == 0)
                return 0;
        r = seccomp_rules_compile(plan->rules, plan->n_rules, &hex, ret_why);
        if (r < 0)
                return r;
        if (asprintf(&opt, "--seccomp-filter=%s", hex) < 0)
                return -ENOMEM;
        r = run_plan_add_exec_option(plan, opt);
        /* the command's child may share the helper's memory until its execve() (helper/spawn-child.h) */
        if (r >= 0 && !seccomp_rules_catch_child_calls(plan->rules, plan->n_rules))
                r = run_plan_add_exec_option(plan, "--spawn-shared");
        return r;
}

int run_init_space(Run *run, const RunPlan *plan) {
        if (!plan->space_props)
                return 0;
        if (policy_space_path(run->id, &run->space_path) < 0 || policy_space_unit_name(run->id, &run->space_unit) < 0)
                return -ENOMEM;
        run->record->disk_max = plan->disk_max;
        return 0;
}

/* What a run or sandbox request gathers on its way to a unit, stage by stage (run_start_request()). */
typedef struct RunStart {
        Manager *m;
        sd_bus_message *msg;
        RunRequest *req;
        bool sandbox;
        uid_t uid;
        char tenant[TENANT_ID_LEN + 1];
        char run_id[RUN_ID_LEN + 1];
        Profile *profile;
        RunPlan *plan;
        const Feature *route;      /* the feature whose waiting unit may serve the run, or NULL */
        void *route_unit;          /* that unit (the feature's) */
        Run *run;
        char *slice;
        int fds[3];
        int ctl, ctl_helper, devnull;
        dev_t ws_dev;
        ino_t ws_ino;
} RunStart;

static void run_start_free(RunStart *s) {
        safe_close(s->devnull);
        safe_close(s->ctl_helper);
        safe_close(s->ctl);
        free(s->slice);
        run_free(s->run);
        run_plan_free(s->plan);
        profile_free(s->profile);
}

/* What a feature's prepare, prepare_unit and claim hooks are given of the run's request. */
static RunPrepare run_start_prepare(RunStart *s) {
        return (RunPrepare) {
                .profile = s->profile, .req = s->req, .plan = s->plan, .pooled = s->route, .ctl = &s->ctl,
                .stdio = s->fds, .stdin_held = &s->ctl_helper,
        };
}

/* The stdio of the run's unit: the caller's three descriptors, or a sandbox's control channel. */
static int start_stdio(RunStart *s, sd_bus_error *error) {
        int r;

        if (s->sandbox) {
                int pair[2];
                int sz = 256 * 1024;

                /* The control channel (sandbox-proto.h): the helper's end is the unit's stdin. Room for
                 * the packets of many commands at once (a command line travels in a memfd). */
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) < 0)
                        return -errno;
                s->ctl = pair[0];
                s->ctl_helper = pair[1];
                if (setsockopt(s->ctl, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0 &&
                    setsockopt(s->ctl, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
                        return -errno;
                if (fcntl(s->ctl_helper, F_SETFL, 0) < 0) /* blocking for the helper */
                        return -errno;
                s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (s->devnull < 0)
                        return -errno;
                s->fds[0] = s->ctl_helper;
                s->fds[1] = s->fds[2] = s->devnull;
                s->req->sandbox = true;
                if (s->req->sandbox_name) {
                        for (Run *o = s->m->runs; o; o = o->next)
                                if (o->sandbox && !o->finalizing && streq(o->record->tenant, s->tenant) &&
                                    streq_ptr(o->record->sandbox->name, s->req->sandbox_name))
                                        return sd_bus_error_setf(error, ERR_EXISTS, "name: sandbox %s is named '%s' already",
                                                                 o->id, s->req->sandbox_name);
                }
                return 0;
        }
        r = sd_bus_message_read(s->msg, "hhh", &s->fds[0], &s->fds[1], &s->fds[2]);
        return r < 0 ? r : 0;
}

/* The profile is read for every run: an edited file takes effect at once here, and the exec helper
 * refuses the run if the generator's drop-in was made from another version of it. */
static int start_profile(RunStart *s, sd_bus_error *error) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *refusal = NULL;
        const RunRequest *req = s->req;
        int r;

        r = profile_search_path(&dirs);
        if (r < 0)
                return r;
        r = profile_load(dirs, req->profile ?: PROFILE_DEFAULT, &s->profile, &refusal);
        if (r < 0) {
                if (!refusal)
                        return r;
                if (r == -ENOENT || r == -ERFKILL)
                        return sd_bus_error_setf(error, ERR_NO_PROFILE, "%s", refusal);
                if (req->profile && !profile_name_is_valid(req->profile))
                        return sd_bus_error_setf(error, ERR_INVALID, "%s", refusal);
                log_event(LOG_ERR, SBX_MESSAGE_PROFILE_INVALID,
                          LOG_FIELDS({ "SBX_PROFILE", req->profile ?: PROFILE_DEFAULT }, { "SBX_ERROR", refusal }),
                          "Profile %s cannot be used: %s", req->profile ?: PROFILE_DEFAULT, refusal);
                return sd_bus_error_setf(error, ERR_BAD_PROFILE, "profile '%s' is invalid: %s",
                                         req->profile ?: PROFILE_DEFAULT, refusal);
        }
        return 0;
}

/* The request against the profile, then the host directories it names. */
static int start_check(RunStart *s, sd_bus_error *error) {
        _cleanup_free_ char *refusal = NULL;
        const Profile *profile = s->profile;
        RunRequest *req = s->req;
        struct stat ws_st = {};
        int r;

        /* The output limit relays stdout and stderr; a terminal given as stdin would be a way around it. */
        if (!s->sandbox && profile->output_max > 0 && fd_is_writable_tty(s->fds[0]))
                return sd_bus_error_setf(error, ERR_INVALID, "stdin: a terminal open for writing would reach the caller "
                                         "past profile '%s''s output limit; pass it read-only", profile->name);

        /* Everything that can be checked without touching the file system first: a path the profile
         * does not allow is refused before sbxd looks at it. */
        r = run_request_validate(profile, req, &refusal);
        if (r < 0) {
                if (!refusal)
                        return r;
                return sd_bus_error_setf(error, r == -EOPNOTSUPP ? ERR_UNENFORCEABLE : r == -ENOTTY ? ERR_NO_TERMINAL :
                                         ERR_INVALID, "%s", refusal);
        }
        FEATURE_FOREACH(f)
                if ((*f)->check_request) {
                        r = (*f)->check_request(s->m, profile, req, s->uid, error);
                        if (r < 0 || sd_bus_error_is_set(error))
                                return r;
                }
        if (req->workspace) {
                r = manager_check_host_dir(s->m, "workspace", req->workspace, s->uid, true, &ws_st, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r;
                req->workspace_uid = ws_st.st_uid;
                req->workspace_gid = ws_st.st_gid;
                req->workspace_dev = s->ws_dev = ws_st.st_dev;
                req->workspace_ino = s->ws_ino = ws_st.st_ino;
                req->workspace_mode = ws_st.st_mode & 07777;
        }
        if (req->dataset) {
                struct stat ds_st;

                r = manager_check_host_dir(s->m, "dataset", req->dataset, s->uid, false, &ds_st, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r;
                req->dataset_dev = ds_st.st_dev;
                req->dataset_ino = ds_st.st_ino;
        }
        FEATURE_FOREACH(f)
                if ((*f)->check_host_dirs) {
                        r = (*f)->check_host_dirs(s->m, profile, req, s->uid, error);
                        if (r < 0 || sd_bus_error_is_set(error))
                                return r;
                }
        return 0;
}

/* What the plan needs from the host and from the runs sbxd follows: the run's id, then what the features
 * fill in (plan_inputs: the run's namespace, the egress programs, the host's addresses, the caches other
 * runs hold). */
static int start_plan_inputs(RunStart *s, sd_bus_error *error) {
        Manager *m = s->m;
        const Profile *profile = s->profile;
        RunRequest *req = s->req;
        int r;

        /* The run id first: a run with a network gets a namespace of its own, named after it. A run a
         * feature's waiting unit may serve takes its id (the warm pool's, docs/pool.md). */
        FEATURE_FOREACH(f)
                if ((*f)->route && (*f)->route(m, profile, req, s->run_id, &s->route_unit) > 0) {
                        s->route = *f;
                        break;
                }
        if (!s->route) {
                r = run_id_new(s->run_id);
                if (r < 0)
                        return r;
        }
        if (!(req->run_id = strdup(s->run_id)))
                return -ENOMEM;
        /* a testbed build on a host without some cgroup controllers: their ceilings go unenforced, and the
         * record says so (src/shared/ceilings.h); 0 in every other build */
        req->unenforced_ceilings = ceilings_unenforced(_CEILINGS_ALL);
        FEATURE_FOREACH(f)
                if ((*f)->plan_inputs) {
                        r = (*f)->plan_inputs(m, profile, req, s->uid, error);
                        if (r < 0 || sd_bus_error_is_set(error))
                                return r;
                }
        return 0;
}

/* The plan: unit properties, syscall rules and egress entries compiled from the profile and request. */
static int start_plan(RunStart *s, sd_bus_error *error) {
        _cleanup_free_ char *refusal = NULL;
        const Profile *profile = s->profile;
        RunRequest *req = s->req;
        int r;

        r = policy_compile(profile, req, SBX_EXEC_PATH, &s->plan, &refusal);
        if (r < 0) {
                if (!refusal)
                        return r;
                return sd_bus_error_setf(error, r == -EOPNOTSUPP ? ERR_UNENFORCEABLE : ERR_INVALID, "%s", refusal);
        }
        {
                _cleanup_free_ char *why = NULL;

                r = run_add_seccomp(s->plan, &why);
                if (r < 0 && why)
                        return sd_bus_error_setf(error, ERR_BAD_PROFILE, "Profile '%s': %s", profile->name, why);
                if (r < 0)
                        return log_error_errno(r, "Failed to compile the syscall rules of profile '%s': %m",
                                               profile->name);
        }
        /* A feature's waiting unit serves the run if it was made from the same plan (the run's ceilings
         * apart, which the claim applies): the plan is compiled with the unit's id, the unit's name being
         * part of it. Otherwise the run starts a unit of its own, under another id. */
        if (s->route) {
                r = s->route->route_keeps(s->m, s->route_unit, profile, s->plan);
                if (r < 0)
                        return r;
                if (r == 0) {
                        s->route = NULL;
                        s->route_unit = NULL;
                        s->plan = run_plan_free(s->plan);
                        r = run_id_new(s->run_id);
                        if (r < 0)
                                return r;
                        free(req->run_id);
                        if (!(req->run_id = strdup(s->run_id)))
                                return -ENOMEM;
                        r = policy_compile(profile, req, SBX_EXEC_PATH, &s->plan, &refusal);
                        if (r < 0)
                                return refusal ? sd_bus_error_setf(error, ERR_INVALID, "%s", refusal) : r;
                        r = run_add_seccomp(s->plan, NULL);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The run sbxd follows, and its record, from the plan. */
static int start_new_run(RunStart *s, sd_bus_error *error) {
        RunPrepare prep = run_start_prepare(s);
        Manager *m = s->m;
        const Profile *profile = s->profile;
        const RunPlan *plan = s->plan;
        RunRequest *req = s->req;
        Run *run;
        int r;

        run = s->run = calloc(1, sizeof(Run));
        if (!run)
                return -ENOMEM;
        run->manager = m;
        run->stop_disk_used = run->stop_cpu_usec = UINT64_MAX;
        run->answer_at_stop_post = !req->workspace && !req->sandbox;
        if ((req->workspace && !(run->workspace = strdup(req->workspace))) ||
            (req->dataset && !(run->dataset = strdup(req->dataset))))
                return -ENOMEM;
        run->ws_dev = s->ws_dev;
        run->ws_ino = s->ws_ino;
        run->record = run_record_new();
        if (!run->record)
                return -ENOMEM;
        run->record->pooled = s->route;
        run->record->limits = plan->limits;
        memcpy(run->id, s->run_id, sizeof(run->id));
        if (req->netns_path && !(run->netns_path = strdup(req->netns_path)))
                return -ENOMEM;
        if (policy_unit_name(profile->name, run->id, &run->unit) < 0 ||
            policy_slice_name(profile->name, &s->slice) < 0 ||
            policy_cgroup_path(profile->name, run->id, &run->cgroup_path) < 0)
                return -ENOMEM;
        r = manager_unit_object_path(run->unit, &run->unit_path);
        if (r >= 0)
                r = run_init_space(run, plan);
        if (r < 0)
                return r;

        strcpy(run->record->run_id, run->id);
        run->record->unit = strdup(run->unit);
        run->record->profile = strdup(plan->profile->name);
        run->record->isolation = plan->profile->isolation;
        run->record->policy_digest = strdup(plan->digest);
        run->record->profile_digest = strdup(plan->profile->digest);
        if (!run->record->unit || !run->record->profile || !run->record->policy_digest ||
            !run->record->profile_digest)
                return -ENOMEM;
        memcpy(run->record->tenant, s->tenant, sizeof(s->tenant));
        run->record->started_at = now_realtime();
        /* what each feature makes for the run, in the table's order (torn down in the reverse one) */
        FEATURE_FOREACH(f)
                if ((*f)->prepare) {
                        r = (*f)->prepare(run, &prep, error);
                        if (r < 0 || sd_bus_error_is_set(error))
                                return r;
                }

        /* Watch before starting: a short command may be over before StartTransientUnit returns. A routed
         * run's unit was watched when it was started (a pooled unit's: run_take_watch()). */
        if (!s->route) {
                r = run_watch_unit(run);
                if (r < 0)
                        return r;
        }
        run->wait_cleanup = req->wait_cleanup;
        /* A detached sandbox has no client: it outlives its creator's connection. */
        if (!(s->sandbox && req->detach)) {
                r = run_set_client_of(run, s->msg);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- start: a feature's waiting unit, or StartTransientUnit with the plan's units ------------ */

/* One command of an aux unit: its Exec property and command line. */
typedef struct AuxExec {
        const char *key;
        char **argv;
} AuxExec;

/* An aux unit of StartTransientUnit (the run's space, network or export unit): made with the run's and
 * stopped by systemd once the run, the only unit that needs it, is gone. binds_to: a unit it is bound to
 * and ordered after, or NULL; privileged: its ExecStartPre= and ExecStopPost= run as root
 * (manager_append_exec()). */
static int append_aux_unit(sd_bus_message *call, const char *unit, const char *what, const char *run_id,
                           const char *binds_to, const PropTable *props, bool privileged, const AuxExec *exec,
                           size_t n_exec) {
        _cleanup_free_ char *desc = NULL;
        int r;

        if (asprintf(&desc, "sbx %s of run %s", what, run_id) < 0)
                return -ENOMEM;
        r = sd_bus_message_open_container(call, 'r', "sa(sv)");
        if (r >= 0)
                r = sd_bus_message_append(call, "s", unit);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)(sv)", "Description", "s", desc, "StopWhenUnneeded", "b", 1,
                                          "CollectMode", "s", "inactive-or-failed",
                                          /* not the per-template system-sbx\x2dnet.slice, which would stay */
                                          "Slice", "s", "system.slice");
        if (r >= 0 && binds_to)
                r = sd_bus_message_append(call, "(sv)(sv)", "BindsTo", "as", 1, binds_to, "After", "as", 1, binds_to);
        if (r >= 0)
                r = bus_append_prop_table(call, props);
        if (r >= 0 && privileged)
                r = sd_bus_message_append(call, "(sv)", "PermissionsStartOnly", "b", 1);
        for (size_t i = 0; i < n_exec && r >= 0; i++)
                r = manager_append_exec(call, exec[i].key, exec[i].argv, false);
        for (int i = 0; i < 2 && r >= 0; i++)
                r = sd_bus_message_close_container(call);
        return r;
}

/* The run's space unit (plan->space_props). */
static int append_space_unit(sd_bus_message *call, const RunPlan *plan, const char *space_unit, const char *run_id) {
        return append_aux_unit(call, space_unit, "space", run_id, NULL, plan->space_props, false,
                               (const AuxExec[]) { { "ExecStart", plan->space_exec_argv },
                                                   { "ExecStopPost", plan->space_post_argv } }, 2);
}

/* The run's export unit (plan->export_props), bound to its space unit; nothing to do at start, the review
 * when it stops (the run, the only unit that needs it, being gone). */
static int append_export_unit(sd_bus_message *call, const RunPlan *plan, const char *export_unit,
                              const char *space_unit, const char *run_id) {
        _cleanup_strv_free_ char **check = NULL;

        if (!space_unit)
                return -EINVAL;
        /* at start, the reviewer checks the destination is the directory sbxd checked (fail closed) */
        check = strv_copy(plan->export_stop_argv);
        if (!check)
                return -ENOMEM;
        free(check[1]);
        if (!(check[1] = strdup("--check")))
                return -ENOMEM;
        return append_aux_unit(call, export_unit, "export review", run_id, space_unit, plan->export_props, false,
                               (const AuxExec[]) { { "ExecStart", check }, { "ExecStop", plan->export_stop_argv } }, 2);
}

/* The run's network unit (plan->net_props). */
static int append_net_unit(sd_bus_message *call, const RunPlan *plan, const char *net_unit, const char *run_id) {
        return append_aux_unit(call, net_unit, "network", run_id, NULL, plan->net_props, true,
                               (const AuxExec[]) { { "ExecStartPre", plan->net_pre_argv },
                                                   { "ExecStart", plan->net_exec_argv },
                                                   { "ExecStopPost", plan->net_post_argv } }, 3);
}

int run_new_start_call(Manager *m, const char *unit, const char *id, const char *kind, const char *slice,
                       const int fds[3], const RunPlan *plan, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_free_ char *desc = NULL;
        char user[32];
        int r;

        if (asprintf(&desc, "sbx %s %s (profile %s)", kind, id, plan->profile->name) < 0)
                return -ENOMEM;
        snprintf(user, sizeof(user), "sbx-%.16s", id);
        r = manager_new_transient_call(m, unit, &call);
        /* A short dynamic user name of our own: systemd would derive "_du<hash>" from the long unit
         * name, which NSS does not resolve for the workspace hand-over. */
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)", "User", "s", user);
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s", desc, "Slice", "s",
                                          slice, "AddRef", "b", 1,
                                          /* [Unit] settings stay out of the property table, whose text
                                           * rendering is a [Service] section */
                                          "CollectMode", "s", "inactive-or-failed",
                                          "StandardInputFileDescriptor", "h", fds[0],
                                          "StandardOutputFileDescriptor", "h", fds[1],
                                          "StandardErrorFileDescriptor", "h", fds[2]);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(call);
        return 0;
}

int run_finish_start_call(sd_bus_message *call, const RunPlan *plan, const char *id) {
        _cleanup_free_ char *space_unit = NULL, *net_unit = NULL, *export_unit = NULL;
        int r = 0;

        /* Its space unit and network unit: the run cannot start without them, and they end with it. */
        if (plan->space_props) {
                r = policy_space_unit_name(id, &space_unit);
                if (r >= 0)
                        r = sd_bus_message_append(call, "(sv)(sv)", "BindsTo", "as", 1, space_unit, "After", "as", 1,
                                                  space_unit);
        }
        /* Its export unit likewise; ordered after the space, it stops (and reviews) before it goes. */
        if (r >= 0 && plan->export_props) {
                r = policy_export_unit_name(id, &export_unit);
                if (r >= 0)
                        r = sd_bus_message_append(call, "(sv)(sv)", "BindsTo", "as", 1, export_unit, "After", "as", 1,
                                                  export_unit);
        }
        if (r >= 0 && plan->net_props) {
                r = policy_net_unit_name(id, &net_unit);
                if (r >= 0)
                        r = sd_bus_message_append(call, "(sv)(sv)", "BindsTo", "as", 1, net_unit, "After", "as", 1,
                                                  net_unit);
        }
        /* A run on a base image: the unit that has the image mounted (started by this, if it is not yet) */
        if (r >= 0 && plan->image_unit)
                r = sd_bus_message_append(call, "(sv)(sv)", "Requires", "as", 1, plan->image_unit, "After", "as", 1,
                                          plan->image_unit);
        if (r >= 0)
                r = bus_append_prop_table(call, plan->props);
        /* The command line reaches the helper byte for byte (manager_append_exec() escapes "$"); the
         * hand-over and the figures reader run as root (PermissionsStartOnly=). */
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)", "PermissionsStartOnly", "b", 1);
        if (r >= 0)
                r = manager_append_exec(call, "ExecStart", plan->exec_argv, false);
        if (r >= 0 && plan->pre_argv)
                r = manager_append_exec(call, "ExecStartPre", plan->pre_argv, false);
        /* The figures first, while nothing of the run is left but its cgroup: a failure there leaves
         * them unknown in the record and the run's outcome as it was. */
        if (r >= 0 && plan->figures_argv)
                r = manager_append_exec(call, "ExecStopPost", plan->figures_argv, true);
        if (r >= 0 && plan->post_argv)
                r = manager_append_exec(call, "ExecStopPost", plan->post_argv, false);
        if (r >= 0)
                r = sd_bus_message_close_container(call); /* a(sv) */
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(sa(sv))");
        if (r >= 0 && plan->space_props)
                r = append_space_unit(call, plan, space_unit, id);
        if (r >= 0 && plan->net_props)
                r = append_net_unit(call, plan, net_unit, id);
        if (r >= 0 && plan->export_props)
                r = append_export_unit(call, plan, export_unit, space_unit, id);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        return r;
}

/* The record of a run that never started (written already as running): closed as start-failed. gone: its
 * unit never existed (else it is being stopped, and the record cannot say it is gone). */
static void record_start_failed(Manager *m, Run *run, bool gone, const char *error) {
        run->record->finished = true;
        run->record->unit_gone = run->record->cgroup_gone = gone;
        run->record->space_gone = gone || space_gone(run);
        run->record->mounts_gone = manager_run_mounts_gone(run->id);
        FEATURE_FOREACH_REVERSE(f)
                if ((*f)->start_failed)
                        (*f)->start_failed(run);
        run->record->stop_reason = STOP_START_FAILED;
        run->record->ended_at = now_realtime();
        free(run->record->error);
        run->record->error = strdup(error);
        (void) store_write(&m->store, run->record);
}

/* The run is on its way: its call is answered once the unit's start job is queued (or, for a pooled unit,
 * once its command is sent). */
static int run_launched(Manager *m, Run *run, sd_bus_message *msg) {
        char unenforced[CEILINGS_LIST_MAX];

        run->pending = sd_bus_message_ref(msg);
        (void) ceilings_to_list(run->record->limits.unenforced, ",", unenforced);
        log_event(unenforced[0] ? LOG_WARNING : LOG_INFO, SBX_MESSAGE_RUN_STARTED,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit },
                             { "SBX_PROFILE", run->record->profile }, { "SBX_TENANT", run->record->tenant },
                             { "SBX_POLICY_DIGEST", run->record->policy_digest },
                             { "SBX_LIMITS_UNENFORCED", unenforced[0] ? unenforced : NULL }),
                  "Run %s: starting %s (profile %s) for tenant %s%s%s%s.", run->id, run->unit,
                  strna(run->record->profile), run->record->tenant, run->record->pooled ? ", in a pooled unit" : "",
                  unenforced[0] ? "; a testbed build: ceilings NOT enforced: " : "", unenforced);
        run->next = m->runs;
        m->runs = run;
        return 1; /* answered from on_start_reply() or run_claimed() */
}

/* At most MANAGER_STARTS_MAX start jobs with systemd at once: a burst of runs waits here, in order,
 * instead of piling up in systemd's job queue, where each unit's set-up competes with every other's
 * and a start can outlast TimeoutStartSec= (docs/scale.md). */
static int run_send_start(Run *run, sd_bus_message *call) {
        int r = sd_bus_call_async(run->manager->bus, &run->slot_start, call, on_start_reply, run, 0);

        if (r >= 0) {
                run->start_counted = true;
                run->manager->n_starting++;
        }
        return r;
}

static void manager_start_next(Manager *m) {
        while (m->n_starting < MANAGER_STARTS_MAX) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
                Run *oldest = NULL;
                int r;

                for (Run *run = m->runs; run; run = run->next) /* newest first */
                        if (run->queued_start)
                                oldest = run;
                if (!oldest)
                        return;
                call = TAKE_PTR(oldest->queued_start);
                r = run_send_start(oldest, call);
                if (r < 0) {
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *pending = TAKE_PTR(oldest->pending);

                        log_error_errno(r, "Failed to call StartTransientUnit: %m");
                        record_start_failed(m, oldest, true, "sbxd could not ask systemd to start the unit");
                        if (pending)
                                (void) sd_bus_reply_method_errorf(pending, ERR_START_FAILED,
                                                                  "Failed to call StartTransientUnit: %s", strerror(-r));
                        run_free(oldest);
                }
        }
}

/* Its start job is over (or will never be): the slot goes to the next run waiting. */
static void run_start_done(Run *run) {
        if (!run->start_counted)
                return;
        run->start_counted = false;
        run->manager->n_starting--;
        manager_start_next(run->manager);
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(run->pending);
        const sd_bus_error *e;
        const char *job;
        int r;

        run->slot_start = sd_bus_slot_unref(run->slot_start);

        e = sd_bus_message_get_error(reply);
        if (e) {
                log_error("Failed to start %s: %s", run->unit, e->message);
                run->record->stop_reason = STOP_START_FAILED;
                run->record->ended_at = now_realtime();
                run->record->unit_gone = true;
                run->record->cgroup_gone = !run_cgroup_exists(run->cgroup_path);
                run->record->space_gone = space_gone(run);
                run_measure_cleanup(run);
                FEATURE_FOREACH_REVERSE(f)
                        if ((*f)->start_refused)
                                (*f)->start_refused(run);
                free(run->record->error);
                if (asprintf(&run->record->error, "systemd refused the unit: %s", e->message) < 0)
                        run->record->error = NULL;
                run->record->finished = true;
                (void) store_write(&run->manager->store, run->record);
                log_run_finished(run);
                if (call) /* else answered already (it waited for a start slot): Finished tells */
                        (void) sd_bus_reply_method_errorf(call, ERR_START_FAILED, "Failed to start the sandbox unit: %s",
                                                          e->message);
                else
                        run_send_record(run, "Finished");
                run_start_done(run);
                run_free(run);
                return 0;
        }

        r = sd_bus_message_read(reply, "o", &job);
        if (r < 0) {
                if (call)
                        (void) sd_bus_reply_method_errorf(call, ERR_START_FAILED, "Unexpected reply from systemd.");
                (void) run_stop(run, SIGTERM);
                return 0;
        }
        if (!call)
                return 0; /* answered when it was queued for a start slot */
        run_answer(run, call);
        return 0;
}

/* A feature's waiting unit serves the run (its route): the unit is handed over and given the command. */
static int start_routed(RunStart *s, sd_bus_error *error) {
        RunPrepare prep = run_start_prepare(s);
        Manager *m = s->m;
        Run *run = s->run;
        int r;

        /* Nothing fails from here to the claim but writing the record (and a watch the unit lacked): the
         * unit is the run's now. */
        s->route->hand_over(run, s->route_unit);
        r = run->slot_props ? 0 : run_watch_unit(run);
        if (r < 0) {
                s->route->release(run, s->route_unit);
                return r;
        }
        /* The record exists before the run does, as for a unit started for it. */
        r = store_write(&m->store, run->record);
        if (r < 0) {
                s->route->release(run, s->route_unit);
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot write the run record in %s/runs: %s",
                                         SBX_STATEDIR, strerror(-r));
        }
        r = s->route->claim(run, s->route_unit, &prep);
        if (r < 0) {
                record_start_failed(m, run, false, "sbxd could not hand the run to its pooled unit");
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot hand the run to a pooled unit: %s",
                                         strerror(-r));
        }
        return run_launched(m, TAKE_PTR(s->run), s->msg);
}

/* The run gets a unit of its own (no feature's route serves it): what each feature makes for that unit, in the
 * table's order, once every feature has prepared the run. */
static int start_unit_prepare(RunStart *s, sd_bus_error *error) {
        RunPrepare prep = run_start_prepare(s);
        int r;

        FEATURE_FOREACH(f)
                if ((*f)->prepare_unit) {
                        r = (*f)->prepare_unit(s->run, &prep, error);
                        if (r < 0 || sd_bus_error_is_set(error))
                                return r;
                }
        return 0;
}

/* What the features add to the StartTransientUnit call of the run's unit, its a(sv) open. */
static int start_append_units(Run *run, sd_bus_message *call) {
        int r;

        FEATURE_FOREACH(f)
                if ((*f)->append_units) {
                        r = (*f)->append_units(run, call);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* What the run made for itself before its unit: gone again, the unit never having existed. */
static void start_abandon(Run *run) {
        FEATURE_FOREACH_REVERSE(f)
                if ((*f)->abandon)
                        (*f)->abandon(run);
}

/* A unit of its own: StartTransientUnit, sent now or when a start slot is free. */
static int start_unit(RunStart *s, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        Manager *m = s->m;
        Run *run = s->run;
        int r;

        r = run_new_start_call(m, run->unit, run->id, s->sandbox ? "sandbox" : "run", s->slice, s->fds, s->plan,
                                   &call);
        if (r >= 0)
                r = start_append_units(run, call);
        if (r >= 0)
                r = run_finish_start_call(call, s->plan, run->id);
        if (r < 0) {
                start_abandon(run);
                return log_error_errno(r, "Failed to build the StartTransientUnit call: %m");
        }

        /* The record exists before the unit does: a crash in between leaves a "running" record (closed
         * as "lost" by the next sbxd), never a unit without a record. */
        r = store_write(&m->store, run->record);
        if (r < 0) {
                start_abandon(run);
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot write the run record in %s/runs: %s",
                                         SBX_STATEDIR, strerror(-r));
        }

        if (m->n_starting >= MANAGER_STARTS_MAX) {
                Run *queued = TAKE_PTR(s->run);

                log_debug("Run %s waits for one of the %u start slots.", queued->id, MANAGER_STARTS_MAX);
                queued->queued_start = TAKE_PTR(call);
                r = run_launched(m, queued, s->msg);
                /* A run's caller has its id at once and waits for Finished (which also says if the unit
                 * failed to start); a sandbox's creator is answered when its helper is ready. */
                if (!s->sandbox) {
                        (void) sd_bus_reply_method_return(queued->pending, "s", queued->id);
                        queued->pending = sd_bus_message_unref(queued->pending);
                }
                return r;
        }
        r = run_send_start(run, call);
        if (r < 0) {
                log_error_errno(r, "Failed to call StartTransientUnit: %m");
                record_start_failed(m, run, true, "sbxd could not ask systemd to start the unit");
                return sd_bus_error_setf(error, ERR_START_FAILED, "Failed to call StartTransientUnit: %s",
                                         strerror(-r));
        }
        return run_launched(m, TAKE_PTR(s->run), s->msg);
}

/* A run's way from its request to its unit, in stages: each returns < 0 or sets error to refuse it. */
int run_start_request(Manager *m, sd_bus_message *msg, RunRequest *req, uid_t uid, bool sandbox,
                      sd_bus_error *error) {
        static int (*const stages[])(RunStart *s, sd_bus_error *error) = {
                start_stdio,
                start_profile,
                start_check,
                start_plan_inputs,
                start_plan,
                start_new_run,
        };
        _cleanup_(run_start_free) RunStart s = {
                .m = m, .msg = msg, .req = req, .sandbox = sandbox, .uid = uid,
                .ctl = -EBADF, .ctl_helper = -EBADF, .devnull = -EBADF,
        };
        int r;

        store_tenant_id(&m->store, uid, s.tenant);
        for (size_t i = 0; i < ELEMENTSOF(stages); i++) {
                r = stages[i](&s, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r;
        }
        if (s.route)
                return start_routed(&s, error);
        r = start_unit_prepare(&s, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        return start_unit(&s, error);
}

void run_claimed(Run *run, const char *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(run->pending);

        if (!error) {
                if (call)
                        (void) sd_bus_reply_method_return(call, "s", run->id);
                /* A unit that ended before the claim (its start job's end went unheeded then) would
                 * never report one: ask once, as after a start job. */
                if (!run->finalizing && !run->slot_state)
                        (void) run_ask_state(run);
                return;
        }
        /* fail closed: the command never starts in a unit weaker than its plan */
        log_error("Run %s: %s; stopping it.", run->id, error);
        free(run->record->error);
        run->record->error = strdup(error);
        run->refused = true;
        if (call)
                (void) sd_bus_reply_method_errorf(call, ERR_UNENFORCEABLE, "%s", error);
        (void) run_stop(run, SIGTERM);
}

/* ---- the run's client ------------------------------------------------------------------------ */

static int on_client_gone(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const char *name, *old, *new;

        if (!manager_from_bus_driver(msg) || sd_bus_message_read(msg, "sss", &name, &old, &new) < 0 || !isempty(new))
                return 0;
        log_debug("Client %s of run %s disconnected.", name, run->id);
        run_client_gone(run);
        return 0;
}

void run_drop_client(Run *run) {
        run->slot_client = sd_bus_slot_unref(run->slot_client);
        run->slot_client_owner = sd_bus_slot_unref(run->slot_client_owner);
        run->client = mfree(run->client);
        run->client_bus = sd_bus_unref(run->client_bus);
}

void run_client_gone(Run *run) {
        run_drop_client(run);
        (void) run_stop(run, SIGHUP);
}

/* The bus refused the match on the client's disconnection: a run that cannot tell when its client is gone
 * does not go on as if it could. The client, still there, gets Finished. */
static int on_client_match_installed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e)
                return 0;
        log_warning("Run %s: cannot watch its client %s (%s); stopping it.", run->id, strna(run->client),
                    e->message ?: e->name);
        (void) run_stop(run, SIGHUP);
        return 0;
}

/* The client of a run: the bus peer that gets its Finished signal, and whose disconnection ends the run. */
static int on_client_owner_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;

        run->slot_client_owner = sd_bus_slot_unref(run->slot_client_owner);
        /* The client left before its NameOwnerChanged could reach us (the match was added after). */
        if (sd_bus_message_is_method_error(reply, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                log_debug("Client %s of run %s was already gone.", strna(run->client), run->id);
                run_client_gone(run);
        }
        return 0;
}

int run_set_client(Run *run, const char *sender) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_free_ char *match = NULL, *client = NULL;
        int r;

        if (!sender || !(client = strdup(sender)))
                return -ENOMEM;
        if (asprintf(&match,
                     "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                     "member='NameOwnerChanged',arg0='%s'", client) < 0)
                return -ENOMEM;
        /* Not waited for: the bus handles our messages in order, so the match is in place before the
         * GetNameOwner below is answered */
        r = sd_bus_add_match_async(run->manager->bus, &slot, match, on_client_gone, on_client_match_installed, run);
        if (r < 0)
                return r;
        /* ... and whether it is still there now that we watch it */
        run->slot_client_owner = sd_bus_slot_unref(run->slot_client_owner);
        r = sd_bus_call_method_async(run->manager->bus, &run->slot_client_owner, "org.freedesktop.DBus",
                                     "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                                     on_client_owner_reply, run, "s", client);
        if (r < 0)
                return r;
        sd_bus_slot_unref(run->slot_client);
        run->slot_client = TAKE_PTR(slot);
        free(run->client);
        run->client = TAKE_PTR(client);
        run->client_bus = sd_bus_unref(run->client_bus);
        run->attach_timeout = sd_event_source_disable_unref(run->attach_timeout);
        return 0;
}

/* On sbxd's own socket (direct.h: a server connection of sbxd's) the client is the connection itself: it
 * gets Exited and Finished, and its end stops the run (direct.c). -ENOTCONN if it has ended already. */
int run_set_client_of(Run *run, sd_bus_message *msg) {
        sd_bus *bus = sd_bus_message_get_bus(msg);
        const char *name = NULL;
        char *client;

        if (sd_bus_is_server(bus) <= 0)
                return run_set_client(run, sd_bus_message_get_sender(msg));
        if (sd_bus_is_open(bus) <= 0)
                return -ENOTCONN;
        (void) sd_bus_get_description(bus, &name);
        client = strdup(name ?: "direct");
        if (!client)
                return -ENOMEM;
        run_drop_client(run);
        run->client = client;
        run->client_bus = sd_bus_ref(bus);
        run->attach_timeout = sd_event_source_disable_unref(run->attach_timeout);
        return 0;
}

/* ---- started: the start job's end ------------------------------------------------------------ */

/* The record's error of a run whose unit's start failed on what it needs ("dependency"): the units it
 * needs, and where their logs are. */
static int dependency_failure_text(Run *run, char **ret) {
        const char *img = run->record->image ? run->record->image->digest + strlen("sha256:") : NULL;
        const char *names[4], *units[4][3];
        size_t n = 0;
        _cleanup_free_ char *what = NULL, *logs = NULL;

        if (!run->space_unit && !run->netns_path && !run->record->export && !img)
                return asprintf(ret, "the start job finished with result 'dependency'") < 0 ? -ENOMEM : 0;
        if (run->space_unit) {
                names[n] = "space";
                memcpy(units[n++], (const char *[3]) { "sbx-space@", run->id, ".service" }, sizeof(units[0]));
        }
        if (run->netns_path) {
                names[n] = "network";
                memcpy(units[n++], (const char *[3]) { "sbx-net@", run->id, ".service" }, sizeof(units[0]));
        }
        if (run->record->export) {
                names[n] = "export";
                memcpy(units[n++], (const char *[3]) { "sbx-export@", run->id, ".service" }, sizeof(units[0]));
        }
        if (img) {
                names[n] = "base image's mount";
                memcpy(units[n++], (const char *[3]) { IMAGE_UNIT_PREFIX, img, ".service" }, sizeof(units[0]));
        }
        for (size_t i = 0; i < n; i++) {
                char *w, *l;

                if (asprintf(&w, "%s%s%s", strempty(what), i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]) < 0)
                        return -ENOMEM;
                if (asprintf(&l, "%s -u %s%s%s", strempty(logs), units[i][0], units[i][1], units[i][2]) < 0) {
                        free(w);
                        return -ENOMEM;
                }
                free(what);
                free(logs);
                what = w;
                logs = l;
        }
        return asprintf(ret, "the run's %s could not be set up (see journalctl%s)", what, logs) < 0 ? -ENOMEM : 0;
}

/* The run's start job finished "done": what its features put in place now that its unit's cgroup exists
 * (its egress policy). One that cannot refuses the run: it is stopped before its command runs. */
static void run_job_done(Run *run) {
        FEATURE_FOREACH(f) {
                _cleanup_free_ char *why = NULL;
                int r;

                if (!(*f)->job_done)
                        continue;
                r = (*f)->job_done(run, &why);
                if (r < 0) {
                        log_error("Run %s: %s; stopping it.", run->id, strna(why));
                        free(run->record->error);
                        run->record->error = TAKE_PTR(why);
                        run->refused = true;
                        (void) run_stop(run, SIGTERM);
                        return;
                }
        }
}

int run_on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *job, *unit, *result;
        uint32_t id;

        if (!manager_from_systemd(m, msg) || sd_bus_message_read(msg, "uoss", &id, &job, &unit, &result) < 0)
                return 0;
        FEATURE_FOREACH(f)
                if ((*f)->job_removed)
                        (*f)->job_removed(m, unit, result);
        for (Run *run = m->runs; run; run = run->next) {
                /* by unit name: the signal may come before StartTransientUnit's reply told us the job */
                if (!streq(run->unit, unit) || run->job_done)
                        continue;
                log_debug("Run %s: start job %s finished: %s.", run->id, job, result);
                run->job_done = true;
                run_start_done(run);
                if (!streq(result, "done")) {
                        log_warning("Start job for %s finished with result '%s'.", run->unit, result);
                        run->job_failed = true;
                        free(run->record->error);
                        /* "dependency": what the run's unit needs failed: its space unit, its network
                         * unit, its export unit (whose start checks the export's destination), or its
                         * base image's mount */
                        if (streq(result, "dependency")) {
                                if (dependency_failure_text(run, &run->record->error) < 0)
                                        run->record->error = NULL;
                                /* The space unit (and the units bound to it) started with the run's; the
                                 * run's unit never changed state, so systemd does not notice the space is
                                 * unneeded now (StopWhenUnneeded=): stop it. */
                                if (run->space_unit)
                                        (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER,
                                                                        "StopUnit", NULL, NULL, "ss",
                                                                        run->space_unit, "replace");
                        } else if (asprintf(&run->record->error, "the start job finished with result '%s'", result) < 0)
                                run->record->error = NULL;
                }
                if (streq(result, "done") && !run->finalizing) {
                        run_job_done(run);
                        /* a short command's helper may have reported before the job's end reached us */
                        run_answer_at_finish(run);
                }
                run_object_changed(run);
                /* The unit may have ended before we saw its state change: ask once. */
                if (!run->finalizing && !run->slot_state)
                        (void) run_ask_state(run);
                break;
        }
        return 0;
}

/* ---- stopping -------------------------------------------------------------------------------- */

/* Stops the run's unit (sig: what the record says it was stopped with); a run still waiting for a start
 * slot ends here, never started. */
int run_stop(Run *run, int sig) {
        int r;

        /* exited: the command has ended and its outcome is read; the rest of the unit's end is cleanup */
        if (run->stop_requested || run->finalizing || run->record->exited)
                return 0;
        if (run->queued_start) {
                /* still waiting for a start slot: it ends here, never started */
                run->queued_start = sd_bus_message_unref(run->queued_start);
                run->record->stop_reason = STOP_CANCELLED;
                run->record->exit_signal = sig;
                run->record->unit_gone = true;
                run->finalizing = true;
                log_info("Run %s was cancelled before its unit was started.", run->id);
                run_complete(run);
                return 0;
        }
        run->stop_requested = true;
        run->cancel_signal = sig;
        run_object_changed(run);
        r = sd_bus_call_method_async(run->manager->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL,
                                     "ss", run->unit, "replace");
        if (r < 0)
                return log_error_errno(r, "Failed to stop %s: %m", run->unit);
        log_event(LOG_INFO, SBX_MESSAGE_RUN_STOPPING,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit },
                             { "SBX_STOP_CAUSE", sig == SIGHUP ? "client-disconnected" : "stop-requested" }),
                  "Stopping run %s (%s)%s.", run->id, run->unit,
                  sig == SIGHUP ? ": its client disconnected" : "");
        return 0;
}

/* ---- ended: the unit's end and how it ended -------------------------------------------------- */

/* How a service unit's main process ended, from its Service properties (a GetAll's reply, or a
 * PropertiesChanged's array): Result, StatusText, ExecMainCode, ExecMainStatus, CPUUsageNSec; what the
 * message does not carry is left as it was. */
typedef struct UnitEnd {
        const char *result, *status;
        int32_t code, exit_status;
        uint64_t cpu_nsec;
} UnitEnd;

static int read_unit_end(sd_bus_message *m, UnitEnd *end) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name;

                r = sd_bus_message_read(m, "s", &name);
                if (r < 0)
                        return r;
                if (streq(name, "Result"))
                        r = sd_bus_message_read(m, "v", "s", &end->result);
                else if (streq(name, "StatusText"))
                        r = sd_bus_message_read(m, "v", "s", &end->status);
                else if (streq(name, "ExecMainCode"))
                        r = sd_bus_message_read(m, "v", "i", &end->code);
                else if (streq(name, "ExecMainStatus"))
                        r = sd_bus_message_read(m, "v", "i", &end->exit_status);
                else if (streq(name, "CPUUsageNSec"))
                        r = sd_bus_message_read(m, "v", "t", &end->cpu_nsec);
                else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
        }
        return r;
}

/* The Service interface's part of a PropertiesChanged: how the main process ended, as systemd has it now
 * (kept until the Unit interface's part, which systemd sends right after it). */
static void read_service_properties(Run *run, sd_bus_message *msg) {
        _cleanup_free_ char *res = NULL, *st = NULL;
        UnitEnd e = { .code = -1, .exit_status = -1 };

        /* all four or none: a signal that carries only some says nothing of the end */
        if (read_unit_end(msg, &e) < 0 || !e.result || !e.status || e.code < 0 || e.exit_status < 0)
                return;
        res = strdup(e.result);
        st = strdup(e.status);
        if (!res || !st)
                return;
        free(run->svc_result);
        free(run->svc_status);
        run->svc_result = TAKE_PTR(res);
        run->svc_status = TAKE_PTR(st);
        run->svc_code = e.code;
        run->svc_exit_status = e.exit_status;
}

static int on_properties_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const char *iface, *state = NULL, *sub = NULL;
        int r;

        if (!run) /* a pooled unit's match, made before it is a run's (run_watch_unit_ahead()) */
                return 0;
        if (!manager_from_systemd(run->manager, msg))
                return 0;
        r = sd_bus_message_read(msg, "s", &iface);
        if (r >= 0 && streq(iface, "org.freedesktop.systemd1.Service")) {
                read_service_properties(run, msg);
                return 0;
        }
        if (r < 0 || !streq(iface, "org.freedesktop.systemd1.Unit"))
                return 0;
        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                const char *name;

                if (sd_bus_message_read(msg, "s", &name) < 0)
                        return 0;
                if (streq(name, "ActiveState"))
                        r = sd_bus_message_read(msg, "v", "s", &state);
                else if (streq(name, "SubState"))
                        r = sd_bus_message_read(msg, "v", "s", &sub);
                else
                        r = sd_bus_message_skip(msg, "v");
                if (r < 0)
                        return 0;
                r = sd_bus_message_exit_container(msg);
        }
        if (sub && streq(sub, "stop-post")) {
                run_read_stop_figures(run);
                run_answer_at_stop_post(run);
        } else if (state && sub && streq(state, "active") && streq(sub, "running"))
                run_answer_at_finish(run);
        log_debug("Run %s: ActiveState=%s (job done: %s).", run->id, strna(state), run->job_done ? "yes" : "no");
        if (state && run->job_done && (streq(state, "inactive") || streq(state, "failed")))
                run_finalize(run);
        return 0;
}

/* Follows the unit's state changes (PropertiesChanged): its end finalizes the run. */
int run_watch_unit(Run *run) {
        return sd_bus_match_signal(run->manager->bus, &run->slot_props, SD_DEST, run->unit_path,
                                   "org.freedesktop.DBus.Properties", "PropertiesChanged", on_properties_changed, run);
}

int run_watch_unit_ahead(Manager *m, const char *unit_path, sd_bus_slot **ret) {
        return sd_bus_match_signal(m->bus, ret, SD_DEST, unit_path, "org.freedesktop.DBus.Properties",
                                   "PropertiesChanged", on_properties_changed, NULL);
}

void run_take_watch(Run *run, sd_bus_slot **slot) {
        if (!*slot)
                return;
        sd_bus_slot_unref(run->slot_props);
        run->slot_props = TAKE_PTR(*slot);
        (void) sd_bus_slot_set_userdata(run->slot_props, run);
}

static int on_active_state_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const char *state;

        run->slot_state = sd_bus_slot_unref(run->slot_state);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* gone already: nothing to wait for */
                run_finalize(run);
                return 0;
        }
        if (sd_bus_message_read(reply, "v", "s", &state) < 0)
                return 0;
        log_debug("Run %s: queried ActiveState=%s.", run->id, state);
        if (streq(state, "inactive") || streq(state, "failed"))
                run_finalize(run);
        return 0;
}

/* Asks the unit's ActiveState once: a unit that ended unseen (before its start job's end, a claim, or
 * sbxd's restart) is finalized. */
int run_ask_state(Run *run) {
        return sd_bus_call_method_async(run->manager->bus, &run->slot_state, SD_DEST, run->unit_path,
                                        "org.freedesktop.DBus.Properties", "Get", on_active_state_reply, run, "ss",
                                        "org.freedesktop.systemd1.Unit", "ActiveState");
}

static void run_finalize(Run *run) {
        int r;

        if (run->finalizing)
                return;
        run->finalizing = true;
        log_debug("Run %s: finalizing.", run->id);
        if (run->answered_early) {
                /* its outcome is read and answered: what is left is the cleanup */
                run_drop_figures(run);
                run_release_unit(run);
                return;
        }
        r = sd_bus_call_method_async(run->manager->bus, &run->slot_getall, SD_DEST, run->unit_path,
                                     "org.freedesktop.DBus.Properties", "GetAll", on_getall_reply, run, "s",
                                     "org.freedesktop.systemd1.Service");
        if (r < 0) {
                log_error_errno(r, "Failed to query %s: %m", run->unit);
                run->record->stop_reason = STOP_LOST;
                run_complete(run);
        }
}

static void parse_status_text(RunRecord *rec, const char *status) {
        const char *p;

        if (!status)
                return;
        if (strneq(status, "refused ", 8)) {
                rec->stop_reason = STOP_REFUSED;
                free(rec->error);
                rec->error = strdup(status + 8);
                return;
        }
        if (!strneq(status, "finished", 8))
                return;
        /* the calls the profile's syscall rules denied, and the output ceiling (see helper/supervise.h) */
        if ((p = strstr(status, " denied=")) && run_record_parse_denied(rec, p + 8) < 0)
                log_warning("Ignoring the exec helper's malformed list of denied syscalls: %s", p + 8);
        if ((p = strstr(status, " output_bytes=")))
                rec->output_bytes = strtoull(p + 14, NULL, 10);
        if ((p = strstr(status, " output_truncated=")))
                rec->output_truncated = p[18] == '1';
        /* ended at the output limit: killed by the helper, which then ends with SIGKILL */
        if ((p = strstr(status, " output_limit=")) && p[14] == '1' &&
            (rec->stop_reason == STOP_SUCCESS || rec->stop_reason == STOP_EXIT_CODE ||
             rec->stop_reason == STOP_SIGNAL || rec->stop_reason == STOP_CORE_DUMP))
                rec->stop_reason = STOP_OUTPUT_LIMIT;
        /* the run's space when the command ended (helper/space.h) */
        if ((p = strstr(status, " disk_used=")))
                rec->disk_used = strtoull(p + 11, NULL, 10);
        if ((p = strstr(status, " disk_full=")))
                rec->disk_full = p[11] == '1';
        /* the Landlock ABI the command ran under (helper/landlock.h) */
        if ((p = strstr(status, " landlock=")) && p[10] >= '0' && p[10] <= '9')
                rec->landlock_abi = (int) MIN(strtoul(p + 10, NULL, 10), 1000UL);
        /* the gVisor tier: the runsc that ran the command (helper/gvisor.h) */
        if ((p = strstr(status, " runsc=")) && rec->isolation == ISOLATION_GVISOR) {
                free(rec->runsc_version);
                rec->runsc_version = strndup(p + 7, MIN(strcspn(p + 7, " "), (size_t) 64));
        }
}

/* The run's limit events in its cgroup, as sbx-exec --figures reads them (a counter of a ceiling a
 * testbed build leaves unenforced here is 0, its controller absent); false if unreadable. */
/* The limit events of the run's cgroup (false if a file that must be there is not), and its CPU time in
 * *ret_cpu_usec (UINT64_MAX if unreadable, whatever the events): each of the three files read once. */
static bool run_read_limit_events(const Run *run, RunLimitEvents *ret, uint64_t *ret_cpu_usec) {
        static const char *const files[] = { "memory.events", "pids.events", "cpu.stat" };
        static const struct {
                unsigned file;
                const char *key;
                size_t offset;
                Ceiling ceiling;
                bool optional; /* absent without a quota (the cpu controller is then not enabled) */
        } keys[] = {
                { 0, "max", offsetof(RunLimitEvents, memory_max), CEILING_MEMORY },
                { 0, "oom", offsetof(RunLimitEvents, oom), CEILING_MEMORY },
                { 0, "oom_kill", offsetof(RunLimitEvents, oom_kill), CEILING_MEMORY },
                { 1, "max", offsetof(RunLimitEvents, fork_refused), CEILING_TASKS },
                { 2, "nr_throttled", offsetof(RunLimitEvents, cpu_throttled), CEILING_CPU, true },
                { 2, "throttled_usec", offsetof(RunLimitEvents, cpu_throttled_usec), CEILING_CPU, true },
        };
        char *text[ELEMENTSOF(files)] = {};
        RunLimitEvents e = { .known = true };
        bool ok = true;

        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                if (run_cgroup_read(run, files[i], &text[i]) < 0)
                        text[i] = NULL;
        *ret_cpu_usec = cgroup_text_figure(text[2], "usage_usec");
        for (size_t i = 0; ok && i < ELEMENTSOF(keys); i++) {
                uint64_t v = cgroup_text_figure(text[keys[i].file], keys[i].key);

                if (v == UINT64_MAX && !keys[i].optional && !ceilings_unenforced(keys[i].ceiling))
                        ok = false;
                *(uint64_t *) ((uint8_t *) &e + keys[i].offset) = v == UINT64_MAX ? 0 : v;
        }
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                free(text[i]);
        if (ok)
                *ret = e;
        return ok;
}

void run_take_base_figures(Run *run) {
        uint64_t v;

        if (!run_read_limit_events(run, &run->base_events, &v))
                run->base_events = (RunLimitEvents) {};
        run->cpu_base_usec = v == UINT64_MAX ? 0 : v;
}

/* When sbxd answers (the helper's last report, or stop-post) the run's processes are gone, but for the
 * helper at its report, and its cgroup is still there: sbxd reads the figures itself (events: the limit
 * events, read already), in case a host under load times the reader out; and its space, mounted on the
 * host until the run's unit is gone (the space unit stops when unneeded). */
static void run_take_stop_figures(Run *run, const RunLimitEvents *events, uint64_t cpu_usec) {
        struct statfs sfs;

        run->stop_events = *events;
        run->stop_cpu_usec = cpu_usec;
        run->stop_memory_peak = run_cgroup_figure(run, "memory.peak", NULL);
        run->stop_tasks_peak = run_cgroup_figure(run, "pids.peak", NULL);
        if (run->space_path && statfs(run->space_path, &sfs) >= 0 && (uint64_t) sfs.f_type == TMPFS_MAGIC) {
                run->stop_disk_used = ((uint64_t) sfs.f_blocks - (uint64_t) sfs.f_bfree) * (uint64_t) sfs.f_bsize;
                run->stop_disk_full = sfs.f_bavail == 0 || (sfs.f_files > 0 && sfs.f_ffree == 0);
        }
}

static void run_read_stop_figures(Run *run) {
        RunLimitEvents ev;
        uint64_t cpu;

        if (!run->stop_events.known && run_read_limit_events(run, &ev, &cpu))
                run_take_stop_figures(run, &ev, cpu);
}

/* At stop-post the command has ended and its output is drained: every process of the run is gone, the
 * exec helper that relays the output among them, and the unit's Service properties systemd sent just
 * before say how the main process ended. The rest of the unit's end (the figures reader, the cgroup's
 * removal) is part of the cleanup when nothing of it is part of the answer: no workspace to hand back
 * (that is an ExecStopPost= too), and sbxd's own reading of the cgroup here worked (it stands in for the
 * reader's, the same counters read the same way once the run's processes are gone). Then the answer
 * (Exited) goes now, and the outcome it carries is the final record's too; else it waits for the unit's
 * end, as before. */
static void run_answer_at_stop_post(Run *run) {
        RunRecord *rec = run->record;

        /* job_done: how its start ended is known too (a unit that failed before it was up is start-failed) */
        if (!run->answer_at_stop_post || !run->job_done || rec->exited || run->finalizing ||
            !run->stop_events.known || !run->svc_result || run->svc_code <= 0 || run->stop_cpu_usec == UINT64_MAX)
                return;
        log_debug("Run %s: answered at its unit's stop-post.", run->id);
        run->answered_early = true;
        rec->ended_at = now_realtime();
        rec->cpu_usec = run->stop_cpu_usec > run->cpu_base_usec ? run->stop_cpu_usec - run->cpu_base_usec : 0;
        run_apply_outcome(run, run->svc_result, run->svc_code, run->svc_exit_status, run->svc_status);
        run_exited(run);
}

/* Whether the run's cgroup holds no process but (at most) one, and no cgroup below it: once its helper
 * has reported the command's end, that one is the helper, which has ended everything else (it is the
 * unit's main process, alone allowed to report; nothing else is left to fork). */
static bool run_cgroup_down_to_helper(const Run *run) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        unsigned n = 0;

        if (!run->cgroup_path || asprintf(&path, "%s/cgroup.procs", run->cgroup_path) < 0 ||
            read_file_at(AT_FDCWD, path, 64 * 1024, &text, NULL) < 0)
                return false;
        for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n')
                n++;
        if (n > 1)
                return false;
        d = opendir(run->cgroup_path);
        if (!d)
                return false;
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        return false;
        return true;
}

/* Earlier still: the helper's last status line ("finished ... exit_status=N") says that the command
 * exited with N, its output drained and whatever it left ended; the unit is still running (no stop
 * and no time-out under way), no process but the helper is left in its cgroup (it ends with the same
 * status right after), and the OOM killer ended none. That is the same end stop-post would show
 * (Result "success" or "exit-code", ExecMainCode CLD_EXITED, that status), a few ms before PID 1 has
 * reaped the helper and forked the figures reader. A command a signal ended, or anything else
 * unusual, waits for stop-post (run_answer_at_stop_post()). */
static void run_answer_at_finish(Run *run) {
        RunRecord *rec = run->record;
        RunLimitEvents ev;
        uint64_t cpu;
        const char *p;
        /* systemd's line once it has it (the unit's main process's alone: NotifyAccess=main), before that the
         * helper's FINISHED */
        const char *line = run->svc_status && strneq(run->svc_status, "finished", 8) ? run->svc_status :
                run->helper_status;
        char *end;
        long status;

        /* How its start ended must be known (a unit that failed before it was up is start-failed). A pooled
         * unit's helper says READY=1 before it runs the command and sends FINISHED only after it, so its
         * start job has ended "done" even if JobRemoved, behind systemd's other signals, has not come yet. */
        bool started = run->job_done || (rec->pooled && line && line == run->helper_status);

        if (!run->answer_at_stop_post || !started || rec->exited || run->finalizing || run->refused ||
            run->job_failed || run->stop_requested || run->idle_stop || !line || !strneq(line, "finished", 8) ||
            !(p = strstr(line, " exit_status=")))
                return;
        errno = 0;
        status = strtol(p + 13, &end, 10);
        if (errno != 0 || end == p + 13 || (*end && *end != ' ') || status < 0 || status > 255)
                return;
        /* the limit events read once: the OOM check's and the record's */
        if (run->stop_events.known || !run_cgroup_down_to_helper(run) || !run_read_limit_events(run, &ev, &cpu) ||
            ev.oom_kill > run->base_events.oom_kill)
                return;
        run_take_stop_figures(run, &ev, cpu);
        if (run->stop_cpu_usec == UINT64_MAX)
                return;
        log_debug("Run %s: answered at its helper's report (exit status %ld).", run->id, status);
        run->answered_early = run->before_reader = true;
        rec->ended_at = now_realtime();
        rec->cpu_usec = run->stop_cpu_usec > run->cpu_base_usec ? run->stop_cpu_usec - run->cpu_base_usec : 0;
        run_apply_outcome(run, status == 0 ? "success" : "exit-code", 1, (int32_t) status, line);
        run_exited(run);
}

/* The helper's FINISHED (sandbox-proto.h): the status line it gives systemd as STATUS= next, here a hop
 * sooner. Only the helper holds the channel's other end (the command never inherits it, the helper is
 * not dumpable); it sends none while a stop signal is pending (a stopped unit's end comes through
 * systemd), and the line is checked as systemd's is (run_answer_at_finish()): the cgroup down to the
 * helper, no OOM kill. Anything else on the channel, or its close, ends the watch; the answer then comes
 * as before. */
static int on_report(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Run *run = userdata;
        SbxFinishedMsg msg;
        ssize_t n;

        n = recv(fd, &msg, sizeof(msg), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n == (ssize_t) sizeof(msg) && msg.h.type == SBX_MSG_FINISHED && !run->helper_status &&
            memchr(msg.status, 0, sizeof(msg.status))) {
                run->helper_status = strdup(msg.status);
                log_debug("Run %s: its helper reports: %s", run->id, msg.status);
                if (run->helper_status)
                        run_answer_at_finish(run);
        }
        run->report_source = sd_event_source_disable_unref(run->report_source);
        return 0;
}

int run_watch_report(Run *run, int fd) {
        int r;

        run->report_source = sd_event_source_disable_unref(run->report_source);
        r = sd_event_add_io(run->manager->event, &run->report_source, fd, EPOLLIN, on_report, run);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        r = sd_event_source_set_io_fd_own(run->report_source, true);
        if (r < 0) {
                run->report_source = sd_event_source_disable_unref(run->report_source);
                safe_close(fd);
        }
        return r;
}

/* What the unit's privileged figures reader left (sbx-exec --figures): the peaks and limit events. */
void run_take_figures(Run *run) {
        _cleanup_free_ char *text = NULL;
        int r;

        /* answered at its helper's report, the reader (ExecStopPost=, after the helper) has left nothing yet:
         * not looked for (its file goes with the cleanup, run_drop_figures()) */
        r = run->before_reader ? -ENOENT : store_take_figures(&run->manager->store, run->unit, &text);
        if (r < 0 && run->stop_events.known) {
                /* what sbxd read at stop-post stands in */
                run->record->limit_events = run->stop_events;
                run->record->memory_peak = run->stop_memory_peak;
                run->record->tasks_peak = run->stop_tasks_peak;
                run_limit_events_subtract(&run->record->limit_events, &run->base_events);
        } else if (r == -ENOENT)
                log_warning("Unit %s left no figures: the record's peaks and limit events are unknown.", run->unit);
        else if (r < 0)
                log_warning_errno(r, "Failed to read the figures of unit %s: %m", run->unit);
        else {
                text[strcspn(text, "\n")] = 0; /* one line */
                if (strneq(text, "error: ", 7))
                        log_warning("The figures reader of unit %s failed: %s", run->unit, text + 7);
                else if (run_record_parse_figures(run->record, text) < 0)
                        log_warning("Unit %s left malformed figures, ignoring: %s", run->unit, text);
                else
                        run_limit_events_subtract(&run->record->limit_events, &run->base_events);
        }
        /* neither the helper nor the reader could measure the space (killed, or timed out) */
        if (run->record->disk_max > 0 && run->record->disk_used == UINT64_MAX && run->stop_disk_used != UINT64_MAX) {
                run->record->disk_used = run->stop_disk_used;
                run->record->disk_full = run->stop_disk_full;
        }
}

/* A run answered at its stop-post (run_answer_at_stop_post()): the figures reader's file, written since,
 * goes; the record keeps what sbxd read then, which the answer carried. A failed reader is still
 * logged. */
static void run_drop_figures(Run *run) {
        _cleanup_free_ char *text = NULL;

        if (store_take_figures(&run->manager->store, run->unit, &text) < 0)
                return;
        text[strcspn(text, "\n")] = 0;
        if (strneq(text, "error: ", 7))
                log_warning("The figures reader of unit %s failed: %s", run->unit, text + 7);
}

/* How the run ended, into its record: systemd's Result for the unit, its main process's end (code
 * CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3; 0: the command never started; -1: it ran, its end is not
 * known) and the helper's last status line (NULL: none), from the unit's properties or from PID 1's
 * journal (run_end_unwatched()). */
void run_apply_outcome(Run *run, const char *result, int32_t code, int32_t exit_status, const char *status) {
        RunRecord *rec = run->record;

        /* CLD_EXITED=1, CLD_KILLED=2, CLD_DUMPED=3 */
        if (code == 1)
                rec->exit_code = exit_status;
        else if (code == 2 || code == 3)
                rec->exit_signal = exit_status;

        rec->stop_reason = stop_reason_from_unit_result(result);
        if (rec->stop_reason < 0)
                rec->stop_reason = STOP_START_FAILED;
        /* systemd counts SIGHUP/SIGINT/SIGTERM/SIGPIPE deaths as a clean exit ("success"); for a
         * sandbox they are what they are: the command was killed by a signal. */
        if (rec->stop_reason == STOP_SUCCESS && rec->exit_signal > 0)
                rec->stop_reason = STOP_SIGNAL;
        parse_status_text(rec, status);
        run_take_figures(run);

        /* The command never started (ExecStartPre= or the unit's set-up failed). */
        if (code == 0 && rec->stop_reason != STOP_SUCCESS && rec->stop_reason != STOP_REFUSED) {
                rec->stop_reason = STOP_START_FAILED;
                if (!rec->error && asprintf(&rec->error, "the unit failed before the command started (result '%s')",
                                            strna(result)) < 0)
                        rec->error = NULL;
        }
        /* systemd's "timeout" is also a start-up or a clean-up (ExecStopPost=) that took too long
         * (a host under load): the wall-time ceiling only when the run lasted it, otherwise the
         * command's own end is the run's. */
        if (rec->stop_reason == STOP_TIMEOUT && code > 0 && rec->limits.known && rec->limits.wall_time > 0 &&
            rec->ended_at < rec->started_at + rec->limits.wall_time) {
                log_warning("Unit %s timed out after its command ended (its clean-up took too long).", run->unit);
                rec->stop_reason = code == 1 ? (exit_status == 0 ? STOP_SUCCESS : STOP_EXIT_CODE)
                                             : code == 3 ? STOP_CORE_DUMP : STOP_SIGNAL;
        }
        /* The helper reports "finished" right before it exits; without it, and with an exit
         * status from systemd's own range, the command never ran. */
        if (rec->stop_reason == STOP_EXIT_CODE && code == 1 && exit_status >= 200 && exit_status <= 243 &&
            !(status && strneq(status, "finished", 8))) {
                rec->stop_reason = STOP_START_FAILED;
                if (!rec->error && asprintf(&rec->error, "systemd could not set up the unit (exit status %d)",
                                            exit_status) < 0)
                        rec->error = NULL;
        }
        if (run->refused)
                rec->stop_reason = STOP_REFUSED;
        else if (run->job_failed)
                rec->stop_reason = STOP_START_FAILED;
        if (run->idle_stop && rec->stop_reason != STOP_REFUSED && rec->stop_reason != STOP_START_FAILED)
                rec->stop_reason = STOP_IDLE_TIMEOUT;
        else if (run->stop_requested && rec->stop_reason != STOP_REFUSED &&
                 rec->stop_reason != STOP_START_FAILED) {
                rec->stop_reason = STOP_CANCELLED;
                if (run->cancel_signal > 0)
                        rec->exit_signal = run->cancel_signal;
        }
}

static int on_getall_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        RunRecord *rec = run->record;
        UnitEnd e = { .cpu_nsec = UINT64_MAX };
        int r;

        run->slot_getall = sd_bus_slot_unref(run->slot_getall);
        rec->ended_at = now_realtime();

        if (sd_bus_message_is_method_error(reply, NULL)) {
                log_warning("Failed to read the final state of %s: %s", run->unit,
                            sd_bus_message_get_error(reply)->message);
                rec->stop_reason = STOP_LOST;
        } else {
                r = read_unit_end(reply, &e);
                if (r < 0)
                        log_warning_errno(r, "Failed to parse the properties of %s: %m", run->unit);

                /* a pooled unit's helper used some before the run's command came: not the run's */
                if (e.cpu_nsec != UINT64_MAX)
                        rec->cpu_usec = e.cpu_nsec / 1000 > run->cpu_base_usec ? e.cpu_nsec / 1000 - run->cpu_base_usec : 0;
                run_apply_outcome(run, e.result, e.code, e.exit_status, e.status);
        }
        run_exited(run);
        run_release_unit(run);
        return 0;
}

/* Drops sbxd's reference to the ended unit: it is garbage-collected, and UnitRemoved tells us it is
 * gone. */
static void run_release_unit(Run *run) {
        int r;

        r = sd_event_add_time_relative(run->manager->event, &run->removal_timeout, CLOCK_MONOTONIC,
                                       UNIT_REMOVAL_TIMEOUT_USEC, 0, on_removal_timeout, run);
        if (r < 0) {
                run_complete(run);
                return;
        }
        r = sd_bus_call_method_async(run->manager->bus, &run->slot_unref, SD_DEST, run->unit_path,
                                     "org.freedesktop.systemd1.Unit", "Unref", on_unref_reply, run, NULL);
        if (r < 0) {
                log_warning_errno(r, "Failed to release %s: %m", run->unit);
                run_complete(run);
        }
}

/* ---- exited: the answer before the cleanup ------------------------------------------------------ */

void run_yield_to_caller(void) {
        (void) sched_yield();
}

/* The command has ended, its output is drained (the exec helper, which relays it, has exited) and the
 * unit's outcome is read: the record says so ("exited", its cleanup not yet completed) and the client
 * has its answer now (Exited), while the unit, its space and the rest are removed. Finished follows with
 * the final record. A client that asked to wait for the cleanup (wait_cleanup) gets only Finished, and
 * so does one whose run holds what only the cleanup gives back (a feature's exited hook: caches) or
 * whose answer is part of the cleanup (an export's review). */
static void run_exited(Run *run) {
        bool hold = run->wait_cleanup;
        int r;

        FEATURE_FOREACH(f)
                if ((*f)->exited && (*f)->exited(run) > 0)
                        hold = true;
        /* the hand-back (ExecStopPost=) is done: a workspace that is its owner's again is free for the
         * caller's next run, which its answer lets it start now (manager_check_host_dir()) */
        if (run->workspace) {
                struct stat st;

                run->ws_back = stat(run->workspace, &st) >= 0 && !uid_is_dynamic(st.st_uid);
        }
        run->record->exited = true;
        if (!hold)
                run_send_record(run, "Exited");
        /* after the signal, off the answer's path: sbxd answers no Get before this is written */
        r = store_write(&run->manager->store, run->record);
        if (r < 0)
                log_warning_errno(r, "Failed to write the interim record of run %s, ignoring: %m", run->id);
        /* not before it: whoever reads the store's file once the answer came finds the run "exited" */
        if (!hold)
                run_yield_to_caller();
        run_object_changed(run);
}

/* ---- cleanup measured, record final: the unit gone, the record written ----------------------- */

static int on_unref_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        run->slot_unref = sd_bus_slot_unref(run->slot_unref);
        if (e && !sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit")) {
                log_warning("Failed to release unit %s: %s", run->unit, e->message);
                run->record->unit_gone = false;
                run_complete(run);
        } else if (e)
                run_unit_gone(run);
        /* otherwise wait for UnitRemoved (or the timeout) */
        return 0;
}

static int on_removal_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Run *run = userdata;

        if (run->awaiting_aux && !space_gone(run)) {
                log_warning("The space of run %s (%s) was not removed within %" PRIu64 "s.", run->id,
                            run->space_path, UNIT_REMOVAL_TIMEOUT_USEC / USEC_PER_SEC);
                /* its unit gone, no one else would (the record still says it is not gone) */
                (void) manager_remove_space(run->manager, run->id);
        } else if (run->awaiting_aux)
                log_warning("The network namespace of run %s (%s) was not unmounted within %" PRIu64 "s.", run->id,
                            run->netns_path, UNIT_REMOVAL_TIMEOUT_USEC / USEC_PER_SEC);
        else {
                log_warning("Unit %s was not unloaded within %" PRIu64 "s.", run->unit,
                            UNIT_REMOVAL_TIMEOUT_USEC / USEC_PER_SEC);
                run->record->unit_gone = false;
        }
        run_complete(run);
        return 0;
}

/* The run's unit is gone: its space unit and its network unit, no longer needed, are being stopped; the
 * record waits for them (UnitRemoved of either, or the removal timeout). */
static void run_unit_gone(Run *run) {
        run->record->unit_gone = true;
        if (!run_aux_gone(run) && run->removal_timeout) {
                run->awaiting_aux = true;
                /* the export unit reviews the run's ~/out before the space goes: as long as it may take */
                if (run->record->export)
                        (void) sd_event_source_set_time_relative(run->removal_timeout, EXPORT_REVIEW_TIMEOUT_USEC);
                return;
        }
        run_complete(run);
}

static bool is_net_unit_of(const Run *run, const char *unit) {
        _cleanup_free_ char *name = NULL;

        return run->netns_path && policy_net_unit_name(run->id, &name) >= 0 && streq(name, unit);
}

int run_on_unit_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *unit, *path;

        if (!manager_from_systemd(m, msg) || sd_bus_message_read(msg, "so", &unit, &path) < 0)
                return 0;
        for (Run *run = m->runs; run; run = run->next) {
                if (run->finalizing && run->removal_timeout && !run->awaiting_aux && streq(run->unit, unit)) {
                        run_unit_gone(run);
                        return 0;
                }
                if (run->awaiting_aux && (streq_ptr(run->space_unit, unit) || is_net_unit_of(run, unit))) {
                        if (run_aux_gone(run))
                                run_complete(run);
                        return 0;
                }
                if (streq(run->unit, unit))
                        return 0;
        }
        /* a unit of sbx's without a run (a pooled one never used) leaves figures no one reads */
        if (strneq(unit, "sbx-", 4))
                store_drop_figures(&m->store, unit);
        return 0;
}

/* Exited or Finished, with the record as it is now, to the run's client */
static void run_send_record(Run *run, const char *member) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        _cleanup_free_ char *json = NULL;
        /* on the system bus to the client's name; on sbxd's own socket, on the client's connection */
        sd_bus *bus = run->client_bus ?: run->manager->bus;
        int r;

        if (!run->client)
                return;
        r = run_record_to_json(run->record, &json);
        if (r >= 0)
                r = sd_bus_message_new_signal(bus, &sig, SBX_BUS_PATH, SBX_BUS_INTERFACE, member);
        if (r >= 0 && !run->client_bus)
                r = sd_bus_message_set_destination(sig, run->client);
        if (r >= 0)
                r = sd_bus_message_append(sig, "ss", run->id, json);
        if (r >= 0)
                r = sd_bus_send(bus, sig, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to send %s for run %s, ignoring: %m", member, run->id);
}

/* One event per limit the run met, with the line sbxctl prints for it (docs/limits.md). */
static void log_run_limits(Run *run) {
        const RunRecord *rec = run->record;
        Observation obs[_LIMIT_EVENT_MAX];
        size_t n = run_record_observe(rec, obs);

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *line = NULL;
                char value[32], count[32];

                if (observation_format(&obs[i], rec->profile, &line) < 0)
                        continue;
                (void) snprintf(value, sizeof value, "%" PRIu64, obs[i].value);
                (void) snprintf(count, sizeof count, "%" PRIu64, obs[i].count);
                log_event(obs[i].shown ? LOG_NOTICE : LOG_INFO, SBX_MESSAGE_RUN_LIMIT,
                          LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit }, { "SBX_PROFILE", rec->profile },
                                     { "SBX_TENANT", rec->tenant },
                                     { "SBX_LIMIT_EVENT", limit_event_to_string(obs[i].event) },
                                     { "SBX_LIMIT", obs[i].limit }, { "SBX_LIMIT_VALUE", value },
                                     { "SBX_LIMIT_COUNT", count }),
                          "Run %s: %s", run->id, line);
        }
}

static void log_run_finished(Run *run) {
        const RunRecord *rec = run->record;
        bool clean = run_record_cleanup_completed(rec);
        char exit_code[16], exit_signal[16], unenforced[CEILINGS_LIST_MAX];
        _cleanup_free_ char *denied = NULL;

        (void) snprintf(exit_code, sizeof exit_code, "%d", rec->exit_code);
        (void) snprintf(exit_signal, sizeof exit_signal, "%d", rec->exit_signal);
        for (size_t i = 0; i < rec->n_denied; i++) {
                char *d = NULL;

                if (asprintf(&d, "%s%s%s:%" PRIu64, denied ?: "", denied ? "," : "", rec->denied[i].name,
                             rec->denied[i].count) < 0)
                        break;
                free(denied);
                denied = d;
        }
        (void) ceilings_to_list(rec->limits.unenforced, ",", unenforced);
        log_event(clean ? LOG_INFO : LOG_WARNING, SBX_MESSAGE_RUN_FINISHED,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit }, { "SBX_PROFILE", rec->profile },
                             { "SBX_TENANT", rec->tenant },
                             { "SBX_STOP_REASON", strna(stop_reason_to_string(rec->stop_reason)) },
                             { "SBX_EXIT_CODE", exit_code }, { "SBX_EXIT_SIGNAL", exit_signal },
                             { "SBX_CLEANUP", clean ? "completed" : "incomplete" },
                             { "SBX_DENIED_SYSCALLS", denied }, { "SBX_ERROR", rec->error },
                             { "SBX_LIMITS_UNENFORCED", unenforced[0] ? unenforced : NULL }),
                  "Run %s (%s) finished: %s, exit %d, signal %d, cleanup %s%s%s.", run->id, run->unit,
                  strna(stop_reason_to_string(rec->stop_reason)), rec->exit_code, rec->exit_signal,
                  clean ? "completed" : "INCOMPLETE", unenforced[0] ? "; ceilings NOT enforced: " : "", unenforced);
        log_run_limits(run);
}

void run_complete(Run *run) {
        RunRecord *rec = run->record;
        Manager *m;
        int r;

        run_start_done(run); /* also if its start job's end went unseen */
        /* Over before StartTransientUnit's reply was handled: answer the caller first, so it can match
         * the Finished signal that follows. */
        if (run->pending) {
                run_answer(run, run->pending);
                run->pending = sd_bus_message_unref(run->pending);
        }
        FEATURE_FOREACH(f)
                if ((*f)->unit_ended)
                        (*f)->unit_ended(run);

        rec->cgroup_gone = !run_cgroup_exists(run->cgroup_path);
        run_measure_cleanup(run);
        store_drop_figures(&run->manager->store, run->unit); /* if they were not read */
        rec->space_gone = space_gone(run);
        FEATURE_FOREACH_REVERSE(f)
                if ((*f)->ended)
                        (*f)->ended(run);
        rec->finished = true;
        if (rec->ended_at == 0)
                rec->ended_at = now_realtime();
        r = store_write(&run->manager->store, rec);
        if (r < 0)
                log_error_errno(r, "Failed to write the record of run %s: %m", run->id);
        log_run_finished(run);
        run_object_changed(run);
        run_send_record(run, "Finished");
        m = run->manager;
        run_free(run);
        /* nothing running: give the heap a burst of runs grew back to the system */
        if (!m->runs)
                manager_heap_trim();
}
