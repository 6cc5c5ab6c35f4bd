/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mcp-tools: the tools' table and schemas, a call's arguments decoded (-32602 and its message) and checked
 * against the configuration (the tool error's sentence), the commands the tools run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcp-proto.h"
#include "mcp-tools.h"

static int decode(McpTool tool, const char *json, McpArgs *a, char **error) {
        json_object *o = json ? json_tokener_parse(json) : NULL;
        int r;

        assert_true(!json || o);
        *a = (McpArgs) { .encoding = _MCP_ENCODING_INVALID };
        *error = NULL;
        r = mcp_args_decode(tool, o, a, error);
        json_object_put(o);
        return r;
}

static void test_table(void **state) {
        json_object *list, *tools, *v;

        assert_int_equal(mcp_tools_list(&list), 0);
        assert_true(json_object_object_get_ex(list, "tools", &tools));
        assert_int_equal(json_object_array_length(tools), _MCP_TOOL_MAX);
        for (McpTool t = 0; t < _MCP_TOOL_MAX; t++) {
                json_object *tool = json_object_array_get_idx(tools, t), *schema;

                assert_true(json_object_object_get_ex(tool, "name", &v));
                assert_int_equal(mcp_tool_from_string(json_object_get_string(v)), t);
                assert_true(json_object_object_get_ex(tool, "description", &v));
                /* both schemas parsed (a typo in mcp-schemas.h is a NULL here) and of objects */
                assert_true(json_object_object_get_ex(tool, "inputSchema", &schema));
                assert_true(json_object_object_get_ex(schema, "type", &v));
                assert_string_equal(json_object_get_string(v), "object");
                assert_true(json_object_object_get_ex(tool, "outputSchema", &schema));
                assert_true(json_object_object_get_ex(schema, "type", &v));
                assert_string_equal(json_object_get_string(v), "object");
                schema = mcp_tool_output_schema(t);
                assert_non_null(schema);
                json_object_put(schema);
        }
        json_object_put(list);
        assert_int_equal(mcp_tool_from_string("exec"), _MCP_TOOL_INVALID);
}

static void test_decode(void **state) {
        static const struct { McpTool tool; const char *json, *error; } bad[] = {
                { MCP_TOOL_RUN, NULL, "arguments: give exactly one of argv and script" },
                { MCP_TOOL_RUN, "{\"argv\":[\"a\"],\"script\":\"b\"}", "arguments: give exactly one of argv and script" },
                { MCP_TOOL_RUN, "{\"argv\":\"ls\"}", "arguments: argv: expected an array, got \"ls\"" },
                { MCP_TOOL_RUN, "{\"argv\":[]}", "arguments: argv: expected at least one string" },
                { MCP_TOOL_RUN, "{\"argv\":[1]}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"tasks\":0}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"tasks\":\"9\"}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"memory\":\"lots\"}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"timeout\":\"soon\"}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"env\":{\"A=B\":\"c\"}}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"env\":{\"A\":1}}", NULL },
                { MCP_TOOL_RUN, "{\"script\":\"x\",\"cwd\":\"/\"}", "arguments: cwd: unknown key" },
                { MCP_TOOL_SANDBOX_EXEC, "{\"argv\":[\"ls\"]}", NULL },        /* no sandbox_id */
                { MCP_TOOL_WRITE_FILE, "{\"sandbox_id\":\"s\",\"path\":\"a\"}", NULL },  /* no content */
                { MCP_TOOL_WRITE_FILE, "{\"sandbox_id\":\"s\",\"path\":\"\",\"content\":\"\"}", NULL },
                { MCP_TOOL_READ_FILE, "{\"sandbox_id\":\"s\",\"path\":\"a\",\"encoding\":\"latin1\"}", NULL },
                { MCP_TOOL_SHOW_RUN, "{}", NULL },
                { MCP_TOOL_SANDBOX_REMOVE, "{\"sandbox_id\":null}", NULL },
        };
        McpArgs a;
        char *error;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(decode(bad[i].tool, bad[i].json, &a, &error), -EINVAL);
                assert_non_null(error);
                if (bad[i].error)
                        assert_string_equal(error, bad[i].error);
                free(error);
        }

        assert_int_equal(decode(MCP_TOOL_RUN, "{\"script\":\"make\",\"memory\":\"512M\",\"tasks\":64,\"timeout\":\"90s\","
                                "\"env\":{\"CC\":\"gcc\"},\"stdin\":\"in\",\"profile\":\"coding\"}", &a, &error), 0);
        assert_string_equal(a.script, "make");
        assert_int_equal(a.memory, 512ULL << 20);
        assert_int_equal(a.tasks, 64);
        assert_int_equal(a.timeout, 90 * USEC_PER_SEC);
        assert_string_equal(a.env[0], "CC=gcc");
        assert_null(a.env[1]);
        assert_string_equal(a.stdin_text, "in");
        assert_string_equal(a.profile, "coding");
        assert_int_equal(a.encoding, _MCP_ENCODING_INVALID);
        mcp_args_done(&a);

        assert_int_equal(decode(MCP_TOOL_READ_FILE, "{\"sandbox_id\":\"s\",\"path\":\"a\",\"encoding\":\"base64\"}", &a,
                                &error), 0);
        assert_int_equal(a.encoding, MCP_ENCODING_BASE64);
        mcp_args_done(&a);
}

static void test_check(void **state) {
        char dir[] = "/tmp/test-mcp-XXXXXX", other[] = "/tmp/test-mcp-XXXXXX", link[64], file[64];
        char *profiles[] = { "default", "coding", NULL }, *workspaces[] = { dir, NULL };
        McpConfig cfg = { .profiles = profiles, .workspaces = workspaces, .memory_max = 1ULL << 30, .tasks_max = 100,
                          .timeout_max = 60 * USEC_PER_SEC, .output_cap = 1024 };
        static const struct { const char *json, *sentence; } refused[] = {
                { "{\"script\":\"x\",\"profile\":\"root\"}", "profile 'root' is not one this server offers (default, coding)" },
                { "{\"script\":\"x\",\"memory\":\"2G\"}", "memory: 2.0G is above the highest ceiling this server allows (1.0G)" },
                { "{\"script\":\"x\",\"tasks\":101}", "tasks: 101 is above the highest ceiling this server allows (100)" },
                { "{\"script\":\"x\",\"timeout\":\"2min\"}", "timeout: 120s is above the highest this server allows (60s)" },
        };
        char *sentence = NULL, *json;
        McpArgs a;

        assert_non_null(mkdtemp(dir));
        assert_non_null(mkdtemp(other));
        snprintf(link, sizeof(link), "%s/ws", other);
        snprintf(file, sizeof(file), "%s/f", other);
        assert_int_equal(symlink(dir, link), 0);
        fclose(fopen(file, "w"));

        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                assert_int_equal(decode(MCP_TOOL_RUN, refused[i].json, &a, &sentence), 0);
                assert_int_equal(mcp_args_check(MCP_TOOL_RUN, &cfg, &a, &sentence), -EPERM);
                assert_string_equal(sentence, refused[i].sentence);
                free(sentence);
                mcp_args_done(&a);
        }
        /* a path that does not exist: the same sentence as any other path not given */
        assert_int_equal(decode(MCP_TOOL_RUN, "{\"script\":\"x\",\"workspace\":\"/nonexistent-mcp\"}", &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_RUN, &cfg, &a, &sentence), -EPERM);
        assert_true(asprintf(&json, "workspace: '/nonexistent-mcp' is not one of the directories this server was given (%s)", dir) > 0);
        assert_string_equal(sentence, json);
        free(sentence);
        free(json);
        mcp_args_done(&a);
        /* a host directory other than those given, a file */
        assert_true(asprintf(&json, "{\"workspace\":\"%s\"}", other) > 0);
        assert_int_equal(decode(MCP_TOOL_SANDBOX_CREATE, json, &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_SANDBOX_CREATE, &cfg, &a, &sentence), -EPERM);
        assert_non_null(strstr(sentence, "is not one of the directories this server was given"));
        free(sentence);
        free(json);
        mcp_args_done(&a);
        assert_true(asprintf(&json, "{\"script\":\"x\",\"workspace\":\"%s\"}", file) > 0);
        assert_int_equal(decode(MCP_TOOL_RUN, json, &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_RUN, &cfg, &a, &sentence), -EPERM);
        /* the same sentence for a file as for a directory: nothing said of what the host path is */
        assert_non_null(strstr(sentence, "is not one of the directories this server was given"));
        free(sentence);
        free(json);
        mcp_args_done(&a);

        /* a symlink to the one given is that one, resolved; none named: the first, and the first profile */
        assert_true(asprintf(&json, "{\"argv\":[\"true\"],\"workspace\":\"%s\",\"memory\":\"1G\"}", link) > 0);
        assert_int_equal(decode(MCP_TOOL_RUN, json, &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_RUN, &cfg, &a, &sentence), 0);
        assert_string_equal(a.workspace, dir);
        assert_string_equal(a.profile, "default");
        free(json);
        mcp_args_done(&a);
        assert_int_equal(decode(MCP_TOOL_SANDBOX_CREATE, "{\"profile\":\"coding\"}", &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_SANDBOX_CREATE, &cfg, &a, &sentence), 0);
        assert_string_equal(a.workspace, dir);
        assert_string_equal(a.profile, "coding");
        mcp_args_done(&a);

        /* no workspace configured: none may be named; no export directory: export refused */
        cfg.workspaces = NULL;
        assert_int_equal(decode(MCP_TOOL_RUN, "{\"script\":\"x\",\"workspace\":\"/tmp\"}", &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_RUN, &cfg, &a, &sentence), -EPERM);
        assert_string_equal(sentence, "workspace: '/tmp': this server was given no workspace directory");
        free(sentence);
        mcp_args_done(&a);
        assert_int_equal(decode(MCP_TOOL_EXPORT, "{\"sandbox_id\":\"sb\"}", &a, &sentence), 0);
        assert_int_equal(mcp_args_check(MCP_TOOL_EXPORT, &cfg, &a, &sentence), -EPERM);
        assert_non_null(strstr(sentence, "export sb: this server was given no export directory"));
        free(sentence);
        mcp_args_done(&a);

        /* a string that goes to sbxd as a D-Bus string, which sd-bus refuses (a noncharacter, as JSON may
         * carry), is said by its name; the file tools' path goes as a command's argument, in bytes */
        static const struct { McpTool tool; const char *json, *sentence; } strings[] = {
                { MCP_TOOL_SANDBOX_CREATE, "{\"name\":\"a\\ufffeb\"}", "name: not valid UTF-8" },
                { MCP_TOOL_SHOW_RUN, "{\"run_id\":\"\\uffff\"}", "run_id: not valid UTF-8" },
                { MCP_TOOL_EXPORT, "{\"sandbox_id\":\"sb\",\"path\":\"out\\ufdd0\"}", "path: not valid UTF-8" },
                { MCP_TOOL_READ_FILE, "{\"sandbox_id\":\"sb\",\"path\":\"f\\ufffe\"}", NULL },
                { MCP_TOOL_SHOW_RUN, "{\"run_id\":\"caf\\u00e9\"}", NULL },
        };
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
                assert_int_equal(decode(strings[i].tool, strings[i].json, &a, &sentence), 0);
                if (strings[i].sentence) {
                        assert_int_equal(mcp_args_check(strings[i].tool, &cfg, &a, &sentence), -EPERM);
                        assert_non_null(strstr(sentence, strings[i].sentence));
                        free(sentence);
                } else
                        assert_int_equal(mcp_args_check(strings[i].tool, &cfg, &a, &sentence), 0);
                mcp_args_done(&a);
        }

        assert_int_equal(unlink(link), 0);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(rmdir(other), 0);
        assert_int_equal(rmdir(dir), 0);
}

static void test_command(void **state) {
        char *profiles[] = { "default", NULL };
        McpConfig cfg = { .profiles = profiles, .output_cap = 4096 };
        char **cmd, *error;
        McpArgs a;

        assert_int_equal(decode(MCP_TOOL_RUN, "{\"script\":\"echo hi\"}", &a, &error), 0);
        assert_int_equal(mcp_args_command(MCP_TOOL_RUN, &cfg, &a, &cmd), 0);
        assert_string_equal(cmd[0], "/bin/sh");
        assert_string_equal(cmd[1], "-c");
        assert_string_equal(cmd[2], "echo hi");
        assert_null(cmd[3]);
        strv_free(cmd);
        mcp_args_done(&a);

        /* cwd: a shell changes into it, then runs the command as it is */
        assert_int_equal(decode(MCP_TOOL_SANDBOX_EXEC, "{\"sandbox_id\":\"s\",\"argv\":[\"ls\",\"-l\"],\"cwd\":\"src\"}",
                                &a, &error), 0);
        assert_int_equal(mcp_args_command(MCP_TOOL_SANDBOX_EXEC, &cfg, &a, &cmd), 0);
        assert_string_equal(cmd[4], "src");
        assert_string_equal(cmd[5], "ls");
        assert_string_equal(cmd[6], "-l");
        assert_null(cmd[7]);
        strv_free(cmd);
        mcp_args_done(&a);

        /* the file tools: the path is an argument of a fixed script, never part of it */
        assert_int_equal(decode(MCP_TOOL_READ_FILE, "{\"sandbox_id\":\"s\",\"path\":\"$(reboot)\"}", &a, &error), 0);
        assert_int_equal(mcp_args_command(MCP_TOOL_READ_FILE, &cfg, &a, &cmd), 0);
        assert_null(strstr(cmd[2], "reboot"));
        assert_string_equal(cmd[4], "/home/sbx");     /* from there, whatever the command's own start */
        assert_string_equal(cmd[5], "$(reboot)");
        assert_string_equal(cmd[6], "4096");
        strv_free(cmd);
        mcp_args_done(&a);
        assert_int_equal(decode(MCP_TOOL_LIST_FILES, "{\"sandbox_id\":\"s\"}", &a, &error), 0);
        assert_int_equal(mcp_args_command(MCP_TOOL_LIST_FILES, &cfg, &a, &cmd), 0);
        assert_string_equal(cmd[5], ".");
        strv_free(cmd);
        assert_int_equal(mcp_args_command(MCP_TOOL_SHOW_RUN, &cfg, &a, &cmd), -EINVAL);
        mcp_args_done(&a);
}

static void test_content(void **state) {
        char *data, *sentence = NULL, *error, *json, *big;
        size_t size;
        McpArgs a;

        assert_int_equal(decode(MCP_TOOL_WRITE_FILE, "{\"sandbox_id\":\"s\",\"path\":\"p\",\"content\":\"AAEC/w==\","
                                "\"encoding\":\"base64\"}", &a, &error), 0);
        assert_int_equal(mcp_args_content(&a, &data, &size, &sentence), 0);
        assert_int_equal(size, 4);
        assert_memory_equal(data, "\x00\x01\x02\xff", 4);
        free(data);
        mcp_args_done(&a);

        assert_int_equal(decode(MCP_TOOL_WRITE_FILE, "{\"sandbox_id\":\"s\",\"path\":\"p\",\"content\":\"not base64!\","
                                "\"encoding\":\"base64\"}", &a, &error), 0);
        assert_int_equal(mcp_args_content(&a, &data, &size, &sentence), -EINVAL);
        assert_string_equal(sentence, "write_file p: content is not base64");
        free(sentence);
        mcp_args_done(&a);

        /* over the cap: refused, with the cap said */
        big = malloc(MCP_WRITE_MAX + 2);
        memset(big, 'a', MCP_WRITE_MAX + 1);
        big[MCP_WRITE_MAX + 1] = 0;
        assert_true(asprintf(&json, "{\"sandbox_id\":\"s\",\"path\":\"p\",\"content\":\"%s\"}", big) > 0);
        assert_int_equal(decode(MCP_TOOL_WRITE_FILE, json, &a, &error), 0);
        assert_int_equal(mcp_args_content(&a, &data, &size, &sentence), -EFBIG);
        assert_string_equal(sentence, "write_file p: 8388609 bytes, more than the 8 MiB a call writes");
        free(sentence);
        free(json);
        free(big);
        mcp_args_done(&a);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_decode),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_command),
                cmocka_unit_test(test_content),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
