/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A run's space (policy.h): one tmpfs for everything the run can write outside its workspace, made and
 * removed by its space unit (sbx-space@RUN.service) as root in the host's mount namespace. */

/* Mounts a tmpfs of size bytes at path (SBX_SPACE_DIR/RUN, made here, mode 0700: no one else on the host
 * enters it) and makes its directories (policy_space_dirs). A leftover at path is not reused: -EEXIST. */
int space_create(const char *path, uint64_t size);
/* Unmounts and removes it; what is already gone is not an error. */
int space_remove(const char *path);

/* Inside the run's unit: HOME, /tmp, /var/tmp and /dev/shm must be directories of one tmpfs of size
 * bytes. Returns 0, or -ENOTUNIQ / -EXDEV / -ERANGE ... with a message in *ret_why. */
int space_check(uint64_t size, char **ret_why);
/* What the run's space holds now: bytes used, and whether it is full (no block or no inode left). */
int space_usage(uint64_t *ret_used, bool *ret_full);
