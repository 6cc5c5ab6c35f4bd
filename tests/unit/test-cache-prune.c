/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cache-prune: which caches the reaper removes, and which names it accepts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache-prune.h"
#include "unit-test.h"

#define DAY (24ULL * 3600 * USEC_PER_SEC)
#define NOW (1000 * DAY)
#define GB (1ULL << 30)

static void test_retention(void **state) {
        CacheUse c[] = {
                { .dir = "old", .last_use = NOW - 40 * DAY, .bytes = GB },
                { .dir = "recent", .last_use = NOW - 2 * DAY, .bytes = GB },
                { .dir = "old-busy", .last_use = NOW - 90 * DAY, .bytes = GB, .busy = true },
                { .dir = "exactly", .last_use = NOW - 30 * DAY, .bytes = GB },
                { .dir = "future", .last_use = NOW + DAY, .bytes = GB },
        };

        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 30 * DAY, 0), 1);
        assert_int_equal(c[0].verdict, CACHE_PRUNE_UNUSED);
        assert_int_equal(c[1].verdict, CACHE_KEEP);
        assert_int_equal(c[2].verdict, CACHE_KEEP);
        assert_int_equal(c[3].verdict, CACHE_KEEP); /* not longer than the retention */
        assert_int_equal(c[4].verdict, CACHE_KEEP);
        assert_string_equal(cache_prune_reason_to_string(c[0].verdict), "unused");

        /* retention 0: nothing goes for its age */
        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 0, 0), 0);
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                assert_int_equal(c[i].verdict, CACHE_KEEP);
}

static void test_size_cap(void **state) {
        CacheUse c[] = {
                { .dir = "a", .last_use = NOW - 5 * DAY, .bytes = 4 * GB },
                { .dir = "b", .last_use = NOW - 9 * DAY, .bytes = 1 * GB },
                { .dir = "c", .last_use = NOW - 1 * DAY, .bytes = 6 * GB },
                { .dir = "d-busy", .last_use = NOW - 20 * DAY, .bytes = 3 * GB, .busy = true },
                { .dir = "e", .last_use = NOW - 9 * DAY, .bytes = 2 * GB },
        };

        /* 16G against a cap of 10G: e (oldest unbusy, larger of the tie), then b, then a */
        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 0, 10 * GB), 3);
        assert_int_equal(c[4].verdict, CACHE_PRUNE_SIZE);
        assert_int_equal(c[1].verdict, CACHE_PRUNE_SIZE);
        assert_int_equal(c[0].verdict, CACHE_PRUNE_SIZE);
        assert_int_equal(c[2].verdict, CACHE_KEEP);
        assert_int_equal(c[3].verdict, CACHE_KEEP);
        assert_string_equal(cache_prune_reason_to_string(c[0].verdict), "size");

        /* under the cap: nothing */
        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 0, 16 * GB), 0);

        /* only busy ones left above the cap: they stay */
        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 0, 1), 4);
        assert_int_equal(c[3].verdict, CACHE_KEEP);

        /* the unused ones go first and count no more against the cap */
        c[2].last_use = NOW - 60 * DAY; /* c: 6G, unused */
        assert_int_equal(cache_prune_select(c, ELEMENTSOF(c), NOW, 30 * DAY, 10 * GB), 1);
        assert_int_equal(c[2].verdict, CACHE_PRUNE_UNUSED);
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                if (i != 2)
                        assert_int_equal(c[i].verdict, CACHE_KEEP);
}

static void test_dir_names(void **state) {
        static const struct {
                const char *s;
                bool ok;
        } table[] = {
                { "0123456789abcdef0123456789abcdef/coding/pip", true },
                { "0123456789abcdef0123456789abcdef/data_2/models_1", true },
                { "0123456789abcdef0123456789abcdef/coding", false },
                { "0123456789abcdef0123456789abcdef/coding/pip/x", false },
                { "0123456789abcdef0123456789abcdef/coding/", false },
                { "0123456789abcdef0123456789abcdef//pip", false },
                { "0123456789abcdef0123456789abcdef/../pip", false },
                { "0123456789abcdef0123456789abcdef/coding/..", false },
                { "0123456789ABCDEF0123456789abcdef/coding/pip", false },
                { "0123456789abcdef0123456789abcde/coding/pip", false },
                { "/0123456789abcdef0123456789abcdef/coding/pip", false },
                { "0123456789abcdef0123456789abcdef/Coding/pip", false },
                { "0123456789abcdef0123456789abcdef/coding/p-p", false },
                { "", false },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, cache_dir_is_valid(table[i].s) == table[i].ok, "'%s'", table[i].s);
        assert_int_equal(failures, 0);
        assert_false(cache_dir_is_valid(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_retention),
                cmocka_unit_test(test_size_cap),
                cmocka_unit_test(test_dir_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
