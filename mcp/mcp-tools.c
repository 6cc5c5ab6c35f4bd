/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tools' table, a call's arguments decoded by its tool's format (json-doc tables) and checked against
 * the user's configuration, and the command line each tool runs. */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "command.h"
#include "json-doc.h"
#include "mcp-output.h"
#include "mcp-proto.h"
#include "mcp-schemas.h"
#include "mcp-tools.h"
#include "policy.h"
#include "utf8.h"

/* ---- decoding ---------------------------------------------------------------------------------- */

/* char **: an array of strings, at least one */
static int dispatch_strv(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        char ***l = field;
        size_t n;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r >= 0 && n == 0)
                r = json_doc_fail(jd, p, "expected at least one string");
        if (r >= 0)
                r = json_doc_get_string_array(jd, p, v, l);
        return r;
}

/* char **: an object of strings, as "NAME=VALUE" entries */
static int dispatch_env(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        char ***l = field;

        if (!json_object_is_type(v, json_type_object))
                return json_doc_fail_got(jd, p, v, "expected an object of strings");
        json_object_object_foreach(v, name, value) {
                const char *s;
                char *e;
                int r;

                r = json_doc_get_string(jd, JSON_KEY(p, name), value, &s);
                if (r < 0)
                        return r;
                if (!environment_name_is_valid(name, strlen(name)))
                        return json_doc_fail(jd, JSON_KEY(p, name), "not a variable name (printable ASCII but '=', "
                                             "not starting with a digit)");
                if (asprintf(&e, "%s=%s", name, s) < 0)
                        return -ENOMEM;
                if (strv_push_take(l, e) < 0) {
                        free(e);
                        return -ENOMEM;
                }
        }
        return 0;
}

static const char *const encoding_names[] = { [MCP_ENCODING_UTF8] = "utf-8", [MCP_ENCODING_BASE64] = "base64", NULL };
static const JsonDocChoice encoding_choice = { encoding_names, "one of utf-8, base64" };
static const JsonDocMin at_least_one = { 1, "1" };

#define F_STRING(key, field, flags) { key, json_doc_dispatch_string, offsetof(McpArgs, field), flags }
#define F_COMMAND                                                                                            \
        { "argv", dispatch_strv, offsetof(McpArgs, argv) }, F_STRING("script", script, 0),                    \
        { "env", dispatch_env, offsetof(McpArgs, env) }, F_STRING("stdin", stdin_text, 0),                    \
        { "timeout", json_doc_dispatch_duration, offsetof(McpArgs, timeout), 0, &at_least_one }
#define F_CEILINGS                                                                                           \
        F_STRING("profile", profile, 0), F_STRING("workspace", workspace, 0),                                  \
        { "memory", json_doc_dispatch_size, offsetof(McpArgs, memory), 0, &at_least_one },                    \
        { "tasks", json_doc_dispatch_uint64, offsetof(McpArgs, tasks), 0, &at_least_one }
#define F_SANDBOX F_STRING("sandbox_id", sandbox_id, JSON_DOC_MANDATORY)
#define F_ENCODING { "encoding", json_doc_dispatch_choice, offsetof(McpArgs, encoding), 0, &encoding_choice }

static const JsonDocField fields_run[] = { F_COMMAND, F_CEILINGS, {} };
static const JsonDocField fields_create[] = { F_CEILINGS, F_STRING("name", name, 0), {} };
static const JsonDocField fields_exec[] = { F_SANDBOX, F_COMMAND, F_STRING("cwd", cwd, 0), {} };
static const JsonDocField fields_remove[] = { F_SANDBOX, {} };
static const JsonDocField fields_write[] = { F_SANDBOX, F_STRING("path", path, JSON_DOC_MANDATORY),
                                             F_STRING("content", content, JSON_DOC_MANDATORY), F_ENCODING, {} };
static const JsonDocField fields_read[] = { F_SANDBOX, F_STRING("path", path, JSON_DOC_MANDATORY), F_ENCODING, {} };
static const JsonDocField fields_path[] = { F_SANDBOX, F_STRING("path", path, 0), {} };
static const JsonDocField fields_show[] = { F_STRING("run_id", run_id, JSON_DOC_MANDATORY), {} };

typedef struct ToolInfo {
        const char *name;
        const char *description;
        const char *input, *output;
        const JsonDocField *fields;
} ToolInfo;

static const ToolInfo tools[_MCP_TOOL_MAX] = {
        [MCP_TOOL_RUN] = { "run",
                "Run one command (argv, or a shell script) in a fresh sandbox of a profile the user allowed; returns "
                "its exit status, stop reason, stdout and stderr (each capped) and sbx's lines about limits met and "
                "network access denied.", IN_RUN, OUT_COMMAND, fields_run },
        [MCP_TOOL_SANDBOX_CREATE] = { "sandbox_create",
                "Create a long-lived sandbox for several commands and files; removed when this session ends.",
                IN_SANDBOX_CREATE, OUT_SANDBOX_CREATE, fields_create },
        [MCP_TOOL_SANDBOX_EXEC] = { "sandbox_exec", "Run a command in a sandbox made by sandbox_create.",
                IN_SANDBOX_EXEC, OUT_COMMAND, fields_exec },
        [MCP_TOOL_SANDBOX_REMOVE] = { "sandbox_remove", "Remove a sandbox made by sandbox_create.",
                IN_SANDBOX_REMOVE, OUT_SANDBOX_REMOVE, fields_remove },
        [MCP_TOOL_WRITE_FILE] = { "write_file",
                "Write a file inside a sandbox (its parent directories made as needed); content is UTF-8 text or "
                "base64.", IN_WRITE_FILE, OUT_WRITE_FILE, fields_write },
        [MCP_TOOL_READ_FILE] = { "read_file",
                "Read a file inside a sandbox: UTF-8 text when it is, else base64; capped at the output cap.",
                IN_READ_FILE, OUT_READ_FILE, fields_read },
        [MCP_TOOL_LIST_FILES] = { "list_files", "List a directory inside a sandbox.", IN_LIST_FILES, OUT_LIST_FILES,
                fields_path },
        [MCP_TOOL_EXPORT] = { "export",
                "Deliver a sandbox's directory (default ~/out) through sbx's export review into the directory the "
                "user configured; returns what was delivered, refused and held for the user's approval.",
                IN_EXPORT, OUT_EXPORT, fields_path },
        [MCP_TOOL_SHOW_RUN] = { "show_run", "A run's record: its profile, limits, outcome, network and export.",
                IN_SHOW_RUN, OUT_SHOW_RUN, fields_show },
};

const char *mcp_tool_to_string(McpTool t) {
        return t >= 0 && t < _MCP_TOOL_MAX ? tools[t].name : NULL;
}

McpTool mcp_tool_from_string(const char *s) {
        for (McpTool t = 0; s && t < _MCP_TOOL_MAX; t++)
                if (streq(tools[t].name, s))
                        return t;
        return _MCP_TOOL_INVALID;
}

json_object *mcp_tool_output_schema(McpTool t) {
        return t >= 0 && t < _MCP_TOOL_MAX ? json_tokener_parse(tools[t].output) : NULL;
}

int mcp_tools_list(json_object **ret) {
        _cleanup_(json_object_putp) json_object *list = json_object_new_array(), *result = json_object_new_object();

        if (!list || !result)
                return -ENOMEM;
        for (McpTool t = 0; t < _MCP_TOOL_MAX; t++) {
                json_object *o = json_object_new_object(), *in = json_tokener_parse(tools[t].input),
                            *out = json_tokener_parse(tools[t].output);

                if (!o || !in || !out || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        json_object_put(in);
                        json_object_put(out);
                        return -ENOMEM;
                }
                if (json_object_object_add(o, "name", json_object_new_string(tools[t].name)) < 0 ||
                    json_object_object_add(o, "description", json_object_new_string(tools[t].description)) < 0 ||
                    json_object_object_add(o, "inputSchema", in) < 0 ||
                    json_object_object_add(o, "outputSchema", out) < 0)
                        return -ENOMEM;
        }
        if (json_object_object_add(result, "tools", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(result);
        return 0;
}

void mcp_args_done(McpArgs *a) {
        strv_free(a->argv);
        strv_free(a->env);
        free(a->script);
        free(a->profile);
        free(a->workspace);
        free(a->name);
        free(a->stdin_text);
        free(a->sandbox_id);
        free(a->path);
        free(a->content);
        free(a->cwd);
        free(a->run_id);
        *a = (McpArgs) { .encoding = _MCP_ENCODING_INVALID };
}

static bool takes_command(McpTool tool) {
        return tool == MCP_TOOL_RUN || tool == MCP_TOOL_SANDBOX_EXEC;
}

int mcp_args_decode(McpTool tool, json_object *arguments, McpArgs *ret, char **ret_error) {
        _cleanup_(mcp_args_done) McpArgs a = { .encoding = _MCP_ENCODING_INVALID };
        JsonDoc jd = { .file = "arguments" };
        int r;

        assert(tool >= 0 && tool < _MCP_TOOL_MAX);
        if (!arguments)
                arguments = json_object_new_object();
        else
                json_object_get(arguments);
        if (!arguments)
                return -ENOMEM;
        r = json_doc_dispatch(&jd, NULL, arguments, tools[tool].fields, &a);
        json_object_put(arguments);
        if (r >= 0 && takes_command(tool) && !a.argv == !a.script)
                r = json_doc_fail(&jd, NULL, "give exactly one of argv and script");
        if (r >= 0 && (tool == MCP_TOOL_READ_FILE || tool == MCP_TOOL_WRITE_FILE) && isempty(a.path))
                r = json_doc_fail(&jd, NULL, "path: expected a path, got \"\"");
        if (r == -EINVAL) {
                *ret_error = TAKE_PTR(jd.error);
                return r;
        }
        free(jd.error);
        if (r < 0)
                return r;
        *ret = a;
        a = (McpArgs) {};
        return 0;
}

/* ---- checks against the configuration --------------------------------------------------------- */

_printf_(2, 3) static int refuse(char **ret_sentence, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(ret_sentence, fmt, ap);
        va_end(ap);
        return n < 0 ? -ENOMEM : -EPERM;
}

/* "a, b, c" */
static char *strv_join_comma(char **l) {
        size_t size = 0;
        char *s = NULL;
        FILE *f = open_memstream(&s, &size);

        if (!f)
                return NULL;
        STRV_FOREACH(i, l)
                fprintf(f, "%s%s", i == l ? "" : ", ", *i);
        if (fclose(f) != 0)
                return mfree(s);
        return s;
}

static int check_profile(const McpConfig *cfg, McpArgs *a, char **ret_sentence) {
        _cleanup_free_ char *list = NULL;

        if (!a->profile) {
                a->profile = strdup(cfg->profiles[0]);
                return a->profile ? 0 : -ENOMEM;
        }
        if (strv_contains(cfg->profiles, a->profile))
                return 0;
        list = strv_join_comma(cfg->profiles);
        if (!list)
                return -ENOMEM;
        return refuse(ret_sentence, "profile '%s' is not one this server offers (%s)", a->profile, list);
}

/* The workspace named (resolved as sbxctl resolves it) must be one of those configured; none named: the first.
 * A path that is not one of them gets the same sentence whether it exists, is a file or cannot be read: the
 * model learns nothing of the host's files from it (the configured ones are directories, resolved at start). */
static int check_workspace(const McpConfig *cfg, McpArgs *a, char **ret_sentence) {
        _cleanup_free_ char *list = NULL;
        char *resolved;

        if (!a->workspace) {
                if (!cfg->workspaces || !cfg->workspaces[0])
                        return 0;
                a->workspace = strdup(cfg->workspaces[0]);
                return a->workspace ? 0 : -ENOMEM;
        }
        if (!cfg->workspaces || !cfg->workspaces[0])
                return refuse(ret_sentence, "workspace: '%s': this server was given no workspace directory", a->workspace);
        resolved = realpath(a->workspace, NULL);
        if (resolved && strv_contains(cfg->workspaces, resolved)) {
                free(a->workspace);
                a->workspace = resolved;
                return 0;
        }
        free(resolved);
        list = strv_join_comma(cfg->workspaces);
        if (!list)
                return -ENOMEM;
        return refuse(ret_sentence, "workspace: '%s' is not one of the directories this server was given (%s)",
                      a->workspace, list);
}

static int check_ceilings(const McpConfig *cfg, const McpArgs *a, char **ret_sentence) {
        char b1[32], b2[32];

        if (cfg->memory_max > 0 && a->memory > cfg->memory_max)
                return refuse(ret_sentence, "memory: %s is above the highest ceiling this server allows (%s)",
                              format_bytes(b1, sizeof(b1), a->memory), format_bytes(b2, sizeof(b2), cfg->memory_max));
        if (cfg->tasks_max > 0 && a->tasks > cfg->tasks_max)
                return refuse(ret_sentence, "tasks: %" PRIu64 " is above the highest ceiling this server allows (%" PRIu64 ")",
                              a->tasks, cfg->tasks_max);
        if (cfg->timeout_max > 0 && a->timeout > cfg->timeout_max)
                return refuse(ret_sentence, "timeout: %" PRIu64 "s is above the highest this server allows (%" PRIu64 "s)",
                              (a->timeout + USEC_PER_SEC - 1) / USEC_PER_SEC, (cfg->timeout_max + USEC_PER_SEC - 1) / USEC_PER_SEC);
        return 0;
}

/* The command line and environment within what execve() takes (sbxd checks it again, against the run's) */
static int check_command(const McpConfig *cfg, const McpArgs *a, char **ret_sentence) {
        _cleanup_strv_free_ char **cmd = NULL;
        _cleanup_free_ char *error = NULL;
        struct rlimit rl;
        int r;

        r = mcp_args_command(MCP_TOOL_RUN, cfg, a, &cmd);
        if (r < 0)
                return r;
        if (getrlimit(RLIMIT_STACK, &rl) < 0)
                rl.rlim_cur = COMMAND_STACK_DEFAULT;
        r = command_check(cmd, a->env, rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_cur, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret_sentence, "%s", error ?: strerror(-r));
        return 0;
}

/* The arguments that reach sbxd as D-Bus strings, which sd-bus takes in UTF-8 without noncharacters only
 * (JSON lets "\ufffe" through): said by name, as sbxctl says it, rather than a call that cannot be built.
 * (profile and workspace must be among the configured ones; a sandbox_id among this server's; the file
 * tools' path goes as a command's argument, in bytes.) */
static int check_strings(McpTool tool, const McpArgs *a, char **ret_sentence) {
        const struct { const char *key, *value; } strings[] = {
                { "name", a->name },
                { "run_id", a->run_id },
                { "path", tool == MCP_TOOL_EXPORT ? a->path : NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(strings); i++)
                if (strings[i].value && !utf8_valid_dbus(strings[i].value, strlen(strings[i].value)))
                        return refuse(ret_sentence, "%s: not valid UTF-8 (sbxd takes names and paths in UTF-8 only)",
                                      strings[i].key);
        return 0;
}

int mcp_args_check(McpTool tool, const McpConfig *cfg, McpArgs *a, char **ret_sentence) {
        int r;

        r = check_strings(tool, a, ret_sentence);
        if (r < 0)
                return r;
        switch (tool) {
        case MCP_TOOL_RUN:
        case MCP_TOOL_SANDBOX_CREATE:
                r = check_profile(cfg, a, ret_sentence);
                if (r >= 0)
                        r = check_workspace(cfg, a, ret_sentence);
                if (r >= 0)
                        r = check_ceilings(cfg, a, ret_sentence);
                if (r >= 0 && tool == MCP_TOOL_RUN)
                        r = check_command(cfg, a, ret_sentence);
                return r;
        case MCP_TOOL_SANDBOX_EXEC:
                r = check_ceilings(cfg, a, ret_sentence);
                if (r >= 0)
                        r = check_command(cfg, a, ret_sentence);
                return r;
        case MCP_TOOL_EXPORT:
                if (!cfg->export_dir)
                        return refuse(ret_sentence, "export %s: this server was given no export directory "
                                      "(--export-dir): the directory what passes review goes into", a->sandbox_id);
                return 0;
        case MCP_TOOL_SANDBOX_REMOVE:
        case MCP_TOOL_WRITE_FILE:
        case MCP_TOOL_READ_FILE:
        case MCP_TOOL_LIST_FILES:
        case MCP_TOOL_SHOW_RUN:
                return 0;
        case _MCP_TOOL_MAX:
        case _MCP_TOOL_INVALID:
                break;
        }
        return -EINVAL;
}

/* ---- the commands ---------------------------------------------------------------------------- */

/* The file tools' scripts: "$1" the sandbox's HOME (a command starts in its workspace), "$2" the path,
 * resolved by the sandbox's own view from there. */
#define WRITE_SCRIPT "cd -- \"$1\" && d=$(dirname -- \"$2\") && mkdir -p -- \"$d\" && cat > \"$2\""
/* the file's size on the first line, then at most $3 of its bytes */
#define READ_SCRIPT                                                                                          \
        "cd -- \"$1\" || exit 1; "                                                                            \
        "if ! test -e \"$2\"; then echo \"$2: No such file or directory\" >&2; exit 1; fi; "                    \
        "if ! test -f \"$2\"; then echo \"$2: not a regular file\" >&2; exit 1; fi; "                           \
        "wc -c < \"$2\" && head -c \"$3\" < \"$2\""
/* TYPE/SIZE/NAME and a NUL per entry (a name has no '/') */
#define LIST_SCRIPT "cd -- \"$1\" && cd -- \"$2\" && exec find . -mindepth 1 -maxdepth 1 -printf '%y/%s/%f\\0'"
/* sandbox_exec with cwd */
#define CWD_SCRIPT "cd -- \"$1\" || exit 126; shift; exec \"$@\""

/* a copy of s appended to *l */
static int extend(char ***l, const char *s) {
        char *c = strdup(s);

        if (!c || strv_push_take(l, c) < 0) {
                free(c);
                return -ENOMEM;
        }
        return 0;
}

int mcp_args_command(McpTool tool, const McpConfig *cfg, const McpArgs *a, char ***ret) {
        _cleanup_strv_free_ char **cmd = NULL;
        char cap[24];

        switch (tool) {
        case MCP_TOOL_RUN:
        case MCP_TOOL_SANDBOX_EXEC:
                if (tool == MCP_TOOL_SANDBOX_EXEC && a->cwd)
                        cmd = strv_new(MCP_SCRIPT_SHELL, "-c", CWD_SCRIPT, "sh", a->cwd);
                else
                        cmd = strv_copy(NULL);
                if (!cmd)
                        return -ENOMEM;
                if (a->script && (extend(&cmd, MCP_SCRIPT_SHELL) < 0 || extend(&cmd, "-c") < 0 ||
                                  extend(&cmd, a->script) < 0))
                        return -ENOMEM;
                STRV_FOREACH(s, a->argv)
                        if (extend(&cmd, *s) < 0)
                                return -ENOMEM;
                break;
        case MCP_TOOL_WRITE_FILE:
                cmd = strv_new(MCP_SCRIPT_SHELL, "-c", WRITE_SCRIPT, "sh", SBX_HOME, a->path);
                break;
        case MCP_TOOL_READ_FILE:
                snprintf(cap, sizeof(cap), "%" PRIu64, cfg->output_cap);
                cmd = strv_new(MCP_SCRIPT_SHELL, "-c", READ_SCRIPT, "sh", SBX_HOME, a->path, cap);
                break;
        case MCP_TOOL_LIST_FILES:
                cmd = strv_new(MCP_SCRIPT_SHELL, "-c", LIST_SCRIPT, "sh", SBX_HOME, a->path ?: ".");
                break;
        case MCP_TOOL_SANDBOX_CREATE:
        case MCP_TOOL_SANDBOX_REMOVE:
        case MCP_TOOL_EXPORT:
        case MCP_TOOL_SHOW_RUN:
        case _MCP_TOOL_MAX:
        case _MCP_TOOL_INVALID:
                return -EINVAL;
        }
        if (!cmd)
                return -ENOMEM;
        *ret = TAKE_PTR(cmd);
        return 0;
}

int mcp_args_content(const McpArgs *a, char **ret, size_t *ret_size, char **ret_sentence) {
        size_t size;
        char *data;
        int r;

        if (a->encoding == MCP_ENCODING_BASE64) {
                r = mcp_base64_decode(a->content, strlen(a->content), &data, &size);
                if (r == -EINVAL)
                        return refuse(ret_sentence, "write_file %s: content is not base64", a->path) == -ENOMEM ? -ENOMEM : -EINVAL;
                if (r < 0)
                        return r;
        } else {
                size = strlen(a->content);
                data = strdup(a->content);
                if (!data)
                        return -ENOMEM;
        }
        if (size > MCP_WRITE_MAX) {
                free(data);
                return refuse(ret_sentence, "write_file %s: %zu bytes, more than the %u MiB a call writes", a->path, size,
                              MCP_WRITE_MAX / 1024 / 1024) == -ENOMEM ? -ENOMEM : -EFBIG;
        }
        *ret = data;
        *ret_size = size;
        return 0;
}
