/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The reaper's removal of caches (sbxd/caches.h), as root in a one-shot unit of sbxd's making. */

/* Removes the cache dir ("OWNER/PROFILE/CACHE", cache_dir_is_valid()) below CACHE_ROOT: moved aside in one
 * rename first (a run starting now gets a new, empty one), then deleted without following symlinks or
 * entering other file systems; then its link below CACHE_LINK_ROOT and the parents it leaves empty. What
 * is already gone is not an error. */
int cache_remove(const char *dir);

/* Deletes what an interrupted removal left below CACHE_ROOT (".removing-*"). */
int cache_remove_leftovers(void);
