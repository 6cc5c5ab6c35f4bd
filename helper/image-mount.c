/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioctl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "exit-codes.h"
#include "image-mount.h"
#include "image.h"
#include "loop.h"
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

/* ---- device-mapper (linux/dm-ioctl.h; the calls libdevmapper makes) ------------------------------------ */

#define DM_CONTROL "/dev/mapper/control"

/* One call on the control device for device name; with a target, its table of one target of that type,
 * sectors long, with those parameters. The device's number in *ret_dev. */
static int dm_call(int ctl, unsigned long cmd, const char *name, uint32_t flags, const char *type, uint64_t sectors,
                   const char *params, dev_t *ret_dev) {
        _Alignas(8) uint8_t buf[16 * 1024] = {};
        struct dm_ioctl *io = (struct dm_ioctl *) buf;

        io->version[0] = DM_VERSION_MAJOR;
        io->version[1] = DM_VERSION_MINOR;
        io->version[2] = DM_VERSION_PATCHLEVEL;
        io->data_size = sizeof(buf);
        io->data_start = sizeof(struct dm_ioctl);
        io->flags = flags;
        if (strlen(name) >= sizeof(io->name))
                return -ENAMETOOLONG;
        strcpy(io->name, name);
        if (type) {
                struct dm_target_spec *spec = (struct dm_target_spec *) (buf + sizeof(struct dm_ioctl));
                size_t n = strlen(params) + 1;

                if (sizeof(struct dm_ioctl) + sizeof(*spec) + n > sizeof(buf) || strlen(type) >= sizeof(spec->target_type))
                        return -E2BIG;
                io->target_count = 1;
                spec->sector_start = 0;
                spec->length = sectors;
                strcpy(spec->target_type, type);
                memcpy(spec + 1, params, n);
        }
        if (ioctl(ctl, cmd, io) < 0)
                return negative_errno();
        if (ret_dev)
                *ret_dev = (dev_t) io->dev;
        return 0;
}

static int dm_remove(int ctl, const char *name, bool deferred) {
        return dm_call(ctl, DM_DEV_REMOVE, name, deferred ? DM_DEFERRED_REMOVE : 0, NULL, 0, NULL, NULL);
}

/* The dm-verity device of image hex: "sbx-<hex>-verity" */
static int dm_name(const char *hex, char **ret) {
        return asprintf(ret, "sbx-%s-verity", hex) < 0 ? -ENOMEM : 0;
}

/* ---- the mount ------------------------------------------------------------------------------------------ */

/* Store entry info mounted read-only at where: a read-only loop device for image.raw and one for
 * image.verity, a dm-verity device over them with the root hash recorded at import, and the image's file
 * system on that. Every block read from the mount is checked against the root hash by the kernel. The
 * devices go with the mount: the dm-verity device is removed (deferred) when its last user, the mount,
 * goes, and the loop devices clear themselves when the dm-verity device lets them go. */
static int image_mount(const ImageInfo *info, const char *where) {
        _cleanup_free_ char *data_path = NULL, *hash_path = NULL, *name = NULL, *params = NULL, *why = NULL,
                            *node = NULL;
        _cleanup_close_ int data = -EBADF, hash = -EBADF, ldata = -EBADF, lhash = -EBADF, ctl = -EBADF;
        uint8_t sb_buf[VERITY_SUPERBLOCK_SIZE];
        char ddev[32], hdev[32];
        VeritySuperblock sb;
        struct stat dst, hst, nst;
        uint64_t sectors;
        dev_t dev;
        ssize_t n;
        int r;

        if (asprintf(&data_path, SBX_IMAGES_DIR "/%s/" IMAGE_FILE, info->digest) < 0 ||
            asprintf(&hash_path, SBX_IMAGES_DIR "/%s/" IMAGE_VERITY_FILE, info->digest) < 0 ||
            dm_name(info->digest, &name) < 0)
                return -ENOMEM;
        data = open(data_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        hash = open(hash_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (data < 0 || hash < 0) {
                fprintf(stderr, "sbx: cannot open %s: %m\n", data < 0 ? data_path : hash_path);
                return -EIO;
        }
        n = pread(hash, sb_buf, sizeof(sb_buf), 0);
        if (n < 0) {
                fprintf(stderr, "sbx: cannot read %s: %m\n", hash_path);
                return -EIO;
        }
        r = verity_superblock_parse(sb_buf, (size_t) n, &sb, &why);
        if (r < 0) {
                fprintf(stderr, "sbx: %s: %s\n", hash_path, why ?: strerror(-r));
                return r;
        }
        ldata = loop_attach(data, true, ddev);
        if (ldata < 0) {
                fprintf(stderr, "sbx: no loop device for %s: %s\n", data_path, strerror(-ldata));
                return ldata;
        }
        lhash = loop_attach(hash, true, hdev);
        if (lhash < 0) {
                fprintf(stderr, "sbx: no loop device for %s: %s\n", hash_path, strerror(-lhash));
                return lhash;
        }
        if (fstat(ldata, &dst) < 0 || fstat(lhash, &hst) < 0)
                return negative_errno();
        r = verity_table_params(&sb, dst.st_rdev, hst.st_rdev, info->root_hash, &params, &sectors);
        if (r < 0) {
                fprintf(stderr, "sbx: image sha256:%s: no valid root hash in its metadata\n", info->digest);
                return r;
        }
        ctl = open(DM_CONTROL, O_RDWR | O_CLOEXEC);
        if (ctl < 0) {
                fprintf(stderr, "sbx: cannot open %s (device-mapper): %m\n", DM_CONTROL);
                return -EIO;
        }
        /* what a failed earlier attempt left under this name (its mount would have been found above) */
        (void) dm_remove(ctl, name, false);
        r = dm_call(ctl, DM_DEV_CREATE, name, 0, NULL, 0, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "sbx: cannot create device-mapper device %s: %s\n", name, strerror(-r));
                return r;
        }
        r = dm_call(ctl, DM_TABLE_LOAD, name, DM_READONLY_FLAG, "verity", sectors, params, NULL);
        if (r >= 0)
                r = dm_call(ctl, DM_DEV_SUSPEND, name, 0, NULL, 0, NULL, &dev); /* resume: the table goes live */
        if (r < 0) {
                fprintf(stderr, "sbx: cannot set up dm-verity device %s (%s, %s): %s\n", name, ddev, hdev, strerror(-r));
                (void) dm_remove(ctl, name, false);
                return r;
        }
        /* devtmpfs makes the node when the disk is added */
        if (asprintf(&node, "/dev/dm-%u", minor(dev)) < 0) {
                (void) dm_remove(ctl, name, false);
                return -ENOMEM;
        }
        if (stat(node, &nst) < 0 || !S_ISBLK(nst.st_mode) || nst.st_rdev != dev) {
                fprintf(stderr, "sbx: %s is not the block device %u:%u of %s\n", node, major(dev), minor(dev), name);
                (void) dm_remove(ctl, name, false);
                return -ENODEV;
        }
        if (mkdir(where, 0700) < 0 && errno != EEXIST) {
                r = negative_errno();
                fprintf(stderr, "sbx: cannot make %s: %m\n", where);
                (void) dm_remove(ctl, name, false);
                return r;
        }
        if (mount(node, where, info->format, MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
                r = negative_errno();
                fprintf(stderr, "sbx: cannot mount image sha256:%s (%s through dm-verity %s) at %s: %m\n", info->digest,
                        info->format, name, where);
                (void) rmdir(where);
                (void) dm_remove(ctl, name, false);
                return r;
        }
        /* from now on the mount holds the device: it goes when the mount goes */
        r = dm_remove(ctl, name, true);
        if (r < 0)
                fprintf(stderr, "sbx: warning: %s is not marked for removal with its mount: %s\n", name, strerror(-r));
        return 0;
}

static int image_umount(const char *hex, const char *where) {
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int ctl = -EBADF;
        int r;

        r = is_mount_point(where);
        if (r == -ENOENT)
                r = 0; /* gone already */
        else if (r > 0 && umount2(where, UMOUNT_NOFOLLOW) < 0) {
                fprintf(stderr, "sbx: cannot unmount %s: %m\n", where);
                return -EBUSY;
        } else if (r >= 0)
                (void) rmdir(where);
        if (r < 0) {
                fprintf(stderr, "sbx: %s: %s\n", where, strerror(-r));
                return r;
        }
        /* the dm-verity device went with the mount (deferred removal); one a failed mount left goes now */
        if (dm_name(hex, &name) < 0)
                return -ENOMEM;
        ctl = open(DM_CONTROL, O_RDWR | O_CLOEXEC);
        if (ctl >= 0) {
                r = dm_remove(ctl, name, false);
                if (r < 0 && r != -ENXIO)
                        fprintf(stderr, "sbx: warning: cannot remove device-mapper device %s: %s\n", name, strerror(-r));
        }
        return 0;
}

int image_mount_main(const char *arg) {
        _cleanup_(image_info_freep) ImageInfo *info = NULL;
        _cleanup_free_ char *where = NULL, *why = NULL;
        bool mount = strneq(arg, "--image-mount=", 14);
        const char *hex = strchr(arg, '=') + 1;
        int r;

        if (!image_digest_is_valid(hex)) {
                fprintf(stderr, "sbx: %s: not an image digest (64 lower-case hex digits)\n", arg);
                return SBX_EXIT_FAILURE;
        }
        if (asprintf(&where, SBX_IMAGE_MOUNTS_DIR "/%s", hex) < 0)
                return SBX_EXIT_FAILURE;
        if (!mount)
                return image_umount(hex, where) < 0 ? SBX_EXIT_FAILURE : 0;

        r = image_info_load(SBX_IMAGES_DIR, hex, &info, &why);
        if (r < 0) {
                fprintf(stderr, "sbx: image sha256:%s: its entry in %s cannot be used: %s\n", hex, SBX_IMAGES_DIR,
                        why ?: strerror(-r));
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
        return image_mount(info, where) < 0 ? SBX_EXIT_FAILURE : 0;
}
