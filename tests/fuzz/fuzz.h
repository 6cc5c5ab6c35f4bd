/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the libFuzzer harnesses (tests/fuzz/fuzz-*.c, docs/security.md): each one feeds its input to
 * one parser or decoder of outside input and checks the contract its header states; a broken contract
 * aborts, so that libFuzzer reports it like a crash. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A NUL-terminated copy of the input (which may hold NULs of its own). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        memcpy(s, data, size);
        s[size] = 0;
        return s;
}

#define fuzz_check(cond)                                                                          \
        do {                                                                                      \
                if (!(cond)) {                                                                    \
                        fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

/* A one-line message: what the errors the daemon and the client print must be. */
static inline void fuzz_check_one_line(const char *s) {
        fuzz_check(s);
        fuzz_check(*s);
        fuzz_check(!strchr(s, '\n'));
}
