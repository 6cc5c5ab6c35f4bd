/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: sbxd's bus connection, its runs' start slots, and the requests that make a run. */
#pragma once

#include "run.h"

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

int manager_start(Manager *m);

/* A run or sandbox request, decoded by its bus handler (bus-manager.c), from the caller uid: refused
 * with a named error in error, or on its way (1: answered when its unit's start job is queued). */
int manager_run_request(Manager *m, sd_bus_message *msg, RunRequest *req, uid_t uid, bool sandbox,
                        sd_bus_error *error);
/* The caller's uid as the bus recorded it when the caller connected. */
int manager_caller_uid(sd_bus_message *msg, uid_t *ret);
/* The caller becomes the client of run: it gets Finished, and its disconnection ends the run. */
int manager_run_set_client(Run *run, const char *sender);
/* Gives the heap back after a burst (malloc_trim()). */
void manager_heap_trim(void);
