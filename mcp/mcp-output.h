/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a tool call returns: a command's streams kept up to the output cap (the rest counted, cut), text as
 * UTF-8 or base64, the CommandResult of run and sandbox_exec, the file tools' results from their commands'
 * output, and the tools/call result around them. Pure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* One stream of a command: the first cap bytes kept, every byte counted. */
typedef struct McpCapture {
        char *data;
        size_t size, cap;
        uint64_t total;
} McpCapture;

/* n bytes more: kept while under the cap. 0 or -ENOMEM. */
int mcp_capture_add(McpCapture *c, const void *p, size_t n);
void mcp_capture_done(McpCapture *c);
static inline bool mcp_capture_truncated(const McpCapture *c) {
        return c->total > c->size;
}

/* n less the bytes of an incomplete UTF-8 sequence at its end (a stream cut in the middle of a character). */
size_t mcp_utf8_cut(const char *s, size_t n);
/* s as UTF-8 text: each byte that is not part of a valid sequence becomes U+FFFD; NUL bytes stay (its length
 * in *ret_len, if not NULL). 0 or -ENOMEM. */
int mcp_utf8_text(const char *s, size_t n, char **ret, size_t *ret_len);
int mcp_base64_encode(const void *p, size_t n, char **ret);
/* -EINVAL when s (n bytes) is not base64 (white space is ignored). */
int mcp_base64_decode(const char *s, size_t n, char **ret, size_t *ret_size);

/* How a command ended, for its CommandResult. */
typedef struct McpOutcome {
        const char *run_id;     /* the run's id, or the exec's */
        int exit_code;          /* -1: none */
        int signal;             /* 0: none */
        const char *stop_reason;
        const McpCapture *out, *err;
        char **agent_lines;
} McpOutcome;

/* The tools/call result of run and sandbox_exec. 0 or -ENOMEM. */
int mcp_command_result(const McpOutcome *o, json_object **ret);
/* A tools/call result: structured (taken) and its JSON as the text. 0 or -ENOMEM. */
int mcp_structured_result(json_object *structured, json_object **ret);
/* A tool error: isError and the sentence. NULL on ENOMEM. */
json_object *mcp_tool_error(const char *sentence);

/* read_file's structured result from its command's stdout (the size on a line, then the bytes); encoding:
 * 0 utf-8, 1 base64, -1 the content's choice. 0; -EBADMSG for output not of that form; -ENOMEM. */
int mcp_read_result(const char *path, const McpCapture *out, int encoding, json_object **ret);
/* list_files's structured result from its command's stdout (TYPE/SIZE/NAME\0 each). 0, -EBADMSG, -ENOMEM. */
int mcp_list_result(const char *path, const McpCapture *out, json_object **ret);
