/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's network as a feature of the run core: its egress entries and resolver go when it ends. The
 * policy itself lives in network.c. */
#include "bus-errors.h"
#include "feature.h"
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
        .ended = network_ended,
        .start_refused = network_ended,
        .free_run = network_free_run,
};
