/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mcp-proto: a line becomes a request, a notification, a response or the JSON-RPC error it is answered with;
 * the methods and log levels by name; the protocol version initialize answers; the messages sent. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcp-proto.h"

/* The answer a bad line gets: its code, and the id it is answered with as JSON text ("null" for none). */
static void check_bad(const char *line, McpErrorCode code, const char *id) {
        McpMessage m = {};
        McpDecodeError e = {};

        assert_int_equal(mcp_message_decode(line, strlen(line), &m, &e), -EINVAL);
        assert_int_equal(e.code, code);
        assert_non_null(e.message);
        assert_string_equal(e.id ? json_object_to_json_string(e.id) : "null", id);
        assert_null(m.root);
        mcp_decode_error_done(&e);
}

static void test_decode_bad(void **state) {
        static const struct { const char *line; McpErrorCode code; const char *id; } rows[] = {
                { "not json", MCP_PARSE_ERROR, "null" },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", MCP_PARSE_ERROR, "null" },       /* cut short */
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", MCP_PARSE_ERROR, "null" },    /* more after it */
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", MCP_PARSE_ERROR, "null" },      /* not UTF-8 */
                { "null", MCP_INVALID_REQUEST, "null" },
                { "42", MCP_INVALID_REQUEST, "null" },
                { "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST, "null" }, /* a batch */
                { "{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "1" },                          /* no jsonrpc */
                { "{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}", MCP_INVALID_REQUEST, "\"a\"" },
                { "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "null" },
                { "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "null" },
                { "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_INVALID_REQUEST, "null" },
                { "{\"jsonrpc\":\"2.0\",\"id\":7}", MCP_INVALID_REQUEST, "7" },                          /* no method */
                { "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":3}", MCP_INVALID_REQUEST, "7" },
                { "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":[1]}", MCP_INVALID_REQUEST, "7" },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                check_bad(rows[i].line, rows[i].code, rows[i].id);
}

static void test_decode_good(void **state) {
        static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":\"x1\",\"method\":\"tools/call\",\"params\":{\"name\":\"run\"}}\r";
        McpMessage m = {};
        McpDecodeError e = {};

        assert_int_equal(mcp_message_decode(req, strlen(req), &m, &e), 0);
        assert_int_equal(m.kind, MCP_KIND_REQUEST);
        assert_string_equal(json_object_get_string(m.id), "x1");
        assert_string_equal(m.method, "tools/call");
        assert_int_equal(m.known, MCP_METHOD_TOOLS_CALL);
        assert_true(json_object_is_type(m.params, json_type_object));
        mcp_message_done(&m);
        assert_null(m.root);

        /* a notification: no id; an unknown method is known as such */
        assert_int_equal(mcp_message_decode("{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}", 32, &m, &e), 0);
        assert_int_equal(m.kind, MCP_KIND_NOTIFICATION);
        assert_null(m.id);
        assert_int_equal(m.known, _MCP_METHOD_INVALID);
        assert_null(m.params);
        mcp_message_done(&m);

        /* the client's answer to a request: ignored, not an error */
        assert_int_equal(mcp_message_decode("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", 36, &m, &e), 0);
        assert_int_equal(m.kind, MCP_KIND_RESPONSE);
        mcp_message_done(&m);

        /* a line of only white space: nothing to answer; a NUL inside: a parse error */
        assert_int_equal(mcp_message_decode(" \t\r", 3, &m, &e), -ENODATA);
        assert_int_equal(mcp_message_decode("{\"jsonrpc\":\"2.0\"\0}", 18, &m, &e), -EINVAL);
        assert_int_equal(e.code, MCP_PARSE_ERROR);
        mcp_decode_error_done(&e);
}

static void test_names(void **state) {
        for (McpMethod i = 0; i < _MCP_METHOD_MAX; i++)
                assert_int_equal(mcp_method_from_string(mcp_method_to_string(i)), i);
        assert_true(mcp_method_is_request(MCP_METHOD_TOOLS_CALL));
        assert_false(mcp_method_is_request(MCP_METHOD_CANCELLED));
        assert_int_equal(mcp_method_from_string("resources/list"), _MCP_METHOD_INVALID);
        assert_int_equal(mcp_log_level_from_string("warning"), MCP_LOG_WARNING);
        assert_int_equal(mcp_log_level_from_string("warn"), _MCP_LOG_INVALID);
        assert_string_equal(mcp_log_level_to_string(MCP_LOG_EMERGENCY), "emergency");
}

static void test_initialize(void **state) {
        static const struct { const char *asked, *answered; } rows[] = {
                { "2025-11-25", "2025-11-25" },
                { "2025-06-18", "2025-06-18" },
                { "2024-11-05", MCP_PROTOCOL_LATEST },
                { "", MCP_PROTOCOL_LATEST },
        };
        json_object *r, *v;

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                json_object *p = json_object_new_object();

                json_object_object_add(p, "protocolVersion", json_object_new_string(rows[i].asked));
                assert_int_equal(mcp_initialize_result(p, "9.9", &r), 0);
                assert_true(json_object_object_get_ex(r, "protocolVersion", &v));
                assert_string_equal(json_object_get_string(v), rows[i].answered);
                json_object_put(r);
                json_object_put(p);
        }
        v = json_tokener_parse("{\"protocolVersion\":2025}");
        assert_int_equal(mcp_initialize_result(v, "9.9", &r), -EINVAL);
        assert_int_equal(mcp_initialize_result(NULL, "9.9", &r), -EINVAL);
        json_object_put(v);

        v = json_tokener_parse("{\"protocolVersion\":\"2025-06-18\"}");
        assert_int_equal(mcp_initialize_result(v, "9.9", &r), 0);
        assert_string_equal(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN),
                            "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{\"listChanged\":false},"
                            "\"logging\":{}},\"serverInfo\":{\"name\":\"sbx-mcp\",\"version\":\"9.9\"}}");
        json_object_put(r);
        json_object_put(v);
}

static void test_format(void **state) {
        json_object *id = json_object_new_int(5), *m;
        char *line;
        size_t len;

        m = mcp_error_new(NULL, MCP_PARSE_ERROR, "bad");
        assert_int_equal(mcp_message_format(m, &line, &len), 0);
        assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad\"}}\n");
        assert_int_equal(len, strlen(line));
        free(line);
        json_object_put(m);

        /* a newline in a value stays escaped: a message is one line */
        m = mcp_response_new(id, json_object_new_string("a\nb/c"));
        assert_int_equal(mcp_message_format(m, &line, &len), 0);
        assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":\"a\\nb/c\"}\n");
        free(line);
        json_object_put(m);

        m = mcp_notification_new("notifications/progress", NULL);
        assert_int_equal(mcp_message_format(m, &line, &len), 0);
        assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n");
        free(line);
        json_object_put(m);
        json_object_put(id);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_decode_bad),
                cmocka_unit_test(test_decode_good),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_initialize),
                cmocka_unit_test(test_format),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
