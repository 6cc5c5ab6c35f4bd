/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The D-Bus objects of runs and sandboxes, and the figures of a run's cgroup (objects.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "fileio.h"
#include "log.h"
#include "objects.h"
#include "observe.h"
#include "sandbox.h"

/* ---- finding objects ---------------------------------------------------------------------------------- */

int run_object_path(const Run *run, char **ret) {
        return asprintf(ret, "%s/%s", run->sandbox ? SBX_SANDBOX_OBJECT_PREFIX : SBX_RUN_OBJECT_PREFIX, run->id) < 0 ?
                       -ENOMEM :
                       0;
}

/* Whether the peer whose call is being dispatched may see the run: its owner, or root. */
static bool caller_may_see(Manager *m, sd_bus *bus, const Run *run) {
        sd_bus_message *msg = sd_bus_get_current_message(bus);
        char tenant[TENANT_ID_LEN + 1];
        uid_t uid;

        if (!msg || manager_caller_tenant(m, msg, tenant, &uid) < 0)
                return false;
        return uid == 0 || streq(tenant, run->record->tenant);
}

static int find_object(sd_bus *bus, const char *path, void *userdata, void **found, bool sandbox) {
        const char *prefix = sandbox ? SBX_SANDBOX_OBJECT_PREFIX "/" : SBX_RUN_OBJECT_PREFIX "/";
        Manager *m = userdata;
        Run *run;

        if (!strneq(path, prefix, strlen(prefix)) || !run_id_is_valid(path + strlen(prefix)))
                return 0;
        run = manager_find_run(m, path + strlen(prefix));
        if (!run || !!run->sandbox != sandbox || !caller_may_see(m, bus, run))
                return 0;
        *found = run;
        return 1;
}

static int find_run(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                    sd_bus_error *error) {
        return find_object(bus, path, userdata, found, false);
}

static int find_sandbox(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                        sd_bus_error *error) {
        return find_object(bus, path, userdata, found, true);
}

static int enumerate(sd_bus *bus, void *userdata, char ***ret, bool sandbox) {
        Manager *m = userdata;
        char **l;
        size_t n = 0;
        int r;

        for (Run *run = m->runs; run; run = run->next)
                n++;
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        n = 0;
        for (Run *run = m->runs; run; run = run->next) {
                if (!!run->sandbox != sandbox || !caller_may_see(m, bus, run))
                        continue;
                r = run_object_path(run, &l[n]);
                if (r < 0) {
                        strv_free(l);
                        return r;
                }
                n++;
        }
        *ret = l;
        return 0;
}

static int enumerate_runs(sd_bus *bus, const char *prefix, void *userdata, char ***ret, sd_bus_error *error) {
        return enumerate(bus, userdata, ret, false);
}

static int enumerate_sandboxes(sd_bus *bus, const char *prefix, void *userdata, char ***ret, sd_bus_error *error) {
        return enumerate(bus, userdata, ret, true);
}

/* ---- org.sbx.Run1 ------------------------------------------------------------------------------------- */

static const char *run_state(const Run *run) {
        if (run->record->finished)
                return "finished";
        /* exited: its command has ended (Exited), its unit is being stopped and removed */
        if (run->stop_requested || run->finalizing || run->record->exited)
                return "stopping";
        if (!run->job_done || (run->sandbox && !run->sandbox->ready))
                return "starting";
        return "running";
}

int run_cgroup_read(const Run *run, const char *file, char **ret_text) {
        _cleanup_free_ char *path = NULL;

        if (run->record->finished || run->finalizing || !run->cgroup_path)
                return -ESTALE;
        if (asprintf(&path, "%s/%s", run->cgroup_path, file) < 0)
                return -ENOMEM;
        return read_file_at(AT_FDCWD, path, 64 * 1024, ret_text, NULL);
}

uint64_t cgroup_text_figure(const char *text, const char *key) {
        unsigned long long v;
        const char *p = text;

        if (!text)
                return UINT64_MAX;
        if (key) {
                size_t kl = strlen(key);

                for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                        if (strneq(p, key, kl) && p[kl] == ' ') {
                                p += kl + 1;
                                break;
                        }
                if (!p)
                        return UINT64_MAX;
        }
        if (sscanf(p, "%llu", &v) != 1)
                return UINT64_MAX;
        return (uint64_t) v;
}

uint64_t run_cgroup_figure(const Run *run, const char *file, const char *key) {
        _cleanup_free_ char *text = NULL;

        if (run_cgroup_read(run, file, &text) < 0)
                return UINT64_MAX;
        return cgroup_text_figure(text, key);
}

#define RUN_PROPERTY(name, type, expr)                                                                         \
        static int property_get_##name(sd_bus *bus, const char *path, const char *interface, const char *property, \
                                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {          \
                const Run *run = userdata;                                                                     \
                const RunRecord *rec = run->record;                                                            \
                (void) rec;                                                                                    \
                return sd_bus_message_append(reply, type, expr);                                               \
        }

RUN_PROPERTY(id, "s", run->id)
RUN_PROPERTY(unit, "s", strempty(run->unit))
RUN_PROPERTY(profile, "s", strempty(rec->profile))
RUN_PROPERTY(policy_digest, "s", strempty(rec->policy_digest))
RUN_PROPERTY(state, "s", run_state(run))
RUN_PROPERTY(started_at, "t", (uint64_t) rec->started_at)
RUN_PROPERTY(ended_at, "t", (uint64_t) rec->ended_at)
RUN_PROPERTY(stop_reason, "s", rec->finished ? strempty(stop_reason_to_string(rec->stop_reason)) : "")
RUN_PROPERTY(exit_code, "i", (int32_t) rec->exit_code)
RUN_PROPERTY(exit_signal, "i", (int32_t) rec->exit_signal)
RUN_PROPERTY(error, "s", strempty(rec->error))
RUN_PROPERTY(cpu_usage, "t", rec->finished ? rec->cpu_usec : run_cgroup_figure(run, "cpu.stat", "usage_usec"))
RUN_PROPERTY(memory_current, "t", run_cgroup_figure(run, "memory.current", NULL))
RUN_PROPERTY(memory_peak, "t", rec->finished ? rec->memory_peak : run_cgroup_figure(run, "memory.peak", NULL))
RUN_PROPERTY(tasks_current, "t", run_cgroup_figure(run, "pids.current", NULL))
RUN_PROPERTY(tasks_peak, "t", rec->tasks_peak)
RUN_PROPERTY(output_bytes, "t", rec->output_bytes)

/* a(ssttttbs): event, limit, value, used, count, raise_to, stopped, message (docs/limits.md); empty
 * while the run is running */
static int property_get_limit_events(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;
        Observation obs[_LIMIT_EVENT_MAX];
        size_t n = run->record->finished ? run_record_observe(run->record, obs) : 0;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssttttbs)");
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *line = NULL;

                r = observation_format(&obs[i], run->record->profile, &line);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "(ssttttbs)", limit_event_to_string(obs[i].event), obs[i].limit,
                                                  obs[i].value, obs[i].used, obs[i].count, obs[i].raise_to,
                                                  obs[i].stopped, line);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int method_stop(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;
        int r;

        if (run->record->finished || run->finalizing)
                return sd_bus_error_setf(error, ERR_NO_RUN, "run: %s is not running", run->id);
        r = run_stop(run, SIGTERM);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_get_record(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *json = NULL;
        Run *run = userdata;
        int r;

        r = run_record_to_json(run->record, &json);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", json);
}

static int method_subscribe(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;
        int r;

        if (!run->watchers) {
                r = sd_bus_track_new(run->manager->bus, &run->watchers, NULL, NULL);
                if (r < 0)
                        return r;
        }
        r = sd_bus_track_add_name(run->watchers, sd_bus_message_get_sender(msg));
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_unsubscribe(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;

        if (run->watchers)
                (void) sd_bus_track_remove_name(run->watchers, sd_bus_message_get_sender(msg));
        return sd_bus_reply_method_return(msg, NULL);
}

#define EMITS SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST

static const sd_bus_vtable run_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", property_get_id, 0, CONST),
        SD_BUS_PROPERTY("Unit", "s", property_get_unit, 0, CONST),
        SD_BUS_PROPERTY("Profile", "s", property_get_profile, 0, CONST),
        SD_BUS_PROPERTY("PolicyDigest", "s", property_get_policy_digest, 0, CONST),
        SD_BUS_PROPERTY("StartedAt", "t", property_get_started_at, 0, CONST),
        SD_BUS_PROPERTY("State", "s", property_get_state, 0, EMITS),
        SD_BUS_PROPERTY("EndedAt", "t", property_get_ended_at, 0, EMITS),
        SD_BUS_PROPERTY("StopReason", "s", property_get_stop_reason, 0, EMITS),
        SD_BUS_PROPERTY("ExitCode", "i", property_get_exit_code, 0, EMITS),
        SD_BUS_PROPERTY("ExitSignal", "i", property_get_exit_signal, 0, EMITS),
        SD_BUS_PROPERTY("Error", "s", property_get_error, 0, EMITS),
        SD_BUS_PROPERTY("CPUUsageUSec", "t", property_get_cpu_usage, 0, 0),
        SD_BUS_PROPERTY("MemoryCurrent", "t", property_get_memory_current, 0, 0),
        SD_BUS_PROPERTY("MemoryPeak", "t", property_get_memory_peak, 0, 0),
        SD_BUS_PROPERTY("TasksCurrent", "t", property_get_tasks_current, 0, 0),
        SD_BUS_PROPERTY("TasksPeak", "t", property_get_tasks_peak, 0, 0),
        SD_BUS_PROPERTY("OutputBytes", "t", property_get_output_bytes, 0, 0),
        SD_BUS_PROPERTY("LimitEvents", "a(ssttttbs)", property_get_limit_events, 0, EMITS),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetRecord", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", record_json), method_get_record,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Subscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_subscribe,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Unsubscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_unsubscribe,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- org.sbx.Sandbox1 --------------------------------------------------------------------------------- */

static int property_get_name(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;

        return sd_bus_message_append(reply, "s", strempty(run->record->sandbox ? run->record->sandbox->name : NULL));
}

static int property_get_idle_timeout(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;

        return sd_bus_message_append(reply, "t", (uint64_t) run->sandbox->idle_timeout);
}

static int property_get_detach(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;

        return sd_bus_message_append(reply, "b", run->record->sandbox && run->record->sandbox->detach);
}

static int property_get_execs_running(sd_bus *bus, const char *path, const char *interface, const char *property,
                                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;

        return sd_bus_message_append(reply, "u", (uint32_t) run->sandbox->n_execs);
}

static int property_get_execs_total(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Run *run = userdata;

        return sd_bus_message_append(reply, "t", run->record->sandbox ? run->record->sandbox->execs_total : 0);
}

/* Only the sandbox's owner runs commands in it, root included: an administrator may see and stop it. */
static int check_owner(Run *run, sd_bus_message *msg, sd_bus_error *error) {
        char tenant[TENANT_ID_LEN + 1];
        int r;

        r = manager_caller_tenant(run->manager, msg, tenant, NULL);
        if (r < 0)
                return r;
        if (!streq(tenant, run->record->tenant))
                return sd_bus_error_setf(error, ERR_ACCESS, "sandbox %s: only its owner runs commands in it",
                                         run->id);
        return 0;
}

static int method_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;
        int r;

        r = check_owner(run, msg, error);
        if (r < 0)
                return r;
        return sandbox_exec_call(run->sandbox, msg, error);
}

static int method_signal_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;
        int r;

        r = check_owner(run, msg, error);
        if (r < 0)
                return r;
        return sandbox_signal_call(run->sandbox, msg, error);
}

static int method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Run *run = userdata;

        if (run->record->finished || run->finalizing)
                return sd_bus_error_setf(error, ERR_NO_SANDBOX, "sandbox %s is not running", run->id);
        return sandbox_remove_call(run->sandbox, msg, error);
}

static const sd_bus_vtable sandbox_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Name", "s", property_get_name, 0, CONST),
        SD_BUS_PROPERTY("IdleTimeoutUSec", "t", property_get_idle_timeout, 0, CONST),
        SD_BUS_PROPERTY("Detach", "b", property_get_detach, 0, CONST),
        SD_BUS_PROPERTY("ExecsRunning", "u", property_get_execs_running, 0, EMITS),
        SD_BUS_PROPERTY("ExecsTotal", "t", property_get_execs_total, 0, EMITS),
        SD_BUS_METHOD_WITH_ARGS("Exec",
                                SD_BUS_ARGS("a{sv}", options, "as", argv, "h", stdin_fd, "h", stdout_fd, "h",
                                            stderr_fd),
                                SD_BUS_RESULT("s", exec_id), method_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SignalExec", SD_BUS_ARGS("s", exec_id, "i", signal), SD_BUS_NO_RESULT,
                                method_signal_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Remove", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_remove, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* ---- PropertiesChanged, to the run's own peers -------------------------------------------------------- */

static int send_changed(Run *run, const char *path, const char *interface, const sd_bus_vtable *vtable,
                        const char *destination) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        sd_bus *bus = run->manager->bus;
        int r;

        r = sd_bus_message_new_signal(bus, &sig, path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
        if (r < 0)
                return r;
        r = sd_bus_message_set_destination(sig, destination);
        if (r < 0)
                return r;
        r = sd_bus_message_append(sig, "s", interface);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(sig, 'a', "{sv}");
        if (r < 0)
                return r;
        for (const sd_bus_vtable *v = vtable + 1; v->type != _SD_BUS_VTABLE_END; v++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                if (v->type != _SD_BUS_VTABLE_PROPERTY || !(v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE))
                        continue;
                r = sd_bus_message_open_container(sig, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(sig, "s", v->x.property.member);
                if (r >= 0)
                        r = sd_bus_message_open_container(sig, 'v', v->x.property.signature);
                if (r >= 0)
                        r = v->x.property.get(bus, path, interface, v->x.property.member, sig, run, &error);
                if (r >= 0)
                        r = sd_bus_message_close_container(sig);
                if (r >= 0)
                        r = sd_bus_message_close_container(sig);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(sig);
        if (r < 0)
                return r;
        r = sd_bus_message_append(sig, "as", 0);
        if (r < 0)
                return r;
        return sd_bus_send(bus, sig, NULL);
}

static void send_changed_to(Run *run, const char *path, const char *destination) {
        int r;

        r = send_changed(run, path, SBX_RUN_INTERFACE, run_vtable, destination);
        if (r >= 0 && run->sandbox)
                r = send_changed(run, path, SBX_SANDBOX_INTERFACE, sandbox_vtable, destination);
        if (r < 0)
                log_debug("Run %s: PropertiesChanged to %s not sent: %s", run->id, destination, strerror(-r));
}

void run_object_changed(Run *run) {
        _cleanup_free_ char *path = NULL;

        if (run_object_path(run, &path) < 0)
                return;
        /* a client on sbxd's own socket has no name on the bus (and does not ask for the properties) */
        if (run->client && !run->client_bus)
                send_changed_to(run, path, run->client);
        if (run->watchers)
                for (const char *n = sd_bus_track_first(run->watchers); n; n = sd_bus_track_next(run->watchers))
                        if (!streq_ptr(n, run->client))
                                send_changed_to(run, path, n);
}

/* ---- installing --------------------------------------------------------------------------------------- */

int objects_install(Manager *m) {
        int r;

        r = sd_bus_add_fallback_vtable(m->bus, NULL, SBX_RUN_OBJECT_PREFIX, SBX_RUN_INTERFACE, run_vtable, find_run, m);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(m->bus, NULL, SBX_RUN_OBJECT_PREFIX, enumerate_runs, m);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(m->bus, NULL, SBX_SANDBOX_OBJECT_PREFIX, SBX_RUN_INTERFACE, run_vtable,
                                       find_sandbox, m);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(m->bus, NULL, SBX_SANDBOX_OBJECT_PREFIX, SBX_SANDBOX_INTERFACE, sandbox_vtable,
                                       find_sandbox, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, SBX_SANDBOX_OBJECT_PREFIX, enumerate_sandboxes, m);
}
