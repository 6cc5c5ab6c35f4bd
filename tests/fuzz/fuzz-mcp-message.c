/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-mcp's messages (mcp/mcp-proto.c, mcp/mcp-tools.c): a line from the MCP client is decoded into a
 * request or the JSON-RPC error it gets; a tools/call's arguments are decoded by the tool's table, checked
 * against a fixed configuration and turned into the command the tool runs. Every answer is one line. */
#include <errno.h>

#include "fuzz.h"
#include "mcp-proto.h"
#include "mcp-tools.h"

/* An answer the server would send: one line, ending in its only newline. */
static void check_line(json_object *m) {
        char *line = NULL;
        size_t len;

        fuzz_check(m);
        fuzz_check(mcp_message_format(m, &line, &len) >= 0);
        fuzz_check(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1) && strlen(line) == len);
        free(line);
        json_object_put(m);
}

static void fuzz_call(json_object *params) {
        static char *profiles[] = { "default", "coding", NULL };
        static const McpConfig cfg = { .profiles = profiles, .memory_max = 1ULL << 30, .tasks_max = 64,
                                       .timeout_max = 600ULL * 1000000ULL, .output_cap = 65536 };
        McpArgs a = { .encoding = _MCP_ENCODING_INVALID };
        json_object *name, *arguments = NULL;
        char *error = NULL, *sentence = NULL, **cmd = NULL, *data = NULL;
        McpTool tool;
        size_t size;
        int r;

        if (!json_object_object_get_ex(params, "name", &name))
                return;
        tool = mcp_tool_from_string(json_object_get_string(name));
        if (tool < 0)
                return;
        if (json_object_object_get_ex(params, "arguments", &arguments) && !json_object_is_type(arguments, json_type_object))
                return;
        r = mcp_args_decode(tool, arguments, &a, &error);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -ENOMEM);
                fuzz_check(r == -ENOMEM || (error && !strchr(error, '\n')));
                if (error)
                        check_line(mcp_error_new(NULL, MCP_INVALID_PARAMS, error));
                free(error);
                return;
        }
        r = mcp_args_check(tool, &cfg, &a, &sentence);
        fuzz_check(r == 0 || r == -EPERM || r == -ENOMEM);
        fuzz_check(r != -EPERM || sentence);
        free(sentence);
        sentence = NULL;
        if (r == 0 && mcp_args_command(tool, &cfg, &a, &cmd) >= 0)
                fuzz_check(cmd && cmd[0]);
        strv_free(cmd);
        if (r == 0 && tool == MCP_TOOL_WRITE_FILE) {
                r = mcp_args_content(&a, &data, &size, &sentence);
                fuzz_check(r == 0 || r == -EINVAL || r == -EFBIG || r == -ENOMEM);
                fuzz_check(r != 0 || size <= MCP_WRITE_MAX);
                free(data);
                free(sentence);
        }
        mcp_args_done(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        McpMessage m = {};
        McpDecodeError e = {};
        int r;

        if (size > MCP_MESSAGE_MAX)
                return 0;
        r = mcp_message_decode((const char *) data, size, &m, &e);
        if (r == -ENODATA || r == -ENOMEM)
                return 0;
        if (r < 0) {
                fuzz_check(r == -EINVAL);
                fuzz_check(e.code == MCP_PARSE_ERROR || e.code == MCP_INVALID_REQUEST);
                check_line(mcp_error_new(e.id, e.code, e.message));
                mcp_decode_error_done(&e);
                return 0;
        }
        fuzz_check(m.root);
        if (m.kind == MCP_KIND_REQUEST) {
                json_object *result = NULL;

                fuzz_check(m.id && m.method);
                if (m.known == MCP_METHOD_INITIALIZE && mcp_initialize_result(m.params, "0", &result) >= 0)
                        check_line(mcp_response_new(m.id, result));
                if (m.known == MCP_METHOD_TOOLS_CALL && m.params)
                        fuzz_call(m.params);
        }
        mcp_message_done(&m);
        return 0;
}
