/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 and HMAC-SHA256 for the policy digest and the keyed tenant id: thin wrappers over libgcrypt,
 * which does the hashing.
 *
 * libgcrypt is loaded on first use (dlopen(), as systemd loads its optional libraries), not linked: most
 * starts of sbxctl and sbx-generator hash nothing. libsystemd links it itself (systemd 252), so in sbxd and
 * sbxctl it is mapped already; OpenSSL's libcrypto, loaded here before, made sbxd's idle resident set
 * 3.3 MiB larger (9.1 MiB, now 5.6). The packages depend on libgcrypt by name. */
#include <dlfcn.h>
#include <gcrypt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sha256.h"

#define LIBGCRYPT_SONAME "libgcrypt.so.20"
/* SHA-256, HMAC and GCRYCTL_INITIALIZATION_FINISHED_P are all older than this */
#define LIBGCRYPT_MIN_VERSION "1.8.0"

static struct {
        typeof(&gcry_check_version) check_version;
        typeof(&gcry_control) control;
        typeof(&gcry_md_open) md_open;
        typeof(&gcry_md_close) md_close;
        typeof(&gcry_md_write) md_write;
        typeof(&gcry_md_read) md_read;
        typeof(&gcry_md_setkey) md_setkey;
        typeof(&gcry_md_hash_buffer) md_hash_buffer;
        typeof(&gcry_strerror) strerror;
} gc;

static void gcrypt_load_once(void) {
        void *dl = dlopen(LIBGCRYPT_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

        if (!dl) {
                log_error("Cannot load %s: %s", LIBGCRYPT_SONAME, dlerror());
                abort();
        }
#define SYM(field, name)                                                                     \
        do {                                                                                 \
                gc.field = (typeof(gc.field)) dlsym(dl, #name);                              \
                if (!gc.field) {                                                             \
                        log_error("%s has no %s: %s", LIBGCRYPT_SONAME, #name, dlerror());   \
                        abort();                                                             \
                }                                                                            \
        } while (0)
        SYM(check_version, gcry_check_version);
        SYM(control, gcry_control);
        SYM(md_open, gcry_md_open);
        SYM(md_close, gcry_md_close);
        SYM(md_write, gcry_md_write);
        SYM(md_read, gcry_md_read);
        SYM(md_setkey, gcry_md_setkey);
        SYM(md_hash_buffer, gcry_md_hash_buffer);
        SYM(strerror, gcry_strerror);
#undef SYM
        /* As libsystemd initialises it (it may have done so in this process already): no secure memory,
         * nothing here is a secret kept in it. */
        if (gc.control(GCRYCTL_INITIALIZATION_FINISHED_P))
                return;
        if (!gc.check_version(LIBGCRYPT_MIN_VERSION)) {
                log_error("%s is older than %s", LIBGCRYPT_SONAME, LIBGCRYPT_MIN_VERSION);
                abort();
        }
        (void) gc.control(GCRYCTL_DISABLE_SECMEM, 0);
        (void) gc.control(GCRYCTL_INITIALIZATION_FINISHED, 0);
}

/* Without libgcrypt there is no digest: a wrong one must never reach a record, so stop (as below). */
static void gcrypt_load(void) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        (void) pthread_once(&once, gcrypt_load_once);
}

/* libgcrypt fails here only when it cannot allocate (or, in FIPS mode, refuses an algorithm, and SHA-256
 * is one it allows). The void API has no way to report that, and a wrong digest must never reach a
 * record, so stop. */
_noreturn_ static void gcrypt_abort(const char *what, gcry_error_t e) {
        log_error("%s failed: %s", what, gc.strerror(e));
        abort();
}

static gcry_md_hd_t md_open(unsigned flags, const char *what) {
        gcry_md_hd_t h = NULL;
        gcry_error_t e;

        gcrypt_load();
        e = gc.md_open(&h, GCRY_MD_SHA256, flags);
        if (e || !h)
                gcrypt_abort(what, e ?: GPG_ERR_ENOMEM);
        return h;
}

static void md_result(gcry_md_hd_t h, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        const unsigned char *p = gc.md_read(h, GCRY_MD_SHA256);

        if (!p)
                gcrypt_abort("gcry_md_read(SHA256)", GPG_ERR_DIGEST_ALGO);
        memcpy(ret, p, SHA256_DIGEST_SIZE);
        gc.md_close(h);
}

void sha256_init(Sha256 *ctx) {
        ctx->md = md_open(0, "gcry_md_open(SHA256)");
}

void sha256_update(Sha256 *ctx, const void *data, size_t size) {
        if (size > 0)
                gc.md_write(ctx->md, data, size);
}

void sha256_final(Sha256 *ctx, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        md_result(ctx->md, ret);
        ctx->md = NULL;
}

void sha256(const void *data, size_t size, uint8_t ret[static SHA256_DIGEST_SIZE]) {
        gcrypt_load();
        gc.md_hash_buffer(GCRY_MD_SHA256, ret, size > 0 ? data : "", size);
}

void hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
                 uint8_t ret[static SHA256_DIGEST_SIZE]) {
        gcry_md_hd_t h = md_open(GCRY_MD_FLAG_HMAC, "gcry_md_open(HMAC-SHA256)");
        gcry_error_t e;

        /* an empty key is HMAC's key of zero bytes, as RFC 2104 pads every short key */
        e = gc.md_setkey(h, key_size > 0 ? key : "", key_size);
        if (e)
                gcrypt_abort("gcry_md_setkey(HMAC-SHA256)", e);
        if (size > 0)
                gc.md_write(h, data, size);
        md_result(h, ret);
}
