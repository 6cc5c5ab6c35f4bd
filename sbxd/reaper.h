/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The reaper (sbxctl gc, sbx-gc.timer; docs/reaper.md): stops runs past their deadline or whose owner
 * is gone, measures again the cleanup of finished runs whose records say something remained, and removes
 * records past their retention (/etc/sbx/sbxd.conf). */

#include "daemon-conf.h"
#include "run.h"

/* One pass; a JSON report of what it did in *ret ({"stopped": [...], "verified": N, "incomplete": [...],
 * "removed": N, "kept": N}). */
int reaper_collect(Manager *m, const DaemonConf *conf, char **ret);
