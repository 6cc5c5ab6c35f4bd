/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "observe.h"
#include "util.h"

static const char *const limit_event_table[_LIMIT_EVENT_MAX] = {
        [LIMIT_EVENT_WALL_TIME] = "wall-time",
        [LIMIT_EVENT_OOM_KILL] = "oom-kill",
        [LIMIT_EVENT_MEMORY_MAX] = "memory-max",
        [LIMIT_EVENT_FORK_REFUSED] = "fork-refused",
        [LIMIT_EVENT_CPU_THROTTLED] = "cpu-throttled",
        [LIMIT_EVENT_OUTPUT_CUT] = "output-cut",
};

DEFINE_NAME_TABLE_LOOKUP(limit_event, LimitEvent, limit_event_table, _LIMIT_EVENT_MAX);

size_t run_record_observe(const RunRecord *r, Observation ret[static _LIMIT_EVENT_MAX]) {
        const RunLimits *l = &r->limits;
        const RunLimitEvents *e = &r->limit_events;
        usec_t duration = r->ended_at > r->started_at ? r->ended_at - r->started_at : 0;
        bool succeeded = r->stop_reason == STOP_SUCCESS;
        size_t n = 0;

        if (r->stop_reason == STOP_TIMEOUT)
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_WALL_TIME, .limit = "wall-time", .value = l->wall_time,
                        .used = duration ?: UINT64_MAX, .count = 1, .raise_to = l->wall_time_raise,
                        .stopped = true, .shown = true,
                };
        if (r->stop_reason == STOP_OOM_KILL || (e->known && e->oom_kill > 0))
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_OOM_KILL, .limit = "memory", .value = l->memory,
                        .used = r->memory_peak, .count = e->known && e->oom_kill > 0 ? e->oom_kill : 1,
                        .raise_to = l->memory_raise, .stopped = r->stop_reason == STOP_OOM_KILL, .shown = true,
                };
        else if (e->known && e->memory_max > 0)
                /* reclaim at the ceiling slows a run down but fails nothing by itself: worth a line when
                 * the run did not succeed */
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_MEMORY_MAX, .limit = "memory", .value = l->memory,
                        .used = r->memory_peak, .count = e->memory_max, .raise_to = l->memory_raise,
                        .shown = !succeeded,
                };
        if (e->known && e->fork_refused > 0)
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_FORK_REFUSED, .limit = "tasks", .value = l->tasks,
                        .used = r->tasks_peak, .count = e->fork_refused, .raise_to = l->tasks_raise, .shown = true,
                };
        if (e->known && e->cpu_throttled > 0)
                /* shown when the quota held the run back for a second or more, and for at least a tenth of
                 * its wall time (a short command on a busy machine is throttled a little, to no harm) */
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_CPU_THROTTLED, .limit = "cpu", .value = l->cpu_percent,
                        .used = e->cpu_throttled_usec, .count = e->cpu_throttled, .raise_to = l->cpu_percent_raise,
                        .shown = duration > 0 && e->cpu_throttled_usec >= USEC_PER_SEC &&
                                 e->cpu_throttled_usec >= duration / 10,
                };
        if (r->output_truncated || r->stop_reason == STOP_OUTPUT_LIMIT)
                ret[n++] = (Observation) {
                        .event = LIMIT_EVENT_OUTPUT_CUT, .limit = "output", .value = l->output,
                        .used = r->output_bytes, .count = 1, .stopped = r->stop_reason == STOP_OUTPUT_LIMIT,
                        .shown = true,
                };
        return n;
}

/* "64M" when exact, else as format_bytes() ("1.5G") */
static const char *obs_bytes(char buf[static 32], uint64_t v) {
        static const char suffixes[] = "KMGT";
        uint64_t f = 1024;

        if (v == UINT64_MAX)
                return "?";
        if (v < 1024 || v % 1024 != 0)
                return format_bytes(buf, 32, v);
        for (size_t i = 0; i < sizeof(suffixes) - 1; i++, f *= 1024)
                if (v / f < 1024 || i == sizeof(suffixes) - 2) {
                        if (v % f == 0)
                                snprintf(buf, 32, "%" PRIu64 "%c", v / f, suffixes[i]);
                        else
                                (void) format_bytes(buf, 32, v);
                        return buf;
                }
        return format_bytes(buf, 32, v);
}

/* "90s", "1.5s", "250ms", "5min", "2h" */
static const char *obs_duration(char buf[static 32], uint64_t u) {
        if (u == UINT64_MAX)
                return "?";
        if (u >= 3600 * USEC_PER_SEC && u % (3600 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "h", u / (3600 * USEC_PER_SEC));
        else if (u >= 60 * USEC_PER_SEC && u % (60 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "min", u / (60 * USEC_PER_SEC));
        else if (u >= USEC_PER_SEC && u % USEC_PER_SEC == 0)
                snprintf(buf, 32, "%" PRIu64 "s", u / USEC_PER_SEC);
        else if (u >= USEC_PER_SEC)
                snprintf(buf, 32, "%.1fs", (double) u / USEC_PER_SEC);
        else
                snprintf(buf, 32, "%" PRIu64 "ms", u / 1000);
        return buf;
}

/* " — use less memory or pass --memory up to 2G", or "... (profile 'coding' allows no more)" */
static int advice(const char *what, const char *option, const char *raise, const char *profile, char **ret) {
        int k;

        if (raise)
                k = asprintf(ret, " \u2014 %s or pass %s up to %s", what, option, raise);
        else
                k = asprintf(ret, " \u2014 %s (profile '%s' allows no more)", what, profile ?: "?");
        return k < 0 ? -ENOMEM : 0;
}

int observation_format(const Observation *o, const char *profile, char **ret) {
        _cleanup_free_ char *tail = NULL;
        char a[32], b[32], c[32];
        const char *v, *u;
        int k;

        switch (o->event) {
        case LIMIT_EVENT_WALL_TIME:
                k = advice("make it faster", "--timeout", o->raise_to ? obs_duration(c, o->raise_to) : NULL,
                           profile, &tail);
                if (k < 0)
                        return k;
                k = asprintf(ret, "stopped: wall-time limit %s reached%s",
                             o->value ? obs_duration(a, o->value) : "?", tail);
                break;
        case LIMIT_EVENT_OOM_KILL:
        case LIMIT_EVENT_MEMORY_MAX:
                k = advice("use less memory", "--memory", o->raise_to ? obs_bytes(c, o->raise_to) : NULL, profile,
                           &tail);
                if (k < 0)
                        return k;
                v = o->value ? obs_bytes(a, o->value) : "?";
                u = obs_bytes(b, o->used);
                if (o->event == LIMIT_EVENT_MEMORY_MAX)
                        k = asprintf(ret, "memory limit %s reached %" PRIu64 " time%s (peak %s), memory reclaimed%s", v,
                                     o->count, o->count == 1 ? "" : "s", u, tail);
                else if (o->stopped)
                        k = asprintf(ret, "stopped: memory limit %s reached (peak %s, oom-kill)%s", v, u, tail);
                else
                        k = asprintf(ret, "memory limit %s reached: %" PRIu64 " process%s killed (peak %s, oom-kill)%s", v,
                                     o->count, o->count == 1 ? "" : "es", u, tail);
                break;
        case LIMIT_EVENT_FORK_REFUSED:
                if (o->raise_to) {
                        snprintf(c, sizeof c, "%" PRIu64, o->raise_to);
                        k = asprintf(&tail, " \u2014 fewer processes or --tasks up to %s", c);
                } else
                        k = asprintf(&tail, " \u2014 fewer processes (profile '%s' allows no more)", profile ?: "?");
                if (k < 0)
                        return -ENOMEM;
                if (o->value)
                        snprintf(a, sizeof a, "%" PRIu64, o->value);
                k = asprintf(ret, "fork refused %" PRIu64 " time%s: task limit %s reached%s", o->count,
                             o->count == 1 ? "" : "s", o->value ? a : "?", tail);
                break;
        case LIMIT_EVENT_CPU_THROTTLED:
                if (o->raise_to) {
                        snprintf(c, sizeof c, "%" PRIu64 "%%", o->raise_to);
                        k = asprintf(&tail, " \u2014 pass --cpu up to %s", c);
                } else
                        k = asprintf(&tail, " (profile '%s' allows no more)", profile ?: "?");
                if (k < 0)
                        return -ENOMEM;
                if (o->value)
                        snprintf(a, sizeof a, "%" PRIu64 "%%", o->value);
                k = asprintf(ret, "cpu limit %s reached: throttled %" PRIu64 " time%s, %s in all%s", o->value ? a : "?",
                             o->count, o->count == 1 ? "" : "s", obs_duration(b, o->used), tail);
                break;
        case LIMIT_EVENT_OUTPUT_CUT:
                if (o->stopped)
                        k = asprintf(ret, "stopped: output limit %s reached \u2014 write less to stdout and stderr",
                                     o->value ? obs_bytes(a, o->value) : "?");
                else if (o->used != UINT64_MAX)
                        k = asprintf(ret, "output cut at the limit %s (%s written) \u2014 write less to stdout and stderr",
                                     o->value ? obs_bytes(a, o->value) : "?", obs_bytes(b, o->used));
                else
                        k = asprintf(ret, "output cut at the limit %s \u2014 write less to stdout and stderr",
                                     o->value ? obs_bytes(a, o->value) : "?");
                break;
        case _LIMIT_EVENT_MAX:
        case _LIMIT_EVENT_INVALID:
        default:
                return -EINVAL;
        }
        return k < 0 ? -ENOMEM : 0;
}
