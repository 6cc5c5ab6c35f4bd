/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lines at the end of a run for the agent: limits met (observe.c's sentences), egress denied and names
 * refused (the record's network section). sbxctl prints them on stderr; sbx-mcp returns them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "client-lines.h"
#include "observe.h"
#include "util.h"

/* How the lines name the reason of a denied call (the record keeps egress_reason_to_string()'s). */
static const char *const egress_phrase[_EGRESS_REASON_MAX] = {
        [EGRESS_REASON_PORT] = "port not allowed",
        [EGRESS_REASON_NO_POLICY] = "no policy",
        [EGRESS_REASON_NOT_ALLOWED] = "not in profile", /* followed by its name */
        [EGRESS_REASON_EXPIRED] = "allowance expired (TTL)",
        [EGRESS_REASON_LOOPBACK] = "loopback",
        [EGRESS_REASON_LINK_LOCAL] = "link-local range (metadata services)",
        [EGRESS_REASON_PRIVATE] = "private range",
        [EGRESS_REASON_SHARED] = "shared address space",
        [EGRESS_REASON_MULTICAST] = "multicast",
        [EGRESS_REASON_BROADCAST] = "broadcast",
        [EGRESS_REASON_UNSPECIFIED] = "unspecified address",
        [EGRESS_REASON_RESERVED] = "reserved range",
        [EGRESS_REASON_EMBEDDED] = "IPv6 form of a denied IPv4 address",
        [EGRESS_REASON_SOCKET] = "raw or packet socket",
};

const char *client_format_destination(const NetDestinationStat *d, const char *profile, char *buf, size_t l) {
        char dest[NET_DESTINATION_TEXT_MAX], why[128] = "";

        if (!d->allowed) {
                const char *p = d->reason >= 0 && d->reason < _EGRESS_REASON_MAX ? egress_phrase[d->reason] : NULL;

                if (d->reason == EGRESS_REASON_NOT_ALLOWED)
                        snprintf(why, sizeof(why), "%s %s", p, strna(profile));
                else
                        snprintf(why, sizeof(why), "%s", p ?: "denied");
        }
        snprintf(buf, l, "%s%s%s%s%s%s", net_destination_format(d, dest) ?: "?", d->name || why[0] ? " (" : "",
                 d->name ?: "", d->name && why[0] ? ", " : "", why, d->name || why[0] ? ")" : "");
        return buf;
}

/* line (NULL: out of memory) appended to *lines, or freed */
static int take_line(char ***lines, char *line) {
        if (!line)
                return -ENOMEM;
        if (strv_push_take(lines, line) < 0) {
                free(line);
                return -ENOMEM;
        }
        return 0;
}

int client_observation_lines(const RunRecord *rec, char ***lines) {
        Observation obs[_LIMIT_EVENT_MAX];
        size_t n;

        if (rec->stop_reason == STOP_REFUSED || rec->stop_reason == STOP_START_FAILED)
                return 0;
        n = run_record_observe(rec, obs);
        for (size_t i = 0; i < n; i++) {
                char *line = NULL;
                int r;

                if (!obs[i].shown)
                        continue;
                r = observation_format(&obs[i], rec->profile, &line);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && take_line(lines, line) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int push_line(char ***lines, size_t *shown, size_t *more, char *line) {
        if ((*shown)++ >= CLIENT_EGRESS_LINES_MAX) {
                (*more)++;
                free(line);
                return line ? 0 : -ENOMEM;
        }
        return take_line(lines, line);
}

int client_egress_lines(const RunRecord *rec, char ***lines) {
        const RunNetwork *n = rec->network;
        size_t shown = 0, more = 0;
        char buf[512], *line;
        int r = 0;

        if (!n)
                return 0;
        for (size_t i = 0; r >= 0 && i < n->n_destinations; i++) {
                const NetDestinationStat *d = &n->destinations[i];

                if (d->allowed)
                        continue;
                if (asprintf(&line, "egress denied: %s, %" PRIu64 " %s",
                             client_format_destination(d, rec->profile, buf, sizeof(buf)), d->count,
                             d->count == 1 ? "attempt" : "attempts") < 0)
                        line = NULL;
                r = push_line(lines, &shown, &more, line);
        }
        for (size_t i = 0; r >= 0 && i < n->n_names; i++) {
                if (n->names[i].verdict != NAME_REFUSED)
                        continue;
                if (asprintf(&line, "dns refused: %s (not in profile %s)", n->names[i].name, strna(rec->profile)) < 0)
                        line = NULL;
                r = push_line(lines, &shown, &more, line);
        }
        if (r >= 0 && more > 0) {
                if (asprintf(&line, "... and %zu more (sbxctl show %s)", more, rec->run_id) < 0)
                        return -ENOMEM;
                r = take_line(lines, line);
        }
        return r;
}
