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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "egress-policy.h"
#include "exit-codes.h"
#include "record.h"
#include "record-image.h"
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
        r->unit_gone = r->cgroup_gone = r->user_gone = r->mounts_gone = true;
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

static void assert_addresses_equal(const NetAddress *a, size_t na, const NetAddress *b, size_t nb) {
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++) {
                assert_int_equal(a[i].family, b[i].family);
                assert_memory_equal(a[i].bytes, b[i].bytes, sizeof(a[i].bytes));
        }
}

static void assert_networks_equal(const RunNetwork *a, const RunNetwork *b) {
        assert_int_equal(a->mode, b->mode);
        assert_int_equal(a->n_destinations, b->n_destinations);
        for (size_t i = 0; i < a->n_destinations; i++) {
                const NetDestinationStat *x = &a->destinations[i], *y = &b->destinations[i];

                assert_addresses_equal(&x->address, 1, &y->address, 1);
                assert_int_equal(x->port, y->port);
                assert_int_equal(x->protocol, y->protocol);
                assert_int_equal(x->allowed, y->allowed);
                assert_int_equal(x->reason, y->reason);
                assert_true(streq_ptr(x->name, y->name));
                assert_int_equal(x->count, y->count);
                assert_int_equal(x->first, y->first);
                assert_int_equal(x->last, y->last);
        }
        assert_int_equal(a->n_names, b->n_names);
        for (size_t i = 0; i < a->n_names; i++) {
                const NetNameStat *x = &a->names[i], *y = &b->names[i];

                assert_string_equal(x->name, y->name);
                assert_int_equal(x->verdict, y->verdict);
                assert_int_equal(x->count, y->count);
                assert_addresses_equal(x->addresses, x->n_addresses, y->addresses, y->n_addresses);
                assert_addresses_equal(x->blocked, x->n_blocked, y->blocked, y->n_blocked);
        }
        assert_int_equal(a->denied, b->denied);
        assert_int_equal(a->dns_refused, b->dns_refused);
        assert_int_equal(a->events_lost, b->events_lost);
        assert_int_equal(a->destinations_overflow, b->destinations_overflow);
        assert_int_equal(a->names_overflow, b->names_overflow);
        assert_int_equal(a->entries_removed, b->entries_removed);
}

static void assert_strv_equal(char *const *a, char *const *b) {
        assert_int_equal(strv_length(a), strv_length(b));
        for (size_t i = 0; i < strv_length(a); i++)
                assert_string_equal(a[i], b[i]);
}

static void assert_sandboxes_equal(const RunSandbox *a, const RunSandbox *b) {
        assert_true(streq_ptr(a->name, b->name));
        assert_int_equal(a->idle_timeout, b->idle_timeout);
        assert_int_equal(a->detach, b->detach);
        assert_int_equal(a->execs_total, b->execs_total);
        assert_int_equal(a->n_execs, b->n_execs);
        for (size_t i = 0; i < a->n_execs; i++) {
                const RunExec *x = &a->execs[i], *y = &b->execs[i];

                assert_string_equal(x->id, y->id);
                assert_int_equal(x->started_at, y->started_at);
                assert_int_equal(x->duration, y->duration);
                assert_int_equal(x->result, y->result);
                assert_int_equal(x->exit_code, y->exit_code);
                assert_int_equal(x->exit_signal, y->exit_signal);
                assert_int_equal(x->output_bytes, y->output_bytes);
                assert_int_equal(x->output_truncated, y->output_truncated);
                assert_int_equal(x->denied_syscalls, y->denied_syscalls);
        }
}

static void assert_limits_equal(const RunLimits *a, const RunLimits *b) {
        assert_int_equal(a->known, b->known);
        assert_int_equal(a->memory, b->memory);
        assert_int_equal(a->tasks, b->tasks);
        assert_int_equal(a->cpu_percent, b->cpu_percent);
        assert_int_equal(a->wall_time, b->wall_time);
        assert_int_equal(a->output, b->output);
        assert_int_equal(a->memory_raise, b->memory_raise);
        assert_int_equal(a->tasks_raise, b->tasks_raise);
        assert_int_equal(a->cpu_percent_raise, b->cpu_percent_raise);
        assert_int_equal(a->wall_time_raise, b->wall_time_raise);
        assert_int_equal(a->unenforced, b->unenforced);
}

static void assert_limit_events_equal(const RunLimitEvents *a, const RunLimitEvents *b) {
        assert_int_equal(a->known, b->known);
        assert_int_equal(a->memory_max, b->memory_max);
        assert_int_equal(a->oom, b->oom);
        assert_int_equal(a->oom_kill, b->oom_kill);
        assert_int_equal(a->fork_refused, b->fork_refused);
        assert_int_equal(a->cpu_throttled, b->cpu_throttled);
        assert_int_equal(a->cpu_throttled_usec, b->cpu_throttled_usec);
}

static void assert_credentials_equal(const RunCredentials *a, const RunCredentials *b) {
        assert_strv_equal(a->files, b->files);
        assert_strv_equal(a->grants, b->grants);
        assert_int_equal(a->brokered_total, b->brokered_total);
        assert_int_equal(a->gone, b->gone);
        assert_int_equal(a->n_brokered, b->n_brokered);
        for (size_t i = 0; i < a->n_brokered; i++) {
                const BrokerOp *x = &a->brokered[i], *y = &b->brokered[i];

                assert_string_equal(x->id, y->id);
                assert_true(streq_ptr(x->grant, y->grant));
                assert_true(streq_ptr(x->method, y->method));
                assert_true(streq_ptr(x->host, y->host));
                assert_int_equal(x->port, y->port);
                assert_true(streq_ptr(x->path_prefix, y->path_prefix));
                assert_true(streq_ptr(x->verdict, y->verdict));
                assert_true(streq_ptr(x->reason, y->reason));
                assert_int_equal(x->status, y->status);
                assert_int_equal(x->request_bytes, y->request_bytes);
                assert_int_equal(x->response_bytes, y->response_bytes);
                assert_int_equal(x->started_at, y->started_at);
                assert_int_equal(x->duration, y->duration);
        }
}

static void assert_export_items_equal(const ExportItem *a, size_t na, const ExportItem *b, size_t nb) {
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++) {
                assert_true(streq_ptr(a[i].path, b[i].path));
                assert_true(streq_ptr(a[i].entry, b[i].entry));
                assert_true(streq_ptr(a[i].id, b[i].id));
                assert_true(streq_ptr(a[i].type, b[i].type));
                assert_true(streq_ptr(a[i].reason, b[i].reason));
                assert_int_equal(!a[i].notes, !b[i].notes);
                assert_strv_equal(a[i].notes, b[i].notes);
                assert_int_equal(a[i].size, b[i].size);
                assert_string_equal(a[i].sha256, b[i].sha256);
                assert_int_equal(a[i].mode, b[i].mode);
        }
}

static void assert_exports_equal(const RunExport *a, const RunExport *b) {
        assert_true(streq_ptr(a->destination, b->destination));
        assert_int_equal(a->reviewed, b->reviewed);
        assert_int_equal(a->source_missing, b->source_missing);
        assert_true(streq_ptr(a->error, b->error));
        assert_export_items_equal(a->exported, a->n_exported, b->exported, b->n_exported);
        assert_export_items_equal(a->held, a->n_held, b->held, b->n_held);
        assert_export_items_equal(a->refused, a->n_refused, b->refused, b->n_refused);
        assert_int_equal(a->exported_bytes, b->exported_bytes);
}

static void assert_images_equal(const RunRecordImage *a, const RunRecordImage *b) {
        assert_true(streq_ptr(a->name, b->name));
        assert_string_equal(a->digest, b->digest);
        assert_int_equal(a->verity, b->verity);
}

/* A section that one record has must be in the other, equal member by member. */
#define assert_sections_equal(a, b, member, assert_equal)             \
        do {                                                          \
                assert_int_equal(!(a)->member, !(b)->member);         \
                if ((a)->member)                                      \
                        assert_equal((a)->member, (b)->member);       \
        } while (0)

static void assert_records_equal(const RunRecord *a, const RunRecord *b) {
        assert_string_equal(a->run_id, b->run_id);
        assert_true(streq_ptr(a->unit, b->unit));
        assert_string_equal(a->tenant, b->tenant);
        assert_true(streq_ptr(a->profile, b->profile));
        assert_true(streq_ptr(a->policy_digest, b->policy_digest));
        assert_true(streq_ptr(a->profile_digest, b->profile_digest));
        assert_int_equal(a->finished, b->finished);
        assert_int_equal(a->pooled, b->pooled);
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
        assert_int_equal(a->user_gone, b->user_gone);
        assert_int_equal(a->mounts_gone, b->mounts_gone);
        assert_int_equal(a->has_workspace, b->has_workspace);
        assert_int_equal(a->workspace_returned, b->workspace_returned);
        assert_true(streq_ptr(a->error, b->error));
        assert_int_equal(a->output_bytes, b->output_bytes);
        assert_int_equal(a->output_truncated, b->output_truncated);
        assert_int_equal(a->disk_max, b->disk_max);
        assert_int_equal(a->disk_used, b->disk_used);
        assert_int_equal(a->disk_full, b->disk_full);
        assert_int_equal(a->space_gone, b->space_gone);
        assert_int_equal(a->landlock_abi, b->landlock_abi);
        assert_int_equal(a->n_denied, b->n_denied);
        for (size_t i = 0; i < a->n_denied; i++) {
                assert_string_equal(a->denied[i].name, b->denied[i].name);
                assert_int_equal(a->denied[i].count, b->denied[i].count);
        }
        assert_sections_equal(a, b, network, assert_networks_equal);
        assert_sections_equal(a, b, sandbox, assert_sandboxes_equal);
        assert_limits_equal(&a->limits, &b->limits);
        assert_limit_events_equal(&a->limit_events, &b->limit_events);
        assert_int_equal(a->capture.enabled_at, b->capture.enabled_at);
        assert_int_equal(a->capture.until, b->capture.until);
        assert_string_equal(a->capture.by_tenant, b->capture.by_tenant);
        assert_int_equal(a->capture.bytes, b->capture.bytes);
        assert_int_equal(a->capture.ended_at, b->capture.ended_at);
        assert_int_equal(a->capture.deleted_at, b->capture.deleted_at);
        assert_sections_equal(a, b, credentials, assert_credentials_equal);
        assert_sections_equal(a, b, export, assert_exports_equal);
        assert_sections_equal(a, b, image, assert_images_equal);
}

/* JSON helpers for checking what was written. */
static json_object *lookup(json_object *o, const char *path) {
        char buf[128], *save = NULL;

        assert_true(strlen(path) < sizeof(buf));
        strcpy(buf, path);
        for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
                char *bracket = strchr(k, '[');
                json_object *v;

                if (bracket)
                        *bracket = 0;
                if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, k, &v))
                        fail_msg("%s: missing", path);
                o = v;
                /* "key[N]": element N of the array */
                if (bracket) {
                        size_t i = strtoul(bracket + 1, NULL, 10);

                        if (!json_object_is_type(o, json_type_array) || i >= json_object_array_length(o))
                                fail_msg("%s: missing", path);
                        o = json_object_array_get_idx(o, i);
                }
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
        assert_json_string(o, "start", "cold");
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
        /* no limits recorded here (test-observe.c has them), limit events not measured: null */
        assert_false(json_object_object_get_ex(o, "limits", NULL));
        assert_json_null(o, "limit_events");
        /* capture never enabled: null; the Landlock ABI not reported: null */
        assert_json_null(o, "capture");
        assert_json_null(o, "landlock_abi");
        /* the kernel tier: no runsc_version */
        assert_json_string(o, "isolation", "kernel");
        assert_false(json_object_object_get_ex(o, "runsc_version", NULL));
        assert_int_equal(json_object_object_length(o), 20);
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

/* The interim record written at Exited: the outcome set, state "exited", its cleanup not complete and
 * without "remaining" (not final); read back as such; "finished" wins over it. */
static void test_json_exited(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record(), *back = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL;
        json_object *o;

        r->finished = false;
        r->exited = true;
        r->unit_gone = r->cgroup_gone = false;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "state", "exited");
        assert_json_string(o, "stop_reason", "exit-code");
        assert_json_bool(o, "cleanup.completed", false);
        assert_false(json_object_object_get_ex(json_object_object_get(o, "cleanup"), "remaining", NULL));
        json_object_put(o);
        assert_int_equal(run_record_from_json(text, &back, &error), 0);
        assert_true(back->exited);
        assert_false(back->finished);
        assert_int_equal(back->stop_reason, STOP_EXIT_CODE);
        assert_int_equal(back->exit_code, 3);
        assert_int_equal(back->ended_at, T_END);
        assert_false(run_record_cleanup_completed(back));

        free(text);
        text = NULL;
        r->finished = true;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_json_string(o, "state", "finished");
        json_object_put(o);
}

/* profile_digest: written when known, read back, optional in records of earlier versions, a string
 * when present. */
#define ARGV(...) ((char *const[]) { __VA_ARGS__, NULL })

/* Lines of the broker's operations log: a request done, and one refused before its URL was understood. */
static const char broker_done[] =
        "{\"id\":\"0123456789abcdef\",\"grant\":\"repo-read\",\"method\":\"GET\",\"host\":\"git.example\","
        "\"port\":443,\"path_prefix\":\"/api/repos/acme/\",\"verdict\":\"done\",\"reason\":null,\"status\":200,"
        "\"request_bytes\":0,\"response_bytes\":512,\"start_usec\":1796000000000000,\"duration_usec\":2500}";
static const char broker_refused[] =
        "{\"id\":\"fedcba9876543210\",\"grant\":null,\"method\":null,\"host\":null,\"port\":null,"
        "\"path_prefix\":null,\"verdict\":\"refused\",\"reason\":\"no-grant\",\"status\":null,"
        "\"request_bytes\":0,\"response_bytes\":0,\"start_usec\":1796000000000001,\"duration_usec\":10}";

/* The credentials section: names, the broker's operations (read from its log's lines), credentials_gone
 * part of the cleanup; written and read back; absent for a run without any. */
static void test_credentials(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record(), *back = NULL, *plain = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL, *text2 = NULL;
        static const char *const malformed[] = {
                "not json",
                "{\"id\":\"0123\",\"verdict\":\"done\"}",
                /* done without a status; refused without a reason; a host without a port */
                "{\"id\":\"0123456789abcdef\",\"grant\":null,\"method\":null,\"host\":null,\"port\":null,\"path_prefix\":null,"
                "\"verdict\":\"done\",\"reason\":null,\"status\":null,\"request_bytes\":0,\"response_bytes\":0,"
                "\"start_usec\":1,\"duration_usec\":1}",
                "{\"id\":\"0123456789abcdef\",\"grant\":null,\"method\":null,\"host\":null,\"port\":null,\"path_prefix\":null,"
                "\"verdict\":\"refused\",\"reason\":null,\"status\":null,\"request_bytes\":0,\"response_bytes\":0,"
                "\"start_usec\":1,\"duration_usec\":1}",
                "{\"id\":\"0123456789abcdef\",\"grant\":null,\"method\":null,\"host\":\"h\",\"port\":null,\"path_prefix\":null,"
                "\"verdict\":\"refused\",\"reason\":\"url\",\"status\":null,\"request_bytes\":0,\"response_bytes\":0,"
                "\"start_usec\":1,\"duration_usec\":1}",
                /* a start the record could not write (after the year 9999) */
                "{\"id\":\"0123456789abcdef\",\"grant\":null,\"method\":null,\"host\":null,\"port\":null,\"path_prefix\":null,"
                "\"verdict\":\"refused\",\"reason\":\"url\",\"status\":null,\"request_bytes\":0,\"response_bytes\":0,"
                "\"start_usec\":253402300800000000,\"duration_usec\":1}",
                /* a path prefix with white space (a request's text smuggled in) */
                "{\"id\":\"0123456789abcdef\",\"grant\":\"g\",\"method\":\"GET\",\"host\":\"h\",\"port\":1,"
                "\"path_prefix\":\"/a b\",\"verdict\":\"done\",\"reason\":null,\"status\":200,\"request_bytes\":0,"
                "\"response_bytes\":0,\"start_usec\":1,\"duration_usec\":1}",
        };
        json_object *o;

        assert_int_equal(run_record_add_brokered(r, broker_done), -ENOENT); /* no section yet */
        assert_int_equal(run_record_credentials_init(r, ARGV("tok", "inline"), ARGV("repo-read")), 0);
        assert_int_equal(run_record_add_brokered(r, broker_done), 1);
        assert_int_equal(run_record_add_brokered(r, broker_refused), 1);
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++)
                if (run_record_add_brokered(r, malformed[i]) != -EBADMSG)
                        fail_msg("malformed line %zu accepted", i);
        assert_int_equal(r->credentials->n_brokered, 2);
        r->unit_gone = r->cgroup_gone = r->user_gone = r->mounts_gone = true;
        assert_true(!run_record_cleanup_completed(r)); /* credentials not gone yet */

        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "credentials.files[0]", "inline"); /* sorted */
        assert_json_string(o, "credentials.files[1]", "tok");
        assert_json_string(o, "credentials.grants[0]", "repo-read");
        assert_json_string(o, "credentials.brokered[0].id", "0123456789abcdef");
        assert_json_string(o, "credentials.brokered[0].path_prefix", "/api/repos/acme/");
        assert_json_int(o, "credentials.brokered[0].status", 200);
        assert_json_int(o, "credentials.brokered[0].port", 443);
        assert_json_null(o, "credentials.brokered[0].reason");
        assert_json_string(o, "credentials.brokered[1].reason", "no-grant");
        assert_json_null(o, "credentials.brokered[1].host");
        assert_json_int(o, "credentials.brokered_total", 2);
        assert_json_bool(o, "cleanup.credentials_gone", false);
        assert_json_string(o, "cleanup.remaining[0]", "credentials");
        json_object_put(o);

        assert_int_equal(run_record_from_json(text, &back, &error), 0);
        assert_non_null(back->credentials);
        assert_int_equal(back->credentials->n_brokered, 2);
        assert_int_equal(back->credentials->brokered[0].started_at, 1796000000000000ULL);
        assert_int_equal(back->credentials->brokered[1].status, -1);
        assert_false(back->credentials->gone);
        back->credentials->gone = true;
        assert_true(run_record_cleanup_completed(back));
        assert_int_equal(run_record_to_json(back, &text2), 0);
        o = json_tokener_parse(text2);
        assert_non_null(o);
        assert_json_bool(o, "cleanup.credentials_gone", true);
        assert_json_bool(o, "cleanup.completed", true);
        json_object_put(o);

        /* no section for a run without credentials, and none read back */
        text = mfree(text);
        plain = finished_record();
        assert_int_equal(run_record_to_json(plain, &text), 0);
        assert_null(strstr(text, "credentials"));
}

static void test_profile_digest(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = running_record(), *back = NULL, *old = NULL, *bad = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL, *bad_text = NULL;
        json_object *o;

        r->profile_digest = strdup(DIGEST);
        assert_non_null(r->profile_digest);
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "profile_digest", DIGEST);
        json_object_put(o);
        assert_int_equal(run_record_from_json(text, &back, &error), 0);
        assert_string_equal(back->profile_digest, DIGEST);

        r->profile_digest = mfree(r->profile_digest);
        text = mfree(text);
        assert_int_equal(run_record_to_json(r, &text), 0);
        assert_null(strstr(text, "profile_digest"));
        assert_int_equal(run_record_from_json(text, &old, &error), 0);
        assert_null(old->profile_digest);

        o = json_tokener_parse(text);
        json_object_object_add(o, "profile_digest", json_object_new_int(7));
        bad_text = strdup(json_object_to_json_string(o));
        json_object_put(o);
        assert_true(run_record_from_json(bad_text, &bad, &error) < 0);
        assert_string_equal(error, "profile_digest: expected a string");
}

/* start: "cold" or "pool", read back; absent in records of earlier versions (cold); anything else refused. */
static void test_start(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record(), *back = NULL, *old = NULL, *bad = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL, *old_text = NULL, *bad_text = NULL;
        json_object *o;

        r->pooled = true;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "start", "pool");
        assert_int_equal(run_record_from_json(text, &back, &error), 0);
        assert_true(back->pooled);

        json_object_object_del(o, "start");
        old_text = strdup(json_object_to_json_string(o));
        assert_int_equal(run_record_from_json(old_text, &old, &error), 0);
        assert_false(old->pooled);

        json_object_object_add(o, "start", json_object_new_string("warm"));
        bad_text = strdup(json_object_to_json_string(o));
        json_object_put(o);
        assert_true(run_record_from_json(bad_text, &bad, &error) < 0);
        assert_string_equal(error, "start: expected \"cold\" or \"pool\"");
}

/* A sandbox's record: its section and its execs survive a round trip; a running exec has no duration;
 * malformed sections are refused naming the key. */
#define OP1 "0123456789abcdef0123456789abcdef"
#define OP2 "fedcba9876543210fedcba9876543210"
static void test_sandbox_section(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = running_record(), *back = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL;
        RunExec e1 = { .id = OP1, .started_at = T_START, .duration = 1500, .result = EXEC_EXITED, .exit_code = 3,
                       .output_bytes = 42, .denied_syscalls = 1 };
        RunExec e2 = { .id = OP2, .started_at = T_START, .result = EXEC_RUNNING, .exit_code = -1 };
        json_object *o;

        assert_int_equal(run_record_sandbox_init(r, "bad name", 0, false), -EINVAL);
        assert_int_equal(run_record_sandbox_put_exec(r, &e1), -ENOENT);
        assert_int_equal(run_record_sandbox_init(r, "build-1", 600 * USEC_PER_SEC, true), 0);
        assert_int_equal(run_record_sandbox_put_exec(r, &e1), 1);
        assert_int_equal(run_record_sandbox_put_exec(r, &e2), 1);
        RunExec bad = e1;
        strcpy(bad.id, "xyz");
        assert_int_equal(run_record_sandbox_put_exec(r, &bad), -EINVAL);
        assert_int_equal(r->sandbox->execs_total, 2);

        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "sandbox.name", "build-1");
        assert_json_int(o, "sandbox.idle_timeout_usec", 600000000);
        assert_json_bool(o, "sandbox.detach", true);
        assert_json_int(o, "sandbox.execs_total", 2);
        json_object *execs = lookup(o, "sandbox.execs");
        assert_int_equal(json_object_array_length(execs), 2);
        json_object *x = json_object_array_get_idx(execs, 0);
        assert_json_string(x, "id", OP1);
        assert_json_string(x, "result", "exited");
        assert_json_int(x, "exit_code", 3);
        assert_json_null(x, "exit_signal");
        assert_json_int(x, "duration_usec", 1500);
        assert_json_int(x, "output_bytes", 42);
        x = json_object_array_get_idx(execs, 1);
        assert_json_string(x, "result", "running");
        assert_json_null(x, "duration_usec");
        assert_json_null(x, "exit_code");
        /* never a command line */
        assert_null(strstr(text, "argv"));
        json_object_put(o);

        assert_int_equal(run_record_from_json(text, &back, &error), 0);
        assert_non_null(back->sandbox);
        assert_string_equal(back->sandbox->name, "build-1");
        assert_int_equal(back->sandbox->idle_timeout, 600 * USEC_PER_SEC);
        assert_true(back->sandbox->detach);
        assert_int_equal(back->sandbox->n_execs, 2);
        assert_int_equal(back->sandbox->execs[0].exit_code, 3);
        assert_int_equal(back->sandbox->execs[0].duration, 1500);
        assert_int_equal(back->sandbox->execs[1].result, EXEC_RUNNING);

        /* an update of a listed exec replaces it, and is not counted again */
        e2.result = EXEC_SIGNAL;
        e2.exit_signal = 9;
        assert_int_equal(run_record_sandbox_put_exec(r, &e2), 1);
        assert_int_equal(r->sandbox->execs_total, 2);
        assert_int_equal(run_record_sandbox_find_exec(r, OP2)->exit_signal, 9);

        static const struct {
                const char *key, *value, *message;
        } bad_cases[] = {
                { "name", "\"a b\"", "sandbox.name: not a sandbox name" },
                { "detach", "1", "sandbox.detach: expected a boolean" },
                { "execs_total", "1", "sandbox.execs_total: fewer than the execs listed" },
                { "execs", "{}", "sandbox.execs: expected an array" },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
                _cleanup_(run_record_freep) RunRecord *b = NULL;
                _cleanup_free_ char *t = NULL, *err = NULL;
                json_object *doc = json_tokener_parse(text), *sb = lookup(doc, "sandbox");

                json_object_object_add(sb, bad_cases[i].key, json_tokener_parse(bad_cases[i].value));
                t = strdup(json_object_to_json_string(doc));
                json_object_put(doc);
                assert_true(run_record_from_json(t, &b, &err) < 0);
                assert_string_equal(err, bad_cases[i].message);
        }
        {
                _cleanup_(run_record_freep) RunRecord *b = NULL;
                _cleanup_free_ char *t = NULL, *err = NULL;
                json_object *doc = json_tokener_parse(text);
                json_object *x0 = json_object_array_get_idx(lookup(doc, "sandbox.execs"), 0);

                json_object_object_add(x0, "result", json_object_new_string("vanished"));
                t = strdup(json_object_to_json_string(doc));
                json_object_put(doc);
                assert_true(run_record_from_json(t, &b, &err) < 0);
                assert_string_equal(err, "sandbox.execs[0].result: unknown value 'vanished'");
        }
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

/* The run's dynamic user, its mounts and its workspace's hand-over back: measured, listed when they
 * remain; a record of an earlier version has none of them (its user and mounts were not measured: taken
 * as gone). */
static void test_to_json_user_workspace(void **state) {
        static const struct {
                bool user_gone, mounts_gone, has_workspace, returned, completed;
                const char *remaining;
        } table[] = {
                { true, true, false, false, true, NULL },
                { true, true, true, true, true, NULL },
                { false, true, false, false, false, "[ \"user\" ]" },
                { true, false, false, false, false, "[ \"mounts\" ]" },
                { true, true, true, false, false, "[ \"workspace\" ]" },
                { false, false, true, false, false, "[ \"user\", \"mounts\", \"workspace\" ]" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(run_record_freep) RunRecord *r = finished_record(), *back = NULL;
                _cleanup_free_ char *text = NULL, *err = NULL;
                json_object *o, *rem;

                r->user_gone = table[i].user_gone;
                r->mounts_gone = table[i].mounts_gone;
                r->has_workspace = table[i].has_workspace;
                r->workspace_returned = table[i].returned;
                assert_int_equal(run_record_to_json(r, &text), 0);
                o = json_tokener_parse(text);
                assert_non_null(o);
                assert_json_bool(o, "cleanup.user_gone", table[i].user_gone);
                assert_json_bool(o, "cleanup.mounts_gone", table[i].mounts_gone);
                if (table[i].has_workspace)
                        assert_json_bool(o, "cleanup.workspace_returned", table[i].returned);
                else
                        assert_false(json_object_object_get_ex(lookup(o, "cleanup"), "workspace_returned", NULL));
                assert_json_bool(o, "cleanup.completed", table[i].completed);
                rem = NULL;
                (void) json_object_object_get_ex(lookup(o, "cleanup"), "remaining", &rem);
                if (table[i].remaining)
                        assert_string_equal(json_object_to_json_string_ext(rem, JSON_C_TO_STRING_SPACED),
                                            table[i].remaining);
                else
                        assert_null(rem);
                json_object_put(o);
                assert_int_equal(run_record_from_json(text, &back, &err), 0);
                assert_int_equal(back->user_gone, r->user_gone);
                assert_int_equal(back->mounts_gone, r->mounts_gone);
                assert_int_equal(back->has_workspace, r->has_workspace);
                assert_int_equal(back->workspace_returned, r->workspace_returned);
        }
}

/* The run's space: its "disk" figures, and whether it is gone, which cleanup.completed needs. */
static void test_to_json_disk(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *text = NULL, *error = NULL;
        json_object *o, *v;

        r->unit_gone = r->cgroup_gone = true;
        /* no space (a record of an earlier version): no "disk", nothing more to clean up */
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_false(json_object_object_get_ex(o, "disk", NULL));
        assert_false(json_object_object_get_ex(lookup(o, "cleanup"), "space_gone", NULL));
        assert_json_bool(o, "cleanup.completed", true);
        json_object_put(o);
        text = mfree(text);

        r->disk_max = 64ULL << 20;
        r->disk_used = 64ULL << 20;
        r->disk_full = true;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_json_int(o, "disk.max_bytes", 64LL << 20);
        assert_json_int(o, "disk.used_bytes", 64LL << 20);
        assert_json_bool(o, "disk.full", true);
        assert_json_bool(o, "cleanup.space_gone", false);
        assert_json_bool(o, "cleanup.completed", false);
        json_object_put(o);
        text = mfree(text);

        /* the Landlock ABI: null until the helper reports it, 0 when it ran without */
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_true(json_object_object_get_ex(o, "landlock_abi", &v) && v == NULL);
        json_object_put(o);
        text = mfree(text);
        r->landlock_abi = 0;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_json_int(o, "landlock_abi", 0);
        json_object_put(o);
        text = mfree(text);

        r->space_gone = true;
        r->disk_used = UINT64_MAX;
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_json_null(o, "disk.used_bytes");
        assert_json_bool(o, "cleanup.completed", true);
        json_object_put(o);

        /* a "disk" without cleanup.space_gone is refused */
        {
                _cleanup_(run_record_freep) RunRecord *back = NULL;
                char *p = strstr(text, "\"space_gone\"");

                assert_non_null(p);
                memcpy(p, "\"space_gonX\"", 12);
                assert_int_equal(run_record_from_json(text, &back, &error), -EBADMSG);
                assert_string_equal(error, "cleanup.space_gone: expected a boolean");
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

/* ---- network ---- */

static void round_trip(const RunRecord *r);

#define T_NET (T_START + 5 * USEC_PER_SEC)

static NetAddress addr4(const char *s) {
        NetAddress a = { .family = AF_INET };

        assert_int_equal(inet_pton(AF_INET, s, a.bytes), 1);
        return a;
}

static NetAddress addr6(const char *s) {
        NetAddress a = { .family = AF_INET6 };

        assert_int_equal(inet_pton(AF_INET6, s, a.bytes), 1);
        return a;
}

static int add_event(RunRecord *r, NetAddress a, uint16_t port, uint8_t proto, bool allowed, int reason, usec_t when,
                     const char *name) {
        return run_record_net_add_event(r, a.family, a.bytes, port, proto, allowed, reason, when, name);
}

/* A run of profile "coding" that looked up two names, used one, and tried three things it may not. */
static void add_network(RunRecord *r) {
        NetAddress pkg[] = { addr4("203.0.113.10"), addr6("2001:db8::10") }, rebind[] = { addr4("10.1.2.3") };

        assert_int_equal(run_record_net_init(r, NETWORK_ALLOWLIST), 0);
        assert_int_equal(run_record_net_add_name(r, "pkg.example", NAME_ALLOWED, pkg, 2, rebind, 1), 1);
        assert_int_equal(run_record_net_add_name(r, "evil.example", NAME_REFUSED, NULL, 0, NULL, 0), 1);
        assert_int_equal(add_event(r, pkg[0], 443, IPPROTO_TCP, true, 0, T_NET, NULL), 1);
        assert_int_equal(add_event(r, pkg[0], 443, IPPROTO_TCP, true, 0, T_NET + 7, NULL), 1);
        assert_int_equal(add_event(r, pkg[1], 443, IPPROTO_UDP, false, EGRESS_REASON_PORT, T_NET + 1, NULL), 1);
        assert_int_equal(add_event(r, addr4("10.0.0.5"), 22, IPPROTO_TCP, false, EGRESS_REASON_PRIVATE, T_NET + 2, NULL), 1);
        assert_int_equal(run_record_net_add_event(r, AF_PACKET, NULL, SOCK_RAW, 0, false, EGRESS_REASON_SOCKET,
                                                  T_NET + 3, NULL), 1);
        r->network->events_lost = 2;
        r->network->entries_removed = true;
}

static void test_net_add_event(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        NetAddress a = addr4("192.0.2.1"), b = addr6("2001:db8::1"), pkg = addr4("203.0.113.10");
        const NetDestinationStat *d;

        /* no section: nothing to add to */
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, true, 0, T_NET, NULL), -ENOENT);
        assert_int_equal(run_record_net_init(r, _NETWORK_MODE_INVALID), -EINVAL);
        assert_null(r->network);
        assert_int_equal(run_record_net_init(r, NETWORK_PUBLIC), 0);
        assert_int_equal(r->network->mode, NETWORK_PUBLIC);

        /* merged by destination, protocol, verdict and reason; first and last whatever the order */
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, true, 0, T_NET + 5, NULL), 1);
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, true, EGRESS_REASON_PRIVATE, T_NET + 9, NULL), 1);
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, true, 0, T_NET + 1, NULL), 1);
        assert_int_equal(add_event(r, a, 443, IPPROTO_UDP, true, 0, T_NET, NULL), 1);
        assert_int_equal(add_event(r, a, 80, IPPROTO_TCP, true, 0, T_NET, NULL), 1);
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, false, EGRESS_REASON_EXPIRED, T_NET, NULL), 1);
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, false, EGRESS_REASON_PORT, T_NET, NULL), 1);
        assert_int_equal(add_event(r, b, 443, IPPROTO_TCP, true, 0, T_NET, NULL), 1);
        assert_int_equal(r->network->n_destinations, 6);
        d = &r->network->destinations[0];
        assert_int_equal(d->count, 3);
        assert_int_equal(d->reason, -1); /* ignored when allowed */
        assert_int_equal(d->first, T_NET + 1);
        assert_int_equal(d->last, T_NET + 9);
        assert_null(d->name);
        assert_int_equal(r->network->denied, 2);
        /* an IPv4 address is 4 bytes: what follows them in the caller's buffer does not matter */
        {
                uint8_t raw[16] = { 192, 0, 2, 1, 0xff, 0xff };

                assert_int_equal(run_record_net_add_event(r, AF_INET, raw, 443, IPPROTO_TCP, true, 0, T_NET, NULL), 1);
                assert_int_equal(r->network->destinations[0].count, 4);
        }

        /* the name: from the caller, else from the allowed names' answers (the latest), else none */
        assert_int_equal(run_record_net_add_name(r, "old.example", NAME_ALLOWED, &pkg, 1, NULL, 0), 1);
        assert_int_equal(run_record_net_add_name(r, "pkg.example", NAME_ALLOWED, &pkg, 1, NULL, 0), 1);
        assert_int_equal(run_record_net_add_name(r, "evil.example", NAME_REFUSED, NULL, 0, &pkg, 1), 1);
        assert_string_equal(run_record_net_name_of(r, &pkg), "pkg.example");
        assert_null(run_record_net_name_of(r, &a));
        assert_int_equal(add_event(r, pkg, 443, IPPROTO_TCP, false, EGRESS_REASON_EXPIRED, T_NET, NULL), 1);
        assert_string_equal(r->network->destinations[6].name, "pkg.example");
        assert_int_equal(add_event(r, a, 8443, IPPROTO_TCP, true, 0, T_NET, "Named.Example."), 1);
        assert_string_equal(r->network->destinations[7].name, "named.example");
        /* an entry without a name gets the first one known later */
        assert_int_equal(add_event(r, b, 443, IPPROTO_TCP, true, 0, T_NET, "late.example"), 1);
        assert_string_equal(r->network->destinations[5].name, "late.example");
        assert_int_equal(add_event(r, b, 443, IPPROTO_TCP, true, 0, T_NET, "later.example"), 1);
        assert_string_equal(r->network->destinations[5].name, "late.example");

        /* a socket denied at creation: the family and type, no address */
        assert_int_equal(run_record_net_add_event(r, AF_INET, NULL, SOCK_RAW, IPPROTO_ICMP, false, EGRESS_REASON_SOCKET,
                                                  T_NET, NULL), 1);
        d = &r->network->destinations[8];
        assert_int_equal(d->address.family, AF_INET);
        assert_int_equal(d->port, SOCK_RAW);
        assert_null(d->name);

        /* refused, and nothing counted */
        assert_int_equal(run_record_net_add_event(r, AF_UNIX, a.bytes, 1, IPPROTO_TCP, true, 0, T_NET, NULL),
                         -EAFNOSUPPORT);
        assert_int_equal(run_record_net_add_event(r, AF_INET, NULL, 1, IPPROTO_TCP, true, 0, T_NET, NULL), -EINVAL);
        assert_int_equal(add_event(r, a, 1, IPPROTO_TCP, false, _EGRESS_REASON_MAX, T_NET, NULL), -EINVAL);
        assert_int_equal(add_event(r, a, 1, IPPROTO_TCP, false, -1, T_NET, NULL), -EINVAL);
        assert_int_equal(add_event(r, a, 1, IPPROTO_TCP, true, 0, T_NET, "bad name"), -EINVAL);
        assert_int_equal(add_event(r, a, 1, IPPROTO_TCP, true, 0, T_NET, ""), -EINVAL);
        assert_int_equal(r->network->n_destinations, 9);
        assert_int_equal(r->network->denied, 4);
}

static void test_net_add_name(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        NetAddress many[RECORD_NET_NAME_ADDRESSES_MAX + 4], a = addr4("203.0.113.10"), bad = { .family = AF_UNIX };
        static const char *const invalid[] = {
                "", ".", "a..b", ".a", "a b", "a\nb", "a/b", "\xc3\xa9.example", "*.example", "a.b..",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example", /* a label of 65 */
        };
        char longname[RECORD_NET_NAME_MAX + 2];
        unsigned failures = 0;

        assert_int_equal(run_record_net_add_name(r, "x.example", NAME_ALLOWED, NULL, 0, NULL, 0), -ENOENT);
        assert_int_equal(run_record_net_init(r, NETWORK_ALLOWLIST), 0);
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                int k = run_record_net_add_name(r, invalid[i], NAME_REFUSED, NULL, 0, NULL, 0);

                check_row(failures, k == -EINVAL, "'%s' -> %d", invalid[i], k);
        }
        assert_int_equal(failures, 0);
        assert_int_equal(run_record_net_add_name(r, NULL, NAME_REFUSED, NULL, 0, NULL, 0), -EINVAL);
        /* 253 characters are a name, 254 are not */
        memset(longname, 'a', sizeof(longname));
        for (size_t i = 63; i < sizeof(longname); i += 64)
                longname[i] = '.';
        longname[RECORD_NET_NAME_MAX + 1] = 0;
        assert_int_equal(run_record_net_add_name(r, longname, NAME_REFUSED, NULL, 0, NULL, 0), -EINVAL);
        longname[RECORD_NET_NAME_MAX] = 0;
        assert_int_equal(run_record_net_add_name(r, longname, NAME_FAILED, NULL, 0, NULL, 0), 1);
        assert_int_equal(run_record_net_add_name(r, "x.example", _NAME_VERDICT_MAX, NULL, 0, NULL, 0), -EINVAL);
        assert_int_equal(run_record_net_add_name(r, "x.example", NAME_REFUSED, &a, 1, NULL, 0), -EINVAL);
        assert_int_equal(run_record_net_add_name(r, "x.example", NAME_ALLOWED, &bad, 1, NULL, 0), -EAFNOSUPPORT);
        assert_int_equal(run_record_net_add_name(r, "x.example", NAME_ALLOWED, NULL, 0, &bad, 1), -EAFNOSUPPORT);
        assert_int_equal(r->network->n_names, 1);
        assert_int_equal(r->network->dns_refused, 0);

        /* one entry per name and verdict; case and a final dot do not matter; refusals are counted */
        assert_int_equal(run_record_net_add_name(r, "Evil.Example.", NAME_REFUSED, NULL, 0, NULL, 0), 1);
        assert_int_equal(run_record_net_add_name(r, "evil.example", NAME_REFUSED, NULL, 0, NULL, 0), 1);
        assert_int_equal(run_record_net_add_name(r, "evil.example", NAME_FAILED, NULL, 0, NULL, 0), 1);
        assert_int_equal(r->network->n_names, 3);
        assert_string_equal(r->network->names[1].name, "evil.example");
        assert_int_equal(r->network->names[1].count, 2);
        assert_int_equal(r->network->dns_refused, 2);

        /* the answers: a union, each once, at most RECORD_NET_NAME_ADDRESSES_MAX */
        for (size_t i = 0; i < ELEMENTSOF(many); i++) {
                many[i] = (NetAddress) { .family = AF_INET6 };
                many[i].bytes[0] = 0x20;
                many[i].bytes[15] = (uint8_t) i;
        }
        assert_int_equal(run_record_net_add_name(r, "cdn.example", NAME_ALLOWED, many, 3, many, 1), 1);
        assert_int_equal(run_record_net_add_name(r, "cdn.example", NAME_ALLOWED, many + 1, 3, many, 2), 1);
        assert_int_equal(r->network->names[3].n_addresses, 4);
        assert_int_equal(r->network->names[3].n_blocked, 2);
        assert_int_equal(r->network->names[3].count, 2);
        assert_int_equal(run_record_net_add_name(r, "cdn.example", NAME_ALLOWED, many, ELEMENTSOF(many), NULL, 0), 1);
        assert_int_equal(r->network->names[3].n_addresses, RECORD_NET_NAME_ADDRESSES_MAX);
        assert_memory_equal(&r->network->names[3].addresses[RECORD_NET_NAME_ADDRESSES_MAX - 1],
                            &many[RECORD_NET_NAME_ADDRESSES_MAX - 1], sizeof(NetAddress));

        /* answers one by one, as the resolver gets them, then the lookup */
        assert_int_equal(run_record_net_add_name_address(r, "one.example", &a, false), 1);
        assert_int_equal(run_record_net_add_name_address(r, "one.example", &many[0], true), 1);
        assert_int_equal(run_record_net_add_name_address(r, "one.example", &a, false), 1);
        assert_int_equal(run_record_net_add_name_address(r, "one.example", NULL, false), -EINVAL);
        assert_int_equal(run_record_net_add_name_address(r, "one.example", &bad, true), -EAFNOSUPPORT);
        assert_int_equal(r->network->n_names, 5);
        assert_int_equal(r->network->names[4].count, 0);
        assert_int_equal(r->network->names[4].n_addresses, 1);
        assert_int_equal(r->network->names[4].n_blocked, 1);
        assert_string_equal(run_record_net_name_of(r, &a), "one.example");
        assert_int_equal(run_record_net_add_name(r, "one.example", NAME_ALLOWED, NULL, 0, NULL, 0), 1);
        assert_int_equal(r->network->n_names, 5);
        assert_int_equal(r->network->names[4].count, 1);
        assert_int_equal(r->network->dns_refused, 2);
}

/* Past the caps, calls and lookups are counted, never listed. */
static void test_net_caps(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        NetAddress a = addr6("2001:db8::");
        char name[32];

        assert_int_equal(run_record_net_init(r, NETWORK_PUBLIC), 0);
        for (int i = 0; i < RECORD_NET_DESTINATIONS_MAX; i++) {
                a.bytes[14] = (uint8_t) (i >> 8);
                a.bytes[15] = (uint8_t) i;
                assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, false, EGRESS_REASON_NOT_ALLOWED, T_NET, NULL), 1);
        }
        a.bytes[14] = 0xff;
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, false, EGRESS_REASON_NOT_ALLOWED, T_NET, NULL), 0);
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, true, 0, T_NET, NULL), 0);
        a.bytes[14] = 0;
        a.bytes[15] = 7; /* a listed one still counts */
        assert_int_equal(add_event(r, a, 443, IPPROTO_TCP, false, EGRESS_REASON_NOT_ALLOWED, T_NET, NULL), 1);
        assert_int_equal(r->network->n_destinations, RECORD_NET_DESTINATIONS_MAX);
        assert_int_equal(r->network->destinations[7].count, 2);
        assert_int_equal(r->network->destinations_overflow, 2);
        assert_int_equal(r->network->denied, RECORD_NET_DESTINATIONS_MAX + 2);

        for (int i = 0; i < RECORD_NET_NAMES_MAX; i++) {
                snprintf(name, sizeof(name), "n%d.example", i);
                assert_int_equal(run_record_net_add_name(r, name, NAME_REFUSED, NULL, 0, NULL, 0), 1);
        }
        assert_int_equal(run_record_net_add_name(r, "one-more.example", NAME_REFUSED, NULL, 0, NULL, 0), 0);
        assert_int_equal(run_record_net_add_name(r, "n3.example", NAME_REFUSED, NULL, 0, NULL, 0), 1);
        assert_int_equal(r->network->n_names, RECORD_NET_NAMES_MAX);
        assert_int_equal(r->network->names_overflow, 1);
        assert_int_equal(r->network->dns_refused, RECORD_NET_NAMES_MAX + 2);

        /* and the full record still goes to JSON and back */
        round_trip(r);
}

static void test_net_to_json(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *text = NULL;
        json_object *o, *dests, *names, *d;

        add_network(r);
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_json_string(o, "network.mode", "allowlist");
        assert_json_int(o, "network.denied", 3);
        assert_json_int(o, "network.dns_refused", 1);
        assert_json_int(o, "network.events_lost", 2);
        assert_json_int(o, "network.overflow.destinations", 0);
        assert_json_int(o, "network.overflow.names", 0);
        assert_json_bool(o, "network.entries_removed", true);
        assert_json_bool(o, "cleanup.completed", true);
        assert_int_equal(json_object_object_length(lookup(o, "network")), 8);
        assert_int_equal(json_object_object_length(o), 21);

        dests = lookup(o, "network.destinations");
        assert_int_equal(json_object_array_length(dests), 4);
        d = json_object_array_get_idx(dests, 0);
        assert_json_string(d, "address", "203.0.113.10");
        assert_json_int(d, "port", 443);
        assert_json_string(d, "protocol", "tcp");
        assert_json_string(d, "name", "pkg.example");
        assert_json_string(d, "verdict", "allowed");
        assert_false(json_object_object_get_ex(d, "reason", NULL));
        assert_false(json_object_object_get_ex(d, "socket", NULL));
        assert_json_int(d, "count", 2);
        assert_json_string(d, "first_at", "2026-11-29T10:30:05.123456Z");
        assert_json_string(d, "last_at", "2026-11-29T10:30:05.123463Z");
        assert_int_equal(json_object_object_length(d), 8);
        d = json_object_array_get_idx(dests, 1);
        assert_json_string(d, "address", "2001:db8::10");
        assert_json_string(d, "protocol", "udp");
        assert_json_string(d, "name", "pkg.example");
        assert_json_string(d, "verdict", "denied");
        assert_json_string(d, "reason", "port");
        d = json_object_array_get_idx(dests, 2);
        assert_json_string(d, "address", "10.0.0.5");
        assert_json_int(d, "port", 22);
        assert_json_string(d, "reason", "private");
        assert_false(json_object_object_get_ex(d, "name", NULL));
        d = json_object_array_get_idx(dests, 3);
        assert_json_null(d, "address");
        assert_json_null(d, "port");
        assert_json_string(d, "socket", "packet/raw");
        assert_json_string(d, "protocol", "0");
        assert_json_string(d, "reason", "socket");

        names = lookup(o, "network.names");
        assert_int_equal(json_object_array_length(names), 2);
        d = json_object_array_get_idx(names, 0);
        assert_json_string(d, "name", "pkg.example");
        assert_json_string(d, "verdict", "allowed");
        assert_json_int(d, "count", 1);
        assert_int_equal(json_object_array_length(lookup(d, "addresses")), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(lookup(d, "addresses"), 1)), "2001:db8::10");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(lookup(d, "blocked_addresses"), 0)),
                            "10.1.2.3");
        d = json_object_array_get_idx(names, 1);
        assert_json_string(d, "verdict", "refused");
        assert_int_equal(json_object_array_length(lookup(d, "addresses")), 0);
        json_object_put(o);

        /* the egress maps' cleanup is part of the run's */
        r->network->entries_removed = false;
        assert_false(run_record_cleanup_completed(r));
        text = mfree(text);
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = json_tokener_parse(text);
        assert_json_bool(o, "cleanup.completed", false);
        json_object_put(o);
        {
                RunNetwork *n = TAKE_PTR(r->network);

                assert_true(run_record_cleanup_completed(r));
                r->network = n;
        }
}

static void test_net_destination_format(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        char buf[NET_DESTINATION_TEXT_MAX];

        add_network(r);
        assert_string_equal(net_destination_format(&r->network->destinations[0], buf), "203.0.113.10:443/tcp");
        assert_string_equal(net_destination_format(&r->network->destinations[1], buf), "[2001:db8::10]:443/udp");
        assert_string_equal(net_destination_format(&r->network->destinations[2], buf), "10.0.0.5:22/tcp");
        assert_string_equal(net_destination_format(&r->network->destinations[3], buf), "packet/raw socket, protocol 0");
}

static void test_net_reason_strings(void **state) {
        static const char *const names[] = {
                "port", "no-policy", "not-allowed", "expired", "loopback", "link-local", "private", "shared",
                "multicast", "broadcast", "unspecified", "reserved", "embedded-ipv4", "socket",
        };

        assert_int_equal(ELEMENTSOF(names), _EGRESS_REASON_MAX);
        for (int i = 0; i < _EGRESS_REASON_MAX; i++) {
                assert_string_equal(egress_reason_to_string(i), names[i]);
                assert_int_equal(run_record_net_reason_from_string(names[i]), i);
        }
        assert_null(egress_reason_to_string(-1));
        assert_null(egress_reason_to_string(_EGRESS_REASON_MAX));
        assert_int_equal(run_record_net_reason_from_string("Private"), -EINVAL);
        assert_int_equal(run_record_net_reason_from_string(NULL), -EINVAL);
        assert_string_equal(name_verdict_to_string(NAME_FAILED), "failed");
        assert_int_equal(name_verdict_from_string("refused"), NAME_REFUSED);
        assert_int_equal(name_verdict_from_string("denied"), _NAME_VERDICT_INVALID);
        assert_null(name_verdict_to_string(_NAME_VERDICT_MAX));
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
        for (int v = 0; v < 13; v++) {
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
                        r->unit_gone = r->cgroup_gone = r->user_gone = r->mounts_gone = false;
                        r->has_workspace = true; /* its hand-over back failed */
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
                case 7: /* a network section with everything in it */
                        add_network(r);
                        break;
                case 8: /* an empty one */
                        assert_int_equal(run_record_net_init(r, NETWORK_NONE), 0);
                        r->network->entries_removed = true;
                        break;
                case 9: /* a space that was full, and is gone */
                        r->disk_max = 1ULL << 30;
                        r->disk_used = 1ULL << 30;
                        r->disk_full = true;
                        r->space_gone = true;
                        r->landlock_abi = 2; /* and the Landlock ABI the command ran under */
                        break;
                case 10: /* a space never measured (the run did not start), still there */
                        r->disk_max = 4096;
                        break;
                case 11: /* a capture that is still on */
                        r->capture = (RunCapture) { .enabled_at = 1764412200123456ULL, .until = 1764415800123456ULL,
                                                    .by_tenant = TENANT, .bytes = 0 };
                        break;
                case 12: /* one that ended, and whose file is deleted */
                        r->capture = (RunCapture) { .enabled_at = 1764412200123456ULL, .until = 1764412260000000ULL,
                                                    .by_tenant = TENANT, .bytes = UINT64_MAX - 1,
                                                    .ended_at = 1764412230000001ULL,
                                                    .deleted_at = 1764414000000000ULL };
                        break;
                }
                print_message("variant %d\n", v);
                round_trip(r);
        }
}

/* Appends an export item (its texts copied) to a list of the section. */
static void export_add_item(ExportItem **list, size_t *n, ExportItem item) {
        ExportItem *l = reallocarray(*list, *n + 1, sizeof(ExportItem));
        char **texts[] = { &item.path, &item.entry, &item.id, &item.type, &item.reason };

        assert_non_null(l);
        *list = l;
        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                if (*texts[i])
                        assert_non_null(*texts[i] = strdup(*texts[i]));
        if (item.notes)
                assert_non_null(item.notes = strv_copy(item.notes));
        l[(*n)++] = item;
}

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HEX_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define HEX_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define HEX_E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

/* A record with every section, and every member of each set to a value other than its default and other
 * than that of any other member (numbers, texts), so that a member lost, defaulted or swapped with another
 * on the way through the JSON shows. A bool has only two values: flip gives each the other one, and
 * neighbours differ. */
static RunRecord *full_record(bool flip) {
        RunRecord *r = finished_record();
        NetAddress pkg = addr4("203.0.113.20");
        RunExec exec = { .id = OP1, .started_at = T_START + 11, .duration = 12, .result = EXEC_OUTPUT_LIMIT,
                         .exit_code = 13, .exit_signal = 14, .output_bytes = 15, .output_truncated = !flip,
                         .denied_syscalls = 16 };
        static const char broker_failed[] =
                "{\"id\":\"00112233445566ff\",\"grant\":\"api-write\",\"method\":\"POST\",\"host\":\"api.example\","
                "\"port\":8443,\"path_prefix\":\"/v2/\",\"verdict\":\"failed\",\"reason\":\"upstream-tls\","
                "\"status\":502,\"request_bytes\":21,\"response_bytes\":22,\"start_usec\":1796000000000023,"
                "\"duration_usec\":24}";

        r->profile = mfree(r->profile);
        assert_non_null(r->profile = strdup("coding"));
        assert_non_null(r->profile_digest = strdup("sha256:" HEX_A));
        r->finished = !flip; /* running: a record read back while the run goes on */
        r->stop_reason = STOP_OUTPUT_LIMIT;
        r->exit_code = 31;
        r->exit_signal = 32;
        r->cpu_usec = 33;
        r->memory_peak = 34;
        r->tasks_peak = 35;
        r->output_bytes = 36;
        r->output_truncated = flip;
        assert_int_equal(run_record_add_denied(r, "ioctl", 37), 0);
        assert_int_equal(run_record_add_denied(r, "io_uring_setup", 38), 0);
        r->unit_gone = !flip;
        r->cgroup_gone = flip;
        r->user_gone = !flip;
        r->mounts_gone = flip;
        r->has_workspace = true; /* false: no workspace, nothing of it written */
        r->workspace_returned = !flip;
        r->disk_max = 39;
        r->disk_used = 40;
        r->disk_full = flip;
        r->space_gone = !flip;
        r->landlock_abi = 41;
        assert_non_null(r->error = strdup("refused: \"limit\" not in force"));
        r->pooled = !flip;

        add_network(r); /* every kind of destination and name */
        assert_int_equal(run_record_net_add_name(r, "down.example", NAME_FAILED, NULL, 0, &pkg, 1), 1);
        assert_int_equal(add_event(r, pkg, 8080, IPPROTO_SCTP, false, EGRESS_REASON_PORT, T_NET + 9, "down.example"),
                         1);
        r->network->denied = 42;
        r->network->dns_refused = 43;
        r->network->events_lost = 44;
        r->network->destinations_overflow = 45;
        r->network->names_overflow = 46;
        r->network->entries_removed = flip;

        assert_int_equal(run_record_sandbox_init(r, "build-7", 47, flip), 0);
        assert_int_equal(run_record_sandbox_put_exec(r, &exec), 1);
        r->sandbox->execs_total = 48;

        r->limits = (RunLimits) { .known = true, .memory = 51, .tasks = 52, .cpu_percent = 53, .wall_time = 54,
                                  .output = 55, .memory_raise = 56, .tasks_raise = 57, .cpu_percent_raise = 58,
                                  .wall_time_raise = 59, .unenforced = flip ? CEILING_TASKS : CEILING_MEMORY | CEILING_CPU };
        r->limit_events = (RunLimitEvents) { .known = true, .memory_max = 61, .oom = 62, .oom_kill = 63,
                                             .fork_refused = 64, .cpu_throttled = 65, .cpu_throttled_usec = 66 };
        r->capture = (RunCapture) { .enabled_at = T_START + 67, .until = T_START + 68,
                                    .by_tenant = "00112233445566778899aabbccddeeff", .bytes = 69,
                                    .ended_at = T_START + 70, .deleted_at = T_START + 71 };

        assert_int_equal(run_record_credentials_init(r, ARGV("tok", "inline"), ARGV("repo-read", "api-write")), 0);
        assert_int_equal(run_record_add_brokered(r, broker_done), 1);
        assert_int_equal(run_record_add_brokered(r, broker_refused), 1);
        assert_int_equal(run_record_add_brokered(r, broker_failed), 1);
        r->credentials->brokered_total = 72;
        r->credentials->gone = flip;

        /* a directory's name need not be UTF-8 or printable: approval opens it by this name */
        assert_int_equal(run_record_export_init(r, "/home/u/caf\xe9/\x1b[1mout"), 0);
        r->export->reviewed = flip;
        r->export->source_missing = !flip;
        assert_non_null(r->export->error = strdup("the review stopped: \"disk full\""));
        export_add_item(&r->export->exported, &r->export->n_exported,
                        (ExportItem) { .path = "report.pdf", .type = "application/pdf",
                                       .notes = (char **) ARGV("exec bits dropped", "approved"), .size = 73,
                                       .sha256 = HEX_C, .mode = 0640 });
        export_add_item(&r->export->held, &r->export->n_held,
                        (ExportItem) { .path = "page.html", .id = "h4", .type = "text/html",
                                       .reason = "active content: script in HTML", .notes = (char **) ARGV("held"),
                                       .size = 74, .sha256 = HEX_D, .mode = 0604 });
        /* an archive's entry: refused with what was known of it, or with nothing but its name */
        export_add_item(&r->export->refused, &r->export->n_refused,
                        (ExportItem) { .path = "src.tar", .entry = "bin/run", .type = "application/x-executable",
                                       .reason = "archive entry: executable", .notes = (char **) ARGV("entry"),
                                       .size = 75, .sha256 = HEX_E, .mode = 0755 });
        export_add_item(&r->export->refused, &r->export->n_refused,
                        (ExportItem) { .path = "src.tar", .entry = "../escape",
                                       .reason = "archive entry: climbs out (..)" });
        export_add_item(&r->export->refused, &r->export->n_refused,
                        (ExportItem) { .path = "link", .reason = "symlink" });
        r->export->exported_bytes = 73;

        assert_int_equal(run_record_image_init(r, "debian-12", HEX_B, !flip), 0);
        return r;
}

/* Every member of every section survives a write and a read, and reads back to the same text. */
static void test_round_trip_every_member(void **state) {
        for (int flip = 0; flip < 2; flip++) {
                _cleanup_(run_record_freep) RunRecord *r = full_record(flip);

                print_message("bools %s\n", flip ? "flipped" : "as built");
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
                { "state", "\"done\"", "state: expected \"running\", \"exited\" or \"finished\"" },
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
                { "cleanup.user_gone", "0", "cleanup.user_gone: expected a boolean" },
                { "cleanup.mounts_gone", "0", "cleanup.mounts_gone: expected a boolean" },
                { "cleanup.workspace_returned", "\"yes\"", "cleanup.workspace_returned: expected a boolean" },
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
                { "capture", NULL },
                { "capture", "null" },
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
        assert_true(r->user_gone); /* not measured then */
        assert_true(r->mounts_gone); /* likewise */
        assert_false(r->has_workspace);
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
        /* an older record: nothing denied, output not counted, no network section */
        r = run_record_free(r);
        assert_int_equal(run_record_from_json(base_json, &r, &error), 0);
        assert_null(r->network);
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

/* The record of add_network() with the member at a path like "network.destinations[3].port" replaced by
 * value (JSON text), or deleted (NULL). */
static char *net_mutate(const char *path, const char *value) {
        _cleanup_(run_record_freep) RunRecord *r = finished_record();
        _cleanup_free_ char *text = NULL;
        json_object *o, *parent;
        char buf[128], *key, *save = NULL, *next;
        char *ret;

        add_network(r);
        assert_int_equal(run_record_to_json(r, &text), 0);
        o = parent = json_tokener_parse(text);
        assert_non_null(o);
        assert_true(strlen(path) < sizeof(buf));
        strcpy(buf, path);
        key = strtok_r(buf, ".", &save);
        while ((next = strtok_r(NULL, ".", &save))) {
                char *bracket = strchr(key, '[');
                json_object *v;

                if (bracket)
                        *bracket = 0;
                assert_true(json_object_object_get_ex(parent, key, &v));
                if (bracket)
                        v = json_object_array_get_idx(v, strtoul(bracket + 1, NULL, 10));
                assert_non_null(v);
                parent = v;
                key = next;
        }
        if (value) {
                json_object *v = json_tokener_parse(value);

                if (!v && !streq(value, "null"))
                        fail_msg("bad test value %s", value);
                assert_int_equal(json_object_object_add(parent, key, v), 0);
        } else
                json_object_object_del(parent, key);
        ret = strdup(json_object_to_json_string(o));
        assert_non_null(ret);
        json_object_put(o);
        return ret;
}

static void test_net_from_json_refused(void **state) {
#define DEL NULL
        static const struct {
                const char *path;
                const char *value; /* JSON text, or DEL */
                const char *error;
        } table[] = {
                { "network", "null", "network: expected an object" },
                { "network", "[]", "network: expected an object" },
                { "network.mode", DEL, "network.mode: missing" },
                { "network.mode", "1", "network.mode: expected a network mode" },
                { "network.mode", "\"open\"", "network.mode: unknown value 'open'" },
                { "network.destinations", DEL, "network.destinations: missing" },
                { "network.destinations", "{}", "network.destinations: expected an array" },
                { "network.destinations", "[1]", "network.destinations[0]: expected an object" },
                { "network.destinations[0].address", DEL, "network.destinations[0].address: missing" },
                { "network.destinations[0].address", "\"pkg.example\"",
                  "network.destinations[0].address: expected an IPv4 or IPv6 address" },
                { "network.destinations[0].address", "\"203.0.113.256\"",
                  "network.destinations[0].address: expected an IPv4 or IPv6 address" },
                { "network.destinations[0].address", "null",
                  "network.destinations[0].address: expected an IPv4 or IPv6 address" },
                { "network.destinations[0].port", DEL, "network.destinations[0].port: missing" },
                { "network.destinations[0].port", "65536", "network.destinations[0].port: expected a port (0-65535)" },
                { "network.destinations[0].port", "-1", "network.destinations[0].port: expected a port (0-65535)" },
                { "network.destinations[0].port", "\"443\"", "network.destinations[0].port: expected a port (0-65535)" },
                { "network.destinations[0].protocol", DEL, "network.destinations[0].protocol: missing" },
                { "network.destinations[0].protocol", "6", "network.destinations[0].protocol: expected a protocol" },
                { "network.destinations[0].protocol", "\"TCP\"", "network.destinations[0].protocol: unknown value 'TCP'" },
                { "network.destinations[0].protocol", "\"256\"", "network.destinations[0].protocol: unknown value '256'" },
                { "network.destinations[0].protocol", "\"06\"", "network.destinations[0].protocol: unknown value '06'" },
                { "network.destinations[0].name", "5", "network.destinations[0].name: expected a DNS name" },
                { "network.destinations[0].name", "\"PKG.example\"",
                  "network.destinations[0].name: 'PKG.example' is not a DNS name in lower case" },
                { "network.destinations[0].name", "\"a b\"",
                  "network.destinations[0].name: 'a b' is not a DNS name in lower case" },
                { "network.destinations[0].verdict", DEL, "network.destinations[0].verdict: missing" },
                { "network.destinations[0].verdict", "\"refused\"",
                  "network.destinations[0].verdict: expected \"allowed\" or \"denied\"" },
                { "network.destinations[0].verdict", "true",
                  "network.destinations[0].verdict: expected \"allowed\" or \"denied\"" },
                { "network.destinations[0].reason", "\"port\"",
                  "network.destinations[0].reason: only a denied destination has one" },
                { "network.destinations[0].socket", "\"inet/raw\"",
                  "network.destinations[0].socket: only a socket denial has one" },
                { "network.destinations[0].count", DEL, "network.destinations[0].count: missing" },
                { "network.destinations[0].count", "-2", "network.destinations[0].count: expected a non-negative integer" },
                { "network.destinations[0].count", "1.5", "network.destinations[0].count: expected a non-negative integer" },
                { "network.destinations[0].first_at", DEL, "network.destinations[0].first_at: missing" },
                { "network.destinations[0].first_at", "\"today\"",
                  "network.destinations[0].first_at: 'today' is not an RFC 3339 UTC timestamp" },
                { "network.destinations[0].last_at", "17", "network.destinations[0].last_at: expected a timestamp or null" },
                { "network.destinations[2].reason", DEL, "network.destinations[2].reason: missing" },
                { "network.destinations[2].reason", "\"forbidden\"",
                  "network.destinations[2].reason: unknown value 'forbidden'" },
                { "network.destinations[2].reason", "\"socket\"", "network.destinations[2].address: expected null for a socket denial" },
                { "network.destinations[3].address", "\"10.0.0.1\"",
                  "network.destinations[3].address: expected null for a socket denial" },
                { "network.destinations[3].port", "0", "network.destinations[3].port: expected null for a socket denial" },
                { "network.destinations[3].socket", DEL, "network.destinations[3].socket: missing" },
                { "network.destinations[3].socket", "\"raw\"", "network.destinations[3].socket: 'raw' is not FAMILY/TYPE" },
                { "network.destinations[3].socket", "\"inet/\"", "network.destinations[3].socket: 'inet/' is not FAMILY/TYPE" },
                { "network.destinations[3].socket", "\"inet/65536\"",
                  "network.destinations[3].socket: 'inet/65536' is not FAMILY/TYPE" },
                { "network.destinations[3].reason", "\"private\"", "network.destinations[3].socket: only a socket denial has one" },
                { "network.names", DEL, "network.names: missing" },
                { "network.names", "null", "network.names: expected an array" },
                { "network.names[0].name", DEL, "network.names[0].name: missing" },
                { "network.names[0].name", "\"a..b\"", "network.names[0].name: 'a..b' is not a DNS name in lower case" },
                { "network.names[0].name", "\"pkg.example.\"",
                  "network.names[0].name: 'pkg.example.' is not a DNS name in lower case" },
                { "network.names[0].name", "null", "network.names[0].name: expected a DNS name" },
                { "network.names[0].verdict", "\"denied\"",
                  "network.names[0].verdict: expected \"allowed\", \"refused\" or \"failed\"" },
                { "network.names[0].count", "null", "network.names[0].count: expected a non-negative integer" },
                { "network.names[0].addresses", DEL, "network.names[0].addresses: missing" },
                { "network.names[0].addresses", "\"10.0.0.1\"", "network.names[0].addresses: expected an array of addresses" },
                { "network.names[0].addresses", "[\"10.0.0.1\", 5]",
                  "network.names[0].addresses[1]: expected an IPv4 or IPv6 address" },
                { "network.names[0].addresses",
                  "[\"::1\",\"::2\",\"::3\",\"::4\",\"::5\",\"::6\",\"::7\",\"::8\",\"::9\",\"::10\",\"::11\",\"::12\","
                  "\"::13\",\"::14\",\"::15\",\"::16\",\"::17\"]",
                  "network.names[0].addresses: more than 16 addresses" },
                { "network.names[0].blocked_addresses", "[\"x\"]",
                  "network.names[0].blocked_addresses[0]: expected an IPv4 or IPv6 address" },
                { "network.names[1].addresses", "[\"10.0.0.1\"]", "network.names[1].addresses: only an allowed name has any" },
                { "network.denied", DEL, "network.denied: missing" },
                { "network.denied", "\"3\"", "network.denied: expected a non-negative integer" },
                { "network.dns_refused", "-1", "network.dns_refused: expected a non-negative integer" },
                { "network.events_lost", "null", "network.events_lost: expected a non-negative integer" },
                { "network.overflow", DEL, "network.overflow: missing" },
                { "network.overflow", "0", "network.overflow: expected an object" },
                { "network.overflow.destinations", DEL, "network.overflow.destinations: missing" },
                { "network.overflow.names", "true", "network.overflow.names: expected a non-negative integer" },
                { "network.entries_removed", DEL, "network.entries_removed: missing" },
                { "network.entries_removed", "1", "network.entries_removed: expected a boolean" },
        };
#undef DEL
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *text = net_mutate(table[i].path, table[i].value), *error = NULL;
                RunRecord *r = (RunRecord *) 0x1;
                int k = run_record_from_json(text, &r, &error);

                check_row(failures, k == -EBADMSG && streq_ptr(error, table[i].error) && r == (RunRecord *) 0x1,
                          "%s=%s -> %d '%s', expected '%s'", table[i].path, table[i].value ?: "(deleted)", k,
                          strna(error), table[i].error);
                if (k >= 0 && r != (RunRecord *) 0x1)
                        run_record_free(r);
                r = NULL;
                k = run_record_from_json(text, &r, NULL);
                check_row(failures, k == -EBADMSG && !r, "%s (no ret_error) -> %d", table[i].path, k);
        }
        assert_int_equal(failures, 0);
}

static void test_net_from_json_accepted(void **state) {
        static const struct {
                const char *path;
                const char *value; /* NULL: delete */
        } table[] = {
                { "network", NULL }, /* older records have none */
                { "network.destinations", "[]" },
                { "network.names", "[]" },
                { "network.mode", "\"none\"" },
                { "network.destinations[0].name", NULL },
                { "network.destinations[0].name", "null" },
                { "network.destinations[0].first_at", "null" },
                { "network.destinations[0].port", "0" },
                { "network.destinations[0].port", "65535" },
                { "network.destinations[0].protocol", "\"47\"" },
                { "network.destinations[0].protocol", "\"255\"" },
                { "network.destinations[0].address", "\"::ffff:192.0.2.1\"" },
                { "network.destinations[0].count", "18446744073709551615" },
                { "network.destinations[3].socket", "\"17/10\"" },
                { "network.destinations[3].socket", "\"inet6/dgram\"" },
                { "network.names[0].addresses", "[]" },
                { "network.names[0].addresses", "[\"10.0.0.1\", \"10.0.0.1\"]" },
                { "network.names[1].verdict", "\"failed\"" },
                { "network.overflow.names", "12" },
                { "network.entries_removed", "false" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *text = net_mutate(table[i].path, table[i].value), *error = NULL;
                _cleanup_(run_record_freep) RunRecord *r = NULL;
                int k = run_record_from_json(text, &r, &error);

                check_row(failures, k == 0 && r && !error, "%s=%s -> %d '%s'", table[i].path,
                          table[i].value ?: "(deleted)", k, strna(error));
        }
        assert_int_equal(failures, 0);
}

/* ---- stop reasons ---- */

static void test_stop_reason_strings(void **state) {
        static const char *const names[_STOP_REASON_MAX] = {
                [STOP_SUCCESS] = "success",           [STOP_EXIT_CODE] = "exit-code",
                [STOP_SIGNAL] = "signal",             [STOP_CORE_DUMP] = "core-dump",
                [STOP_TIMEOUT] = "timeout",           [STOP_OOM_KILL] = "oom-kill",
                [STOP_CANCELLED] = "cancelled",       [STOP_START_FAILED] = "start-failed",
                [STOP_REFUSED] = "refused",           [STOP_LOST] = "lost",
                [STOP_IDLE_TIMEOUT] = "idle-timeout", [STOP_OUTPUT_LIMIT] = "output-limit",
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
                { STOP_OUTPUT_LIMIT, -1, SIGKILL, 122 },
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
        assert_null(r->network);
        assert_null(run_record_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_to_json_finished),
                cmocka_unit_test(test_to_json_denied_and_output),
                cmocka_unit_test(test_to_json_running),
                cmocka_unit_test(test_profile_digest),
                cmocka_unit_test(test_start),
                cmocka_unit_test(test_sandbox_section),
                cmocka_unit_test(test_to_json_completed),
                cmocka_unit_test(test_to_json_user_workspace),
                cmocka_unit_test(test_to_json_disk),
                cmocka_unit_test(test_to_json_unformattable_time),
                cmocka_unit_test(test_round_trip_finished),
                cmocka_unit_test(test_round_trip_running),
                cmocka_unit_test(test_round_trip_variants),
                cmocka_unit_test(test_round_trip_every_member),
                cmocka_unit_test(test_from_json_base),
                cmocka_unit_test(test_from_json_refused),
                cmocka_unit_test(test_from_json_accepted),
                cmocka_unit_test(test_from_json_running),
                cmocka_unit_test(test_json_exited),
                cmocka_unit_test(test_from_json_not_an_object),
                cmocka_unit_test(test_from_json_denied),
                cmocka_unit_test(test_parse_denied),
                cmocka_unit_test(test_parse_denied_too_many),
                cmocka_unit_test(test_add_denied),
                cmocka_unit_test(test_from_json_exit_code_u64_max),
                cmocka_unit_test(test_from_json_trailing_garbage),
                cmocka_unit_test(test_net_add_event),
                cmocka_unit_test(test_net_add_name),
                cmocka_unit_test(test_net_caps),
                cmocka_unit_test(test_net_to_json),
                cmocka_unit_test(test_net_destination_format),
                cmocka_unit_test(test_net_reason_strings),
                cmocka_unit_test(test_net_from_json_refused),
                cmocka_unit_test(test_net_from_json_accepted),
                cmocka_unit_test(test_stop_reason_strings),
                cmocka_unit_test(test_stop_reason_from_unit_result),
                cmocka_unit_test(test_exit_status),
                cmocka_unit_test(test_new_and_free),
                cmocka_unit_test(test_credentials),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
