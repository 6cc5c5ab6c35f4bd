/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture: the checks of a capture request and the record's "capture" object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <json-c/json.h>
#include <stdint.h>
#include <cmocka.h>

#include "capture.h"
#include "unit-test.h"

#define TENANT "fedcba9876543210fedcba9876543210"

static void test_check_duration(void **state) {
        static const struct {
                usec_t duration;
                int r;
        } table[] = {
                { 0, -EINVAL },
                { 1, 0 },
                { 90 * USEC_PER_SEC, 0 },
                { CAPTURE_DURATION_MAX, 0 },
                { CAPTURE_DURATION_MAX + 1, -ERANGE },
                { 7 * 24 * 3600 * USEC_PER_SEC, -ERANGE },
                { UINT64_MAX, -ERANGE },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, capture_check_duration(table[i].duration) == table[i].r, "row %zu", i);
        assert_int_equal(failures, 0);
        /* the documented maximum: 24 hours */
        assert_int_equal(CAPTURE_DURATION_MAX, 86400 * USEC_PER_SEC);
}

static void test_states(void **state) {
        RunCapture c = {};

        assert_false(run_capture_enabled(&c));
        assert_false(run_capture_active(&c));
        assert_false(run_capture_expired(&c, UINT64_MAX));
        c = (RunCapture) { .enabled_at = 100, .until = 200, .by_tenant = TENANT };
        assert_true(run_capture_enabled(&c));
        assert_true(run_capture_active(&c));
        assert_false(run_capture_expired(&c, 199));
        assert_true(run_capture_expired(&c, 200));
        c.ended_at = 150;
        assert_false(run_capture_active(&c));
        assert_true(run_capture_expired(&c, 300));
        c.deleted_at = 300;
        assert_false(run_capture_expired(&c, 400));
}

static void test_to_json(void **state) {
        RunCapture c = {};
        json_object *o, *v;

        assert_int_equal(run_capture_to_json(&c, &o), 0);
        assert_null(o);

        c = (RunCapture) { .enabled_at = 1764412200123456ULL, .until = 1764415800123456ULL, .by_tenant = TENANT,
                           .bytes = 42 };
        assert_int_equal(run_capture_to_json(&c, &o), 0);
        assert_non_null(o);
        assert_int_equal(json_object_object_length(o), 6);
        assert_true(json_object_object_get_ex(o, "enabled_at", &v));
        assert_string_equal(json_object_get_string(v), "2025-11-29T10:30:00.123456Z");
        assert_true(json_object_object_get_ex(o, "until", &v));
        assert_string_equal(json_object_get_string(v), "2025-11-29T11:30:00.123456Z");
        assert_true(json_object_object_get_ex(o, "by_tenant", &v));
        assert_string_equal(json_object_get_string(v), TENANT);
        assert_true(json_object_object_get_ex(o, "bytes", &v));
        assert_int_equal(json_object_get_uint64(v), 42);
        assert_true(json_object_object_get_ex(o, "ended_at", &v));
        assert_null(v);
        assert_true(json_object_object_get_ex(o, "deleted_at", &v));
        assert_null(v);
        json_object_put(o);
}

static void test_round_trip(void **state) {
        RunCapture c = { .enabled_at = 1764412200123456ULL, .until = 1764412260000000ULL, .by_tenant = TENANT,
                         .bytes = 7, .ended_at = 1764412230000001ULL, .deleted_at = 1764414000000000ULL }, back;
        _cleanup_free_ char *error = NULL;
        json_object *o;

        assert_int_equal(run_capture_to_json(&c, &o), 0);
        assert_int_equal(run_capture_from_json(o, &back, &error), 0);
        assert_null(error);
        /* field by field: the struct has padding after by_tenant, which nothing initializes */
        assert_int_equal(back.enabled_at, c.enabled_at);
        assert_int_equal(back.until, c.until);
        assert_string_equal(back.by_tenant, c.by_tenant);
        assert_int_equal(back.bytes, c.bytes);
        assert_int_equal(back.ended_at, c.ended_at);
        assert_int_equal(back.deleted_at, c.deleted_at);
        json_object_put(o);

        /* null: never enabled */
        assert_int_equal(run_capture_from_json(NULL, &back, &error), 0);
        assert_false(run_capture_enabled(&back));
}

static void test_from_json_refused(void **state) {
        static const struct {
                const char *json;
                const char *error;
        } table[] = {
                { "[]", "capture: expected an object or null" },
                { "5", "capture: expected an object or null" },
                { "{}", "capture.enabled_at: missing" },
                { "{\"enabled_at\": null, \"until\": \"2025-11-29T11:30:00.000000Z\", \"ended_at\": null, \"deleted_at\": null, "
                  "\"by_tenant\": \"" TENANT "\", \"bytes\": 0}",
                  "capture.enabled_at: expected an RFC 3339 UTC timestamp" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"tomorrow\", \"ended_at\": null, "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\", \"bytes\": 0}",
                  "capture.until: expected an RFC 3339 UTC timestamp" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T11:30:00.000000Z\", "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\", \"bytes\": 0}",
                  "capture.ended_at: missing" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T11:30:00.000000Z\", \"ended_at\": 5, "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\", \"bytes\": 0}",
                  "capture.ended_at: expected an RFC 3339 UTC timestamp or null" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T10:29:00.000000Z\", \"ended_at\": null, "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\", \"bytes\": 0}",
                  "capture.until: before capture.enabled_at" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T11:30:00.000000Z\", \"ended_at\": null, "
                  "\"deleted_at\": null, \"by_tenant\": \"root\", \"bytes\": 0}",
                  "capture.by_tenant: expected a tenant id" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T11:30:00.000000Z\", \"ended_at\": null, "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\", \"bytes\": -1}",
                  "capture.bytes: expected a non-negative integer" },
                { "{\"enabled_at\": \"2025-11-29T10:30:00.000000Z\", \"until\": \"2025-11-29T11:30:00.000000Z\", \"ended_at\": null, "
                  "\"deleted_at\": null, \"by_tenant\": \"" TENANT "\"}",
                  "capture.bytes: expected a non-negative integer" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *error = NULL;
                json_object *o = json_tokener_parse(table[i].json);
                RunCapture c = {};
                int r;

                assert_non_null(o);
                r = run_capture_from_json(o, &c, &error);
                check_row(failures, r == -EBADMSG, "row %zu: %d", i, r);
                check_row(failures, error && streq(error, table[i].error), "row %zu: %s", i, strna(error));
                json_object_put(o);
        }
        assert_int_equal(failures, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check_duration),
                cmocka_unit_test(test_states),
                cmocka_unit_test(test_to_json),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_from_json_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
