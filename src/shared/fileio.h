/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Writes 'data' to 'name' in directory 'dir_fd' so that readers see either the old or the complete
 * new contents, never a partial file: write to a hidden temporary file, fsync, rename, fsync dir. */
int write_file_atomic_at(int dir_fd, const char *name, const void *data, size_t size, mode_t mode);

/* Writes all of data to fd, again after EINTR; a non-blocking fd that is full is waited for. */
int loop_write(int fd, const void *data, size_t size);

/* Reads a whole (small) file, NUL-terminated; -EFBIG above max_size bytes. */
int read_file_at(int dir_fd, const char *name, size_t max_size, char **ret, size_t *ret_size);
/* The same from an open file descriptor, from its position to its end (ret_size may be NULL). */
int read_fd_full(int fd, size_t max_size, char **ret, size_t *ret_size);

/* mkdir -p with a mode for each created component. */
int mkdir_p(const char *path, mode_t mode);
/* Removes name below dir_fd and, for a directory, everything in it, never following a symlink; at most
 * max_depth levels of directories (deeper: -ELOOP, what is left stays). ENOENT is success. */
int rm_rf_at(int dir_fd, const char *name, unsigned max_depth);
