/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Base images: names and references, the store's metadata, the profile's files.base/files.image, what a
 * run on an image adds to its unit, and the record's image section (docs/images.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "image.h"
#include "policy.h"
#include "profile.h"
#include "record-image.h"
#include "record.h"

#define EXEC_PATH "/usr/libexec/sbx/sbx-exec"
#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define RUN_ID "0123456789abcdef0123456789abcdef"
#define DOC(files) "{\"version\": 1, \"description\": \"d\", \"network\": {\"mode\": \"none\"}, " \
                   "\"resources\": {\"memory\": \"2G\", \"tasks\": 512, \"wall_time\": \"1h\"}" files "}"

static void test_names(void **state) {
        assert_true(image_name_is_valid("busybox"));
        assert_true(image_name_is_valid("py3.11_slim-2"));
        assert_true(image_name_is_valid("0day"));
        assert_false(image_name_is_valid(""));
        assert_false(image_name_is_valid("-x"));
        assert_false(image_name_is_valid(".x"));
        assert_false(image_name_is_valid("Busybox"));
        assert_false(image_name_is_valid("a/b"));
        assert_false(image_name_is_valid("a b"));
        assert_true(image_name_is_valid("a123456789012345678901234567890123456789012345678901234567890123"));
        assert_false(image_name_is_valid("a1234567890123456789012345678901234567890123456789012345678901234"));
        assert_true(image_digest_is_valid(HEX_A));
        assert_false(image_digest_is_valid("0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"));
        assert_false(image_digest_is_valid(HEX_A "0"));
        assert_false(image_digest_is_valid("abc"));
}

static void test_ref_parse(void **state) {
        static const char *const bad[] = {
                "", "@sha256:" HEX_A, "busy@", "busy@sha256:", "busy@sha512:" HEX_A, "busy@sha256:" HEX_A "0",
                "busy@" HEX_A, "Busy", "busy@sha256:" HEX_A "@x", NULL,
        };
        ImageRef ref;
        char *error = NULL;

        assert_int_equal(image_ref_parse("busy", &ref, NULL), 0);
        assert_string_equal(ref.name, "busy");
        assert_string_equal(ref.digest, "");
        assert_int_equal(image_ref_parse("busy@sha256:" HEX_A, &ref, NULL), 0);
        assert_string_equal(ref.name, "busy");
        assert_string_equal(ref.digest, HEX_A);
        for (size_t i = 0; bad[i]; i++) {
                assert_int_equal(image_ref_parse(bad[i], &ref, &error), -EINVAL);
                assert_non_null(error);
                assert_non_null(strstr(error, "image: "));
                error = mfree(error);
        }
}

static void test_ref_merge(void **state) {
        ImageRef ref;
        char *error = NULL;

        /* the profile's, as it is */
        assert_int_equal(image_ref_merge("busy", NULL, &ref, NULL), 0);
        assert_string_equal(ref.name, "busy");
        assert_string_equal(ref.digest, "");
        assert_int_equal(image_ref_merge("busy@sha256:" HEX_A, NULL, &ref, NULL), 0);
        assert_string_equal(ref.digest, HEX_A);
        /* the request pins a digest of the profile's image */
        assert_int_equal(image_ref_merge("busy", "busy@sha256:" HEX_B, &ref, NULL), 0);
        assert_string_equal(ref.digest, HEX_B);
        assert_int_equal(image_ref_merge("busy@sha256:" HEX_A, "busy", &ref, NULL), 0);
        assert_string_equal(ref.digest, HEX_A);
        assert_int_equal(image_ref_merge("busy@sha256:" HEX_A, "busy@sha256:" HEX_A, &ref, NULL), 0);
        /* a mismatch */
        assert_int_equal(image_ref_merge("busy@sha256:" HEX_A, "busy@sha256:" HEX_B, &ref, &error), -EBADMSG);
        assert_string_equal(error, "image busy: digest mismatch: the profile pins sha256:" HEX_A
                                   ", the request sha256:" HEX_B);
        error = mfree(error);
        /* another image, or a profile on the host's OS */
        assert_int_equal(image_ref_merge("busy", "python", &ref, &error), -EPERM);
        assert_string_equal(error, "image: the profile runs on image 'busy', not 'python'");
        error = mfree(error);
        assert_int_equal(image_ref_merge(NULL, "busy", &ref, &error), -EPERM);
        error = mfree(error);
        assert_int_equal(image_ref_merge("busy", "busy@sha256:x", &ref, &error), -EINVAL);
        error = mfree(error);
}

static void test_info_json(void **state) {
        ImageInfo in = {
                .name = (char *) "busy", .digest = HEX_A, .root_hash = HEX_B, .format = (char *) "squashfs",
                .source = (char *) "directory", .size = 4096, .imported_at = 1700000000000000ULL,
        };
        _cleanup_(image_info_freep) ImageInfo *out = NULL;
        _cleanup_free_ char *text = NULL;
        char *error = NULL;

        assert_int_equal(image_info_to_json(&in, &text), 0);
        assert_int_equal(image_info_from_json(text, &out, NULL), 0);
        assert_string_equal(out->name, "busy");
        assert_string_equal(out->digest, HEX_A);
        assert_string_equal(out->root_hash, HEX_B);
        assert_string_equal(out->format, "squashfs");
        assert_string_equal(out->source, "directory");
        assert_int_equal(out->size, 4096);
        assert_int_equal(out->imported_at, 1700000000000000ULL);

        static const char *const bad[] = {
                "[]", "{}", "not json",
                "{\"name\":\"Busy\",\"digest\":\"" HEX_A "\",\"root_hash\":\"" HEX_B "\",\"format\":\"squashfs\","
                "\"source\":\"file\",\"size\":1,\"imported_at_usec\":1}",
                "{\"name\":\"busy\",\"digest\":\"abc\",\"root_hash\":\"" HEX_B "\",\"format\":\"squashfs\","
                "\"source\":\"file\",\"size\":1,\"imported_at_usec\":1}",
                "{\"name\":\"busy\",\"digest\":\"" HEX_A "\",\"root_hash\":\"xyz\",\"format\":\"squashfs\","
                "\"source\":\"file\",\"size\":1,\"imported_at_usec\":1}",
                "{\"name\":\"busy\",\"digest\":\"" HEX_A "\",\"root_hash\":\"" HEX_B "\",\"format\":\"ext4\","
                "\"source\":\"file\",\"size\":1,\"imported_at_usec\":1}",
                "{\"name\":\"busy\",\"digest\":\"" HEX_A "\",\"root_hash\":\"" HEX_B "\",\"format\":\"erofs\","
                "\"source\":\"file\",\"size\":-1,\"imported_at_usec\":1}",
                NULL,
        };
        for (size_t i = 0; bad[i]; i++) {
                ImageInfo *x = NULL;

                assert_int_equal(image_info_from_json(bad[i], &x, &error), -EBADMSG);
                assert_null(x);
                error = mfree(error);
        }
}

/* The mount's units and commands, and the store entry they read. */
static void test_mount(void **state) {
        ImageInfo in = {
                .name = (char *) "busy", .digest = HEX_A, .root_hash = HEX_B, .format = (char *) "squashfs",
                .source = (char *) "directory", .size = 4096, .imported_at = 1700000000000000ULL,
        };
        _cleanup_(image_info_freep) ImageInfo *back = NULL;
        _cleanup_free_ char *unit = NULL, *hold = NULL, *text = NULL, *dir = NULL, *entry = NULL, *meta = NULL;
        char tmpl[] = "/tmp/test-image-XXXXXX", *error = NULL;
        FILE *f;

        assert_int_equal(image_unit_name(HEX_A, &unit), 0);
        assert_string_equal(unit, "sbx-image@" HEX_A ".service");
        assert_int_equal(image_hold_unit_name(HEX_A, &hold), 0);
        assert_string_equal(hold, "sbx-image-hold@" HEX_A ".service");
        /* nothing but a digest names a unit (a unit name must not be made of what a request says) */
        assert_int_equal(image_unit_name("../" HEX_A, &text), -EINVAL);
        assert_int_equal(image_hold_unit_name("ABC", &text), -EINVAL);
        assert_null(text);

        /* the store's entry: read back, and refused when it names another digest or is not one */
        assert_non_null(mkdtemp(tmpl));
        dir = strdup(tmpl);
        assert_non_null(dir);
        assert_true(asprintf(&entry, "%s/%s", dir, HEX_A) > 0 && mkdir(entry, 0700) == 0);
        assert_true(asprintf(&meta, "%s/meta.json", entry) > 0);
        assert_int_equal(image_info_to_json(&in, &text), 0);
        assert_non_null(f = fopen(meta, "we"));
        fputs(text, f);
        fclose(f);
        assert_int_equal(image_info_load(dir, HEX_A, &back, &error), 0);
        assert_string_equal(back->root_hash, HEX_B);
        assert_int_equal(image_info_load(dir, HEX_B, &back, &error), -ENOENT);
        assert_int_equal(image_info_load(dir, "nothex", &back, &error), -EINVAL);
        error = mfree(error);
        memcpy(in.digest, HEX_B, sizeof(in.digest));
        text = mfree(text);
        assert_int_equal(image_info_to_json(&in, &text), 0);
        assert_non_null(f = fopen(meta, "we"));
        fputs(text, f);
        fclose(f);
        image_info_free(TAKE_PTR(back));
        assert_int_equal(image_info_load(dir, HEX_A, &back, &error), -EBADMSG);
        assert_non_null(strstr(error, "names digest sha256:" HEX_B));
        error = mfree(error);
        assert_int_equal(unlink(meta), 0);
        assert_int_equal(rmdir(entry), 0);
        assert_int_equal(rmdir(dir), 0);
}

/* le: a superblock as `veritysetup format` writes it (cryptsetup's struct verity_sb) */
static void put_le(uint8_t *b, uint64_t v, size_t n) {
        for (size_t i = 0; i < n; i++)
                b[i] = (uint8_t) (v >> (8 * i));
}

static void make_sb(uint8_t b[static 512], uint32_t version, uint32_t type, const char *alg, uint32_t dbs,
                    uint32_t hbs, uint64_t blocks, uint16_t salt_size) {
        memset(b, 0, 512);
        memcpy(b, "verity\0\0", 8);
        put_le(b + 8, version, 4);
        put_le(b + 12, type, 4);
        strncpy((char *) b + 32, alg, 32);
        put_le(b + 64, dbs, 4);
        put_le(b + 68, hbs, 4);
        put_le(b + 72, blocks, 8);
        put_le(b + 80, salt_size, 2);
        for (unsigned i = 0; i < salt_size && i < 256; i++)
                b[88 + i] = (uint8_t) (0xa0 + i);
}

/* The dm-verity superblock and the table of the mapped device that sbx-exec --image-mount loads. */
static void test_verity(void **state) {
        uint8_t b[512];
        VeritySuperblock sb;
        _cleanup_free_ char *params = NULL;
        char *error = NULL;
        uint64_t sectors = 0;

        make_sb(b, 1, 1, "sha256", 4096, 4096, 10, 4);
        assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), 0);
        assert_string_equal(sb.algorithm, "sha256");
        assert_int_equal(sb.data_blocks, 10);
        assert_int_equal(verity_table_params(&sb, makedev(7, 3), makedev(7, 4), HEX_B, &params, &sectors), 0);
        assert_string_equal(params, "1 7:3 7:4 4096 4096 10 1 sha256 " HEX_B " a0a1a2a3");
        assert_int_equal(sectors, 80);
        params = mfree(params);
        /* no salt: "-"; a hash block smaller than the superblock's area moves the tree's start */
        make_sb(b, 1, 1, "sha512", 4096, 512, 3, 0);
        assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), 0);
        assert_int_equal(verity_table_params(&sb, makedev(259, 1), makedev(259, 2), HEX_A, &params, &sectors), 0);
        assert_string_equal(params, "1 259:1 259:2 4096 512 3 1 sha512 " HEX_A " -");
        params = mfree(params);
        /* never a table without a root hash, or with one that is not lower-case hex */
        assert_int_equal(verity_table_params(&sb, makedev(7, 3), makedev(7, 4), "", &params, &sectors), -EINVAL);
        assert_int_equal(verity_table_params(&sb, makedev(7, 3), makedev(7, 4), "ABCD", &params, &sectors), -EINVAL);
        assert_int_equal(verity_table_params(&sb, makedev(7, 3), makedev(7, 4), "abc", &params, &sectors), -EINVAL);
        assert_null(params);

        /* what is not such a superblock is refused, with the reason */
        struct { uint32_t version, type; const char *alg; uint32_t dbs, hbs; uint64_t blocks; uint16_t salt;
                 const char *why; } bad[] = {
                { 2, 1, "sha256", 4096, 4096, 10, 32, "version 2" },
                { 1, 0, "sha256", 4096, 4096, 10, 32, "hash type 0" },
                { 1, 1, "", 4096, 4096, 10, 32, "no valid hash algorithm" },
                { 1, 1, "sha 256", 4096, 4096, 10, 32, "no valid hash algorithm" },
                { 1, 1, "sha256", 4000, 4096, 10, 32, "block sizes" },
                { 1, 1, "sha256", 4096, 256, 10, 32, "block sizes" },
                { 1, 1, "sha256", 4096, 4096, 0, 32, "0 data blocks" },
                { 1, 1, "sha256", 4096, 4096, UINT64_MAX / 4096, 32, "data blocks" },
                { 1, 1, "sha256", 4096, 4096, 10, 257, "salt of 257 bytes" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                make_sb(b, bad[i].version, bad[i].type, bad[i].alg, bad[i].dbs, bad[i].hbs, bad[i].blocks, bad[i].salt);
                assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), -EBADMSG);
                if (!strstr(error, bad[i].why))
                        fail_msg("case %zu: '%s' does not say '%s'", i, error, bad[i].why);
                error = mfree(error);
        }
        make_sb(b, 1, 1, "sha256", 4096, 4096, 10, 32);
        memcpy(b, "VERITY\0\0", 8);
        assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), -EBADMSG);
        error = mfree(error);
        assert_int_equal(verity_superblock_parse(b, 511, &sb, &error), -EBADMSG);
        error = mfree(error);
        /* an algorithm name filling all 32 bytes has no terminator */
        make_sb(b, 1, 1, "sha256", 4096, 4096, 10, 32);
        memset(b + 32, 'a', 32);
        assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), -EBADMSG);
        error = mfree(error);
}

/* What `veritysetup format` writes (when it is installed) is read as cryptsetup reads it: its salt,
 * block count and algorithm. */
static void test_verity_format(void **state) {
        char tmpl[] = "/tmp/test-verity-XXXXXX", cmd[512], line[512], salt[2 * 256 + 1] = "", hash[160] = "";
        _cleanup_free_ char *params = NULL, *error = NULL;
        uint8_t b[512];
        VeritySuperblock sb;
        uint64_t sectors;
        FILE *f;
        int fd;

        if (access("/usr/sbin/veritysetup", X_OK) < 0 && access("/sbin/veritysetup", X_OK) < 0)
                skip();
        assert_non_null(mkdtemp(tmpl));
        snprintf(cmd, sizeof(cmd), "head -c 40960 /dev/urandom > %s/data && PATH=/usr/sbin:/sbin:$PATH "
                 "veritysetup format %s/data %s/hash 2>&1", tmpl, tmpl, tmpl);
        assert_non_null(f = popen(cmd, "r"));
        while (fgets(line, sizeof(line), f)) {
                sscanf(line, "Salt: %512s", salt);
                sscanf(line, "Root hash: %159s", hash);
        }
        assert_int_equal(pclose(f), 0);
        assert_int_equal(strlen(salt), 64);
        snprintf(cmd, sizeof(cmd), "%s/hash", tmpl);
        assert_true((fd = open(cmd, O_RDONLY | O_CLOEXEC)) >= 0);
        assert_int_equal(read(fd, b, sizeof(b)), sizeof(b));
        close(fd);
        assert_int_equal(verity_superblock_parse(b, sizeof(b), &sb, &error), 0);
        assert_int_equal(sb.data_blocks, 10);
        assert_string_equal(sb.algorithm, "sha256");
        assert_int_equal(verity_table_params(&sb, makedev(7, 0), makedev(7, 1), hash, &params, &sectors), 0);
        snprintf(line, sizeof(line), "1 7:0 7:1 4096 4096 10 1 sha256 %s %s", hash, salt);
        assert_string_equal(params, line);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        assert_int_equal(system(cmd), 0);
}

static void test_format(void **state) {
        uint8_t b[2048] = {};

        assert_null(image_format_from_header(b, sizeof(b)));
        memcpy(b, "hsqs", 4);
        assert_string_equal(image_format_from_header(b, sizeof(b)), "squashfs");
        memset(b, 0, 4);
        b[1024] = 0xe2, b[1025] = 0xe1, b[1026] = 0xf5, b[1027] = 0xe0;
        assert_string_equal(image_format_from_header(b, sizeof(b)), "erofs");
        assert_null(image_format_from_header(b, 1000));
}

static Profile *parse(const char *doc, char **ret_error) {
        Profile *p = NULL;

        (void) profile_parse(doc, strlen(doc), "imgtest", "x.json", &p, ret_error);
        return p;
}

static void test_profile(void **state) {
        static const struct {
                const char *doc, *error;
        } bad[] = {
                { DOC(", \"files\": {\"base\": \"image\"}"), "x.json: files.image: files.base \"image\" needs the image's name" },
                { DOC(", \"files\": {\"image\": \"busy\"}"), "x.json: files.image: only with files.base \"image\"" },
                { DOC(", \"files\": {\"base\": \"host\", \"image\": \"busy\"}"), "x.json: files.image: only with files.base \"image\"" },
                { DOC(", \"files\": {\"base\": \"image\", \"image\": \"Busy\"}"),
                  "x.json: files.image: expected NAME or NAME@sha256:DIGEST (NAME: 1-64 of a-z 0-9 . _ -, starting with "
                  "a letter or digit; DIGEST: 64 lower-case hex digits), got \"Busy\"" },
                { DOC(", \"files\": {\"base\": \"image\", \"image\": 3}"), "x.json: files.image: expected a string, got 3" },
                { DOC(", \"files\": {\"base\": \"image\", \"image\": \"busy\", \"read_only\": [\"/opt\"]}"),
                  "x.json: files.read_only: host paths cannot be bound into a base image" },
                { DOC(", \"files\": {\"base\": \"image\", \"image\": \"busy\"}, \"lifetime\": {\"caches\": "
                      "[{\"name\": \"pip\", \"path\": \".cache/pip\"}]}"),
                  "x.json: lifetime.caches: caches are not available on a base image (files.base \"image\")" },
                { DOC(", \"files\": {\"base\": \"image\", \"image\": \"busy\"}, \"pool\": {\"size\": 2}"),
                  "x.json: pool.size: a pool cannot serve a profile on a base image (files.base \"image\")" },
        };
        char *error = NULL;
        Profile *p;

        p = parse(DOC(", \"files\": {\"base\": \"image\", \"image\": \"busy@sha256:" HEX_A "\"}"), &error);
        assert_non_null(p);
        assert_true(p->base_image);
        assert_string_equal(p->image, "busy@sha256:" HEX_A);
        profile_free(p);
        p = parse(DOC(", \"files\": {\"base\": \"host\"}"), &error);
        assert_non_null(p);
        assert_false(p->base_image);
        assert_null(p->image);
        profile_free(p);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                p = parse(bad[i].doc, &error);
                assert_null(p);
                assert_string_equal(error, bad[i].error);
                error = mfree(error);
        }
}

static const Prop *get(const RunPlan *plan, const char *name) {
        return prop_table_get(plan->props, name);
}

static bool has_pair(const Prop *p, const char *src, const char *dst) {
        for (char **s = p ? p->strv : NULL; s && s[0] && s[1]; s += 2)
                if (streq(s[0], src) && streq(s[1], dst))
                        return true;
        return false;
}

static void test_compile(void **state) {
        _cleanup_(profile_freep) Profile *p = parse(DOC(", \"files\": {\"base\": \"image\", \"image\": \"busy\"}"), NULL);
        _cleanup_(profile_freep) Profile *host = parse(DOC(""), NULL);
        _cleanup_(run_plan_freep) RunPlan *plan = NULL, *host_plan = NULL;
        _cleanup_free_ char *text = NULL;
        RunImage img = {
                .name = (char *) "busy", .digest = HEX_A, .root_hash = HEX_B,
                .path = (char *) SBX_IMAGES_DIR "/" HEX_A "/" IMAGE_FILE,
                .verity_path = (char *) SBX_IMAGES_DIR "/" HEX_A "/" IMAGE_VERITY_FILE,
        };
        RunRequest req = { .argv = (char *[]) { (char *) "cat", (char *) "/etc/os-release", NULL },
                           .run_id = (char *) RUN_ID };
        char *error = NULL;
        const Prop *prop;

        assert_non_null(p);
        assert_non_null(host);
        /* no image prepared: refused, never the host's OS */
        assert_int_equal(policy_compile(p, &req, EXEC_PATH, &plan, &error), -EINVAL);
        assert_string_equal(error, "image: no image was prepared for this run");
        error = mfree(error);
        /* a request may not bring an image to a profile on the host's OS, nor another one */
        req.image = (char *) "busy";
        assert_int_equal(run_request_validate(host, &req, &error), -EPERM);
        error = mfree(error);
        req.image = (char *) "other";
        assert_int_equal(run_request_validate(p, &req, &error), -EPERM);
        error = mfree(error);
        req.image = (char *) "busy@sha256:" HEX_A;
        assert_int_equal(run_request_validate(p, &req, NULL), 0);
        req.image = NULL;

        req.run_image = &img;
        assert_int_equal(policy_compile(p, &req, EXEC_PATH, &plan, &error), 0);
        /* the image's shared mount is the run's root, and its unit is what the run requires */
        prop = get(plan, "RootDirectory");
        assert_non_null(prop);
        assert_string_equal(prop->s, "/run/sbx/images/" HEX_A);
        assert_string_equal(plan->image_unit, "sbx-image@" HEX_A ".service");
        assert_null(prop_table_get(plan->props, "RootImage"));
        prop = get(plan, "BindReadOnlyPaths");
        assert_true(has_pair(prop, EXEC_PATH, SBX_HOST_PREFIX_EXEC));
        assert_true(has_pair(prop, SBX_HOST_LIBDIR, SBX_HOST_PREFIX_LIB));
        /* everything a run has on the host's OS is still there: the space and the hardening */
        assert_true(has_pair(get(plan, "BindPaths"), "/run/sbx/space/" RUN_ID "/home", SBX_HOME));
        assert_string_equal(get(plan, "ProtectSystem")->s, "strict");
        assert_true(get(plan, "DynamicUser")->b);
        /* the helper runs through the host's loader */
        assert_string_equal(plan->exec_argv[0], SBX_HOST_PREFIX_LIB "/" SBX_HOST_LDSO);
        assert_string_equal(plan->exec_argv[1], "--library-path");
        assert_string_equal(plan->exec_argv[2], SBX_HOST_PREFIX_LIB);
        assert_string_equal(plan->exec_argv[3], SBX_HOST_PREFIX_EXEC);
        assert_string_equal(plan->figures_argv[3], SBX_HOST_PREFIX_EXEC);
        assert_string_equal(plan->figures_argv[4], "--figures=" SBX_FIGURES_DIR);
        /* the image is part of the policy's digest */
        assert_int_equal(policy_compile(host, &(RunRequest) { .argv = req.argv, .run_id = req.run_id }, EXEC_PATH,
                                        &host_plan, NULL), 0);
        assert_string_not_equal(plan->digest, host_plan->digest);
        assert_null(prop_table_get(host_plan->props, "RootDirectory"));
        assert_null(host_plan->image_unit);
        assert_string_equal(host_plan->exec_argv[0], EXEC_PATH);
        assert_int_equal(prop_table_render_text(plan->props, &text), 0);
        assert_non_null(strstr(text, "\nRootDirectory=/run/sbx/images/" HEX_A "\n"));
        req.run_image = NULL; /* not the request's to free */
}

static void test_record(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = run_record_new(), *back = NULL, *old = NULL;
        _cleanup_free_ char *json = NULL, *json2 = NULL;
        char *error = NULL;

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, "fedcba9876543210fedcba9876543210");
        r->unit = strdup("sbx-imgtest-" RUN_ID ".service");
        r->profile = strdup("imgtest");
        r->policy_digest = strdup("sha256:" HEX_B);
        assert_true(r->unit && r->profile && r->policy_digest);
        r->started_at = 1795948200ULL * USEC_PER_SEC;
        assert_int_equal(run_record_image_init(r, "Bad", HEX_A, true), -EINVAL);
        assert_int_equal(run_record_image_init(r, "busy", HEX_A, true), 0);
        assert_int_equal(run_record_to_json(r, &json), 0);
        assert_non_null(strstr(json, "\"image\""));
        assert_non_null(strstr(json, "\"sha256:" HEX_A "\""));
        assert_int_equal(run_record_from_json(json, &back, NULL), 0);
        assert_non_null(back->image);
        assert_string_equal(back->image->name, "busy");
        assert_string_equal(back->image->digest, "sha256:" HEX_A);
        assert_true(back->image->verity);

        /* a record without the section (older, or a run on the host's OS) stays readable; null is none */
        run_record_image_free(r->image);
        r->image = NULL;
        assert_int_equal(run_record_to_json(r, &json2), 0);
        assert_null(strstr(json2, "\"image\""));
        assert_int_equal(run_record_from_json(json2, &old, NULL), 0);
        assert_null(old->image);
        /* the document without its closing brace, to append a section to */
        while (strlen(json2) > 0 && json2[strlen(json2) - 1] != '}')
                json2[strlen(json2) - 1] = 0;

        /* malformed sections are refused */
        static const char *const bad[] = {
                "\"image\":3", "\"image\":{\"name\":\"busy\",\"digest\":\"sha256:abc\",\"verity\":true}",
                "\"image\":{\"name\":\"busy\",\"digest\":\"" HEX_A "\",\"verity\":true}",
                "\"image\":{\"digest\":\"sha256:" HEX_A "\",\"verity\":true}",
                "\"image\":{\"name\":\"busy\",\"digest\":\"sha256:" HEX_A "\",\"verity\":1}", NULL,
        };
        for (size_t i = 0; bad[i]; i++) {
                _cleanup_free_ char *doc = NULL;
                RunRecord *x = NULL;

                assert_true(asprintf(&doc, "%.*s,%s}", (int) strlen(json2) - 1, json2, bad[i]) > 0);
                assert_int_equal(run_record_from_json(doc, &x, &error), -EBADMSG);
                assert_null(x);
                assert_non_null(strstr(error, "image"));
                error = mfree(error);
        }
        {
                _cleanup_free_ char *doc = NULL;
                RunRecord *x = NULL;

                assert_true(asprintf(&doc, "%.*s,\"image\":null}", (int) strlen(json2) - 1, json2) > 0);
                assert_int_equal(run_record_from_json(doc, &x, NULL), 0);
                assert_null(x->image);
                run_record_free(x);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_ref_parse),
                cmocka_unit_test(test_ref_merge),
                cmocka_unit_test(test_info_json),
                cmocka_unit_test(test_mount),
                cmocka_unit_test(test_verity),
                cmocka_unit_test(test_verity_format),
                cmocka_unit_test(test_format),
                cmocka_unit_test(test_profile),
                cmocka_unit_test(test_compile),
                cmocka_unit_test(test_record),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
