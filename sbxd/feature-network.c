/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's network as a feature of the run core: made with the run, registered once its unit's cgroup
 * exists, taken up again after a restart, its egress entries and resolver gone when it ends. The policy
 * itself lives in network.c. */
#include "bus-errors.h"
#include "feature.h"
#include "log.h"
#include "profile-load.h"
#include "run.h"

/* sbxd starts: the egress programs and their maps, reusing what an earlier sbxd pinned (its runs' entries
 * are still in force); a failure to attach them refuses runs, not the daemon. */
static int network_init(Manager *m) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = net_manager_new(m->event, m->bus, &m->net);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the network side: %m");
        r = net_manager_prepare(m->net, &why);
        if (r < 0)
                log_warning("Egress enforcement is not available (runs are refused until it is): %s", strna(why));
        return 0;
}

/* The map entries of runs that ended while no sbxd ran. Every run being followed keeps its entries, also
 * one whose network could not be taken up again. */
static void network_gc(Manager *m, bool runs_known) {
        _cleanup_free_ char **live = NULL; /* the runs' own strings */
        size_t n = 0;
        int r;

        if (!runs_known)
                return;
        for (Run *run = m->runs; run; run = run->next)
                n++;
        live = calloc(n + 1, sizeof(char *));
        n = 0;
        for (Run *run = live ? m->runs : NULL; run; run = run->next)
                if (run->cgroup_path)
                        live[n++] = run->cgroup_path;
        r = live ? net_manager_gc(m->net, live) : -ENOMEM;
        if (r < 0)
                log_warning_errno(r, "Failed to remove egress entries of ended runs, ignoring: %m");
}

static void network_stop(Manager *m) {
        m->net = net_manager_free(m->net);
}

/* What the plan needs: a run with a network gets a namespace of its own, named after it, and the host's
 * addresses are denied to it. Every run's sockets are judged by sbx's egress programs (mode none: its own
 * loopback only): they must be in force, attached to sbx.slice as it is now. */
static int network_plan_inputs(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error) {
        _cleanup_free_ char *refusal = NULL;
        NetworkMode mode = policy_run_network(p, req);
        int r;

        if (mode != NETWORK_NONE) {
                r = policy_netns_path(req->run_id, &req->netns_path);
                if (r < 0)
                        return r;
                req->host_netns_ino = net_manager_host_netns(m->net);
        }
        r = net_manager_prepare(m->net, &refusal);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_UNENFORCEABLE, "%s", strna(refusal));
        if (mode != NETWORK_NONE) {
                r = manager_host_addresses(&req->host_addresses);
                if (r < 0)
                        return sd_bus_error_setf(error, ERR_START_FAILED, "cannot list the host's addresses: %s",
                                                 strerror(-r));
        }
        return 0;
}

/* Its egress policy, resolver and telemetry. A pooled unit's network policy was made with it, and is
 * handed over with it. */
static int network_prepare(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        _cleanup_free_ char *refusal = NULL;
        int r;

        if (ctx->pooled)
                return 0;
        r = run_net_new(run->manager->net, ctx->profile, ctx->plan->network, ctx->req->host_addresses, run->id,
                        run->record, &run->net, &refusal);
        if (r < 0) {
                if (!refusal)
                        return r;
                return sd_bus_error_setf(error, ERR_BAD_PROFILE, "Profile '%s': %s", ctx->profile->name, refusal);
        }
        return 0;
}

/* The unit's cgroup exists now: the run's egress policy goes in, keyed by it. Until it is in place every
 * socket of the run is denied, and the exec helper waits for it. */
static int network_job_done(Run *run, char **ret_why) {
        if (!run->net || run_net_is_registered(run->net))
                return 0;
        return run_net_register(run->net, run->cgroup_path, run->netns_path, ret_why);
}

/* A run of an earlier sbxd taken up: its egress policy compiled again from its profile, and registered. */
static void network_adopt(Run *run) {
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_strv_free_ char **dirs = NULL, **addrs = NULL;
        _cleanup_free_ char *why = NULL;
        NetworkMode mode;
        int r;

        if (!run->record->network || !run->record->profile)
                return; /* a run of an sbxd without egress */
        mode = run->record->network->mode;
        r = profile_search_path(&dirs);
        if (r >= 0)
                r = profile_load(dirs, run->record->profile, &p, &why);
        /* The profile file changed since the run started (or the record predates the digest): its
         * allowances are not recompiled from another policy than the one it started with. */
        if (r >= 0 && !streq_ptr(p->digest, run->record->profile_digest)) {
                log_warning("Run %s: profile %s is not the file it started with (%s, now %s); its map entries "
                            "stay as they are, its names do not resolve.", run->id, run->record->profile,
                            strna(run->record->profile_digest), p->digest);
                return;
        }
        if (r >= 0 && mode != NETWORK_NONE)
                r = policy_netns_path(run->id, &run->netns_path);
        /* the host's addresses as they are now: an answer naming one must not open it */
        if (r >= 0 && mode != NETWORK_NONE)
                r = manager_host_addresses(&addrs);
        if (r >= 0)
                r = run_net_new(run->manager->net, p, mode, addrs, run->id, run->record, &run->net, &why);
        if (r >= 0)
                r = run_net_register(run->net, run->cgroup_path, run->netns_path, &why);
        if (r < 0)
                log_warning("Run %s: cannot take up its network policy again (its map entries stay as they "
                            "are, its names do not resolve): %s", run->id, why ?: strerror(-r));
}

static void network_ended(Run *run) {
        if (run->net)
                run_net_finish(run->net);
}

static int network_exited(Run *run) {
        if (run->net)
                run_net_exited(run->net);
        return 0;
}

static void network_free_run(Run *run) {
        run->net = run_net_free(run->net);
}

const Feature feature_network = {
        .name = "network",
        .init = network_init,
        .stop = network_stop,
        .plan_inputs = network_plan_inputs,
        .gc = network_gc,
        .prepare = network_prepare,
        .job_done = network_job_done,
        .adopt = network_adopt,
        .exited = network_exited,
        .ended = network_ended,
        .start_refused = network_ended,
        .free_run = network_free_run,
};
