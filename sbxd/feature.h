/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hooks a feature of a run implements, and the one table of features the run core walks. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "policy.h"

typedef struct Manager Manager;
typedef struct Run Run;

/* A feature of a run (its export, image, caches, sandbox, pooled unit, credentials, capture, network): the
 * stages of a run it has something to do at, and of sbxd's own life (init, start, gc, stop). The run core
 * (run.c) and the manager (manager.c) walk features[] and call the hooks that are set; neither names a
 * feature. What is made for a run is made in the table's order and undone in the reverse one (ended,
 * start_refused, start_failed, abandon, gc). As systemd's UnitVTable, one table per feature. */
/* What a feature's prepare, prepare_unit and claim hooks are given of the run's request. */
typedef struct RunPrepare {
        const Profile *profile;
        const RunRequest *req;
        const RunPlan *plan;
        bool pooled;               /* a unit a feature had waiting serves the run (its route): its network
                                    * was made with it */
        int *ctl;                  /* a sandbox's control channel (sandbox-proto.h), taken by the sandbox */
        int *stdio;                /* the unit's stdin, stdout and stderr (the caller's, or a sandbox's channel) */
        int *stdin_held;           /* a stdin a feature puts in stdio[0], held by the start until its call is sent */
} RunPrepare;

typedef struct Feature {
        const char *name;
        /* sbxd starts, before it takes up the runs of an earlier one: what the feature needs for them (the
         * network's programs and maps). A negative errno (logged) stops sbxd. Walked in the table's order. */
        int (*init)(Manager *m);
        /* sbxd took up the runs of an earlier one and removed what ended ones left (gc): the feature's own
         * work begins (the warm pool fills). A negative errno (logged) stops sbxd. */
        int (*start)(Manager *m);
        /* sbxd stops, its runs freed: what the feature holds for all of them goes. Walked in the table's
         * order (the warm pool before the network its units use). */
        void (*stop)(Manager *m);
        /* A request is checked against its profile and the host, before the run exists (a negative
         * errno, or a named error in error): check_request before the host directories the request
         * names are walked, check_host_dirs after the workspace and the dataset. */
        int (*check_request)(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error);
        int (*check_host_dirs)(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error);
        /* Another way to the run's unit than StartTransientUnit: a unit the feature has waiting (the warm
         * pool's). route: before the run's id is chosen, 1 if such a unit may serve the request (its id in
         * run_id, the unit in *ret_unit, opaque to the core), 0 if not. route_keeps: the plan compiled with
         * that id, 1 if the unit serves it, 0 if not (the feature let the unit go; the run gets a unit of its
         * own under another id). Once the run is made and prepared: hand_over makes the unit the run's (it
         * cannot fail); release lets it go (the run's record could not be written); claim gives it the
         * run's command (ctx->stdio: the caller's): a negative errno if it cannot, the unit then being
         * stopped and what the feature had made for the run gone. */
        int (*route)(Manager *m, const Profile *p, const RunRequest *req, char run_id[static RUN_ID_LEN + 1],
                     void **ret_unit);
        int (*route_keeps)(Manager *m, void *unit, const Profile *p, const RunPlan *plan);
        void (*hand_over)(Run *run, void *unit);
        void (*release)(Run *run, void *unit);
        int (*claim)(Run *run, void *unit, const RunPrepare *ctx);
        /* The run's id chosen (req->run_id): what the plan needs of the feature, filled into req (the
         * network's namespace and the host's addresses, the caches other runs hold), or a negative errno,
         * or a named error in error (the network's programs not in force). */
        int (*plan_inputs)(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error);
        /* The run is made, its record filled in, its unit not asked for yet: what the feature needs for
         * it (a negative errno, or a named error in error). */
        int (*prepare)(Run *run, const RunPrepare *ctx, sd_bus_error *error);
        /* The run gets a unit of its own (no feature's route serves it): what the feature makes for that
         * unit, once every feature has prepared the run (a negative errno, or a named error in error); the
         * unit's stdin may be replaced (ctx->stdio, ctx->stdin_held: a run's command channel). */
        int (*prepare_unit)(Run *run, const RunPrepare *ctx, sd_bus_error *error);
        /* What the feature adds to the StartTransientUnit call of the run's unit, its a(sv) open. */
        int (*append_units)(Run *run, sd_bus_message *call);
        /* The run's Run() or CreateSandbox call, its unit's start job queued: 1 if the feature takes the call
         * to answer it later (a reference), 0 to leave it to the core, which answers with the run's id. */
        int (*answer)(Run *run, sd_bus_message *call);
        /* The run's start job finished "done" (its unit's cgroup exists now), while the run is not being
         * ended: a negative errno, with why in *ret_why, refuses the run and stops it. */
        int (*job_done)(Run *run, char **ret_why);
        /* sbxd took up a run an earlier one started, whose unit still exists: what the feature had made
         * for it is taken up again (a failure is logged, the run followed all the same). */
        void (*adopt)(Run *run);
        /* The run's command has ended and its unit's outcome is read, before the record says "exited"
         * (the cleanup still to come): what the record must say of the run by then goes into it. > 0:
         * the client's answer waits for Finished (no Exited), as what the run holds is the caller's
         * again only once the cleanup is done, or the answer is part of the cleanup. */
        int (*exited)(Run *run);
        /* The run's unit is gone, before the core measures what its end undid. */
        void (*unit_ended)(Run *run);
        /* The run ended: what the feature made for it goes, and the record says whether it did. Called
         * after the cleanup is measured, before the record is final. */
        void (*ended)(Run *run);
        /* systemd refused the run's unit: the record is being closed as start-failed. */
        void (*start_refused)(Run *run);
        /* The run never started (its record written already as running) and is closed as start-failed. */
        void (*start_failed)(Run *run);
        /* The run's start was given up before its record was written: what was made for it goes. */
        void (*abandon)(Run *run);
        /* The run is freed (it ended, or never started): the feature's part of it goes with it. Walked in
         * the table's order. */
        void (*free_run)(Run *run);
        /* sbxd started and took up the runs of an earlier one (runs_known: it knows all of them): what
         * runs that ended meanwhile left goes. Walked in the reverse order (the network's entries first),
         * right after the adoption, before the core sweeps the figures and spaces of ended runs. */
        void (*gc)(Manager *m, bool runs_known);
        /* A start job of some unit ended with result (JobRemoved): a unit of sbx's own the feature started
         * (a removal, a review) is done. Walked for every start job, a run's or not. */
        void (*job_removed)(Manager *m, const char *unit, const char *result);
} Feature;

extern const Feature feature_export, feature_images, feature_caches, feature_sandbox, feature_pool,
        feature_credentials, feature_capture, feature_network;

/* Every feature, in the order what they make for a run is made; NULL-terminated. */
extern const Feature *const features[];
extern const size_t features_count;

#define FEATURE_FOREACH(f) for (const Feature *const *f = features; *f; f++)
#define FEATURE_FOREACH_REVERSE(f) for (const Feature *const *f = features + features_count; f-- > features;)
