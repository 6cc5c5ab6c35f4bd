/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "fileio.h"
#include "image.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

bool image_name_is_valid(const char *s) {
        size_t n = strlen(s);

        return n > 0 && n <= IMAGE_NAME_MAX && strchr("abcdefghijklmnopqrstuvwxyz0123456789", s[0]) &&
               strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

bool image_digest_is_valid(const char *hex) {
        return strlen(hex) == IMAGE_DIGEST_HEX && lower_hex_is_valid(hex, IMAGE_DIGEST_HEX);
}

int image_ref_parse(const char *s, ImageRef *ret, char **ret_error) {
        const char *at = strchr(s, '@');
        size_t n = at ? (size_t) (at - s) : strlen(s);
        ImageRef ref = {};

        if (n == 0 || n > IMAGE_NAME_MAX)
                return error_setf(ret_error, -EINVAL, "image: '%s' is not NAME or NAME@sha256:DIGEST", s);
        memcpy(ref.name, s, n);
        if (!image_name_is_valid(ref.name))
                return error_setf(ret_error, -EINVAL,
                                  "image: '%s' is not a name (1-64 of a-z 0-9 . _ -, starting with a letter or digit)",
                                  ref.name);
        if (at) {
                if (!strneq(at + 1, "sha256:", 7) || !image_digest_is_valid(at + 8))
                        return error_setf(ret_error, -EINVAL,
                                          "image: '%s' is not a digest (sha256: and 64 lower-case hex digits)", at + 1);
                memcpy(ref.digest, at + 8, IMAGE_DIGEST_HEX + 1);
        }
        *ret = ref;
        return 0;
}

int image_ref_merge(const char *profile_ref, const char *request_ref, ImageRef *ret, char **ret_error) {
        ImageRef p, q;
        int r;

        if (!profile_ref)
                return error_setf(ret_error, -EPERM, "image: the profile runs on the host's OS (files.base \"host\"), "
                                  "not on a base image");
        r = image_ref_parse(profile_ref, &p, ret_error);
        if (r < 0)
                return r;
        if (!request_ref) {
                *ret = p;
                return 0;
        }
        r = image_ref_parse(request_ref, &q, ret_error);
        if (r < 0)
                return r;
        if (!streq(p.name, q.name))
                return error_setf(ret_error, -EPERM, "image: the profile runs on image '%s', not '%s'", p.name, q.name);
        if (p.digest[0] && q.digest[0] && !streq(p.digest, q.digest))
                return error_setf(ret_error, -EBADMSG, "image %s: digest mismatch: the profile pins sha256:%s, "
                                  "the request sha256:%s", p.name, p.digest, q.digest);
        if (!q.digest[0])
                memcpy(q.digest, p.digest, sizeof(q.digest));
        *ret = q;
        return 0;
}

const char *const image_mount_points[] = {
        "proc", "sys", "sys/fs", "sys/fs/cgroup", "dev", "dev/shm", "run", "tmp", "var", "var/tmp", "home", "home/sbx",
        "root", NULL,
};

ImageInfo *image_info_free(ImageInfo *i) {
        if (!i)
                return NULL;
        free(i->name);
        free(i->format);
        free(i->source);
        free(i);
        return NULL;
}

int image_info_to_json(const ImageInfo *i, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char *s;

        if (!o)
                return -ENOMEM;
        if (json_object_object_add(o, "name", json_object_new_string(i->name)) < 0 ||
            json_object_object_add(o, "digest", json_object_new_string(i->digest)) < 0 ||
            json_object_object_add(o, "root_hash", json_object_new_string(i->root_hash)) < 0 ||
            json_object_object_add(o, "format", json_object_new_string(i->format)) < 0 ||
            json_object_object_add(o, "source", json_object_new_string(i->source)) < 0 ||
            json_object_object_add(o, "size", json_object_new_uint64(i->size)) < 0 ||
            json_object_object_add(o, "imported_at_usec", json_object_new_uint64(i->imported_at)) < 0)
                return -ENOMEM;
        s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int get_string(json_object *o, const char *key, json_object **ret, char **ret_error) {
        if (!json_object_object_get_ex(o, key, ret) || !json_object_is_type(*ret, json_type_string))
                return error_setf(ret_error, -EBADMSG, "%s: expected a string", key);
        return 0;
}

static int get_u64(json_object *o, const char *key, uint64_t *ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0)
                return error_setf(ret_error, -EBADMSG, "%s: expected a number", key);
        *ret = json_object_get_uint64(v);
        return 0;
}

int image_info_from_json(const char *text, ImageInfo **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = json_tokener_parse(text);
        _cleanup_(image_info_freep) ImageInfo *i = calloc(1, sizeof(ImageInfo));
        json_object *v;
        const char *s;
        int r;

        if (!i)
                return -ENOMEM;
        if (!o || !json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "not a JSON object");
        r = get_string(o, "name", &v, ret_error);
        if (r < 0)
                return r;
        if (!image_name_is_valid(json_object_get_string(v)))
                return error_setf(ret_error, -EBADMSG, "name: not an image name");
        if (!(i->name = strdup(json_object_get_string(v))))
                return -ENOMEM;
        r = get_string(o, "digest", &v, ret_error);
        if (r < 0)
                return r;
        if (!image_digest_is_valid(json_object_get_string(v)))
                return error_setf(ret_error, -EBADMSG, "digest: not 64 lower-case hex digits");
        strcpy(i->digest, json_object_get_string(v));
        r = get_string(o, "root_hash", &v, ret_error);
        if (r < 0)
                return r;
        s = json_object_get_string(v);
        if (strlen(s) < 2 || strlen(s) > IMAGE_ROOT_HASH_HEX_MAX || strlen(s) % 2 || !lower_hex_is_valid(s, strlen(s)))
                return error_setf(ret_error, -EBADMSG, "root_hash: not lower-case hex");
        strcpy(i->root_hash, s);
        r = get_string(o, "format", &v, ret_error);
        if (r < 0)
                return r;
        s = json_object_get_string(v);
        if (!streq(s, "squashfs") && !streq(s, "erofs"))
                return error_setf(ret_error, -EBADMSG, "format: expected \"squashfs\" or \"erofs\"");
        if (!(i->format = strdup(s)))
                return -ENOMEM;
        r = get_string(o, "source", &v, ret_error);
        if (r < 0)
                return r;
        s = json_object_get_string(v);
        if (!streq(s, "file") && !streq(s, "directory"))
                return error_setf(ret_error, -EBADMSG, "source: expected \"file\" or \"directory\"");
        if (!(i->source = strdup(s)))
                return -ENOMEM;
        r = get_u64(o, "size", &i->size, ret_error);
        if (r < 0)
                return r;
        r = get_u64(o, "imported_at_usec", &i->imported_at, ret_error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(i);
        return 0;
}

const char *image_format_from_header(const uint8_t *b, size_t n) {
        /* squashfs: "hsqs" at 0 (little endian); erofs: 0xE0F5E1E2 (little endian) at 1024 */
        if (n >= 4 && memcmp(b, "hsqs", 4) == 0)
                return "squashfs";
        if (n >= 1028 && b[1024] == 0xe2 && b[1025] == 0xe1 && b[1026] == 0xf5 && b[1027] == 0xe0)
                return "erofs";
        return NULL;
}

RunImage *run_image_free(RunImage *i) {
        if (!i)
                return NULL;
        free(i->name);
        free(i->path);
        free(i->verity_path);
        free(i);
        return NULL;
}

int image_compile_props(PropTable *t, const RunImage *img, const char *exec_path) {
        _cleanup_free_ char *root = NULL;
        int r;

        /* The image is mounted once, by its own unit, and runs share that mount (read-only; dm-verity
         * checks each block when it is read, whoever reads it): per run, systemd would set up a loop
         * device, a dm-verity device and a mount, and take them down again. */
        if (!image_digest_is_valid(img->digest))
                return -EINVAL;
        if (asprintf(&root, SBX_IMAGE_MOUNTS_DIR "/%s", img->digest) < 0)
                return -ENOMEM;
        r = prop_table_add_string(t, "RootDirectory", root);
        /* sbx's own program runs in the image too (ExecStart= and the privileged commands resolve there):
         * the host's, with the host's libraries, never the image's */
        r = r ?: prop_table_extend_strv(t, "BindReadOnlyPaths",
                                        (char *[]) { (char *) exec_path, (char *) SBX_HOST_PREFIX_EXEC,
                                                     (char *) SBX_HOST_LIBDIR, (char *) SBX_HOST_PREFIX_LIB, NULL });
        return r;
}

static int unit_name(const char *prefix, const char *hex, char **ret) {
        if (!image_digest_is_valid(hex))
                return -EINVAL;
        return asprintf(ret, "%s%s.service", prefix, hex) < 0 ? -ENOMEM : 0;
}

int image_unit_name(const char *hex, char **ret) {
        return unit_name(IMAGE_UNIT_PREFIX, hex, ret);
}

int image_hold_unit_name(const char *hex, char **ret) {
        return unit_name(IMAGE_HOLD_UNIT_PREFIX, hex, ret);
}

int image_info_load(const char *dir, const char *hex, ImageInfo **ret, char **ret_error) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_(image_info_freep) ImageInfo *i = NULL;
        int r;

        if (!image_digest_is_valid(hex))
                return error_setf(ret_error, -EINVAL, "'%s' is not a digest (64 lower-case hex digits)", hex);
        if (asprintf(&path, "%s/%s/" IMAGE_META_FILE, dir, hex) < 0)
                return -ENOMEM;
        r = read_file_at(AT_FDCWD, path, IMAGE_META_MAX, &text, NULL);
        if (r < 0)
                return r;
        r = image_info_from_json(text, &i, ret_error);
        if (r < 0)
                return r;
        if (!streq(i->digest, hex))
                return error_setf(ret_error, -EBADMSG, "its metadata names digest sha256:%s", i->digest);
        *ret = TAKE_PTR(i);
        return 0;
}

/* little-endian fields of the superblock (struct verity_sb of cryptsetup's lib/verity/verity.c) */
static uint16_t le16_at(const uint8_t *b) {
        return (uint16_t) (b[0] | b[1] << 8);
}
static uint32_t le32_at(const uint8_t *b) {
        return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24;
}
static uint64_t le64_at(const uint8_t *b) {
        return (uint64_t) le32_at(b) | (uint64_t) le32_at(b + 4) << 32;
}

static bool block_size_is_valid(uint32_t s) {
        return s >= 512 && s <= 65536 && (s & (s - 1)) == 0;
}

int verity_superblock_parse(const uint8_t *b, size_t n, VeritySuperblock *ret, char **ret_error) {
        VeritySuperblock sb = {};
        size_t alg_len;

        /* signature[8] version:32 hash_type:32 uuid[16] algorithm[32] data_block_size:32
         * hash_block_size:32 data_blocks:64 salt_size:16 pad[6] salt[256] pad[168] */
        if (n < VERITY_SUPERBLOCK_SIZE || memcmp(b, "verity\0\0", 8) != 0)
                return error_setf(ret_error, -EBADMSG, "no dm-verity superblock at its start");
        if (le32_at(b + 8) != 1)
                return error_setf(ret_error, -EBADMSG, "dm-verity superblock version %" PRIu32 " (only 1 is known)",
                                  le32_at(b + 8));
        sb.hash_type = le32_at(b + 12);
        if (sb.hash_type != 1)
                return error_setf(ret_error, -EBADMSG, "dm-verity hash type %" PRIu32 " (only 1 is used here)",
                                  sb.hash_type);
        memcpy(sb.algorithm, b + 32, sizeof(sb.algorithm) - 1);
        alg_len = strnlen((const char *) b + 32, 32);
        if (alg_len == 0 || alg_len >= 32 ||
            strspn(sb.algorithm, "abcdefghijklmnopqrstuvwxyz0123456789-") != alg_len)
                return error_setf(ret_error, -EBADMSG, "dm-verity superblock names no valid hash algorithm");
        sb.data_block_size = le32_at(b + 64);
        sb.hash_block_size = le32_at(b + 68);
        if (!block_size_is_valid(sb.data_block_size) || !block_size_is_valid(sb.hash_block_size))
                return error_setf(ret_error, -EBADMSG, "dm-verity block sizes %" PRIu32 "/%" PRIu32 " are not powers "
                                  "of two from 512 to 65536", sb.data_block_size, sb.hash_block_size);
        sb.data_blocks = le64_at(b + 72);
        if (sb.data_blocks == 0 || sb.data_blocks > UINT64_MAX / sb.data_block_size / 2)
                return error_setf(ret_error, -EBADMSG, "dm-verity superblock counts %" PRIu64 " data blocks",
                                  sb.data_blocks);
        sb.salt_size = le16_at(b + 80);
        if (sb.salt_size > sizeof(sb.salt))
                return error_setf(ret_error, -EBADMSG, "dm-verity salt of %u bytes (at most 256)", sb.salt_size);
        memcpy(sb.salt, b + 88, sb.salt_size);
        *ret = sb;
        return 0;
}

int verity_table_params(const VeritySuperblock *sb, dev_t data, dev_t hash, const char *root_hash, char **ret,
                        uint64_t *ret_sectors) {
        _cleanup_free_ char *salt = NULL;
        size_t n = strlen(root_hash);
        /* cryptsetup's VERITY_hash_offset_block(): the hash tree starts at the first hash block after the
         * superblock */
        uint64_t hash_start = (VERITY_SUPERBLOCK_SIZE + sb->hash_block_size - 1) / sb->hash_block_size;

        if (n == 0 || n % 2 || n > IMAGE_ROOT_HASH_HEX_MAX || !lower_hex_is_valid(root_hash, n))
                return -EINVAL;
        if (sb->salt_size > 0) {
                salt = malloc(sb->salt_size * 2 + 1);
                if (!salt)
                        return -ENOMEM;
                hex_encode(sb->salt, sb->salt_size, salt);
        }
        if (asprintf(ret, "%" PRIu32 " %u:%u %u:%u %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 " %s %s %s",
                     sb->hash_type, major(data), minor(data), major(hash), minor(hash), sb->data_block_size,
                     sb->hash_block_size, sb->data_blocks, hash_start, sb->algorithm, root_hash, salt ?: "-") < 0)
                return -ENOMEM;
        *ret_sectors = sb->data_blocks * (sb->data_block_size / 512);
        return 0;
}

int image_wrap_argv(char ***argv, const char *exec_path) {
        size_t n = strv_length(*argv);
        char **l;

        if (n == 0 || !streq((*argv)[0], exec_path))
                return 0;
        l = calloc(n + 4, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (!(l[0] = strdup(SBX_HOST_PREFIX_LIB "/" SBX_HOST_LDSO)) || !(l[1] = strdup("--library-path")) ||
            !(l[2] = strdup(SBX_HOST_PREFIX_LIB)) || !(l[3] = strdup(SBX_HOST_PREFIX_EXEC))) {
                strv_free(l);
                return -ENOMEM;
        }
        for (size_t i = 1; i < n; i++)
                l[i + 3] = (*argv)[i];
        free((*argv)[0]);
        free(*argv);
        *argv = l;
        return 0;
}
