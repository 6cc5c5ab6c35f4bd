/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 and HMAC-SHA256 for the policy digest and the keyed tenant id: thin wrappers over OpenSSL's
 * libcrypto (EVP), which does the hashing. */
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "log.h"
#include "sha256.h"

/* libcrypto fails here only when it cannot allocate or finds no SHA-256 in its providers. The void
 * API has no way to report that, and a wrong digest must never reach a record, so stop. */
_noreturn_ static void crypto_abort(const char *what) {
        char err[256];

        ERR_error_string_n(ERR_get_error(), err, sizeof(err));
        log_error("%s failed: %s", what, err);
        abort();
}

void sha256_init(Sha256 *ctx) {
        ctx->md = EVP_MD_CTX_new();
        if (!ctx->md)
                crypto_abort("EVP_MD_CTX_new()");
        if (EVP_DigestInit_ex(ctx->md, EVP_sha256(), NULL) != 1)
                crypto_abort("EVP_DigestInit_ex(SHA256)");
}

void sha256_update(Sha256 *ctx, const void *data, size_t size) {
        if (EVP_DigestUpdate(ctx->md, data, size) != 1)
                crypto_abort("EVP_DigestUpdate()");
}

void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        unsigned n = 0;

        if (EVP_DigestFinal_ex(ctx->md, ret, &n) != 1 || n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_DigestFinal_ex()");
        EVP_MD_CTX_free(ctx->md);
        ctx->md = NULL;
}

void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        unsigned n = 0;

        if (EVP_Digest(data, size, ret, &n, EVP_sha256(), NULL) != 1 || n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_Digest(SHA256)");
}

void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]) {
        size_t n = 0;

        /* A NULL key tells EVP_MAC_init() to reuse the key set before, and there is none: pass "". */
        if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key ?: "", key_size, data, size, ret,
                       SHA256_DIGEST_SIZE, &n) ||
            n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_Q_mac(HMAC-SHA256)");
}
