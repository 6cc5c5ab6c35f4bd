/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Rate limiting of journal events by key (a destination such as "10.0.0.5:22/tcp", a DNS name): at most
 * one event per key per interval, the others counted. A fixed-size table, so its size is bounded
 * whatever the keys: a new key that finds every slot taken by a key still inside its interval is not
 * logged either, so even a run that tries endless destinations gets at most EVENT_LIMIT_SLOTS events
 * per interval from one table. sbxd keeps one per run for its "egress denied" and "dns refused" events
 * (EGRESS_EVENT_INTERVAL_USEC). Pure: the caller passes the time. */

#include <stdint.h>

#include "util.h"

#define EVENT_LIMIT_SLOTS 32
#define EVENT_LIMIT_KEY_MAX 256          /* bytes with the NUL: a DNS name (253) fits */
#define EGRESS_EVENT_INTERVAL_USEC (10 * USEC_PER_SEC)

typedef struct EventLimitSlot {
        char key[EVENT_LIMIT_KEY_MAX];   /* "": a free slot */
        usec_t last;                     /* when its last event was let through */
        uint64_t suppressed;             /* events of the key not let through since */
} EventLimitSlot;

typedef struct EventLimit {
        usec_t interval;
        uint64_t suppressed_full;        /* events of new keys not let through: every slot busy */
        EventLimitSlot slots[EVENT_LIMIT_SLOTS];
} EventLimit;

#define EVENT_LIMIT_INIT(i) ((EventLimit) { .interval = (i) })

/* Whether the event of key at now (CLOCK_MONOTONIC) may be logged. 1: log it; *ret_suppressed (may be
 * NULL) is then the number of events of the key held back since its previous one. 0: hold it back (it
 * is counted). -EINVAL: an empty key, or one of EVENT_LIMIT_KEY_MAX bytes or more. A slot whose key has
 * been quiet for an interval is free for another key. */
int event_limit_check(EventLimit *l, const char *key, usec_t now, uint64_t *ret_suppressed);
