/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of a run's features. Their hooks are called in this order where something is made for a run
 * (prepare) and in the reverse one where it goes: the export's review directory first, the network last;
 * at the end the network's entries go first, then the capture, the credentials, the export's review. */
#include "feature.h"
#include "macro.h"

const Feature *const features[] = {
        &feature_export,
        &feature_images,
        &feature_caches,
        &feature_sandbox,
        &feature_pool,
        &feature_credentials,
        &feature_capture,
        &feature_network,
        NULL,
};

const size_t features_count = ELEMENTSOF(features) - 1;
