/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's network as a feature of the run core: its egress entries and resolver go when it ends. The
 * policy itself lives in network.c. */
#include "feature.h"
#include "manager.h"

static void network_ended(Run *run) {
        if (run->net)
                run_net_finish(run->net);
}

const Feature feature_network = {
        .name = "network",
        .ended = network_ended,
        .start_refused = network_ended,
};
