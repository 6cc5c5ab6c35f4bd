/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"

int loop_write(int fd, const void *data, size_t size) {
        const char *p = data;

        while (size > 0) {
                ssize_t k = write(fd, p, size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                (void) poll(&(struct pollfd) { .fd = fd, .events = POLLOUT }, 1, -1);
                                continue;
                        }
                        return negative_errno();
                }
                p += k;
                size -= (size_t) k;
        }
        return 0;
}

int write_file_atomic_at(int dir_fd, const char *name, const void *data, size_t size, mode_t mode) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        unsigned long long rnd;
        int r;

        if (isempty(name) || strchr(name, '/'))
                return -EINVAL;

        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                return negative_errno();
        if (asprintf(&tmp, ".#%s.%016llx", name, rnd) < 0)
                return -ENOMEM;

        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return negative_errno();

        r = loop_write(fd, data, size);
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = negative_errno();
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }

        /* Make the rename itself durable (dir_fd may be AT_FDCWD or an O_PATH fd: use a real one). */
        {
                _cleanup_close_ int dfd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 || fsync(dfd) < 0)
                        return negative_errno();
        }
        return 0;
}

int read_file_at(int dir_fd, const char *name, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_fd_full(fd, max_size, ret, ret_size);
}

int read_fd_full(int fd, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, allocated = 0;

        for (;;) {
                ssize_t k;

                /* Keep room for one byte beyond max_size: reading it proves the file is too big. */
                if (n == allocated) {
                        char *nb;

                        if (allocated > max_size)
                                return -EFBIG;
                        allocated = MIN(MAX(allocated * 2, (size_t) 4096), max_size + 1);
                        nb = realloc(buf, allocated + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                k = read(fd, buf + n, allocated - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > max_size)
                        return -EFBIG;
        }

        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[n] = 0;
        if (ret_size)
                *ret_size = n;
        *ret = TAKE_PTR(buf);
        return 0;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = NULL;
        struct stat st;

        if (isempty(path) || path[0] != '/')
                return -EINVAL;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; ; s++) {
                if (*s == '/' || *s == 0) {
                        char c = *s;

                        *s = 0;
                        if (mkdir(p, mode) < 0) {
                                if (errno != EEXIST)
                                        return negative_errno();
                                if (stat(p, &st) < 0)
                                        return negative_errno();
                                if (!S_ISDIR(st.st_mode))
                                        return -ENOTDIR;
                        }
                        *s = c;
                        if (c == 0)
                                break;
                }
        }
        return 0;
}

int rm_rf_at(int dir_fd, const char *name, unsigned max_depth) {
        struct stat st;
        int fd, r = 0;
        DIR *d;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (max_depth == 0)
                return -ELOOP;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                (void) close(fd);
                return r;
        }
        for (struct dirent *de; (de = readdir(d));) {
                int k;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                k = rm_rf_at(dirfd(d), de->d_name, max_depth - 1);
                if (k < 0 && r == 0)
                        r = k;
        }
        closedir(d);
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                r = -errno;
        return r;
}
