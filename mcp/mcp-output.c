/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A command's output as a tool's result: capped streams, UTF-8 and base64, the CommandResult, the file
 * tools' results. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "macro.h"
#include "json-doc.h"
#include "mcp-output.h"
#include "mcp-proto.h"
#include "utf8.h"
#include "util.h"

int mcp_capture_add(McpCapture *c, const void *p, size_t n) {
        size_t keep = c->size < c->cap ? MIN(n, c->cap - c->size) : 0;

        c->total += n;
        if (keep == 0)
                return 0;
        if (!c->data) {
                /* what fits under the cap, allocated once it is needed */
                c->data = malloc(c->cap + 1);
                if (!c->data)
                        return -ENOMEM;
        }
        memcpy(c->data + c->size, p, keep);
        c->size += keep;
        c->data[c->size] = 0;
        return 0;
}

void mcp_capture_done(McpCapture *c) {
        c->data = mfree(c->data);
        c->size = 0;
        c->total = 0;
}

size_t mcp_utf8_cut(const char *s, size_t n) {
        /* a sequence is at most 4 bytes: only the last 3 can start one cut short */
        for (size_t back = 1; back <= 3 && back <= n; back++)
                if (utf8_sequence((const unsigned char *) s + n - back, back) == -1)
                        return n - back;
        return n;
}

int mcp_utf8_text(const char *s, size_t n, char **ret, size_t *ret_len) {
        char *t = malloc(n * 3 + 1), *p = t;

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                int l = utf8_sequence((const unsigned char *) s + i, n - i);

                if (l <= 0) {
                        memcpy(p, "\xEF\xBF\xBD", 3);
                        p += 3;
                        i++;
                        continue;
                }
                memcpy(p, s + i, (size_t) l);
                p += l;
                i += (size_t) l;
        }
        *p = 0;
        if (ret_len)
                *ret_len = (size_t) (p - t);
        *ret = t;
        return 0;
}

int mcp_base64_encode(const void *p, size_t n, char **ret) {
        char *t;

        if (n > (size_t) INT32_MAX / 2)
                return -E2BIG;
        t = malloc((n + 2) / 3 * 4 + 1);
        if (!t)
                return -ENOMEM;
        (void) EVP_EncodeBlock((unsigned char *) t, p, (int) n);
        *ret = t;
        return 0;
}

#define BASE64_ALPHABET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

int mcp_base64_decode(const char *s, size_t n, char **ret, size_t *ret_size) {
        _cleanup_free_ char *clean = malloc(n + 1), *out = NULL;
        size_t m = 0, pad = 0;
        int len;

        if (!clean)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!strchr(" \t\r\n", s[i]))
                        clean[m++] = s[i];
        if (m % 4 != 0 || m > (size_t) INT32_MAX)
                return -EINVAL;
        while (pad < 2 && m > pad && clean[m - 1 - pad] == '=')
                pad++;
        for (size_t i = 0; i < m - pad; i++)
                if (!strchr(BASE64_ALPHABET, clean[i]))
                        return -EINVAL;
        out = malloc(m / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        len = EVP_DecodeBlock((unsigned char *) out, (unsigned char *) clean, (int) m);
        if (len < 0 || (size_t) len < pad)
                return -EINVAL;
        *ret_size = (size_t) len - pad;
        out[*ret_size] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

/* ---- results ---------------------------------------------------------------------------------- */

/* a string that may hold NUL characters */
static json_object *string_len(const char *s, size_t n) {
        return n <= INT32_MAX ? json_object_new_string_len(s, (int) n) : NULL;
}

/* an integer, or null (json-c's NULL) */
static int add_int_or_null(json_object *o, const char *key, bool has, int64_t v) {
        return has ? json_add_take(o, key, json_object_new_int64(v)) : (json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0);
}

/* A stream's kept bytes as text: cut at a whole character when it was cut */
static int stream_text(const McpCapture *c, char **ret, size_t *ret_len) {
        size_t n = c->size;

        if (mcp_capture_truncated(c))
                n = mcp_utf8_cut(c->data, n);
        return mcp_utf8_text(c->data ?: "", n, ret, ret_len);
}


/* The text rendering: stdout, stderr, the agent's lines, "exit N (reason)" */
static int command_text(const McpOutcome *o, const char *out, size_t out_len, const char *err, size_t err_len,
                        char **ret, size_t *ret_len) {
        size_t size = 0;
        char *t = NULL;
        FILE *f = open_memstream(&t, &size);

        if (!f)
                return -ENOMEM;
        const struct { const char *text; size_t len; const McpCapture *c; } streams[] = {
                { out, out_len, o->out }, { err, err_len, o->err } };
        for (size_t i = 0; i < ELEMENTSOF(streams); i++) {
                if (streams[i].len > 0) {
                        fwrite(streams[i].text, 1, streams[i].len, f);
                        if (streams[i].text[streams[i].len - 1] != '\n')
                                fputc('\n', f);
                }
                if (mcp_capture_truncated(streams[i].c))
                        fprintf(f, "[... %" PRIu64 " bytes cut: output cap]\n",
                                streams[i].c->total - (uint64_t) streams[i].c->size);
        }
        STRV_FOREACH(l, o->agent_lines)
                fprintf(f, "sbx: %s\n", *l);
        if (o->exit_code >= 0)
                fprintf(f, "exit %d (%s)", o->exit_code, o->stop_reason);
        else if (o->signal > 0)
                fprintf(f, "exit signal %d (%s)", o->signal, o->stop_reason);
        else
                fprintf(f, "exit none (%s)", o->stop_reason);
        if (fclose(f) != 0 || !t)
                return free(t), -ENOMEM;
        *ret = t;
        *ret_len = size;
        return 0;
}

static int text_result(json_object *result, const char *text, size_t len, bool is_error) {
        json_object *content = json_object_new_array(), *item = json_object_new_object();

        if (!content || !item || json_add_take(item, "type", json_object_new_string("text")) < 0 ||
            json_add_take(item, "text", string_len(text, len)) < 0 || json_object_array_add(content, item) < 0) {
                json_object_put(content);
                json_object_put(item);
                return -ENOMEM;
        }
        if (json_add_take(result, "content", content) < 0 || json_add_take(result, "isError", json_object_new_boolean(is_error)) < 0)
                return -ENOMEM;
        return 0;
}

int mcp_command_result(const McpOutcome *o, json_object **ret) {
        _cleanup_(json_object_putp) json_object *result = json_object_new_object(), *s = json_object_new_object();
        _cleanup_free_ char *out = NULL, *err = NULL, *text = NULL;
        json_object *lines = json_object_new_array();
        size_t out_len, err_len, text_len;

        if (!result || !s || !lines || json_add_take(s, "agent_lines", lines) < 0)
                return -ENOMEM;
        STRV_FOREACH(l, o->agent_lines)
                if (json_object_array_add(lines, json_object_new_string(*l)) < 0)
                        return -ENOMEM;
        if (stream_text(o->out, &out, &out_len) < 0 || stream_text(o->err, &err, &err_len) < 0 ||
            command_text(o, out, out_len, err, err_len, &text, &text_len) < 0)
                return -ENOMEM;
        if (json_add_take(s, "run_id", json_object_new_string(o->run_id)) < 0 ||
            add_int_or_null(s, "exit_code", o->exit_code >= 0, o->exit_code) < 0 ||
            add_int_or_null(s, "signal", o->signal > 0, o->signal) < 0 ||
            json_add_take(s, "stop_reason", json_object_new_string(o->stop_reason)) < 0 ||
            json_add_take(s, "stdout", string_len(out, out_len)) < 0 || json_add_take(s, "stderr", string_len(err, err_len)) < 0 ||
            json_add_take(s, "stdout_bytes", json_object_new_uint64(o->out->total)) < 0 ||
            json_add_take(s, "stderr_bytes", json_object_new_uint64(o->err->total)) < 0 ||
            json_add_take(s, "stdout_truncated", json_object_new_boolean(mcp_capture_truncated(o->out))) < 0 ||
            json_add_take(s, "stderr_truncated", json_object_new_boolean(mcp_capture_truncated(o->err))) < 0 ||
            text_result(result, text, text_len, false) < 0 || json_add_take(result, "structuredContent", TAKE_PTR(s)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(result);
        return 0;
}

int mcp_structured_result(json_object *structured, json_object **ret) {
        _cleanup_(json_object_putp) json_object *s = structured, *result = json_object_new_object();
        const char *text;

        if (!s || !result)
                return -ENOMEM;
        text = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text || text_result(result, text, strlen(text), false) < 0 ||
            json_add_take(result, "structuredContent", TAKE_PTR(s)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(result);
        return 0;
}

json_object *mcp_tool_error(const char *sentence) {
        json_object *result = json_object_new_object();

        if (!result || text_result(result, sentence, strlen(sentence), true) < 0)
                return json_object_put(result), NULL;
        return result;
}

/* ---- the file tools --------------------------------------------------------------------------- */

int mcp_read_result(const char *path, const McpCapture *out, int encoding, json_object **ret) {
        _cleanup_(json_object_putp) json_object *s = json_object_new_object();
        _cleanup_free_ char *text = NULL;
        const char *nl, *content;
        uint64_t size;
        size_t n, len = 0;
        char *end;

        if (!s)
                return -ENOMEM;
        nl = out->data ? memchr(out->data, '\n', out->size) : NULL;
        if (!nl)
                return -EBADMSG;
        errno = 0;
        size = strtoull(out->data, &end, 10);
        while (end < nl && *end == ' ')
                end++;
        if (errno != 0 || end != nl || end == out->data)
                return -EBADMSG;
        content = nl + 1;
        n = out->size - (size_t) (content - out->data);
        /* text cut at the cap in the middle of a character is still text: the part is left out */
        if (encoding < 0 && size > n && utf8_valid(content, mcp_utf8_cut(content, n)))
                n = mcp_utf8_cut(content, n);
        if (encoding < 0)
                encoding = utf8_valid(content, n) ? 0 : 1;
        if (encoding == 0 && mcp_utf8_text(content, n, &text, &len) < 0)
                return -ENOMEM;
        if (encoding == 1 && mcp_base64_encode(content, n, &text) < 0)
                return -ENOMEM;
        if (encoding == 1)
                len = strlen(text);
        if (json_add_take(s, "path", json_object_new_string(path)) < 0 || json_add_take(s, "content", string_len(text, len)) < 0 ||
            json_add_take(s, "encoding", json_object_new_string(encoding == 0 ? "utf-8" : "base64")) < 0 ||
            json_add_take(s, "bytes", json_object_new_uint64(size)) < 0 ||
            json_add_take(s, "truncated", json_object_new_boolean(size > n)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static const char *entry_type(char y) {
        switch (y) {
        case 'f':
                return "file";
        case 'd':
                return "directory";
        case 'l':
                return "symlink";
        default:
                return "other";
        }
}

static int entry_cmp(const void *a, const void *b) {
        json_object *const *x = a, *const *y = b;
        json_object *nx, *ny;

        (void) json_object_object_get_ex(*x, "name", &nx);
        (void) json_object_object_get_ex(*y, "name", &ny);
        return strcmp(json_object_get_string(nx), json_object_get_string(ny));
}

int mcp_list_result(const char *path, const McpCapture *out, json_object **ret) {
        _cleanup_(json_object_putp) json_object *s = json_object_new_object(), *entries = json_object_new_array();
        const char *p = out->data ?: "", *end = p + out->size;

        if (!s || !entries)
                return -ENOMEM;
        /* a listing cut at the output cap ends in the middle of an entry: that one is left out */
        while (p < end) {
                const char *nul = memchr(p, 0, (size_t) (end - p)), *slash;
                _cleanup_free_ char *name = NULL;
                json_object *e;
                uint64_t size;
                char *q;

                if (!nul)
                        break;
                if (nul - p < 5 || p[1] != '/')
                        return -EBADMSG;
                errno = 0;
                size = strtoull(p + 2, &q, 10);
                slash = q;
                if (errno != 0 || q == p + 2 || *slash != '/' || slash + 1 >= nul)
                        return -EBADMSG;
                if (mcp_utf8_text(slash + 1, (size_t) (nul - slash - 1), &name, NULL) < 0)
                        return -ENOMEM;
                e = json_object_new_object();
                if (!e || json_object_array_add(entries, e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
                if (json_add_take(e, "name", json_object_new_string(name)) < 0 ||
                    json_add_take(e, "type", json_object_new_string(entry_type(p[0]))) < 0 ||
                    json_add_take(e, "size", json_object_new_uint64(size)) < 0)
                        return -ENOMEM;
                p = nul + 1;
        }
        json_object_array_sort(entries, entry_cmp);
        if (json_add_take(s, "path", json_object_new_string(path)) < 0 || json_add_take(s, "entries", TAKE_PTR(entries)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}
