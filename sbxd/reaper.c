/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reaper: runs past their deadline or whose owner is gone stopped, cleanups measured again, old
 * records removed (reaper.h). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>

#include "caches.h"
#include "capture.h"
#include "credentials.h"
#include "log.h"
#include "export.h"
#include "reaper.h"
#include "store.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* A run left running when it should not be: past its wall time (systemd's RuntimeMaxSec= missed it), or
 * with no one to answer to (its client left and it is not a detached sandbox, and no re-attach is awaited). */
static const char *run_overdue(const Run *run, usec_t now) {
        const RunRecord *rec = run->record;

        if (run->finalizing || run->stop_requested || !run->job_done)
                return NULL;
        /* a minute of grace: systemd stops it at its RuntimeMaxSec= and then has TimeoutStopSec= */
        if (rec->limits.known && rec->limits.wall_time > 0 &&
            now > rec->started_at + rec->limits.wall_time + 60 * USEC_PER_SEC)
                return "past its deadline";
        if (!run->client && !run->attach_timeout && !(run->sandbox && rec->sandbox && rec->sandbox->detach))
                return "its owner is gone";
        return NULL;
}

/* Whether systemd still has the unit loaded. */
static int unit_loaded(Manager *m, const char *unit) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit", &error, &reply, "s", unit);
        if (r >= 0)
                return 1;
        if (sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                return 0;
        return r;
}

static bool run_followed(Manager *m, const char *id) {
        return manager_find_run(m, id) != NULL;
}

static int add_string(json_object *array, const char *s) {
        json_object *v = json_object_new_string(s);

        if (!v || json_object_array_add(array, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int reaper_collect(Manager *m, const DaemonConf *conf, char **ret) {
        _cleanup_(json_object_putp) json_object *report = json_object_new_object();
        json_object *stopped = json_object_new_array(), *incomplete = json_object_new_array();
        RunRecord **recs = NULL;
        size_t n = 0, verified = 0, removed = 0, kept = 0, captures_deleted;
        usec_t now = now_realtime();
        const char *text;
        int r;

        if (!report || !stopped || !incomplete) {
                json_object_put(stopped);
                json_object_put(incomplete);
                return -ENOMEM;
        }
        if (json_object_object_add(report, "stopped", stopped) < 0 ||
            json_object_object_add(report, "incomplete", incomplete) < 0)
                return -ENOMEM;

        for (Run *run = m->runs; run; run = run->next) {
                const char *why = run_overdue(run, now);

                if (!why)
                        continue;
                log_warning("Run %s is still running though %s: stopping it.", run->id, why);
                if (run_stop(run, SIGTERM) >= 0 && add_string(stopped, run->id) < 0)
                        return -ENOMEM;
        }

        /* capture files past their expiry (docs/capture.md) */
        captures_deleted = capture_reap(m, now);

        r = store_load_all(&m->store, &recs, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                RunRecord *rec = recs[i];

                if (!rec->finished || run_followed(m, rec->run_id)) {
                        kept++;
                        continue;
                }
                /* Measured again: what the record says remained may be gone by now. */
                if (!run_record_cleanup_completed(rec)) {
                        _cleanup_free_ char *cg = NULL;
                        struct stat st;

                        if (!rec->unit_gone && rec->unit) {
                                r = unit_loaded(m, rec->unit);
                                if (r == 0)
                                        rec->unit_gone = true;
                        }
                        if (!rec->cgroup_gone && rec->profile &&
                            policy_cgroup_path(rec->profile, rec->run_id, &cg) >= 0 && stat(cg, &st) < 0 &&
                            errno == ENOENT)
                                rec->cgroup_gone = true;
                        if (!rec->user_gone && !manager_unit_user_exists(m, rec->unit))
                                rec->user_gone = true;
                        if (!rec->mounts_gone && manager_run_mounts_gone(rec->run_id))
                                rec->mounts_gone = true;
                        /* the run's space (its directory; the mount goes before it) */
                        if (!rec->space_gone && rec->disk_max > 0) {
                                _cleanup_free_ char *space = NULL;

                                if (policy_space_path(rec->run_id, &space) >= 0 && lstat(space, &st) < 0 &&
                                    errno == ENOENT)
                                        rec->space_gone = true;
                        }
                        /* its credentials directory, staged credentials, grant file and operations log
                         * (the run has ended: what sbx made for it goes now, if it was left) */
                        if (rec->credentials && !rec->credentials->gone && rec->unit) {
                                run_credentials_remove(rec->run_id);
                                rec->credentials->gone = run_credentials_gone(rec->unit, rec->run_id);
                        }
                        verified++;
                        if (store_write(&m->store, rec) < 0)
                                log_warning("Failed to update the record of run %s.", rec->run_id);
                }
                if (!run_record_cleanup_completed(rec)) {
                        /* kept whatever its age: it says what is left */
                        if (add_string(incomplete, rec->run_id) < 0) {
                                run_records_free(recs, n);
                                return -ENOMEM;
                        }
                        kept++;
                        continue;
                }
                if (conf->record_retention > 0 && rec->ended_at > 0 && rec->ended_at + conf->record_retention < now) {
                        /* what its export review held, never approved nor rejected, goes with it */
                        if (rec->export && rec->export->n_held > 0)
                                export_forget(rec->run_id);
                        r = store_remove(&m->store, rec->run_id);
                        if (r < 0 && r != -ENOENT)
                                log_warning_errno(r, "Failed to remove the record of run %s: %m", rec->run_id);
                        else
                                removed++;
                        continue;
                }
                kept++;
        }
        run_records_free(recs, n);

        r = caches_collect(m, conf, report);
        if (r < 0)
                return r;
        if (json_object_object_add(report, "verified", json_object_new_uint64(verified)) < 0 ||
            json_object_object_add(report, "removed", json_object_new_uint64(removed)) < 0 ||
            json_object_object_add(report, "kept", json_object_new_uint64(kept)) < 0 ||
            json_object_object_add(report, "captures_deleted", json_object_new_uint64(captures_deleted)) < 0 ||
            json_object_object_add(report, "record_retention_usec", json_object_new_uint64(conf->record_retention)) < 0)
                return -ENOMEM;
        text = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN);
        if (!text || !(*ret = strdup(text)))
                return -ENOMEM;
        log_info("Reaper: %zu stopped, %zu records measured again (%zu with something left), %zu removed, %zu kept, "
                 "%zu capture files deleted.",
                 json_object_array_length(stopped), verified, json_object_array_length(incomplete), removed, kept,
                 captures_deleted);
        return 0;
}
