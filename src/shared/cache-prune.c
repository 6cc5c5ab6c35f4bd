/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdlib.h>
#include <string.h>

#include "cache-prune.h"
#include "macro.h"
#include "profile-name.h"

const char *cache_prune_reason_to_string(CachePruneReason r) {
        switch (r) {
        case CACHE_PRUNE_UNUSED:
                return "unused";
        case CACHE_PRUNE_SIZE:
                return "size";
        case CACHE_KEEP:
                break;
        }
        return "kept";
}

size_t cache_prune_select(CacheUse *c, size_t n, usec_t now, usec_t retention, uint64_t max_bytes) {
        uint64_t total = 0;
        size_t chosen = 0;

        for (size_t i = 0; i < n; i++) {
                c[i].verdict = CACHE_KEEP;
                if (!c[i].busy && retention > 0 && c[i].last_use < now && now - c[i].last_use > retention) {
                        c[i].verdict = CACHE_PRUNE_UNUSED;
                        chosen++;
                } else
                        total += c[i].bytes;
        }
        /* Then the least recently used first (ties: the larger first), until the rest fits. n is the
         * number of a host's caches: a scan per choice is fine. */
        while (max_bytes > 0 && total > max_bytes) {
                CacheUse *lru = NULL;

                for (size_t i = 0; i < n; i++)
                        if (c[i].verdict == CACHE_KEEP && !c[i].busy &&
                            (!lru || c[i].last_use < lru->last_use ||
                             (c[i].last_use == lru->last_use && c[i].bytes > lru->bytes)))
                                lru = &c[i];
                if (!lru)
                        break; /* what is left is in use */
                lru->verdict = CACHE_PRUNE_SIZE;
                total -= lru->bytes;
                chosen++;
        }
        return chosen;
}

bool cache_dir_is_valid(const char *s) {
        const char *p, *q;
        size_t k;

        if (!s)
                return false;
        p = strchr(s, '/');
        if (!p || p - s != 32)
                return false;
        for (k = 0; k < 32; k++)
                if (!strchr("0123456789abcdef", s[k]))
                        return false;
        q = strchr(p + 1, '/');
        if (!q || strchr(q + 1, '/'))
                return false;
        {
                _cleanup_free_ char *profile = strndup(p + 1, (size_t) (q - p - 1));

                if (!profile || !profile_name_is_valid(profile))
                        return false;
        }
        q++;
        if (*q == 0 || strlen(q) > 32)
                return false;
        for (; *q; q++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_", *q))
                        return false;
        return true;
}
