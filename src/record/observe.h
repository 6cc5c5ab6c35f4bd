/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a run met of its ceilings, in one vocabulary for the record, the D-Bus API, the journal and
 * sbxctl (docs/limits.md): each observation names the event, the limit, its value, what was used, how
 * often, and what a caller could change. Pure: computed from a finished record. */

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

typedef enum LimitEvent {
        LIMIT_EVENT_WALL_TIME,     /* "wall-time": stopped at the wall-time ceiling (stop reason timeout) */
        LIMIT_EVENT_OOM_KILL,      /* "oom-kill": the memory ceiling was reached, the OOM killer ended
                                    * processes (stop reason oom-kill, or memory.events oom_kill) */
        LIMIT_EVENT_MEMORY_MAX,    /* "memory-max": the memory ceiling was reached and memory reclaimed */
        LIMIT_EVENT_FORK_REFUSED,  /* "fork-refused": fork()/clone() failed at the task ceiling */
        LIMIT_EVENT_CPU_THROTTLED, /* "cpu-throttled": the CPU quota held the run back */
        LIMIT_EVENT_OUTPUT_CUT,    /* "output-cut": stdout/stderr past the output ceiling were dropped */
        _LIMIT_EVENT_MAX,
        _LIMIT_EVENT_INVALID = -EINVAL,
} LimitEvent;

const char *limit_event_to_string(LimitEvent e);
LimitEvent limit_event_from_string(const char *s);

typedef struct Observation {
        LimitEvent event;
        const char *limit;         /* "memory", "tasks", "cpu", "wall-time", "output" */
        uint64_t value;            /* the ceiling: bytes, tasks, percent (100 = one CPU), usec */
        uint64_t used;             /* peak (memory, tasks), throttled usec (cpu), duration (wall-time), bytes
                                    * written (output); UINT64_MAX: unknown */
        uint64_t count;            /* how often (1 for a stop) */
        uint64_t raise_to;         /* the most a request may set (RunLimits); 0: it cannot be raised */
        bool stopped;              /* the event ended the run */
        bool shown;                /* sbxctl prints its line (docs/limits.md says when) */
} Observation;

/* The observations of a finished record, the one that stopped the run first. Returns how many (at most
 * _LIMIT_EVENT_MAX). A record without limits (an earlier version) gives only what its stop reason and
 * output say, without values. */
size_t run_record_observe(const RunRecord *r, Observation ret[static _LIMIT_EVENT_MAX]);

/* The line sbxctl prints (without the "sbx: " prefix), e.g.
 * "stopped: memory limit 64M reached (peak 64M, oom-kill) — use less memory or pass --memory up to 2G".
 * profile: the run's profile, named when a limit cannot be raised. */
int observation_format(const Observation *o, const char *profile, char **ret);
