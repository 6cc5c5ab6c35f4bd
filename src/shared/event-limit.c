/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "event-limit.h"

static bool slot_expired(const EventLimit *l, const EventLimitSlot *s, usec_t now) {
        return now >= s->last && now - s->last >= l->interval;
}

int event_limit_check(EventLimit *l, const char *key, usec_t now, uint64_t *ret_suppressed) {
        EventLimitSlot *s = NULL;
        size_t len = key ? strlen(key) : 0;

        if (len == 0 || len >= EVENT_LIMIT_KEY_MAX)
                return -EINVAL;
        for (size_t i = 0; i < EVENT_LIMIT_SLOTS; i++)
                if (streq(l->slots[i].key, key)) {
                        s = &l->slots[i];
                        break;
                }
        if (s) {
                if (!slot_expired(l, s, now)) {
                        s->suppressed++;
                        return 0;
                }
                if (ret_suppressed)
                        *ret_suppressed = s->suppressed;
                s->last = now;
                s->suppressed = 0;
                return 1;
        }

        /* a new key: a free slot, else the one quiet for the longest time, if it is quiet long enough */
        for (size_t i = 0; i < EVENT_LIMIT_SLOTS; i++) {
                EventLimitSlot *c = &l->slots[i];

                if (c->key[0] == 0) {
                        s = c;
                        break;
                }
                if (slot_expired(l, c, now) && (!s || c->last < s->last))
                        s = c;
        }
        if (!s) {
                l->suppressed_full++;
                return 0;
        }
        memcpy(s->key, key, len + 1);
        s->last = now;
        s->suppressed = 0;
        if (ret_suppressed)
                *ret_suppressed = 0;
        return 1;
}
