/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>

#include "grant.h"
#include "json-doc.h"
#include "profile-name.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static void grant_url_donep(GrantUrl *u) {
        grant_url_done(u);
}

/* ---- tables ---- */

static const char *const method_table[_GRANT_METHOD_MAX] = {
        [GRANT_METHOD_GET] = "GET",
        [GRANT_METHOD_HEAD] = "HEAD",
        [GRANT_METHOD_POST] = "POST",
        [GRANT_METHOD_PUT] = "PUT",
        [GRANT_METHOD_PATCH] = "PATCH",
        [GRANT_METHOD_DELETE] = "DELETE",
};

static const char *const scheme_table[_GRANT_SCHEME_MAX] = {
        [GRANT_SCHEME_HTTPS] = "https",
        [GRANT_SCHEME_HTTP] = "http",
};

static const uint16_t scheme_port_table[_GRANT_SCHEME_MAX] = {
        [GRANT_SCHEME_HTTPS] = 443,
        [GRANT_SCHEME_HTTP] = 80,
};

static const char *const reason_table[_GRANT_REASON_MAX] = {
        [GRANT_REASON_BAD_REQUEST] = "bad-request",
        [GRANT_REASON_NO_RUN] = "no-run",
        [GRANT_REASON_NO_GRANT] = "no-grant",
        [GRANT_REASON_METHOD] = "method",
        [GRANT_REASON_URL] = "url",
        [GRANT_REASON_HEADER] = "header",
        [GRANT_REASON_TOO_LARGE] = "too-large",
        [GRANT_REASON_NO_SECRET] = "no-secret",
        [GRANT_REASON_UPSTREAM] = "upstream",
        [GRANT_REASON_INTERNAL] = "internal",
};

static const char *const verdict_table[_GRANT_VERDICT_MAX] = {
        [GRANT_VERDICT_DONE] = "done",
        [GRANT_VERDICT_REFUSED] = "refused",
        [GRANT_VERDICT_FAILED] = "failed",
};

DEFINE_NAME_TABLE_LOOKUP(grant_method, GrantMethod, method_table, _GRANT_METHOD_MAX);
DEFINE_NAME_TABLE_TO_STRING(grant_scheme, GrantScheme, scheme_table, _GRANT_SCHEME_MAX);

uint16_t grant_scheme_default_port(GrantScheme s) {
        return s >= 0 && s < _GRANT_SCHEME_MAX ? scheme_port_table[s] : 0;
}

DEFINE_NAME_TABLE_LOOKUP(grant_reason, GrantReason, reason_table, _GRANT_REASON_MAX);
DEFINE_NAME_TABLE_TO_STRING(grant_verdict, GrantVerdict, verdict_table, _GRANT_VERDICT_MAX);

/* ---- characters and names ---- */

static bool ascii_lower(char c) {
        return c >= 'a' && c <= 'z';
}

static bool ascii_alpha(char c) {
        return ascii_lower(c) || (c >= 'A' && c <= 'Z');
}

static bool ascii_digit(char c) {
        return c >= '0' && c <= '9';
}

/* [a-z][a-z0-9_-]{0,max-1} */
static bool simple_name_is_valid(const char *s, size_t max) {
        size_t n;

        if (isempty(s) || !ascii_lower(s[0]))
                return false;
        n = strlen(s);
        if (n > max)
                return false;
        for (const char *c = s; *c; c++)
                if (!ascii_lower(*c) && !ascii_digit(*c) && *c != '_' && *c != '-')
                        return false;
        return true;
}

bool grant_name_is_valid(const char *s) {
        return simple_name_is_valid(s, GRANT_NAME_MAX);
}

bool credential_name_is_valid(const char *s) {
        return simple_name_is_valid(s, GRANT_CREDENTIAL_NAME_MAX);
}

/* RFC 9110 5.6.2: tchar */
static bool is_tchar(char c) {
        return ascii_alpha(c) || ascii_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool grant_header_name_is_valid(const char *s) {
        size_t n;

        if (isempty(s))
                return false;
        n = strlen(s);
        if (n > GRANT_HEADER_NAME_MAX)
                return false;
        for (const char *c = s; *c; c++)
                if (!is_tchar(*c))
                        return false;
        return true;
}

static bool printable_ascii(const char *s, bool tab) {
        for (const char *c = s; *c; c++)
                if (!((*c >= ' ' && *c <= '~') || (tab && *c == '\t')))
                        return false;
        return true;
}

static bool name_in(const char *name, const char *const *list) {
        for (; *list; list++)
                if (strcasecmp(name, *list) == 0)
                        return true;
        return false;
}

bool grant_secret_header_is_valid(const char *s) {
        static const char *const refused[] = {
                "Host", "Content-Length", "Transfer-Encoding", "Connection", "Cookie", NULL,
        };

        return grant_header_name_is_valid(s) && !name_in(s, refused);
}

bool grant_value_prefix_is_valid(const char *s) {
        return s && strlen(s) <= GRANT_VALUE_PREFIX_MAX && printable_ascii(s, false);
}

bool grant_header_value_is_valid(const char *s) {
        return s && printable_ascii(s, true);
}

/* ---- URLs ---- */

void grant_url_done(GrantUrl *u) {
        if (!u)
                return;
        free(u->host);
        free(u->path);
        free(u->query);
        *u = (GrantUrl) {};
}

/* RFC 3986 unreserved: ALPHA DIGIT - . _ ~ */
static bool is_unreserved(char c) {
        return ascii_alpha(c) || ascii_digit(c) || (c && strchr("-._~", c));
}

/* RFC 3986 pchar, without pct-encoded: unreserved, sub-delims, ':' and '@' */
static bool is_pchar(char c) {
        return is_unreserved(c) || (c && strchr("!$&'()*+,;=:@", c));
}

/* Four decimal numbers 0-255 without leading zeros, dot-separated. */
static bool ipv4_is_canonical(const char *s, size_t n) {
        size_t i = 0;

        for (unsigned part = 0; part < 4; part++) {
                size_t start = i;
                unsigned v = 0;

                if (part > 0) {
                        if (i >= n || s[i] != '.')
                                return false;
                        start = ++i;
                }
                while (i < n && ascii_digit(s[i]) && i - start < 3)
                        v = v * 10 + (unsigned) (s[i++] - '0');
                if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
                        return false;
        }
        return i == n;
}

/* The last label would make a resolver (or a URL parser) read the name as an IPv4 address: all digits,
 * or "0x" and hex digits. */
static bool label_is_numeric(const char *l, size_t n) {
        size_t i = 0;

        if (n >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
                for (i = 2; i < n; i++)
                        if (hex_digit_value(l[i]) < 0)
                                return false;
                return true;
        }
        for (; i < n; i++)
                if (!ascii_digit(l[i]))
                        return false;
        return true;
}

/* host (n bytes, not NUL-terminated) -> its normalized form */
static int host_parse(const char *s, size_t n, char **ret, char **ret_why) {
        _cleanup_free_ char *h = NULL;
        size_t label_start = 0;
        bool digits_and_dots = true;

        if (n == 0)
                return error_setf(ret_why, -EINVAL, "no host");
        if (s[0] == '[') {
                char addr[INET6_ADDRSTRLEN], inner[INET6_ADDRSTRLEN + 1];
                struct in6_addr a;

                if (n < 3 || s[n - 1] != ']' || n - 2 > INET6_ADDRSTRLEN)
                        return error_setf(ret_why, -EINVAL, "malformed IPv6 literal");
                memcpy(inner, s + 1, n - 2);
                inner[n - 2] = 0;
                if (inet_pton(AF_INET6, inner, &a) != 1 || !inet_ntop(AF_INET6, &a, addr, sizeof(addr)))
                        return error_setf(ret_why, -EINVAL, "malformed IPv6 literal");
                if (asprintf(ret, "[%s]", addr) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (n > 253)
                return error_setf(ret_why, -EINVAL, "host name longer than 253 bytes");
        for (size_t i = 0; i <= n; i++) {
                if (i == n || s[i] == '.') {
                        size_t l = i - label_start;

                        if (l == 0)
                                return error_setf(ret_why, -EINVAL, "host name with an empty label");
                        if (l > 63)
                                return error_setf(ret_why, -EINVAL, "host name label longer than 63 bytes");
                        if (s[label_start] == '-' || s[i - 1] == '-')
                                return error_setf(ret_why, -EINVAL, "host name label starting or ending with '-'");
                        label_start = i + 1;
                        continue;
                }
                if (!ascii_alpha(s[i]) && !ascii_digit(s[i]) && s[i] != '-')
                        return error_setf(ret_why, -EINVAL, "host is not a DNS name, an IPv4 or a bracketed IPv6 literal");
                if (!ascii_digit(s[i]))
                        digits_and_dots = false;
        }
        if (digits_and_dots) {
                if (!ipv4_is_canonical(s, n))
                        return error_setf(ret_why, -EINVAL, "malformed IPv4 literal (expected four numbers 0-255)");
        } else {
                const char *last = memrchr(s, '.', n);
                size_t off = last ? (size_t) (last - s) + 1 : 0;

                if (label_is_numeric(s + off, n - off))
                        return error_setf(ret_why, -EINVAL, "host name whose last label is a number");
        }
        h = strndup(s, n);
        if (!h)
                return -ENOMEM;
        for (char *c = h; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char) (*c - 'A' + 'a');
        *ret = TAKE_PTR(h);
        return 0;
}

static int port_parse(const char *s, size_t n, uint16_t *ret, char **ret_why) {
        unsigned v = 0;

        if (n == 0 || n > 5 || s[0] == '0')
                return error_setf(ret_why, -EINVAL, "port must be a number 1-65535 without leading zeros");
        for (size_t i = 0; i < n; i++) {
                if (!ascii_digit(s[i]))
                        return error_setf(ret_why, -EINVAL, "port must be a number 1-65535 without leading zeros");
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (v > 65535)
                return error_setf(ret_why, -EINVAL, "port must be a number 1-65535 without leading zeros");
        *ret = (uint16_t) v;
        return 0;
}

/* The path (n bytes) -> its normalized form. Percent-encoding only when 'encoded' (requests). */
static int path_parse(const char *s, size_t n, bool encoded, char **ret, char **ret_why) {
        _cleanup_free_ char *p = NULL;
        size_t k = 0;

        if (n == 0 || s[0] != '/')
                return error_setf(ret_why, -EINVAL, "path must start with '/'");
        p = malloc(n + 1);
        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int hi, lo;
                char b;

                if (s[i] == '/' || is_pchar(s[i])) {
                        p[k++] = s[i];
                        continue;
                }
                if (s[i] != '%')
                        return error_setf(ret_why, -EINVAL, "path holds a character not allowed there ('%c')", s[i]);
                if (!encoded)
                        return error_setf(ret_why, -EINVAL, "path holds '%%' (no percent-encoding in a prefix)");
                if (i + 2 >= n)
                        return error_setf(ret_why, -EINVAL, "path holds a malformed percent-encoding");
                hi = hex_digit_value(s[i + 1]);
                lo = hex_digit_value(s[i + 2]);
                if (hi < 0 || lo < 0)
                        return error_setf(ret_why, -EINVAL, "path holds a malformed percent-encoding");
                b = (char) (hi << 4 | lo);
                if (b == '/' || b == '.' || b == '\\' || b == '%' || (unsigned char) b < 0x20 || b == 0x7f)
                        return error_setf(ret_why, -EINVAL,
                                          "path holds an encoded '/', '.', '\\', '%%' or control character");
                if (is_unreserved(b))
                        p[k++] = b;
                else {
                        /* as written, hex digits upper case: never longer than the input */
                        p[k++] = '%';
                        p[k++] = "0123456789ABCDEF"[hi];
                        p[k++] = "0123456789ABCDEF"[lo];
                }
                i += 2;
        }
        p[k] = 0;

        if (strstr(p, "//"))
                return error_setf(ret_why, -EINVAL, "path holds an empty segment ('//')");
        for (const char *seg = p; seg; seg = strchr(seg + 1, '/')) {
                const char *e = seg + 1;
                size_t l = strcspn(e, "/");

                if ((l == 1 && e[0] == '.') || (l == 2 && e[0] == '.' && e[1] == '.'))
                        return error_setf(ret_why, -EINVAL, "path holds a '.' or '..' segment");
        }
        *ret = TAKE_PTR(p);
        return 0;
}

static int query_parse(const char *s, char **ret, char **ret_why) {
        for (size_t i = 0; s[i]; i++) {
                if (s[i] == '/' || s[i] == '?' || is_pchar(s[i]))
                        continue;
                if (s[i] != '%')
                        return error_setf(ret_why, -EINVAL, "query holds a character not allowed there ('%c')", s[i]);
                if (hex_digit_value(s[i + 1]) < 0 || hex_digit_value(s[i + 2]) < 0)
                        return error_setf(ret_why, -EINVAL, "query holds a malformed percent-encoding");
                if (s[i + 1] == '0' && s[i + 2] == '0')
                        return error_setf(ret_why, -EINVAL, "query holds an encoded NUL (%%00)");
                i += 2;
        }
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int url_parse(const char *s, bool request, GrantUrl *ret, char **ret_why) {
        _cleanup_(grant_url_donep) GrantUrl u = {};
        const char *a, *auth_end, *path_end, *colon;
        size_t n;
        int r;

        if (!s)
                return error_setf(ret_why, -EINVAL, "no URL");
        n = strlen(s);
        if (n > GRANT_URL_MAX)
                return error_setf(ret_why, -EINVAL, "URL longer than %d bytes", GRANT_URL_MAX);
        for (size_t i = 0; i < n; i++)
                if (s[i] <= ' ' || s[i] > '~')
                        return error_setf(ret_why, -EINVAL, "URL holds a space, a control character or non-ASCII");
        if (strchr(s, '#'))
                return error_setf(ret_why, -EINVAL, "URL has a fragment ('#')");
        if (strncasecmp(s, "https://", 8) == 0) {
                u.scheme = GRANT_SCHEME_HTTPS;
                a = s + 8;
        } else if (strncasecmp(s, "http://", 7) == 0) {
                u.scheme = GRANT_SCHEME_HTTP;
                a = s + 7;
        } else
                return error_setf(ret_why, -EINVAL, "scheme must be https:// or http://");

        auth_end = a + strcspn(a, "/?");
        if (memchr(a, '@', (size_t) (auth_end - a)))
                return error_setf(ret_why, -EINVAL, "URL has a user name ('@')");
        if (memchr(a, '\\', (size_t) (auth_end - a)))
                return error_setf(ret_why, -EINVAL, "URL holds '\\'");
        /* the port's ':' is after an IPv6 literal's ']' */
        colon = a[0] == '[' ? memchr(a, ']', (size_t) (auth_end - a)) : a;
        if (!colon)
                return error_setf(ret_why, -EINVAL, "malformed IPv6 literal");
        colon = memchr(colon, ':', (size_t) (auth_end - colon));
        r = host_parse(a, (size_t) ((colon ?: auth_end) - a), &u.host, ret_why);
        if (r < 0)
                return r;
        u.port = grant_scheme_default_port(u.scheme);
        if (colon) {
                r = port_parse(colon + 1, (size_t) (auth_end - colon - 1), &u.port, ret_why);
                if (r < 0)
                        return r;
        }

        path_end = auth_end + strcspn(auth_end, "?");
        if (*path_end == '?' && !request)
                return error_setf(ret_why, -EINVAL, "URL prefix has a query ('?')");
        r = path_parse(auth_end, (size_t) (path_end - auth_end), request, &u.path, ret_why);
        if (r < 0)
                return r;
        if (*path_end == '?') {
                r = query_parse(path_end + 1, &u.query, ret_why);
                if (r < 0)
                        return r;
        }
        *ret = u;
        u = (GrantUrl) {};
        return 0;
}

int grant_url_prefix_parse(const char *s, GrantUrl *ret, char **ret_why) {
        return url_parse(s, false, ret, ret_why);
}

int grant_url_request_parse(const char *s, GrantUrl *ret, char **ret_why) {
        return url_parse(s, true, ret, ret_why);
}

int grant_url_format(const GrantUrl *u, char **ret) {
        char port[sizeof(":65535")] = "";
        const char *scheme = grant_scheme_to_string(u->scheme);

        if (!scheme || !u->host || !u->path)
                return -EINVAL;
        if (u->port != grant_scheme_default_port(u->scheme))
                snprintf(port, sizeof(port), ":%u", (unsigned) u->port);
        if (asprintf(ret, "%s://%s%s%s%s%s", scheme, u->host, port, u->path, u->query ? "?" : "",
                     strempty(u->query)) < 0)
                return -ENOMEM;
        return 0;
}

bool grant_path_covered(const char *prefix, const char *path) {
        size_t n = strlen(prefix);

        if (n == 0 || !strneq(path, prefix, n))
                return false;
        return path[n] == 0 || prefix[n - 1] == '/' || path[n] == '/';
}

/* ---- grants ---- */

void grant_done(Grant *g) {
        if (!g)
                return;
        free(g->name);
        free(g->credential);
        grant_url_done(&g->url_prefix);
        free(g->header);
        free(g->value_prefix);
        *g = (Grant) {};
}

static int dispatch_credential(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!credential_name_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected a credential name ([a-z][a-z0-9_-]{0,63})");
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

static int dispatch_methods(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        unsigned *methods = field, m = 0;
        size_t n;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return json_doc_fail(jd, p, "expected at least one method");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                GrantMethod k = grant_method_from_string(json_doc_string(e));

                if (k < 0)
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), e,
                                                 "expected one of GET, HEAD, POST, PUT, PATCH, DELETE");
                if (m & (1u << k))
                        return json_doc_fail(jd, JSON_INDEX(p, i), "'%s' is given twice", method_table[k]);
                m |= 1u << k;
        }
        *methods = m;
        return 0;
}

static int dispatch_url_prefix(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_free_ char *why = NULL;
        GrantUrl *u = field, parsed;
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        r = grant_url_prefix_parse(s, &parsed, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return json_doc_fail_got(jd, p, v, "expected an http(s) URL prefix: %s", strna(why));
        grant_url_done(u);
        *u = parsed;
        return 0;
}

static int dispatch_header(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!grant_secret_header_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected a header name (not Host, Cookie, Connection, "
                                         "Content-Length or Transfer-Encoding)");
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

static int dispatch_value_prefix(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!grant_value_prefix_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected at most 64 printable ASCII characters");
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

static int dispatch_max_body(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        uint64_t n;
        int r;

        r = json_doc_get_size(jd, p, v, &n);
        if (r < 0)
                return r;
        if (n < 1 || n > GRANT_MAX_BODY_MAX)
                return json_doc_fail_got(jd, p, v, "expected 1 byte to 64M");
        *(uint64_t *) field = n;
        return 0;
}

/* A key the grant file must have: sbxd writes every key, the defaults applied (a profile may leave it
 * out: grant_dispatch() filled in the default first). */
static int grant_key_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const Grant *g = field;
        const char *key = arg;

        if ((streq(key, "header") && g->header) || (streq(key, "value_prefix") && g->value_prefix) ||
            (streq(key, "max_body") && g->max_body > 0))
                return 0;
        return json_doc_missing(jd, p);
}

/* A grant: of a profile's credentials.grants, and of the grant file (docs/credentials.md). */
static const JsonDocField grant_fields[] = {
        { "credential", dispatch_credential, offsetof(Grant, credential), JSON_DOC_MANDATORY },
        { "methods", dispatch_methods, offsetof(Grant, methods), JSON_DOC_MANDATORY },
        { "url_prefix", dispatch_url_prefix, offsetof(Grant, url_prefix), JSON_DOC_MANDATORY },
        { "header", dispatch_header, offsetof(Grant, header), 0, "header", grant_key_missing },
        { "value_prefix", dispatch_value_prefix, offsetof(Grant, value_prefix), 0, "value_prefix", grant_key_missing },
        { "max_body", dispatch_max_body, offsetof(Grant, max_body), 0, "max_body", grant_key_missing },
        {}
};

int grant_dispatch(JsonDoc *jd, const JsonPath *p, json_object *o, const char *name, bool defaults, Grant *ret) {
        Grant g = {};
        int r = 0;

        if (!grant_name_is_valid(name))
                return json_doc_fail(jd, p, "invalid grant name: expected [a-z][a-z0-9_-]{0,31}");
        if (defaults) {
                g.header = strdup("Authorization");
                g.value_prefix = strdup("Bearer ");
                g.max_body = GRANT_MAX_BODY_DEFAULT;
                if (!g.header || !g.value_prefix)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = json_doc_dispatch(jd, p, o, grant_fields, &g);
        if (r >= 0 && !(g.name = strdup(name)))
                r = -ENOMEM;
        if (r < 0) {
                grant_done(&g);
                return r;
        }
        *ret = g;
        return 0;
}

int grant_from_json(json_object *o, const char *name, Grant *ret, char **ret_error) {
        JsonDoc jd = { .file = "grants" };
        int r;

        r = grant_dispatch(&jd, JSON_KEY(NULL, name), o, name, false, ret);
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(jd.error);
        free(jd.error);
        return r;
}

int grant_url_match(const Grant *g, const char *request_url, GrantUrl *ret_normalized, char **ret_why) {
        _cleanup_(grant_url_donep) GrantUrl u = {};
        const GrantUrl *pre = &g->url_prefix;
        int r;

        r = grant_url_request_parse(request_url, &u, ret_why);
        if (r < 0)
                return r;
        if (u.scheme != pre->scheme)
                return error_setf(ret_why, -EPERM, "the scheme is not the grant's (%s)", grant_scheme_to_string(pre->scheme));
        if (!streq(u.host, pre->host))
                return error_setf(ret_why, -EPERM, "the host is not the grant's (%s)", pre->host);
        if (u.port != pre->port)
                return error_setf(ret_why, -EPERM, "the port is not the grant's (%u)", (unsigned) pre->port);
        if (!grant_path_covered(pre->path, u.path))
                return error_setf(ret_why, -EPERM, "the path is not below the grant's prefix (%s)", pre->path);
        if (ret_normalized) {
                *ret_normalized = u;
                u = (GrantUrl) {};
        }
        return 0;
}

bool grant_request_header_allowed(const Grant *g, const char *name, const char *value) {
        static const char *const refused[] = {
                "Host", "Authorization", "Cookie", "Cookie2", "Content-Length", "Transfer-Encoding",
                "Connection", "Keep-Alive", "TE", "Trailer", "Upgrade", "Expect",
                /* the broker must see the response's body whole and as it is, to redact the secret */
                "Accept-Encoding", "Range", "If-Range",
                NULL,
        };

        if (!grant_header_name_is_valid(name) || !grant_header_value_is_valid(value))
                return false;
        if (strncasecmp(name, "Proxy-", 6) == 0 || name_in(name, refused))
                return false;
        return !(g && g->header && strcasecmp(name, g->header) == 0);
}

static bool contains(const char *s, const void *secret, size_t secret_len) {
        return secret_len > 0 && memmem(s, strlen(s), secret, secret_len);
}

bool grant_response_header_kept(const char *name, const char *value, const void *secret, size_t secret_len) {
        static const char *const dropped[] = {
                "Set-Cookie", "Set-Cookie2", "Authorization", "Proxy-Authorization", "Proxy-Authenticate",
                "Authentication-Info", "Proxy-Authentication-Info", "Connection", "Keep-Alive",
                "Transfer-Encoding", "Upgrade",
                NULL,
        };

        if (!grant_header_name_is_valid(name) || !grant_header_value_is_valid(value))
                return false;
        if (name_in(name, dropped))
                return false;
        return !contains(name, secret, secret_len) && !contains(value, secret, secret_len);
}

int grant_redact(void *buf, size_t len, const void *secret, size_t secret_len) {
        _cleanup_free_ size_t *fail = NULL;
        const uint8_t *s = secret;
        uint8_t *b = buf;
        size_t k = 0, done = 0;
        int count = 0;

        if (secret_len == 0 || len < secret_len)
                return 0;
        /* fail[i]: the length of the longest proper prefix of s[0..i] that is also its suffix */
        fail = malloc(secret_len * sizeof(size_t));
        if (!fail)
                return -ENOMEM;
        fail[0] = 0;
        for (size_t i = 1; i < secret_len; i++) {
                while (k > 0 && s[i] != s[k])
                        k = fail[k - 1];
                if (s[i] == s[k])
                        k++;
                fail[i] = k;
        }
        /* Bytes before i are never read again: an occurrence ending at i is overwritten at once. */
        k = 0;
        for (size_t i = 0; i < len; i++) {
                while (k > 0 && b[i] != s[k])
                        k = fail[k - 1];
                if (b[i] == s[k])
                        k++;
                if (k == secret_len) {
                        for (size_t j = MAX(i + 1 - secret_len, done); j <= i; j++)
                                b[j] = '*';
                        done = i + 1;
                        if (count < INT_MAX)
                                count++;
                        k = fail[k - 1];
                }
        }
        explicit_bzero(fail, secret_len * sizeof(size_t));
        return count;
}

/* ---- the grant file ---- */

GrantFile *grant_file_free(GrantFile *f) {
        if (!f)
                return NULL;
        free(f->cgroup);
        for (size_t i = 0; i < f->n_grants; i++)
                grant_done(&f->grants[i]);
        free(f->grants);
        return mfree(f);
}

static int dispatch_run_id(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s = json_doc_string(v);

        if (!run_id_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected a run id (%d lower-case hex digits)", RUN_ID_LEN);
        memcpy(field, s, RUN_ID_LEN + 1);
        return 0;
}

static int dispatch_tenant(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s = json_doc_string(v);

        if (!lower_hex_is_valid(s, GRANT_TENANT_LEN))
                return json_doc_fail_got(jd, p, v, "expected a tenant id (%d lower-case hex digits)", GRANT_TENANT_LEN);
        memcpy(field, s, GRANT_TENANT_LEN + 1);
        return 0;
}

static int dispatch_cgroup(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        GrantFile *f = field;
        char id[RUN_ID_LEN + 1];
        const char *s = json_doc_string(v);

        if (!s || grant_cgroup_run_id(s, id) < 0)
                return json_doc_fail_got(jd, p, v, "expected a run's cgroup "
                                         "(/sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUNID.service)");
        if (!streq(id, f->run))
                return json_doc_fail_got(jd, p, v, "expected the cgroup of run %s", f->run);
        f->cgroup = strdup(s);
        return f->cgroup ? 0 : -ENOMEM;
}

static int dispatch_grants(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        GrantFile *f = field;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_object))
                return json_doc_fail_got(jd, p, v, "expected an object of grants by name");
        n = (size_t) json_object_object_length(v);
        if (n > GRANT_FILE_GRANTS_MAX)
                return json_doc_fail(jd, p, "expected at most %d grants, got %zu", GRANT_FILE_GRANTS_MAX, n);
        f->grants = calloc(MAX(n, (size_t) 1), sizeof(Grant));
        if (!f->grants)
                return -ENOMEM;
        json_object_object_foreach(v, key, value) {
                r = grant_dispatch(jd, JSON_KEY(p, key), value, key, false, &f->grants[f->n_grants]);
                if (r < 0)
                        return r;
                f->n_grants++;
        }
        return 0;
}

/* in this order: cgroup is checked against run */
static const JsonDocField grant_file_fields[] = {
        { "run", dispatch_run_id, offsetof(GrantFile, run), JSON_DOC_MANDATORY },
        { "tenant", dispatch_tenant, offsetof(GrantFile, tenant), JSON_DOC_MANDATORY },
        { "cgroup", dispatch_cgroup, 0, JSON_DOC_MANDATORY },
        { "grants", dispatch_grants, 0, JSON_DOC_MANDATORY },
        {}
};

int grant_file_parse(const char *text, size_t size, const char *file, GrantFile **ret, char **ret_error) {
        _cleanup_(grant_file_freep) GrantFile *f = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        JsonDoc jd = { .file = file ?: "<input>" };
        int r;

        f = calloc(1, sizeof(GrantFile));
        if (!f)
                return -ENOMEM;
        r = json_doc_parse(&jd, text, size, &o);
        if (r >= 0)
                r = json_doc_dispatch(&jd, NULL, o, grant_file_fields, f);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(jd.error);
                free(jd.error);
                return r;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

const Grant *grant_file_find(const GrantFile *f, const char *name) {
        for (size_t i = 0; name && i < f->n_grants; i++)
                if (streq(f->grants[i].name, name))
                        return &f->grants[i];
        return NULL;
}

/* ---- cgroups ---- */

static bool cgroup_path_is_clean(const char *p) {
        size_t n = strlen(p);

        if (p[0] != '/')
                return false;
        for (const char *c = p; *c; c++)
                if ((unsigned char) *c <= ' ' || *c == 0x7f)
                        return false;
        if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
                return false;
        if ((n >= 2 && streq(p + n - 2, "/.")) || (n >= 3 && streq(p + n - 3, "/..")))
                return false;
        return true;
}

int grant_cgroup_from_proc(const char *text, char **ret_path) {
        const char *nl;
        char *p;

        if (!text || !strneq(text, "0::/", 4))
                return -EINVAL;
        nl = strchr(text, '\n');
        if (nl && nl[1] != 0)
                return -EINVAL;
        p = strndup(text + 3, nl ? (size_t) (nl - text - 3) : strlen(text + 3));
        if (!p)
                return -ENOMEM;
        if (!cgroup_path_is_clean(p)) {
                free(p);
                return -EINVAL;
        }
        *ret_path = p;
        return 0;
}

const char *grant_cgroup_unified_line(const char *text) {
        const char *line = text;

        if (!text)
                return NULL;
        for (;;) {
                const char *nl = strchr(line, '\n');

                /* the last line (a final newline aside): the unified hierarchy's */
                if (!nl || nl[1] == 0)
                        return strneq(line, "0::", 3) ? line : NULL;
                /* every line before it a v1 hierarchy's: "N:", N > 0 */
                if (line[0] < '1' || line[0] > '9')
                        return NULL;
                line += strspn(line, "0123456789");
                if (*line != ':')
                        return NULL;
                line = nl + 1;
        }
}

bool grant_cgroup_matches(const char *proc_text, const char *run_cgroup) {
        _cleanup_free_ char *path = NULL;
        size_t n;

        if (!run_cgroup || !cgroup_path_is_clean(run_cgroup) || grant_cgroup_from_proc(proc_text, &path) < 0)
                return false;
        n = strlen(run_cgroup);
        if (n < 2 || run_cgroup[n - 1] == '/')
                return false;
        return strneq(path, run_cgroup, n) && (path[n] == 0 || path[n] == '/');
}

int grant_cgroup_run_id(const char *path, char ret[static RUN_ID_LEN + 1]) {
        static const char root[] = "/" SBX_SLICE_PARENT "/sbx-";
        _cleanup_free_ char *profile = NULL;
        const char *p, *e, *id;
        size_t n;

        if (!path || !strneq(path, root, strlen(root)))
                return -EINVAL;
        p = path + strlen(root);
        e = strchr(p, '/');
        if (!e || (size_t) (e - p) <= strlen(".slice") || !strneq(e - strlen(".slice"), ".slice", strlen(".slice")))
                return -EINVAL;
        n = (size_t) (e - p) - strlen(".slice");
        profile = strndup(p, n);
        if (!profile)
                return -ENOMEM;
        if (!profile_name_is_valid(profile))
                return -EINVAL;
        /* "/sbx-PROFILE-" */
        p = e;
        if (!strneq(p, "/sbx-", 5) || !strneq(p + 5, profile, n) || p[5 + n] != '-')
                return -EINVAL;
        id = p + 5 + n + 1;
        if (strlen(id) < RUN_ID_LEN + strlen(".service") ||
            !strneq(id + RUN_ID_LEN, ".service", strlen(".service")))
                return -EINVAL;
        e = id + RUN_ID_LEN + strlen(".service");
        if (*e != 0 && *e != '/')
                return -EINVAL;
        memcpy(ret, id, RUN_ID_LEN);
        ret[RUN_ID_LEN] = 0;
        if (!run_id_is_valid(ret))
                return -EINVAL;
        return 0;
}

/* ---- the wire protocol ---- */

void grant_request_done(GrantRequest *r) {
        if (!r)
                return;
        free(r->grant);
        free(r->method);
        free(r->url);
        strv_free(r->headers);
        *r = (GrantRequest) {};
}

static int dispatch_headers(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_strv_free_ char **l = NULL;
        char ***ret = field;
        size_t n, i = 0;

        if (!json_object_is_type(v, json_type_object))
                return json_doc_fail_got(jd, p, v, "expected an object of header values by name");
        n = (size_t) json_object_object_length(v);
        if (n > GRANT_REQUEST_HEADERS_MAX)
                return json_doc_fail(jd, p, "expected at most %d headers, got %zu", GRANT_REQUEST_HEADERS_MAX, n);
        l = calloc(2 * n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        json_object_object_foreach(v, key, value) {
                const char *s;
                int r;

                r = json_doc_get_string(jd, JSON_KEY(p, key), value, &s);
                if (r < 0)
                        return r;
                l[i] = strdup(key);
                l[i + 1] = strdup(s);
                if (!l[i] || !l[i + 1])
                        return -ENOMEM;
                i += 2;
        }
        strv_free(*ret);
        *ret = TAKE_PTR(l);
        return 0;
}

static const JsonDocField request_fields[] = {
        { "grant", json_doc_dispatch_string, offsetof(GrantRequest, grant), JSON_DOC_MANDATORY },
        { "method", json_doc_dispatch_string, offsetof(GrantRequest, method), JSON_DOC_MANDATORY },
        { "url", json_doc_dispatch_string, offsetof(GrantRequest, url), JSON_DOC_MANDATORY },
        { "headers", dispatch_headers, offsetof(GrantRequest, headers) },
        { "body_bytes", json_doc_dispatch_uint64, offsetof(GrantRequest, body_bytes) },
        {}
};

int grant_request_parse(const char *line, size_t size, GrantRequest *ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        JsonDoc jd = { .file = "request" };
        GrantRequest req = {};
        int r;

        r = json_doc_parse(&jd, line, size, &o);
        if (r >= 0)
                r = json_doc_dispatch(&jd, NULL, o, request_fields, &req);
        if (r < 0) {
                grant_request_done(&req);
                if (ret_error)
                        *ret_error = TAKE_PTR(jd.error);
                free(jd.error);
                return r;
        }
        *ret = req;
        return 0;
}

/* o as one line, '\n' included */
static int json_line(json_object *o, char **ret, size_t *ret_size) {
        const char *s;
        size_t n;
        char *b;

        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        n = strlen(s);
        b = malloc(n + 2);
        if (!b)
                return -ENOMEM;
        memcpy(b, s, n);
        b[n] = '\n';
        b[n + 1] = 0;
        *ret = b;
        if (ret_size)
                *ret_size = n + 1;
        return 0;
}

/* Adds key: v to o, taking v (NULL is null); false on ENOMEM (v is freed). */
static bool add(json_object *o, const char *key, json_object *v) {
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return false;
        }
        return true;
}

static json_object *new_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

int grant_reply_format(int status, char * const *headers, uint64_t body_bytes, char **ret, size_t *ret_size) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;

        o = json_object_new_object();
        if (!o || !add(o, "status", json_object_new_int(status)))
                return -ENOMEM;
        a = json_object_new_array();
        if (!a || !add(o, "headers", a))
                return -ENOMEM;
        for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2) {
                json_object *pair = json_object_new_array();

                if (!pair || json_object_array_add(a, pair) < 0) {
                        json_object_put(pair);
                        return -ENOMEM;
                }
                if (json_object_array_add(pair, json_object_new_string(headers[i])) < 0 ||
                    json_object_array_add(pair, json_object_new_string(headers[i + 1])) < 0)
                        return -ENOMEM;
        }
        if (!add(o, "body_bytes", json_object_new_uint64(body_bytes)))
                return -ENOMEM;
        return json_line(o, ret, ret_size);
}

int grant_error_format(GrantReason reason, const char *message, char **ret, size_t *ret_size) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *r = grant_reason_to_string(reason);

        if (!r)
                return -EINVAL;
        o = json_object_new_object();
        if (!o || !add(o, "error", json_object_new_string(strempty(message))) ||
            !add(o, "reason", json_object_new_string(r)))
                return -ENOMEM;
        return json_line(o, ret, ret_size);
}

/* ---- the operations log ---- */

int grant_op_format(const GrantOp *op, char **ret, size_t *ret_size) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *verdict = grant_verdict_to_string(op->verdict);
        char id[17];

        if (!verdict)
                return -EINVAL;
        snprintf(id, sizeof(id), "%016" PRIx64, op->id);
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        if (!add(o, "id", json_object_new_string(id)) ||
            !add(o, "grant", new_string_or_null(op->grant)) ||
            !add(o, "method", new_string_or_null(grant_method_to_string(op->method))) ||
            !add(o, "host", new_string_or_null(op->host)) ||
            !add(o, "port", op->port > 0 ? json_object_new_int(op->port) : NULL) ||
            !add(o, "path_prefix", new_string_or_null(op->path_prefix)) ||
            !add(o, "verdict", json_object_new_string(verdict)) ||
            !add(o, "reason", new_string_or_null(grant_reason_to_string(op->reason))) ||
            !add(o, "status", op->status >= 0 ? json_object_new_int(op->status) : NULL) ||
            !add(o, "request_bytes", json_object_new_uint64(op->request_bytes)) ||
            !add(o, "response_bytes", json_object_new_uint64(op->response_bytes)) ||
            !add(o, "start_usec", json_object_new_uint64(op->start_usec)) ||
            !add(o, "duration_usec", json_object_new_uint64(op->duration_usec)))
                return -ENOMEM;
        return json_line(o, ret, ret_size);
}
