/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "record.h"

typedef struct StorePending StorePending;

/* Run records on disk: one JSON file per run in SBX_STATEDIR/runs, each written atomically. */
typedef struct Store {
        int dir_fd;
        int figures_fd;            /* SBX_FIGURES_DIR: what units' figures readers left (sbx-exec --figures) */
        uint8_t tenant_key[32];
        StorePending *pending;     /* finished records that could not be written (disk full, read-only) */
} Store;

int store_open(Store *s, const char *statedir);
void store_close(Store *s);

/* The figures unit left (SBX_FIGURES_DIR/<unit>), removed as they are read. -ENOENT: none. */
int store_take_figures(Store *s, const char *unit, char **ret);
/* Removes what a unit's figures reader left: its file, and a temporary ".#<unit>.RANDOM" of a reader killed
 * before its rename (the unit's stop timeout, on a loaded host). */
void store_drop_figures(Store *s, const char *unit);
/* Removes every figures file, temporary ones included, whose unit keep() does not claim (at start: those of
 * units gone while sbxd was not running). */
void store_sweep_figures(Store *s, bool (*keep)(const char *unit, void *userdata), void *userdata);

/* An exited or finished record that cannot be written (the file system is full or read-only) is kept in
 * memory, the newest of a run's: read back from there by store_read() and written by
 * store_write_pending(), which sbxd calls every few seconds. The error is returned all the same. */
int store_write(Store *s, const RunRecord *r);
/* Writes the kept records; returns how many are still waiting. */
unsigned store_write_pending(Store *s);
int store_read(Store *s, const char *run_id, RunRecord **ret);
/* Removes a run's record (the reaper's retention). */
int store_remove(Store *s, const char *run_id);
/* Every valid record on disk, oldest first (by started_at). */
int store_load_all(Store *s, RunRecord ***ret, size_t *ret_n);
void run_records_free(RunRecord **recs, size_t n);

/* JSON array text of the records visible to 'tenant' (NULL: all), oldest first. */
int store_list_json(Store *s, const char *tenant, char **ret);

/* The opaque tenant id of a uid: HMAC-SHA256(key, "uid:<uid>"), first 16 bytes in hex. */
void store_tenant_id(const Store *s, uid_t uid, char ret[static TENANT_ID_LEN + 1]);

/* The name of a uid's cache directories: HMAC-SHA256(key, "cache:uid:<uid>"), first 16 bytes in hex.
 * Its paths are visible to every local user (the units' StateDirectory=, /var/lib/sbx-cache), where
 * they stand beside the run's workspace path: they must not name the tenant id, which would link it
 * to the uid. */
void store_cache_owner_id(const Store *s, uid_t uid, char ret[static TENANT_ID_LEN + 1]);
