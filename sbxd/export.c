/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reviewed export (export.h). sbxd never reads what a run wrote: the export unit's reviewer does, and
 * sbxd only reads its report, hands out held files it made, and removes them. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-errors.h"
#include "export.h"
#include "feature.h"
#include "fileio.h"
#include "log.h"
#include "run.h"
#include "profile-load.h"
#include "record-export.h"
#include "sandbox.h"
#include "unit-bus.h"

#define EXPORT_REPORT_MAX (64U * 1024U * 1024U)

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* A directory fd of the caller's (what: the argument's name): its path and identity into the request. */
static int export_dest_from_fd(int fd, const char *what, RunRequest *req, sd_bus_error *error) {
        char proc[64], path[PATH_MAX];
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return sd_bus_error_setf(error, ERR_INVALID, "%s: not a directory", what);
        /* Its path: the reviewer runs in a unit of its own and opens it by path, then checks it is this
         * very directory (st_dev, st_ino), as the workspace's hand-over does. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, path, sizeof(path) - 1);
        if (n <= 0 || (size_t) n >= sizeof(path) - 1 || path[0] != '/')
                return sd_bus_error_setf(error, ERR_INVALID, "%s: the directory has no path sbxd can name", what);
        path[n] = 0;
        free(req->export_dir);
        if (!(req->export_dir = strdup(path)))
                return -ENOMEM;
        req->export_dev = st.st_dev;
        req->export_ino = st.st_ino;
        return 0;
}

int export_read_request_fd(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        int fd, r;

        r = sd_bus_message_enter_container(msg, 'v', "h");
        if (r < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected a file descriptor of a directory", f->name);
        r = sd_bus_message_read(msg, "h", &fd);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        return export_dest_from_fd(fd, f->name, field, error);
}

/* The directory checked again by its path (sbxd's view of it must be the caller's), and its owner, who
 * gets what is delivered, into the request. */
static int export_check_request(Manager *m, RunRequest *req, uid_t uid, sd_bus_error *error) {
        struct stat st;
        int r;

        if (!req->export_dir)
                return 0;
        r = manager_check_host_dir(m, "export", req->export_dir, uid, false, &st, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r < 0 ? r : -EINVAL;
        if (st.st_dev != req->export_dev || st.st_ino != req->export_ino)
                return sd_bus_error_setf(error, ERR_INVALID,
                                         "export: '%s' is not the directory given (it was moved, or is not visible "
                                         "at that path on the host)", req->export_dir);
        /* what is delivered belongs to the directory's owner: the caller, or whom root exports for */
        req->export_uid = st.st_uid;
        req->export_gid = st.st_gid;
        return 0;
}

int export_run_prepare(Run *run, const RunRequest *req) {
        _cleanup_free_ char *dir = NULL;
        int r;

        if (!req->export_dir)
                return 0;
        r = policy_export_dir(run->id, &dir);
        if (r < 0)
                return r;
        r = mkdir_p(SBX_EXPORTS_DIR, 0700);
        if (r < 0)
                return r;
        if (mkdir(dir, 0700) < 0)
                return -errno; /* ids are unique: never one of another run's */
        r = run_record_export_init(run->record, req->export_dir);
        if (r < 0) {
                (void) rmdir(dir);
                return r;
        }
        return 0;
}

/* What the review left that nothing needs: its staging, its report once read, and the run's directory
 * when nothing is held. */
static void export_tidy(const char *run_id, bool held) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = open(SBX_EXPORTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        if (held) {
                _cleanup_close_ int rfd = openat(fd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (rfd < 0)
                        return;
                (void) rm_rf_at(rfd, "stage", 64);
                (void) unlinkat(rfd, "report.json", 0);
                return;
        }
        r = rm_rf_at(fd, run_id, 64);
        if (r < 0)
                log_warning_errno(r, "Failed to remove %s/%s: %m", SBX_EXPORTS_DIR, run_id);
}

/* ---- export from a live sandbox ---------------------------------------------------------------------- */

struct LiveExport {
        Sandbox *sandbox;
        sd_bus_message *call;        /* Export(), answered when the unit's start job has ended */
        sd_bus_slot *slot_start;     /* StartTransientUnit's reply */
        char *unit;                  /* sbx-export@RUN-TAG.service */
        char *report;                /* its report (SBX_EXPORTS_DIR/RUN/report-TAG.json) */
        char *destination;
};

static LiveExport *live_export_free(LiveExport *x) {
        if (!x)
                return NULL;
        if (x->sandbox && x->sandbox->live_export == x)
                x->sandbox->live_export = NULL;
        sd_bus_message_unref(x->call);
        sd_bus_slot_unref(x->slot_start);
        free(x->unit);
        free(x->report);
        free(x->destination);
        free(x);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(LiveExport *, live_export_free);

/* The report of review x as the section it adds to the record, or NULL with why in *ret_why. */
static RunExport *live_export_read_report(LiveExport *x, char **ret_why) {
        _cleanup_free_ char *json = NULL;
        _cleanup_close_ int fd = -EBADF;
        RunExport *rep = NULL;
        const char *name = strrchr(x->report, '/') + 1;
        int r;

        fd = open(SBX_EXPORTS_DIR "/", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
                _cleanup_close_ int dfd = openat(fd, x->sandbox->run->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                r = dfd < 0 ? -errno : read_file_at(dfd, name, EXPORT_REPORT_MAX, &json, NULL);
                if (dfd >= 0) {
                        (void) unlinkat(dfd, name, 0);
                        (void) rm_rf_at(dfd, "stage", 64); /* the reviewer's, if it was stopped */
                }
        } else
                r = -errno;
        if (r >= 0)
                r = run_export_from_report(json, &rep, ret_why);
        if (r >= 0 && x->destination && !(rep->destination = strdup(x->destination)))
                r = -ENOMEM;
        if (r < 0) {
                run_export_free(rep);
                if (!*ret_why)
                        *ret_why = strdup(r == -ENOENT ? "it wrote no report" : strerror(-r));
                return NULL;
        }
        return rep;
}

void live_export_finish(LiveExport *x, const char *result) {
        _cleanup_(live_export_freep) LiveExport *xp = x;
        _cleanup_(run_export_freep) RunExport *rep = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *why = NULL;
        Run *run = x->sandbox->run;
        RunRecord *rec = run->record;
        bool have_report;
        int r;

        rep = live_export_read_report(x, &why);
        have_report = rep;
        if (!rep) {
                /* nothing of it is certain: the record says so */
                rep = calloc(1, sizeof(RunExport));
                if (!rep || (x->destination && !(rep->destination = strdup(x->destination))) ||
                    asprintf(&rep->error, "the review by %s did not finish (%s; result '%s', see journalctl -u %s): "
                             "nothing of it is certain", x->unit, strna(why), result, x->unit) < 0) {
                        if (rep)
                                rep->error = NULL;
                        (void) sd_bus_reply_method_errorf(x->call, ERR_START_FAILED, "export: %s", strerror(ENOMEM));
                        return;
                }
                log_warning("Sandbox %s: %s", run->id, rep->error);
        } else
                log_info("Sandbox %s: export reviewed by %s%s%s: %zu exported (%" PRIu64 " bytes), %zu held, %zu refused.",
                         run->id, x->unit, rep->error ? ", not to its end: " : "", strempty(rep->error), rep->n_exported,
                         rep->exported_bytes, rep->n_held, rep->n_refused);
        r = 0;
        if (!rec->export) {
                r = run_record_export_init(rec, NULL);
                if (r >= 0)
                        rec->export->reviewed = true; /* until a review does not finish */
        }
        if (r >= 0)
                r = run_export_append(rec->export, rep);
        if (r >= 0)
                r = store_write(&run->manager->store, rec);
        if (r < 0)
                log_warning_errno(r, "Sandbox %s: cannot record the export by %s, ignoring: %m", run->id, x->unit);
        if (rec->export)
                export_tidy(run->id, rec->export->n_held > 0);
        run_object_changed(run);

        /* the reviewer's report, also one with an error (what was delivered before it stopped) */
        if (have_report && (o = json_object_new_object()) && run_export_to_json(rep, o) >= 0)
                r = sd_bus_reply_method_return(x->call, "s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        else
                r = sd_bus_reply_method_errorf(x->call, ERR_START_FAILED, "export: %s", strna(rep->error));
        if (r < 0)
                log_debug_errno(r, "Sandbox %s: cannot answer Export, ignoring: %m", run->id);
}

static int on_live_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        LiveExport *x = userdata;
        const sd_bus_error *e;

        x->slot_start = sd_bus_slot_unref(x->slot_start);
        e = sd_bus_message_get_error(reply);
        if (!e)
                return 0; /* its start job's end (JobRemoved) answers the call */
        log_warning("Sandbox %s: cannot start %s: %s", x->sandbox->run->id, x->unit, e->message);
        (void) sd_bus_reply_method_errorf(x->call, ERR_START_FAILED, "export: cannot start the review: %s", e->message);
        live_export_free(x);
        return 0;
}

/* A start job ended (JobRemoved): a live export's unit's, whose call is then answered. */
static void export_live_job_removed(Manager *m, const char *unit, const char *result) {
        for (Run *run = m->runs; run; run = run->next)
                if (run->sandbox && run->sandbox->live_export && streq(run->sandbox->live_export->unit, unit)) {
                        live_export_finish(run->sandbox->live_export, result);
                        return;
                }
}

/* The sandbox goes without its end having been seen: its export's call gets an error. */
static void export_live_abandon(Sandbox *s) {
        LiveExport *x = s->live_export;

        if (!x)
                return;
        (void) sd_bus_reply_method_errorf(x->call, ERR_START_FAILED, "export: sandbox %s is gone, and with it its export",
                                          s->run->id);
        live_export_free(x);
}

/* The rest of Export, from the path on: (s path, h directory) -> s report_json */
static int export_live_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error) {
        Run *run = s->run;
        Manager *m = run->manager;
        _cleanup_(run_request_freep) RunRequest *req = calloc(1, sizeof(RunRequest));
        _cleanup_(profile_freep) Profile *profile = NULL;
        _cleanup_(export_live_plan_freep) ExportLivePlan *plan = NULL;
        _cleanup_(live_export_freep) LiveExport *x = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *refusal = NULL, *dir = NULL, *desc = NULL;
        char tenant[TENANT_ID_LEN + 1], tag[RUN_ID_LEN + 1];
        const char *path;
        uid_t uid;
        int fd, r;

        if (!req)
                return -ENOMEM;
        r = sd_bus_message_read(msg, "sh", &path, &fd);
        if (r < 0)
                return r;
        if (!s->ready || s->ctl < 0 || run->stop_requested || !run->space_unit)
                return sd_bus_error_setf(error, ERR_NO_SANDBOX, "sandbox %s is not running", run->id);
        if (s->live_export)
                return sd_bus_error_setf(error, ERR_BUSY, "sandbox %s: an export is under way already (%s)", run->id,
                                         s->live_export->unit);
        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        r = export_dest_from_fd(fd, "directory", req, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        if (!(req->run_id = strdup(run->id)) || (run->workspace && !(req->workspace = strdup(run->workspace))) ||
            (run->dataset && !(req->dataset = strdup(run->dataset))))
                return -ENOMEM;
        /* The profile as it is now, as for every run: an edit that narrows its export takes effect at once. */
        r = profile_search_path(&dirs);
        if (r >= 0)
                r = profile_load(dirs, run->record->profile, &profile, &refusal);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_BAD_PROFILE, "profile '%s' cannot be used: %s", run->record->profile,
                                         refusal ?: strerror(-r));
        r = policy_export_check_dest(profile, req, &refusal);
        if (r < 0)
                return refusal ? sd_bus_error_setf(error, ERR_INVALID, "%s", refusal) : r;
        r = export_check_request(m, req, uid, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = run_id_new(tag);
        if (r < 0)
                return r;
        tag[8] = 0;
        r = policy_compile_live_export(profile, req, path, tag, run_export_next_held_id(run->record->export), &plan,
                                       &refusal);
        if (r < 0)
                return refusal ? sd_bus_error_setf(error, ERR_INVALID, "%s", refusal) : r;

        r = policy_export_dir(run->id, &dir);
        if (r >= 0)
                r = mkdir_p(SBX_EXPORTS_DIR, 0700);
        if (r >= 0 && mkdir(dir, 0700) < 0 && errno != EEXIST)
                r = -errno;
        if (r < 0)
                return sd_bus_error_setf(error, ERR_START_FAILED, "export: cannot make %s: %s", dir ?: SBX_EXPORTS_DIR,
                                         strerror(-r));

        x = calloc(1, sizeof(LiveExport));
        if (!x || !(x->unit = strdup(plan->unit)) || !(x->report = strdup(plan->report)) ||
            !(x->destination = strdup(req->export_dir)))
                return -ENOMEM;
        if (asprintf(&desc, "sbx export review of %s of sandbox %s", path, run->id) < 0)
                return -ENOMEM;
        /* Only while the sandbox's space is there (Requisite=, not started for it), and stopped before the
         * space goes (PartOf=, After=): the review never reads a space being removed. */
        r = manager_new_transient_call(m, plan->unit, &call);
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s", desc, "CollectMode", "s",
                                          "inactive-or-failed", "Slice", "s", "system.slice", "Requisite", "as", 1,
                                          run->space_unit, "PartOf", "as", 1, run->space_unit, "After", "as", 1,
                                          run->space_unit);
        if (r >= 0)
                r = bus_append_prop_table(call, plan->props);
        if (r >= 0)
                r = manager_send_oneshot_call(m, call, plan->argv, &x->slot_start, on_live_start_reply, x);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_START_FAILED, "export: cannot start the review: %s", strerror(-r));
        log_info("Sandbox %s: exporting %s into %s (%s).", run->id, path, req->export_dir, plan->unit);
        x->call = sd_bus_message_ref(msg);
        x->sandbox = s;
        s->live_export = TAKE_PTR(x);
        return 1;
}


/* The review of ~/out is part of the cleanup (before the space goes), and its outcome part of the
 * answer: a run with an export is answered at Finished. */
static int export_run_exited(Run *run) {
        return run->record->export != NULL;
}

void export_run_ended(Run *run) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *why = NULL;
        RunExport *e;
        int r;

        /* a sandbox has no review at its end: its exports were reviewed while it ran (an export the end
         * cut short is answered with what there is) */
        if (run->sandbox) {
                if (run->sandbox->live_export)
                        live_export_finish(run->sandbox->live_export, "canceled");
                if (run->record->export)
                        export_tidy(run->id, run->record->export->n_held > 0);
                return;
        }
        e = run->record->export;
        if (!e)
                return;
        r = policy_export_dir(run->id, &dir);
        if (r >= 0) {
                _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                r = fd < 0 ? -errno : read_file_at(fd, "report.json", EXPORT_REPORT_MAX, &json, NULL);
        }
        if (r >= 0)
                r = run_record_export_read_report(run->record, json, &why);
        e = run->record->export;
        if (r < 0) {
                free(e->error);
                if (asprintf(&e->error, "the review did not finish (%s; see journalctl -u sbx-export@%s.service): "
                             "nothing of it is certain", why ?: strerror(-r), run->id) < 0)
                        e->error = NULL;
                e->reviewed = false;
                log_warning("Run %s: the review of its export did not finish: %s", run->id, why ?: strerror(-r));
        } else
                log_info("Run %s: export reviewed: %zu exported (%" PRIu64 " bytes), %zu held, %zu refused.", run->id,
                         e->n_exported, e->exported_bytes, e->n_held, e->n_refused);
        export_tidy(run->id, e->n_held > 0);
}

/* ApproveExport(s run, s item) -> (s path, h fd) and RejectExport(s run, s item) */
static int held_method(sd_bus_message *msg, Manager *m, bool approve, sd_bus_message_handler_t method,
                       sd_bus_error *error) {
        _cleanup_(run_record_freep) RunRecord *stored = NULL;
        _cleanup_free_ char *dir = NULL, *held = NULL, *path = NULL;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        const char *id, *item;
        RunRecord *rec;
        ExportItem *h;
        struct stat st;
        Run *live;
        int r;

        r = sd_bus_message_read(msg, "ss", &id, &item);
        if (r < 0)
                return r;
        r = manager_lookup_owned(m, msg, id, method, &stored, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        /* a live sandbox's exports are reviewed while it runs: its record is the one in memory, which sbxd
         * writes again as the sandbox goes on */
        live = manager_find_run(m, id);
        if (live && !live->sandbox)
                return sd_bus_error_setf(error, ERR_BUSY, "run: %s has not ended: its export is not reviewed yet", id);
        rec = live ? live->record : stored;
        if (!live && !rec->finished)
                return sd_bus_error_setf(error, ERR_BUSY, "run: %s has not ended: its export is not reviewed yet", id);
        h = export_item_id_is_valid(item) ? run_export_find_held(rec->export, item) : NULL;
        if (!h)
                return sd_bus_error_setf(error, ERR_NO_EXPORT_ITEM, "item: run %s holds no export item '%s'", id, item);
        if (!(path = strdup(h->path)))
                return -ENOMEM;
        r = policy_export_dir(id, &dir);
        if (r < 0)
                return r;
        if (asprintf(&held, "%s/held", dir) < 0)
                return -ENOMEM;
        dfd = open(held, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return sd_bus_error_setf(error, ERR_NO_EXPORT_ITEM, "item: the held files of run %s are gone (%m)", id);
        if (approve) {
                fd = openat(dfd, item, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                        return sd_bus_error_setf(error, ERR_NO_EXPORT_ITEM, "item: the held file %s of run %s is gone",
                                                 item, id);
                r = run_export_approve(rec->export, item);
        } else
                r = run_export_reject(rec->export, item);
        if (r < 0)
                return r;
        r = store_write(&m->store, rec);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot write the record of run %s: %s", id,
                                         strerror(-r));
        (void) unlinkat(dfd, item, 0);
        /* not while a review of the sandbox's uses the staging: its end tidies */
        if (rec->export->n_held == 0 && !(live && live->sandbox->live_export))
                export_tidy(id, false);
        log_info("Run %s: export item %s (%s) %s.", id, item, path, approve ? "approved" : "rejected");
        if (approve)
                return sd_bus_reply_method_return(msg, "sh", path, fd);
        return sd_bus_reply_method_return(msg, NULL);
}

int export_method_approve(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return held_method(msg, userdata, true, export_method_approve, error);
}

int export_method_reject(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return held_method(msg, userdata, false, export_method_reject, error);
}

void export_run_abandon(Run *run) {
        if (run->record->export)
                export_tidy(run->id, false);
}

void export_forget(const char *run_id) {
        if (run_id_is_valid(run_id))
                export_tidy(run_id, false);
}

int export_method_live(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sandbox_call(msg, userdata, export_live_call, error);
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

static int export_check_host_dirs(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error) {
        return export_check_request(m, req, uid, error);
}

/* The review's directory and the record's export section; a pooled unit has no export. */
static int export_prepare(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        int r;

        if (ctx->pooled)
                return 0;
        r = export_run_prepare(run, ctx->req);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot prepare the review of the run's export "
                                         "in %s: %s", SBX_EXPORTS_DIR, strerror(-r));
        return 0;
}

/* A sandbox's export under way goes before the sandbox does (the table's order: the export first). */
static void export_free_run(Run *run) {
        if (run->sandbox)
                export_live_abandon(run->sandbox);
}

const Feature feature_export = {
        .name = "export",
        .prepare = export_prepare,
        .check_host_dirs = export_check_host_dirs,
        .exited = export_run_exited,
        .ended = export_run_ended,
        .abandon = export_run_abandon,
        .free_run = export_free_run,
        .job_removed = export_live_job_removed,
};
