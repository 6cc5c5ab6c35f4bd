/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The D-Bus objects of runs and sandboxes: /org/sbx/run/<id> (org.sbx.Run1) for a run of one command,
 * /org/sbx/sandbox/<id> (org.sbx.Run1 and org.sbx.Sandbox1) for a sandbox. An object exists while sbxd
 * follows its run (from Run/CreateSandbox to the Finished signal); afterwards Manager1.Get returns the
 * record. Callers see the objects of their own runs only (root: all); another tenant's path is an
 * unknown object, as one that never existed.
 *
 * PropertiesChanged is not broadcast (every peer on the system bus could read it): it goes to the run's
 * client and to each peer that called Subscribe() on the object. */

#include "run.h"

#define SBX_RUN_OBJECT_PREFIX "/org/sbx/run"
#define SBX_SANDBOX_OBJECT_PREFIX "/org/sbx/sandbox"
#define SBX_RUN_INTERFACE "org.sbx.Run1"
#define SBX_SANDBOX_INTERFACE "org.sbx.Sandbox1"

int objects_install(Manager *m);
