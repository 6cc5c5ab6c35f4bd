/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SHA256_DIGEST_SIZE 32

/* Thin wrappers over libgcrypt (sha256.c). Hashing fails only when libgcrypt cannot be loaded or cannot
 * allocate; then the wrappers abort() rather than hand back a digest that is not one (digests name
 * policies and key tenant ids). */

typedef struct Sha256 {
        struct gcry_md_handle *md; /* gcry_md_hd_t */
} Sha256;

/* Streaming: sha256_init() allocates the context and sha256_final() writes the digest and frees it,
 * so every init must end in a final. A finalised context may be initialised again. */
void sha256_init(Sha256 *ctx);
void sha256_update(Sha256 *ctx, const void *data, size_t size);
void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]);
void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]);

/* HMAC-SHA256 (RFC 2104). key may be NULL when key_size is 0. */
void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]);

/* hex_encode(): util.h */
