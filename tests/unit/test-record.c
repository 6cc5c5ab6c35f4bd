/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record: run records to and from JSON, stop reasons, and the exit status sbxctl reports. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "exit-codes.h"
#include "record.h"
#include "unit-test.h"

#define RUN_ID "0123456789abcdef0123456789abcdef"
#define TENANT "fedcba9876543210fedcba9876543210"
#define DIGEST "sha256:bd9800242777c526e1e879a132c24aba88ec761f353a75215af50010a178b5a1"

/* A finished record as sbxd writes it. */
static const char base_json[] =
        "{\n"
        "  \"version\": 1,\n"
        "  \"run_id\": \"" RUN_ID "\",\n"
        "  \"unit\": \"sbx-offline-" RUN_ID ".service\",\n"
        "  \"tenant\": \"" TENANT "\",\n"
        "  \"profile\": \"offline\",\n"
        "  \"policy_digest\": \"" DIGEST "\",\n"
        "  \"state\": \"finished\",\n"
        "  \"started_at\": \"2026-11-29T10:30:00.123456Z\",\n"
        "  \"ended_at\": \"2026-11-29T10:31:00.654321Z\",\n"
        "  \"stop_reason\": \"exit-code\",\n"
        "  \"exit\": { \"code\": 3, \"signal\": null },\n"
        "  \"resources\": { \"cpu_usec\": 1234, \"memory_peak_bytes\": 5678, \"tasks_peak\": 3 },\n"
        "  \"cleanup\": { \"unit_gone\": true, \"cgroup_gone\": true, \"completed\": true }\n"
        "}\n";

#define T_START (1795948200ULL * USEC_PER_SEC + 123456)
#define T_END (1795948260ULL * USEC_PER_SEC + 654321)

static RunRecord *finished_record(void) {
        RunRecord *r = run_record_new();

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, TENANT);
        r->unit = strdup("sbx-offline-" RUN_ID ".service");
        r->profile = strdup("offline");
        r->policy_digest = strdup(DIGEST);
        assert_true(r->unit && r->profile && r->policy_digest);
        r->finished = true;
        r->started_at = T_START;
        r->ended_at = T_END;
        r->stop_reason = STOP_EXIT_CODE;
        r->exit_code = 3;
        r->exit_signal = 0;
        r->cpu_usec = 1234;
        r->memory_peak = 5678;
        r->tasks_peak = 3;
        r->unit_gone = r->cgroup_gone = true;
        return r;
}

static RunRecord *running_record(void) {
        RunRecord *r = run_record_new();

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, TENANT);
        r->unit = strdup("sbx-offline-" RUN_ID ".service");
        r->profile = strdup("offline");
        r->policy_digest = strdup(DIGEST);
        assert_true(r->unit && r->profile && r->policy_digest);
        r->started_at = T_START;
        return r;
}

static void assert_records_equal(const RunRecord *a, const RunRecord *b) {
        assert_string_equal(a->run_id, b->run_id);
        assert_true(streq_ptr(a->unit, b->unit));
        assert_string_equal(a->tenant, b->tenant);
        assert_true(streq_ptr(a->profile, b->profile));
        assert_true(streq_ptr(a->policy_digest, b->policy_digest));
        assert_int_equal(a->finished, b->finished);
        assert_int_equal(a->started_at, b->started_at);
        assert_int_equal(a->ended_at, b->ended_at);
        assert_int_equal(a->stop_reason, b->stop_reason);
        assert_int_equal(a->exit_code, b->exit_code);
        assert_int_equal(a->exit_signal, b->exit_signal);
        assert_int_equal(a->cpu_usec, b->cpu_usec);
        assert_int_equal(a->memory_peak, b->memory_peak);
        assert_int_equal(a->tasks_peak, b->tasks_peak);
        assert_int_equal(a->unit_gone, b->unit_gone);
        assert_int_equal(a->cgroup_gone, b->cgroup_gone);
        assert_true(streq_ptr(a->error, b->error));
        assert_int_equal(a->output_bytes, b->output_bytes);
        assert_int_equal(a->output_truncated, b->output_truncated);
        assert_int_equal(a->n_denied, b->n_denied);
        for (size_t i = 0; i < a->n_denied; i++) {
                assert_string_equal(a->denied[i].name, b->denied[i].name);
                assert_int_equal(a->denied[i].count, b->denied[i].count);
        }
}

/* JSON helpers for checking what was written. */
static json_object *lookup(json_object *o, const char *path) {
        char buf[128], *save = NULL;

        assert_true(strlen(path) < sizeof(buf));
        strcpy(buf, path);
        for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
                json_object *v;

                if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, k, &v))
                        fail_msg("%s: missing", path);
                o = v;
        }
        return o;
}

static void assert_json_string(json_object *o, const char *path, const char *s) {
        json_object *v = lookup(o, path);

        if (!json_object_is_type(v, json_type_string))
                fail_msg("%s: not a string", path);
        assert_string_equal(json_object_get_string(v), s);
}

static void assert_json_int(json_object *o, const char *path, int64_t i) {
        json_object *v = lookup(o, path);

        if (!json_object_is_type(v, json_type_int))
                fail_msg("%s: not an integer", path);
        assert_int_equal(json_object_get_int64(v), i);
}

static void assert_json_bool(json_object *o, const char *path, bool b) {
        json_object *v = lookup(o, path);

        if (!json_object_is_type(v, json_type_boolean))
                fail_msg("%s: not a boolean", path);
        assert_int_equal(json_object_get_boolean(v), b);
}

static void assert_json_null(json_object *o, const char *path) {
        if (lookup(o, path) != NULL)
                fail_msg("%s: not null", path);
}

/* ---- writing ---- */

static void test_to_json_finished(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *text = NULL;
        json_object *o;

        assert_int_equal(run_record_to_json(r, &text), 0);
        assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_int(o, "version", 1);
        assert_json_string(o, "run_id", RUN_ID);
        assert_json_string(o, "unit", "sbx-offline-" RUN_ID ".service");
        assert_json_string(o, "tenant", TENANT);
        assert_json_string(o, "profile", "offline");
        assert_json_string(o, "policy_digest", DIGEST);
        assert_json_string(o, "state", "finished");
        assert_json_string(o, "started_at", "2026-11-29T10:30:00.123456Z");
        assert_json_string(o, "ended_at", "2026-11-29T10:31:00.654321Z");
        assert_json_string(o, "stop_reason", "exit-code");
        assert_json_int(o, "exit.code", 3);
        assert_json_null(o, "exit.signal");
        assert_json_int(o, "resources.cpu_usec", 1234);
        assert_json_int(o, "resources.memory_peak_bytes", 5678);
        assert_json_int(o, "resources.tasks_peak", 3);
        assert_json_bool(o, "cleanup.unit_gone", true);
        assert_json_bool(o, "cleanup.cgroup_gone", true);
        assert_json_bool(o, "cleanup.completed", true);
        /* output not counted (no limit), nothing denied */
        assert_json_null(o, "resources.output_bytes");
        assert_json_bool(o, "output_truncated", false);
        assert_true(json_object_is_type(lookup(o, "denied_syscalls"), json_type_object));
        assert_int_equal(json_object_object_length(lookup(o, "denied_syscalls")), 0);
        /* no "error" key without an error, and nothing else: the record keeps no command line, no uid */
        assert_false(json_object_object_get_ex(o, "error", NULL));
        assert_int_equal(json_object_object_length(o), 15);
        json_object_put(o);
}

static void test_to_json_denied_and_output(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *text = NULL;
        json_object *o;

        assert_int_equal(run_record_add_denied(r, "ioctl", 2), 0);
        assert_int_equal(run_record_add_denied(r, "io_uring_setup", 1), 0);
        r->output_bytes = 1048576;
        r->output_truncated = true;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_int(o, "denied_syscalls.ioctl", 2);
        assert_json_int(o, "denied_syscalls.io_uring_setup", 1);
        assert_int_equal(json_object_object_length(lookup(o, "denied_syscalls")), 2);
        assert_json_int(o, "resources.output_bytes", 1048576);
        assert_json_bool(o, "output_truncated", true);
        json_object_put(o);
}

static void test_to_json_running(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = running_record();
        _cleanup_free_ char *text = NULL;
        json_object *o;

        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "state", "running");
        assert_json_string(o, "started_at", "2026-11-29T10:30:00.123456Z");
        assert_json_null(o, "ended_at");
        assert_json_null(o, "stop_reason");
        assert_json_null(o, "exit.code");
        assert_json_null(o, "exit.signal");
        /* unknown resource figures are null, not UINT64_MAX */
        assert_json_null(o, "resources.cpu_usec");
        assert_json_null(o, "resources.memory_peak_bytes");
        assert_json_null(o, "resources.tasks_peak");
        assert_json_bool(o, "cleanup.unit_gone", false);
        assert_json_bool(o, "cleanup.completed", false);
        json_object_put(o);
}

/* completed means finished and everything gone. */
static void test_to_json_completed(void **state) {
        static const struct {
                bool finished, unit_gone, cgroup_gone, completed;
        } table[] = {
                { true, true, true, true },
                { true, true, false, false },
                { true, false, true, false },
                { false, true, true, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(run_record_freep) RunRecord *r = finished_record();
                _cleanup_free_ char *text = NULL;
                json_object *o;

                r->finished = table[i].finished;
                r->unit_gone = table[i].unit_gone;
                r->cgroup_gone = table[i].cgroup_gone;
                assert_int_equal(run_record_to_json(r, &text), 0);
                o = json_tokener_parse(text);
                assert_non_null(o);
                assert_json_bool(o, "cleanup.completed", table[i].completed);
                json_object_put(o);
        }
}

/* A timestamp that cannot be written (past year 9999) is an error, not a crash. */
static void test_to_json_unformattable_time(void **state) {
        static const usec_t bad[] = { 253402300800ULL * USEC_PER_SEC, USEC_INFINITY };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int status;
                pid_t pid = fork();

                assert_true(pid >= 0);
                if (pid == 0) {
                        RunRecord *r = finished_record();
                        char *text = NULL;

                        reset_crash_signals();
                        r->ended_at = bad[i];
                        _exit(run_record_to_json(r, &text) < 0 ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (WIFSIGNALED(status))
                        fail_msg("ended_at=%" PRIu64 ": run_record_to_json() killed by signal %d", bad[i],
                                 WTERMSIG(status));
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
}

/* ---- round trips ---- */

static void round_trip(const RunRecord *r) {
        _cleanup_(run_record_freep) RunRecord *back = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL, *error = NULL;

        assert_int_equal(run_record_to_json(r, &text), 0);
        if (run_record_from_json(text, &back, &error) < 0)
                fail_msg("reading back failed: %s\n%s", strna(error), text);
        assert_records_equal(r, back);
        /* and written again, the same text */
        assert_int_equal(run_record_to_json(back, &text2), 0);
        assert_string_equal(text, text2);
}

static void test_round_trip_finished(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();

        round_trip(r);
}

static void test_round_trip_running(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = running_record();

        round_trip(r);
}

static void test_round_trip_variants(void **state) {
        for (int v = 0; v < 7; v++) {
                _cleanup_(run_record_freep) RunRecord *r = finished_record();

                switch (v) {
                case 0: /* killed by a signal, figures partly unknown */
                        r->stop_reason = STOP_SIGNAL;
                        r->exit_code = -1;
                        r->exit_signal = SIGKILL;
                        r->memory_peak = UINT64_MAX;
                        r->tasks_peak = 0;
                        break;
                case 1: /* failed to start, with the reason */
                        r->stop_reason = STOP_START_FAILED;
                        r->exit_code = -1;
                        r->error = strdup("Unit sbx-offline-x.service failed: \"resources\" \\ / \n");
                        r->unit = mfree(r->unit);
                        r->policy_digest = mfree(r->policy_digest);
                        r->cpu_usec = r->memory_peak = r->tasks_peak = UINT64_MAX;
                        r->unit_gone = r->cgroup_gone = false;
                        break;
                case 2: /* extremes */
                        r->stop_reason = STOP_SUCCESS;
                        r->exit_code = 255;
                        r->cpu_usec = UINT64_MAX - 1;
                        r->memory_peak = 0;
                        r->started_at = 1;
                        r->ended_at = 253402300799ULL * USEC_PER_SEC + 999999;
                        break;
                case 3:
                        r->stop_reason = STOP_CANCELLED;
                        r->exit_code = -1;
                        r->exit_signal = 64;
                        break;
                case 4:
                        r->stop_reason = STOP_LOST;
                        r->exit_code = 0;
                        break;
                case 5: /* denied calls and cut output */
                        assert_int_equal(run_record_add_denied(r, "ioctl", 3), 0);
                        assert_int_equal(run_record_add_denied(r, "io_uring_setup", 1), 0);
                        assert_int_equal(run_record_add_denied(r, "425", UINT64_MAX - 1), 0);
                        r->output_bytes = 123456789;
                        r->output_truncated = true;
                        break;
                case 6: /* output counted, not cut */
                        r->output_bytes = 0;
                        break;
                }
                print_message("variant %d\n", v);
                round_trip(r);
        }
}

/* ---- reading: refusals ---- */

/* Replaces (or with value NULL deletes) the member at a dotted path of the base record, and returns the
 * text. */
static char *mutate(const char *path, const char *value) {
        json_object *o = json_tokener_parse(base_json), *parent = o;
        char buf[128], *dot;
        const char *key = buf;
        char *text;

        assert_non_null(o);
        strcpy(buf, path);
        dot = strchr(buf, '.');
        if (dot) {
                *dot = 0;
                assert_true(json_object_object_get_ex(o, buf, &parent));
                key = dot + 1;
        }
        if (value) {
                json_object *v = json_tokener_parse(value);

                /* "null" parses to NULL, which is what we want */
                if (!v && !streq(value, "null"))
                        fail_msg("bad test value %s", value);
                assert_int_equal(json_object_object_add(parent, key, v), 0);
        } else
                json_object_object_del(parent, key);
        text = strdup(json_object_to_json_string(o));
        assert_non_null(text);
        json_object_put(o);
        return text;
}

static void test_from_json_base(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = NULL, *expected = finished_record();
        _cleanup_free_ char *error = NULL;

        assert_int_equal(run_record_from_json(base_json, &r, &error), 0);
        assert_null(error);
        assert_records_equal(r, expected);
}

static void test_from_json_refused(void **state) {
#define DEL NULL
        static const struct {
                const char *path;
                const char *value; /* JSON text, or DEL */
                const char *error;
        } table[] = {
                { "version", DEL, "version: expected 1" },
                { "version", "2", "version: expected 1" },
                { "version", "0", "version: expected 1" },
                { "version", "\"1\"", "version: expected 1" },
                { "version", "1.0", "version: expected 1" },
                { "version", "4294967297", "version: expected 1" },
                { "version", "null", "version: expected 1" },
                { "run_id", DEL, "run_id: missing" },
                { "run_id", "null", "run_id: null, expected a string" },
                { "run_id", "5", "run_id: expected a string" },
                { "run_id", "\"0123456789ABCDEF0123456789abcdef\"", "run_id: not a run id" },
                { "run_id", "\"0123456789abcdef0123456789abcde\"", "run_id: not a run id" },
                { "run_id", "\"../../../../../../../etc/passwd\"", "run_id: not a run id" },
                { "unit", DEL, "unit: missing" },
                { "unit", "[]", "unit: expected a string" },
                { "tenant", DEL, "tenant: missing" },
                { "tenant", "null", "tenant: null, expected a string" },
                { "tenant", "\"xyz\"", "tenant: not a tenant id" },
                { "tenant", "\"FEDCBA9876543210FEDCBA9876543210\"", "tenant: not a tenant id" },
                { "tenant", "\"fedcba9876543210fedcba9876543210a\"", "tenant: not a tenant id" },
                { "profile", DEL, "profile: missing" },
                { "profile", "null", "profile: null, expected a string" },
                { "profile", "{}", "profile: expected a string" },
                { "policy_digest", DEL, "policy_digest: missing" },
                { "policy_digest", "7", "policy_digest: expected a string" },
                { "state", DEL, "state: missing" },
                { "state", "\"done\"", "state: expected \"running\" or \"finished\"" },
                { "state", "true", "state: expected a string" },
                { "started_at", DEL, "started_at: missing" },
                { "started_at", "null", "started_at: null, expected a string" },
                { "started_at", "\"yesterday\"", "started_at: 'yesterday' is not an RFC 3339 UTC timestamp" },
                { "started_at", "1795948200", "started_at: expected a string" },
                { "ended_at", DEL, "ended_at: missing" },
                { "ended_at", "null", "ended_at: null, expected a string" }, /* finished: required */
                { "ended_at", "\"2026-11-29T10:31:00Z\"",
                  "ended_at: '2026-11-29T10:31:00Z' is not an RFC 3339 UTC timestamp" },
                { "stop_reason", DEL, "stop_reason: missing" },
                { "stop_reason", "null", "stop_reason: null, expected a string" },
                { "stop_reason", "\"exploded\"", "stop_reason: unknown value 'exploded'" },
                { "stop_reason", "\"Success\"", "stop_reason: unknown value 'Success'" },
                { "stop_reason", "3", "stop_reason: expected a string" },
                { "exit", DEL, "exit: expected an object" },
                { "exit", "null", "exit: expected an object" },
                { "exit", "[3]", "exit: expected an object" },
                { "exit.code", DEL, "exit.code: missing" },
                { "exit.code", "\"3\"", "exit.code: expected a non-negative integer or null" },
                { "exit.code", "-1", "exit.code: expected a non-negative integer or null" },
                { "exit.code", "3.0", "exit.code: expected a non-negative integer or null" },
                { "exit.code", "256", "exit.code: out of range" },
                { "exit.code", "4294967296", "exit.code: out of range" },
                { "exit.signal", DEL, "exit.signal: missing" },
                { "exit.signal", "0", "exit.signal: out of range" },
                { "exit.signal", "65", "exit.signal: out of range" },
                { "exit.signal", "-9", "exit.signal: expected a non-negative integer or null" },
                { "resources", DEL, "resources: expected an object" },
                { "resources", "1234", "resources: expected an object" },
                { "resources.cpu_usec", DEL, "resources.cpu_usec: missing" },
                { "resources.cpu_usec", "-1", "resources.cpu_usec: expected a non-negative integer or null" },
                { "resources.memory_peak_bytes", DEL, "resources.memory_peak_bytes: missing" },
                { "resources.memory_peak_bytes", "\"5678\"",
                  "resources.memory_peak_bytes: expected a non-negative integer or null" },
                { "resources.tasks_peak", DEL, "resources.tasks_peak: missing" },
                { "resources.tasks_peak", "true", "resources.tasks_peak: expected a non-negative integer or null" },
                { "cleanup", DEL, "cleanup: expected an object" },
                { "cleanup", "true", "cleanup: expected an object" },
                { "cleanup.unit_gone", DEL, "cleanup.unit_gone: expected a boolean" },
                { "cleanup.unit_gone", "1", "cleanup.unit_gone: expected a boolean" },
                { "cleanup.unit_gone", "\"yes\"", "cleanup.unit_gone: expected a boolean" },
                { "cleanup.cgroup_gone", DEL, "cleanup.cgroup_gone: expected a boolean" },
                { "cleanup.cgroup_gone", "null", "cleanup.cgroup_gone: expected a boolean" },
                { "error", "5", "error: expected a string" },
                { "resources.output_bytes", "-1", "resources.output_bytes: expected a non-negative integer or null" },
                { "resources.output_bytes", "\"7\"", "resources.output_bytes: expected a non-negative integer or null" },
                { "resources.output_bytes", "18446744073709551615", "resources.output_bytes: out of range" },
                { "output_truncated", "1", "output_truncated: expected a boolean" },
                { "output_truncated", "null", "output_truncated: expected a boolean" },
                { "denied_syscalls", "[]", "denied_syscalls: expected an object" },
                { "denied_syscalls", "null", "denied_syscalls: expected an object" },
                { "denied_syscalls", "{\"ioctl\": -1}", "denied_syscalls.ioctl: expected a non-negative integer" },
                { "denied_syscalls", "{\"ioctl\": \"2\"}", "denied_syscalls.ioctl: expected a non-negative integer" },
                { "denied_syscalls", "{\"ioctl\": 1.5}", "denied_syscalls.ioctl: expected a non-negative integer" },
                { "denied_syscalls", "{\"ioctl\": 18446744073709551615}",
                  "denied_syscalls.ioctl: expected a non-negative integer" },
                { "denied_syscalls", "{\"IOCTL\": 1}", "denied_syscalls: 'IOCTL' is not a syscall name" },
                { "denied_syscalls", "{\"\": 1}", "denied_syscalls: '' is not a syscall name" },
                { "denied_syscalls", "{\"a b\": 1}", "denied_syscalls: 'a b' is not a syscall name" },
        };
#undef DEL
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *text = mutate(table[i].path, table[i].value), *error = NULL;
                RunRecord *r = (RunRecord *) 0x1;
                int k = run_record_from_json(text, &r, &error);

                check_row(failures, k == -EBADMSG && streq_ptr(error, table[i].error) && r == (RunRecord *) 0x1,
                          "%s=%s -> %d '%s', expected '%s'", table[i].path, table[i].value ?: "(deleted)", k,
                          strna(error), table[i].error);
                if (k >= 0 && r != (RunRecord *) 0x1)
                        run_record_free(r);

                /* Without ret_error, the same errno. */
                r = NULL;
                k = run_record_from_json(text, &r, NULL);
                check_row(failures, k == -EBADMSG, "%s (no ret_error) -> %d", table[i].path, k);
                run_record_free(r);
        }
        assert_int_equal(failures, 0);
}

/* Values at the edge of what is accepted, and the nullable members. */
static void test_from_json_accepted(void **state) {
        static const struct {
                const char *path;
                const char *value; /* NULL: delete */
        } table[] = {
                { "unit", "null" },
                { "policy_digest", "null" },
                { "error", "null" },
                { "error", "\"the exec helper refused: MemoryMax not in force\"" },
                { "exit.code", "null" },
                { "exit.code", "0" },
                { "exit.code", "255" },
                { "exit.signal", "1" },
                { "exit.signal", "64" },
                { "resources.cpu_usec", "null" },
                { "resources.memory_peak_bytes", "0" },
                { "resources.tasks_peak", "18446744073709551614" },
                { "cleanup.completed", NULL }, /* derived, not read */
                { "stop_reason", "\"refused\"" },
                { "stop_reason", "\"lost\"" },
                /* added later in version 1: older records have none of these */
                { "resources.output_bytes", NULL },
                { "output_truncated", NULL },
                { "denied_syscalls", NULL },
                { "resources.output_bytes", "null" },
                { "resources.output_bytes", "0" },
                { "output_truncated", "true" },
                { "denied_syscalls", "{}" },
                { "denied_syscalls", "{\"ioctl\": 2, \"io_uring_setup\": 0, \"425\": 1}" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *text = mutate(table[i].path, table[i].value), *error = NULL;
                _cleanup_(run_record_freep) RunRecord *r = NULL;
                int k = run_record_from_json(text, &r, &error);

                check_row(failures, k == 0 && r && !error, "%s=%s -> %d '%s'", table[i].path,
                          table[i].value ?: "(deleted)", k, strna(error));
        }
        assert_int_equal(failures, 0);
}

static void test_from_json_running(void **state) {
        static const char json[] =
                "{ \"version\": 1, \"run_id\": \"" RUN_ID "\", \"unit\": null, \"tenant\": \"" TENANT "\","
                "  \"profile\": \"offline\", \"policy_digest\": null, \"state\": \"running\","
                "  \"started_at\": \"2026-11-29T10:30:00.123456Z\", \"ended_at\": null, \"stop_reason\": null,"
                "  \"exit\": { \"code\": null, \"signal\": null },"
                "  \"resources\": { \"cpu_usec\": null, \"memory_peak_bytes\": null, \"tasks_peak\": null },"
                "  \"cleanup\": { \"unit_gone\": false, \"cgroup_gone\": false, \"completed\": false } }";
        _cleanup_(run_record_freep) RunRecord *r = NULL;
        _cleanup_free_ char *error = NULL;

        assert_int_equal(run_record_from_json(json, &r, &error), 0);
        assert_false(r->finished);
        assert_null(r->unit);
        assert_null(r->policy_digest);
        assert_int_equal(r->started_at, T_START);
        assert_int_equal(r->ended_at, 0);
        assert_int_equal(r->stop_reason, _STOP_REASON_INVALID);
        assert_int_equal(r->exit_code, -1);
        assert_int_equal(r->exit_signal, 0);
        assert_int_equal(r->cpu_usec, UINT64_MAX);
        assert_int_equal(r->memory_peak, UINT64_MAX);
        assert_int_equal(r->tasks_peak, UINT64_MAX);
        assert_false(r->unit_gone);
        assert_false(r->cgroup_gone);
        assert_null(r->error);
}

static void test_from_json_not_an_object(void **state) {
        static const char *const bad[] = { "", "[]", "null", "42", "\"x\"", "{", "{\"version\": 1", "garbage" };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *error = NULL;
                RunRecord *r = NULL;
                int k = run_record_from_json(bad[i], &r, &error);

                check_row(failures, k == -EBADMSG && streq_ptr(error, "not a JSON object") && !r, "'%s' -> %d '%s'",
                          bad[i], k, strna(error));
                run_record_free(r);
        }
        assert_int_equal(failures, 0);
}

static void test_from_json_denied(void **state) {
        _cleanup_free_ char *text = mutate("denied_syscalls", "{\"ioctl\": 2, \"io_uring_setup\": 1}"), *error = NULL;
        _cleanup_(run_record_freep) RunRecord *r = NULL;

        assert_int_equal(run_record_from_json(text, &r, &error), 0);
        assert_int_equal(r->n_denied, 2);
        assert_string_equal(r->denied[0].name, "ioctl");
        assert_int_equal(r->denied[0].count, 2);
        assert_string_equal(r->denied[1].name, "io_uring_setup");
        assert_int_equal(run_record_get_denied(r, "io_uring_setup"), 1);
        assert_int_equal(run_record_get_denied(r, "open"), 0);
        /* an older record: nothing denied, output not counted */
        r = run_record_free(r);
        assert_int_equal(run_record_from_json(base_json, &r, &error), 0);
        assert_int_equal(r->n_denied, 0);
        assert_int_equal(r->output_bytes, UINT64_MAX);
        assert_false(r->output_truncated);
}

/* ---- the exec helper's list of denied calls ---- */

static void test_parse_denied(void **state) {
        static const struct {
                const char *list;
                int ret;
                const char *json; /* denied_syscalls afterwards, as "name=count;..." */
        } table[] = {
                { "", 0, "" },
                { " cpu_usec=5", 0, "" },
                { "ioctl:2", 0, "ioctl=2;" },
                { "ioctl:2,io_uring_setup:1", 0, "ioctl=2;io_uring_setup=1;" },
                { "ioctl:2,io_uring_setup:1 output_bytes=5", 0, "ioctl=2;io_uring_setup=1;" },
                { "ioctl:2,ioctl:3\n", 0, "ioctl=5;" },
                { "425:1", 0, "425=1;" },
                { "ioctl:18446744073709551614", 0, "ioctl=18446744073709551614;" },
                { "ioctl", -EBADMSG, "" },
                { "ioctl:", -EBADMSG, "" },
                { "ioctl:x", -EBADMSG, "" },
                { "ioctl:-1", -EBADMSG, "" },
                { "ioctl:+1", -EBADMSG, "" },
                { "ioctl:2,", -EBADMSG, "" },
                { "ioctl:2,,open:1", -EBADMSG, "" },
                { ":2", -EBADMSG, "" },
                { "IOCTL:2", -EBADMSG, "" },
                { "ioctl:2;open:1", -EBADMSG, "" },
                { "ioctl:18446744073709551615", -EBADMSG, "" },
                { "ioctl:99999999999999999999", -EBADMSG, "" },
                /* all or nothing */
                { "ioctl:2,open:x", -EBADMSG, "" },
                { "open:1,ioctl:18446744073709551614,ioctl:1", -ERANGE, "" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(run_record_freep) RunRecord *r = finished_record();
                _cleanup_free_ char *got = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&got, &size);
                int k;

                /* a list replaces what was there; a bad one leaves it */
                assert_int_equal(run_record_add_denied(r, "old", 1), 0);
                k = run_record_parse_denied(r, table[i].list);
                if (k < 0) {
                        assert_int_equal(r->n_denied, 1);
                        assert_int_equal(run_record_get_denied(r, "old"), 1);
                        r->n_denied = 0;
                        free(r->denied[0].name);
                }

                assert_non_null(f);
                for (size_t j = 0; j < r->n_denied; j++)
                        fprintf(f, "%s=%" PRIu64 ";", r->denied[j].name, r->denied[j].count);
                fclose(f);
                check_row(failures, k == table[i].ret && streq(got, table[i].json), "'%s' -> %d '%s'",
                          table[i].list, k, got);
        }
        assert_int_equal(failures, 0);
}

/* A list of more distinct names than a record keeps fails part way through and changes nothing. */
static void test_parse_denied_too_many(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *list = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&list, &size);

        assert_non_null(f);
        for (int i = 0; i <= RECORD_DENIED_MAX; i++)
                fprintf(f, "%ss%d:1", i > 0 ? "," : "", i);
        assert_int_equal(fclose(f), 0);

        assert_int_equal(run_record_add_denied(r, "old", 7), 0);
        assert_int_equal(run_record_parse_denied(r, list), -E2BIG);
        assert_int_equal(r->n_denied, 1);
        assert_string_equal(r->denied[0].name, "old");
        assert_int_equal(r->denied[0].count, 7);

        /* one fewer fits, and replaces the old list */
        *strrchr(list, ',') = 0;
        assert_int_equal(run_record_parse_denied(r, list), 0);
        assert_int_equal(r->n_denied, RECORD_DENIED_MAX);
        assert_int_equal(run_record_get_denied(r, "old"), 0);
        assert_int_equal(run_record_get_denied(r, "s0"), 1);
}

static void test_add_denied(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        char name[16];

        assert_int_equal(run_record_add_denied(r, "Ioctl", 1), -EINVAL);
        assert_int_equal(run_record_add_denied(r, "", 1), -EINVAL);
        assert_int_equal(run_record_add_denied(r, NULL, 1), -EINVAL);
        assert_int_equal(run_record_add_denied(r, "ioctl", UINT64_MAX), -ERANGE);
        assert_int_equal(run_record_add_denied(r, "ioctl", UINT64_MAX - 1), 0);
        assert_int_equal(run_record_add_denied(r, "ioctl", 1), -ERANGE);
        assert_int_equal(run_record_get_denied(r, "ioctl"), UINT64_MAX - 1);
        for (int i = 1; i < RECORD_DENIED_MAX; i++) {
                snprintf(name, sizeof(name), "s%d", i);
                assert_int_equal(run_record_add_denied(r, name, 1), 0);
        }
        assert_int_equal(run_record_add_denied(r, "one_too_many", 1), -E2BIG);
        assert_int_equal(run_record_add_denied(r, "s1", 1), 0); /* an existing one still counts */
        assert_int_equal(r->n_denied, RECORD_DENIED_MAX);
}

/* An exit code of 2^64-1 is out of range, not "no exit code". */
static void test_from_json_exit_code_u64_max(void **state) {
        _cleanup_free_ char *text = mutate("exit.code", "18446744073709551615"), *error = NULL;
        _cleanup_(run_record_freep) RunRecord *r = NULL;

        assert_int_equal(run_record_from_json(text, &r, &error), -EBADMSG);
        assert_string_equal(error, "exit.code: out of range");
}

/* A record is one JSON object; anything after it means the file is not what sbxd wrote. */
static void test_from_json_trailing_garbage(void **state) {
        _cleanup_free_ char *text = NULL, *error = NULL;
        _cleanup_(run_record_freep) RunRecord *r = NULL;

        assert_true(asprintf(&text, "%s{\"version\": 2}", base_json) > 0);
        assert_int_equal(run_record_from_json(text, &r, &error), -EBADMSG);
        assert_string_equal(error, "trailing data after the record");
}

/* ---- stop reasons ---- */

static void test_stop_reason_strings(void **state) {
        static const char *const names[_STOP_REASON_MAX] = {
                [STOP_SUCCESS] = "success",           [STOP_EXIT_CODE] = "exit-code",
                [STOP_SIGNAL] = "signal",             [STOP_CORE_DUMP] = "core-dump",
                [STOP_TIMEOUT] = "timeout",           [STOP_OOM_KILL] = "oom-kill",
                [STOP_CANCELLED] = "cancelled",       [STOP_START_FAILED] = "start-failed",
                [STOP_REFUSED] = "refused",           [STOP_LOST] = "lost",
        };

        for (int i = 0; i < _STOP_REASON_MAX; i++) {
                assert_non_null(names[i]);
                assert_string_equal(stop_reason_to_string((StopReason) i), names[i]);
                assert_int_equal(stop_reason_from_string(names[i]), i);
        }
        assert_null(stop_reason_to_string(_STOP_REASON_MAX));
        assert_null(stop_reason_to_string(_STOP_REASON_INVALID));
        assert_int_equal(stop_reason_from_string("bogus"), _STOP_REASON_INVALID);
        assert_int_equal(stop_reason_from_string(""), _STOP_REASON_INVALID);
        assert_int_equal(stop_reason_from_string("Success"), _STOP_REASON_INVALID);
        assert_int_equal(stop_reason_from_string(NULL), _STOP_REASON_INVALID);
}

static void test_stop_reason_from_unit_result(void **state) {
        static const struct {
                const char *result;
                StopReason reason;
        } table[] = {
                { "success", STOP_SUCCESS },
                { "exit-code", STOP_EXIT_CODE },
                { "signal", STOP_SIGNAL },
                { "core-dump", STOP_CORE_DUMP },
                { "timeout", STOP_TIMEOUT },
                { "watchdog", STOP_TIMEOUT },
                { "oom-kill", STOP_OOM_KILL },
                { "resources", STOP_START_FAILED },
                { "protocol", STOP_START_FAILED },
                { "start-limit-hit", STOP_START_FAILED },
                { "exec-condition", STOP_START_FAILED },
                { "", _STOP_REASON_INVALID },
                { "cancelled", _STOP_REASON_INVALID },
                { "start-failed", _STOP_REASON_INVALID },
                { "Success", _STOP_REASON_INVALID },
                { "exit-code ", _STOP_REASON_INVALID },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                StopReason r = stop_reason_from_unit_result(table[i].result);

                check_row(failures, r == table[i].reason, "'%s' -> %d, expected %d", table[i].result, r,
                          table[i].reason);
        }
        assert_int_equal(failures, 0);
        assert_int_equal(stop_reason_from_unit_result(NULL), _STOP_REASON_INVALID);
}

/* ---- exit status ---- */

static void test_exit_status(void **state) {
        static const struct {
                StopReason reason;
                int code, signal;
                int status;
        } table[] = {
                { STOP_SUCCESS, 0, 0, 0 },
                { STOP_SUCCESS, -1, 0, SBX_EXIT_FAILURE },
                { STOP_EXIT_CODE, 1, 0, 1 },
                { STOP_EXIT_CODE, 3, 0, 3 },
                { STOP_EXIT_CODE, 127, 0, 127 },
                { STOP_EXIT_CODE, 255, 0, 255 },
                { STOP_EXIT_CODE, -1, 0, SBX_EXIT_FAILURE },
                { STOP_SIGNAL, -1, SIGKILL, 128 + 9 },
                { STOP_SIGNAL, -1, SIGTERM, 128 + 15 },
                { STOP_SIGNAL, -1, SIGHUP, 128 + 1 },
                { STOP_SIGNAL, -1, 0, SBX_EXIT_FAILURE },
                { STOP_CORE_DUMP, -1, SIGSEGV, 128 + 11 },
                { STOP_CORE_DUMP, -1, SIGABRT, 128 + 6 },
                { STOP_CORE_DUMP, -1, 0, SBX_EXIT_FAILURE },
                { STOP_TIMEOUT, -1, 0, 124 },
                { STOP_TIMEOUT, -1, SIGTERM, 124 },
                { STOP_OOM_KILL, -1, 0, 137 },
                { STOP_OOM_KILL, -1, SIGKILL, 137 },
                { STOP_CANCELLED, -1, SIGINT, 130 },
                { STOP_CANCELLED, -1, SIGTERM, 143 },
                { STOP_CANCELLED, -1, 0, 143 },
                { STOP_START_FAILED, -1, 0, 123 },
                { STOP_REFUSED, -1, 0, 123 },
                { STOP_REFUSED, 0, 0, 123 },
                { STOP_LOST, -1, 0, 123 },
                { STOP_LOST, 0, 0, 123 },
                { _STOP_REASON_INVALID, 0, 0, 123 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(run_record_freep) RunRecord *r = finished_record();
                int s;

                r->stop_reason = table[i].reason;
                r->exit_code = table[i].code;
                r->exit_signal = table[i].signal;
                s = run_record_exit_status(r);
                check_row(failures, s == table[i].status, "%s code=%d signal=%d -> %d, expected %d",
                          strna(stop_reason_to_string(table[i].reason)), table[i].code, table[i].signal, s,
                          table[i].status);
        }
        assert_int_equal(failures, 0);
}

static void test_new_and_free(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = run_record_new();

        assert_non_null(r);
        assert_false(r->finished);
        assert_int_equal(r->stop_reason, _STOP_REASON_INVALID);
        assert_int_equal(r->exit_code, -1);
        assert_int_equal(r->exit_signal, 0);
        assert_int_equal(r->cpu_usec, UINT64_MAX);
        assert_int_equal(r->memory_peak, UINT64_MAX);
        assert_int_equal(r->tasks_peak, UINT64_MAX);
        assert_int_equal(r->output_bytes, UINT64_MAX);
        assert_false(r->output_truncated);
        assert_int_equal(r->n_denied, 0);
        assert_null(run_record_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_to_json_finished),
                cmocka_unit_test(test_to_json_denied_and_output),
                cmocka_unit_test(test_to_json_running),
                cmocka_unit_test(test_to_json_completed),
                cmocka_unit_test(test_to_json_unformattable_time),
                cmocka_unit_test(test_round_trip_finished),
                cmocka_unit_test(test_round_trip_running),
                cmocka_unit_test(test_round_trip_variants),
                cmocka_unit_test(test_from_json_base),
                cmocka_unit_test(test_from_json_refused),
                cmocka_unit_test(test_from_json_accepted),
                cmocka_unit_test(test_from_json_running),
                cmocka_unit_test(test_from_json_not_an_object),
                cmocka_unit_test(test_from_json_denied),
                cmocka_unit_test(test_parse_denied),
                cmocka_unit_test(test_parse_denied_too_many),
                cmocka_unit_test(test_add_denied),
                cmocka_unit_test(test_from_json_exit_code_u64_max),
                cmocka_unit_test(test_from_json_trailing_garbage),
                cmocka_unit_test(test_stop_reason_strings),
                cmocka_unit_test(test_stop_reason_from_unit_result),
                cmocka_unit_test(test_exit_status),
                cmocka_unit_test(test_new_and_free),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
