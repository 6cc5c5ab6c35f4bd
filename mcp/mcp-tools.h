/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbx-mcp's tools: their table (name, description, input and output JSON Schema), a call's arguments
 * decoded strictly by the input format, then checked against what the user configured on the command line
 * (profiles, workspaces, ceilings), and the command each tool runs. Pure but for the workspace's path,
 * resolved on this machine's file system. */

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "util.h"

#define MCP_WRITE_MAX (8U * 1024U * 1024U)      /* bytes write_file writes */
#define MCP_OUTPUT_CAP_DEFAULT (64U * 1024U)
#define MCP_SCRIPT_SHELL "/bin/sh"

typedef enum McpTool {
        MCP_TOOL_RUN,
        MCP_TOOL_SANDBOX_CREATE,
        MCP_TOOL_SANDBOX_EXEC,
        MCP_TOOL_SANDBOX_REMOVE,
        MCP_TOOL_WRITE_FILE,
        MCP_TOOL_READ_FILE,
        MCP_TOOL_LIST_FILES,
        MCP_TOOL_EXPORT,
        MCP_TOOL_SHOW_RUN,
        _MCP_TOOL_MAX,
        _MCP_TOOL_INVALID = -EINVAL,
} McpTool;

typedef enum McpEncoding {
        MCP_ENCODING_UTF8,
        MCP_ENCODING_BASE64,
        _MCP_ENCODING_MAX,
        _MCP_ENCODING_INVALID = -EINVAL,
} McpEncoding;

/* The user's configuration: the command line. */
typedef struct McpConfig {
        char **profiles;        /* those tools may use, the first the default; never empty */
        char **workspaces;      /* absolute, without symlinks; the first the default; NULL: none */
        char *export_dir;       /* NULL: export refused */
        uint64_t memory_max;    /* 0: the profile's ceiling only */
        uint64_t tasks_max;
        usec_t timeout_max;
        uint64_t output_cap;    /* bytes of stdout and of stderr kept per call */
        bool keep_sandboxes;
} McpConfig;

/* A call's arguments, every tool's in one struct (a tool's table names the keys it takes). */
typedef struct McpArgs {
        char **argv;
        char *script;
        char *profile, *workspace, *name;
        uint64_t memory, tasks;
        usec_t timeout;
        char **env;             /* "NAME=VALUE" */
        char *stdin_text;
        char *sandbox_id, *path, *content, *cwd, *run_id;
        McpEncoding encoding;   /* _MCP_ENCODING_INVALID: not given */
} McpArgs;

void mcp_args_done(McpArgs *a);

const char *mcp_tool_to_string(McpTool t);
McpTool mcp_tool_from_string(const char *s);
/* tools/list's result: every tool with its schemas. 0 or -ENOMEM. */
int mcp_tools_list(json_object **ret);
/* The tool's outputSchema, parsed (a new reference), or NULL. */
json_object *mcp_tool_output_schema(McpTool t);

/* A call's "arguments" (NULL: none) into *ret by the tool's format. 0; -EINVAL with the message for
 * -32602 in *ret_error; -ENOMEM. */
int mcp_args_decode(McpTool tool, json_object *arguments, McpArgs *ret, char **ret_error);
/* The arguments against the configuration, the defaults filled in (profile, workspace), the workspace
 * resolved. 0; -EPERM with the sentence of the tool error in *ret_sentence; -ENOMEM. */
int mcp_args_check(McpTool tool, const McpConfig *cfg, McpArgs *a, char **ret_sentence);
/* The command line the tool runs in the sandbox (run, sandbox_exec: the caller's; the file tools: a small
 * fixed script with the path as its argument). 0 or -ENOMEM. */
int mcp_args_command(McpTool tool, const McpConfig *cfg, const McpArgs *a, char ***ret);
/* The bytes write_file writes: the content decoded (base64) or as it is. 0; -EINVAL (not base64) or
 * -EFBIG (over MCP_WRITE_MAX) with the sentence in *ret_sentence; -ENOMEM. */
int mcp_args_content(const McpArgs *a, char **ret, size_t *ret_size, char **ret_sentence);
