/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Base images (docs/images.md): read-only root file systems a profile may run on instead of the host's
 * OS, kept in a root-only store by their sha256 digest, each verified block by block by dm-verity.
 * Pure: names and references, the store's per-image metadata, and what a run on an image adds to its
 * unit. The store itself is sbxd/images.c's. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "proptable.h"
#include "util.h"

/* The store: SBX_IMAGES_DIR/<hex digest>/{image.raw,image.verity,meta.json}, root only (docs/images.md) */
#define SBX_IMAGES_DIR SBX_STATEDIR "/images"
#define IMAGE_FILE "image.raw"
#define IMAGE_VERITY_FILE "image.verity"
#define IMAGE_META_FILE "meta.json"
#define IMAGE_META_MAX (64 * 1024)
/* Where an image is mounted for runs, read-only through dm-verity, while sbx-image@<hex digest>.service
 * is active (docs/images.md): SBX_IMAGE_MOUNTS_DIR/<hex digest>, the runs' RootDirectory=. root only. */
#define SBX_IMAGE_MOUNTS_DIR "/run/sbx/images"
#define IMAGE_UNIT_PREFIX "sbx-image@"
#define IMAGE_HOLD_UNIT_PREFIX "sbx-image-hold@"
#define IMAGE_NAME_MAX 64U
#define IMAGE_DIGEST_HEX 64U
#define IMAGE_ROOT_HASH_HEX_MAX 128U

/* Where a run on an image finds the host's exec helper and the libraries it links (bound read-only;
 * ExecStart= and the privileged commands resolve inside the image). */
#define SBX_HOST_PREFIX "/run/sbx-host"
#define SBX_HOST_PREFIX_EXEC SBX_HOST_PREFIX "/sbx-exec"
#define SBX_HOST_PREFIX_LIB SBX_HOST_PREFIX "/lib"

/* A name: [a-z0-9][a-z0-9._-]{0,63}; "NAME" or "NAME@sha256:<64 lower-case hex>" */
bool image_name_is_valid(const char *s);
bool image_digest_is_valid(const char *hex);

typedef struct ImageRef {
        char name[IMAGE_NAME_MAX + 1];
        char digest[IMAGE_DIGEST_HEX + 1]; /* "" when not pinned */
} ImageRef;

/* -EINVAL (with a message naming what) for anything but NAME or NAME@sha256:HEX64. */
int image_ref_parse(const char *s, ImageRef *ret, char **ret_error);

/* The image a run gets: the profile's files.image, which a request may name again to pin a digest.
 * -EPERM: the request names another image than the profile's (or the profile has none); -EBADMSG: the
 * profile and the request pin different digests (a mismatch); -EINVAL: a malformed reference. */
int image_ref_merge(const char *profile_ref, const char *request_ref, ImageRef *ret, char **ret_error);

/* The mount points a root image must have for a run's unit (read-only: systemd cannot make them):
 * NULL-terminated, without the leading '/'. */
extern const char *const image_mount_points[];

/* One image of the store: its meta.json. */
typedef struct ImageInfo {
        char *name;
        char digest[IMAGE_DIGEST_HEX + 1];          /* sha256 of image.raw */
        char root_hash[IMAGE_ROOT_HASH_HEX_MAX + 1]; /* dm-verity root hash of image.raw (image.verity) */
        char *format;                               /* "squashfs" or "erofs" */
        char *source;                               /* "file" or "directory" */
        uint64_t size;                              /* bytes of image.raw */
        usec_t imported_at;
} ImageInfo;

ImageInfo *image_info_free(ImageInfo *i);
DEFINE_TRIVIAL_CLEANUP_FUNC(ImageInfo *, image_info_free);
int image_info_to_json(const ImageInfo *i, char **ret);
/* -EBADMSG: not such a document (message in *ret_error). */
int image_info_from_json(const char *text, ImageInfo **ret, char **ret_error);
/* The metadata of store entry dir/<hex> (dir: SBX_IMAGES_DIR), checked against the entry's name:
 * -EBADMSG (message in *ret_error) for a document that is not one or names another digest; -errno of
 * reading it. */
int image_info_load(const char *dir, const char *hex, ImageInfo **ret, char **ret_error);

/* The units of an image's mount: sbx-image@<hex>.service mounts it (its start) and unmounts it (its
 * stop); it stops when no unit needs it, and sbx-image-hold@<hex>.service, restarted by sbxd at each run
 * on the image, needs it for a while after (docs/images.md). -EINVAL for a hex that is not a digest. */
int image_unit_name(const char *hex, char **ret);
int image_hold_unit_name(const char *hex, char **ret);
/* dm-verity (docs/images.md): the superblock `veritysetup format` writes at the start of an image's
 * image.verity, and the device-mapper table that maps image.raw through it. sbx-exec --image-mount
 * (helper/image-mount.c) sets the devices up itself, with a loop device for each file. */
#define VERITY_SUPERBLOCK_SIZE 512U
typedef struct VeritySuperblock {
        uint32_t hash_type;
        char algorithm[32];
        uint32_t data_block_size, hash_block_size;
        uint64_t data_blocks;
        uint16_t salt_size;
        uint8_t salt[256];
} VeritySuperblock;
/* -EBADMSG (message in *ret_error) for what is not a version 1 superblock of hash type 1 with sane sizes. */
int verity_superblock_parse(const uint8_t *b, size_t n, VeritySuperblock *ret, char **ret_error);
/* The "verity" target's parameters for data device data and hash device hash (the hash tree after the
 * superblock), checked against root_hash (lower-case hex), and the mapped device's size in sectors.
 * -EINVAL: root_hash is not one. */
int verity_table_params(const VeritySuperblock *sb, dev_t data, dev_t hash, const char *root_hash, char **ret,
                        uint64_t *ret_sectors);

/* The file system type of an image's first bytes (at least 1028): "squashfs", "erofs", or NULL. */
const char *image_format_from_header(const uint8_t *b, size_t n);

/* What a run on an image needs, set by sbxd after it found and checked the image in the store. */
typedef struct RunImage {
        char *name;
        char digest[IMAGE_DIGEST_HEX + 1];
        char root_hash[IMAGE_ROOT_HASH_HEX_MAX + 1];
        char *path;         /* SBX_IMAGES_DIR/<digest>/image.raw */
        char *verity_path;  /* SBX_IMAGES_DIR/<digest>/image.verity */
} RunImage;

RunImage *run_image_free(RunImage *i);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunImage *, run_image_free);

/* The unit properties of a run on img: RootDirectory= its mount (SBX_IMAGE_MOUNTS_DIR/<digest>, which the
 * run's unit requires: image_unit_name()), and the host's exec helper, dynamic loader and library
 * directory bound read-only below SBX_HOST_PREFIX. */
int image_compile_props(PropTable *t, const RunImage *img, const char *exec_path);
/* A command line of the host's exec helper (argv[0] == exec_path) as it runs inside an image: through
 * the host's dynamic loader below SBX_HOST_PREFIX. Other command lines are left as they are. */
int image_wrap_argv(char ***argv, const char *exec_path);
