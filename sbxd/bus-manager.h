/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxd's org.sbx.Manager1 object on the bus. */
#pragma once

#include "manager.h"

/* Adds the manager's object and the objects of runs and sandboxes, then takes the bus name: the last
 * step of sbxd's start (callers reach it only once everything they may ask for is in place). */
int bus_manager_install(Manager *m);
/* The methods and signals of a run's path on a connection of sbxd's own socket (direct.h). */
int bus_manager_install_direct(Manager *m, sd_bus *peer);
