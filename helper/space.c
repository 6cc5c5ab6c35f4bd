/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "macro.h"
#include "policy.h"
#include "space.h"
#include "util.h"

static int mkdir_mode(const char *path, mode_t mode) {
        /* chmod: mkdir()'s mode is masked by the umask */
        if (mkdir(path, mode) < 0)
                return -errno;
        return chmod(path, mode) < 0 ? -errno : 0;
}

static int space_pts_path(const char *space, char **ret) {
        return asprintf(ret, "%s/" SBX_SPACE_PTS, space) < 0 ? -ENOMEM : 0;
}

/* The run's own devpts instance (policy.h): no terminal of the host's or another run's is in it */
static int space_mount_pts(const char *space) {
        _cleanup_free_ char *pts = NULL;
        int r;

        r = space_pts_path(space, &pts);
        if (r < 0)
                return r;
        r = mkdir_mode(pts, 0755);
        if (r < 0)
                return r;
        if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, SBX_SPACE_PTS_OPTIONS) < 0)
                return -errno;
        return 0;
}

int space_create(const char *path, uint64_t size) {
        _cleanup_free_ char *opts = NULL;
        int r;

        if (size == 0)
                return -EINVAL;
        /* /run/sbx, then SBX_SPACE_DIR: root's only */
        if (mkdir("/run/sbx", 0755) < 0 && errno != EEXIST)
                return -errno;
        if (mkdir(SBX_SPACE_DIR, 0700) < 0 && errno != EEXIST)
                return -errno;
        r = mkdir_mode(path, 0700);
        if (r < 0)
                return r;
        if (asprintf(&opts, "mode=0700,size=%" PRIu64, size) < 0)
                return -ENOMEM;
        if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
                r = -errno;
                (void) rmdir(path);
                return r;
        }
        for (const PolicySpaceDir *d = policy_space_dirs; d->path; d++) {
                _cleanup_free_ char *p = NULL;

                if (asprintf(&p, "%s/%s", path, d->name) < 0)
                        r = -ENOMEM;
                else
                        r = mkdir_mode(p, d->mode);
                if (r < 0) {
                        (void) space_remove(path);
                        return r;
                }
        }
        r = space_mount_pts(path);
        if (r < 0)
                (void) space_remove(path);
        return r;
}

int space_remove(const char *path) {
        _cleanup_free_ char *pts = NULL;

        /* first what is mounted in the space, which would keep it busy */
        if (space_pts_path(path, &pts) < 0)
                return -ENOMEM;
        if (umount2(pts, UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                (void) umount2(pts, MNT_DETACH | UMOUNT_NOFOLLOW);
        if (umount2(path, UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT) {
                /* busy on the host: detached, it goes once its last user does (the cap holds meanwhile) */
                if (errno != EBUSY || umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
                        return -errno;
        }
        if (rmdir(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int space_check(uint64_t size, char **ret_why) {
        struct stat first = {};

        for (const PolicySpaceDir *d = policy_space_dirs; d->path; d++) {
                struct statfs sfs;
                struct stat st;

                if (statfs(d->path, &sfs) < 0 || stat(d->path, &st) < 0) {
                        int r = -errno;

                        return error_setf(ret_why, r, "%s: %s", d->path, strerror(-r));
                }
                if ((uint64_t) sfs.f_type != TMPFS_MAGIC)
                        return error_setf(ret_why, -EXDEV, "%s is not on the run's space (file system type 0x%" PRIx64 ")",
                                          d->path, (uint64_t) sfs.f_type);
                if ((uint64_t) sfs.f_blocks * (uint64_t) sfs.f_bsize != size)
                        return error_setf(ret_why, -ERANGE, "%s is on a tmpfs of %" PRIu64 " bytes, expected %" PRIu64,
                                          d->path, (uint64_t) sfs.f_blocks * (uint64_t) sfs.f_bsize, size);
                if (d == policy_space_dirs)
                        first = st;
                else if (st.st_dev != first.st_dev)
                        return error_setf(ret_why, -ENOTUNIQ, "%s is not on the same file system as %s", d->path,
                                          policy_space_dirs[0].path);
        }
        return 0;
}

int space_usage(uint64_t *ret_used, bool *ret_full) {
        struct statfs sfs;

        if (statfs(SBX_HOME, &sfs) < 0)
                return -errno;
        if ((uint64_t) sfs.f_type != TMPFS_MAGIC)
                return -EXDEV;
        *ret_used = ((uint64_t) sfs.f_blocks - (uint64_t) sfs.f_bfree) * (uint64_t) sfs.f_bsize;
        *ret_full = sfs.f_bavail == 0 || (sfs.f_files > 0 && sfs.f_ffree == 0);
        return 0;
}
