/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxd's org.sbx.Manager1 interface: its method handlers and their request tables. Each handler decodes
 * its call and hands it to the run core (manager.h) or to the feature that answers it. */
#include <fcntl.h>
#include <signal.h>

#include "bus-errors.h"
#include "bus-fields.h"
#include "bus-manager.h"
#include "caches.h"
#include "capture.h"
#include "credentials.h"
#include "daemon-conf.h"
#include "export.h"
#include "images.h"
#include "log.h"
#include "message-ids.h"
#include "objects.h"
#include "reaper.h"
#include "sandbox.h"

static bool sandbox_name_is_allowed(const char *s) {
        return sandbox_name_is_valid(s) && !run_id_is_valid(s);
}

/* "credentials", "caches_ro": as, names (stored secrets, the profile's caches) */
static int read_names(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        char ***dst = field;
        int r;

        r = sd_bus_message_enter_container(msg, 'v', "as");
        if (r < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected an array of names", f->name);
        r = sd_bus_message_read_strv(msg, dst);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

/* "credential_fds": a{sh}, values by name, each a file descriptor of a regular file (or memfd) */
static int read_credential_fds(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        RunRequest *req = field;
        const char *name;
        int fd, r;

        r = sd_bus_message_enter_container(msg, 'v', "a{sh}");
        if (r < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected a{sh} (name, file descriptor)", f->name);
        r = sd_bus_message_enter_container(msg, 'a', "{sh}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "{sh}", &name, &fd)) > 0) {
                size_t n = strv_length(req->credential_fd_names);
                char **names;
                int *fds;

                if (n >= SBX_CREDENTIAL_FDS_MAX)
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: more than %u", f->name, SBX_CREDENTIAL_FDS_MAX);
                names = realloc(req->credential_fd_names, (n + 2) * sizeof(char *));
                if (!names)
                        return -ENOMEM;
                req->credential_fd_names = names;
                names[n] = NULL;
                fds = realloc(req->credential_fds, (n + 1) * sizeof(int));
                if (!fds)
                        return -ENOMEM;
                req->credential_fds = fds;
                fds[n] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (fds[n] < 0)
                        return -errno;
                names[n] = strdup(name);
                if (!names[n]) {
                        (void) close(fds[n]);
                        return -ENOMEM;
                }
                names[n + 1] = NULL;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

#define REQ_SANDBOX_ONLY 1u
#define REQ_RUN_ONLY 2u   /* TERM is a command's; a sandbox's commands come later (sbxd(8)) */

/* Run's and CreateSandbox's request (docs/dbus.md). */
static const BusField request_fields[] = {
        { "profile",           bus_field_string,       offsetof(RunRequest, profile) },
        { "workspace",         bus_field_string,       offsetof(RunRequest, workspace) },
        { "dataset",           bus_field_string,       offsetof(RunRequest, dataset) },
        { "network",           bus_field_string,       offsetof(RunRequest, network) },
        { "term",              bus_field_string,       offsetof(RunRequest, term), REQ_RUN_ONLY },
        { "tty",               bus_field_terminal,     offsetof(RunRequest, tty), REQ_RUN_ONLY },
        { "memory",            bus_field_u64_positive, offsetof(RunRequest, memory_max) },
        { "tasks",             bus_field_u64_positive, offsetof(RunRequest, tasks_max) },
        { "timeout_usec",      bus_field_u64_positive, offsetof(RunRequest, runtime_max) },
        { "cpu_percent",       bus_field_unsigned,     offsetof(RunRequest, cpu_quota_percent), .max = 100000 },
        { "credentials",       read_names,       offsetof(RunRequest, credentials) },
        { "credential_fds",    read_credential_fds,    0 },
        { "export_fd",         export_read_request_fd, 0, REQ_RUN_ONLY },
        { "caches_ro",         read_names,       offsetof(RunRequest, caches_ro) },
        { "argv_bytes",        bus_field_byte_strings, offsetof(RunRequest, argv_bytes), REQ_RUN_ONLY },
        { "environment",       bus_field_byte_strings, offsetof(RunRequest, env), REQ_RUN_ONLY },
        { "image",             bus_field_string,       offsetof(RunRequest, image) },
        { "idle_timeout_usec", bus_field_u64_positive, offsetof(RunRequest, idle_timeout), REQ_SANDBOX_ONLY },
        { "detach",            bus_field_bool,         offsetof(RunRequest, detach), REQ_SANDBOX_ONLY },
        { "wait_cleanup",      bus_field_bool,         offsetof(RunRequest, wait_cleanup), REQ_RUN_ONLY },
        { "name",              bus_field_string,       offsetof(RunRequest, sandbox_name), REQ_SANDBOX_ONLY,
          .valid = sandbox_name_is_allowed,
          .expected = "a sandbox name (1-64 of A-Z a-z 0-9 _ . -, not a run id)" },
        {}
};

static int read_request(sd_bus_message *msg, RunRequest *req, bool sandbox, sd_bus_error *error) {
        int r;

        r = bus_read_fields(msg, request_fields, sandbox ? REQ_RUN_ONLY : REQ_SANDBOX_ONLY, req, "request", error);
        if (r < 0 || sandbox)
                return r;
        r = sd_bus_message_read_strv(msg, &req->argv);
        if (r < 0)
                return r;
        req->stack_limit = manager_stack_limit();
        /* the terminal's name, unless the request gave "term" too */
        if (req->tty.term && !req->term)
                req->term = TAKE_PTR(req->tty.term);
        return bus_take_command(&req->argv, &req->argv_bytes, error);
}


/* Run() and CreateSandbox(): the caller, then its request, then the run core. */
static int run_request(sd_bus_message *msg, Manager *m, bool sandbox, sd_bus_error *error) {
        _cleanup_(run_request_freep) RunRequest *req = calloc(1, sizeof(RunRequest));
        uid_t uid;
        int r;

        if (!req)
                return -ENOMEM;
        r = manager_caller_uid(msg, &uid);
        if (r < 0)
                return r;
        r = read_request(msg, req, sandbox, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        return run_start_request(m, msg, req, uid, sandbox, error);
}

/* Every refused or failed request is one journal event: who asked, and why it was not run. */
static int method_start(sd_bus_message *msg, void *userdata, bool sandbox, sd_bus_error *error) {
        _cleanup_free_ char *escaped = NULL;
        const char *reason;
        char uid_str[16] = "";
        uid_t uid;
        int r;

        r = run_request(msg, userdata, sandbox, error);
        if (r >= 0 && !sd_bus_error_is_set(error))
                return r;
        if (manager_caller_uid(msg, &uid) >= 0)
                (void) snprintf(uid_str, sizeof uid_str, "%u", (unsigned) uid);
        reason = sd_bus_error_is_set(error) ? strna(error->message) : strerror(r < 0 ? -r : EIO);
        /* messages may quote what the caller sent (a path): one line in the journal, whatever it holds */
        reason = line_escape(reason, 0, &escaped) >= 0 ? escaped : "(not logged: out of memory)";
        log_event(LOG_NOTICE, SBX_MESSAGE_RUN_REFUSED,
                  LOG_FIELDS({ "SBX_CALLER_UID", uid_str[0] ? uid_str : NULL },
                             { "SBX_ERROR_NAME", sd_bus_error_is_set(error) ? error->name : NULL },
                             { "SBX_ERROR", reason }),
                  "%s request of uid %s refused: %s", sandbox ? "Sandbox" : "Run", uid_str[0] ? uid_str : "?",
                  reason);
        return r;
}

static int method_run(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_start(msg, userdata, false, error);
}

/* CreateSandbox(a{sv} request) -> s sandbox_id, once its helper is ready */
static int method_create_sandbox(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return method_start(msg, userdata, true, error);
}

/* The run a method names (its first argument) and its record, if the caller may see it: 1; 0: polkit is
 * being asked (manager_lookup_owned()). */
static int read_owned(Manager *m, sd_bus_message *msg, sd_bus_message_handler_t method, const char **ret_id,
                      RunRecord **ret, sd_bus_error *error) {
        int r;

        r = sd_bus_message_read(msg, "s", ret_id);
        if (r < 0)
                return r;
        return manager_lookup_owned(m, msg, *ret_id, method, ret, error);
}

static int method_get(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        _cleanup_free_ char *json = NULL;
        const char *id;
        int r;

        r = read_owned(m, msg, method_get, &id, &rec, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        r = run_record_to_json(rec, &json);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", json);
}

static int method_stop(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        const char *id;
        Run *run;
        int r;

        r = read_owned(m, msg, method_stop, &id, &rec, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        run = manager_find_run(m, id);
        if (!run)
                return sd_bus_error_setf(error, ERR_NO_RUN, "run: %s is not running", id);
        r = run_stop(run, SIGTERM);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

/* Attach(run_id) -> record: the caller becomes the client of a run that has none (it gets Finished, and
 * its disconnection ends the run); a run whose client is still connected stays its (Busy). sbxctl
 * calls it when the sbxd it started the run with went away (restarted by an upgrade): the run goes on,
 * and this sbxd, having adopted it, reports its end. The reply is the record as it is now; a finished
 * record means there is nothing left to wait for. */
static int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        _cleanup_free_ char *json = NULL;
        const char *id;
        Run *run;
        int r;

        r = read_owned(m, msg, method_attach, &id, &rec, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        run = manager_find_run(m, id);
        if (run && run->client && !streq(run->client, sd_bus_message_get_sender(msg)))
                /* its client is still there (it is watched): nobody takes a run away from it */
                return sd_bus_error_setf(error, ERR_BUSY, "run %s has a client", id);
        if (run) {
                r = run_set_client(run, sd_bus_message_get_sender(msg));
                if (r < 0)
                        return r;
                log_debug("Run %s: client %s attached.", run->id, run->client);
        }
        r = run_record_to_json(run ? run->record : rec, &json);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", json);
}

/* A reply of records as JSON, which can be large: the heap is given back after it. */
static int reply_json_trim(sd_bus_message *msg, char **json) {
        int r;

        r = sd_bus_reply_method_return(msg, "s", *json);
        *json = mfree(*json); /* before the trim (the reply's copy goes once it is sent) */
        manager_heap_trim();
        return r;
}

static int method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *json = NULL;
        char tenant[TENANT_ID_LEN + 1];
        uid_t uid;
        int r;

        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        r = store_list_json(&m->store, uid == 0 ? NULL : tenant, &json);
        if (r < 0)
                return r;
        return reply_json_trim(msg, &json);
}

/* Root, or a caller polkit authorizes for org.sbx.manage-all-runs. 1: go on; 0: polkit is being asked
 * (method runs again with its answer: return 1); < 0: refused, error set ("<what> needs root ..."). */
static int check_manage_all(Manager *m, sd_bus_message *msg, sd_bus_message_handler_t method, const char *what,
                            sd_bus_error *error) {
        uid_t uid;
        int r;

        r = manager_caller_uid(msg, &uid);
        if (r < 0)
                return r;
        r = polkit_check_async(&m->polkit, msg, POLKIT_ACTION_MANAGE_ALL, uid, method, m);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_ACCESS, "%s needs root or polkit's " POLKIT_ACTION_MANAGE_ALL, what);
        return r > 0 ? 1 : 0;
}

/* ListAll() -> s: every tenant's records, for root and whom polkit authorizes */
static int method_list_all(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *json = NULL;
        int r;

        r = check_manage_all(m, msg, method_list_all, "listing every user's runs", error);
        if (r <= 0)
                return r < 0 ? r : 1;
        r = store_list_json(&m->store, NULL, &json);
        if (r < 0)
                return r;
        return reply_json_trim(msg, &json);
}

/* CollectGarbage() -> s: one pass of the reaper (reaper.h), for root and whom polkit authorizes */
static int method_collect_garbage(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *json = NULL, *why = NULL;
        DaemonConf conf;
        int r;

        r = check_manage_all(m, msg, method_collect_garbage, "collecting garbage", error);
        if (r <= 0)
                return r < 0 ? r : 1;
        /* read for every pass: an edited file takes effect without a restart */
        r = daemon_conf_load(DAEMON_CONF_PATH, &conf, &why);
        if (r < 0)
                return why ? sd_bus_error_setf(error, ERR_INVALID, "%s", why) : r;
        r = reaper_collect(m, &conf, &json);
        if (r < 0)
                return r;
        return reply_json_trim(msg, &json);
}

/* GetRun(s run_id) -> o: the object of a run sbxd follows, of the caller's own (root: any) */
static int method_get_run(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *path = NULL;
        char tenant[TENANT_ID_LEN + 1];
        const char *id;
        uid_t uid;
        Run *run;
        int r;

        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        if (!run_id_is_valid(id))
                return sd_bus_error_setf(error, ERR_INVALID, "run: '%s' is not a run id", id);
        run = manager_find_run(m, id);
        if (!run || (uid != 0 && !streq(tenant, run->record->tenant)))
                return sd_bus_error_setf(error, ERR_NO_RUN, "run: no run %s is running (Get returns records)", id);
        r = run_object_path(run, &path);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", path);
}

/* A run's path: its start, its stop, its end (on the bus and on sbxd's own socket alike) */
#define RUN_PATH_METHODS                                                                                        \
        SD_BUS_METHOD_WITH_ARGS("Run",                                                                          \
                                SD_BUS_ARGS("a{sv}", request, "as", argv, "h", stdin_fd, "h", stdout_fd, "h", stderr_fd), \
                                SD_BUS_RESULT("s", run_id), method_run, SD_BUS_VTABLE_UNPRIVILEGED),            \
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("s", run_id), SD_BUS_NO_RESULT, method_stop,                \
                                SD_BUS_VTABLE_UNPRIVILEGED)
#define RUN_PATH_SIGNALS                                                                                        \
        SD_BUS_SIGNAL_WITH_ARGS("Exited", SD_BUS_ARGS("s", run_id, "s", record_json), 0),                       \
        SD_BUS_SIGNAL_WITH_ARGS("Finished", SD_BUS_ARGS("s", run_id, "s", record_json), 0)
#define EXEC_PATH_METHODS                                                                                       \
        SD_BUS_METHOD_WITH_ARGS("Exec",                                                                         \
                                SD_BUS_ARGS("s", sandbox, "a{sv}", options, "as", argv, "h", stdin_fd, "h", stdout_fd, \
                                            "h", stderr_fd),                                                    \
                                SD_BUS_RESULT("s", exec_id), sandbox_method_exec, SD_BUS_VTABLE_UNPRIVILEGED),  \
        SD_BUS_METHOD_WITH_ARGS("SignalExec", SD_BUS_ARGS("s", sandbox, "s", exec_id, "i", signal), SD_BUS_NO_RESULT, \
                                sandbox_method_signal_exec, SD_BUS_VTABLE_UNPRIVILEGED)
#define EXEC_PATH_SIGNALS                                                                                       \
        SD_BUS_SIGNAL_WITH_ARGS("ExecFinished", SD_BUS_ARGS("s", sandbox_id, "s", exec_id, "s", exec_json), 0)

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        RUN_PATH_METHODS,
        SD_BUS_METHOD_WITH_ARGS("Attach", SD_BUS_ARGS("s", run_id), SD_BUS_RESULT("s", record_json), method_attach,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Get", SD_BUS_ARGS("s", run_id), SD_BUS_RESULT("s", record_json), method_get,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("List", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", records_json), method_list,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListAll", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", records_json), method_list_all,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetRun", SD_BUS_ARGS("s", run_id), SD_BUS_RESULT("o", object), method_get_run,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CollectGarbage", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", report_json),
                                method_collect_garbage, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Capture", SD_BUS_ARGS("s", run_id, "t", duration_usec), SD_BUS_RESULT("t", until_usec),
                                capture_method, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSandbox", SD_BUS_ARGS("s", sandbox), SD_BUS_RESULT("o", object),
                                sandbox_method_get_object, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CreateSandbox", SD_BUS_ARGS("a{sv}", request), SD_BUS_RESULT("s", sandbox_id),
                                method_create_sandbox, SD_BUS_VTABLE_UNPRIVILEGED),
        EXEC_PATH_METHODS,
        SD_BUS_METHOD_WITH_ARGS("RemoveSandbox", SD_BUS_ARGS("s", sandbox), SD_BUS_NO_RESULT, sandbox_method_remove,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AddSecret", SD_BUS_ARGS("s", name, "h", value, "b", replace), SD_BUS_NO_RESULT,
                                secrets_method_add, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSecrets", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", secrets_json), secrets_method_list,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListCaches", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", caches_json), caches_method_list,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveCache", SD_BUS_ARGS("s", profile, "s", name), SD_BUS_NO_RESULT,
                                caches_method_remove, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("PruneCaches", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", removed_json), caches_method_prune,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ApproveExport", SD_BUS_ARGS("s", run_id, "s", item), SD_BUS_RESULT("s", path, "h", fd),
                                export_method_approve, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RejectExport", SD_BUS_ARGS("s", run_id, "s", item), SD_BUS_NO_RESULT,
                                export_method_reject, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Export", SD_BUS_ARGS("s", sandbox, "s", path, "h", directory),
                                SD_BUS_RESULT("s", report_json), export_method_live, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ImportImage", SD_BUS_ARGS("s", name, "h", source), SD_BUS_RESULT("s", digest),
                                images_method_import, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListImages", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", images_json), images_method_list,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveImage", SD_BUS_ARGS("s", image), SD_BUS_NO_RESULT, images_method_remove,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveSecret", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT, secrets_method_remove,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        RUN_PATH_SIGNALS,
        EXEC_PATH_SIGNALS,
        SD_BUS_VTABLE_END,
};

/* On sbxd's own socket (direct.h): what is on the path of a run and of a command in a sandbox, with the
 * same arguments, errors and signals. The rest of the interface (polkit's questions name a bus name;
 * objects are watched by bus name) stays on the system bus. */
static const sd_bus_vtable direct_vtable[] = {
        SD_BUS_VTABLE_START(0),
        RUN_PATH_METHODS,
        EXEC_PATH_METHODS,
        RUN_PATH_SIGNALS,
        EXEC_PATH_SIGNALS,
        SD_BUS_VTABLE_END,
};

int bus_manager_install_direct(Manager *m, sd_bus *peer) {
        return sd_bus_add_object_vtable(peer, NULL, SBX_BUS_PATH, SBX_BUS_INTERFACE, direct_vtable, m);
}

int bus_manager_install(Manager *m) {
        int r;

        r = sd_bus_add_object_vtable(m->bus, NULL, SBX_BUS_PATH, SBX_BUS_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the object: %m");
        r = objects_install(m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the objects of runs and sandboxes: %m");
        r = sd_bus_request_name(m->bus, SBX_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire the bus name %s: %m", SBX_BUS_NAME);
        return 0;
}
