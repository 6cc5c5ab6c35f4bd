/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mcp-output: streams kept up to the cap and counted, the truncation mark, UTF-8 (cut at a whole character,
 * invalid bytes replaced) or base64, the CommandResult, and the file tools' results from their output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcp-output.h"
#include "mcp-proto.h"
#include "utf8.h"
#include "util.h"

static const char *get_string(json_object *o, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        return json_object_get_string(v);
}

static void test_capture(void **state) {
        McpCapture c = { .cap = 5 };

        assert_int_equal(mcp_capture_add(&c, "abc", 3), 0);
        assert_false(mcp_capture_truncated(&c));
        assert_int_equal(mcp_capture_add(&c, "defgh", 5), 0);
        assert_int_equal(mcp_capture_add(&c, "ij", 2), 0);
        assert_int_equal(c.size, 5);
        assert_int_equal(c.total, 10);
        assert_string_equal(c.data, "abcde");
        assert_true(mcp_capture_truncated(&c));
        mcp_capture_done(&c);

        /* a cap of 0 keeps nothing and counts all */
        c = (McpCapture) {};
        assert_int_equal(mcp_capture_add(&c, "xyz", 3), 0);
        assert_null(c.data);
        assert_int_equal(c.total, 3);
        mcp_capture_done(&c);
}

static void test_utf8(void **state) {
        static const struct { const char *s; bool valid; } rows[] = {
                { "plain", true },
                { "gr\xc3\xbc\xc3\x9f", true },
                { "\xe2\x82\xac \xf0\x9f\x98\x80", true },
                { "\xc3", false },              /* cut short */
                { "\xc0\xaf", false },          /* overlong */
                { "\xed\xa0\x80", false },      /* a surrogate */
                { "\xf4\x90\x80\x80", false },  /* above U+10FFFF */
                { "\xff", false },
        };
        char *t;
        size_t n;

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                assert_int_equal(utf8_valid(rows[i].s, strlen(rows[i].s)), rows[i].valid);
        /* a stream cut inside a character loses the part, not a valid one */
        assert_int_equal(mcp_utf8_cut("ab\xe2\x82", 4), 2);
        assert_int_equal(mcp_utf8_cut("ab\xf0\x9f\x98", 5), 2);
        assert_int_equal(mcp_utf8_cut("ab\xe2\x82\xac", 5), 5);
        assert_int_equal(mcp_utf8_cut("ab\xff", 3), 3);   /* invalid, not cut short: replaced later */
        assert_int_equal(mcp_utf8_text("a\xff" "b\xc3", 4, &t, &n), 0);
        assert_string_equal(t, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
        assert_int_equal(n, 8);
        free(t);
        /* NUL bytes are kept, the length says where the text ends */
        assert_int_equal(mcp_utf8_text("a\0b", 3, &t, &n), 0);
        assert_int_equal(n, 3);
        assert_memory_equal(t, "a\0b", 4);
        free(t);
}

static void test_base64(void **state) {
        static const struct { const char *plain; size_t n; const char *b64; } rows[] = {
                { "", 0, "" },
                { "f", 1, "Zg==" },
                { "fo", 2, "Zm8=" },
                { "foo", 3, "Zm9v" },
                { "\x00\xff\x10", 3, "AP8Q" },
        };
        char *t;
        size_t n;

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                assert_int_equal(mcp_base64_encode(rows[i].plain, rows[i].n, &t), 0);
                assert_string_equal(t, rows[i].b64);
                free(t);
                assert_int_equal(mcp_base64_decode(rows[i].b64, strlen(rows[i].b64), &t, &n), 0);
                assert_int_equal(n, rows[i].n);
                assert_memory_equal(t, rows[i].plain, n);
                free(t);
        }
        assert_int_equal(mcp_base64_decode("Zm9v\nYmFy\n", 10, &t, &n), 0);
        assert_string_equal(t, "foobar");
        free(t);
        STRV_FOREACH(bad, ((char *[]) { "Zg=", "Z===", "Zm9v!A==", "=Zm9", "Zg==Zg==", NULL }))
                assert_int_equal(mcp_base64_decode(*bad, strlen(*bad), &t, &n), -EINVAL);
}

static void test_command_result(void **state) {
        McpCapture out = { .cap = 3 }, err = { .cap = 64 };
        char *lines[] = { "memory limit 64M reached", NULL };
        json_object *r, *s, *v;
        const char *text;

        /* "h€llo": the cap falls inside the euro sign, which is then left out of the text */
        assert_int_equal(mcp_capture_add(&out, "h\xe2\x82\xacllo", 7), 0);
        assert_int_equal(mcp_capture_add(&err, "warn\n", 5), 0);
        assert_int_equal(mcp_command_result(&(McpOutcome) { .run_id = "r1", .exit_code = 137, .stop_reason = "oom-kill",
                                                            .out = &out, .err = &err, .agent_lines = lines }, &r), 0);
        assert_true(json_object_object_get_ex(r, "isError", &v));
        assert_false(json_object_get_boolean(v));
        assert_true(json_object_object_get_ex(r, "structuredContent", &s));
        assert_string_equal(get_string(s, "stdout"), "h");
        assert_string_equal(get_string(s, "stderr"), "warn\n");
        assert_string_equal(get_string(s, "stop_reason"), "oom-kill");
        assert_string_equal(get_string(s, "stdout_bytes"), "7");
        assert_string_equal(get_string(s, "stdout_truncated"), "true");
        assert_string_equal(get_string(s, "stderr_truncated"), "false");
        assert_string_equal(get_string(s, "exit_code"), "137");
        assert_true(json_object_object_get_ex(s, "signal", &v));
        assert_null(v);
        assert_true(json_object_object_get_ex(r, "content", &v));
        text = get_string(json_object_array_get_idx(v, 0), "text");
        assert_string_equal(text, "h\n[... 4 bytes cut: output cap]\nwarn\nsbx: memory limit 64M reached\nexit 137 (oom-kill)");
        json_object_put(r);

        assert_int_equal(mcp_command_result(&(McpOutcome) { .run_id = "r2", .exit_code = -1, .signal = 9,
                                                            .stop_reason = "cancelled", .out = &err, .err = &err }, &r), 0);
        assert_true(json_object_object_get_ex(r, "content", &v));
        text = get_string(json_object_array_get_idx(v, 0), "text");
        assert_non_null(strstr(text, "\nexit signal 9 (cancelled)"));
        json_object_put(r);
        mcp_capture_done(&out);
        mcp_capture_done(&err);

        r = mcp_tool_error("profile 'x' is not one this server offers (default)");
        assert_true(json_object_object_get_ex(r, "isError", &v));
        assert_true(json_object_get_boolean(v));
        assert_false(json_object_object_get_ex(r, "structuredContent", &v));
        json_object_put(r);
}

static void test_read_result(void **state) {
        McpCapture c = { .cap = 64 };
        json_object *r;

        assert_int_equal(mcp_capture_add(&c, "11\nhello world", 14), 0);
        assert_int_equal(mcp_read_result("a.txt", &c, -1, &r), 0);
        assert_string_equal(get_string(r, "content"), "hello world");
        assert_string_equal(get_string(r, "encoding"), "utf-8");
        assert_string_equal(get_string(r, "bytes"), "11");
        assert_string_equal(get_string(r, "truncated"), "false");
        json_object_put(r);
        assert_int_equal(mcp_read_result("a.txt", &c, 1, &r), 0);
        assert_string_equal(get_string(r, "content"), "aGVsbG8gd29ybGQ=");
        json_object_put(r);
        mcp_capture_done(&c);

        /* binary: base64 unless asked otherwise; a larger file: truncated */
        c = (McpCapture) { .cap = 64 };
        assert_int_equal(mcp_capture_add(&c, "1000\n\x7f" "ELF\xff", 10), 0);
        assert_int_equal(mcp_read_result("a.out", &c, -1, &r), 0);
        assert_string_equal(get_string(r, "encoding"), "base64");
        assert_string_equal(get_string(r, "content"), "f0VMRv8=");
        assert_string_equal(get_string(r, "truncated"), "true");
        json_object_put(r);
        mcp_capture_done(&c);

        /* text cut inside a character at the cap: still text, the part left out */
        c = (McpCapture) { .cap = 64 };
        assert_int_equal(mcp_capture_add(&c, "9\nab\xe2\x82", 6), 0);
        assert_int_equal(mcp_read_result("t", &c, -1, &r), 0);
        assert_string_equal(get_string(r, "encoding"), "utf-8");
        assert_string_equal(get_string(r, "content"), "ab");
        assert_string_equal(get_string(r, "truncated"), "true");
        json_object_put(r);
        mcp_capture_done(&c);

        STRV_FOREACH(bad, ((char *[]) { "", "12", "x\nabc", "\nabc", NULL })) {
                c = (McpCapture) { .cap = 64 };
                assert_int_equal(mcp_capture_add(&c, *bad, strlen(*bad)), 0);
                assert_int_equal(mcp_read_result("p", &c, -1, &r), -EBADMSG);
                mcp_capture_done(&c);
        }
}

static void test_list_result(void **state) {
        static const char out[] = "f/12/b.txt\0d/4096/src\0l/7/link\0p/0/fifo\0f/3/cut";
        McpCapture c = { .cap = 128 };
        json_object *r, *entries, *e;

        assert_int_equal(mcp_capture_add(&c, out, sizeof(out) - 1), 0);
        assert_int_equal(mcp_list_result(".", &c, &r), 0);
        assert_true(json_object_object_get_ex(r, "entries", &entries));
        /* sorted by name; the last entry, cut at the cap, left out */
        assert_int_equal(json_object_array_length(entries), 4);
        e = json_object_array_get_idx(entries, 0);
        assert_string_equal(get_string(e, "name"), "b.txt");
        assert_string_equal(get_string(e, "type"), "file");
        assert_string_equal(get_string(e, "size"), "12");
        assert_string_equal(get_string(json_object_array_get_idx(entries, 1), "type"), "other");
        assert_string_equal(get_string(json_object_array_get_idx(entries, 2), "type"), "symlink");
        assert_string_equal(get_string(json_object_array_get_idx(entries, 3), "type"), "directory");
        json_object_put(r);
        mcp_capture_done(&c);

        c = (McpCapture) { .cap = 128 };
        assert_int_equal(mcp_capture_add(&c, "f/x/name\0", 9), 0);
        assert_int_equal(mcp_list_result(".", &c, &r), -EBADMSG);
        mcp_capture_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_capture),
                cmocka_unit_test(test_utf8),
                cmocka_unit_test(test_base64),
                cmocka_unit_test(test_command_result),
                cmocka_unit_test(test_read_result),
                cmocka_unit_test(test_list_result),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
