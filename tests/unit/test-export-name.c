/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export/name.c: which names may leave, how refused ones are shown, archive member names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "macro.h"
#include "name.h"
#include "unit-test.h"

static void test_names(void **state) {
        char long_name[300];

        assert_true(export_name_is_valid("a.txt"));
        assert_true(export_name_is_valid("résumé ✓.md"));
        assert_true(export_name_is_valid(".hidden"));
        assert_false(export_name_is_valid(""));
        assert_false(export_name_is_valid("."));
        assert_false(export_name_is_valid(".."));
        assert_false(export_name_is_valid("a/b"));
        assert_false(export_name_is_valid("a\nb"));
        assert_false(export_name_is_valid("a\x1b[31m"));
        assert_false(export_name_is_valid("del\x7f"));
        assert_false(export_name_is_valid("\xff"));
        assert_false(export_name_is_valid("\xc0\xaf"));         /* overlong '/' */
        assert_false(export_name_is_valid("\xed\xa0\x80"));     /* a surrogate */
        assert_false(export_name_is_valid("\xf4\x90\x80\x80")); /* past U+10FFFF */
        assert_false(export_name_is_valid("\xe2\x9c"));         /* cut short */
        memset(long_name, 'a', 255);
        long_name[255] = 0;
        assert_true(export_name_is_valid(long_name));
        long_name[255] = 'a';
        long_name[256] = 0;
        assert_false(export_name_is_valid(long_name));
}

static void test_escape(void **state) {
        static const struct {
                const char *in, *out;
        } rows[] = {
                { "plain", "plain" },
                { "é", "é" },
                { "a\nb", "a\\x0ab" },
                { "\xff\xfe", "\\xff\\xfe" },
                { "back\\slash", "back\\x5cslash" },
                { "\xe2\x9c", "\\xe2\\x9c" },
        };
        int failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char *s = export_name_escape(rows[i].in);
                check_row(failures, s && streq(s, rows[i].out), "%s -> %s", rows[i].out, strna(s));
                free(s);
        }
        assert_int_equal(failures, 0);
}

static void test_entry_paths(void **state) {
        static const struct {
                const char *in, *out, *reason;
        } rows[] = {
                { "a/b.txt", "a/b.txt", NULL },
                { "./a//b/", "a/b", NULL },
                { "a/./b", "a/b", NULL },
                { "dir/", "dir", NULL },
                { "..a/b..", "..a/b..", NULL },
                { "../evil", NULL, "climbs out (..)" },
                { "a/../../evil", NULL, "climbs out (..)" },
                { "a/..", NULL, "climbs out (..)" },
                { "/abs", NULL, "absolute path" },
                { "//abs", NULL, "absolute path" },
                { "", NULL, "name" },
                { "./", NULL, "name" },
                { ".", NULL, "name" },
                { "a\\..\\evil", NULL, "name" },
                { "a\tb", NULL, "name" },
                { "\xff", NULL, "name" },
        };
        int failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char *out = NULL;
                const char *reason = NULL;
                int r = export_entry_path_normalize(rows[i].in, &out, &reason);

                if (rows[i].out)
                        check_row(failures, r == 0 && streq_ptr(out, rows[i].out), "%s -> %s", rows[i].in, strna(out));
                else
                        check_row(failures, r == -EINVAL && streq_ptr(reason, rows[i].reason), "%s: %s", rows[i].in,
                                  strna(reason));
                free(out);
        }
        assert_int_equal(failures, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_entry_paths),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
