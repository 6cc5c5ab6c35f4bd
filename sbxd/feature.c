/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of a run's features. The order is the order of their hooks at every stage: the network's
 * entries go before the capture ends, the credentials before the export's review is noted. */
#include <stddef.h>

#include "feature.h"

const Feature *const features[] = {
        &feature_images,
        &feature_sandbox,
        &feature_network,
        &feature_capture,
        &feature_credentials,
        &feature_export,
        NULL,
};
