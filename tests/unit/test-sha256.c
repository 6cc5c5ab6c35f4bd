/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The libgcrypt wrappers in sha256.c: SHA-256 against the FIPS 180-4 examples, HMAC-SHA256 against
 * RFC 4231, and hex_encode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "macro.h"
#include "sha256.h"

static void assert_digest(const uint8_t d[static SHA256_DIGEST_SIZE], const char *expected_hex) {
        char hex[2 * SHA256_DIGEST_SIZE + 1];

        hex_encode(d, SHA256_DIGEST_SIZE, hex);
        assert_string_equal(hex, expected_hex);
}

static void test_hex_encode(void **state) {
        static const uint8_t in[] = { 0x00, 0x01, 0x09, 0x0a, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff };
        char out[2 * sizeof(in) + 1];

        memset(out, 'X', sizeof(out));
        hex_encode(in, sizeof(in), out);
        assert_string_equal(out, "0001090a7f80abcdefff");

        /* Zero bytes still NUL-terminates. */
        memset(out, 'X', sizeof(out));
        hex_encode(in, 0, out);
        assert_string_equal(out, "");

        /* Writes exactly 2*size+1 bytes. */
        memset(out, 'X', sizeof(out));
        hex_encode(in + 8, 1, out);
        assert_string_equal(out, "ef");
        assert_int_equal(out[3], 'X');
}

static const struct {
        const char *input;
        const char *digest;
} fips_vectors[] = {
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void test_sha256_fips_oneshot(void **state) {
        uint8_t empty[SHA256_DIGEST_SIZE];

        /* Empty input may be given as NULL. */
        sha256(NULL, 0, empty);
        assert_digest(empty, fips_vectors[0].digest);

        for (size_t i = 0; i < ELEMENTSOF(fips_vectors); i++) {
                uint8_t d[SHA256_DIGEST_SIZE];

                sha256(fips_vectors[i].input, strlen(fips_vectors[i].input), d);
                assert_digest(d, fips_vectors[i].digest);
        }
}

/* The same vectors fed one byte at a time and split at every position, through the streaming
 * wrappers: how the input is cut must not matter. */
static void test_sha256_fips_split(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(fips_vectors); i++) {
                const char *in = fips_vectors[i].input;
                size_t n = strlen(in);
                uint8_t d[SHA256_DIGEST_SIZE];
                Sha256 ctx;

                sha256_init(&ctx);
                for (size_t k = 0; k < n; k++)
                        sha256_update(&ctx, in + k, 1);
                sha256_final(&ctx, d);
                assert_digest(d, fips_vectors[i].digest);

                for (size_t cut = 0; cut <= n; cut++) {
                        sha256_init(&ctx);
                        sha256_update(&ctx, in, cut);
                        sha256_update(&ctx, "", 0);
                        sha256_update(&ctx, in + cut, n - cut);
                        sha256_final(&ctx, d);
                        assert_digest(d, fips_vectors[i].digest);
                }
        }
}

static void test_sha256_million_a(void **state) {
        /* Odd chunk sizes, so that chunks straddle block boundaries in every way. */
        static const size_t chunks[] = { 1, 3, 7, 31, 63, 64, 65, 127, 1000, 4099 };
        char a[4099];
        uint8_t d[SHA256_DIGEST_SIZE];
        size_t left = 1000000, c = 0;
        Sha256 ctx;

        memset(a, 'a', sizeof(a));
        sha256_init(&ctx);
        while (left > 0) {
                size_t n = MIN(chunks[c++ % ELEMENTSOF(chunks)], left);

                sha256_update(&ctx, a, n);
                left -= n;
        }
        sha256_final(&ctx, d);
        assert_digest(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Messages around the padding boundaries (55/56 bytes: length field fits in the last block or not;
 * 64: exactly one block). Expected values computed independently (Python hashlib) for the bytes
 * (i * 7 + 3) & 0xff. */
static void test_sha256_padding_boundaries(void **state) {
        static const struct {
                size_t len;
                const char *digest;
        } table[] = {
                { 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
                { 56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27" },
                { 57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73" },
                { 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
                { 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
                { 65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e" },
                { 119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e" },
                { 120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5" },
                { 128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6" },
        };
        uint8_t buf[128];

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (uint8_t) ((i * 7 + 3) & 0xff);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint8_t d[SHA256_DIGEST_SIZE];

                sha256(buf, table[i].len, d);
                assert_digest(d, table[i].digest);
        }
}

/* The context is reusable after final: a second hash does not see the first. Final releases the
 * libgcrypt handle. */
static void test_sha256_reinit(void **state) {
        uint8_t d[SHA256_DIGEST_SIZE];
        Sha256 ctx;

        sha256_init(&ctx);
        sha256_update(&ctx, "something else entirely", 23);
        sha256_final(&ctx, d);
        assert_null(ctx.md);
        sha256_init(&ctx);
        sha256_update(&ctx, "abc", 3);
        sha256_final(&ctx, d);
        assert_digest(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_hmac_rfc4231(void **state) {
        uint8_t key_0b[20], key_aa20[20], data_dd[50], key_aa131[131];
        static const char data6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
        static const char data7[] =
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                "to be hashed before being used by the HMAC algorithm.";
        const struct {
                const char *name;
                const void *key;
                size_t key_size;
                const void *data;
                size_t size;
                const char *mac;
        } table[] = {
                { "RFC 4231 test case 1", key_0b, sizeof(key_0b), "Hi There", 8,
                  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
                { "RFC 4231 test case 2", "Jefe", 4, "what do ya want for nothing?", 28,
                  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
                { "RFC 4231 test case 3", key_aa20, sizeof(key_aa20), data_dd, sizeof(data_dd),
                  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
                { "RFC 4231 test case 6 (key longer than a block)", key_aa131, sizeof(key_aa131), data6,
                  strlen(data6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
                { "RFC 4231 test case 7 (key and data longer than a block)", key_aa131, sizeof(key_aa131), data7,
                  strlen(data7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
        };

        memset(key_0b, 0x0b, sizeof(key_0b));
        memset(key_aa20, 0xaa, sizeof(key_aa20));
        memset(data_dd, 0xdd, sizeof(data_dd));
        memset(key_aa131, 0xaa, sizeof(key_aa131));

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                uint8_t mac[SHA256_DIGEST_SIZE];

                print_message("%s\n", table[i].name);
                hmac_sha256(table[i].key, table[i].key_size, table[i].data, table[i].size, mac);
                assert_digest(mac, table[i].mac);
        }
}

/* Keys at the block-size edge (64: used as is; 65: hashed first) and the empty key. Expected values
 * from Python's hmac module. */
static void test_hmac_key_sizes(void **state) {
        uint8_t key[65], mac[SHA256_DIGEST_SIZE];

        for (size_t i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) i;

        hmac_sha256(key, 64, "uid:1000", 8, mac);
        assert_digest(mac, "47df13bfac4722ded43f0d97c8ce737f3983d069e10ab6193bfa1d309ab59b44");
        hmac_sha256(key, 65, "uid:1000", 8, mac);
        assert_digest(mac, "fb093404df43f5ef1606225c80e332afd5271e84978293c3387563cfade0364f");
        hmac_sha256("", 0, "", 0, mac);
        assert_digest(mac, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
        /* An empty key and empty data may be passed as NULL. */
        hmac_sha256(NULL, 0, NULL, 0, mac);
        assert_digest(mac, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hex_encode),
                cmocka_unit_test(test_sha256_fips_oneshot),
                cmocka_unit_test(test_sha256_fips_split),
                cmocka_unit_test(test_sha256_million_a),
                cmocka_unit_test(test_sha256_padding_boundaries),
                cmocka_unit_test(test_sha256_reinit),
                cmocka_unit_test(test_hmac_rfc4231),
                cmocka_unit_test(test_hmac_key_sizes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
