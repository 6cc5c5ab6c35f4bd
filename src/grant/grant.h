/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Broker grants (docs/credentials.md): what a run may ask the credential broker (sbx-broker) to do with a
 * secret it never holds, and every check the broker makes of a request against them. Pure (json-c and
 * libc string functions only): no I/O, no clock, no randomness; the broker passes those in.
 *
 * A grant lets a run's workload have the broker send requests with one of the caller's secrets in one
 * header, to one scheme, host and port, below one path, with some methods:
 *
 *   "credential":   the secret's name, [a-z][a-z0-9_-]{0,63}
 *   "methods":      non-empty array of unique methods: GET HEAD POST PUT PATCH DELETE
 *   "url_prefix":   "https://git.example:8443/api/repos/acme/" (grant_url_prefix_parse() says exactly what
 *                   is accepted)
 *   "header":       the header the secret goes into (an HTTP token; not Host, Content-Length,
 *                   Transfer-Encoding, Connection or Cookie); default "Authorization"
 *   "value_prefix": put before the secret in that header, printable ASCII, at most 64 bytes;
 *                   default "Bearer "
 *   "max_body":     bytes, the cap of the request's body and of the response's; default 1M, at most 64M
 *
 * Grant names are [a-z][a-z0-9_-]{0,31}. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json-doc.h"
#include "macro.h"
#include "util.h"

#define GRANT_NAME_MAX 32
#define GRANT_CREDENTIAL_NAME_MAX 64
#define GRANT_VALUE_PREFIX_MAX 64
#define GRANT_HEADER_NAME_MAX 128
#define GRANT_MAX_BODY_DEFAULT (UINT64_C(1) << 20)
#define GRANT_MAX_BODY_MAX (UINT64_C(64) << 20)
#define GRANT_URL_MAX 8192          /* bytes of a request's URL (and of a prefix) */
#define GRANT_SECRET_MAX (64 * 1024) /* bytes of a decrypted secret */
#define GRANT_OPS_LINES_MAX 1024     /* lines of a run's operations log */
#define GRANT_FILE_MAX (1024 * 1024) /* bytes of a grant file */
#define GRANT_REQUEST_LINE_MAX (64 * 1024) /* bytes of a request's JSON line, its '\n' included */
#define GRANT_REQUEST_HEADERS_MAX 64 /* headers a request may set */
#define GRANT_FILE_GRANTS_MAX 64     /* grants of one run */
#define GRANT_TENANT_LEN 32          /* TENANT_ID_LEN: lower-case hex */

typedef enum GrantMethod {
        GRANT_METHOD_GET,
        GRANT_METHOD_HEAD,
        GRANT_METHOD_POST,
        GRANT_METHOD_PUT,
        GRANT_METHOD_PATCH,
        GRANT_METHOD_DELETE,
        _GRANT_METHOD_MAX,
        _GRANT_METHOD_INVALID = -EINVAL,
} GrantMethod;

/* Exactly one of the upper-case names above; _GRANT_METHOD_INVALID otherwise (lower case too). */
GrantMethod grant_method_from_string(const char *s);
const char *grant_method_to_string(GrantMethod m); /* NULL when out of range */

typedef enum GrantScheme {
        GRANT_SCHEME_HTTPS,
        GRANT_SCHEME_HTTP,
        _GRANT_SCHEME_MAX,
        _GRANT_SCHEME_INVALID = -EINVAL,
} GrantScheme;

const char *grant_scheme_to_string(GrantScheme s); /* "https", "http"; NULL when out of range */
uint16_t grant_scheme_default_port(GrantScheme s); /* 443, 80; 0 when out of range */

/* Why the broker refused a request or could not perform it: the "reason" of its error reply and of the
 * operations log. */
typedef enum GrantReason {
        GRANT_REASON_BAD_REQUEST, /* "bad-request": the request line or its body is malformed */
        GRANT_REASON_NO_RUN,      /* "no-run": the peer is not a process of a live run with grants */
        GRANT_REASON_NO_GRANT,    /* "no-grant": the run has no grant of that name */
        GRANT_REASON_METHOD,      /* "method": the grant does not allow the method */
        GRANT_REASON_URL,         /* "url": malformed, or outside the grant's url_prefix */
        GRANT_REASON_HEADER,      /* "header": a request header that is not allowed or malformed */
        GRANT_REASON_TOO_LARGE,   /* "too-large": a body (or the response's headers) above the cap */
        GRANT_REASON_NO_SECRET,   /* "no-secret": the secret is missing, undecryptable or unusable */
        GRANT_REASON_UPSTREAM,    /* "upstream": connection, TLS or timeout failure */
        GRANT_REASON_INTERNAL,    /* "internal": the broker's own failure (or it is busy) */
        _GRANT_REASON_MAX,
        _GRANT_REASON_INVALID = -EINVAL,
} GrantReason;

const char *grant_reason_to_string(GrantReason r); /* NULL when out of range */
GrantReason grant_reason_from_string(const char *s);

/* ---- names ---- */

bool grant_name_is_valid(const char *s);      /* [a-z][a-z0-9_-]{0,31} */
bool credential_name_is_valid(const char *s); /* [a-z][a-z0-9_-]{0,63} */
/* An HTTP header name: 1 to GRANT_HEADER_NAME_MAX token characters (RFC 9110 tchar). */
bool grant_header_name_is_valid(const char *s);
/* A grant's "header": a header name, and none of Host, Content-Length, Transfer-Encoding, Connection,
 * Cookie (any case). */
bool grant_secret_header_is_valid(const char *s);
/* A grant's "value_prefix": printable ASCII (space to '~'), at most GRANT_VALUE_PREFIX_MAX bytes; may be
 * empty. */
bool grant_value_prefix_is_valid(const char *s);
/* A header value the broker passes on (request) or back (response): printable ASCII and tabs only, so no
 * CR, LF or NUL; may be empty. */
bool grant_header_value_is_valid(const char *s);

/* ---- URLs ---- */

/* A parsed http(s) URL, normalized: scheme and host lower case, the port always set (the scheme's
 * default when the URL has none), an IPv6 literal in inet_ntop()'s form within brackets, percent-encoded
 * unreserved characters (letters, digits, '-', '_', '~') of the path decoded and every other %XX written
 * with upper-case hex digits. */
typedef struct GrantUrl {
        GrantScheme scheme;
        char *host;  /* "git.example", "192.0.2.1", "[2001:db8::1]" */
        uint16_t port;
        char *path;  /* starts with "/" */
        char *query; /* after '?', without it; NULL: no '?' (never set for a prefix) */
} GrantUrl;

void grant_url_done(GrantUrl *u);

/* Parses a grant's url_prefix. Accepted:
 *   - "https://" or "http://" (any case), then the host: a DNS name (labels of letters, digits and '-',
 *     1 to 63 each, not starting or ending with '-', 253 bytes at most, no trailing dot; lower-cased),
 *     an IPv4 literal in dotted-decimal (four numbers 0-255 without leading zeros; a name whose last
 *     label is numeric or 0x-hex is refused, as resolvers would read it as an address), or an IPv6
 *     literal in brackets (no zone);
 *   - an optional ":PORT", 1 to 65535 without leading zeros;
 *   - the path, starting with "/": RFC 3986 path characters only (letters, digits, -._~!$&'()*+,;=:@/),
 *     so no '%', '\\', space or control character; no "//"; no "." or ".." segment.
 * Refused: anything else, in particular a userinfo ("user@"), '?' (a query), '#' (a fragment), bytes
 * outside printable ASCII, more than GRANT_URL_MAX bytes.
 * On failure ret_why (if not NULL) says what is wrong, in one line without the URL; -EINVAL, or
 * -ENOMEM. */
int grant_url_prefix_parse(const char *s, GrantUrl *ret, char **ret_why);

/* Parses a request's URL by the rules of grant_url_prefix_parse(), except:
 *   - the path may hold %XX (two hex digits), which must not encode '/', '.', '\\', '%', a control
 *     character (%00-%1F, %7F): "%2e", "%2F", "%5c", "%25", "%00" are refused in any case;
 *   - a query is allowed: path characters, '/', '?' and %XX (any byte but %00);
 * a fragment ('#') is refused. */
int grant_url_request_parse(const char *s, GrantUrl *ret, char **ret_why);

/* "scheme://host[:port]path[?query]", the port left out when it is the scheme's default. */
int grant_url_format(const GrantUrl *u, char **ret);

/* Whether the path is the prefix's or below it: equal, or starting with it where the prefix ends in '/'
 * or the path's next character is '/'. "/api/a" covers "/api/a" and "/api/a/b", not "/api/ab". */
bool grant_path_covered(const char *prefix, const char *path);

/* ---- grants ---- */

typedef struct Grant {
        char *name;
        char *credential;
        unsigned methods; /* 1u << GrantMethod */
        GrantUrl url_prefix;
        char *header;
        char *value_prefix;
        uint64_t max_body;
} Grant;

void grant_done(Grant *g);

static inline bool grant_allows_method(const Grant *g, GrantMethod m) {
        return m >= 0 && m < _GRANT_METHOD_MAX && (g->methods & (1u << m));
}

/* One grant named name, o being its object, decoded by the table of the format above into *ret: for a
 * profile's credentials.grants (defaults: the keys "header", "value_prefix" and "max_body" may be left
 * out) and for the grant file (every key required). p is o's path, for messages. */
int grant_dispatch(JsonDoc *jd, const JsonPath *p, json_object *o, const char *name, bool defaults, Grant *ret);

/* One grant of a grant file, o being its object: every key present and valid (no defaults there: sbxd
 * writes them all). name is the grant's key, copied into ret->name. On failure ret_error (if not NULL)
 * says "grants: NAME.KEY: what"; -EINVAL, or -ENOMEM. */
int grant_from_json(json_object *o, const char *name, Grant *ret, char **ret_error);

/* Whether the request URL is malformed (-EINVAL) or outside the grant's prefix (-EPERM): different
 * scheme, host (compared case-insensitively, as both are lower case), port (default ports resolved) or a
 * path that grant_path_covered() does not cover. On success ret_normalized (if not NULL) is the parsed
 * request URL. ret_why (if not NULL) says why not, without the URL's path or query; -ENOMEM too. */
int grant_url_match(const Grant *g, const char *request_url, GrantUrl *ret_normalized, char **ret_why);

/* A header a request may set: a valid name and value (grant_header_name_is_valid(),
 * grant_header_value_is_valid()) and none of: Host, Authorization, Proxy-*, Cookie, Cookie2, Content-Length,
 * Transfer-Encoding, Connection, Keep-Alive, TE, Trailer, Upgrade, Expect, the grant's own header, and
 * Accept-Encoding, Range, If-Range (the broker redacts the secret from the response's body: it must see
 * the body whole and not encoded). Names compare case-insensitively. */
bool grant_request_header_allowed(const Grant *g, const char *name, const char *value);

/* A response header the broker passes back: a valid name, a printable-ASCII value, not one of
 * Set-Cookie, Set-Cookie2, Authorization, Proxy-Authorization, Proxy-Authenticate, Authentication-Info,
 * Proxy-Authentication-Info, Connection, Keep-Alive, Transfer-Encoding, Upgrade, and neither name nor
 * value containing the secret (secret_len 0: no secret to look for). */
bool grant_response_header_kept(const char *name, const char *value, const void *secret, size_t secret_len);

/* Overwrites every occurrence of the secret in buf with '*' bytes, overlapping ones included, in one
 * pass (Knuth-Morris-Pratt: linear in len + secret_len). Returns the number of occurrences (at most
 * INT_MAX), 0 for secret_len 0, or -ENOMEM. */
int grant_redact(void *buf, size_t len, const void *secret, size_t secret_len);

/* ---- the grant file: /run/sbx/grants/RUNID.json, written by sbxd, root's only ---- */

/* {"run":"RUNID","tenant":"<32 hex>","cgroup":"/sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUNID.service",
 *  "grants":{"NAME":{every key of a grant}, ...}} */
typedef struct GrantFile {
        char run[RUN_ID_LEN + 1];
        char tenant[GRANT_TENANT_LEN + 1];
        char *cgroup;        /* its RUNID is run's */
        Grant *grants;
        size_t n_grants;
} GrantFile;

GrantFile *grant_file_free(GrantFile *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(GrantFile *, grant_file_free);

/* Parses a grant file of size bytes (no NUL needed). file names it in messages. On failure ret_error (if
 * not NULL) is one line "FILE: key.path: what"; -EINVAL, or -ENOMEM. */
int grant_file_parse(const char *text, size_t size, const char *file, GrantFile **ret, char **ret_error);
const Grant *grant_file_find(const GrantFile *f, const char *name);

/* ---- the peer's identity: its cgroup ---- */

/* The cgroup path of /proc/PID/cgroup's text on a cgroup v2 (unified) host: exactly one line "0::/PATH",
 * the final newline optional. Refused (-EINVAL): another line (a hybrid host), a path with "//", "/./",
 * "/../", ending in "/." or "/..", or holding a control character or a space (the kernel appends
 * " (deleted)" for a removed cgroup). */
int grant_cgroup_from_proc(const char *text, char **ret_path);

/* On a host whose service manager runs the unified hierarchy alone (cgroup2 at /sys/fs/cgroup) while cgroup
 * v1 hierarchies are mounted beside it by something else (a container's host: this project's nspawn
 * testbed), /proc/PID/cgroup lists the process's place in each v1 hierarchy first ("N:CONTROLLERS:PATH",
 * N > 0) and its place in the unified one last ("0::PATH"), the only one the service manager, and so a
 * run's unit, knows. Returns that last line (to the end of text), for grant_cgroup_from_proc() and
 * grant_cgroup_matches(); NULL unless every line before it starts "N:" with N > 0 and it starts "0::". A
 * path that holds a newline cannot forge it: its rest is a line after the real "0::" line, which is then
 * not the last. Only for such a host: on one whose service manager uses the v1 hierarchies (hybrid mode),
 * a unit's place is not the "0::" line. */
const char *grant_cgroup_unified_line(const char *text);

/* Whether /proc/PID/cgroup's text (as above) puts the process in run_cgroup or below it: the path equal
 * to run_cgroup or starting with run_cgroup + "/". False for anything grant_cgroup_from_proc() refuses. */
bool grant_cgroup_matches(const char *proc_text, const char *run_cgroup);

/* The run id of a cgroup path /sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUNID.service[/...] (policy.c's
 * policy_cgroup_path() without /sys/fs/cgroup): PROFILE a profile name, the same twice, RUNID a run id.
 * -EINVAL for any other path. */
int grant_cgroup_run_id(const char *path, char ret[static RUN_ID_LEN + 1]);

/* ---- the wire protocol (one request per connection) ---- */

/* The request line: {"grant":"NAME","method":"GET","url":"...","headers":{"Name":"value",...},
 * "body_bytes":N}, "headers" and "body_bytes" optional. The values are checked for shape only (strings,
 * an object of strings, an integer >= 0); what they may be is checked against the grant. */
typedef struct GrantRequest {
        char *grant;
        char *method;
        char *url;
        char **headers; /* name, value, name, value, ..., NULL */
        uint64_t body_bytes;
} GrantRequest;

void grant_request_done(GrantRequest *r);
/* line is the request's JSON, without its '\n'. On failure ret_error (if not NULL) names what is wrong;
 * -EINVAL, or -ENOMEM. */
int grant_request_parse(const char *line, size_t size, GrantRequest *ret, char **ret_error);

/* The broker's replies, one line each, '\n' included:
 * {"status":S,"headers":[["Name","value"],...],"body_bytes":N}, headers a NULL-terminated list of names
 * and values as for GrantRequest; and {"error":"MESSAGE","reason":"REASON"}. */
int grant_reply_format(int status, char * const *headers, uint64_t body_bytes, char **ret, size_t *ret_size);
int grant_error_format(GrantReason reason, const char *message, char **ret, size_t *ret_size);

/* ---- the operations log: /run/sbx/grants/RUNID.ops, one line per request ---- */

typedef enum GrantVerdict {
        GRANT_VERDICT_DONE,    /* "done": performed, whatever the status */
        GRANT_VERDICT_REFUSED, /* "refused": a check failed */
        GRANT_VERDICT_FAILED,  /* "failed": allowed, but it could not be performed */
        _GRANT_VERDICT_MAX,
        _GRANT_VERDICT_INVALID = -EINVAL,
} GrantVerdict;

const char *grant_verdict_to_string(GrantVerdict v);

/* What one line says. Nothing of the request beyond its method, and the grant's place (not the
 * request's): the query, the path, bodies, header values and the secret never appear. */
typedef struct GrantOp {
        uint64_t id;             /* random: "id" as 16 lower-case hex digits */
        const char *grant;       /* the grant's name, NULL (null) when the request names none of the run's */
        GrantMethod method;      /* _GRANT_METHOD_INVALID: null */
        const char *host;        /* the grant's host, NULL: null */
        uint16_t port;           /* the grant's port, 0: null */
        const char *path_prefix; /* the grant's prefix path, NULL: null */
        GrantVerdict verdict;
        GrantReason reason;      /* _GRANT_REASON_INVALID: null (done) */
        int status;              /* the upstream's HTTP status, < 0: null */
        uint64_t request_bytes;  /* of the request's body */
        uint64_t response_bytes; /* of the response's body */
        usec_t start_usec;       /* CLOCK_REALTIME */
        usec_t duration_usec;
} GrantOp;

/* {"id":"<16 hex>","grant":...,"method":...,"host":...,"port":...,"path_prefix":...,"verdict":...,
 *  "reason":...,"status":...,"request_bytes":N,"response_bytes":N,"start_usec":N,"duration_usec":N}
 * and '\n': one line, to be appended with one write(2). -EINVAL for a verdict out of range. */
int grant_op_format(const GrantOp *op, char **ret, size_t *ret_size);
