/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The reaper's choice among the profiles' caches (docs/reaper.md): those no run has started with for
 * longer than the retention go, then, while the rest add up to more than the cap, the least recently
 * used. Caches in use are never chosen. Pure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Where the caches live: systemd's state directories of the runs' dynamic users, one per caller
 * ("owner", a keyed hash of its uid), profile and cache name. */
#define CACHE_ROOT "/var/lib/private/sbx-cache"
#define CACHE_LINK_ROOT "/var/lib/sbx-cache"
/* Each cache's file system: OWNER/PROFILE/CACHE.img, ext4 of the cache's max_size, mounted on its
 * directory below CACHE_ROOT for the run that uses it (docs/caches.md) */
#define CACHE_IMAGE_ROOT "/var/lib/private/sbx-cache-images"

typedef enum CachePruneReason {
        CACHE_KEEP,
        CACHE_PRUNE_UNUSED, /* unused for longer than the retention */
        CACHE_PRUNE_SIZE,   /* the least recently used while all together were above the cap */
} CachePruneReason;

typedef struct CacheUse {
        const char *dir;    /* "OWNER/PROFILE/CACHE", below CACHE_ROOT */
        usec_t last_use;    /* when a run last started with it */
        uint64_t bytes;     /* what it takes on disk */
        bool busy;          /* in use by a run, or being removed */
        CachePruneReason verdict; /* out */
} CacheUse;

/* Sets every entry's verdict; returns how many are to be removed. retention 0: none goes for its age;
 * max_bytes 0: no cap. */
size_t cache_prune_select(CacheUse *c, size_t n, usec_t now, usec_t retention, uint64_t max_bytes);

const char *cache_prune_reason_to_string(CachePruneReason r);

/* Whether s is "OWNER/PROFILE/CACHE" as sbx names them: 32 lower-case hex digits, a profile name, a
 * cache name (nothing that could climb out of CACHE_ROOT). */
bool cache_dir_is_valid(const char *s);
