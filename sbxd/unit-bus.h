/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "proptable.h"

/* Appends the property table as StartTransientUnit's a(sv) entries (the container is opened by the
 * caller). The D-Bus half of the one-table-two-renderers design; see src/proptable/proptable.h. */
int bus_append_prop_table(sd_bus_message *m, const PropTable *t);
