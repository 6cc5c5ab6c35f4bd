/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ceilings: the names of the ceilings that need a cgroup controller, which of them a host's cgroup2 root
 * lacks, and how a testbed build's record says that some went unenforced (limits.enforced, .unenforced). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "ceilings.h"
#include "record.h"

static void test_names(void **state) {
        char buf[CEILINGS_LIST_MAX];
        unsigned m = 0;

        assert_string_equal(ceiling_to_string(CEILING_MEMORY), "memory");
        assert_string_equal(ceiling_to_string(CEILING_TASKS), "tasks");
        assert_string_equal(ceiling_to_string(CEILING_CPU), "cpu");
        assert_null(ceiling_to_string(CEILING_MEMORY | CEILING_CPU));
        assert_int_equal(ceiling_from_string("cpu"), CEILING_CPU);
        assert_int_equal(ceiling_from_string("pids"), -EINVAL); /* the controller's name, not the ceiling's */
        assert_int_equal(ceiling_from_string(NULL), -EINVAL);

        assert_string_equal(ceilings_to_list(_CEILINGS_ALL, ", ", buf), "memory, tasks, cpu");
        assert_string_equal(ceilings_to_list(CEILING_CPU | CEILING_MEMORY, ",", buf), "memory,cpu");
        assert_string_equal(ceilings_to_list(0, ",", buf), "");

        assert_int_equal(ceilings_from_list("memory,tasks,cpu", &m), 0);
        assert_int_equal(m, _CEILINGS_ALL);
        assert_int_equal(ceilings_from_list("cpu", &m), 0);
        assert_int_equal(m, CEILING_CPU);
        m = 99;
        STRV_FOREACH(bad, ((char *[]) { "", ",", "memory,", ",memory", "memory,,cpu", "memoryx", "mem", "io", NULL }))
                assert_int_equal(ceilings_from_list(*bad, &m), -EINVAL);
        assert_int_equal(m, 99); /* untouched on failure */
}

/* The rule the testbed build applies to the root's cgroup.controllers. */
static void test_without_controller(void **state) {
        unsigned m = 99;

        /* a Debian 12 boot: every controller */
        assert_int_equal(ceilings_without_controller(_CEILINGS_ALL, "cpuset cpu io memory hugetlb pids rdma misc\n", &m), 0);
        assert_int_equal(m, 0);
        /* the nspawn testbed on a hybrid host: none */
        assert_int_equal(ceilings_without_controller(_CEILINGS_ALL, "\n", &m), 0);
        assert_int_equal(m, _CEILINGS_ALL);
        assert_int_equal(ceilings_without_controller(_CEILINGS_ALL, "", &m), 0);
        assert_int_equal(m, _CEILINGS_ALL);
        /* whole words only: "cpuset" is not "cpu", "pids" is the tasks' controller */
        assert_int_equal(ceilings_without_controller(_CEILINGS_ALL, "cpuset memory pids", &m), 0);
        assert_int_equal(m, CEILING_CPU);
        assert_int_equal(ceilings_without_controller(_CEILINGS_ALL, "cpu\tmemory", &m), 0);
        assert_int_equal(m, CEILING_TASKS);
        /* only what was asked about */
        assert_int_equal(ceilings_without_controller(CEILING_MEMORY, "cpu", &m), 0);
        assert_int_equal(m, CEILING_MEMORY);
        assert_int_equal(ceilings_without_controller(CEILING_CPU, "cpu", &m), 0);
        assert_int_equal(m, 0);
}

/* Only a testbed build leaves a ceiling unenforced; the unit tests of every other build check that it
 * never does, whatever the host. */
static void test_unenforced_only_in_testbed_builds(void **state) {
        if (SBX_TESTBED_UNENFORCED_LIMITS) {
                assert_true(ceilings_may_go_unenforced());
                assert_string_not_equal(SBX_BUILD_KIND, "");
        } else {
                assert_false(ceilings_may_go_unenforced());
                assert_int_equal(ceilings_unenforced(_CEILINGS_ALL), 0);
                assert_string_equal(SBX_BUILD_KIND, "");
        }
}

static RunRecord *record_with_limits(unsigned unenforced) {
        RunRecord *r = run_record_new();

        assert_non_null(r);
        strcpy(r->run_id, "0123456789abcdef0123456789abcdef");
        strcpy(r->tenant, "fedcba9876543210fedcba9876543210");
        r->unit = strdup("sbx-offline-0123456789abcdef0123456789abcdef.service");
        r->profile = strdup("offline");
        r->policy_digest = strdup("sha256:bd9800242777c526e1e879a132c24aba88ec761f353a75215af50010a178b5a1");
        assert_true(r->unit && r->profile && r->policy_digest);
        r->started_at = 1795948200ULL * USEC_PER_SEC;
        r->limits = (RunLimits) { .known = true, .memory = 1 << 30, .tasks = 64, .cpu_percent = 50, .unenforced = unenforced };
        return r;
}

static json_object *limits_of(const char *text) {
        json_object *o = json_tokener_parse(text), *l, *c;

        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "limits", &l));
        c = json_object_get(l);
        json_object_put(o);
        return c;
}

static void test_record(void **state) {
        for (unsigned u = 0; u <= _CEILINGS_ALL; u++) {
                _cleanup_(run_record_freep) RunRecord *r = record_with_limits(u), *back = NULL;
                _cleanup_free_ char *text = NULL, *again = NULL, *error = NULL;
                json_object *l, *v;

                assert_int_equal(run_record_to_json(r, &text), 0);
                l = limits_of(text);
                assert_true(json_object_object_get_ex(l, "enforced", &v));
                assert_int_equal(json_object_get_boolean(v), u == 0);
                if (u == 0)
                        assert_false(json_object_object_get_ex(l, "unenforced", &v));
                else {
                        assert_true(json_object_object_get_ex(l, "unenforced", &v));
                        assert_int_equal(json_object_array_length(v), __builtin_popcount(u));
                }
                json_object_put(l);
                assert_int_equal(run_record_from_json(text, &back, &error), 0);
                assert_int_equal(back->limits.unenforced, u);
                assert_int_equal(run_record_to_json(back, &again), 0);
                assert_string_equal(text, again);
        }
}

static void test_record_read(void **state) {
        static const struct {
                const char *limits;
                int result;
                unsigned unenforced;
                const char *error;
        } rows[] = {
                /* records of earlier versions: neither key, their ceilings were enforced */
                { "", 0, 0, NULL },
                { ", \"enforced\": true", 0, 0, NULL },
                { ", \"enforced\": false, \"unenforced\": [\"tasks\"]", 0, CEILING_TASKS, NULL },
                { ", \"unenforced\": [\"cpu\", \"memory\"]", 0, CEILING_CPU | CEILING_MEMORY, NULL },
                { ", \"enforced\": false", -EBADMSG, 0, "limits.enforced: false with no unenforced ceilings" },
                { ", \"enforced\": true, \"unenforced\": [\"cpu\"]", -EBADMSG, 0, "limits.enforced: true with some unenforced ceilings" },
                { ", \"enforced\": \"no\"", -EBADMSG, 0, "limits.enforced: expected a boolean" },
                { ", \"enforced\": false, \"unenforced\": \"cpu\"", -EBADMSG, 0, "limits.unenforced: expected an array" },
                { ", \"enforced\": false, \"unenforced\": [\"io\"]", -EBADMSG, 0, "limits.unenforced[0]: expected memory, tasks or cpu" },
                { ", \"enforced\": false, \"unenforced\": [\"cpu\", 3]", -EBADMSG, 0, "limits.unenforced[1]: expected memory, tasks or cpu" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(run_record_freep) RunRecord *r = NULL;
                _cleanup_free_ char *text = NULL, *error = NULL;

                assert_true(asprintf(&text,
                                     "{ \"version\": 1, \"run_id\": \"0123456789abcdef0123456789abcdef\", "
                                     "\"unit\": \"sbx-offline-0123456789abcdef0123456789abcdef.service\", "
                                     "\"tenant\": \"fedcba9876543210fedcba9876543210\", \"profile\": \"offline\", "
                                     "\"policy_digest\": \"sha256:bd9800242777c526e1e879a132c24aba88ec761f353a75215af50010a178b5a1\", "
                                     "\"state\": \"running\", \"started_at\": \"2026-11-29T10:30:00.123456Z\", "
                                     "\"ended_at\": null, \"stop_reason\": null, \"exit\": { \"code\": null, \"signal\": null }, "
                                     "\"resources\": { \"cpu_usec\": null, \"memory_peak_bytes\": null, \"tasks_peak\": null }, "
                                     "\"cleanup\": { \"unit_gone\": false, \"cgroup_gone\": false, \"completed\": false }, "
                                     "\"limits\": { \"memory_bytes\": 1024, \"tasks\": 2, \"cpu_percent\": null, "
                                     "\"wall_time_usec\": null, \"output_bytes\": null, \"raise_to\": { \"memory_bytes\": null, "
                                     "\"tasks\": null, \"cpu_percent\": null, \"wall_time_usec\": null }%s } }",
                                     rows[i].limits) > 0);
                if (run_record_from_json(text, &r, &error) != rows[i].result)
                        fail_msg("row %zu: %s", i, error ? error : "read");
                if (rows[i].result == 0)
                        assert_int_equal(r->limits.unenforced, rows[i].unenforced);
                else
                        assert_string_equal(error, rows[i].error);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_without_controller),
                cmocka_unit_test(test_unenforced_only_in_testbed_builds),
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_record_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
