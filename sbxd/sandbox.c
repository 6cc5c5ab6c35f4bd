/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox feature (feature.h): long-lived runs whose helper waits for commands on a control channel,
 * their methods' bodies, and a run's one command sent on the same channel (sandbox.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bus-errors.h"
#include "command-fd.h"
#include "command.h"
#include "bus-fields.h"
#include "feature.h"
#include "log.h"
#include "run.h"
#include "policy.h"
#include "sandbox.h"

static SandboxExec *exec_free(SandboxExec *e) {
        if (!e)
                return NULL;
        sd_bus_slot_unref(e->slot_client);
        sd_bus_unref(e->client_bus);
        free(e->client);
        free(e);
        return NULL;
}

static SandboxExec *sandbox_find_exec(Sandbox *s, const char *id) {
        for (SandboxExec *e = s->execs; e; e = e->next)
                if (streq(e->id, id))
                        return e;
        return NULL;
}

static void sandbox_unlink_exec(Sandbox *s, SandboxExec *x) {
        for (SandboxExec **p = &s->execs; *p; p = &(*p)->next)
                if (*p == x) {
                        *p = x->next;
                        s->n_execs--;
                        return;
                }
}

static int on_idle(sd_event_source *src, uint64_t usec, void *userdata) {
        Sandbox *s = userdata;

        if (s->n_execs > 0)
                return 0;
        log_info("Sandbox %s: no command for its idle timeout; stopping it.", s->run->id);
        s->run->idle_stop = true;
        (void) run_stop(s->run, SIGTERM);
        return 0;
}

/* The idle timer runs while no command does. */
static void sandbox_arm_idle(Sandbox *s) {
        if (s->idle_timeout == 0)
                return;
        if (s->n_execs > 0) {
                (void) sd_event_source_set_enabled(s->idle_timer, SD_EVENT_OFF);
                return;
        }
        if (!s->idle_timer) {
                if (sd_event_add_time_relative(s->run->manager->event, &s->idle_timer, CLOCK_MONOTONIC,
                                               s->idle_timeout, 0, on_idle, s) < 0)
                        log_warning("Sandbox %s: cannot arm its idle timer; it ends with its other limits.",
                                    s->run->id);
                return;
        }
        (void) sd_event_source_set_time_relative(s->idle_timer, s->idle_timeout);
        (void) sd_event_source_set_enabled(s->idle_timer, SD_EVENT_ONESHOT);
}

static void send_exec_finished(Sandbox *s, const SandboxExec *x, const RunExec *e) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        _cleanup_free_ char *json = NULL;
        int r;

        /* to the caller on the system bus, or on its connection to sbxd's own socket (no destination) */
        sd_bus *bus = x->client_bus ?: s->run->manager->bus;

        if (!x->client && !x->client_bus)
                return;
        /* the exec's entry alone, in the record's shape */
        r = run_exec_to_json(e, &json);
        if (r >= 0)
                r = sd_bus_message_new_signal(bus, &sig, SBX_BUS_PATH, SBX_BUS_INTERFACE, "ExecFinished");
        if (r >= 0 && !x->client_bus)
                r = sd_bus_message_set_destination(sig, x->client);
        if (r >= 0)
                r = sd_bus_message_append(sig, "sss", s->run->id, x->id, json);
        if (r >= 0)
                r = sd_bus_send(bus, sig, NULL);
        if (r < 0)
                log_warning_errno(r, "Sandbox %s: failed to send ExecFinished for %s, ignoring: %m", s->run->id, x->id);
}

static void exec_finish(Sandbox *s, SandboxExec *x, const RunExec *e) {
        int r;

        /* one past the record's list was counted when it started, and is not listed now either */
        r = x->listed ? run_record_sandbox_put_exec(s->run->record, e) : 0;
        if (r < 0)
                log_warning_errno(r, "Sandbox %s: cannot record exec %s: %m", s->run->id, x->id);
        send_exec_finished(s, x, e);
        run_yield_to_caller();
        sandbox_unlink_exec(s, x);
        run_object_changed(s->run);
        exec_free(x);
        (void) store_write(&s->run->manager->store, s->run->record);
        sandbox_arm_idle(s);
}

static void handle_done(Sandbox *s, const SbxDoneMsg *d) {
        char id[SBX_OP_ID_LEN + 1];
        SandboxExec *x;
        RunExec e = {};
        RunExec *prev;

        memcpy(id, d->h.op, SBX_OP_ID_LEN);
        id[SBX_OP_ID_LEN] = 0;
        x = sandbox_find_exec(s, id);
        if (!x) {
                log_warning("Sandbox %s: its helper reported an exec %s that is not running; ignored.", s->run->id, id);
                return;
        }
        prev = run_record_sandbox_find_exec(s->run->record, id);
        if (prev)
                e = *prev;
        strcpy(e.id, id);
        if (d->started_usec > 0)
                e.started_at = d->started_usec;
        e.duration = d->duration_usec;
        e.exit_code = d->exit_code;
        e.exit_signal = d->exit_signal;
        e.output_bytes = d->output_bytes;
        e.output_truncated = d->flags & SBX_DONE_OUTPUT_TRUNCATED;
        e.denied_syscalls = d->denied;
        if (d->flags & SBX_DONE_BUSY)
                e.result = EXEC_BUSY;
        else if (d->flags & SBX_DONE_LOST)
                e.result = EXEC_LOST;
        else if (d->flags & SBX_DONE_NOT_STARTED)
                e.result = EXEC_NOT_STARTED;
        else if (d->flags & SBX_DONE_TIMED_OUT)
                e.result = EXEC_TIMEOUT;
        else if (d->flags & SBX_DONE_OUTPUT_STOPPED)
                e.result = EXEC_OUTPUT_LIMIT;
        else if (d->exit_signal > 0)
                e.result = EXEC_SIGNAL;
        else
                e.result = EXEC_EXITED;
        if (e.result == EXEC_LOST || e.result == EXEC_BUSY) {
                e.exit_code = -1;
                e.exit_signal = 0;
        }
        exec_finish(s, x, &e);
}

static int on_ctl(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Sandbox *s = userdata;
        union {
                SbxMsgHeader h;
                SbxDoneMsg d;
        } m;
        ssize_t n;

        for (;;) {
                n = recv(fd, &m, sizeof(m), MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (n <= 0) {
                        /* the helper is gone: the unit ends with it, and the record says how */
                        log_debug("Sandbox %s: control channel closed.", s->run->id);
                        s->ctl_source = sd_event_source_disable_unref(s->ctl_source);
                        return 0;
                }
                if ((size_t) n < sizeof(SbxMsgHeader))
                        continue;
                if (m.h.type == SBX_MSG_READY && !s->ready) {
                        s->ready = true;
                        log_info("Sandbox %s: ready.", s->run->id);
                        if (s->pending_create) {
                                (void) sd_bus_reply_method_return(s->pending_create, "s", s->run->id);
                                s->pending_create = sd_bus_message_unref(s->pending_create);
                        }
                        sandbox_arm_idle(s);
                        run_object_changed(s->run);
                } else if (m.h.type == SBX_MSG_DONE && (size_t) n == sizeof(SbxDoneMsg))
                        handle_done(s, &m.d);
                else
                        log_warning("Sandbox %s: unexpected message %u from its helper; ignored.", s->run->id,
                                    m.h.type);
        }
}

int sandbox_new(Run *run, int ctl, const Profile *p, usec_t idle_timeout, Sandbox **ret) {
        Sandbox *s;
        int r;

        s = calloc(1, sizeof(Sandbox));
        if (!s)
                return -ENOMEM;
        s->run = run;
        s->ctl = -EBADF;
        s->idle_timeout = idle_timeout;
        s->profile = strdup(p->name);
        s->environment_allow = strv_copy(p->environment_allow);
        s->environment_deny = strv_copy(p->environment_deny);
        if (!s->profile || !s->environment_allow || !s->environment_deny) {
                sandbox_free(s);
                return -ENOMEM;
        }
        s->ctl = ctl;
        r = sd_event_add_io(run->manager->event, &s->ctl_source, ctl, EPOLLIN, on_ctl, s);
        if (r < 0) {
                s->ctl = -EBADF; /* the caller still owns it */
                sandbox_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

Sandbox *sandbox_free(Sandbox *s) {
        if (!s)
                return NULL;
        while (s->execs) {
                SandboxExec *x = s->execs;

                s->execs = x->next;
                exec_free(x);
        }
        sd_event_source_disable_unref(s->ctl_source);
        sd_event_source_disable_unref(s->idle_timer);
        sd_bus_message_unref(s->pending_create);
        safe_close(s->ctl);
        free(s->profile);
        strv_free(s->environment_allow);
        strv_free(s->environment_deny);
        free(s);
        return NULL;
}

/* CreateSandbox's reply: the run's start job is queued; answered once the helper is ready. */
static void sandbox_take_create_call(Sandbox *s, sd_bus_message *call) {
        if (s->ready) {
                (void) sd_bus_reply_method_return(call, "s", s->run->id);
                return;
        }
        sd_bus_message_unref(s->pending_create);
        s->pending_create = sd_bus_message_ref(call);
}

void sandbox_run_ended(Sandbox *s) {
        if (s->pending_create) {
                (void) sd_bus_reply_method_errorf(s->pending_create, ERR_START_FAILED, "sandbox %s did not start: %s",
                                                  s->run->id, s->run->record->error ?: "its unit ended");
                s->pending_create = sd_bus_message_unref(s->pending_create);
        }
        while (s->execs) {
                SandboxExec *x = s->execs;
                RunExec *prev = run_record_sandbox_find_exec(s->run->record, x->id);
                RunExec e = prev ? *prev : (RunExec) { .exit_code = -1 };

                strcpy(e.id, x->id);
                e.result = EXEC_LOST;
                e.exit_code = -1;
                e.exit_signal = 0;
                if (e.started_at > 0 && now_realtime() > e.started_at)
                        e.duration = now_realtime() - e.started_at;
                if (x->listed)
                        (void) run_record_sandbox_put_exec(s->run->record, &e);
                send_exec_finished(s, x, &e);
                sandbox_unlink_exec(s, x);
                exec_free(x);
        }
        s->ctl_source = sd_event_source_disable_unref(s->ctl_source);
        s->ctl = safe_close(s->ctl);
}

/* ---- methods ------------------------------------------------------------------------------------------ */

/* The caller's own live sandbox, by id or name. Other tenants' sandboxes get the same answer as ones
 * that do not exist. */
static int lookup_sandbox(Manager *m, sd_bus_message *msg, const char *key, Sandbox **ret, sd_bus_error *error) {
        char tenant[TENANT_ID_LEN + 1];
        uid_t uid;
        int r;

        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        if (!run_id_is_valid(key) && !sandbox_name_is_valid(key))
                return sd_bus_error_setf(error, ERR_INVALID, "sandbox: '%s' is neither a sandbox id nor a name", key);
        for (Run *run = m->runs; run; run = run->next) {
                if (!run->sandbox || run->finalizing || !streq(run->record->tenant, tenant))
                        continue;
                if (streq(run->id, key) || streq_ptr(run->record->sandbox->name, key)) {
                        *ret = run->sandbox;
                        return 1;
                }
        }
        return sd_bus_error_setf(error, ERR_NO_SANDBOX, "sandbox: no sandbox %s", key);
}

int sandbox_call(sd_bus_message *msg, Manager *m, int (*body)(Sandbox *, sd_bus_message *, sd_bus_error *),
                 sd_bus_error *error) {
        const char *key;
        Sandbox *s = NULL;
        int r;

        r = sd_bus_message_read(msg, "s", &key);
        if (r < 0)
                return r;
        r = lookup_sandbox(m, msg, key, &s, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        return body(s, msg, error);
}

/* The caller of an exec is gone, or cannot be watched (then it still gets ExecFinished): like a terminal
 * hanging up, the command gets SIGHUP */
static void exec_client_lost(SandboxExec *x, bool gone) {
        SbxMsgHeader h = { .type = SBX_MSG_SIGNAL, .arg = SIGHUP };

        if (gone) {
                x->client = mfree(x->client);
                x->client_bus = sd_bus_unref(x->client_bus);
        }
        x->slot_client = sd_bus_slot_unref(x->slot_client);

        memcpy(h.op, x->id, SBX_OP_ID_LEN);
        (void) send(x->ctl, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void sandbox_client_bus_gone(Sandbox *s, sd_bus *bus, bool gone) {
        for (SandboxExec *x = s->execs; x; x = x->next) {
                if (x->client_bus != bus)
                        continue;
                if (gone)
                        exec_client_lost(x, true);
                else
                        x->client_bus = sd_bus_unref(x->client_bus);
        }
}

static int on_exec_client_gone(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old, *new;

        if (!streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus") ||
            sd_bus_message_read(msg, "sss", &name, &old, &new) < 0 || !isempty(new))
                return 0;
        exec_client_lost(userdata, true);
        return 0;
}

/* The bus refused the match on the caller's disconnection: a command whose caller cannot be watched
 * ends as if it had hung up, never outlives it unnoticed. */
static int on_exec_client_match_installed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SandboxExec *x = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e)
                return 0;
        log_warning("Exec %s: cannot watch its caller %s (%s); it gets SIGHUP.", x->id, strna(x->client),
                    e->message ?: e->name);
        exec_client_lost(x, false);
        return 0;
}

int sandbox_send_exec(int ctl, const char *op, char **argv, char **env, const int fds[3], uint64_t timeout,
                      uint64_t output_max, const RunTerminal *tty) {
        _cleanup_close_ int cmd = -EBADF;
        SbxExecMsg m = { .h.type = SBX_MSG_EXEC, .h.arg = (uint32_t) strv_length(argv),
                         .envc = (uint32_t) strv_length(env), .timeout_usec = timeout, .output_max = output_max };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(SBX_EXEC_FDS * sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        struct cmsghdr *c;
        int all[SBX_EXEC_FDS], r;

        /* the command line and the environment: bytes of any size execve() takes, in a memfd */
        r = command_fd_new(argv, env, &cmd);
        if (r < 0)
                return r;
        memcpy(m.h.op, op, SBX_OP_ID_LEN);
        if (tty && tty->on) {
                m.flags |= SBX_EXEC_TTY;
                m.tty_rows = (uint16_t) tty->rows;
                m.tty_cols = (uint16_t) tty->cols;
        }
        memcpy(all, fds, 3 * sizeof(int));
        all[3] = cmd;
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(all));
        memcpy(CMSG_DATA(c), all, sizeof(all));
        if (sendmsg(ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) sizeof(m))
                return errno > 0 ? -errno : -EIO;
        return 0;
}

typedef struct ExecOptions {
        uint64_t timeout_usec;
        uint64_t output_max;
        char **argv_bytes;
        char **env;
        RunTerminal tty;
} ExecOptions;

static void exec_options_done(ExecOptions *o) {
        strv_free(o->argv_bytes);
        strv_free(o->env);
        free(o->tty.term);
}

/* Exec's options (docs/dbus.md) */
static const BusField exec_fields[] = {
        { "timeout_usec", bus_field_u64_positive, offsetof(ExecOptions, timeout_usec) },
        { "output_max",   bus_field_u64_positive, offsetof(ExecOptions, output_max) },
        { "argv_bytes",   bus_field_byte_strings, offsetof(ExecOptions, argv_bytes) },
        { "environment",  bus_field_byte_strings, offsetof(ExecOptions, env) },
        { "tty",          bus_field_terminal,     offsetof(ExecOptions, tty) },
        {}
};

static bool env_has_term(char **env) {
        STRV_FOREACH(e, env)
                if (strneq(*e, "TERM=", 5))
                        return true;
        return false;
}

/* The rest of Exec, from its options on: (a{sv} options, as argv, h stdin, h stdout, h stderr) -> s op */
int sandbox_exec_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error) {
        Manager *m = s->run->manager;
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *match = NULL, *refusal = NULL;
        _cleanup_(exec_options_done) ExecOptions o = {};
        SandboxExec *x = NULL;
        int fds[3], r;
        char op[SBX_OP_ID_LEN + 1];
        RunExec e = { .exit_code = -1, .result = EXEC_RUNNING };

        r = bus_read_fields(msg, exec_fields, 0, &o, "exec options", error);
        if (r < 0)
                return r;
        r = sd_bus_message_read_strv(msg, &argv);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "hhh", &fds[0], &fds[1], &fds[2]);
        if (r < 0)
                return r;
        r = bus_take_command(&argv, &o.argv_bytes, error);
        if (r < 0)
                return r;
        /* the output limit relays stdout and stderr; a terminal given as stdin would be a way around it */
        if ((o.output_max > 0 || s->run->record->limits.output > 0) && fd_is_writable_tty(fds[0]))
                return sd_bus_error_setf(error, ERR_INVALID, "stdin: a terminal open for writing would reach the caller "
                                         "past the output limit; pass it read-only");

        /* the terminal's name, as the caller's environment would give it */
        if (o.tty.on && o.tty.term && !env_has_term(o.env)) {
                r = strv_push_printf(&o.env, "TERM=%s", o.tty.term);
                if (r < 0)
                        return r;
        }
        r = command_check(argv, o.env, manager_stack_limit(), &refusal);
        if (r >= 0)
                r = environment_check(s->environment_allow, s->environment_deny, s->profile, o.env, &refusal);
        if (r < 0)
                return refusal ? sd_bus_error_setf(error, ERR_INVALID, "%s", refusal) : r;
        if (!s->ready || s->ctl < 0 || s->run->stop_requested)
                return sd_bus_error_setf(error, ERR_NO_SANDBOX, "sandbox %s is not running", s->run->id);
        if (s->n_execs >= SBX_SANDBOX_EXECS_MAX)
                return sd_bus_error_setf(error, ERR_BUSY, "sandbox %s runs %u commands already", s->run->id,
                                         SBX_SANDBOX_EXECS_MAX);
        r = run_id_new(op);
        if (r < 0)
                return r;

        x = calloc(1, sizeof(SandboxExec));
        if (!x)
                return -ENOMEM;
        memcpy(x->id, op, sizeof(x->id));
        x->ctl = s->ctl;
        if (sd_bus_is_server(sd_bus_message_get_bus(msg)) > 0)
                /* on sbxd's own socket the connection is the caller: its end is seen by direct.c */
                x->client_bus = sd_bus_ref(sd_bus_message_get_bus(msg));
        else {
                x->client = strdup(sd_bus_message_get_sender(msg));
                if (!x->client ||
                    asprintf(&match, "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                             "member='NameOwnerChanged',arg0='%s'", x->client) < 0) {
                        exec_free(x);
                        return -ENOMEM;
                }
                /* not waited for: the reply below goes out on the same connection after it */
                r = sd_bus_add_match_async(m->bus, &x->slot_client, match, on_exec_client_gone,
                                           on_exec_client_match_installed, x);
                if (r < 0) {
                        exec_free(x);
                        return r;
                }
        }
        r = sandbox_send_exec(s->ctl, op, argv, o.env, fds, o.timeout_usec, o.output_max, &o.tty);
        if (r < 0) {
                exec_free(x);
                return sd_bus_error_setf(error, ERR_START_FAILED, "cannot pass the command to sandbox %s: %s",
                                         s->run->id, strerror(-r));
        }
        x->next = s->execs;
        s->execs = x;
        s->n_execs++;
        sandbox_arm_idle(s);
        strcpy(e.id, op);
        e.started_at = now_realtime();
        x->listed = run_record_sandbox_put_exec(s->run->record, &e) > 0;
        r = sd_bus_reply_method_return(msg, "s", op);
        run_object_changed(s->run);
        return r;
}

/* Exec(s sandbox, a{sv} options, as argv, h stdin, h stdout, h stderr) -> s op */
int sandbox_method_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sandbox_call(msg, userdata, sandbox_exec_call, error);
}

/* The rest of SignalExec, from the op on: (s op, i signal). Ctrl-C and friends, to the command's process
 * group. */
int sandbox_signal_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error) {
        SbxMsgHeader h = { .type = SBX_MSG_SIGNAL };
        SandboxExec *x;
        const char *op;
        int32_t sig;
        int r;

        r = sd_bus_message_read(msg, "si", &op, &sig);
        if (r < 0)
                return r;
        if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP && sig != SIGQUIT && sig != SIGUSR1 && sig != SIGUSR2 &&
            sig != SIGWINCH)
                return sd_bus_error_setf(error, ERR_INVALID, "signal: %d is not one a command may be sent", sig);
        x = sandbox_find_exec(s, op);
        if (!x)
                return sd_bus_error_setf(error, ERR_NO_RUN, "exec: no running command %s in sandbox %s", op, s->run->id);
        h.arg = (uint32_t) sig;
        memcpy(h.op, x->id, SBX_OP_ID_LEN);
        if (send(s->ctl, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) sizeof(h))
                return sd_bus_error_setf(error, ERR_START_FAILED, "cannot reach sandbox %s", s->run->id);
        return sd_bus_reply_method_return(msg, NULL);
}

/* SignalExec(s sandbox, s op, i signal) */
int sandbox_method_signal_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sandbox_call(msg, userdata, sandbox_signal_call, error);
}

/* Stops the sandbox (its commands get SIGTERM); the record is written when it is gone. */
int sandbox_remove_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error) {
        int r;

        r = run_stop(s->run, SIGTERM);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

/* RemoveSandbox(s sandbox) */
int sandbox_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sandbox_call(msg, userdata, sandbox_remove_call, error);
}

/* GetSandbox(s sandbox) -> o: the object of the caller's sandbox, by id or name */
static int get_object_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = run_object_path(s->run, &path);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", path);
}

int sandbox_method_get_object(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return sandbox_call(msg, userdata, get_object_call, error);
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

static void sandbox_unit_ended(Run *run) {
        if (run->sandbox)
                sandbox_run_ended(run->sandbox);
}

/* A sandbox: its record's section, and the sandbox on its control channel. */
static int sandbox_prepare(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        const RunRequest *req = ctx->req;
        int r;

        if (!req->sandbox)
                return 0;
        r = run_record_sandbox_init(run->record, req->sandbox_name, req->idle_timeout, req->detach);
        if (r < 0)
                return r;
        r = sandbox_new(run, *ctx->ctl, ctx->profile, req->idle_timeout, &run->sandbox);
        if (r < 0)
                return r;
        TAKE_FD(*ctx->ctl);
        return 0;
}

/* A run of one command (no sandbox) gets a unit of its own: its command line and environment reach its
 * helper on the unit's stdin (sandbox-proto.h) as one EXEC, queued before the unit starts, with the
 * caller's stdio; sbxd keeps its end for the helper's FINISHED (run_watch_report()). */
static int sandbox_prepare_unit(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        _cleanup_close_ int ours = -EBADF, theirs = -EBADF;
        int pair[2], r;

        if (ctx->req->sandbox)
                return 0;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                r = -errno;
        else {
                ours = pair[0];
                theirs = pair[1];
                r = sandbox_send_exec(ours, run->id, ctx->req->argv, ctx->req->env, ctx->stdio, 0, 0, &ctx->req->tty);
        }
        if (r < 0)
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot pass the command to the run: %s",
                                         strerror(-r));
        *ctx->stdin_held = ctx->stdio[0] = TAKE_FD(theirs);
        r = run_watch_report(run, TAKE_FD(ours));
        if (r < 0)
                log_debug_errno(r, "Run %s: cannot watch its control channel, answered through systemd: %m", run->id);
        return 0;
}

/* A sandbox's creator is answered when its helper is ready. */
static int sandbox_answer(Run *run, sd_bus_message *call) {
        if (!run->sandbox)
                return 0;
        sandbox_take_create_call(run->sandbox, call);
        return 1;
}

static void sandbox_free_run(Run *run) {
        run->sandbox = sandbox_free(run->sandbox);
}

const Feature feature_sandbox = {
        .name = "sandbox",
        .prepare = sandbox_prepare,
        .prepare_unit = sandbox_prepare_unit,
        .answer = sandbox_answer,
        .unit_ended = sandbox_unit_ended,
        .free_run = sandbox_free_run,
};
