/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Temporary elevated capture of a run's output (docs/capture.md): what the record says about it, and the
 * checks of a request. Pure (json-c only). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define CAPTURE_DURATION_MAX (24 * 3600 * USEC_PER_SEC) /* the longest a capture may be asked for */
#define CAPTURE_TENANT_LEN 32                            /* TENANT_ID_LEN */

/* The record's "capture": null until someone enabled it. Times are CLOCK_REALTIME µs, 0 for "not yet". */
typedef struct RunCapture {
        usec_t enabled_at;         /* 0: never enabled (the record says null) */
        usec_t until;              /* capture stops then at the latest, and the file is deleted after it */
        char by_tenant[CAPTURE_TENANT_LEN + 1]; /* the tenant id of whom enabled it (or extended it last) */
        uint64_t bytes;            /* bytes written to the capture file */
        usec_t ended_at;           /* when capturing stopped: expiry, the run's end, sbxd's restart */
        usec_t deleted_at;         /* when the reaper deleted the file */
} RunCapture;

/* A requested duration: -EINVAL for 0, -ERANGE above CAPTURE_DURATION_MAX. */
int capture_check_duration(usec_t duration);

static inline bool run_capture_enabled(const RunCapture *c) {
        return c->enabled_at > 0;
}
/* Capturing now: enabled, not ended. */
static inline bool run_capture_active(const RunCapture *c) {
        return c->enabled_at > 0 && c->ended_at == 0;
}
/* Its file is due for deletion at now: enabled, past until, not deleted yet. */
static inline bool run_capture_expired(const RunCapture *c, usec_t now) {
        return c->enabled_at > 0 && c->deleted_at == 0 && now >= c->until;
}

/* The record's "capture" value: NULL (JSON null) when never enabled. */
int run_capture_to_json(const RunCapture *c, json_object **ret);
/* Reads it back (x may be NULL: never enabled). On failure ret_error names the key. */
int run_capture_from_json(json_object *x, RunCapture *ret, char **ret_error);
