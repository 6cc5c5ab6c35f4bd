/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The JSON Schemas of the tools' inputs and outputs (docs/mcp.md), as JSON text. Included by mcp-tools.c
 * only. */

#define S_STR "{\"type\":\"string\"}"
#define S_INT "{\"type\":\"integer\"}"
#define S_BOOL "{\"type\":\"boolean\"}"
#define S_STRV "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"
#define S_NULLABLE_INT "{\"type\":[\"integer\",\"null\"]}"

#define IN_COMMAND                                                                                           \
        "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,"                         \
        "\"description\":\"the command line (give argv or script)\"},"                                         \
        "\"script\":{\"type\":\"string\",\"description\":\"a shell script, run with /bin/sh -c\"},"           \
        "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"                         \
        "\"description\":\"variables the command gets (those its profile lets a caller set)\"},"             \
        "\"stdin\":{\"type\":\"string\",\"description\":\"the command's standard input (UTF-8)\"},"            \
        "\"timeout\":{\"type\":\"string\",\"description\":\"wall-time limit, e.g. 90s, 5min\"}"
#define IN_CEILINGS                                                                                          \
        "\"profile\":{\"type\":\"string\",\"description\":\"one of the profiles this server offers\"},"      \
        "\"workspace\":{\"type\":\"string\",\"description\":\"one of the workspace directories this server "  \
        "was given\"},"                                                                                        \
        "\"memory\":{\"type\":\"string\",\"description\":\"memory ceiling, e.g. 512M, 2G\"},"                 \
        "\"tasks\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"tasks ceiling\"}"
#define IN_SANDBOX "\"sandbox_id\":{\"type\":\"string\",\"description\":\"a sandbox sandbox_create made\"}"
#define IN_ENCODING "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]}"
#define OBJECT(props, required) \
        "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "],\"additionalProperties\":false}"
#define OPEN_OBJECT(props, required) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "]}"

#define OUT_COMMAND                                                                                          \
        OPEN_OBJECT("\"run_id\":" S_STR ",\"exit_code\":" S_NULLABLE_INT ",\"signal\":" S_NULLABLE_INT          \
                    ",\"stop_reason\":" S_STR ",\"stdout\":" S_STR ",\"stderr\":" S_STR ",\"stdout_bytes\":" S_INT \
                    ",\"stderr_bytes\":" S_INT ",\"stdout_truncated\":" S_BOOL ",\"stderr_truncated\":" S_BOOL   \
                    ",\"agent_lines\":" S_STRV,                                                                 \
                    "\"run_id\",\"exit_code\",\"signal\",\"stop_reason\",\"stdout\",\"stderr\",\"stdout_bytes\"," \
                    "\"stderr_bytes\",\"stdout_truncated\",\"stderr_truncated\",\"agent_lines\"")

#define IN_RUN OBJECT(IN_COMMAND "," IN_CEILINGS, "")
#define IN_SANDBOX_CREATE                                                                                    \
        OBJECT(IN_CEILINGS ",\"name\":{\"type\":\"string\",\"description\":\"a name for it (1-64 of A-Z a-z "   \
                           "0-9 _ . -)\"}",                                                                  \
               "")
#define OUT_SANDBOX_CREATE                                                                                   \
        OPEN_OBJECT("\"sandbox_id\":" S_STR ",\"profile\":" S_STR ",\"workspace\":{\"type\":[\"string\",\"null\"]}", \
                    "\"sandbox_id\",\"profile\",\"workspace\"")
#define IN_SANDBOX_EXEC                                                                                      \
        OBJECT(IN_SANDBOX "," IN_COMMAND ",\"cwd\":{\"type\":\"string\",\"description\":\"the directory the "   \
                                          "command starts in, inside the sandbox\"}",                          \
               "\"sandbox_id\"")
#define IN_SANDBOX_REMOVE OBJECT(IN_SANDBOX, "\"sandbox_id\"")
#define OUT_SANDBOX_REMOVE OPEN_OBJECT("\"sandbox_id\":" S_STR ",\"stop_reason\":" S_STR, "\"sandbox_id\",\"stop_reason\"")
#define IN_PATH(what) "\"path\":{\"type\":\"string\",\"description\":\"" what "\"}"
#define IN_WRITE_FILE                                                                                        \
        OBJECT(IN_SANDBOX "," IN_PATH("relative to the sandbox's HOME, or absolute inside the sandbox")         \
                          ",\"content\":" S_STR "," IN_ENCODING,                                               \
               "\"sandbox_id\",\"path\",\"content\"")
#define OUT_WRITE_FILE OPEN_OBJECT("\"path\":" S_STR ",\"bytes\":" S_INT, "\"path\",\"bytes\"")
#define IN_READ_FILE                                                                                         \
        OBJECT(IN_SANDBOX "," IN_PATH("relative to the sandbox's HOME, or absolute inside the sandbox") "," IN_ENCODING, \
               "\"sandbox_id\",\"path\"")
#define OUT_READ_FILE                                                                                        \
        OPEN_OBJECT("\"path\":" S_STR ",\"content\":" S_STR ",\"encoding\":" S_STR ",\"bytes\":" S_INT            \
                    ",\"truncated\":" S_BOOL,                                                                   \
                    "\"path\",\"content\",\"encoding\",\"bytes\",\"truncated\"")
#define IN_LIST_FILES OBJECT(IN_SANDBOX "," IN_PATH("a directory; default: the sandbox's HOME"), "\"sandbox_id\"")
#define OUT_LIST_FILES                                                                                       \
        OPEN_OBJECT("\"path\":" S_STR ",\"entries\":{\"type\":\"array\",\"items\":" OPEN_OBJECT(                \
                            "\"name\":" S_STR ",\"type\":{\"type\":\"string\",\"enum\":[\"file\",\"directory\","  \
                            "\"symlink\",\"other\"]},\"size\":" S_INT,                                         \
                            "\"name\",\"type\",\"size\"") "}",                                                 \
                    "\"path\",\"entries\"")
#define IN_EXPORT OBJECT(IN_SANDBOX "," IN_PATH("relative to the sandbox's HOME; default: out"), "\"sandbox_id\"")
#define OUT_EXPORT                                                                                           \
        OPEN_OBJECT("\"directory\":" S_STR ",\"delivered\":" S_STRV ",\"refused\":{\"type\":\"array\",\"items\":" \
                    OPEN_OBJECT("\"path\":" S_STR ",\"reason\":" S_STR, "\"path\",\"reason\"") "},\"held\":" S_STRV \
                    ",\"report\":{\"type\":\"object\"}",                                                       \
                    "\"directory\",\"delivered\",\"refused\",\"held\",\"report\"")
#define IN_SHOW_RUN OBJECT("\"run_id\":" S_STR, "\"run_id\"")
#define OUT_SHOW_RUN "{\"type\":\"object\"}"
