/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl list, show, stop, gc and capture: runs and their records. */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "common.h"
#include "options.h"
#include "policy.h"
#include "verbs.h"

static const char *exit_text(const RunRecord *r, char *buf, size_t l) {
        if (r->exit_signal > 0)
                snprintf(buf, l, "SIG%s", sigabbrev_np(r->exit_signal) ?: "?");
        else if (r->exit_code >= 0)
                snprintf(buf, l, "%d", r->exit_code);
        else
                snprintf(buf, l, "-");
        return buf;
}

int verb_list(int argc, char **argv) {
        _cleanup_free_ char *json = NULL;
        json_object *arr;
        int r;

        r = call_daemon(arg_all ? "ListAll" : "List", NULL, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                fputs(json, stdout);
                return 0;
        }
        arr = json_tokener_parse(json);
        if (!arr || !json_object_is_type(arr, json_type_array))
                return failed("sbxd sent an invalid list");
        if (arg_legend)
                printf("%-32s  %-10s  %-8s  %-12s  %-6s  %-27s  %s\n", "RUN", "PROFILE", "STATE", "REASON", "EXIT",
                       "STARTED", "KIND");
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                const char *text = json_object_to_json_string(json_object_array_get_idx(arr, i));
                _cleanup_(run_record_freep) RunRecord *rec = NULL;
                char ts[TIMESTAMP_MAX], ex[16];

                if (run_record_from_json(text, &rec, NULL) < 0)
                        continue;
                printf("%-32s  %-10s  %-8s  %-12s  %-6s  %-27s  %s%s%s\n", rec->run_id, rec->profile,
                       rec->finished ? "finished" : rec->exited ? "exited" : "running", strna(stop_reason_to_string(rec->stop_reason)),
                       exit_text(rec, ex, sizeof(ex)), format_timestamp(ts, rec->started_at),
                       rec->sandbox ? "sandbox" : "run", rec->sandbox && rec->sandbox->name ? ":" : "",
                       rec->sandbox && rec->sandbox->name ? rec->sandbox->name : "");
        }
        json_object_put(arr);
        return 0;
}

static void print_u64(const char *label, uint64_t v, bool bytes) {
        char buf[32];

        if (v == UINT64_MAX)
                printf("%-14s n/a\n", label);
        else if (bytes)
                printf("%-14s %s (%" PRIu64 " bytes)\n", label, format_bytes(buf, sizeof(buf), v), v);
        else
                printf("%-14s %" PRIu64 "\n", label, v);
}

static void print_addresses(const char *sep, const NetAddress *a, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char buf[INET6_ADDRSTRLEN];

                printf("%s%s", i == 0 ? sep : ", ", inet_ntop(a[i].family, a[i].bytes, buf, sizeof(buf)) ?: "?");
        }
}

/* The record's network section: destinations allowed, denied, and the names the run looked up. */
static void print_network(const RunRecord *rec) {
        const RunNetwork *n = rec->network;
        char buf[512];

        if (!n) {
                printf("%-14s %s\n", "Network:", "not recorded");
                return;
        }
        printf("%-14s %s\n", "Network:", strna(network_mode_to_string(n->mode)));
        for (int allowed = 1; allowed >= 0; allowed--) {
                const char *label = allowed ? "  allowed:" : "  denied:";
                bool any = false;

                for (size_t i = 0; i < n->n_destinations; i++) {
                        const NetDestinationStat *d = &n->destinations[i];

                        if (d->allowed != (bool) allowed)
                                continue;
                        printf("%-14s %s x%" PRIu64 "\n", any ? "" : label,
                               format_destination(d, rec->profile, buf, sizeof(buf)), d->count);
                        any = true;
                }
                if (!any)
                        printf("%-14s none\n", label);
        }
        for (size_t i = 0; i < n->n_names; i++) {
                const NetNameStat *e = &n->names[i];

                printf("%-14s %s %s x%" PRIu64, i == 0 ? "  names:" : "", e->name,
                       strna(name_verdict_to_string(e->verdict)), e->count);
                print_addresses(": ", e->addresses, e->n_addresses);
                if (e->n_blocked > 0) {
                        print_addresses(" (dropped as rebinding: ", e->blocked, e->n_blocked);
                        printf(")");
                }
                printf("\n");
        }
        if (n->n_names == 0)
                printf("%-14s none\n", "  names:");
        printf("%-14s %" PRIu64 " denied calls, %" PRIu64 " refused lookups, %" PRIu64 " events lost\n", "  counted:",
               n->denied, n->dns_refused, n->events_lost);
        if (n->destinations_overflow > 0 || n->names_overflow > 0)
                printf("%-14s %" PRIu64 " calls to further destinations, %" PRIu64 " lookups of further names\n",
                       "  not listed:", n->destinations_overflow, n->names_overflow);
        printf("%-14s %s\n", "  map entries:", n->entries_removed ? "removed" : "NOT removed");
}

int verb_show(int argc, char **argv) {
        const char *id = argv[0];
        _cleanup_free_ char *json = NULL;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        char ts[TIMESTAMP_MAX], ex[16];
        int r;

        if (!run_id_is_valid(id))
                return refused("show: '%s' is not a run id (32 hex characters)", id);
        r = call_daemon("Get", id, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                fputs(json, stdout);
                return 0;
        }
        if (run_record_from_json(json, &rec, NULL) < 0)
                return failed("sbxd sent an invalid record");
        printf("%-14s %s\n", "Run:", rec->run_id);
        printf("%-14s %s\n", "Unit:", strna(rec->unit));
        printf("%-14s %s\n", "Profile:", rec->profile);
        printf("%-14s %s\n", "Policy:", strna(rec->policy_digest));
        printf("%-14s %s\n", "Tenant:", rec->tenant);
        printf("%-14s %s\n", "State:", rec->finished ? "finished" : rec->exited ? "exited" : "running");
        printf("%-14s %s\n", "Started:", format_timestamp(ts, rec->started_at));
        printf("%-14s %s\n", "Start:", rec->pooled ? "pool (a unit of the profile's warm pool)" : "cold");
        if (rec->isolation == ISOLATION_GVISOR)
                printf("%-14s gvisor (runsc %s)\n", "Isolation:", rec->runsc_version ?: "did not start");
        else
                printf("%-14s kernel\n", "Isolation:");
        printf("%-14s %s\n", "Ended:", rec->ended_at ? format_timestamp(ts, rec->ended_at) : "-");
        printf("%-14s %s\n", "Stop reason:", strna(stop_reason_to_string(rec->stop_reason)));
        printf("%-14s %s\n", "Exit:", exit_text(rec, ex, sizeof(ex)));
        print_u64("CPU (usec):", rec->cpu_usec, false);
        print_u64("Memory peak:", rec->memory_peak, true);
        print_u64("Tasks peak:", rec->tasks_peak, false);
        /* the run's space (HOME, /tmp, /var/tmp, /dev/shm) when the command ended */
        if (rec->disk_max > 0) {
                char used[32], cap[32];

                printf("%-14s %s of %s used%s\n", "Disk:",
                       rec->disk_used == UINT64_MAX ? "n/a" : format_bytes(used, sizeof(used), rec->disk_used),
                       format_bytes(cap, sizeof(cap), rec->disk_max),
                       rec->disk_full ? " (full: writes past the cap failed)" : "");
        }
        /* UINT64_MAX: not counted (the profile sets no output limit) */
        if (rec->output_bytes != UINT64_MAX)
                printf("%-14s %" PRIu64 " bytes%s\n", "Output:", rec->output_bytes,
                       rec->output_truncated ? " (cut at the profile's limit)" : "");
        else if (rec->output_truncated)
                printf("%-14s cut at the profile's limit\n", "Output:");
        printf("%-14s", "Denied calls:");
        for (size_t i = 0; i < rec->n_denied; i++)
                printf(" %s x%" PRIu64, rec->denied[i].name, rec->denied[i].count);
        printf("%s\n", rec->n_denied ? "" : " none (of sbx's argument-level rules)");
        print_network(rec);
        if (rec->sandbox) {
                const RunSandbox *sb = rec->sandbox;

                printf("%-14s %s%s%s\n", "Sandbox:", sb->name ?: "(no name)", sb->detach ? ", detached" : "",
                       sb->idle_timeout ? ", idle timeout set" : "");
                if (sb->idle_timeout)
                        printf("%-14s %" PRIu64 " s\n", "Idle timeout:", sb->idle_timeout / USEC_PER_SEC);
                printf("%-14s %" PRIu64 "%s\n", "Execs:", sb->execs_total,
                       sb->execs_total > sb->n_execs ? " (the first ones listed)" : "");
                for (size_t i = 0; i < sb->n_execs; i++) {
                        const RunExec *e = &sb->execs[i];
                        char code[16] = "-";

                        if (e->exit_signal > 0)
                                snprintf(code, sizeof(code), "SIG%s", sigabbrev_np(e->exit_signal) ?: "?");
                        else if (e->exit_code >= 0)
                                snprintf(code, sizeof(code), "%d", e->exit_code);
                        printf("  %s  %s  %-11s %-7s %8.3f s  %" PRIu64 " bytes%s\n", e->id,
                               format_timestamp(ts, e->started_at), exec_result_to_string(e->result), code,
                               (double) e->duration / USEC_PER_SEC, e->output_bytes,
                               e->output_truncated ? " (cut)" : "");
                }
        }
        if (run_capture_enabled(&rec->capture)) {
                const RunCapture *c = &rec->capture;
                char ts2[TIMESTAMP_MAX];

                printf("%-14s enabled %s by tenant %s, until %s, %" PRIu64 " bytes%s\n", "Capture:",
                       format_timestamp(ts, c->enabled_at), c->by_tenant, format_timestamp(ts2, c->until), c->bytes,
                       c->ended_at ? "" : " so far");
                if (c->ended_at)
                        printf("%-14s ended %s, file %s%s\n", "", format_timestamp(ts, c->ended_at),
                               c->deleted_at ? "deleted " : "kept until the reaper deletes it",
                               c->deleted_at ? format_timestamp(ts2, c->deleted_at) : "");
        }
        printf("%-14s %s\n", "Cleanup:",
               rec->finished ? (run_record_cleanup_completed(rec) ? "completed" : "INCOMPLETE") : "-");
        if (rec->error)
                printf("%-14s %s\n", "Error:", rec->error);
        return 0;
}

/* One pass of sbxd's reaper (docs/reaper.md): what it stopped, measured again and removed. */
int verb_gc(int argc, char **argv) {
        _cleanup_free_ char *json = NULL;
        json_object *o, *stopped = NULL, *incomplete = NULL, *caches, *v;
        uint64_t verified = 0, removed = 0, kept = 0;
        int r;

        r = call_daemon("CollectGarbage", NULL, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                printf("%s\n", json);
                return 0;
        }
        o = json_tokener_parse(json);
        if (!o || !json_object_object_get_ex(o, "stopped", &stopped) || !json_object_object_get_ex(o, "incomplete", &incomplete)) {
                json_object_put(o);
                return failed("sbxd sent an invalid reply");
        }
        if (json_object_object_get_ex(o, "verified", &v))
                verified = json_object_get_uint64(v);
        if (json_object_object_get_ex(o, "removed", &v))
                removed = json_object_get_uint64(v);
        if (json_object_object_get_ex(o, "kept", &v))
                kept = json_object_get_uint64(v);
        for (size_t i = 0; i < json_object_array_length(stopped); i++)
                printf("stopped %s (past its deadline, or its owner is gone)\n",
                       json_object_get_string(json_object_array_get_idx(stopped, i)));
        for (size_t i = 0; i < json_object_array_length(incomplete); i++)
                printf("incomplete cleanup: run %s (sbxctl show %s)\n",
                       json_object_get_string(json_object_array_get_idx(incomplete, i)),
                       json_object_get_string(json_object_array_get_idx(incomplete, i)));
        printf("%zu stopped, %" PRIu64 " measured again, %zu with something left, %" PRIu64 " records removed, %" PRIu64
               " kept\n", json_object_array_length(stopped), verified, json_object_array_length(incomplete), removed, kept);
        if (json_object_object_get_ex(o, "caches", &caches) && json_object_object_get_ex(caches, "removed", &v)) {
                json_object *k;
                uint64_t kept_bytes = 0, n_kept = 0;
                char b[32];

                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *c = json_object_array_get_idx(v, i), *name, *why;

                        if (json_object_object_get_ex(c, "cache", &name) && json_object_object_get_ex(c, "reason", &why))
                                printf("removing cache %s (%s)\n", json_object_get_string(name),
                                       streq(json_object_get_string(why), "unused") ? "unused past its retention"
                                                                                    : "least recently used, above the size cap");
                }
                if (json_object_object_get_ex(caches, "kept", &k))
                        n_kept = json_object_get_uint64(k);
                if (json_object_object_get_ex(caches, "kept_bytes", &k))
                        kept_bytes = json_object_get_uint64(k);
                printf("caches: %zu removed, %" PRIu64 " kept (%s)\n", json_object_array_length(v), n_kept,
                       format_bytes(b, sizeof(b), kept_bytes));
        }
        if (json_object_object_get_ex(o, "captures_deleted", &v) && json_object_get_uint64(v) > 0)
                printf("captures: %" PRIu64 " files past their expiry deleted\n", json_object_get_uint64(v));
        json_object_put(o);
        return 0;
}

int verb_stop(int argc, char **argv) {
        const char *id = argv[0];

        if (!run_id_is_valid(id))
                return refused("stop: '%s' is not a run id (32 hex characters)", id);
        return call_daemon("Stop", id, NULL);
}

/* Temporary elevated capture (docs/capture.md): sbxd copies the run's output into a root-only file until
 * the expiry; the reaper deletes the file then. */
int verb_capture(int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id = argv[0];
        char ts[TIMESTAMP_MAX];
        uint64_t until;
        int r;

        /* options may also follow the run: "capture RUN --until 1h" */
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        if (optind < argc)
                return refused("capture: unexpected argument '%s'", argv[optind]);
        if (!run_id_is_valid(id))
                return refused("capture: '%s' is not a run id (32 hex characters)", id);
        if (arg_until == 0)
                return refused("capture: --until=DURATION is required (how long to capture, e.g. 30min; at most 24h)");
        if (capture_check_duration(arg_until) < 0)
                return refused("capture: --until: at most 24h");
        r = call_daemon_reply("Capture", &reply, "st", id, (uint64_t) arg_until);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "t", &until);
        if (r < 0 || !format_timestamp(ts, until))
                return failed("sbxd sent an invalid reply");
        if (arg_json)
                printf("{\"run_id\": \"%s\", \"until\": \"%s\", \"file\": \"" SBX_CAPTURE_DIR "/%s\"}\n", id, ts, id);
        else
                printf("Capturing the output of run %s until %s into " SBX_CAPTURE_DIR "/%s (root's only; deleted "
                       "by the reaper once that time has passed).\n", id, ts, id);
        return 0;
}
