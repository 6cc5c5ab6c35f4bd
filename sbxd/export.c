/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reviewed export (export.h). sbxd never reads what a run wrote: the export unit's reviewer does, and
 * sbxd only reads its report, hands out held files it made, and removes them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-errors.h"
#include "export.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "record-export.h"

#define EXPORT_REPORT_MAX (64U * 1024U * 1024U)

int export_read_request_fd(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        RunRequest *req = field;
        char proc[64], path[PATH_MAX];
        struct stat st;
        ssize_t n;
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
        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return sd_bus_error_setf(error, ERR_INVALID, "%s: not a directory", f->name);
        /* Its path: the reviewer runs in a unit of its own and opens it by path, then checks it is this
         * very directory (st_dev, st_ino), as the workspace's hand-over does. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, path, sizeof(path) - 1);
        if (n <= 0 || (size_t) n >= sizeof(path) - 1 || path[0] != '/')
                return sd_bus_error_setf(error, ERR_INVALID, "%s: the directory has no path sbxd can name", f->name);
        path[n] = 0;
        free(req->export_dir);
        if (!(req->export_dir = strdup(path)))
                return -ENOMEM;
        req->export_dev = st.st_dev;
        req->export_ino = st.st_ino;
        return 0;
}

int export_check_request(Manager *m, RunRequest *req, uid_t uid, sd_bus_error *error) {
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

void export_run_ended(Run *run) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *why = NULL;
        RunExport *e = run->record->export;
        int r;

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
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        _cleanup_free_ char *dir = NULL, *held = NULL, *path = NULL;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        const char *id, *item;
        ExportItem *h;
        struct stat st;
        int r;

        r = sd_bus_message_read(msg, "ss", &id, &item);
        if (r < 0)
                return r;
        r = manager_lookup_owned(m, msg, id, method, &rec, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        if (!rec->finished)
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
        if (rec->export->n_held == 0)
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
