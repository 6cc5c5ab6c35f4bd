/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

typedef struct Sha256 {
        uint32_t state[8];
        uint64_t length;     /* bytes processed */
        uint8_t buffer[SHA256_BLOCK_SIZE];
        size_t buffer_used;
} Sha256;

void sha256_init(Sha256 *ctx);
void sha256_update(Sha256 *ctx, const void *data, size_t size);
void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]);
void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]);

void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]);

/* Lower-case hex of 'size' bytes into 'ret' (2*size+1 bytes). */
void hex_encode(const uint8_t *data, size_t size, char *ret);
