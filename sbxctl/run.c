/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl run and exec: a command in a new sandbox, or in a live one, its stdin, stdout and stderr passed
 * as they are; and the path they share with create (the request, the wait for the end, Ctrl-C). */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "client-request.h"
#include "command-line.h"
#include "common.h"
#include "fileio.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "run.h"
#include "terminal.h"
#include "verbs.h"

/* ---- run ------------------------------------------------------------------------------------------- */

/* how long (in tries, a second apart) to wait for a new sbxd after the one the run was started with left */
#define ATTACH_TRIES 20
#define ATTACH_CALL_TIMEOUT_USEC (5 * USEC_PER_SEC)

static int attach(RunState *s);

/* Whether msg comes from the sbxd of the run: on the system bus, from its unique name; on sbxd's own socket,
 * from the other end, which is sbxd (the socket is root's). */
static bool from_daemon(const RunState *s, sd_bus_message *msg) {
        if (!s->daemon)
                return false;
        if (s->direct)
                return sd_bus_message_get_bus(msg) == s->bus;
        return streq_ptr(sd_bus_message_get_sender(msg), s->daemon);
}

static int on_finished(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;
        const char *id, *json;
        _cleanup_free_ char *err = NULL;

        if (!s->run_id || !from_daemon(s, msg))
                return 0;
        /* Exited: the command's end and outcome, its cleanup still going on (docs/dbus.md) */
        if (s->wait_cleanup && !sd_bus_message_is_signal(msg, SBX_BUS_INTERFACE, "Finished"))
                return 0;
        if (sd_bus_message_read(msg, "ss", &id, &json) < 0 || !streq(id, s->run_id))
                return 0;
        if (run_record_from_json(json, &s->record, &err) < 0)
                log_error("sbxd sent an invalid record: %s", strna(err));
        return sd_event_exit(s->event, 0);
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;
        const char *name, *old, *new;

        /* only the bus itself says who owns a name (a unicast signal from anyone else reaches us too) */
        if (!streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus") ||
            sd_bus_message_read(msg, "sss", &name, &old, &new) < 0)
                return 0;
        if (streq(name, SBX_BUS_NAME) && s->daemon && streq(old, s->daemon)) {
                /* sbxd went away (an upgrade restarts it): the run is a unit of its own and goes on. The
                 * next sbxd adopts it; ask it for the run. Not by D-Bus activation: an sbxd stopped on
                 * purpose (the package being removed) must stay stopped. */
                s->daemon = mfree(s->daemon);
                s->attach_tries = 0;
                return attach(s);
        }
        return 0;
}

/* Stop(run) to the sbxd we know, never by D-Bus activation (see attach()) */
static int request_stop(RunState *s) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(s->bus, &m, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Stop");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", s->run_id);
        if (r >= 0)
                r = sd_bus_call_async(s->bus, NULL, m, NULL, NULL, 0);
        if (r < 0)
                log_error_errno(r, "Failed to ask sbxd to stop run %s: %m", s->run_id);
        return 0;
}

int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        RunState *s = userdata;

        if (s->got_signal == 0)
                s->got_signal = (int) si->ssi_signo;
        /* no run yet, or between two sbxds: asked for once there is one (on_attach_reply) */
        if (!s->run_id || !s->daemon)
                return 0;
        return request_stop(s);
}

/* The signal of ours that is waiting to be read, if any: one that came with the end of the connection (Ctrl-C
 * on a terminal reaches the ssh that sd-bus started for -H too, and that ends the connection). */
static int pending_signal(void) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
        sigset_t set;

        if (sigpending(&set) < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                if (sigismember(&set, sigs[i]) > 0)
                        return sigs[i];
        return 0;
}

static int run_state_to_bus(RunState *s);

/* sd-bus's own message when the connection ends: nothing more can come */
static int on_run_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;

        /* the bus is closing already: this one is sd-bus's own, nobody else's */
        if (!sd_bus_message_is_signal(msg, "org.freedesktop.DBus.Local", "Disconnected") ||
            sd_bus_is_open(sd_bus_message_get_bus(msg)) > 0)
                return 0;
        /* sbxd's own socket ends only with sbxd: the run goes on, and the next sbxd is asked for it */
        if (s->direct && sd_bus_message_get_bus(msg) == s->bus && s->run_id)
                return run_state_to_bus(s);
        s->disconnected = true;
        if (s->got_signal == 0)
                s->got_signal = pending_signal();
        return sd_event_exit(s->event, 0);
}

/* Started by sshd without a terminal ("sbxctl -H HOST run", or "ssh HOST sbxctl run"), sbxctl is not told when
 * the connection ends: sshd signals nothing to a command without a terminal. What it does is close its ends of
 * the pipes (or sockets) it gave as stdout and stderr. A reader gone is then a hangup: SIGHUP. */
static int watch_hangup(sd_event *event, sd_event_io_handler_t handler, void *userdata) {
        if (!getenv("SSH_CONNECTION") || getenv("SSH_TTY"))
                return 0;
        for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
                struct stat st;
                int r;

                if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
                        continue;
                /* no events asked for: epoll reports EPOLLERR (a pipe without reader) and EPOLLHUP anyway */
                r = sd_event_add_io(event, NULL, fd, 0, handler, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int on_run_hangup(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) sd_event_source_set_enabled(src, SD_EVENT_OFF);
        log_debug("stdout or stderr hung up (the ssh connection ended): stopping the run");
        return on_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = SIGHUP }, userdata);
}

static int on_attach_retry(sd_event_source *src, uint64_t usec, void *userdata) {
        return attach(userdata);
}

static int on_attach_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        _cleanup_free_ char *err = NULL;
        const char *json;

        if (e) {
                /* sbxd is being restarted or not yet on the bus: try again a little later */
                if (s->attach_tries < ATTACH_TRIES &&
                    sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                           SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT) &&
                    sd_event_add_time_relative(s->event, NULL, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_attach_retry,
                                               s) >= 0)
                        return 0;
                log_debug("Attach failed: %s", e->message);
                s->daemon_gone = true;
                return sd_event_exit(s->event, 0);
        }
        if (sd_bus_message_read(reply, "s", &json) < 0 || run_record_from_json(json, &rec, &err) < 0 ||
            !(s->daemon = strdup(sd_bus_message_get_sender(reply)))) {
                s->daemon_gone = true;
                return sd_event_exit(s->event, 0);
        }
        /* it ended while no sbxd was there to tell us */
        if (rec->finished || (rec->exited && !s->wait_cleanup)) {
                s->record = TAKE_PTR(rec);
                return sd_event_exit(s->event, 0);
        }
        if (s->got_signal > 0)  /* Ctrl-C while we were between two sbxds */
                return request_stop(s);
        return 0; /* Finished comes from this sbxd */
}

static int attach(RunState *s) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        s->attach_tries++;
        r = sd_bus_message_new_method_call(s->bus, &m, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Attach");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", s->run_id);
        if (r >= 0)
                r = sd_bus_call_async(s->bus, NULL, m, on_attach_reply, s, ATTACH_CALL_TIMEOUT_USEC);
        if (r < 0) {
                s->daemon_gone = true;
                return sd_event_exit(s->event, 0);
        }
        return 0;
}

/* --credential NAME=@FILE: FILE's content (at most SECRET_MAX bytes, checked by check_credential_files())
 * in a sealed memfd, never its path. */
static int file_to_memfd(const char *path, int *ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = read_file_at(AT_FDCWD, path, SECRET_MAX, &text, &size);
        if (r >= 0)
                r = memfd_sealed(text, size, ret);
        if (text)
                explicit_bzero(text, size);
        return r;
}

int append_request(sd_bus_message *m, const char *workspace, const char *dataset, int export_fd, bool sandbox,
                   char **cmd, char **env, TermRelay *tty) {
        ClientRequest req;
        int r;

        run_request_init(&req, workspace, dataset, export_fd, sandbox);
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = client_request_append(m, &req);
        if (r >= 0 && export_fd >= 0)
                r = sd_bus_message_append(m, "{sv}", "export_fd", "h", export_fd);
        if (r >= 0 && arg_caches_ro) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "caches_ro");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, arg_caches_ro);
                for (int i = 0; i < 2 && r >= 0; i++)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && arg_credentials) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "credentials");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, arg_credentials);
                for (int i = 0; i < 2 && r >= 0; i++)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && arg_credential_files) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", "credential_fds");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "a{sh}");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "{sh}");
                for (char **i = arg_credential_files; r >= 0 && i[0] && i[1]; i += 2) {
                        _cleanup_close_ int fd = -EBADF;

                        r = file_to_memfd(i[1], &fd);
                        if (r >= 0)
                                r = sd_bus_message_append(m, "{sh}", i[0], fd);
                }
                for (int i = 0; i < 3 && r >= 0; i++)
                        r = sd_bus_message_close_container(m);
        }
        /* the command line as bytes: any execve() takes (the "as" argument stays empty) */
        if (r >= 0 && cmd)
                r = client_command_append(m, cmd, env);
        if (r >= 0 && tty)
                r = term_relay_append(tty, m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* What a client waiting for the end of what it started (a run, a sandbox, an exec) listens to. */
typedef struct ClientHooks {
        const int *sigs;        /* taken from the shell and passed on by on_signal */
        size_t n_sigs;
        const char *finished;   /* sbxd's signal of the end */
        sd_bus_message_handler_t on_finished;
        sd_bus_message_handler_t on_owner_changed;      /* sbxd leaving */
        sd_bus_message_handler_t on_disconnected;
        sd_event_signal_handler_t on_signal;
} ClientHooks;

/* sbxd's own socket (docs/dbus.md): Run, Stop, Exited and Finished without the bus's daemon between. The
 * handshake is done before anything is asked, so that a socket nobody listens on (no sbxd yet: the bus
 * starts it), one that is not root's, or a connection sbxd closes (too many) costs only the try, and the
 * run goes over the system bus. Never for another machine's sbxd (-H, -M), nor with SBX_DIRECT_SOCKET=0.
 * 1: connected. */
static int connect_direct(sd_bus **ret) {
        /* not flushed when given up: a flush would wait for the handshake it failed */
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *e = getenv("SBX_DIRECT_SOCKET");
        uid_t uid = (uid_t) -1;

        if (arg_host || arg_machine || (e && streq(e, "0")))
                return 0;
        /* the other end must be root's (SO_PEERCRED): the run's outcome is believed from it */
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, "unix:path=" SBX_BUS_SOCKET) < 0 ||
            sd_bus_start(bus) < 0 || sd_bus_get_owner_creds(bus, SD_BUS_CREDS_EUID, &creds) < 0 ||
            (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID) ||
            sd_bus_creds_get_euid(creds, &uid) < 0 || uid != 0 || sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) <= 0) {
                log_debug("%s not usable: the system bus", SBX_BUS_SOCKET);
                return 0;
        }
        log_debug("connected to sbxd at %s", SBX_BUS_SOCKET);
        *ret = TAKE_PTR(bus);
        return 1;
}

/* The machine's bus (with direct: sbxd's own socket if it is there, *direct saying which), with the client's
 * signals taken first. 0, or sbxctl's exit status. */
static int client_connect(const ClientHooks *h, bool *direct, sd_bus **ret) {
        int r;

        r = check_systemd();
        if (r != 0)
                return r;
        take_signals(h->sigs, h->n_sigs);
        if (direct && (*direct = connect_direct(ret) > 0))
                return 0;
        return connect_bus(ret);
}

/* The bus on the event loop, with the hooks' matches and filter. 0 or -errno. */
static int client_watch_bus(const ClientHooks *h, sd_bus *bus, sd_event *event, void *userdata) {
        int r;

        r = sd_bus_attach_event(bus, event, 0);
        if (r >= 0)
                r = match_signal(bus, SBX_BUS_PATH, SBX_BUS_INTERFACE, h->finished, h->on_finished, userdata);
        if (r >= 0)
                r = match_signal(bus, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                 h->on_owner_changed, userdata);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, h->on_disconnected, userdata);
        return r;
}

/* ... and the hooks' signal handlers. 0 or -errno. */
static int client_watch(const ClientHooks *h, sd_bus *bus, sd_event *event, void *userdata) {
        int r;

        r = client_watch_bus(h, bus, event, userdata);
        for (size_t i = 0; r >= 0 && i < h->n_sigs; i++)
                r = sd_event_add_signal(event, NULL, h->sigs[i], h->on_signal, userdata);
        return r;
}

static const int run_sigs[] = { SIGINT, SIGTERM, SIGHUP };

static const ClientHooks run_hooks = {
        .sigs = run_sigs,
        .n_sigs = ELEMENTSOF(run_sigs),
        .finished = "Finished",
        .on_finished = on_finished,
        .on_owner_changed = on_name_owner_changed,
        .on_disconnected = on_run_disconnected,
        .on_signal = on_signal,
};

/* The bus and event loop of a client waiting for a run's (or sandbox's) end: Finished, sbxd leaving
 * (attach() to the next one), and Ctrl-C/SIGTERM/SIGHUP becoming Stop(). 0, or sbxctl's exit status. */
int run_state_open(RunState *s, sd_bus **ret_bus, sd_event **ret_event) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        int r;

        r = client_connect(&run_hooks, s->may_direct ? &s->direct : NULL, &bus);
        if (r != 0)
                return r;
        r = sd_event_default(&event);
        if (r < 0)
                return failed("cannot create an event loop: %s", strerror(-r));
        s->bus = bus;
        s->event = event;
        r = client_watch(&run_hooks, bus, event, s);
        if (r < 0)
                return failed("cannot set up the bus connection: %s", strerror(-r));
        *ret_bus = TAKE_PTR(bus);
        *ret_event = TAKE_PTR(event);
        return 0;
}

/* The run's signals of its end: Finished, and Exited unless the answer waits for the cleanup. 0 or -errno. */
static int run_state_watch_end(RunState *s, sd_bus *bus) {
        if (s->wait_cleanup)
                return 0;
        return match_signal(bus, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Exited", on_finished, s);
}

/* The connection on sbxd's own socket ended mid-run: sbxd went away (an upgrade restarts it). The run is a
 * unit of its own and goes on; the next sbxd adopts it and is asked for it over the system bus, as when
 * sbxd leaves the bus (on_name_owner_changed()). */
static int run_state_to_bus(RunState *s) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

        log_debug("%s closed during run %s: the system bus from here on", SBX_BUS_SOCKET, s->run_id);
        s->direct = false;
        s->daemon = mfree(s->daemon);
        if (connect_bus(&bus) != 0 || client_watch_bus(&run_hooks, bus, s->event, s) < 0 ||
            run_state_watch_end(s, bus) < 0) {
                s->daemon_gone = true;
                return sd_event_exit(s->event, 0);
        }
        s->bus = s->system_bus = TAKE_PTR(bus);
        s->attach_tries = 0;
        return attach(s);
}

int run_state_follow(RunState *s, sd_bus_message *reply, const char *id) {
        int r;

        r = follow_reply(reply, id, &s->run_id, &s->daemon);
        if (r != 0)
                return r;
        /* Ctrl-C before there was a run to stop */
        if (s->got_signal)
                (void) on_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = (uint32_t) s->got_signal }, s);
        return 0;
}

/* The end of a Run or Exec call: the caller's stdin, stdout and stderr (/dev/null for those it has not got),
 * or with a terminal the run's end of its socket as all three */
static int append_stdio(sd_bus_message *m, const TermRelay *t, int *null_in, int *null_out, int *null_err) {
        int r;

        r = sd_bus_message_append(m, "as", 0);
        if (r >= 0 && t->peer >= 0)
                return sd_bus_message_append(m, "hhh", t->peer, t->peer, t->peer);
        if (r >= 0)
                r = sd_bus_message_append(m, "hhh", fd_or_null(STDIN_FILENO, O_RDONLY, null_in),
                                          fd_or_null(STDOUT_FILENO, O_WRONLY, null_out),
                                          fd_or_null(STDERR_FILENO, O_WRONLY, null_err));
        return r;
}

/* As call_for_id(), but a refused terminal that was not asked for is -ENOTTY, with nothing said (the
 * call is made again without one). */
static int call_for_id_tty(sd_bus *bus, sd_bus_message *call, const TermRelay *t, sd_bus_message **ret_reply,
                           const char **ret_id, char **ret_why) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, call, 60 * USEC_PER_SEC, &error, ret_reply);
        if (r < 0 && t->sock >= 0 && t->is_auto && sd_bus_error_has_name(&error, "org.sbx.Error.NoTerminal")) {
                *ret_why = strdup(error.message ?: "the profile gives none");
                return -ENOTTY;
        }
        if (r < 0)
                return bus_failure(bus, &error, r);
        if (sd_bus_message_read(*ret_reply, "s", ret_id) < 0 || !run_id_is_valid(*ret_id))
                return failed("sbxd sent an invalid reply");
        return 0;
}

/* What Run's and Exec's calls are made of: the request, and the caller's stdio or its terminal */
typedef struct StdioCall {
        const char *sandbox;        /* Exec: the sandbox; NULL: Run */
        const char *workspace, *dataset;
        int export_fd;
        char **cmd, **env;
        TermRelay *tty;
        int null_fds[3];            /* /dev/null opened for stdio the caller has not got */
} StdioCall;

static void stdio_call_done(StdioCall *c) {
        for (int i = 0; i < 3; i++)
                c->null_fds[i] = safe_close(c->null_fds[i]);
}

static int exec_options_append(sd_bus_message *m, const StdioCall *c) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && arg_timeout > 0)
                r = sd_bus_message_append(m, "{sv}", "timeout_usec", "t", arg_timeout);
        if (r >= 0 && arg_output_max > 0)
                r = sd_bus_message_append(m, "{sv}", "output_max", "t", arg_output_max);
        if (r >= 0)
                r = client_command_append(m, c->cmd, c->env);
        if (r >= 0)
                r = term_relay_append(c->tty, m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int stdio_call_build(sd_bus *bus, StdioCall *c, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        stdio_call_done(c);
        r = sd_bus_message_new_method_call(bus, &m, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE,
                                           c->sandbox ? "Exec" : "Run");
        if (r >= 0 && c->sandbox)
                r = sd_bus_message_append(m, "s", c->sandbox);
        if (r >= 0)
                r = c->sandbox ? exec_options_append(m, c) :
                        append_request(m, c->workspace, c->dataset, c->export_fd, false, c->cmd, c->env, c->tty);
        if (r >= 0)
                r = append_stdio(m, c->tty, &c->null_fds[0], &c->null_fds[1], &c->null_fds[2]);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Run or Exec; a terminal sbxd refused and nobody asked for (the gVisor tier) is dropped, with a note, and
 * the call made again without it. 0, or sbxctl's exit status. */
static int stdio_call(sd_bus *bus, StdioCall *c, sd_bus_message **ret_reply, const char **ret_id) {
        for (;;) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
                _cleanup_free_ char *why = NULL;
                int r;

                r = stdio_call_build(bus, c, &call);
                if (r < 0)
                        return failed("cannot build the request: %s", strerror(-r));
                r = call_for_id_tty(bus, call, c->tty, ret_reply, ret_id, &why);
                if (r != -ENOTTY)
                        return r;
                term_relay_drop(c->tty, strna(why));
        }
}

int call_for_id(sd_bus *bus, sd_bus_message *call, uint64_t usec, sd_bus_message **ret_reply, const char **ret_id) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, call, usec, &error, ret_reply);
        if (r < 0)
                return bus_failure(bus, &error, r);
        if (sd_bus_message_read(*ret_reply, "s", ret_id) < 0 || !run_id_is_valid(*ret_id))
                return failed("sbxd sent an invalid reply");
        return 0;
}

int follow_reply(sd_bus_message *reply, const char *id, char **ret_id, char **ret_daemon) {
        *ret_id = strdup(id);
        /* on sbxd's own socket a message has no sender: the socket stands for it */
        *ret_daemon = strdup(sd_bus_message_get_sender(reply) ?: SBX_BUS_SOCKET);
        if (!*ret_id || !*ret_daemon)
                return failed("out of memory");
        return 0;
}

/* A run the sbxctl front started on sbxd's own socket, which closed mid-run (sbxd went away: run-direct.c's
 * follow_elsewhere()): followed from here as run_state_to_bus() does, over the system bus, the next sbxd
 * asked for it (Attach). SBX_RUN_FOLLOW is its id, SBX_RUN_FOLLOW_SIGNAL the signal the front had got
 * (0: none), Stop() for it asked again of the next sbxd. */
static int run_follow(const char *id) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        const char *sig = getenv("SBX_RUN_FOLLOW_SIGNAL");
        RunState s = { .wait_cleanup = arg_wait_cleanup };
        int r, ret;

        if (!run_id_is_valid(id))
                return refused("SBX_RUN_FOLLOW: '%s' is not a run id", id);
        s.run_id = strdup(id);
        if (!s.run_id)
                return failed("out of memory");
        s.got_signal = sig ? atoi(sig) : 0;
        (void) unsetenv("SBX_RUN_FOLLOW");
        (void) unsetenv("SBX_RUN_FOLLOW_SIGNAL");
        r = run_state_open(&s, &bus, &event);
        if (r == 0 && run_state_watch_end(&s, bus) < 0)
                r = failed("cannot set up the bus connection");
        if (r == 0 && watch_hangup(event, on_run_hangup, &s) < 0)
                r = failed("cannot watch stdout and stderr");
        if (r != 0) {
                free(s.run_id);
                return r;
        }
        (void) attach(&s);
        r = sd_event_loop(event);
        ret = r < 0 ? failed("event loop failed: %s", strerror(-r)) :
                run_outcome(s.record, s.run_id, s.got_signal, s.disconnected, s.daemon_gone);
        free(s.run_id);
        free(s.daemon);
        run_record_free(s.record);
        return ret;
}

int verb_run(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *workspace = NULL, *dataset = NULL;
        _cleanup_close_ int export_fd = -EBADF;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_(term_relay_done) TermRelay tty = TERM_RELAY_INIT;
        _cleanup_(stdio_call_done) StdioCall c = { .null_fds = { -EBADF, -EBADF, -EBADF } };
        RunState s = {};
        char **cmd = argv;
        const char *id;
        int r, ret;

        if (getenv("SBX_RUN_FOLLOW"))
                return run_follow(getenv("SBX_RUN_FOLLOW"));
        if (argc > 0 && streq(argv[0], "--"))
                cmd++;
        r = command_start("run", "sbxctl run [OPTIONS] -- CMD [ARGS...]", cmd, &env);
        if (r != 0)
                return r;

        r = check_credential_files();
        if (r != 0)
                return r;
        if (arg_workspace) {
                r = resolve_dir("workspace", arg_workspace, &workspace);
                if (r != 0)
                        return r;
        }
        if (arg_dataset) {
                r = resolve_dir("dataset", arg_dataset, &dataset);
                if (r != 0)
                        return r;
        }
        if (arg_export) {
                if (arg_machine)
                        return refused("--export: not with --machine (a directory of this machine cannot be passed "
                                       "there)");
                export_fd = open(arg_export, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (export_fd < 0)
                        return refused("export: '%s': %s", arg_export,
                                       errno == ENOTDIR ? "not a directory" : strerror(errno));
        }
        {
                ClientRequest req;

                run_request_init(&req, workspace, dataset, export_fd, false);
                r = check_request_utf8(&req);
                if (r != 0)
                        return r;
        }

        s.may_direct = true;
        r = run_state_open(&s, &bus, &event);
        if (r != 0)
                return r;
        r = check_fd_passing(bus);
        if (r != 0)
                return r;
        /* the answer at Exited, as soon as the command has ended, unless asked to wait for the cleanup */
        s.wait_cleanup = arg_wait_cleanup || export_fd >= 0;
        r = run_state_watch_end(&s, bus);
        if (r < 0)
                return failed("cannot set up the bus connection: %s", strerror(-r));
        r = watch_hangup(event, on_run_hangup, &s);
        if (r < 0)
                return failed("cannot watch stdout and stderr: %s", strerror(-r));

        r = term_relay_open(&tty);
        if (r != 0)
                return r;
        c = (StdioCall) { .workspace = workspace, .dataset = dataset, .export_fd = export_fd, .cmd = cmd, .env = env,
                          .tty = &tty, .null_fds = { -EBADF, -EBADF, -EBADF } };
        r = stdio_call(bus, &c, &reply, &id);
        if (r == 0)
                r = run_state_follow(&s, reply, id);
        if (r == 0 && (r = term_relay_start(&tty, event, true)) < 0)
                r = failed("cannot relay the terminal: %s", strerror(-r));
        if (r != 0)
                return r;

        r = sd_event_loop(event);
        term_relay_finish(&tty);
        ret = r < 0 ? failed("event loop failed: %s", strerror(-r)) :
                run_outcome(s.record, s.run_id, s.got_signal, s.disconnected, s.daemon_gone);
        free(s.run_id);
        free(s.daemon);
        run_record_free(s.record);
        sd_bus_flush_close_unref(s.system_bus);
        return ret;
}

typedef struct ExecState {
        sd_bus *bus;
        sd_event *event;
        const char *sandbox;
        char *op;
        char *daemon;
        int got_signal;
        int exit_status;     /* -1 until ExecFinished */
        bool daemon_gone;
        bool disconnected;
        TermRelay *tty;
} ExecState;

static int on_exec_finished(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        ExecState *s = userdata;
        const char *sb, *op, *json;

        if (!s->op || !s->daemon || !streq_ptr(sd_bus_message_get_sender(msg), s->daemon))
                return 0;
        if (sd_bus_message_read(msg, "sss", &sb, &op, &json) < 0 || !streq(op, s->op))
                return 0;
        s->exit_status = exec_outcome(json, s->sandbox, s->op);
        return sd_event_exit(s->event, 0);
}

static int on_exec_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        ExecState *s = userdata;
        int r;

        /* with a terminal the window size goes to it: the kernel there tells the command */
        if (si->ssi_signo == SIGWINCH && s->tty && s->tty->sock >= 0) {
                term_relay_winch(s->tty);
                return 0;
        }
        if (s->got_signal == 0)
                s->got_signal = (int) si->ssi_signo;
        if (!s->op)
                return 0;
        r = sd_bus_call_method_async(s->bus, NULL, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "SignalExec", NULL,
                                     NULL, "ssi", s->sandbox, s->op, (int32_t) si->ssi_signo);
        if (r < 0)
                log_error_errno(r, "Failed to pass the signal on: %m");
        return 0;
}

static int on_exec_daemon_gone(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        ExecState *s = userdata;
        const char *name, *old, *new;

        if (!streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus") ||
            sd_bus_message_read(msg, "sss", &name, &old, &new) < 0)
                return 0;
        if (streq(name, SBX_BUS_NAME) && s->daemon && streq(old, s->daemon)) {
                s->daemon_gone = true;
                return sd_event_exit(s->event, 0);
        }
        return 0;
}

static int on_exec_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        ExecState *s = userdata;

        if (!sd_bus_message_is_signal(msg, "org.freedesktop.DBus.Local", "Disconnected") ||
            sd_bus_is_open(sd_bus_message_get_bus(msg)) > 0)
                return 0;
        s->disconnected = true;
        return sd_event_exit(s->event, 0);
}

static int on_exec_hangup(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) sd_event_source_set_enabled(src, SD_EVENT_OFF);
        log_debug("stdout or stderr hung up (the ssh connection ended): SIGHUP to the command");
        return on_exec_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = SIGHUP }, userdata);
}

static const int exec_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH };

static const ClientHooks exec_hooks = {
        .sigs = exec_sigs,
        .n_sigs = ELEMENTSOF(exec_sigs),
        .finished = "ExecFinished",
        .on_finished = on_exec_finished,
        .on_owner_changed = on_exec_daemon_gone,
        .on_disconnected = on_exec_disconnected,
        .on_signal = on_exec_signal,
};

int verb_exec(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_(term_relay_done) TermRelay tty = TERM_RELAY_INIT;
        _cleanup_(stdio_call_done) StdioCall c = { .null_fds = { -EBADF, -EBADF, -EBADF } };
        ExecState s = { .exit_status = -1, .tty = &tty };
        const char *sandbox, *op;
        char **cmd;
        int r;

        if (argc == 0 || streq(argv[0], "--"))
                return refused("exec: no sandbox given (usage: sbxctl exec [OPTIONS] SANDBOX -- CMD [ARGS...])");
        sandbox = s.sandbox = argv[0];
        r = exec_words(argc, argv, &cmd, &env);
        if (r <= 0)
                return -r;
        r = client_connect(&exec_hooks, NULL, &bus); /* Exec is on the system bus only */
        if (r != 0)
                return r;
        r = check_fd_passing(bus);
        if (r != 0)
                return r;
        r = sd_event_default(&event);
        if (r < 0)
                return failed("cannot create an event loop: %s", strerror(-r));
        s.bus = bus;
        s.event = event;
        r = client_watch(&exec_hooks, bus, event, &s);
        if (r >= 0)
                r = watch_hangup(event, on_exec_hangup, &s);
        if (r < 0)
                return failed("cannot set up the bus connection: %s", strerror(-r));
        r = term_relay_open(&tty);
        if (r != 0)
                return r;
        c = (StdioCall) { .sandbox = sandbox, .cmd = cmd, .env = env, .tty = &tty,
                          .null_fds = { -EBADF, -EBADF, -EBADF } };
        r = stdio_call(bus, &c, &reply, &op);
        if (r == 0)
                r = follow_reply(reply, op, &s.op, &s.daemon);
        if (r == 0 && (r = term_relay_start(&tty, event, false)) < 0)
                r = failed("cannot relay the terminal: %s", strerror(-r));
        if (r != 0)
                return r;
        if (s.got_signal)
                (void) on_exec_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = (uint32_t) s.got_signal }, &s);
        r = sd_event_loop(event);
        term_relay_finish(&tty);
        free(s.daemon);
        free(s.op);
        if (r < 0)
                return failed("event loop failed: %s", strerror(-r));
        if (s.disconnected)
                return complain(arg_machine ? SBXCTL_EXIT_UNREACHABLE : SBX_EXIT_FAILURE,
                                "the connection to the system bus%s ended; the command got SIGHUP", bus_owner());
        if (s.daemon_gone)
                return failed("sbxd went away; the command's outcome is unknown");
        return s.exit_status >= 0 ? s.exit_status : failed("no result for the command");
}
