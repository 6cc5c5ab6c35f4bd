/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's network as a feature of the run core: made with the run, registered once its unit's cgroup
 * exists, taken up again after a restart, its egress entries and resolver gone when it ends. The policy
 * itself lives in network.c. */
#include "bus-errors.h"
#include "feature.h"
#include "log.h"
#include "profile-load.h"
#include "run.h"

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

static void network_free_run(Run *run) {
        run->net = run_net_free(run->net);
}

const Feature feature_network = {
        .name = "network",
        .prepare = network_prepare,
        .job_done = network_job_done,
        .adopt = network_adopt,
        .ended = network_ended,
        .start_refused = network_ended,
        .free_run = network_free_run,
};
