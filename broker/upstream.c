/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>

#include "broker-log.h"
#include "upstream.h"

#define CONNECT_TIMEOUT_SEC 10L
#define TIMEOUT_SEC 30L
#define RESPONSE_HEADERS_MAX 128
#define RESPONSE_HEADER_BYTES_MAX (64 * 1024)

/* ---- libcurl's memory: wiped when freed ---- */

static void wipe_free(void *p) {
        if (!p)
                return;
        explicit_bzero(p, malloc_usable_size(p));
        free(p);
}

static void *wipe_realloc(void *p, size_t n) {
        size_t old;
        void *q;

        if (!p)
                return malloc(n);
        q = malloc(MAX(n, (size_t) 1));
        if (!q)
                return NULL;
        old = malloc_usable_size(p);
        memcpy(q, p, MIN(old, n));
        wipe_free(p);
        return q;
}

static char *wipe_strdup(const char *s) {
        size_t n = strlen(s) + 1;
        char *c = malloc(n);

        return c ? memcpy(c, s, n) : NULL;
}

int upstream_global_init(void) {
        const curl_version_info_data *v;
        CURLcode c;

        c = curl_global_init_mem(CURL_GLOBAL_DEFAULT, malloc, wipe_free, wipe_realloc, wipe_strdup, calloc);
        if (c != CURLE_OK)
                return log_error_errno(-EIO, "Failed to initialize libcurl: %s", curl_easy_strerror(c));
        v = curl_version_info(CURLVERSION_NOW);
        if (!(v->features & CURL_VERSION_ASYNCHDNS))
                log_notice("libcurl %s resolves host names synchronously: its timeouts do not bound name resolution.",
                           v->version);
        return 0;
}

/* ---- connections kept per tenant ----
 *
 * A request's handle comes from the idle handles of its tenant for its origin (scheme://host:port) when
 * there is one: a libcurl handle keeps its connection (one: CURLOPT_MAXCONNECTS) and its TLS sessions
 * across curl_easy_reset(), so that the next request of the same tenant to the same upstream goes over
 * the connection left open, without a new handshake (libcurl checks that the TLS settings match too).
 * Never across tenants: a handle is taken only by a request of the tenant it served. Options, headers
 * and the request's state are reset when a handle is given back; cookies are never enabled, so none is
 * kept. At most POOL_PER_TENANT idle handles per tenant and POOL_MAX in all (the oldest goes first),
 * and none idle longer than POOL_IDLE_USEC: closed at the next request of any tenant. */

#define POOL_MAX 32
#define POOL_PER_TENANT 4
#define POOL_IDLE_USEC (60 * USEC_PER_SEC)

#define ORIGIN_MAX 300 /* "https://" + a host name (253) + ":65535" */

typedef struct PoolEntry {
        char key[UPSTREAM_POOL_KEY_MAX + 1];
        char origin[ORIGIN_MAX + 1];
        CURL *curl;
        usec_t since;      /* CLOCK_MONOTONIC: idle since */
} PoolEntry;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static PoolEntry pool[POOL_MAX];
static size_t pool_n;

static void pool_remove_at(size_t i, CURL **closing, size_t *n_closing) {
        closing[(*n_closing)++] = pool[i].curl;
        pool[i] = pool[--pool_n];
}

/* Under pool_lock: the handles idle too long, into closing[] (closed outside the lock). */
static void pool_expire(usec_t now, CURL **closing, size_t *n_closing) {
        for (size_t i = 0; i < pool_n;)
                if (now - pool[i].since > POOL_IDLE_USEC)
                        pool_remove_at(i, closing, n_closing);
                else
                        i++;
}

static void pool_close(CURL **closing, size_t n) {
        for (size_t i = 0; i < n; i++)
                curl_easy_cleanup(closing[i]);
}

/* The URL's scheme://host:port (a normalized URL: grant_url_format()) into origin[ORIGIN_MAX + 1];
 * false if it has none or it is too long: such a request keeps nothing. */
static bool url_origin(const char *url, char *origin) {
        const char *p = strstr(url, "://");
        size_t n;

        if (!p)
                return false;
        n = (size_t) (p + 3 - url) + strcspn(p + 3, "/?#");
        if (n > ORIGIN_MAX)
                return false;
        memcpy(origin, url, n);
        origin[n] = 0;
        return true;
}

static bool poolable(const char *key, const char *url, char *origin) {
        return key && strlen(key) <= UPSTREAM_POOL_KEY_MAX && url_origin(url, origin);
}

/* The most recently used idle handle of the key's for the origin, or a new one; NULL when out of memory. */
static CURL *pool_take(const char *key, const char *url) {
        CURL *closing[POOL_MAX], *c = NULL;
        char origin[ORIGIN_MAX + 1];
        size_t n_closing = 0, best = SIZE_MAX;
        usec_t now = now_monotonic();

        if (poolable(key, url, origin)) {
                pthread_mutex_lock(&pool_lock);
                pool_expire(now, closing, &n_closing);
                for (size_t i = 0; i < pool_n; i++)
                        if (streq(pool[i].key, key) && streq(pool[i].origin, origin) &&
                            (best == SIZE_MAX || pool[i].since > pool[best].since))
                                best = i;
                if (best != SIZE_MAX) {
                        c = pool[best].curl;
                        pool[best] = pool[--pool_n];
                }
                pthread_mutex_unlock(&pool_lock);
                pool_close(closing, n_closing);
        }
        return c ?: curl_easy_init();
}

/* A handle back, reset, among the key's idle ones; closed if it has no key or cannot be kept. */
static void pool_give(const char *key, const char *url, CURL *c) {
        CURL *closing[POOL_MAX + 1];
        char origin[ORIGIN_MAX + 1];
        size_t n_closing = 0, mine = 0, oldest_mine = SIZE_MAX, oldest = SIZE_MAX;
        usec_t now = now_monotonic();

        if (!c)
                return;
        if (!poolable(key, url, origin)) {
                curl_easy_cleanup(c);
                return;
        }
        curl_easy_reset(c);

        pthread_mutex_lock(&pool_lock);
        pool_expire(now, closing, &n_closing);
        for (size_t i = 0; i < pool_n; i++) {
                if (oldest == SIZE_MAX || pool[i].since < pool[oldest].since)
                        oldest = i;
                if (streq(pool[i].key, key)) {
                        mine++;
                        if (oldest_mine == SIZE_MAX || pool[i].since < pool[oldest_mine].since)
                                oldest_mine = i;
                }
        }
        if (mine >= POOL_PER_TENANT)
                pool_remove_at(oldest_mine, closing, &n_closing);
        else if (pool_n >= POOL_MAX)
                pool_remove_at(oldest, closing, &n_closing);
        pool[pool_n++] = (PoolEntry) { .curl = c, .since = now };
        strcpy(pool[pool_n - 1].key, key);
        strcpy(pool[pool_n - 1].origin, origin);
        pthread_mutex_unlock(&pool_lock);
        pool_close(closing, n_closing);
}

size_t upstream_pool_size(const char *key) {
        size_t n = 0;

        pthread_mutex_lock(&pool_lock);
        for (size_t i = 0; i < pool_n; i++)
                if (!key || streq(pool[i].key, key))
                        n++;
        pthread_mutex_unlock(&pool_lock);
        return n;
}

/* ---- one request ---- */

typedef struct Transfer {
        const UpstreamRequest *req;
        UpstreamResponse *resp;
        size_t n_headers;
        size_t header_bytes;
        bool body_too_large;
        bool headers_too_large;
        bool oom;
} Transfer;

void upstream_response_done(UpstreamResponse *r) {
        if (!r)
                return;
        strv_free(r->headers);
        if (r->body) {
                explicit_bzero(r->body, r->allocated);
                free(r->body);
        }
        *r = (UpstreamResponse) {};
}


static void curl_slist_free_allp(struct curl_slist **l) {
        if (*l)
                curl_slist_free_all(*l);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata) {
        Transfer *t = userdata;
        UpstreamResponse *r = t->resp;
        size_t n = size * nmemb;

        if (n > t->req->max_body - r->body_size) {
                t->body_too_large = true;
                return 0;
        }
        if (n > r->allocated - r->body_size) {
                size_t want = MIN(MAX(r->allocated * 2, MAX(r->body_size + n, (size_t) 16384)),
                                  (size_t) t->req->max_body);
                uint8_t *b = malloc(want);

                /* not realloc(): the old buffer may hold the secret (unredacted yet), it is wiped */
                if (!b) {
                        t->oom = true;
                        return 0;
                }
                if (r->body) {
                        memcpy(b, r->body, r->body_size);
                        explicit_bzero(r->body, r->allocated);
                        free(r->body);
                }
                r->body = b;
                r->allocated = want;
        }
        memcpy(r->body + r->body_size, data, n);
        r->body_size += n;
        return n;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata) {
        Transfer *t = userdata;
        UpstreamResponse *r = t->resp;
        size_t n = size * nmemb, k = n, name_len, v, e;
        const char *colon;
        char **l;

        while (k > 0 && (data[k - 1] == '\n' || data[k - 1] == '\r'))
                k--;
        /* a status line starts a response: an interim one (1xx) had its own headers */
        if (k >= 5 && strneq(data, "HTTP/", 5)) {
                r->headers = strv_free(r->headers);
                t->n_headers = 0;
                t->header_bytes = 0;
                return n;
        }
        t->header_bytes += n;
        if (t->header_bytes > RESPONSE_HEADER_BYTES_MAX) {
                t->headers_too_large = true;
                return 0;
        }
        colon = memchr(data, ':', k);
        if (k == 0 || !colon || is_blank(data[0]))
                return n; /* the end of the headers, a folded line, junk: nothing to pass on */
        name_len = (size_t) (colon - data);
        for (v = name_len + 1; v < k && is_blank(data[v]); v++)
                ;
        for (e = k; e > v && is_blank(data[e - 1]); e--)
                ;
        _cleanup_free_ char *name = strndup(data, name_len), *value = strndup(data + v, e - v);
        if (!name || !value) {
                t->oom = true;
                return 0;
        }
        if (memchr(data, 0, k) ||
            !grant_response_header_kept(name, value, t->req->secret, t->req->secret_len))
                return n;
        if (t->n_headers >= RESPONSE_HEADERS_MAX) {
                t->headers_too_large = true;
                return 0;
        }
        l = reallocarray(r->headers, 2 * t->n_headers + 3, sizeof(char *));
        if (!l) {
                t->oom = true;
                return 0;
        }
        r->headers = l;
        l[2 * t->n_headers] = TAKE_PTR(name);
        l[2 * t->n_headers + 1] = TAKE_PTR(value);
        l[2 * t->n_headers + 2] = NULL;
        t->n_headers++;
        return n;
}

static bool has_header(char * const *headers, const char *name) {
        for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
                if (strcasecmp(headers[i], name) == 0)
                        return true;
        return false;
}

/* Adds "Name: value" ("Name;" for an empty value: "Name:" would remove libcurl's own header). */
static int add_header(struct curl_slist **l, const char *name, const char *value) {
        _cleanup_free_ char *line = NULL;
        struct curl_slist *n;

        if (asprintf(&line, isempty(value) ? "%s;" : "%s: %s", name, value) < 0)
                return -ENOMEM;
        n = curl_slist_append(*l, line);
        if (!n)
                return -ENOMEM;
        *l = n;
        return 0;
}

static int build_headers(const UpstreamRequest *req, struct curl_slist **ret) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *l = NULL;
        struct curl_slist *n;
        int r;

        for (size_t i = 0; req->headers && req->headers[i] && req->headers[i + 1]; i += 2) {
                r = add_header(&l, req->headers[i], req->headers[i + 1]);
                if (r < 0)
                        return r;
        }
        /* no "Expect: 100-continue" round trip; no form content type the client did not ask for */
        if (!(n = curl_slist_append(l, "Expect:")))
                return -ENOMEM;
        l = n;
        if (!has_header(req->headers, "Content-Type")) {
                if (!(n = curl_slist_append(l, "Content-Type:")))
                        return -ENOMEM;
                l = n;
        }
        /* last: the only copies are libcurl's, wiped when freed */
        if (!(n = curl_slist_append(l, req->secret_header)))
                return -ENOMEM;
        l = n;
        *ret = TAKE_PTR(l);
        return 0;
}

#define SETOPT(c, opt, val)                                      \
        do {                                                     \
                if (curl_easy_setopt((c), (opt), (val)) != CURLE_OK) \
                        goto setopt_failed;                      \
        } while (0)

static int perform(CURL *c, const UpstreamRequest *req, UpstreamResponse *ret, GrantReason *ret_reason, char **ret_error) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        UpstreamResponse resp = {};
        Transfer t = { .req = req, .resp = &resp };
        const char *scheme = grant_scheme_to_string(req->scheme);
        char errbuf[CURL_ERROR_SIZE] = "";
        const void *body = req->body ?: "";
        long status = 0;
        CURLcode code;
        int r;

        *ret_reason = GRANT_REASON_INTERNAL;
        r = build_headers(req, &headers);
        if (r < 0)
                return error_setf(ret_error, r, "cannot set up the request");

        SETOPT(c, CURLOPT_ERRORBUFFER, errbuf);
        SETOPT(c, CURLOPT_NOSIGNAL, 1L);
        SETOPT(c, CURLOPT_MAXCONNECTS, 1L); /* the handle keeps this request's connection, no other */
        SETOPT(c, CURLOPT_URL, req->url);
        SETOPT(c, CURLOPT_PATH_AS_IS, 1L); /* checked as it is: sent as it is */
        SETOPT(c, CURLOPT_DISALLOW_USERNAME_IN_URL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
        SETOPT(c, CURLOPT_PROTOCOLS_STR, scheme);
        SETOPT(c, CURLOPT_REDIR_PROTOCOLS_STR, scheme);
#else
        SETOPT(c, CURLOPT_PROTOCOLS, req->scheme == GRANT_SCHEME_HTTPS ? CURLPROTO_HTTPS : CURLPROTO_HTTP);
        SETOPT(c, CURLOPT_REDIR_PROTOCOLS, req->scheme == GRANT_SCHEME_HTTPS ? CURLPROTO_HTTPS : CURLPROTO_HTTP);
#endif
        SETOPT(c, CURLOPT_FOLLOWLOCATION, 0L);
        SETOPT(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
        SETOPT(c, CURLOPT_PROXY, "");
        SETOPT(c, CURLOPT_NOPROXY, "*");
        SETOPT(c, CURLOPT_NETRC, (long) CURL_NETRC_IGNORED);
        SETOPT(c, CURLOPT_SSL_VERIFYPEER, 1L);
        SETOPT(c, CURLOPT_SSL_VERIFYHOST, 2L);
        if (req->ca_file)
                SETOPT(c, CURLOPT_CAINFO, req->ca_file);
        SETOPT(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_SEC);
        SETOPT(c, CURLOPT_TIMEOUT, TIMEOUT_SEC);
        SETOPT(c, CURLOPT_USERAGENT, "sbx-broker/" PACKAGE_VERSION); /* a request's own User-Agent wins */
        SETOPT(c, CURLOPT_HTTPHEADER, headers);
        /* a known Content-Length above the cap fails at once (a HEAD's announces a body it does not send) */
        if (req->method != GRANT_METHOD_HEAD)
                SETOPT(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) req->max_body);
        SETOPT(c, CURLOPT_WRITEFUNCTION, on_body);
        SETOPT(c, CURLOPT_WRITEDATA, &t);
        SETOPT(c, CURLOPT_HEADERFUNCTION, on_header);
        SETOPT(c, CURLOPT_HEADERDATA, &t);

        switch (req->method) {
        case GRANT_METHOD_GET:
                SETOPT(c, CURLOPT_HTTPGET, 1L);
                break;
        case GRANT_METHOD_HEAD:
                SETOPT(c, CURLOPT_NOBODY, 1L);
                break;
        case GRANT_METHOD_POST:
                SETOPT(c, CURLOPT_POSTFIELDS, body);
                SETOPT(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_size);
                break;
        case GRANT_METHOD_PUT:
        case GRANT_METHOD_PATCH:
        case GRANT_METHOD_DELETE:
                SETOPT(c, CURLOPT_CUSTOMREQUEST, grant_method_to_string(req->method));
                /* a DELETE without a body is sent without one; PUT and PATCH always have one, maybe empty */
                if (req->method != GRANT_METHOD_DELETE || req->body_size > 0) {
                        SETOPT(c, CURLOPT_POSTFIELDS, body);
                        SETOPT(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_size);
                }
                break;
        case _GRANT_METHOD_MAX:
        case _GRANT_METHOD_INVALID:
        default:
                return error_setf(ret_error, -EINVAL, "unknown method");
        }

        code = curl_easy_perform(c);
        if (code != CURLE_OK) {
                upstream_response_done(&resp);
                if (t.oom || code == CURLE_OUT_OF_MEMORY)
                        return error_setf(ret_error, -ENOMEM, "out of memory");
                if (t.body_too_large || code == CURLE_FILESIZE_EXCEEDED) {
                        *ret_reason = GRANT_REASON_TOO_LARGE;
                        return error_setf(ret_error, -EFBIG, "the response's body is larger than the grant's max_body "
                                          "(%" PRIu64 " bytes)", req->max_body);
                }
                if (t.headers_too_large) {
                        *ret_reason = GRANT_REASON_TOO_LARGE;
                        return error_setf(ret_error, -EFBIG, "the response has more than %d headers or %d bytes of them",
                                          RESPONSE_HEADERS_MAX, RESPONSE_HEADER_BYTES_MAX);
                }
                *ret_reason = GRANT_REASON_UPSTREAM;
                return error_setf(ret_error, -EIO, "%s%s%s", curl_easy_strerror(code), errbuf[0] ? ": " : "", errbuf);
        }
        if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status < 100 || status > 999) {
                upstream_response_done(&resp);
                *ret_reason = GRANT_REASON_UPSTREAM;
                return error_setf(ret_error, -EBADMSG, "the upstream's response has no valid status");
        }
        resp.status = (int) status;
        *ret = resp;
        return 0;

setopt_failed:
        upstream_response_done(&resp);
        return error_setf(ret_error, -EINVAL, "libcurl refused an option of the request");
}

int upstream_perform(const UpstreamRequest *req, UpstreamResponse *ret, GrantReason *ret_reason, char **ret_error) {
        CURL *c;
        int r;

        *ret_reason = GRANT_REASON_INTERNAL;
        c = pool_take(req->pool_key, req->url);
        if (!c)
                return error_setf(ret_error, -ENOMEM, "cannot set up the request");
        r = perform(c, req, ret, ret_reason, ret_error);
        /* a failed transfer's handle is not kept: whatever it left open goes with it */
        if (r < 0)
                curl_easy_cleanup(c);
        else
                pool_give(req->pool_key, req->url, c);
        return r;
}
