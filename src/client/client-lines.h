/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The lines at the end of a run that tell the agent what happened to it: a limit met, a destination
 * denied, a name refused. Each line is what sbxctl prints after "sbx: " on stderr. */

#include <stddef.h>

#include "record.h"

#define CLIENT_EGRESS_LINES_MAX 20      /* denied destinations and refused names listed; then "... and N more" */

/* "10.0.0.5:22/tcp (private range)", "203.0.113.10:443/tcp (pkg.example, allowance expired (TTL))",
 * "203.0.113.10:443/tcp (pkg.example)" for an allowed one. */
const char *client_format_destination(const NetDestinationStat *d, const char *profile, char *buf, size_t l);
/* One line per limit the run met (nothing for a run that ended normally), appended to *lines. 0 or -ENOMEM. */
int client_observation_lines(const RunRecord *rec, char ***lines);
/* One line per denied destination and refused name (at most CLIENT_EGRESS_LINES_MAX, then one saying how
 * many more), appended to *lines. 0 or -ENOMEM. */
int client_egress_lines(const RunRecord *rec, char ***lines);
