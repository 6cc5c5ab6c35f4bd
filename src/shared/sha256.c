/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104). Small and dependency free: used for the policy
 * digest and the keyed tenant id. */
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n) {
        return (x >> n) | (x << (32 - n));
}

static void sha256_block(Sha256 *ctx, const uint8_t *p) {
        uint32_t w[64], a, b, c, d, e, f, g, h;

        for (unsigned i = 0; i < 16; i++)
                w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 |
                       (uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
        for (unsigned i = 16; i < 64; i++) {
                uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
                uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }

        a = ctx->state[0]; b = ctx->state[1]; c = ctx->state[2]; d = ctx->state[3];
        e = ctx->state[4]; f = ctx->state[5]; g = ctx->state[6]; h = ctx->state[7];
        for (unsigned i = 0; i < 64; i++) {
                uint32_t s1 = ror(e, 6) ^ ror(e, 11) ^ ror(e, 25);
                uint32_t ch = (e & f) ^ (~e & g);
                uint32_t t1 = h + s1 + ch + K[i] + w[i];
                uint32_t s0 = ror(a, 2) ^ ror(a, 13) ^ ror(a, 22);
                uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
                uint32_t t2 = s0 + maj;

                h = g; g = f; f = e; e = d + t1;
                d = c; c = b; b = a; a = t1 + t2;
        }
        ctx->state[0] += a; ctx->state[1] += b; ctx->state[2] += c; ctx->state[3] += d;
        ctx->state[4] += e; ctx->state[5] += f; ctx->state[6] += g; ctx->state[7] += h;
}

void sha256_init(Sha256 *ctx) {
        static const uint32_t H0[8] = {
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
        };
        memcpy(ctx->state, H0, sizeof(H0));
        ctx->length = 0;
        ctx->buffer_used = 0;
}

void sha256_update(Sha256 *ctx, const void *data, size_t size) {
        const uint8_t *p = data;

        ctx->length += size;
        if (ctx->buffer_used > 0) {
                size_t n = SHA256_BLOCK_SIZE - ctx->buffer_used;
                if (n > size)
                        n = size;
                memcpy(ctx->buffer + ctx->buffer_used, p, n);
                ctx->buffer_used += n;
                p += n;
                size -= n;
                if (ctx->buffer_used < SHA256_BLOCK_SIZE)
                        return;
                sha256_block(ctx, ctx->buffer);
                ctx->buffer_used = 0;
        }
        for (; size >= SHA256_BLOCK_SIZE; p += SHA256_BLOCK_SIZE, size -= SHA256_BLOCK_SIZE)
                sha256_block(ctx, p);
        memcpy(ctx->buffer, p, size);
        ctx->buffer_used = size;
}

void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        uint64_t bits = ctx->length * 8;
        uint8_t pad[SHA256_BLOCK_SIZE + 8] = { 0x80 };
        size_t padlen = (ctx->buffer_used < 56 ? 56 : 120) - ctx->buffer_used;
        uint8_t len[8];

        for (unsigned i = 0; i < 8; i++)
                len[i] = (uint8_t) (bits >> (56 - 8 * i));
        sha256_update(ctx, pad, padlen);
        sha256_update(ctx, len, 8);
        for (unsigned i = 0; i < 8; i++) {
                ret[4 * i] = (uint8_t) (ctx->state[i] >> 24);
                ret[4 * i + 1] = (uint8_t) (ctx->state[i] >> 16);
                ret[4 * i + 2] = (uint8_t) (ctx->state[i] >> 8);
                ret[4 * i + 3] = (uint8_t) ctx->state[i];
        }
        memset(ctx, 0, sizeof(*ctx));
}

void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        Sha256 ctx;

        sha256_init(&ctx);
        sha256_update(&ctx, data, size);
        sha256_final(&ctx, ret);
}

void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]) {
        uint8_t k[SHA256_BLOCK_SIZE] = {}, ipad[SHA256_BLOCK_SIZE], opad[SHA256_BLOCK_SIZE];
        uint8_t inner[SHA256_DIGEST_SIZE];
        Sha256 ctx;

        if (key_size > SHA256_BLOCK_SIZE)
                sha256(key, key_size, k);
        else if (key_size > 0)
                memcpy(k, key, key_size);

        for (unsigned i = 0; i < SHA256_BLOCK_SIZE; i++) {
                ipad[i] = k[i] ^ 0x36;
                opad[i] = k[i] ^ 0x5c;
        }

        sha256_init(&ctx);
        sha256_update(&ctx, ipad, sizeof(ipad));
        sha256_update(&ctx, data, size);
        sha256_final(&ctx, inner);

        sha256_init(&ctx);
        sha256_update(&ctx, opad, sizeof(opad));
        sha256_update(&ctx, inner, sizeof(inner));
        sha256_final(&ctx, ret);

        memset(k, 0, sizeof(k));
        memset(ipad, 0, sizeof(ipad));
        memset(opad, 0, sizeof(opad));
}

void hex_encode(const uint8_t *data, size_t size, char *ret) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < size; i++) {
                ret[2 * i] = digits[data[i] >> 4];
                ret[2 * i + 1] = digits[data[i] & 15];
        }
        ret[2 * size] = 0;
}
