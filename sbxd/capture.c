/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The capture feature (feature.h): a run's output also written by sbxd for a while, on request (capture.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "bus-errors.h"
#include "capture-proto.h"
#include "capture.h"
#include "feature.h"
#include "fileio.h"
#include "log.h"
#include "message-ids.h"
#include "polkit.h"

#define POLKIT_ACTION_CAPTURE "org.sbx.capture"

/* A capture being taken: sbxd's read end of the helper's pipe and the file it copies into. */
struct Capture {
        Run *run;
        int pipe_fd;
        int file_fd;
        sd_event_source *io;
        sd_event_source *expiry;
};

Capture *capture_free(Capture *c) {
        if (!c)
                return NULL;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->expiry);
        safe_close(c->pipe_fd);
        safe_close(c->file_fd);
        free(c);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Capture *, capture_free);

static int capture_dir_open(void) {
        int fd;

        /* root's only, like the figures: made here too (tmpfiles makes it at boot) */
        if (mkdir(SBX_CAPTURE_DIR, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(SBX_CAPTURE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negative_errno() : fd;
}

/* Copies what the pipe holds now into the file, at most max_chunks reads of 64 KiB (a run that writes without
 * a pause does not keep sbxd from its other work: the pipe is read again on the next turn). Returns 0 when
 * the pipe is empty for now (or max_chunks were read), 1 at its end (the helper is gone, or its writes
 * failed), a negative errno when the file cannot be written. */
static int capture_copy(Capture *c, unsigned max_chunks) {
        static uint8_t buf[64 * 1024];
        RunCapture *rc = &c->run->record->capture;

        for (unsigned i = 0; i < max_chunks; i++) {
                ssize_t k = read(c->pipe_fd, buf, sizeof(buf));
                int r;

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return 0;
                if (k <= 0)
                        return 1;
                r = loop_write(c->file_fd, buf, (size_t) k);
                if (r < 0)
                        return r;
                rc->bytes += (uint64_t) k;
        }
        return 0;
}

/* Capture ends: what is left in the pipe is copied, then sbxd's end closes (the helper's next write fails and
 * it stops copying). The file stays until the reaper deletes it after the expiry. */
static void capture_end(Run *run, const char *why) {
        Capture *c = run->capture;
        int r;

        if (!c)
                return;
        /* what the pipe still holds (at most its size, 1 MiB, and what a writer adds meanwhile) */
        r = capture_copy(c, 32);
        if (r < 0)
                log_warning_errno(r, "Run %s: cannot write the capture file, capture ends: %m", run->id);
        run->record->capture.ended_at = now_realtime();
        log_info("Run %s: capture ended (%s), %" PRIu64 " bytes captured.", run->id, why,
                 run->record->capture.bytes);
        run->capture = capture_free(c);
}

static void capture_end_and_write(Run *run, const char *why) {
        int r;

        capture_end(run, why);
        r = store_write(&run->manager->store, run->record);
        if (r < 0)
                log_error_errno(r, "Failed to write the record of run %s: %m", run->id);
}

static int on_capture_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Capture *c = userdata;
        int r;

        r = capture_copy(c, 16);
        if (r < 0)
                log_warning_errno(r, "Run %s: cannot write the capture file: %m", c->run->id);
        if (r != 0)
                capture_end_and_write(c->run, r > 0 ? "the run's helper stopped writing" : "the file");
        return 0;
}

static int on_capture_expiry(sd_event_source *s, uint64_t usec, void *userdata) {
        Capture *c = userdata;

        capture_end_and_write(c->run, "expired");
        return 0;
}

void capture_run_ended(Run *run) {
        capture_end(run, "the run ended");
}

/* The unit's main process, the exec helper, as a /proc directory: its pid from systemd, checked to be in the
 * run's cgroup. What is opened through that directory is that process's, also if the pid were reused
 * meanwhile (its files are then gone: ESRCH). */
static int run_helper_proc(Run *run, int *ret_proc_fd) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *cg = NULL, *want = NULL;
        _cleanup_close_ int proc_fd = -EBADF;
        char path[32];
        uint32_t pid = 0;
        int r;

        r = sd_bus_get_property_trivial(run->manager->bus, SD_DEST, run->unit_path, "org.freedesktop.systemd1.Service",
                                        "MainPID", &error, 'u', &pid);
        if (r < 0)
                return r;
        if (pid == 0)
                return -ESRCH;
        (void) snprintf(path, sizeof(path), "/proc/%" PRIu32, pid);
        proc_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        r = read_file_at(proc_fd, "cgroup", 4096, &cg, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        if (!run->cgroup_path || !strneq(run->cgroup_path, "/sys/fs/cgroup/", strlen("/sys/fs/cgroup/")))
                return -ESRCH;
        if (asprintf(&want, "0::%s\n", run->cgroup_path + strlen("/sys/fs/cgroup")) < 0)
                return -ENOMEM;
        if (!streq(cg, want))
                return -ESRCH;
        *ret_proc_fd = TAKE_FD(proc_fd);
        return 0;
}

/* Opens the read end of the helper's capture pipe (capture-proto.h) and asks the helper to copy into it:
 * the signal goes through systemd to the unit's main process (sbxd has no CAP_KILL). */
static int capture_attach(Run *run, int *ret_pipe, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error kill_error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int proc_fd = -EBADF, pipe_fd = -EBADF;
        char path[32];
        struct stat st;
        int r;

        r = run_helper_proc(run, &proc_fd);
        if (r == -ESRCH)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its command has not started yet, or is "
                                         "ending", run->id);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "run %s: cannot find its exec helper: %m", run->id);
        (void) snprintf(path, sizeof(path), "fd/%d", SBX_CAPTURE_FD);
        pipe_fd = openat(proc_fd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (pipe_fd < 0 && errno == ENOENT)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its exec helper offers no capture "
                                         "(not yet: its command is about to start; or it was started by an earlier "
                                         "version of sbx, or could not set it up)", run->id);
        if (pipe_fd < 0)
                return sd_bus_error_set_errnof(error, errno, "run %s: cannot open its exec helper's capture pipe: %m",
                                               run->id);
        if (fstat(pipe_fd, &st) < 0 || !S_ISFIFO(st.st_mode))
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its exec helper's descriptor %d is not "
                                         "a capture pipe", run->id, SBX_CAPTURE_FD);
        r = sd_bus_call_method(run->manager->bus, SD_DEST, run->unit_path, "org.freedesktop.systemd1.Unit", "Kill",
                               &kill_error, NULL, "si", "main", (int32_t) SBX_CAPTURE_SIGNAL);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: cannot ask its exec helper to capture: %s",
                                         run->id, kill_error.message ?: strerror(-r));
        *ret_pipe = TAKE_FD(pipe_fd);
        return 0;
}

static int capture_begin(Run *run, usec_t until, sd_bus_error *error) {
        _cleanup_(capture_freep) Capture *c = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        c = calloc(1, sizeof(Capture));
        if (!c)
                return -ENOMEM;
        *c = (Capture) { .run = run, .pipe_fd = -EBADF, .file_fd = -EBADF };

        dir_fd = capture_dir_open();
        if (dir_fd < 0)
                return sd_bus_error_set_errnof(error, dir_fd, "cannot open " SBX_CAPTURE_DIR ": %m");
        (void) unlinkat(dir_fd, run->id, 0); /* never one of an earlier sbxd's: ids are unique */
        c->file_fd = openat(dir_fd, run->id, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (c->file_fd < 0)
                return sd_bus_error_set_errnof(error, errno, "cannot create " SBX_CAPTURE_DIR "/%s: %m", run->id);

        r = capture_attach(run, &c->pipe_fd, error);
        if (r >= 0)
                r = sd_event_add_io(run->manager->event, &c->io, c->pipe_fd, EPOLLIN, on_capture_io, c);
        if (r >= 0)
                r = sd_event_add_time(run->manager->event, &c->expiry, CLOCK_REALTIME, until, 0, on_capture_expiry, c);
        if (r < 0) {
                /* fail closed: nothing is said to be captured, no file is left; closing the pipe (c) ends
                 * the helper's copy if it had begun */
                (void) unlinkat(dir_fd, run->id, 0);
                return r;
        }
        run->capture = TAKE_PTR(c);
        return 0;
}

/* Root, or a caller polkit authorizes for org.sbx.capture. 1: go on; 0: polkit is being asked; < 0: refused. */
static int check_capture_allowed(Manager *m, sd_bus_message *msg, uid_t uid, sd_bus_error *error) {
        int r;

        r = polkit_check_async(&m->polkit, msg, POLKIT_ACTION_CAPTURE, uid, capture_method, m);
        if (r < 0) {
                if (r != -EACCES)
                        log_debug_errno(r, "Cannot ask polkit about uid %u: %m", (unsigned) uid);
                return sd_bus_error_setf(error, ERR_ACCESS, "capture needs root or polkit's " POLKIT_ACTION_CAPTURE);
        }
        return r > 0 ? 1 : 0;
}

static void log_capture_enabled(Run *run, const char *tenant, uid_t uid, bool extended) {
        const RunCapture *rc = &run->record->capture;
        char until[TIMESTAMP_MAX], uid_s[16];

        (void) snprintf(uid_s, sizeof(uid_s), "%u", (unsigned) uid);
        if (!format_timestamp(until, rc->until))
                strcpy(until, "?");
        log_event(LOG_NOTICE, SBX_MESSAGE_CAPTURE_ENABLED,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit },
                             { "SBX_PROFILE", run->record->profile }, { "SBX_TENANT", run->record->tenant },
                             { "SBX_CAPTURE_BY_TENANT", tenant }, { "SBX_CAPTURE_BY_UID", uid_s },
                             { "SBX_CAPTURE_UNTIL", until }),
                  "Run %s: output capture %s by tenant %s (uid %s) until %s, into " SBX_CAPTURE_DIR "/%s.", run->id,
                  extended ? "extended" : "enabled", tenant, uid_s, until, run->id);
}

int capture_method(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        char tenant[TENANT_ID_LEN + 1];
        RunCapture *rc, saved;
        usec_t duration, until;
        const char *id;
        bool extended;
        uid_t uid;
        Run *run;
        int r;

        r = sd_bus_message_read(msg, "st", &id, &duration);
        if (r < 0)
                return r;
        if (!run_id_is_valid(id))
                return sd_bus_error_setf(error, ERR_INVALID, "run: '%s' is not a run id", id);
        r = capture_check_duration(duration);
        if (r == -EINVAL)
                return sd_bus_error_setf(error, ERR_INVALID, "duration: must be more than 0");
        if (r < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "duration: at most %" PRIu64 " s (24 h)",
                                         CAPTURE_DURATION_MAX / USEC_PER_SEC);
        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        /* before anything about the run is said */
        r = check_capture_allowed(m, msg, uid, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        run = manager_find_run(m, id);
        if (!run) {
                _cleanup_(run_record_freep) RunRecord *rec = NULL;

                r = store_read(&m->store, id, &rec);
                if (r == -ENOENT)
                        return sd_bus_error_setf(error, ERR_NO_RUN, "run: no run %s", id);
                if (r < 0)
                        return r;
                return sd_bus_error_setf(error, ERR_NO_RUN, "run %s has finished: there is no output left to capture",
                                         id);
        }
        rc = &run->record->capture;
        if (run->finalizing || run->stop_requested || run->record->finished)
                return sd_bus_error_setf(error, ERR_NO_RUN, "run %s is ending: there is no output left to capture", id);
        if (run->claim || run->pending)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its command has not started yet", id);
        if (run->sandbox)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s is a sandbox: each of its commands' output "
                                         "is relayed by a supervisor of its own, which capture does not reach", id);
        if (!run->record->limits.known || run->record->limits.output == 0)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its output is not relayed by its exec helper "
                                         "(profile '%s' sets no output limit, so the command writes to its caller's "
                                         "descriptors directly): nothing could be captured",
                                         id, strna(run->record->profile));
        if (run_capture_enabled(rc) && !run->capture)
                return sd_bus_error_setf(error, ERR_CANNOT_CAPTURE, "run %s: its capture has ended, and is enabled once "
                                         "per run", id);

        until = now_realtime() + duration;
        saved = *rc;
        extended = run->capture != NULL;
        if (extended) {
                /* on already: a new expiry, from now (shorter or longer) */
                r = sd_event_source_set_time(run->capture->expiry, until);
                if (r < 0)
                        return r;
        } else {
                r = capture_begin(run, until, error);
                if (r < 0)
                        return r;
                rc->enabled_at = now_realtime();
                rc->bytes = 0;
        }
        rc->until = until;
        strcpy(rc->by_tenant, tenant);
        r = store_write(&m->store, run->record);
        if (r < 0) {
                /* the record must say so before anything is captured: undo */
                *rc = saved;
                if (!extended) {
                        _cleanup_close_ int dir_fd = capture_dir_open();

                        run->capture = capture_free(run->capture);
                        if (dir_fd >= 0)
                                (void) unlinkat(dir_fd, run->id, 0);
                } else
                        (void) sd_event_source_set_time(run->capture->expiry, saved.until);
                return log_error_errno(r, "Failed to write the record of run %s: %m", run->id);
        }
        log_capture_enabled(run, tenant, uid, extended);
        run_object_changed(run);
        return sd_bus_reply_method_return(msg, "t", until);
}

static bool capture_file_claimed(RunRecord **recs, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(recs[i]->run_id, name))
                        return run_capture_enabled(&recs[i]->capture) && recs[i]->capture.deleted_at == 0;
        return false;
}

size_t capture_reap(Manager *m, usec_t now) {
        _cleanup_close_ int dir_fd = -EBADF;
        RunRecord **recs = NULL;
        size_t n = 0, deleted = 0;
        DIR *d;
        int r;

        dir_fd = capture_dir_open();
        if (dir_fd < 0) {
                log_warning_errno(dir_fd, "Cannot open " SBX_CAPTURE_DIR ", capture files not reaped: %m");
                return 0;
        }
        r = store_load_all(&m->store, &recs, &n);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the records, capture files not reaped: %m");
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                Run *run = manager_find_run(m, recs[i]->run_id);
                RunRecord *rec = run ? run->record : recs[i]; /* a followed run's own copy is the one it writes */
                bool changed = false;

                if (!run_capture_enabled(&rec->capture))
                        continue;
                if (run_capture_active(&rec->capture) && (!run || !run->capture || now >= rec->capture.until)) {
                        if (run && run->capture)
                                capture_end(run, "expired");
                        else /* sbxd restarted: the helper's copy ended with the earlier sbxd's end of the pipe */
                                rec->capture.ended_at = now;
                        changed = true;
                }
                if (run_capture_expired(&rec->capture, now)) {
                        if (unlinkat(dir_fd, rec->run_id, 0) < 0 && errno != ENOENT)
                                log_warning_errno(negative_errno(), "Failed to delete the capture of run %s: %m",
                                                  rec->run_id);
                        else {
                                rec->capture.deleted_at = now;
                                changed = true;
                                deleted++;
                                log_info("Run %s: capture expired, file deleted.", rec->run_id);
                        }
                }
                if (changed && (r = store_write(&m->store, rec)) < 0)
                        log_warning_errno(r, "Failed to write the record of run %s: %m", rec->run_id);
                recs[i]->capture = rec->capture; /* for the sweep below */
        }

        /* files no record speaks for (a record removed, one never written) */
        d = fdopendir(fcntl(dir_fd, F_DUPFD_CLOEXEC, 3));
        if (d) {
                for (struct dirent *de; (de = readdir(d));) {
                        if (de->d_name[0] == '.' || capture_file_claimed(recs, n, de->d_name))
                                continue;
                        if (unlinkat(dir_fd, de->d_name, 0) >= 0) {
                                deleted++;
                                log_info("Capture file %s deleted: no record keeps it.", de->d_name);
                        }
                }
                closedir(d);
        }
        run_records_free(recs, n);
        return deleted;
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

/* Captures past their expiry, and those of adopted runs (their copy ended with the earlier sbxd). */
static void capture_gc(Manager *m, bool runs_known) {
        (void) capture_reap(m, now_realtime());
}

static void capture_free_run(Run *run) {
        run->capture = capture_free(run->capture);
}

const Feature feature_capture = {
        .name = "capture",
        .ended = capture_run_ended,
        .gc = capture_gc,
        .free_run = capture_free_run,
};
