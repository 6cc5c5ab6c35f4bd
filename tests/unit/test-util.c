/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util: run ids, timestamps, size/duration parsing, byte formatting, path normalization checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "macro.h"
#include "unit-test.h"
#include "util.h"

/* ---- run ids ---- */

static int cmp_id(const void *a, const void *b) {
        return strcmp((const char *) a, (const char *) b);
}

static void test_run_id_new(void **state) {
        enum { N = 4096 };
        char (*ids)[RUN_ID_LEN + 1] = calloc(N, sizeof(*ids));

        assert_non_null(ids);
        for (size_t i = 0; i < N; i++) {
                memset(ids[i], 'X', sizeof(ids[i]));
                assert_int_equal(run_id_new(ids[i]), 0);
                assert_int_equal(strlen(ids[i]), RUN_ID_LEN);
                assert_true(run_id_is_valid(ids[i]));
        }
        /* No two alike. */
        qsort(ids, N, sizeof(*ids), cmp_id);
        for (size_t i = 1; i < N; i++)
                assert_string_not_equal(ids[i - 1], ids[i]);
        free(ids);
}

static void test_strv_copy(void **state) {
        char *l[] = { (char *) "a", (char *) "", (char *) "b c", NULL };
        _cleanup_strv_free_ char **c = strv_copy(l), **e = strv_copy(NULL);

        assert_non_null(c);
        assert_int_equal(strv_length(c), 3);
        for (size_t i = 0; i < 3; i++) {
                assert_string_equal(c[i], l[i]);
                assert_ptr_not_equal(c[i], l[i]); /* copies */
        }
        assert_null(c[3]);
        assert_non_null(e);
        assert_null(e[0]);
}

static void test_strv_push_printf(void **state) {
        _cleanup_strv_free_ char **l = NULL;

        assert_int_equal(strv_push_printf(&l, "--a=%d", 1), 0);
        assert_int_equal(strv_push_printf(&l, "%s", ""), 0);
        assert_int_equal(strv_push_printf(&l, "--c=%s:%u", "x", 7U), 0);
        assert_int_equal(strv_length(l), 3);
        assert_string_equal(l[0], "--a=1");
        assert_string_equal(l[1], "");
        assert_string_equal(l[2], "--c=x:7");
        assert_null(l[3]);
}

typedef enum Color { COLOR_RED, COLOR_GREEN, COLOR_BLUE, _COLOR_MAX, _COLOR_INVALID = -EINVAL } Color;
static const char *const color_table[_COLOR_MAX + 1] = { [COLOR_RED] = "red", [COLOR_BLUE] = "blue", NULL };
static const char *color_to_string(Color c);
static Color color_from_string(const char *s);
DEFINE_NAME_TABLE_LOOKUP(color, Color, color_table, _COLOR_MAX);

static void test_name_table(void **state) {
        assert_string_equal(color_to_string(COLOR_RED), "red");
        assert_null(color_to_string(COLOR_GREEN)); /* no name */
        assert_string_equal(color_to_string(COLOR_BLUE), "blue");
        assert_null(color_to_string(_COLOR_MAX));
        assert_null(color_to_string(_COLOR_INVALID));
        assert_int_equal(color_from_string("red"), COLOR_RED);
        assert_int_equal(color_from_string("blue"), COLOR_BLUE);
        assert_int_equal(color_from_string("green"), _COLOR_INVALID);
        assert_int_equal(color_from_string("Red"), _COLOR_INVALID);
        assert_int_equal(color_from_string(""), _COLOR_INVALID);
        assert_int_equal(color_from_string(NULL), _COLOR_INVALID);
}

static void test_run_id_is_valid(void **state) {
        static const struct {
                const char *s;
                bool valid;
        } table[] = {
                { "0123456789abcdef0123456789abcdef", true },
                { "ffffffffffffffffffffffffffffffff", true },
                { "00000000000000000000000000000000", true },
                { "0123456789abcdef0123456789abcde", false },   /* 31 */
                { "0123456789abcdef0123456789abcdef0", false }, /* 33 */
                { "0123456789ABCDEF0123456789abcdef", false },  /* upper case */
                { "0123456789abcdef0123456789abcdeg", false },  /* not hex */
                { "0123456789abcdef0123456789abcde ", false },
                { "/123456789abcdef0123456789abcdef", false },
                { "../../../../../../../../etc/pass", false },
                { "", false },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, run_id_is_valid(table[i].s) == table[i].valid, "'%s'", table[i].s);
        assert_int_equal(failures, 0);
        assert_false(run_id_is_valid(NULL));
}

/* ---- timestamps ---- */

static const struct {
        usec_t t;
        const char *text;
} timestamps[] = {
        { 0, "1970-01-01T00:00:00.000000Z" },
        { 1, "1970-01-01T00:00:00.000001Z" },
        { 1000000, "1970-01-01T00:00:01.000000Z" },
        { 946684799ULL * 1000000 + 999999, "1999-12-31T23:59:59.999999Z" },
        { 951782400ULL * 1000000 + 999999, "2000-02-29T00:00:00.999999Z" },
        { 1709208000ULL * 1000000, "2024-02-29T12:00:00.000000Z" },
        { 1795948200ULL * 1000000 + 123456, "2026-11-29T10:30:00.123456Z" },
        { 2147483648ULL * 1000000 + 500000, "2038-01-19T03:14:08.500000Z" },
        { 4107542399ULL * 1000000, "2100-02-28T23:59:59.000000Z" },
        { 4107542400ULL * 1000000, "2100-03-01T00:00:00.000000Z" },
        { 13574563200ULL * 1000000, "2400-02-29T00:00:00.000000Z" },
        { 253402300799ULL * 1000000 + 999999, "9999-12-31T23:59:59.999999Z" },
};

static void test_format_timestamp(void **state) {
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(timestamps); i++) {
                char buf[TIMESTAMP_MAX] = "";

                check_row(failures, format_timestamp(buf, timestamps[i].t) == buf && streq(buf, timestamps[i].text),
                          "%" PRIu64 " -> '%s', expected '%s'", timestamps[i].t, buf, timestamps[i].text);
        }
        assert_int_equal(failures, 0);
}

static void test_format_timestamp_out_of_range(void **state) {
        char buf[TIMESTAMP_MAX];

        /* Year 10000 and "infinity" do not fit the format. */
        assert_null(format_timestamp(buf, 253402300800ULL * 1000000));
        assert_null(format_timestamp(buf, USEC_INFINITY));
}

static void test_parse_timestamp(void **state) {
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(timestamps); i++) {
                usec_t t = 42;
                int r = parse_timestamp(timestamps[i].text, &t);

                check_row(failures, r == 0 && t == timestamps[i].t, "'%s' -> %d, %" PRIu64 ", expected %" PRIu64,
                          timestamps[i].text, r, t, timestamps[i].t);
        }
        assert_int_equal(failures, 0);
}

static void test_timestamp_round_trip(void **state) {
        /* A spread of values, including odd microseconds. */
        for (usec_t t = 7; t < 250000000000ULL * 1000000; t = t * 3 + 12345) {
                char buf[TIMESTAMP_MAX];
                usec_t back = 0;

                assert_non_null(format_timestamp(buf, t));
                assert_int_equal(strlen(buf), 27);
                assert_int_equal(parse_timestamp(buf, &back), 0);
                assert_int_equal(back, t);
        }
}

static void test_parse_timestamp_malformed(void **state) {
        static const char *const bad[] = {
                "",
                "2026-11-29",
                "2026-11-29T10:30:00Z",
                "2026-11-29T10:30:00.12345Z",
                "2026-11-29T10:30:00.1234567Z",
                "2026-11-29T10:30:00.123456",
                "2026-11-29T10:30:00.123456Zx",
                "2026-11-29T10:30:00.123456Z ",
                " 2026-11-29T10:30:00.123456Z",
                "2026-11-29 10:30:00.123456Z",
                "2026-11-29t10:30:00.123456z",
                "2026-11-29T10:30:00.123456+00:00",
                "2026/11/29T10:30:00.123456Z",
                "26-11-29T10:30:00.123456Z",
                "1969-12-31T23:59:59.999999Z", /* before the epoch */
                "now",
        };
        unsigned failures = 0;
        usec_t t = 42;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse_timestamp(bad[i], &t);

                check_row(failures, r == -EINVAL, "'%s' -> %d (%" PRIu64 "), expected -EINVAL", bad[i], r, t);
        }
        assert_int_equal(failures, 0);
        assert_int_equal(parse_timestamp(NULL, &t), -EINVAL);
        assert_int_equal(t, 42); /* untouched on failure */
}

/* Field values outside their range are not a timestamp either (they must not be normalized into a
 * different instant). */
static void test_parse_timestamp_out_of_range_fields(void **state) {
        static const char *const bad[] = {
                "2026-13-01T00:00:00.000000Z",
                "2026-00-10T00:00:00.000000Z",
                "2026-02-30T00:00:00.000000Z",
                "2026-11-00T00:00:00.000000Z",
                "2026-11-29T24:00:00.000000Z",
                "2026-11-29T10:60:00.000000Z",
                "2026-11-29T10:30:61.000000Z",
                "2026-04-31T00:00:00.000000Z",
                "2100-02-29T00:00:00.000000Z", /* not a leap year */
                "2026-11-29T10:30:60.000000Z", /* no leap seconds */
                "0000-01-01T00:00:00.000000Z",
        };
        unsigned failures = 0;
        usec_t t = 42;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse_timestamp(bad[i], &t);

                check_row(failures, r == -EINVAL, "'%s' -> %d (%" PRIu64 "), expected -EINVAL", bad[i], r, t);
        }
        assert_int_equal(failures, 0);
}

/* Every field is exactly its number of digits: no signs, no blanks (sscanf's %d/%u allow both). */
static void test_parse_timestamp_signs_and_blanks(void **state) {
        static const char *const bad[] = {
                "2026-11-29T10:30:00.-00001Z",
                "2026-11-29T10:30:00.+12345Z",
                "2026-11-29T10:30:00. 12345Z",
                "2026-+1-29T10:30:00.123456Z",
                "2026- 1-29T10:30:00.123456Z",
                "2026-11-29T 1:30:00.123456Z",
        };
        unsigned failures = 0;
        usec_t t = 42;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse_timestamp(bad[i], &t);

                check_row(failures, r == -EINVAL, "'%s' -> %d (%" PRIu64 "), expected -EINVAL", bad[i], r, t);
        }
        assert_int_equal(failures, 0);
}

/* ---- sizes and durations ---- */

static void test_parse_size(void **state) {
        static const struct {
                const char *s;
                uint64_t v;
        } table[] = {
                { "0", 0 },
                { "1", 1 },
                { "4096", 4096 },
                { "4096B", 4096 },
                { "100K", 100ULL << 10 },
                { "512M", 512ULL << 20 },
                { "2G", 2ULL << 30 },
                { "1T", 1ULL << 40 },
                { "007K", 7ULL << 10 },
                { "18446744073709551615", UINT64_MAX },
                { "16777215T", 16777215ULL << 40 },
                { "17179869183G", 17179869183ULL << 30 },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint64_t v = 42;
                int r = parse_size(table[i].s, &v);

                check_row(failures, r == 0 && v == table[i].v, "'%s' -> %d, %" PRIu64, table[i].s, r, v);
        }
        assert_int_equal(failures, 0);
}

static void test_parse_size_refused(void **state) {
        static const struct {
                const char *s;
                int r;
        } table[] = {
                { "18446744073709551616", -ERANGE },
                { "99999999999999999999999", -ERANGE },
                { "16777216T", -ERANGE },
                { "17179869184G", -ERANGE },
                { "17592186044416M", -ERANGE },
                { "", -EINVAL },
                { "K", -EINVAL },
                { "-1", -EINVAL },
                { "-0", -EINVAL },
                { "-1K", -EINVAL },
                { "+5", -EINVAL },
                { " 12", -EINVAL },
                { "12 ", -EINVAL },
                { "12 K", -EINVAL },
                { "12k", -EINVAL },
                { "12KB", -EINVAL },
                { "12KK", -EINVAL },
                { "12P", -EINVAL },
                { "0x10", -EINVAL },
                { "1e3", -EINVAL },
                { "abc", -EINVAL },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint64_t v = 42;
                int r = parse_size(table[i].s, &v);

                check_row(failures, r == table[i].r && v == 42, "'%s' -> %d, expected %d", table[i].s, r, table[i].r);
        }
        assert_int_equal(failures, 0);
        assert_int_equal(parse_size(NULL, &(uint64_t) { 0 }), -EINVAL);
}

/* util.h documents "1.5G" as an accepted size. */
/* Sizes are whole numbers: a fraction is refused, never rounded, and leaves the output alone. */
static void test_parse_size_fraction(void **state) {
        uint64_t v = 42;

        assert_int_equal(parse_size("1.5G", &v), -EINVAL);
        assert_int_equal(parse_size("0.5", &v), -EINVAL);
        assert_int_equal(v, 42);
}

static void test_parse_duration(void **state) {
        static const struct {
                const char *s;
                usec_t v;
        } table[] = {
                { "0", 0 },
                { "30", 30 * USEC_PER_SEC },
                { "90s", 90 * USEC_PER_SEC },
                { "1500ms", 1500 * USEC_PER_MSEC },
                { "5min", 300 * USEC_PER_SEC },
                { "5m", 300 * USEC_PER_SEC },
                { "2h", 7200 * USEC_PER_SEC },
                { "18446744073709s", 18446744073709ULL * USEC_PER_SEC },
                { "5124095576h", 5124095576ULL * 3600 * USEC_PER_SEC },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                usec_t v = 42;
                int r = parse_duration(table[i].s, &v);

                check_row(failures, r == 0 && v == table[i].v, "'%s' -> %d, %" PRIu64, table[i].s, r, v);
        }
        assert_int_equal(failures, 0);
}

static void test_parse_duration_refused(void **state) {
        static const struct {
                const char *s;
                int r;
        } table[] = {
                { "18446744073710s", -ERANGE },
                { "18446744073710", -ERANGE },
                { "5124095577h", -ERANGE },
                { "99999999999999999999999ms", -ERANGE },
                { "", -EINVAL },
                { "s", -EINVAL },
                { "-1s", -EINVAL },
                { "1.5h", -EINVAL },
                { "5 min", -EINVAL },
                { "5mins", -EINVAL },
                { "1d", -EINVAL },
                { "10us", -EINVAL },
                { "10S", -EINVAL },
                { "infinity", -EINVAL },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                usec_t v = 42;
                int r = parse_duration(table[i].s, &v);

                check_row(failures, r == table[i].r && v == 42, "'%s' -> %d, expected %d", table[i].s, r, table[i].r);
        }
        assert_int_equal(failures, 0);
}

static void test_format_bytes(void **state) {
        static const struct {
                uint64_t v;
                const char *text;
        } table[] = {
                { 0, "0B" },
                { 1023, "1023B" },
                { 1024, "1.0K" },
                { 1536, "1.5K" },
                { 512ULL << 20, "512.0M" },
                { 2ULL << 30, "2.0G" },
                { 3ULL << 40, "3.0T" },
                { 1ULL << 50, "1024.0T" },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char buf[32] = "";

                check_row(failures, format_bytes(buf, sizeof(buf), table[i].v) == buf && streq(buf, table[i].text),
                          "%" PRIu64 " -> '%s', expected '%s'", table[i].v, buf, table[i].text);
        }
        assert_int_equal(failures, 0);
}

/* ---- paths ---- */

static void test_path_is_absolute_normalized(void **state) {
        static const struct {
                const char *p;
                bool ok;
        } table[] = {
                { "/", true },
                { "/a", true },
                { "/home/user/project", true },
                { "/a/.b", true },
                { "/a/..b", true },
                { "/a/b.", true },
                { "/a/b..", true },
                { "/a/...", true },
                { "/a b", true },
                { "", false },
                { "a", false },
                { "a/b", false },
                { "./a", false },
                { "//", false },
                { "//a", false },
                { "/a//b", false },
                { "/a/", false },
                { "/a/b/", false },
                { "/.", false },
                { "/..", false },
                { "/./a", false },
                { "/a/.", false },
                { "/a/./b", false },
                { "/a/..", false },
                { "/a/../b", false },
                { "/../etc", false },
        };

        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, path_is_absolute_normalized(table[i].p) == table[i].ok, "'%s'", table[i].p);
        assert_int_equal(failures, 0);
        assert_false(path_is_absolute_normalized(NULL));
}

static void test_exec_arg_escape(void **state) {
        static const struct {
                const char *in, *out;
        } table[] = {
                { "", "" },
                { "plain", "plain" },
                { "$HOME", "$$HOME" },
                { "${X}", "$${X}" },
                { "a$b$", "a$$b$$" },
                { "$$", "$$$$" },
                { "%n \\x", "%n \\x" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *e = NULL;

                assert_int_equal(exec_arg_escape(table[i].in, &e), 0);
                assert_string_equal(e, table[i].out);
        }
}

/* Callers' strings in messages and log lines: one line, control characters visible, long ones cut at a
 * character's start. */
static void test_line_escape(void **state) {
        static const struct {
                const char *in;
                size_t max;
                const char *out;
        } table[] = {
                { "", 0, "" },
                { "plain 'text' % $", 0, "plain 'text' % $" },
                { "a\nb\tc\rd", 0, "a\\nb\\tc\\rd" },
                { "x\\y", 0, "x\\\\y" },
                { "\x1b[31mred\x7f", 0, "\\x1b[31mred\\x7f" },
                { "caf\xc3\xa9 ok", 0, "caf\xc3\xa9 ok" },
                { "abcdef", 6, "abcdef" },
                { "abcdefg", 6, "abcdef..." },
                { "abcd\xc3\xa9" "f", 5, "abcd..." },     /* not inside the UTF-8 character */
                { "\n\n\n", 2, "\\n\\n..." },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *e = NULL;

                assert_int_equal(line_escape(table[i].in, table[i].max, &e), 0);
                if (!streq(e, table[i].out))
                        fail_msg("row %zu: '%s', expected '%s'", i, e, table[i].out);
        }
}

/* ---- clocks ---- */

static void test_clocks(void **state) {
        usec_t a = now_monotonic(), b = now_monotonic();

        assert_true(b >= a);
        /* Later than 2020-01-01. */
        assert_true(now_realtime() > 1577836800ULL * USEC_PER_SEC);
}

static void test_mountinfo_has_mount_point_with(void **state) {
        const char *t =
                "22 1 0:21 / / rw,relatime shared:1 - overlay sbxroot rw\n"
                "35 22 0:33 / /run/sbx/space/0123abcd rw,nosuid shared:20 - tmpfs tmpfs rw,size=1024k\n"
                "36 22 0:4 net:[4026532] /run/sbx/netns/feed\\040beef rw shared:21 - nsfs nsfs rw\n"
                "37 22 0:34 /0123abcd-root /mnt/bound rw - ext4 /dev/vda rw"; /* no final newline */

        assert_true(mountinfo_has_mount_point_with(t, "0123abcd"));
        assert_true(mountinfo_has_mount_point_with(t, "/run/sbx/space/"));
        assert_true(mountinfo_has_mount_point_with(t, "feed beef"));     /* \040 is a space */
        assert_true(mountinfo_has_mount_point_with(t, "/mnt/bound"));
        assert_false(mountinfo_has_mount_point_with(t, "feed\\040beef")); /* escapes are undone */
        assert_false(mountinfo_has_mount_point_with(t, "0123abcd-root")); /* the root field is not the mount point */
        assert_false(mountinfo_has_mount_point_with(t, "tmpfs"));         /* nor the file system type */
        assert_false(mountinfo_has_mount_point_with(t, "ffff"));
        assert_false(mountinfo_has_mount_point_with(t, ""));
        assert_false(mountinfo_has_mount_point_with(NULL, "x"));
        assert_false(mountinfo_has_mount_point_with("garbage", "garbage"));
        assert_false(mountinfo_has_mount_point_with("", "x"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_run_id_new),
                cmocka_unit_test(test_run_id_is_valid),
                cmocka_unit_test(test_strv_copy),
                cmocka_unit_test(test_strv_push_printf),
                cmocka_unit_test(test_name_table),
                cmocka_unit_test(test_format_timestamp),
                cmocka_unit_test(test_format_timestamp_out_of_range),
                cmocka_unit_test(test_parse_timestamp),
                cmocka_unit_test(test_timestamp_round_trip),
                cmocka_unit_test(test_parse_timestamp_malformed),
                cmocka_unit_test(test_parse_timestamp_out_of_range_fields),
                cmocka_unit_test(test_parse_timestamp_signs_and_blanks),
                cmocka_unit_test(test_parse_size),
                cmocka_unit_test(test_parse_size_refused),
                cmocka_unit_test(test_parse_size_fraction),
                cmocka_unit_test(test_parse_duration),
                cmocka_unit_test(test_parse_duration_refused),
                cmocka_unit_test(test_format_bytes),
                cmocka_unit_test(test_path_is_absolute_normalized),
                cmocka_unit_test(test_exec_arg_escape),
                cmocka_unit_test(test_line_escape),
                cmocka_unit_test(test_clocks),
                cmocka_unit_test(test_mountinfo_has_mount_point_with),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
