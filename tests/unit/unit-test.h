/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the unit tests. Include after <cmocka.h>. */

#include <signal.h>
#include <stdio.h>

/* For table-driven tests: check one row, report every failing row (not just the first), and let the
 * caller fail the test once at the end with assert_int_equal(failures, 0). */
#define check_row(failures, cond, fmt, ...)                                                \
        do {                                                                               \
                if (!(cond)) {                                                             \
                        print_error("%s:%d: %s: " fmt "\n", __FILE__, __LINE__, #cond,     \
                                    __VA_ARGS__);                                          \
                        (failures)++;                                                      \
                }                                                                          \
        } while (0)

/* In a forked child: undo cmocka's handlers, so that a crash kills the child (and the parent sees the
 * signal) instead of jumping back into the test runner's copy in the child. */
static inline void reset_crash_signals(void) {
        static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
                (void) signal(sigs[i], SIG_DFL);
}
