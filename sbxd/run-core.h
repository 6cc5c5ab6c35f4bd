/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager (manager.c, bus-manager.c) and the run core (run.c) call of each other: a run request's
 * way in, the systemd signals that move runs on, and what the adoption of an earlier sbxd's runs needs of a
 * run's life; the other way, the manager's bus checks and its removal of a space. Features see neither
 * side: they include run.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "policy.h"

typedef struct Manager Manager;
typedef struct Run Run;

/* ---- run.c ---- */

/* A run or sandbox request, decoded by its bus handler (bus-manager.c), from the caller uid: refused
 * with a named error in error, or on its way (1: answered when its unit's start job is queued). */
int run_start_request(Manager *m, sd_bus_message *msg, RunRequest *req, uid_t uid, bool sandbox,
                      sd_bus_error *error);
/* The caller becomes the client of run: it gets Finished, and its disconnection ends the run. */
int run_set_client(Run *run, const char *sender);
/* The same for the caller of msg, on the system bus or on sbxd's own socket. */
int run_set_client_of(Run *run, sd_bus_message *msg);
/* The run has no client any more (nothing is watched for it). */
void run_drop_client(Run *run);
/* Its client is gone: the run is stopped (SIGHUP). */
void run_client_gone(Run *run);
/* systemd's JobRemoved (a start job ended) and UnitRemoved (a unit is gone): the manager's matches. */
int run_on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error);
int run_on_unit_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error);

/* For the adoption of a run an earlier sbxd started (manager.c): follow its unit's state, ask it once,
 * fill in how it ended (systemd's result, its main process's end, the helper's last status line) and its
 * figures, and complete it (cleanup measured, record final, the run freed). */
int run_watch_unit(Run *run);
int run_ask_state(Run *run);
void run_apply_outcome(Run *run, const char *result, int32_t code, int32_t exit_status, const char *status);
void run_take_figures(Run *run);
void run_complete(Run *run);
Run *run_free(Run *run);
DEFINE_TRIVIAL_CLEANUP_FUNC(Run *, run_free);
bool run_cgroup_exists(const char *path);

/* ---- manager.c ---- */

/* Signals are only believed from their real sender: systemd's current unique name, or the bus itself. */
bool manager_from_systemd(Manager *m, sd_bus_message *msg);
bool manager_from_bus_driver(sd_bus_message *msg);
/* Removes the space of run id that no unit will remove, with a one-shot unit that does only that. */
int manager_remove_space(Manager *m, const char *id);
/* Gives the heap back after a burst (malloc_trim()). */
void manager_heap_trim(void);
