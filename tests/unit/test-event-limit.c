/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* event-limit: at most one event per key per interval, in a table of bounded size. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "event-limit.h"
#include "unit-test.h"

#define S USEC_PER_SEC
#define T0 (1000 * S)

static void test_one_key(void **state) {
        EventLimit l = EVENT_LIMIT_INIT(EGRESS_EVENT_INTERVAL_USEC);
        uint64_t n = 99;

        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0, &n), 1);
        assert_int_equal(n, 0);
        /* within 10 s: held back, counted */
        n = 99;
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0, &n), 0);
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0 + 5 * S, &n), 0);
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0 + 10 * S - 1, &n), 0);
        assert_int_equal(n, 99); /* untouched when held back */
        /* 10 s after the last one let through: logged, with the count of those held back */
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0 + 10 * S, &n), 1);
        assert_int_equal(n, 3);
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0 + 19 * S, NULL), 0);
        assert_int_equal(event_limit_check(&l, "10.0.0.5:22/tcp", T0 + 25 * S, &n), 1);
        assert_int_equal(n, 1);
        /* other keys are limited on their own */
        assert_int_equal(event_limit_check(&l, "10.0.0.5:23/tcp", T0 + 25 * S, &n), 1);
        assert_int_equal(event_limit_check(&l, "evil.example", T0 + 25 * S, &n), 1);
        assert_int_equal(l.suppressed_full, 0);
        /* a clock that goes back does not let a key through early */
        assert_int_equal(event_limit_check(&l, "evil.example", T0, &n), 0);
}

static void test_bad_keys(void **state) {
        EventLimit l = EVENT_LIMIT_INIT(EGRESS_EVENT_INTERVAL_USEC);
        char key[EVENT_LIMIT_KEY_MAX + 1];

        assert_int_equal(event_limit_check(&l, "", T0, NULL), -EINVAL);
        assert_int_equal(event_limit_check(&l, NULL, T0, NULL), -EINVAL);
        memset(key, 'a', sizeof(key));
        key[EVENT_LIMIT_KEY_MAX] = 0;
        assert_int_equal(event_limit_check(&l, key, T0, NULL), -EINVAL);
        key[EVENT_LIMIT_KEY_MAX - 1] = 0; /* the longest that fits */
        assert_int_equal(event_limit_check(&l, key, T0, NULL), 1);
        assert_int_equal(event_limit_check(&l, key, T0, NULL), 0);
}

/* Endless new keys: at most EVENT_LIMIT_SLOTS events per interval, and the rest counted. */
static void test_full_table(void **state) {
        EventLimit l = EVENT_LIMIT_INIT(EGRESS_EVENT_INTERVAL_USEC);
        char key[32];
        unsigned logged = 0;

        for (unsigned i = 0; i < 10 * EVENT_LIMIT_SLOTS; i++) {
                snprintf(key, sizeof(key), "192.0.2.%u:443/tcp", i);
                logged += event_limit_check(&l, key, T0 + i, NULL) == 1;
        }
        assert_int_equal(logged, EVENT_LIMIT_SLOTS);
        assert_int_equal(l.suppressed_full, 9 * EVENT_LIMIT_SLOTS);
        /* a key of the table is still limited on its own */
        assert_int_equal(event_limit_check(&l, "192.0.2.0:443/tcp", T0 + 5 * S, NULL), 0);
        /* once the oldest slot has been quiet for an interval, a new key takes it */
        assert_int_equal(event_limit_check(&l, "new.example", T0 + 10 * S, NULL), 1);
        assert_int_equal(event_limit_check(&l, "other.example", T0 + 10 * S, NULL), 0); /* key 1: 10 s - 1 us */
        assert_int_equal(event_limit_check(&l, "other.example", T0 + 10 * S + 1, NULL), 1); /* its slot now */
        assert_int_equal(event_limit_check(&l, "third.example", T0 + 10 * S + 1, NULL), 0);
        assert_int_equal(event_limit_check(&l, "third.example", T0 + 10 * S + 2, NULL), 1);
        assert_int_equal(l.suppressed_full, 9 * EVENT_LIMIT_SLOTS + 2);
        /* the key whose slot was taken is new again: logged, its old count gone with the slot */
        assert_int_equal(event_limit_check(&l, "192.0.2.0:443/tcp", T0 + 30 * S, NULL), 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_one_key),
                cmocka_unit_test(test_bad_keys),
                cmocka_unit_test(test_full_table),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
