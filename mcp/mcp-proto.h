/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Model Context Protocol's JSON-RPC 2.0 over stdio, one message per line: decoding a line into a request
 * or notification (or the error answer it gets), the methods sbx-mcp knows, and the messages it sends.
 * Pure: no I/O. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define MCP_MESSAGE_MAX (4U * 1024U * 1024U)    /* bytes of one message, without its newline */

#define MCP_PROTOCOL_LATEST "2025-11-25"

typedef enum McpErrorCode {
        MCP_PARSE_ERROR = -32700,
        MCP_INVALID_REQUEST = -32600,
        MCP_METHOD_NOT_FOUND = -32601,
        MCP_INVALID_PARAMS = -32602,
        MCP_INTERNAL_ERROR = -32603,
} McpErrorCode;

typedef enum McpMethod {
        MCP_METHOD_INITIALIZE,
        MCP_METHOD_INITIALIZED,
        MCP_METHOD_PING,
        MCP_METHOD_TOOLS_LIST,
        MCP_METHOD_TOOLS_CALL,
        MCP_METHOD_SET_LEVEL,
        MCP_METHOD_CANCELLED,
        _MCP_METHOD_MAX,
        _MCP_METHOD_INVALID = -EINVAL,
} McpMethod;

typedef enum McpLogLevel {
        MCP_LOG_DEBUG,
        MCP_LOG_INFO,
        MCP_LOG_NOTICE,
        MCP_LOG_WARNING,
        MCP_LOG_ERROR,
        MCP_LOG_CRITICAL,
        MCP_LOG_ALERT,
        MCP_LOG_EMERGENCY,
        _MCP_LOG_MAX,
        _MCP_LOG_INVALID = -EINVAL,
} McpLogLevel;

typedef enum McpKind {
        MCP_KIND_REQUEST,       /* has an id: answered */
        MCP_KIND_NOTIFICATION,  /* no id: never answered */
        MCP_KIND_RESPONSE,      /* the client's answer to a request of ours (we send none): ignored */
} McpKind;

/* One decoded message. */
typedef struct McpMessage {
        json_object *root;      /* owns what the others point into */
        McpKind kind;
        json_object *id;        /* requests: a string or an integer */
        const char *method;     /* requests and notifications */
        McpMethod known;        /* _MCP_METHOD_INVALID: not one of ours */
        json_object *params;    /* an object, or NULL when absent */
} McpMessage;

void mcp_message_done(McpMessage *m);

/* What a line that is not a valid message gets: code, message, and the id to answer (NULL: null). */
typedef struct McpDecodeError {
        McpErrorCode code;
        const char *message;
        json_object *id;        /* a reference of its own, or NULL */
} McpDecodeError;

void mcp_decode_error_done(McpDecodeError *e);

/* One line (without its newline; len bytes, no NUL needed). 0 and *ret filled, or -EINVAL and *ret_error
 * filled (the answer it gets; a line that is blank is -ENODATA, no answer), -ENOMEM. */
int mcp_message_decode(const char *line, size_t len, McpMessage *ret, McpDecodeError *ret_error);

const char *mcp_method_to_string(McpMethod m);
McpMethod mcp_method_from_string(const char *s);
/* Whether the method is one a client sends as a request (else: as a notification). */
bool mcp_method_is_request(McpMethod m);
const char *mcp_log_level_to_string(McpLogLevel l);
McpLogLevel mcp_log_level_from_string(const char *s);

/* The protocol version to answer initialize with: the client's if we speak it, else our latest. */
const char *mcp_protocol_negotiate(const char *client_version);

/* The messages we send, each taking result/params/data (NULL: none). NULL on -ENOMEM. */
json_object *mcp_response_new(json_object *id, json_object *result);
json_object *mcp_error_new(json_object *id, McpErrorCode code, const char *message);
json_object *mcp_notification_new(const char *method, json_object *params);
/* A message as one line with its newline, in *ret (its length in *ret_len). 0 or -ENOMEM. */
int mcp_message_format(json_object *m, char **ret, size_t *ret_len);

/* initialize's result for params (a client's): the negotiated version, our capabilities and serverInfo.
 * 0, -EINVAL (params without a protocolVersion string: bad params), -ENOMEM. */
int mcp_initialize_result(json_object *params, const char *server_version, json_object **ret);
