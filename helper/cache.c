/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache-prune.h"
#include "cache.h"
#include "loop.h"
#include "util.h"

#define REMOVE_MAX_DEPTH 256
#define ASIDE_PREFIX ".removing-"

/* Deletes the contents of the directory dfd (taken), relative to fds opened with O_NOFOLLOW: the tree was
 * a run's, which may have planted symlinks anywhere in it. Directories of another file system (dev) are
 * left alone; a non-directory's st_dev is not compared (overlayfs gives files their layer's device), and
 * unlinking one never reaches below a mount. */
static int empty_dir(int dfd, dev_t dev, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        if (depth > REMOVE_MAX_DEPTH) {
                safe_close(dfd);
                return -ELOOP;
        }
        d = fdopendir(dfd);
        if (!d) {
                safe_close(dfd);
                return negative_errno();
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (dot_or_dot_dot(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        struct stat sst;
                        int k;

                        if (sub < 0)
                                continue;
                        if (fstat(sub, &sst) < 0 || sst.st_dev != dev) {
                                safe_close(sub);
                                r = r ?: -EXDEV; /* something mounted below: left alone */
                                continue;
                        }
                        k = empty_dir(sub, dev, depth + 1);
                        if (k < 0) {
                                r = r ?: k;
                                continue;
                        }
                        if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                                r = r ?: negative_errno();
                } else if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
                        r = r ?: negative_errno();
        }
        return r;
}

/* Removes the entry name of dir_fd, a directory's tree or anything else. */
static int remove_entry(int dir_fd, const char *name) {
        struct stat st;
        int fd, r;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT ? negative_errno() : 0;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = empty_dir(fd, st.st_dev, 0);
        if (r < 0)
                return r;
        return unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? negative_errno() : 0;
}

/* root/OWNER/PROFILE/CACHE: the entry CACHE (removed with remove_entry() or by the caller), then PROFILE
 * and OWNER if that left them empty. */
static int remove_below(const char *root, const char *dir, bool entry) {
        _cleanup_close_ int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ char *copy = strdup(dir);
        char *profile, *name;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        if (rfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        profile = strchr(copy, '/');
        *profile++ = 0;
        name = strchr(profile, '/');
        *name++ = 0;
        {
                _cleanup_close_ int ofd = openat(rfd, copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int pfd = ofd < 0 ? -EBADF
                                                  : openat(ofd, profile, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (pfd < 0)
                        return errno == ENOENT ? 0 : negative_errno();
                if (entry)
                        r = remove_entry(pfd, name);
                (void) unlinkat(ofd, profile, AT_REMOVEDIR); /* if empty */
        }
        (void) unlinkat(rfd, copy, AT_REMOVEDIR);
        return r;
}

/* CACHE_IMAGE_ROOT/OWNER/PROFILE/CACHE.img, then its parents if that left them empty */
static int remove_image(const char *dir) {
        _cleanup_free_ char *image = NULL, *copy = strdup(dir);
        char *slash;

        if (!copy || asprintf(&image, CACHE_IMAGE_ROOT "/%s.img", dir) < 0)
                return -ENOMEM;
        if (unlink(image) < 0 && errno != ENOENT)
                return negative_errno();
        for (int i = 0; i < 2 && (slash = strrchr(copy, '/')); i++) {
                _cleanup_free_ char *parent = NULL;

                *slash = 0;
                if (asprintf(&parent, CACHE_IMAGE_ROOT "/%s", copy) < 0)
                        return -ENOMEM;
                (void) rmdir(parent); /* if empty */
        }
        return 0;
}

int cache_remove(const char *dir) {
        _cleanup_close_ int rfd = -EBADF;
        char aside[sizeof(ASIDE_PREFIX) + RUN_ID_LEN], id[RUN_ID_LEN + 1];
        int r;

        if (!cache_dir_is_valid(dir))
                return -EINVAL;
        rfd = open(CACHE_ROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = run_id_new(id);
        if (r < 0)
                return r;
        snprintf(aside, sizeof(aside), ASIDE_PREFIX "%s", id);
        /* OWNER and PROFILE are root's directories (systemd made them); the rename is of CACHE alone */
        if (renameat(rfd, dir, rfd, aside) < 0) {
                if (errno != ENOENT)
                        return negative_errno();
        } else {
                r = remove_entry(rfd, aside);
                if (r < 0)
                        return r;
        }
        r = remove_below(CACHE_ROOT, dir, false);
        if (r < 0)
                return r;
        /* its file system (not mounted: a cache in use is not removed) */
        r = remove_image(dir);
        if (r < 0)
                return r;
        /* systemd's link to it for DynamicUser= units; made again with the cache */
        return remove_below(CACHE_LINK_ROOT, dir, true);
}

int cache_remove_leftovers(void) {
        _cleanup_close_ int rfd = open(CACHE_ROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        if (rfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        d = fdopendir(TAKE_FD(rfd));
        if (!d)
                return negative_errno();
        while ((de = readdir(d)))
                if (strneq(de->d_name, ASIDE_PREFIX, strlen(ASIDE_PREFIX))) {
                        int k = remove_entry(dirfd(d), de->d_name);

                        r = r ?: k;
                }
        return r;
}

/* ---- caches with a size cap: one ext4 image each ---- */

static int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        return 0;
}

/* mkfs.ext4 on the image (a new, empty file of its size): no reserved blocks, root's root directory
 * (systemd hands it to each run's user as the state directory). */
static int make_fs(const char *image) {
        char *argv[] = { (char *) "mkfs.ext4", (char *) "-q", (char *) "-F", (char *) "-m", (char *) "0",
                         (char *) "-L", (char *) "sbx-cache", (char *) "-E", (char *) "root_owner=0:0",
                         (char *) image, NULL };
        int status;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null >= 0) {
                        (void) dup2(null, STDIN_FILENO);
                        (void) dup2(null, STDOUT_FILENO);
                }
                execv("/sbin/mkfs.ext4", argv);
                execv("/usr/sbin/mkfs.ext4", argv);
                fprintf(stderr, "sbx: cannot run mkfs.ext4: %m\n");
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int cache_image_attach(const char *dir, uint64_t size) {
        _cleanup_free_ char *image = NULL, *mnt = NULL;
        _cleanup_close_ int fd = -EBADF, lfd = -EBADF;
        char dev[32];
        struct stat st;
        bool made = false;
        int r;

        if (!cache_dir_is_valid(dir) || size == 0)
                return -EINVAL;
        if (asprintf(&image, CACHE_IMAGE_ROOT "/%s.img", dir) < 0 || asprintf(&mnt, CACHE_ROOT "/%s", dir) < 0)
                return -ENOMEM;
        /* the images: root's alone; the mount point's parents as systemd makes them for a DynamicUser=
         * state directory (/var/lib/private 0700, what is below it 0755: the run's user walks them) */
        r = mkdir_parents(image, 0700);
        if (r < 0)
                return r;
        if (mkdir("/var/lib/private", 0700) < 0 && errno != EEXIST)
                return negative_errno();
        r = mkdir_parents(mnt, 0755);
        if (r < 0)
                return r;
        if (mkdir(mnt, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(image, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        /* new (or a creation that did not finish): made at the cap. An existing one keeps the size it was
         * made with: a changed cap applies to the cache made after the next removal. */
        if (st.st_size == 0 || st.st_size % 1024 != 0) {
                made = true;
                if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t) size) < 0)
                        return negative_errno();
                r = make_fs(image);
                if (r < 0) {
                        if (ftruncate(fd, 0) < 0) /* made again next time, whatever is left */
                                return negative_errno();
                        return r;
                }
        }
        lfd = loop_attach(fd, false, dev);
        if (lfd < 0)
                return lfd;
        if (mount(dev, mnt, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME, "errors=remount-ro") < 0)
                return negative_errno(); /* the loop device goes with lfd (autoclear) */
        /* a cache is what its runs put there: mkfs's lost+found is not (e2fsck makes one if it needs it) */
        if (made) {
                _cleanup_free_ char *lf = NULL;

                if (asprintf(&lf, "%s/lost+found", mnt) >= 0)
                        (void) rmdir(lf);
        }
        return 0;
}

int cache_image_detach(const char *dir) {
        _cleanup_free_ char *mnt = NULL;

        if (!cache_dir_is_valid(dir))
                return -EINVAL;
        if (asprintf(&mnt, CACHE_ROOT "/%s", dir) < 0)
                return -ENOMEM;
        if (umount2(mnt, UMOUNT_NOFOLLOW) >= 0 || errno == EINVAL || errno == ENOENT)
                return 0;
        if (errno != EBUSY)
                return negative_errno();
        /* still held (a process of the run's being reaped): detached now, gone with its last user */
        return umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 ? negative_errno() : 0;
}
