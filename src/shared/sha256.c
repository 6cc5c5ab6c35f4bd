/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 and HMAC-SHA256 for the policy digest and the keyed tenant id: thin wrappers over OpenSSL's
 * libcrypto (EVP), which does the hashing.
 *
 * libcrypto is loaded on first use (dlopen(), as systemd loads its optional libraries), not linked: most
 * starts of sbxctl and sbx-generator hash nothing, and loading libcrypto costs every process that links
 * it a few milliseconds (many more under emulation). The packages depend on it all the same. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "log.h"
#include "sha256.h"

#define LIBCRYPTO_SONAME "libcrypto.so.3"

static struct {
        typeof(&EVP_MD_CTX_new) MD_CTX_new;
        typeof(&EVP_MD_CTX_free) MD_CTX_free;
        typeof(&EVP_DigestInit_ex) DigestInit_ex;
        typeof(&EVP_DigestUpdate) DigestUpdate;
        typeof(&EVP_DigestFinal_ex) DigestFinal_ex;
        typeof(&EVP_Digest) Digest;
        typeof(&EVP_sha256) sha256;
        typeof(&EVP_Q_mac) Q_mac;
        typeof(&ERR_get_error) get_error;
        typeof(&ERR_error_string_n) error_string_n;
} crypto;

static void crypto_load_once(void) {
        void *dl = dlopen(LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

        if (!dl) {
                log_error("Cannot load %s: %s", LIBCRYPTO_SONAME, dlerror());
                abort();
        }
#define SYM(field, name)                                                                     \
        do {                                                                                 \
                crypto.field = (typeof(crypto.field)) dlsym(dl, #name);                      \
                if (!crypto.field) {                                                         \
                        log_error("%s has no %s: %s", LIBCRYPTO_SONAME, #name, dlerror());   \
                        abort();                                                             \
                }                                                                            \
        } while (0)
        SYM(MD_CTX_new, EVP_MD_CTX_new);
        SYM(MD_CTX_free, EVP_MD_CTX_free);
        SYM(DigestInit_ex, EVP_DigestInit_ex);
        SYM(DigestUpdate, EVP_DigestUpdate);
        SYM(DigestFinal_ex, EVP_DigestFinal_ex);
        SYM(Digest, EVP_Digest);
        SYM(sha256, EVP_sha256);
        SYM(Q_mac, EVP_Q_mac);
        SYM(get_error, ERR_get_error);
        SYM(error_string_n, ERR_error_string_n);
#undef SYM
}

/* Without libcrypto there is no digest: a wrong one must never reach a record, so stop (as below). */
static void crypto_load(void) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        (void) pthread_once(&once, crypto_load_once);
}

/* libcrypto fails here only when it cannot allocate or finds no SHA-256 in its providers. The void
 * API has no way to report that, and a wrong digest must never reach a record, so stop. */
_noreturn_ static void crypto_abort(const char *what) {
        char err[256];

        crypto.error_string_n(crypto.get_error(), err, sizeof(err));
        log_error("%s failed: %s", what, err);
        abort();
}

void sha256_init(Sha256 *ctx) {
        crypto_load();
        ctx->md = crypto.MD_CTX_new();
        if (!ctx->md)
                crypto_abort("EVP_MD_CTX_new()");
        if (crypto.DigestInit_ex(ctx->md, crypto.sha256(), NULL) != 1)
                crypto_abort("EVP_DigestInit_ex(SHA256)");
}

void sha256_update(Sha256 *ctx, const void *data, size_t size) {
        if (crypto.DigestUpdate(ctx->md, data, size) != 1)
                crypto_abort("EVP_DigestUpdate()");
}

void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        unsigned n = 0;

        if (crypto.DigestFinal_ex(ctx->md, ret, &n) != 1 || n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_DigestFinal_ex()");
        crypto.MD_CTX_free(ctx->md);
        ctx->md = NULL;
}

void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        unsigned n = 0;

        crypto_load();
        if (crypto.Digest(data, size, ret, &n, crypto.sha256(), NULL) != 1 || n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_Digest(SHA256)");
}

void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]) {
        size_t n = 0;

        crypto_load();
        /* A NULL key tells EVP_MAC_init() to reuse the key set before, and there is none: pass "". */
        if (!crypto.Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key ?: "", key_size, data, size, ret,
                       SHA256_DIGEST_SIZE, &n) ||
            n != SHA256_DIGEST_SIZE)
                crypto_abort("EVP_Q_mac(HMAC-SHA256)");
}
