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

/* The space unit (sbx-space@RUN.service), as root in the host's mount namespace: the cache dir
 * ("OWNER/PROFILE/CACHE") gets its own file system, an ext4 of size bytes in CACHE_IMAGE_ROOT/dir.img
 * (made the first time; a write past it fails with ENOSPC in the run), mounted nosuid,nodev on
 * CACHE_ROOT/dir through a loop device that goes with the mount. The state directory systemd then
 * hands to the run's user is that file system's root. */
int cache_image_attach(const char *dir, uint64_t size);
/* Unmounts it; not mounted is not an error. */
int cache_image_detach(const char *dir);
