/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* profile-load: the search path, precedence between directories, masking, and listing the effective
 * profiles; each test gets its own mkdtemp() tree with three directories in priority order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile-load.h"
#include "unit-test.h"

#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

/* A document the parser accepts: only the required keys. */
#define MINIMAL_PROFILE                                                                               \
        "{ \"version\": 1, \"description\": \"test\", \"network\": { \"mode\": \"none\" },\n"            \
        "  \"resources\": { \"memory\": \"64M\", \"tasks\": 8, \"wall_time\": \"1min\" } }\n"

typedef struct Fixture {
        char root[64];
        char *etc, *run, *usr; /* highest priority first */
        char *dirs[4];
        char *saved_env;
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(Fixture));
        const char *e = getenv("SBX_PROFILES_PATH");

        if (!f)
                return -1;
        strcpy(f->root, "/tmp/test-profile-load.XXXXXX");
        if (!mkdtemp(f->root))
                goto fail;
        if (asprintf(&f->etc, "%s/etc", f->root) < 0 || asprintf(&f->run, "%s/run", f->root) < 0 ||
            asprintf(&f->usr, "%s/usr", f->root) < 0)
                goto fail;
        if (mkdir(f->etc, 0755) < 0 || mkdir(f->run, 0755) < 0 || mkdir(f->usr, 0755) < 0)
                goto fail;
        f->dirs[0] = f->etc;
        f->dirs[1] = f->run;
        f->dirs[2] = f->usr;
        if (e && !(f->saved_env = strdup(e)))
                goto fail;
        *state = f;
        return 0;
fail:
        free(f->etc);
        free(f->run);
        free(f->usr);
        free(f);
        return -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_DP || flag == FTW_D)
                return rmdir(path) < 0 ? -1 : 0;
        return unlink(path) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        int r;

        if (f->saved_env)
                (void) setenv("SBX_PROFILES_PATH", f->saved_env, 1);
        else
                (void) unsetenv("SBX_PROFILES_PATH");
        r = nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(f->etc);
        free(f->run);
        free(f->usr);
        free(f->saved_env);
        free(f);
        return r < 0 ? -1 : 0;
}

static char *join(const char *dir, const char *fn) {
        char *p = NULL;

        assert_true(asprintf(&p, "%s/%s", dir, fn) > 0);
        return p;
}

static void put(const char *dir, const char *fn, const char *text) {
        _cleanup_free_ char *p = join(dir, fn);
        FILE *out = fopen(p, "we");

        assert_non_null(out);
        assert_true(fputs(text, out) >= 0);
        assert_int_equal(fclose(out), 0);
}

static void put_symlink(const char *dir, const char *fn, const char *target) {
        _cleanup_free_ char *p = join(dir, fn);

        assert_int_equal(symlink(target, p), 0);
}

static void assert_strv_equal(char *const *a, char *const *b) {
        size_t i;

        assert_non_null(a);
        for (i = 0; a[i] && b[i]; i++)
                assert_string_equal(a[i], b[i]);
        assert_null(a[i]);
        assert_null(b[i]);
}

/* ---- the search path ---- */

static void test_search_path(void **state) {
        static const struct {
                const char *env; /* NULL: unset */
                char *expected[5];
        } table[] = {
                { NULL, { "/etc/sbx/profiles.d", "/run/sbx/profiles.d", "/usr/lib/sbx/profiles.d" } },
                { "", { "/etc/sbx/profiles.d", "/run/sbx/profiles.d", "/usr/lib/sbx/profiles.d" } },
                { "/a", { "/a" } },
                { "/a:/b/c", { "/a", "/b/c" } },
                /* empty and relative entries are dropped: a relative one would depend on the cwd */
                { "/a::b:./c:/d:", { "/a", "/d" } },
                { ":", { NULL } },
                { "relative", { NULL } },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_strv_free_ char **l = NULL;

                if (table[i].env)
                        assert_int_equal(setenv("SBX_PROFILES_PATH", table[i].env, 1), 0);
                else
                        assert_int_equal(unsetenv("SBX_PROFILES_PATH"), 0);
                assert_int_equal(profile_search_path(&l), 0);
                assert_strv_equal(l, table[i].expected);
        }
}

/* ---- finding one profile ---- */

static void test_find_precedence(void **state) {
        Fixture *f = *state;
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *missing = join(f->root, "nosuch");
        char *with_missing[] = { missing, f->run, f->usr, NULL };

        put(f->etc, "x.json", "{}");
        put(f->run, "x.json", "{}");
        put(f->usr, "x.json", "{}");
        put(f->run, "y.json", "{}");
        put(f->usr, "y.json", "{}");
        put(f->usr, "z.json", "{}");

        assert_int_equal(profile_find(f->dirs, "x", &p1), 0);
        assert_true(strneq(p1, f->etc, strlen(f->etc)));
        assert_string_equal(p1 + strlen(f->etc), "/x.json");
        assert_int_equal(profile_find(f->dirs, "y", &p2), 0);
        assert_true(strneq(p2, f->run, strlen(f->run)));
        assert_string_equal(p2 + strlen(f->run), "/y.json");
        assert_int_equal(profile_find(f->dirs, "z", &p3), 0);
        assert_true(strneq(p3, f->usr, strlen(f->usr)));
        assert_string_equal(p3 + strlen(f->usr), "/z.json");

        /* a directory that does not exist is skipped */
        assert_int_equal(profile_find(with_missing, "x", &p4), 0);
        assert_true(strneq(p4, f->run, strlen(f->run)));

        /* without ret_path */
        assert_int_equal(profile_find(f->dirs, "x", NULL), 0);

        assert_int_equal(profile_find(f->dirs, "nosuch", NULL), -ENOENT);
        assert_int_equal(profile_find((char *[]) { NULL }, "x", NULL), -ENOENT);
        assert_int_equal(profile_find(NULL, "x", NULL), -ENOENT);
        /* only NAME.json counts */
        put(f->etc, "w", "{}");
        put(f->etc, "w.json~", "{}");
        assert_int_equal(profile_find(f->dirs, "w", NULL), -ENOENT);
}

static void test_find_invalid_name(void **state) {
        Fixture *f = *state;
        static const char *const bad[] = { "", "X", "a-b", "../usr/x", "x.json", "a/b", ".x" };
        unsigned failures = 0;

        put(f->etc, "X.json", "{}");
        put(f->etc, "a-b.json", "{}");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *path = (char *) 0x1;
                int r = profile_find(f->dirs, bad[i], &path);

                check_row(failures, r == -EINVAL && path == (char *) 0x1, "'%s' -> %d", bad[i], r);
        }
        assert_int_equal(failures, 0);
        assert_int_equal(profile_find(f->dirs, NULL, NULL), -EINVAL);
}

static void test_find_masked(void **state) {
        Fixture *f = *state;
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *target = join(f->usr, "v.json");

        /* a symlink to /dev/null masks the lower ones */
        put_symlink(f->etc, "x.json", "/dev/null");
        put(f->usr, "x.json", MINIMAL_PROFILE);
        assert_int_equal(profile_find(f->dirs, "x", &p1), -ERFKILL);
        assert_non_null(p1);
        assert_true(strneq(p1, f->etc, strlen(f->etc)));
        assert_string_equal(p1 + strlen(f->etc), "/x.json");

        /* so does an empty file */
        put(f->run, "y.json", "");
        put(f->usr, "y.json", MINIMAL_PROFILE);
        assert_int_equal(profile_find(f->dirs, "y", &p2), -ERFKILL);
        assert_true(strneq(p2, f->run, strlen(f->run)));

        /* a mask with nothing below it: still masked, not merely missing */
        put_symlink(f->usr, "z.json", "/dev/null");
        assert_int_equal(profile_find(f->dirs, "z", &p3), -ERFKILL);
        assert_int_equal(profile_find(f->dirs, "z", NULL), -ERFKILL);

        /* a symlink to a real profile is a profile */
        put(f->usr, "v.json", MINIMAL_PROFILE);
        put_symlink(f->etc, "u.json", target);
        assert_int_equal(profile_find(f->dirs, "u", &p4), 0);
        assert_true(strneq(p4, f->etc, strlen(f->etc)));
        {
                _cleanup_(profile_freep) Profile *pu = NULL;
                _cleanup_free_ char *eu = NULL;

                assert_int_equal(profile_load(f->dirs, "u", &pu, &eu), 0); /* and loads */
                assert_string_equal(pu->name, "u");
        }

        /* a mask in a lower directory does not mask a higher one */
        put(f->etc, "t.json", MINIMAL_PROFILE);
        put_symlink(f->usr, "t.json", "/dev/null");
        assert_int_equal(profile_find(f->dirs, "t", NULL), 0);
}

/* ---- loading ---- */

static void test_load_errors(void **state) {
        Fixture *f = *state;
        Profile *p = (Profile *) 0x1;
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *expected = NULL,
                            *mask = join(f->etc, "x.json");

        assert_int_equal(profile_load(f->dirs, "nosuch", &p, &e1), -ENOENT);
        assert_string_equal(e1, "profile: no profile named 'nosuch'");

        put_symlink(f->etc, "x.json", "/dev/null");
        put(f->usr, "x.json", MINIMAL_PROFILE);
        assert_int_equal(profile_load(f->dirs, "x", &p, &e2), -ERFKILL);
        assert_true(asprintf(&expected, "profile: 'x' is masked by %s", mask) > 0);
        assert_string_equal(e2, expected);

        assert_int_equal(profile_load(f->dirs, "Offline", &p, &e3), -EINVAL);
        assert_string_equal(e3, "profile: 'Offline' is not a valid profile name");
        assert_int_equal(profile_load(f->dirs, NULL, &p, &e4), -EINVAL);
        assert_string_equal(e4, "profile: 'n/a' is not a valid profile name");

        /* found but unreadable (a dangling symlink): a broken profile (-EIO), not a missing one */
        {
                _cleanup_free_ char *e5 = NULL;

                put_symlink(f->etc, "dangling.json", "/nonexistent/sbx-profile.json");
                assert_int_equal(profile_load(f->dirs, "dangling", &p, &e5), -EIO);
                assert_non_null(strstr(e5, "dangling.json: cannot read"));
        }

        /* the same without a message */
        assert_int_equal(profile_load(f->dirs, "nosuch", &p, NULL), -ENOENT);
        assert_int_equal(profile_load(f->dirs, "x", &p, NULL), -ERFKILL);
        assert_int_equal(profile_load(f->dirs, "../x", &p, NULL), -EINVAL);
        assert_ptr_equal(p, (Profile *) 0x1);
}

static void test_load_file_errors(void **state) {
        Fixture *f = *state;
        _cleanup_free_ char *broken = join(f->etc, "broken.json");
        static const struct {
                const char *fn;
                int r;
                const char *message; /* after "PATH: " */
        } table[] = {
                { "x.txt", -EINVAL, "a profile file name must end in .json" },
                { ".json", -EINVAL, "a profile file name must end in .json" },
                { "json", -EINVAL, "a profile file name must end in .json" },
                { "Bad-name.json", -EINVAL, "'Bad-name' is not a valid profile name (expected [a-z][a-z0-9_]{0,31})" },
                { "missing.json", -ENOENT, "cannot read: No such file or directory" },
                { "big.json", -EFBIG, "cannot read: larger than 1 MiB" },
        };
        _cleanup_free_ char *filler = malloc(1024 * 1024 + 2);
        unsigned failures = 0;

        assert_non_null(filler);
        memset(filler, ' ', 1024 * 1024 + 1);
        filler[1024 * 1024 + 1] = 0;
        put(f->etc, "big.json", filler);
        put(f->etc, "x.txt", MINIMAL_PROFILE);
        put(f->etc, "Bad-name.json", MINIMAL_PROFILE);

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *path = join(f->etc, table[i].fn), *e = NULL, *expected = NULL;
                Profile *p = (Profile *) 0x1;
                int r;

                assert_true(asprintf(&expected, "%s: %s", path, table[i].message) > 0);
                r = profile_load_file(path, &p, &e);
                check_row(failures, r == table[i].r && streq_ptr(e, expected) && p == (Profile *) 0x1,
                          "%s -> %d '%s', expected %d '%s'", table[i].fn, r, strna(e), table[i].r, expected);
                r = profile_load_file(path, &p, NULL);
                check_row(failures, r == table[i].r, "%s (no message) -> %d", table[i].fn, r);
        }
        assert_int_equal(failures, 0);

        /* a document error names the file */
        put(f->etc, "broken.json", "{ \"version\": 1,\n");
        {
                _cleanup_free_ char *e = NULL;
                Profile *p = (Profile *) 0x1;

                assert_int_equal(profile_load_file(broken, &p, &e), -EINVAL);
                assert_non_null(e);
                assert_true(strneq(e, broken, strlen(broken)));
                assert_int_equal(e[strlen(broken)], ':');
                assert_ptr_equal(p, (Profile *) 0x1);
        }
}

static void test_load_ok(void **state) {
        Fixture *f = *state;
        _cleanup_(profile_freep) Profile *a = NULL, *b = NULL;
        _cleanup_free_ char *e = NULL, *path = join(f->run, "mini.json");

        put(f->run, "mini.json", MINIMAL_PROFILE);
        put(f->usr, "mini.json", "this is not JSON: the one in run/ wins");
        if (profile_load(f->dirs, "mini", &a, &e) < 0)
                fail_msg("profile_load: %s", strna(e));
        assert_null(e);
        assert_string_equal(a->name, "mini");
        assert_string_equal(a->path, path);
        assert_string_equal(a->description, "test");
        assert_int_equal(a->memory_max, 64ULL << 20);
        assert_int_equal(a->tasks_max, 8);
        assert_int_equal(a->runtime_max, 60 * USEC_PER_SEC);
        assert_int_equal(strlen(a->digest), 71);
        assert_memory_equal(a->digest, "sha256:", 7);

        /* the same file read directly: the same profile, the same digest */
        assert_int_equal(profile_load_file(path, &b, NULL), 0);
        assert_string_equal(b->name, "mini");
        assert_string_equal(a->digest, b->digest);
}

/* ---- listing ---- */

static void test_enumerate(void **state) {
        Fixture *f = *state;
        _cleanup_strv_free_ char **names = NULL, **paths = NULL, **ignored = NULL, **names2 = NULL,
                                 **paths2 = NULL;
        _cleanup_free_ char *p_a = join(f->usr, "a.json"), *p_b = join(f->etc, "b.json"),
                            *p_d = join(f->run, "d.json"), *p_e = join(f->usr, "e.json"),
                            *p_z = join(f->etc, "zz_9.json"), *i1 = join(f->etc, "Bad.json"),
                            *i2 = join(f->etc, "a-b.json"), *i3 = join(f->usr, "9lives.json"),
                            *missing = join(f->root, "nosuch");
        char *with_missing[] = { missing, f->etc, f->run, f->usr, NULL };

        /* etc: the administrator's */
        put(f->etc, "b.json", "{}");
        put(f->etc, "zz_9.json", "{}");
        put(f->etc, "Bad.json", "{}");
        put(f->etc, "a-b.json", "{}");
        put(f->etc, ".hidden.json", "{}");
        put(f->etc, "notes.txt", "");
        put(f->etc, ".json", "{}");
        put_symlink(f->etc, "masked.json", "/dev/null");
        /* run */
        put(f->run, "c.json", "");
        put(f->run, "d.json", "{}");
        /* usr: the vendor's */
        put(f->usr, "e.json", "{}");
        put(f->usr, "c.json", "{}");
        put(f->usr, "masked.json", "{}");
        put(f->usr, "b.json", "{}");
        put(f->usr, "a.json", "{}");
        put(f->usr, "9lives.json", "{}");

        assert_int_equal(profile_enumerate(f->dirs, &names, &paths, &ignored), 0);
        assert_strv_equal(names, ARGV("a", "b", "d", "e", "zz_9"));
        assert_strv_equal(paths, ARGV(p_a, p_b, p_d, p_e, p_z));
        assert_strv_equal(ignored, ARGV(i1, i2, i3));

        /* without the ignored list; a missing directory is skipped */
        assert_int_equal(profile_enumerate(with_missing, &names2, &paths2, NULL), 0);
        assert_strv_equal(names2, ARGV("a", "b", "d", "e", "zz_9"));
        assert_strv_equal(paths2, ARGV(p_a, p_b, p_d, p_e, p_z));
}

static void test_enumerate_empty(void **state) {
        Fixture *f = *state;
        _cleanup_strv_free_ char **names = NULL, **paths = NULL, **ignored = NULL, **n2 = NULL, **p2 = NULL,
                                 **i2 = NULL;

        assert_int_equal(profile_enumerate(f->dirs, &names, &paths, &ignored), 0);
        assert_non_null(names);
        assert_null(names[0]);
        assert_non_null(paths);
        assert_null(paths[0]);
        assert_non_null(ignored);
        assert_null(ignored[0]);

        assert_int_equal(profile_enumerate((char *[]) { NULL }, &n2, &p2, &i2), 0);
        assert_null(n2[0]);
        assert_null(p2[0]);
        assert_null(i2[0]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_search_path, setup, teardown),
                cmocka_unit_test_setup_teardown(test_find_precedence, setup, teardown),
                cmocka_unit_test_setup_teardown(test_find_invalid_name, setup, teardown),
                cmocka_unit_test_setup_teardown(test_find_masked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_load_file_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_load_ok, setup, teardown),
                cmocka_unit_test_setup_teardown(test_enumerate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_enumerate_empty, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
