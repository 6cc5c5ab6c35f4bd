/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: sbxd's bus connection and event loop, what the runs and their features need of the host
 * and of systemd (the caller's tenant, the host directories and addresses a run names, the calls for
 * units of sbx's own), sbxd's start-up (the features' init and start hooks), the adoption of the runs
 * an earlier sbxd started, and the sweep of what ended runs left (gc). A run's life itself is run.c's. */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "command.h"
#include "direct.h"
#include "feature.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "message-ids.h"
#include "unit-bus.h"
#include "unit-journal.h"

/* A run adopted from an earlier sbxd has no client until one calls Attach (sbxctl tries for 20 s):
 * after this long without one, its client is taken to be gone, and the run ends like any run whose
 * client went away. */
#define ATTACH_TIMEOUT_USEC (60 * USEC_PER_SEC)

Run *manager_find_run(Manager *m, const char *id) {
        for (Run *r = m->runs; r; r = r->next)
                if (streq(r->id, id))
                        return r;
        return NULL;
}

/* The caller's uid as the bus recorded it when the caller connected (SO_PEERCRED), never a value
 * sd-bus filled in from /proc/<pid>/status, which a caller can change by exec'ing a setuid program. */
int manager_caller_uid(sd_bus_message *msg, uid_t *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        sd_bus *bus = sd_bus_message_get_bus(msg);
        uint64_t augmented;
        int r;

        /* on sbxd's own socket (direct.h: a server connection): the peer's, as the kernel recorded it at
         * connect(); on the system bus, dbus-daemon reports UnixUserID (the peer's effective uid at connect
         * time) as EUID */
        if (sd_bus_is_server(bus) > 0)
                r = sd_bus_get_owner_creds(bus, SD_BUS_CREDS_EUID, &creds);
        else
                r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        augmented = sd_bus_creds_get_augmented_mask(creds);
        if (augmented & SD_BUS_CREDS_EUID)
                return -EPERM;
        return sd_bus_creds_get_euid(creds, ret);
}

/* The dynamic user of unit ("sbx-<profile>-<ID>.service" runs as "sbx-<first 16 of ID>"): whether PID 1
 * still has it (it releases it when the unit goes inactive). Asked on the bus, not through NSS, which
 * knows dynamic users only with nss-systemd installed. An answer other than "no such user" counts as
 * still there. */
bool manager_unit_user_exists(Manager *m, const char *unit) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id = unit ? strrchr(unit, '-') : NULL;
        char name[32];
        int r;

        if (!id || strlen(id + 1) < 16)
                return true;
        snprintf(name, sizeof(name), "sbx-%.16s", id + 1);
        r = sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_MANAGER, "LookupDynamicUserByName", &error, &reply, "s",
                               name);
        return r >= 0 || !sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchDynamicUser");
}

/* Whether no mount point in the mount table names the run (sbxd's mount namespace receives the host's
 * mounts and unmounts: ProtectSystem= makes it a slave). An unreadable table counts as not gone. */
bool manager_run_mounts_gone(const char *run_id) {
        _cleanup_free_ char *text = NULL;

        if (read_file_at(AT_FDCWD, "/proc/self/mountinfo", 64 * 1024 * 1024, &text, NULL) < 0)
                return false;
        return !mountinfo_has_mount_point_with(text, run_id);
}

/* Signals are only believed from their real sender: systemd's current unique name, or the bus itself.
 * (A unicast signal reaches us whatever our match rules say.) */
bool manager_from_systemd(Manager *m, sd_bus_message *msg) {
        return m->systemd_owner && streq_ptr(sd_bus_message_get_sender(msg), m->systemd_owner);
}

bool manager_from_bus_driver(sd_bus_message *msg) {
        return streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus");
}

/* After what grows the heap a lot for a moment (a burst of runs, every record listed as JSON): glibc keeps
 * freed memory mapped; a long-lived daemon gives it back. */
void manager_heap_trim(void) {
        (void) malloc_trim(0);
}

int manager_new_transient_call(Manager *m, const char *unit, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &call, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(sv)");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(call);
        return 0;
}

int manager_new_oneshot_call(Manager *m, const char *unit, const char *desc, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r;

        r = manager_new_transient_call(m, unit, &call);
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)(sv)", "Description", "s", desc, "Type", "s", "oneshot",
                                          "CollectMode", "s", "inactive-or-failed", "Slice", "s", "system.slice");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(call);
        return 0;
}

int manager_send_oneshot_call(Manager *m, sd_bus_message *call, char **argv, sd_bus_slot **ret_slot,
                              sd_bus_message_handler_t callback, void *userdata) {
        int r;

        r = manager_append_exec(call, "ExecStart", argv, false);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r >= 0)
                r = sd_bus_message_append(call, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(m->bus, ret_slot, call, callback, userdata, 0);
        return r;
}

/* Exec commands of the plain kind (ExecStart=, ExecStartPre=, ExecStopPost=: "a(sasb)"). systemd 252 writes
 * the Ex kind into the transient unit file under keys it does not read back: at the next daemon-reload
 * such a unit turns "bad-setting" and loses those commands (a running run's hand-over and figures). The
 * plain kind survives; what its flags gave is had otherwise: "+" by PermissionsStartOnly=yes (every
 * command but ExecStart= runs outside the unit's user and sandboxing, as all of sbx's are privileged),
 * "no-env-expand" by doubling each "$" of the arguments ("$$" is a literal "$" to systemd). */
int manager_append_exec(sd_bus_message *m, const char *name, char **argv, bool ignore_failure) {
        int r;

        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "a(sasb)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sasb)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sasb");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", argv[0]);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "s");
        STRV_FOREACH(a, argv) {
                _cleanup_free_ char *escaped = NULL;

                if (r < 0)
                        break;
                r = exec_arg_escape(*a, &escaped);
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", escaped);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", ignore_failure);
        for (int i = 0; i < 4 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

int manager_unit_object_path(const char *unit, char **ret) {
        return sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, ret);
}

/* The host's own addresses as "ADDR/32" or "ADDR/128" (link-local IPv6 ones are already denied as a
 * range, and scoped addresses cannot be written without their interface; loopback ones are left out). */
int manager_host_addresses(char ***ret) {
        struct ifaddrs *ifa = NULL;
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        if (getifaddrs(&ifa) < 0)
                return -errno;
        for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                char buf[INET6_ADDRSTRLEN], *s = NULL, **t;
                int family = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;

                /* loopback: a run's 127.0.0.0/8 and ::1 are its own namespace's (and the host's are
                 * denied as a range anyway) */
                if (family == AF_INET) {
                        const struct in_addr *a4 = &((struct sockaddr_in *) i->ifa_addr)->sin_addr;

                        if ((ntohl(a4->s_addr) >> 24) == 127)
                                continue;
                        inet_ntop(AF_INET, a4, buf, sizeof(buf));
                } else if (family == AF_INET6) {
                        const struct in6_addr *a6 = &((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr;

                        if (IN6_IS_ADDR_LINKLOCAL(a6) || IN6_IS_ADDR_LOOPBACK(a6))
                                continue;
                        inet_ntop(AF_INET6, a6, buf, sizeof(buf));
                } else
                        continue;
                if (asprintf(&s, "%s/%d", buf, family == AF_INET ? 32 : 128) < 0) {
                        freeifaddrs(ifa);
                        return -ENOMEM;
                }
                if (strv_contains(l, s)) {
                        free(s);
                        continue;
                }
                t = realloc(l, (n + 2) * sizeof(char *));
                if (!t) {
                        free(s);
                        freeifaddrs(ifa);
                        return -ENOMEM;
                }
                l = t;
                l[n++] = s;
                l[n] = NULL;
        }
        freeifaddrs(ifa);
        *ret = TAKE_PTR(l);
        return 0;
}

static int open_dir_no_symlinks(const char *path, int *ret) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -EBADF;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        if (path[0] != '/')
                return -EINVAL;
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int nfd;

                if (streq(c, ".") || streq(c, ".."))
                        return -EINVAL;
                nfd = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0)
                        return -errno;
                safe_close(fd);
                fd = nfd;
        }
        /* a real (not O_PATH) descriptor of the directory itself */
        *ret = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return *ret < 0 ? -errno : 0;
}

/* A host directory a run binds: the workspace (exclusive: one run at a time, handed over to the run's
 * user) or the dataset (read-only, shared). */
int manager_check_host_dir(Manager *m, const char *what, const char *path, uid_t uid, bool exclusive, struct stat *ret_st,
                          sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        /* Walk the path one component at a time without following any symlink (sbxctl sends the
         * canonical path): a symlinked parent could otherwise take the bind mount, which systemd makes
         * as root, somewhere the lexical checks never looked. The caller must own the directory (root
         * may use any). The exec helper later checks that what got bound is this very directory. */
        r = open_dir_no_symlinks(path, &fd);
        if (r < 0 && uid == 0) {
                if (r == -ENOENT)
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: '%s' does not exist", what, path);
                if (r == -ENOTDIR || r == -ELOOP)
                        return sd_bus_error_setf(error, ERR_INVALID,
                                                 "%s: '%s' is not a directory (or a component is a symlink)", what, path);
                return sd_bus_error_setf(error, ERR_INVALID, "%s: '%s': %s", what, path, strerror(-r));
        }
        /* Others get one answer for everything, so that sbxd (which can see every path) does not tell a
         * caller what exists where it could not look itself. */
        if (r < 0 || fstat(fd, &st) < 0 || (uid != 0 && st.st_uid != uid))
                return sd_bus_error_setf(error, ERR_ACCESS,
                                         "%s: '%s' is not owned by the caller (or is not a directory, or a path "
                                         "component is a symlink)", what, path);
        if (st.st_uid == 0 && uid != 0)
                return sd_bus_error_setf(error, ERR_ACCESS, "%s: '%s' is owned by root", what, path);
        /* One run per workspace: the hand-over gives the tree to one run's user at a time (a run whose
         * command has ended and whose workspace is back with its owner holds it no more). */
        for (Run *o = m->runs; exclusive && o; o = o->next) {
                size_t a, b;

                if (!o->workspace || o->ws_back)
                        continue;
                a = strlen(o->workspace);
                b = strlen(path);
                if ((o->ws_dev == st.st_dev && o->ws_ino == st.st_ino) ||
                    (strneq(o->workspace, path, MIN(a, b)) &&
                     (a == b || (a < b ? path[a] : o->workspace[b]) == '/')))
                        return sd_bus_error_setf(error, ERR_INVALID, "workspace: '%s' is in use by run %s", path,
                                                 o->id);
        }
        *ret_st = st;
        return 0;
}

uint64_t manager_stack_limit(void) {
        struct rlimit rl;

        /* the run's unit has the soft limit sbxd's has: systemd's DefaultLimitSTACK= */
        if (getrlimit(RLIMIT_STACK, &rl) < 0)
                return COMMAND_STACK_DEFAULT;
        return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_cur;
}

int manager_caller_tenant(Manager *m, sd_bus_message *msg, char tenant[static TENANT_ID_LEN + 1], uid_t *ret_uid) {
        uid_t uid;
        int r;

        r = manager_caller_uid(msg, &uid);
        if (r < 0)
                return r;
        store_tenant_id(&m->store, uid, tenant);
        if (ret_uid)
                *ret_uid = uid;
        return 0;
}

/* ---- runs of an earlier sbxd ----------------------------------------------------------------------- */

static int on_attach_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        Run *run = userdata;

        run->attach_timeout = sd_event_source_disable_unref(run->attach_timeout);
        if (!run->client) {
                log_debug("Run %s: no client attached within %" PRIu64 "s.", run->id,
                          ATTACH_TIMEOUT_USEC / USEC_PER_SEC);
                (void) run_stop(run, SIGHUP);
        }
        return 0;
}

static int on_journal_retry(sd_event_source *s, uint64_t usec, void *userdata);

/* The run's unit ended while no sbxd ran, and systemd collected it: how it ended is read from PID 1's
 * entries in the journal, its peaks and limit events from what its figures reader left. journald may be
 * a moment behind a restart: with retry, once more after a second. Without an end in the journal
 * (journald stopped), the run is lost. What only the helper knew (output bytes, denied calls) is not
 * known either way. */
static void run_end_unwatched(Run *run, bool retry) {
        UnitOutcome o = {};
        int r;

        run->record->unit_gone = true;
        r = unit_journal_outcome(run->unit, &o);
        if (r == -ENOENT && retry &&
            sd_event_add_time_relative(run->manager->event, &run->journal_retry, CLOCK_MONOTONIC, USEC_PER_SEC, 0,
                                       on_journal_retry, run) >= 0)
                return;
        if (r < 0) {
                log_event(LOG_WARNING, SBX_MESSAGE_RUN_LOST,
                          LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit }),
                          "Run %s: unit %s ended while sbxd was not running and the journal has no end of it (%s); "
                          "recording it as lost.", run->id, run->unit,
                          r == -ENOENT ? "not logged" : strerror(-r));
                run->record->stop_reason = STOP_LOST;
                run->record->ended_at = now_realtime();
                free(run->record->error);
                run->record->error = strdup("the unit ended while sbxd was not running");
                run_take_figures(run);
                run_complete(run);
                return;
        }
        run->record->ended_at = o.ended_at > 0 ? o.ended_at : now_realtime();
        /* no logged exit of a unit that failed: its command ran (it was running when sbxd went), how it
         * ended is not known */
        run_apply_outcome(run, o.result, o.code == 0 && !streq(o.result, "success") ? -1 : o.code, o.status, NULL);
        log_event(LOG_NOTICE, SBX_MESSAGE_RUN_RECOVERED,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit }),
                  "Run %s: unit %s ended while sbxd was not running: result '%s', recorded from the journal.",
                  run->id, run->unit, o.result);
        unit_outcome_done(&o);
        run_complete(run);
}

static int on_journal_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Run *run = userdata;

        run->journal_retry = sd_event_source_disable_unref(run->journal_retry);
        run_end_unwatched(run, false);
        return 0;
}

static int on_adopt_ref_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        run->slot_start = sd_bus_slot_unref(run->slot_start);
        if (e) {
                log_debug("Run %s: unit %s is gone: %s", run->id, run->unit, e->message);
                run_end_unwatched(run, true);
                return 0;
        }
        log_event(LOG_INFO, SBX_MESSAGE_RUN_ADOPTED,
                  LOG_FIELDS({ "SBX_RUN_ID", run->id }, { "SBX_UNIT", run->unit }),
                  "Run %s: adopted running unit %s.", run->id, run->unit);
        if (!run->client &&
            sd_event_add_time_relative(run->manager->event, &run->attach_timeout, CLOCK_MONOTONIC,
                                       ATTACH_TIMEOUT_USEC, 0, on_attach_timeout, run) < 0)
                log_warning("Run %s: cannot wait for its client; it ends with its own limits.", run->id);
        (void) run_ask_state(run);
        return 0;
}

/* An adopted run's network: its map entries are still in force (pinned); take up its resolver and its
 * telemetry again, with the table compiled anew from its profile. */
/* Records that still say "running" belong to runs an earlier sbxd started: follow the ones whose unit
 * still exists to their end, and close the others as lost. */
/* The workspace of a run adopted from an earlier sbxd, from its unit's BindPaths= (the record does not
 * keep paths): it stays locked to the run, as it was. */
static void run_adopt_workspace(Manager *m, Run *run) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *src, *dst;
        int ignore, r;
        uint64_t flags;

        r = sd_bus_get_property(m->bus, SD_DEST, run->unit_path, "org.freedesktop.systemd1.Service", "BindPaths",
                                &error, &reply, "a(ssbt)");
        if (r < 0) {
                if (!sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.UnknownObject") &&
                    !sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                        log_warning("Run %s: cannot read its unit's bind mounts (%s); its workspace, if any, is not "
                                    "locked.", run->id, error.message ?: strerror(-r));
                return;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssbt)");
        while (r > 0 && (r = sd_bus_message_read(reply, "(ssbt)", &src, &dst, &ignore, &flags)) > 0) {
                struct stat st;

                if (!streq(dst, SBX_WORKSPACE))
                        continue;
                free(run->workspace);
                run->workspace = strdup(src);
                if (run->workspace && stat(src, &st) >= 0) {
                        run->ws_dev = st.st_dev;
                        run->ws_ino = st.st_ino;
                }
                log_debug("Run %s: workspace %s stays locked to it.", run->id, src);
        }
}

static int manager_adopt_runs(Manager *m) {
        RunRecord **recs = NULL;
        size_t n = 0;
        int r;

        r = store_load_all(&m->store, &recs, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(run_freep) Run *run = NULL;
                RunRecord *rec = recs[i];

                if (rec->finished || !rec->unit)
                        continue;
                run = calloc(1, sizeof(Run));
                if (!run) {
                        r = -ENOMEM;
                        break;
                }
                run->manager = m;
                run->stop_disk_used = UINT64_MAX;
                run->record = TAKE_PTR(recs[i]);
                strcpy(run->id, rec->run_id);
                run->job_done = true;
                if (!(run->unit = strdup(rec->unit)) ||
                    policy_cgroup_path(strna(rec->profile), run->id, &run->cgroup_path) < 0 ||
                    manager_unit_object_path(run->unit, &run->unit_path) < 0 ||
                    (rec->disk_max > 0 && (policy_space_path(run->id, &run->space_path) < 0 ||
                                           policy_space_unit_name(run->id, &run->space_unit) < 0))) {
                        r = -ENOMEM;
                        break;
                }
                /* a run started by an sbxd from before profile slices lives directly in sbx.slice */
                if (!run_cgroup_exists(run->cgroup_path)) {
                        _cleanup_free_ char *old = NULL;

                        if (asprintf(&old, "/sys/fs/cgroup/" SBX_SLICE_PARENT "/%s", run->unit) >= 0 &&
                            run_cgroup_exists(old))
                        {
                                free(run->cgroup_path);
                                run->cgroup_path = TAKE_PTR(old);
                        }
                }
                r = run_watch_unit(run);
                /* RefUnit by name, not Ref on the unit's object: a call to the object of a unit that is
                 * not loaded makes systemd load it (as never started, inactive), and a run killed with its
                 * sbxd before StartTransientUnit would look like one that ended well. */
                if (r >= 0)
                        r = sd_bus_call_method_async(m->bus, &run->slot_start, SD_DEST, SD_PATH, SD_MANAGER, "RefUnit",
                                                     on_adopt_ref_reply, run, "s", run->unit);
                if (r < 0) {
                        log_warning_errno(r, "Failed to adopt run %s, ignoring: %m", run->id);
                        r = 0;
                        continue;
                }
                FEATURE_FOREACH(f)
                        if ((*f)->adopt)
                                (*f)->adopt(run);
                run_adopt_workspace(m, run);
                run->next = m->runs;
                m->runs = TAKE_PTR(run);
        }
        run_records_free(recs, n);
        return r;
}

/* Removes the space of run id, which no unit will remove (its space unit is gone: its removal failed, or
 * the system stopped in between), with a unit of the same name that does only that. */
int manager_remove_space(Manager *m, const char *id) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_free_ char *unit = NULL, *path = NULL, *remove = NULL, *desc = NULL;
        int r;

        if (policy_space_unit_name(id, &unit) < 0 || policy_space_path(id, &path) < 0 ||
            asprintf(&remove, "--space=remove:%s", path) < 0 ||
            asprintf(&desc, "sbx removal of the space of ended run %s", id) < 0)
                return -ENOMEM;
        log_warning("Removing the space %s of run %s, left after its unit.", path, id);
        r = manager_new_oneshot_call(m, unit, desc, &call);
        if (r >= 0)
                r = manager_send_oneshot_call(m, call, (char *[]) { (char *) SBX_EXEC_PATH, remove, NULL }, NULL, NULL,
                                              NULL);
        if (r < 0)
                return log_warning_errno(r, "Failed to remove the space %s, ignoring: %m", path);
        return 0;
}

/* When sbxd starts: the spaces whose unit is gone. Runs followed (adopted) keep theirs; a pooled unit of an
 * earlier sbxd takes its own along when it is stopped. */
static void manager_sweep_spaces(Manager *m) {
        _cleanup_(closedirp) DIR *d = opendir(SBX_SPACE_DIR);
        struct dirent *de;

        if (!d) {
                if (errno != ENOENT)
                        log_warning_errno(-errno, "Cannot read %s, ignoring: %m", SBX_SPACE_DIR);
                return;
        }
        while ((de = readdir(d))) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_free_ char *unit = NULL;
                bool followed = false;
                int r;

                if (!run_id_is_valid(de->d_name))
                        continue;
                for (Run *run = m->runs; run; run = run->next)
                        if (streq(run->id, de->d_name))
                                followed = true;
                if (followed)
                        continue;
                if (policy_space_unit_name(de->d_name, &unit) < 0)
                        return;
                r = sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit", &error, NULL, "s", unit);
                if (r >= 0 || !sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                        continue; /* its unit removes it */
                (void) manager_remove_space(m, de->d_name);
        }
}

/* ---- the other methods ---------------------------------------------------------------------------- */

/* The record of a run the caller may see: its own, or any for root and whom polkit authorizes for
 * org.sbx.manage-all-runs. Returns 1 with *ret set; 0 when polkit is being asked (the method runs again
 * with the answer: return 1 without a reply); an error otherwise. */
int manager_lookup_owned(Manager *m, sd_bus_message *msg, const char *id, sd_bus_message_handler_t method,
                        RunRecord **ret, sd_bus_error *error) {
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        char tenant[TENANT_ID_LEN + 1];
        uid_t uid;
        int r;

        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        if (!run_id_is_valid(id))
                return sd_bus_error_setf(error, ERR_INVALID, "run: '%s' is not a run id", id);
        r = store_read(&m->store, id, &rec);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, ERR_NO_RUN, "run: no run %s", id);
        if (r < 0)
                return r;
        if (!streq(tenant, rec->tenant)) {
                r = polkit_check_async(&m->polkit, msg, POLKIT_ACTION_MANAGE_ALL, uid, method, m);
                if (r == 0)
                        return 0;
                if (r < 0) {
                        if (r != -EACCES)
                                log_debug_errno(r, "Cannot ask polkit about uid %u: %m", (unsigned) uid);
                        /* Same answer as for a run that does not exist: ids of others are not confirmed. */
                        return sd_bus_error_setf(error, ERR_NO_RUN, "run: no run %s", id);
                }
        }
        *ret = TAKE_PTR(rec);
        return 1;
}

int manager_new(Manager **ret) {
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof(Manager));
        int r;

        if (!m)
                return -ENOMEM;
        m->store.dir_fd = m->store.figures_fd = -EBADF;
        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        while (m->runs)
                run_free(m->runs);
        m->direct = direct_server_free(m->direct);
        FEATURE_FOREACH(f)
                if ((*f)->stop)
                        (*f)->stop(m);
        sd_event_source_disable_unref(m->store_retry);
        sd_event_source_disable_unref(m->store_post);
        sd_bus_slot_unref(m->slot_job_removed);
        sd_bus_slot_unref(m->slot_unit_removed);
        sd_bus_slot_unref(m->slot_systemd_owner);
        polkit_registry_done(&m->polkit);
        free(m->systemd_owner);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        store_close(&m->store);
        free(m);
        return NULL;
}

static int on_systemd_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *name, *old, *new;

        if (!manager_from_bus_driver(msg) || sd_bus_message_read(msg, "sss", &name, &old, &new) < 0 ||
            !streq(name, SD_DEST))
                return 0;
        free(m->systemd_owner);
        m->systemd_owner = isempty(new) ? NULL : strdup(new);
        log_debug("systemd is now %s on the bus.", strna(m->systemd_owner));
        return 0;
}

static bool unit_has_run(const char *unit, void *userdata) {
        Manager *m = userdata;

        for (Run *run = m->runs; run; run = run->next)
                if (streq(run->unit, unit))
                        return true;
        return false;
}

/* Finished records the store could not write (disk full, read-only) are written once it can again. */
#define STORE_RETRY_USEC (5 * USEC_PER_SEC)

static int on_store_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->store.pending && store_write_pending(&m->store) > 0) {
                (void) sd_event_source_set_time_relative(s, STORE_RETRY_USEC);
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* After each event: a record kept in memory arms the retry (idle otherwise, sbxd does not wake up). */
static int on_post_event(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        int enabled = SD_EVENT_OFF;

        if (!m->store.pending || !m->store_retry ||
            sd_event_source_get_enabled(m->store_retry, &enabled) < 0 || enabled != SD_EVENT_OFF)
                return 0;
        (void) sd_event_source_set_time_relative(m->store_retry, STORE_RETRY_USEC);
        return sd_event_source_set_enabled(m->store_retry, SD_EVENT_ONESHOT);
}

int manager_start(Manager *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, adopted;

        r = store_open(&m->store, SBX_STATEDIR);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(m->event, &m->store_retry, CLOCK_MONOTONIC, STORE_RETRY_USEC, 0,
                                       on_store_retry, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->store_retry, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_post(m->event, &m->store_post, on_post_event, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up a timer: %m");

        r = sd_bus_open_system_with_description(&m->bus, "sbxd");
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        /* without the bus sbxd can do nothing: its event loop ends with status 1 (see main()) */
        r = sd_bus_set_exit_on_disconnect(m->bus, true);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the bus connection: %m");
        m->polkit.bus = m->bus;

        r = sd_bus_match_signal(m->bus, &m->slot_systemd_owner, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "NameOwnerChanged", on_systemd_owner_changed, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch systemd's bus name: %m");
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *owner;

                r = sd_bus_call_method(m->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetNameOwner", &error, &reply, "s", SD_DEST);
                if (r < 0)
                        return log_error_errno(r, "Failed to find systemd on the bus: %s", error.message);
                r = sd_bus_message_read(reply, "s", &owner);
                if (r < 0 || !(m->systemd_owner = strdup(owner)))
                        return log_error_errno(r < 0 ? r : -ENOMEM, "Failed to read systemd's bus name: %m");
        }
        r = sd_bus_match_signal(m->bus, &m->slot_job_removed, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
                                run_on_job_removed, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch JobRemoved: %m");
        r = sd_bus_match_signal(m->bus, &m->slot_unit_removed, SD_DEST, SD_PATH, SD_MANAGER, "UnitRemoved",
                                run_on_unit_removed, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch UnitRemoved: %m");
        /* systemd emits unit signals only while someone is subscribed. */
        r = sd_bus_call_method(m->bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", &error, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to subscribe to systemd: %s", error.message);

        /* what the features need to take up runs (the network's programs and maps) */
        FEATURE_FOREACH(f)
                if ((*f)->init) {
                        r = (*f)->init(m);
                        if (r < 0)
                                return r;
                }

        r = adopted = manager_adopt_runs(m);
        if (r < 0)
                log_warning_errno(r, "Failed to look for runs of an earlier sbxd, ignoring: %m");
        /* what the features made for runs that ended while no sbxd ran (the network's entries first) */
        FEATURE_FOREACH_REVERSE(f)
                if ((*f)->gc)
                        (*f)->gc(m, adopted >= 0);
        /* figures of units that ended while no sbxd ran: their records are closed already */
        store_sweep_figures(&m->store, unit_has_run, m);
        manager_sweep_spaces(m);

        /* after the adoption: the features' own work (what is not a run's among sbx's units is left from an
         * earlier warm pool) */
        FEATURE_FOREACH(f)
                if ((*f)->start) {
                        r = (*f)->start(m);
                        if (r < 0)
                                return r;
                }

        return 0;
}
