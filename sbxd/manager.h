/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: sbxd's bus connection and event loop, its start-up and the runs it takes up from an
 * earlier sbxd (manager.c); with the run core's entry points (run-core.h) for the D-Bus handlers. */
#pragma once

#include "run-core.h"
#include "run.h"

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

int manager_start(Manager *m);

/* The caller's uid as the bus recorded it when the caller connected. */
int manager_caller_uid(sd_bus_message *msg, uid_t *ret);
