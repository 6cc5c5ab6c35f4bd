/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "profile-load.h"

#define PROFILE_MAX_SIZE (1024U * 1024U)

static int strv_push(char ***l, size_t *n, char *s) {
        char **t;

        if (!s)
                return -ENOMEM;
        t = realloc(*l, (*n + 2) * sizeof(char *));
        if (!t) {
                free(s);
                return -ENOMEM;
        }
        t[(*n)++] = s;
        t[*n] = NULL;
        *l = t;
        return 0;
}

int profile_search_path(char ***ret) {
        const char *e = getenv("SBX_PROFILES_PATH");
        _cleanup_free_ char *copy = strdup(!isempty(e) ? e : PROFILE_DIRS_DEFAULT);
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                if (d[0] != '/')
                        continue; /* relative entries would depend on the working directory */
                r = strv_push(&l, &n, strdup(d));
                if (r < 0)
                        return r;
        }
        if (n == 0) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* A masking entry: a symlink to /dev/null, or an empty regular file. */
static bool is_mask(int dir_fd, const char *fn) {
        char target[16];
        ssize_t k;
        struct stat st;

        k = readlinkat(dir_fd, fn, target, sizeof(target) - 1);
        if (k >= 0) {
                target[k] = 0;
                if (streq(target, "/dev/null"))
                        return true;
        }
        return fstatat(dir_fd, fn, &st, 0) >= 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

static bool is_dir(int dir_fd, const char *fn) {
        struct stat st;

        return fstatat(dir_fd, fn, &st, 0) >= 0 && S_ISDIR(st.st_mode);
}

static int path_join(const char *dir, const char *fn, char **ret) {
        return asprintf(ret, "%s/%s", dir, fn) < 0 ? -ENOMEM : 0;
}

int profile_find(char *const *dirs, const char *name, char **ret_path) {
        _cleanup_free_ char *fn = NULL;

        if (!profile_name_is_valid(name))
                return -EINVAL;
        if (asprintf(&fn, "%s" PROFILE_SUFFIX, name) < 0)
                return -ENOMEM;
        for (char *const *d = dirs; d && *d; d++) {
                _cleanup_close_ int dfd = open(*d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (dfd < 0)
                        continue;
                if (faccessat(dfd, fn, F_OK, AT_SYMLINK_NOFOLLOW) < 0 || is_dir(dfd, fn))
                        continue;
                if (ret_path) {
                        int r = path_join(*d, fn, ret_path);
                        if (r < 0)
                                return r;
                }
                return is_mask(dfd, fn) ? -ERFKILL : 0;
        }
        return -ENOENT;
}

/* Like read_file_at(), but following symlinks: profile directories belong to root and the package, and
 * a symlinked profile is as legitimate as a symlinked unit file. */
static int read_profile_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        if (st.st_size > PROFILE_MAX_SIZE)
                return -EFBIG;
        buf = malloc(PROFILE_MAX_SIZE + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + size, PROFILE_MAX_SIZE + 1 - size);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > PROFILE_MAX_SIZE)
                        return -EFBIG;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int profile_load_file(const char *path, Profile **ret, char **ret_error) {
        _cleanup_free_ char *text = NULL, *name = NULL;
        const char *base;
        size_t size = 0, l;
        int r;

        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        l = strlen(base);
        if (l <= strlen(PROFILE_SUFFIX) || !streq(base + l - strlen(PROFILE_SUFFIX), PROFILE_SUFFIX)) {
                if (ret_error && asprintf(ret_error, "%s: a profile file name must end in " PROFILE_SUFFIX, path) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        name = strndup(base, l - strlen(PROFILE_SUFFIX));
        if (!name)
                return -ENOMEM;
        if (!profile_name_is_valid(name)) {
                if (ret_error && asprintf(ret_error,
                                          "%s: '%s' is not a valid profile name (expected [a-z][a-z0-9_]{0,31})",
                                          path, name) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }

        r = read_profile_file(path, &text, &size);
        if (r < 0) {
                if (ret_error && asprintf(ret_error, "%s: cannot read: %s", path,
                                          r == -EFBIG ? "larger than 1 MiB" : strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        return profile_parse(text, size, name, path, ret, ret_error);
}

int profile_load(char *const *dirs, const char *name, Profile **ret, char **ret_error) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (!profile_name_is_valid(name)) {
                if (ret_error && asprintf(ret_error, "profile: '%s' is not a valid profile name", strna(name)) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        r = profile_find(dirs, name, &path);
        if (r == -ENOENT) {
                if (ret_error && asprintf(ret_error, "profile: no profile named '%s'", name) < 0)
                        *ret_error = NULL;
                return r;
        }
        if (r == -ERFKILL) {
                if (ret_error && asprintf(ret_error, "profile: '%s' is masked by %s", name, path) < 0)
                        *ret_error = NULL;
                return r;
        }
        if (r < 0)
                return r;
        r = profile_load_file(path, ret, ret_error);
        /* found but unreadable (e.g. a dangling symlink): a broken profile, not a missing one */
        return r == -ENOENT ? -EIO : r;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int profile_enumerate(char *const *dirs, char ***ret_names, char ***ret_paths, char ***ret_ignored) {
        _cleanup_strv_free_ char **seen = NULL, **names = NULL, **paths = NULL, **ignored = NULL;
        size_t n_seen = 0, n_names = 0, n_paths = 0, n_ignored = 0;
        int r;

        for (char *const *d = dirs; d && *d; d++) {
                _cleanup_close_ int dfd = open(*d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                _cleanup_strv_free_ char **files = NULL;
                size_t n_files = 0;
                DIR *dir;
                struct dirent *de;

                if (dfd < 0)
                        continue;
                dir = fdopendir(dfd);
                if (!dir)
                        return -errno;
                dfd = -EBADF; /* owned by dir now */
                while ((de = readdir(dir))) {
                        size_t l = strlen(de->d_name);

                        if (de->d_name[0] == '.' || l <= strlen(PROFILE_SUFFIX) ||
                            !streq(de->d_name + l - strlen(PROFILE_SUFFIX), PROFILE_SUFFIX) ||
                            is_dir(dirfd(dir), de->d_name))
                                continue;
                        r = strv_push(&files, &n_files, strdup(de->d_name));
                        if (r < 0) {
                                closedir(dir);
                                return r;
                        }
                }
                if (n_files > 0)
                        qsort(files, n_files, sizeof(char *), cmp_str);
                for (size_t i = 0; i < n_files; i++) {
                        _cleanup_free_ char *name = strndup(files[i], strlen(files[i]) - strlen(PROFILE_SUFFIX));
                        _cleanup_free_ char *path = NULL;
                        bool dup = false;

                        if (!name) {
                                closedir(dir);
                                return -ENOMEM;
                        }
                        r = path_join(*d, files[i], &path);
                        if (r < 0) {
                                closedir(dir);
                                return r;
                        }
                        if (!profile_name_is_valid(name)) {
                                if (ret_ignored && (r = strv_push(&ignored, &n_ignored, TAKE_PTR(path))) < 0) {
                                        closedir(dir);
                                        return r;
                                }
                                continue;
                        }
                        for (size_t k = 0; k < n_seen; k++)
                                if (streq(seen[k], name))
                                        dup = true;
                        if (dup)
                                continue; /* masked by a higher-priority directory */
                        r = strv_push(&seen, &n_seen, strdup(name));
                        if (r < 0) {
                                closedir(dir);
                                return r;
                        }
                        if (is_mask(dirfd(dir), files[i]))
                                continue;
                        r = strv_push(&names, &n_names, TAKE_PTR(name));
                        if (r >= 0)
                                r = strv_push(&paths, &n_paths, TAKE_PTR(path));
                        if (r < 0) {
                                closedir(dir);
                                return r;
                        }
                }
                closedir(dir);
        }

        /* sort names and paths together */
        for (size_t i = 1; i < n_names; i++)
                for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
                        char *t = names[k]; names[k] = names[k - 1]; names[k - 1] = t;
                        t = paths[k]; paths[k] = paths[k - 1]; paths[k - 1] = t;
                }
        if (!names && !(names = calloc(1, sizeof(char *))))
                return -ENOMEM;
        if (!paths && !(paths = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret_names = TAKE_PTR(names);
        *ret_paths = TAKE_PTR(paths);
        if (ret_ignored) {
                if (!ignored && !(ignored = calloc(1, sizeof(char *))))
                        return -ENOMEM;
                *ret_ignored = TAKE_PTR(ignored);
        }
        return 0;
}
