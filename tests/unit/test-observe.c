/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* observe: the figures reader's text, the record's limits and limit events, and the lines (and their
 * vocabulary) that sbxctl, D-Bus and the journal give for the limits a run met. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "observe.h"
#include "record.h"
#include "unit-test.h"

#define RUN_ID "0123456789abcdef0123456789abcdef"
#define TENANT "fedcba9876543210fedcba9876543210"
#define MiB (UINT64_C(1) << 20)
#define T_START (1795948200ULL * USEC_PER_SEC)

static const char figures_all[] = "memory_peak=67108864 tasks_peak=32 memory_max=57 oom=2 oom_kill=1 fork_refused=212 "
                                  "cpu_throttled=120 cpu_throttled_usec=1900000\n";

static RunRecord *record(StopReason reason, usec_t duration) {
        RunRecord *r = run_record_new();

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, TENANT);
        r->unit = strdup("sbx-coding-" RUN_ID ".service");
        r->profile = strdup("coding");
        assert_true(r->unit && r->profile);
        r->finished = true;
        r->started_at = T_START;
        r->ended_at = T_START + duration;
        r->stop_reason = reason;
        r->exit_code = reason == STOP_SUCCESS ? 0 : -1;
        r->unit_gone = r->cgroup_gone = true;
        r->limits = (RunLimits) {
                .known = true, .memory = 64 * MiB, .tasks = 32, .cpu_percent = 50, .wall_time = 90 * USEC_PER_SEC,
                .output = MiB, .memory_raise = 2048 * MiB, .tasks_raise = 512, .cpu_percent_raise = 0,
                .wall_time_raise = 3600 * USEC_PER_SEC,
        };
        return r;
}

static void test_parse_figures(void **state) {
        static const struct {
                const char *text;
                int ret;
        } table[] = {
                { figures_all, 0 },
                /* peaks are optional (a kernel without memory.peak), counters are not */
                { "memory_max=0 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0", 0 },
                { "unknown=5 memory_max=0 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0\n", 0 },
                { "memory_max=0 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0", -EBADMSG },
                { "", -EBADMSG },
                { "memory_max=x oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0", -EBADMSG },
                { "memory_max=-1 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0", -EBADMSG },
                { "memory_max=1x oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0", -EBADMSG },
                { "memory_max oom=0", -EBADMSG },
                { "=1 memory_max=0", -EBADMSG },
                { "memory_max=18446744073709551615 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=0 cpu_throttled_usec=0",
                  -EBADMSG },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                RunRecord *r = record(STOP_SUCCESS, USEC_PER_SEC);
                int k = run_record_parse_figures(r, table[i].text);

                check_row(failures, k == table[i].ret, "\"%s\": %d", table[i].text, k);
                /* a failure leaves the record as it was */
                if (table[i].ret < 0)
                        check_row(failures, !r->limit_events.known && r->memory_peak == UINT64_MAX,
                                  "\"%s\" changed the record", table[i].text);
                run_record_free(r);
        }
        assert_int_equal(failures, 0);

        RunRecord *r = record(STOP_SUCCESS, USEC_PER_SEC);
        assert_int_equal(run_record_parse_figures(r, figures_all), 0);
        assert_true(r->limit_events.known);
        assert_int_equal(r->memory_peak, 64 * MiB);
        assert_int_equal(r->tasks_peak, 32);
        assert_int_equal(r->limit_events.memory_max, 57);
        assert_int_equal(r->limit_events.oom, 2);
        assert_int_equal(r->limit_events.oom_kill, 1);
        assert_int_equal(r->limit_events.fork_refused, 212);
        assert_int_equal(r->limit_events.cpu_throttled, 120);
        assert_int_equal(r->limit_events.cpu_throttled_usec, 1900000);
        run_record_free(r);
}

static void test_subtract_base(void **state) {
        RunRecord *r = record(STOP_SUCCESS, USEC_PER_SEC);
        RunLimitEvents base = { .memory_max = 10, .oom = 5, .cpu_throttled = 200, .cpu_throttled_usec = 100 };

        assert_int_equal(run_record_parse_figures(r, figures_all), 0);
        run_limit_events_subtract(&r->limit_events, &base);
        assert_true(r->limit_events.known);
        assert_int_equal(r->limit_events.memory_max, 47);
        assert_int_equal(r->limit_events.oom, 0);     /* never below 0 */
        assert_int_equal(r->limit_events.oom_kill, 1);
        assert_int_equal(r->limit_events.fork_refused, 212);
        assert_int_equal(r->limit_events.cpu_throttled, 0);
        assert_int_equal(r->limit_events.cpu_throttled_usec, 1899900);
        run_record_free(r);
}

static void test_json_round_trip(void **state) {
        RunRecord *r = record(STOP_EXIT_CODE, 5 * USEC_PER_SEC), *back = NULL;
        char *json = NULL, *json2 = NULL, *err = NULL;

        r->exit_code = 2;
        assert_int_equal(run_record_parse_figures(r, figures_all), 0);
        assert_int_equal(run_record_to_json(r, &json), 0);
        assert_non_null(strstr(json, "\"fork_refused\": 212"));
        assert_non_null(strstr(json, "\"raise_to\""));
        /* no quota to raise to: null, not 0 */
        assert_non_null(strstr(json, "\"cpu_percent\": null"));
        assert_int_equal(run_record_from_json(json, &back, &err), 0);
        assert_true(back->limits.known);
        assert_memory_equal(&back->limits, &r->limits, sizeof(RunLimits));
        assert_memory_equal(&back->limit_events, &r->limit_events, sizeof(RunLimitEvents));
        assert_int_equal(run_record_to_json(back, &json2), 0);
        assert_string_equal(json, json2);
        free(json);
        free(json2);
        run_record_free(back);

        /* not measured: null, and read back as unknown */
        r->limit_events = (RunLimitEvents) {};
        assert_int_equal(run_record_to_json(r, &json), 0);
        assert_non_null(strstr(json, "\"limit_events\": null"));
        assert_int_equal(run_record_from_json(json, &back, &err), 0);
        assert_false(back->limit_events.known);
        free(json);
        run_record_free(back);
        run_record_free(r);
}

static void test_json_rejected(void **state) {
        static const struct {
                const char *from, *to, *key;
        } table[] = {
                { "\"fork_refused\": 212", "\"fork_refused\": -1", "limit_events.fork_refused" },
                { "\"fork_refused\": 212", "\"fork_refused\": \"x\"", "limit_events.fork_refused" },
                { "\"fork_refused\": 212,", "", "limit_events.fork_refused" },
                { "\"tasks\": 32", "\"tasks\": null", "limits" },
                { "\"raise_to\"", "\"raise_tox\"", "limits.raise_to" },
        };
        RunRecord *r = record(STOP_SUCCESS, USEC_PER_SEC);
        unsigned failures = 0;
        char *json = NULL;

        assert_int_equal(run_record_parse_figures(r, figures_all), 0);
        assert_int_equal(run_record_to_json(r, &json), 0);
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                char *p = strstr(json, table[i].from), *bad, *err = NULL;
                RunRecord *back = NULL;
                int k;

                assert_non_null(p);
                assert_true(asprintf(&bad, "%.*s%s%s", (int) (p - json), json, table[i].to,
                                     p + strlen(table[i].from)) > 0);
                k = run_record_from_json(bad, &back, &err);
                check_row(failures, k == -EBADMSG && err && strstr(err, table[i].key), "%s -> %s: %d %s",
                          table[i].from, table[i].to, k, err ?: "(no error)");
                free(bad);
                free(err);
                run_record_free(back);
        }
        free(json);
        run_record_free(r);
        assert_int_equal(failures, 0);
}

/* the lines of a record, "|"-joined, shown ones only */
static char *lines(const RunRecord *r) {
        Observation obs[_LIMIT_EVENT_MAX];
        size_t n = run_record_observe(r, obs);
        char *all = strdup("");

        assert_non_null(all);
        for (size_t i = 0; i < n; i++) {
                char *line = NULL, *next = NULL;

                assert_int_equal(observation_format(&obs[i], r->profile, &line), 0);
                if (obs[i].shown) {
                        assert_true(asprintf(&next, "%s%s%s", all, *all ? "|" : "", line) > 0);
                        free(all);
                        all = next;
                }
                free(line);
        }
        return all;
}

static void check_lines(RunRecord *r, const char *expected) {
        char *got = lines(r);

        assert_string_equal(got, expected);
        free(got);
        run_record_free(r);
}

static void test_lines(void **state) {
        RunRecord *r;

        /* a short run on a busy machine: throttled a tenth of its time, but less than a second */
        r = record(STOP_SUCCESS, 2 * USEC_PER_SEC);
        assert_int_equal(run_record_parse_figures(r, "memory_max=0 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=3 "
                                                      "cpu_throttled_usec=900000"), 0);
        check_lines(r, "");

        /* a run that ended normally: nothing, even with reclaim and a little throttling */
        r = record(STOP_SUCCESS, 10 * USEC_PER_SEC);
        assert_int_equal(run_record_parse_figures(r, "memory_max=3 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=2 "
                                                      "cpu_throttled_usec=1000"), 0);
        check_lines(r, "");

        /* the fork bomb: recognisable from the record alone */
        r = record(STOP_EXIT_CODE, 2 * USEC_PER_SEC);
        r->exit_code = 2;
        assert_int_equal(run_record_parse_figures(r, "tasks_peak=32 memory_max=0 oom=0 oom_kill=0 fork_refused=212 "
                                                      "cpu_throttled=0 cpu_throttled_usec=0"), 0);
        check_lines(r, "fork refused 212 times: task limit 32 reached \u2014 fewer processes or --tasks up to 512");

        /* the memory hog */
        r = record(STOP_OOM_KILL, 2 * USEC_PER_SEC);
        assert_int_equal(run_record_parse_figures(r, figures_all), 0);
        r->limit_events.fork_refused = 0;
        r->limit_events.cpu_throttled = 0;
        check_lines(r, "stopped: memory limit 64M reached (peak 64M, oom-kill) \u2014 use less memory or pass --memory "
                       "up to 2G");

        /* stopped at the wall time, the CPU quota holding it back all along, no higher quota allowed */
        r = record(STOP_TIMEOUT, 90 * USEC_PER_SEC);
        assert_int_equal(run_record_parse_figures(r, "memory_max=0 oom=0 oom_kill=0 fork_refused=0 cpu_throttled=900 "
                                                      "cpu_throttled_usec=45000000"), 0);
        check_lines(r, "stopped: wall-time limit 90s reached \u2014 make it faster or pass --timeout up to 1h|"
                       "cpu limit 50% reached: throttled 900 times, 45s in all (profile 'coding' allows no more)");

        /* reclaim at the ceiling, shown when the run failed; the most the profile allows */
        r = record(STOP_EXIT_CODE, USEC_PER_SEC);
        r->exit_code = 1;
        r->limits.memory_raise = 0;
        assert_int_equal(run_record_parse_figures(r, "memory_peak=67108864 memory_max=57 oom=0 oom_kill=0 fork_refused=0 "
                                                      "cpu_throttled=0 cpu_throttled_usec=0"), 0);
        check_lines(r, "memory limit 64M reached 57 times (peak 64M), memory reclaimed \u2014 use less memory (profile "
                       "'coding' allows no more)");

        /* output cut */
        r = record(STOP_SUCCESS, USEC_PER_SEC);
        r->output_truncated = true;
        r->output_bytes = 5 * MiB + 512 * 1024;
        check_lines(r, "output cut at the limit 1M (5.5M written) \u2014 write less to stdout and stderr");

        /* a record of an earlier version: the stop reason alone, values unknown */
        r = record(STOP_TIMEOUT, USEC_PER_SEC);
        r->limits = (RunLimits) {};
        check_lines(r, "stopped: wall-time limit ? reached \u2014 make it faster (profile 'coding' allows no more)");
}

static void test_vocabulary(void **state) {
        for (LimitEvent e = 0; e < _LIMIT_EVENT_MAX; e++) {
                const char *s = limit_event_to_string(e);

                assert_non_null(s);
                assert_int_equal(limit_event_from_string(s), e);
        }
        assert_null(limit_event_to_string(_LIMIT_EVENT_MAX));
        assert_int_equal(limit_event_from_string("oom"), _LIMIT_EVENT_INVALID);
        assert_int_equal(limit_event_from_string(NULL), _LIMIT_EVENT_INVALID);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_figures),
                cmocka_unit_test(test_subtract_base),
                cmocka_unit_test(test_json_round_trip),
                cmocka_unit_test(test_json_rejected),
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_vocabulary),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
