/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Performing one checked request with libcurl: no redirect followed (a 3xx goes back as it is), no proxy,
 * only the grant's scheme, 10 s to connect and 30 s in all, the response's body capped, its headers
 * filtered by grant_response_header_kept(). Redacting the body is the caller's. Connections are kept
 * open for the next request with the same pool_key (the tenant's), never another's. */

#include <stddef.h>
#include <stdint.h>

#include "grant.h"

typedef struct UpstreamRequest {
        const char *url;               /* normalized (grant_url_match()) */
        GrantScheme scheme;
        GrantMethod method;
        char * const *headers;         /* name, value, ..., NULL: checked by grant_request_header_allowed() */
        const char *secret_header;     /* "Name: value_prefix+secret", in locked memory */
        const void *body;              /* NULL for none */
        size_t body_size;
        uint64_t max_body;             /* of the response's body */
        const char *ca_file;           /* CURLOPT_CAINFO, or NULL for libcurl's default */
        const void *secret;            /* for the response's headers */
        size_t secret_len;
        const char *pool_key;          /* whose kept connections it may use (the tenant); NULL: none */
} UpstreamRequest;

typedef struct UpstreamResponse {
        int status;
        char **headers;  /* name, value, ..., NULL: those kept */
        uint8_t *body;
        size_t body_size;
        size_t allocated;
} UpstreamResponse;

void upstream_response_done(UpstreamResponse *r);

/* Once, before any thread: libcurl's global state, its allocations wiped when freed (they hold the
 * secret's header). */
int upstream_global_init(void);

#define UPSTREAM_POOL_KEY_MAX 64

/* 0 with *ret filled, whatever the HTTP status. Otherwise a negative errno with *ret_reason
 * (GRANT_REASON_UPSTREAM, GRANT_REASON_TOO_LARGE, GRANT_REASON_INTERNAL) and *ret_error, a one-line message
 * for the client (it may name the host, never the path, the query or the secret). */
int upstream_perform(const UpstreamRequest *req, UpstreamResponse *ret, GrantReason *ret_reason, char **ret_error);

/* The idle handles kept for a key (all keys: NULL), for tests. */
size_t upstream_pool_size(const char *key);
