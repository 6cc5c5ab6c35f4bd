/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "unit-outcome.h"

/* How UNIT ended, from PID 1's own entries in the journal (newest first, at most a few hundred read):
 * 0 with *ret set, -ENOENT when its end is not there (journald stopped, or a moment behind), or another
 * negative errno when the journal cannot be read. */
int unit_journal_outcome(const char *unit, UnitOutcome *ret);
