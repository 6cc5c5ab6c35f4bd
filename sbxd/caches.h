/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The profiles' caches seen from sbxd (docs/reaper.md): when each was last used, which are in use, and
 * their removal by the reaper. The caches are the runs' StateDirectory=, out of sbxd's write reach
 * (ProtectSystem=strict): sbxd measures them (CAP_DAC_READ_SEARCH) and has a privileged one-shot unit
 * (sbx-exec --remove-caches) remove what it chose. */

#include <json-c/json.h>

#include "daemon-conf.h"
#include "run.h"

/* A run starts with the caches of plan (its StateDirectory= below sbx-cache/): their last use is now. */
void caches_note_use(Manager *m, const RunPlan *plan);

/* The reaper's pass over the caches: chooses by conf (cache_prune_select()), starts their removal, and
 * adds "caches" to report. */
int caches_collect(Manager *m, const DaemonConf *conf, json_object *report);

/* sbxctl cache list|rm|prune: the caller's own caches (docs/caches.md) */
int caches_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int caches_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int caches_method_prune(sd_bus_message *msg, void *userdata, sd_bus_error *error);
