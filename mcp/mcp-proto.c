/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON-RPC 2.0 for the Model Context Protocol: a line becomes a request, a notification, a response (ignored)
 * or the error it is answered with; the methods known; the messages sent. */
#include <stdlib.h>
#include <string.h>

#include "json-doc.h"
#include "mcp-proto.h"
#include "util.h"

static const char *const protocol_versions[] = { MCP_PROTOCOL_LATEST, "2025-06-18" };

typedef struct MethodInfo {
        const char *name;
        bool request;
} MethodInfo;

static const MethodInfo methods[_MCP_METHOD_MAX] = {
        [MCP_METHOD_INITIALIZE] = { "initialize", true },
        [MCP_METHOD_INITIALIZED] = { "notifications/initialized", false },
        [MCP_METHOD_PING] = { "ping", true },
        [MCP_METHOD_TOOLS_LIST] = { "tools/list", true },
        [MCP_METHOD_TOOLS_CALL] = { "tools/call", true },
        [MCP_METHOD_SET_LEVEL] = { "logging/setLevel", true },
        [MCP_METHOD_CANCELLED] = { "notifications/cancelled", false },
};

static const char *const log_levels[_MCP_LOG_MAX] = {
        [MCP_LOG_DEBUG] = "debug",
        [MCP_LOG_INFO] = "info",
        [MCP_LOG_NOTICE] = "notice",
        [MCP_LOG_WARNING] = "warning",
        [MCP_LOG_ERROR] = "error",
        [MCP_LOG_CRITICAL] = "critical",
        [MCP_LOG_ALERT] = "alert",
        [MCP_LOG_EMERGENCY] = "emergency",
};

const char *mcp_method_to_string(McpMethod m) {
        return m >= 0 && m < _MCP_METHOD_MAX ? methods[m].name : NULL;
}

McpMethod mcp_method_from_string(const char *s) {
        for (McpMethod m = 0; s && m < _MCP_METHOD_MAX; m++)
                if (streq(methods[m].name, s))
                        return m;
        return _MCP_METHOD_INVALID;
}

bool mcp_method_is_request(McpMethod m) {
        return m >= 0 && m < _MCP_METHOD_MAX && methods[m].request;
}

const char *mcp_log_level_to_string(McpLogLevel l) {
        return l >= 0 && l < _MCP_LOG_MAX ? log_levels[l] : NULL;
}

McpLogLevel mcp_log_level_from_string(const char *s) {
        for (McpLogLevel l = 0; s && l < _MCP_LOG_MAX; l++)
                if (streq(log_levels[l], s))
                        return l;
        return _MCP_LOG_INVALID;
}

const char *mcp_protocol_negotiate(const char *client_version) {
        for (size_t i = 0; client_version && i < ELEMENTSOF(protocol_versions); i++)
                if (streq(protocol_versions[i], client_version))
                        return protocol_versions[i];
        return MCP_PROTOCOL_LATEST;
}

void mcp_message_done(McpMessage *m) {
        json_object_put(m->root);
        *m = (McpMessage) {};
}

void mcp_decode_error_done(McpDecodeError *e) {
        json_object_put(e->id);
        e->id = NULL;
}

static int decode_fail(McpDecodeError *e, McpErrorCode code, const char *message, json_object *id) {
        *e = (McpDecodeError) { .code = code, .message = message, .id = id ? json_object_get(id) : NULL };
        return -EINVAL;
}

static bool id_is_valid(json_object *id) {
        /* JSON-RPC allows null too, but MCP does not: a request's id is a string or an integer */
        return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

static bool blank(const char *s, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (!strchr(" \t\r", s[i]))
                        return false;
        return true;
}

int mcp_message_decode(const char *line, size_t len, McpMessage *ret, McpDecodeError *ret_error) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        json_object *v, *id = NULL, *method = NULL, *params = NULL;
        JsonDoc jd = { .file = "message" };
        bool has_id;
        int r;

        if (blank(line, len))
                return -ENODATA;
        r = json_doc_parse(&jd, line, len, &root);
        jd.error = mfree(jd.error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return decode_fail(ret_error, MCP_PARSE_ERROR, "Parse error: not one JSON value in UTF-8", NULL);
        if (json_object_is_type(root, json_type_array))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: batches are not supported", NULL);
        if (!json_object_is_type(root, json_type_object))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: not a JSON object", NULL);
        has_id = json_object_object_get_ex(root, "id", &id);
        if (has_id && !id_is_valid(id))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: id must be a string or an integer",
                                   NULL);
        if (!json_object_object_get_ex(root, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
            !streq(json_object_get_string(v), "2.0"))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"", id);
        if (!json_object_object_get_ex(root, "method", &method)) {
                if (has_id && (json_object_object_get_ex(root, "result", NULL) ||
                               json_object_object_get_ex(root, "error", NULL))) {
                        *ret = (McpMessage) { .root = TAKE_PTR(root), .kind = MCP_KIND_RESPONSE, .id = id,
                                              .known = _MCP_METHOD_INVALID };
                        return 0;
                }
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: no method", id);
        }
        if (!json_object_is_type(method, json_type_string))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: method must be a string", id);
        if (json_object_object_get_ex(root, "params", &params) && !json_object_is_type(params, json_type_object))
                return decode_fail(ret_error, MCP_INVALID_REQUEST, "Invalid Request: params must be an object", id);
        *ret = (McpMessage) {
                .kind = has_id ? MCP_KIND_REQUEST : MCP_KIND_NOTIFICATION,
                .id = id,
                .method = json_object_get_string(method),
                .known = mcp_method_from_string(json_object_get_string(method)),
                .params = params,
                .root = TAKE_PTR(root),
        };
        return 0;
}

static json_object *message_new(json_object *id) {
        json_object *m = json_object_new_object();

        if (m && json_object_object_add(m, "jsonrpc", json_object_new_string("2.0")) < 0)
                return json_object_put(m), NULL;
        if (m && id && json_object_object_add(m, "id", json_object_get(id)) < 0)
                return json_object_put(m), NULL;
        return m;
}

/* Adds v (taken, also on failure) to o under key. 0 or -ENOMEM. */
static int add_take(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

json_object *mcp_response_new(json_object *id, json_object *result) {
        json_object *m = message_new(id);

        if (!m || add_take(m, "result", result ?: json_object_new_object()) < 0)
                return json_object_put(m), NULL;
        return m;
}

json_object *mcp_error_new(json_object *id, McpErrorCode code, const char *message) {
        json_object *m = message_new(NULL), *e = json_object_new_object();

        if (!m || !e || add_take(e, "code", json_object_new_int(code)) < 0 ||
            add_take(e, "message", json_object_new_string(message)) < 0 ||
            json_object_object_add(m, "id", id ? json_object_get(id) : NULL) < 0) {
                json_object_put(e);
                return json_object_put(m), NULL;
        }
        if (add_take(m, "error", e) < 0)
                return json_object_put(m), NULL;
        return m;
}

json_object *mcp_notification_new(const char *method, json_object *params) {
        json_object *m = message_new(NULL);

        if (!m || add_take(m, "method", json_object_new_string(method)) < 0 ||
            (params && add_take(m, "params", params) < 0))
                return json_object_put(m), NULL;
        return m;
}

int mcp_message_format(json_object *m, char **ret, size_t *ret_len) {
        size_t len;
        const char *s = json_object_to_json_string_length(m, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                          &len);
        char *line;

        if (!s)
                return -ENOMEM;
        line = malloc(len + 2);
        if (!line)
                return -ENOMEM;
        memcpy(line, s, len);
        line[len] = '\n';
        line[len + 1] = 0;
        *ret = line;
        *ret_len = len + 1;
        return 0;
}

int mcp_initialize_result(json_object *params, const char *server_version, json_object **ret) {
        _cleanup_(json_object_putp) json_object *result = NULL, *caps = NULL, *tools = NULL, *info = NULL;
        json_object *v;

        if (!params || !json_object_object_get_ex(params, "protocolVersion", &v) ||
            !json_object_is_type(v, json_type_string))
                return -EINVAL;
        result = json_object_new_object();
        caps = json_object_new_object();
        tools = json_object_new_object();
        info = json_object_new_object();
        if (!result || !caps || !tools || !info ||
            add_take(tools, "listChanged", json_object_new_boolean(false)) < 0 ||
            add_take(caps, "tools", TAKE_PTR(tools)) < 0 || add_take(caps, "logging", json_object_new_object()) < 0 ||
            add_take(info, "name", json_object_new_string("sbx-mcp")) < 0 ||
            add_take(info, "version", json_object_new_string(server_version)) < 0 ||
            add_take(result, "protocolVersion",
                     json_object_new_string(mcp_protocol_negotiate(json_object_get_string(v)))) < 0 ||
            add_take(result, "capabilities", TAKE_PTR(caps)) < 0 ||
            add_take(result, "serverInfo", TAKE_PTR(info)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(result);
        return 0;
}
