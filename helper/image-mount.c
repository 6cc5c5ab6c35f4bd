/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exit-codes.h"
#include "image-mount.h"
#include "image.h"
#include "util.h"

/* Is path a mount point (a different mount than its parent's)? */
static int is_mount_point(const char *path) {
        _cleanup_free_ char *parent = NULL;
        struct statx a, b;

        if (asprintf(&parent, "%s/..", path) < 0)
                return -ENOMEM;
        if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID, &a) < 0)
                return -errno;
        if (statx(AT_FDCWD, parent, 0, STATX_BASIC_STATS | STATX_MNT_ID, &b) < 0)
                return -errno;
        if ((a.stx_mask & STATX_MNT_ID) && (b.stx_mask & STATX_MNT_ID))
                return a.stx_mnt_id != b.stx_mnt_id;
        return a.stx_dev_major != b.stx_dev_major || a.stx_dev_minor != b.stx_dev_minor;
}

int image_mount_main(const char *arg) {
        _cleanup_(image_info_freep) ImageInfo *info = NULL;
        _cleanup_free_ char *where = NULL, *why = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        bool mount = strneq(arg, "--image-mount=", 14);
        const char *hex = strchr(arg, '=') + 1;
        int r;

        if (!image_digest_is_valid(hex)) {
                fprintf(stderr, "sbx: %s: not an image digest (64 lower-case hex digits)\n", arg);
                return SBX_EXIT_FAILURE;
        }
        if (asprintf(&where, SBX_IMAGE_MOUNTS_DIR "/%s", hex) < 0)
                return SBX_EXIT_FAILURE;
        if (!mount) {
                r = is_mount_point(where);
                if (r == -ENOENT)
                        return 0; /* gone already */
                if (r == 0) {     /* a directory a failed mount left */
                        (void) rmdir(where);
                        return 0;
                }
                r = image_umount_argv(where, &argv);
        } else {
                r = image_info_load(SBX_IMAGES_DIR, hex, &info, &why);
                if (r < 0) {
                        fprintf(stderr, "sbx: image sha256:%s: its entry in %s cannot be used: %s\n", hex,
                                SBX_IMAGES_DIR, why ?: strerror(-r));
                        return SBX_EXIT_FAILURE;
                }
                /* root's alone: the mounts are the runs' roots, nobody else's business */
                if (mkdir(SBX_IMAGE_MOUNTS_DIR, 0700) < 0 && errno != EEXIST) {
                        fprintf(stderr, "sbx: cannot make %s: %m\n", SBX_IMAGE_MOUNTS_DIR);
                        return SBX_EXIT_FAILURE;
                }
                /* what a stop whose unmount failed left (only root mounts here, and only this image) */
                if (is_mount_point(where) > 0) {
                        fprintf(stderr, "sbx: %s is mounted already; using that mount\n", where);
                        return 0;
                }
                r = image_mount_argv(SBX_IMAGES_DIR, info, where, &argv);
        }
        if (r < 0) {
                fprintf(stderr, "sbx: %s: %s\n", arg, strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        execv(argv[0], argv);
        fprintf(stderr, "sbx: cannot run %s: %m (base images need it: systemd-container on Debian)\n", argv[0]);
        return SBX_EXIT_FAILURE;
}
