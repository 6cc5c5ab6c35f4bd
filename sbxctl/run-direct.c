/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl run and exec on sbxd's own socket, spoken with src/wire: the front's path (front.c), which maps no
 * libsystemd. The same request, stdio, signals and end as run.c's verb_run() on that socket and its
 * verb_exec() on the system bus (docs/dbus.md, "sbxd's own socket"), for a run or an exec on this machine
 * without a terminal, and a run without --export or a credential from a file; anything else is
 * sbxctl-bus's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client-error.h"
#include "client-request.h"
#include "common.h"
#include "front.h"
#include "log.h"
#include "run.h"
#include "utf8.h"
#include "wire.h"
#include "wire-socket.h"

/* how long sbxd has to answer Run or Exec (as sbxctl-bus's call) */
#define RUN_REPLY_TIMEOUT_MSEC 60000
/* Exited or Finished that came before Run's reply: kept until the id is known */
#define EARLY_MAX 4

typedef struct EarlySignal {
        char *member, *id, *json;
} EarlySignal;

/* A run, or a command in a sandbox (sandbox set): the call, its id from the reply, and its end. */
typedef struct DirectRun {
        WireConn conn;
        uint32_t serial;
        const char *sandbox;    /* exec: the sandbox (as given); NULL: a run */
        char *run_id;           /* the reply's: the run's id, or the exec's */
        RunRecord *record;      /* a run's end */
        int exit_status;        /* an exec's end (exec_outcome()) */
        bool done;
        bool wait_cleanup;
        int got_signal;
        EarlySignal early[EARLY_MAX];
        unsigned n_early;
} DirectRun;

static void direct_run_done(DirectRun *d) {
        wire_conn_done(&d->conn);
        free(d->run_id);
        run_record_free(d->record);
        for (unsigned i = 0; i < d->n_early; i++) {
                free(d->early[i].member);
                free(d->early[i].id);
                free(d->early[i].json);
        }
}

/* ---- the request ---------------------------------------------------------------------------------- */

static int put_key(void *userdata, const char *key, char type, const void *value) {
        WireWriter *w = userdata;
        char t[2] = { type, 0 };

        wire_open(w, 'e', "sv");
        wire_append_basic(w, 's', key);
        wire_open(w, 'v', t);
        wire_append_basic(w, type, value);
        wire_close(w);
        wire_close(w);
        return w->error;
}

static void put_strv(WireWriter *w, const char *key, char **l) {
        wire_open(w, 'e', "sv");
        wire_append_basic(w, 's', key);
        wire_open(w, 'v', "as");
        wire_append_strv(w, l);
        wire_close(w);
        wire_close(w);
}

static void put_byte_strings(WireWriter *w, const char *key, char **l) {
        wire_open(w, 'e', "sv");
        wire_append_basic(w, 's', key);
        wire_open(w, 'v', "aay");
        wire_open(w, 'a', "ay");
        for (char **i = l; i && *i; i++)
                wire_append_bytes(w, *i, strlen(*i));
        wire_close(w);
        wire_close(w);
        wire_close(w);
}

/* Run(a{sv} request, as argv, h stdin, h stdout, h stderr), as append_request() and append_stdio() make it. */
static int run_call(const ClientRequest *req, char **cmd, char **env, const int stdio[3], uint8_t **ret,
                    size_t *ret_len, WireWriter *w) {
        wire_open(w, 'a', "{sv}");
        (void) client_request_walk(req, put_key, w);
        if (arg_caches_ro)
                put_strv(w, "caches_ro", arg_caches_ro);
        if (arg_credentials)
                put_strv(w, "credentials", arg_credentials);
        put_byte_strings(w, "argv_bytes", cmd);
        if (env && env[0])
                put_byte_strings(w, "environment", env);
        wire_close(w);
        wire_append_strv(w, NULL);
        for (int i = 0; i < 3; i++)
                wire_append_basic(w, 'h', &stdio[i]);
        return wire_call_build(w, 1, 0, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Run", ret, ret_len);
}

/* The call member with the body in w, no answer wanted; w is emptied. 0 or -errno. */
static int send_no_reply(DirectRun *d, WireWriter *w, const char *member) {
        _cleanup_free_ uint8_t *msg = NULL;
        size_t len;
        int r;

        r = wire_call_build(w, ++d->serial, WIRE_FLAG_NO_REPLY_EXPECTED, SBX_BUS_NAME, SBX_BUS_PATH,
                            SBX_BUS_INTERFACE, member, &msg, &len);
        if (r >= 0)
                r = wire_conn_send(&d->conn, msg, len, NULL, 0);
        wire_writer_done(w);
        return r;
}

/* Stop(run) (as run.c's request_stop()) */
static void request_stop(DirectRun *d) {
        WireWriter w = {};
        int r;

        wire_append_basic(&w, 's', d->run_id);
        r = send_no_reply(d, &w, "Stop");
        if (r < 0)
                log_error_errno(r, "Failed to ask sbxd to stop run %s: %m", d->run_id);
}

/* SignalExec(sandbox, op, signal) (as run.c's on_exec_signal()) */
static void signal_exec(DirectRun *d, int sig) {
        WireWriter w = {};
        int32_t v = sig;
        int r;

        wire_append_basic(&w, 's', d->sandbox);
        wire_append_basic(&w, 's', d->run_id);
        wire_append_basic(&w, 'i', &v);
        r = send_no_reply(d, &w, "SignalExec");
        if (r < 0)
                log_error_errno(r, "Failed to pass the signal on: %m");
}

/* A run is stopped; a command in a sandbox gets the signal itself (to its process group). */
static void pass_signal(DirectRun *d, int sig) {
        if (d->sandbox)
                signal_exec(d, sig);
        else
                request_stop(d);
}

static void on_signal_number(DirectRun *d, int sig) {
        if (d->got_signal == 0)
                d->got_signal = sig;
        if (d->run_id)
                pass_signal(d, sig);
}

/* ---- what sbxd sends ---------------------------------------------------------------------------- */

/* Exited (unless the answer waits for the cleanup) or Finished of our run: its record, and the wait is over. */
static void on_end(DirectRun *d, const char *member, const char *id, const char *json) {
        _cleanup_free_ char *err = NULL;

        if (!streq(id, d->run_id) || (d->wait_cleanup && !streq(member, "Finished")))
                return;
        if (run_record_from_json(json, &d->record, &err) < 0)
                log_error("sbxd sent an invalid record: %s", strna(err));
        d->done = true;
}

static int keep_early(DirectRun *d, const char *member, const char *id, const char *json) {
        EarlySignal *e;

        if (d->n_early >= EARLY_MAX)
                return 0; /* not ours: ours come after its reply's id was sent, at most one each */
        e = &d->early[d->n_early];
        *e = (EarlySignal) { strdup(member), strdup(id), strdup(json) };
        if (!e->member || !e->id || !e->json)
                return -ENOMEM;
        d->n_early++;
        return 0;
}

static const int codes[_CLIENT_FAULT_MAX] = {
        [CLIENT_FAULT_REFUSED] = SBX_EXIT_REFUSED,
        [CLIENT_FAULT_FAILED] = SBX_EXIT_FAILURE,
        [CLIENT_FAULT_NOT_FOUND] = 1,
};

/* One message: 0 to go on, else sbxctl's exit status (Run refused). */
static int on_message(DirectRun *d, const WireMessage *m) {
        const char *a, *b;

        if ((m->type == WIRE_METHOD_RETURN || m->type == WIRE_ERROR) && m->reply_serial == 1 && !d->run_id) {
                _cleanup_free_ char *sentence = NULL;
                int fault;

                if (m->type == WIRE_METHOD_RETURN) {
                        if (wire_read_strings(m, &a, NULL) < 0 || !run_id_is_valid(a))
                                return failed("sbxd sent an invalid reply");
                        d->run_id = strdup(a);
                        if (!d->run_id)
                                return failed("out of memory");
                        /* Ctrl-C before there was a run to stop or a command to signal */
                        if (d->got_signal)
                                pass_signal(d, d->got_signal);
                        for (unsigned i = 0; i < d->n_early && !d->done; i++)
                                on_end(d, d->early[i].member, d->early[i].id, d->early[i].json);
                        return 0;
                }
                if (wire_read_strings(m, &a, NULL) < 0)
                        a = NULL;
                fault = client_error_sentence(m->error_name, a, -EIO, "", false, &sentence);
                if (fault < 0)
                        return failed("out of memory");
                return complain(codes[fault], "%s", sentence);
        }
        if (m->type != WIRE_SIGNAL || !m->member || !streq_ptr(m->interface, SBX_BUS_INTERFACE) ||
            !streq_ptr(m->path, SBX_BUS_PATH))
                return 0;
        /* an exec's end comes after Exec's reply on the same connection: none before it is ours */
        if (d->sandbox) {
                const char *x[3];

                if (d->run_id && streq(m->member, "ExecFinished") && wire_read_string_list(m, 3, x) >= 0 &&
                    streq(x[1], d->run_id)) {
                        d->exit_status = exec_outcome(x[2], d->sandbox, d->run_id);
                        d->done = true;
                }
                return 0;
        }
        if (!(streq(m->member, "Exited") || streq(m->member, "Finished")) || wire_read_strings(m, &a, &b) < 0)
                return 0;
        if (!d->run_id)
                return keep_early(d, m->member, a, b) < 0 ? failed("out of memory") : 0;
        on_end(d, m->member, a, b);
        return 0;
}

/* ---- the wait ------------------------------------------------------------------------------------- */

/* sbxd went away mid-run (an upgrade restarts it): the run goes on as a unit of its own, and sbxctl-bus
 * asks the next sbxd for it over the system bus (run.c's run_follow()), with what was asked so far. */
static int follow_elsewhere(DirectRun *d, char **argv) {
        char sig[16];

        log_debug("%s closed during run %s: sbxctl-bus follows it on the system bus", SBX_BUS_SOCKET, d->run_id);
        (void) snprintf(sig, sizeof sig, "%d", d->got_signal);
        if (setenv("SBX_RUN_FOLLOW", d->run_id, 1) < 0 || setenv("SBX_RUN_FOLLOW_SIGNAL", sig, 1) < 0)
                return failed("out of memory");
        fflush(stdout);
        fflush(stderr);
        execv(sbxctl_bus_path(), argv);
        return failed("sbxd went away during run %s, and %s cannot be started to follow it: %m", d->run_id,
                      sbxctl_bus_path());
}

static int64_t now_msec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* stdout and stderr watched for their reader going away, as run.c's watch_hangup(): started by sshd without
 * a terminal, that is how the connection's end shows. */
static bool watch_hangup_of(int fd) {
        struct stat st;

        return getenv("SSH_CONNECTION") && !getenv("SSH_TTY") && fstat(fd, &st) >= 0 &&
               (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/* Until the run's end (0: its record in d->record, or none if sbxd sent an invalid one) or the exec's
 * (0: its exit status in d->exit_status), or sbxctl's exit status when the wait failed (said) or went to
 * sbxctl-bus (follow_elsewhere()). */
static int wait_end(DirectRun *d, int sigfd, char **argv) {
        struct pollfd p[4] = {
                { .fd = d->conn.fd, .events = POLLIN },
                { .fd = sigfd, .events = POLLIN },
                { .fd = watch_hangup_of(STDOUT_FILENO) ? STDOUT_FILENO : -1 },
                { .fd = watch_hangup_of(STDERR_FILENO) ? STDERR_FILENO : -1 },
        };
        int64_t deadline = now_msec() + RUN_REPLY_TIMEOUT_MSEC;
        int r;

        while (!d->done) {
                WireMessage m;
                int timeout = d->run_id ? -1 : (int) MAX(deadline - now_msec(), 0);

                r = poll(p, ELEMENTSOF(p), timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return failed("cannot wait for sbxd: %m");
                if (r == 0)
                        return failed("sbxd did not answer within %d s", RUN_REPLY_TIMEOUT_MSEC / 1000);
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;

                        while (read(sigfd, &si, sizeof si) == (ssize_t) sizeof si)
                                on_signal_number(d, (int) si.ssi_signo);
                }
                for (int i = 2; i < 4; i++)
                        if (p[i].revents & (POLLERR | POLLHUP)) {
                                log_debug("stdout or stderr hung up (the ssh connection ended): SIGHUP");
                                p[i].fd = -1;
                                on_signal_number(d, SIGHUP);
                        }
                if (!p[0].revents)
                        continue;
                r = wire_conn_fill(&d->conn);
                while (r >= 0 && !d->done && (r = wire_conn_next(&d->conn, &m)) > 0) {
                        r = on_message(d, &m);
                        if (r != 0)
                                return r;
                }
                if (r == -EBADMSG)
                        return failed("sbxd at %s sent what is not a D-Bus message", SBX_BUS_SOCKET);
                if (r < 0 && d->run_id && d->sandbox)
                        return failed("sbxd went away; the command's outcome is unknown");
                if (r < 0 && d->run_id)
                        return follow_elsewhere(d, argv);
                if (r < 0)
                        return failed("the connection to sbxd at %s ended before it answered: %s", SBX_BUS_SOCKET,
                                      strerror(-r));
        }
        return 0;
}

/* ---- the call ----------------------------------------------------------------------------------- */

/* The method call, its body from the request's own part on and the caller's stdio (as append_stdio()). */
typedef int (*BuildCall)(const void *userdata, const int stdio[3], WireWriter *w, uint8_t **ret, size_t *ret_len);

static bool use_terminal(void) {
        return arg_tty > 0 || (arg_tty < 0 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
}

/* Not what sbxctl-bus does: another machine (-H, -M), SBX_DIRECT_SOCKET=0, a terminal, a machine without
 * systemd (it says so). */
static bool direct_possible(void) {
        const char *e = getenv("SBX_DIRECT_SOCKET");

        return !arg_host && !arg_machine && !(e && streq(e, "0")) && !use_terminal() &&
               access("/run/systemd/system/", F_OK) >= 0;
}

/* Connects (or RUN_DIRECT_ELSEWHERE, nothing said but in the debug log, when the socket is not usable),
 * sends the call with the caller's stdio, and waits for its end (wait_end()).
 * The signals in sigs are taken from the shell and passed on. */
static int call_and_wait(DirectRun *d, const int *sigs, size_t n_sigs, BuildCall build, const void *userdata,
                         char **orig_argv) {
        _cleanup_(wire_writer_done) WireWriter w = {};
        _cleanup_free_ uint8_t *msg = NULL;
        _cleanup_close_ int sigfd = -EBADF, null_in = -EBADF, null_out = -EBADF, null_err = -EBADF;
        sigset_t mask;
        size_t len;
        int stdio[3], r;

        take_signals(sigs, n_sigs);
        r = wire_conn_open(SBX_BUS_SOCKET, 0, &d->conn);
        if (r <= 0) {
                /* sbxctl-bus tries a run's way again, and says which it took; an exec's goes to the bus */
                if (d->sandbox)
                        log_debug("%s not usable: the system bus", SBX_BUS_SOCKET);
                return RUN_DIRECT_ELSEWHERE;
        }
        log_debug("connected to sbxd at %s", SBX_BUS_SOCKET);
        sigemptyset(&mask);
        for (size_t i = 0; i < n_sigs; i++)
                sigaddset(&mask, sigs[i]);
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0)
                return failed("cannot watch for signals: %m");

        stdio[0] = fd_or_null(STDIN_FILENO, O_RDONLY, &null_in);
        stdio[1] = fd_or_null(STDOUT_FILENO, O_WRONLY, &null_out);
        stdio[2] = fd_or_null(STDERR_FILENO, O_WRONLY, &null_err);
        if (stdio[0] < 0 || stdio[1] < 0 || stdio[2] < 0)
                return failed("cannot open /dev/null: %m");
        r = build(userdata, stdio, &w, &msg, &len);
        if (r < 0)
                return failed("cannot build the request: %s", strerror(-r));
        r = wire_conn_send(&d->conn, msg, len, w.fds, w.n_fds);
        if (r < 0)
                return failed("cannot send the request to sbxd at %s: %s", SBX_BUS_SOCKET, strerror(-r));
        null_in = safe_close(null_in);
        null_out = safe_close(null_out);
        null_err = safe_close(null_err);
        return wait_end(d, sigfd, orig_argv);
}

/* ---- the run ------------------------------------------------------------------------------------ */

typedef struct RunArgs {
        const ClientRequest *req;
        char **cmd, **env;
} RunArgs;

static int build_run(const void *userdata, const int stdio[3], WireWriter *w, uint8_t **ret, size_t *ret_len) {
        const RunArgs *a = userdata;

        return run_call(a->req, a->cmd, a->env, stdio, ret, ret_len, w);
}

int run_direct(int argc, char **argv, char **orig_argv) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
        _cleanup_(direct_run_done) DirectRun d = { .conn = WIRE_CONN_INIT, .serial = 1 };
        _cleanup_free_ char *workspace = NULL, *dataset = NULL;
        _cleanup_strv_free_ char **env = NULL;
        char **cmd = argv;
        ClientRequest req;
        int r;

        /* and what else sbxctl-bus does: the export's review, a credential from a file */
        if (!direct_possible() || arg_export || arg_credential_files)
                return RUN_DIRECT_ELSEWHERE;

        if (argc > 0 && streq(argv[0], "--"))
                cmd++;
        r = command_start("run", "sbxctl run [OPTIONS] -- CMD [ARGS...]", cmd, &env);
        if (r != 0)
                return r;
        if (arg_workspace && (r = resolve_dir("workspace", arg_workspace, &workspace)) != 0)
                return r;
        if (arg_dataset && (r = resolve_dir("dataset", arg_dataset, &dataset)) != 0)
                return r;
        run_request_init(&req, workspace, dataset, -EBADF, false);
        if ((r = check_request_utf8(&req)) != 0)
                return r;

        /* the answer at Exited, as soon as the command has ended, unless asked to wait for the cleanup */
        d.wait_cleanup = arg_wait_cleanup;
        r = call_and_wait(&d, sigs, ELEMENTSOF(sigs), build_run, &(RunArgs) { &req, cmd, env }, orig_argv);
        if (r != 0)
                return r;
        return run_outcome(d.record, d.run_id, d.got_signal, false, false);
}

/* ---- the exec ----------------------------------------------------------------------------------- */

typedef struct ExecArgs {
        const char *sandbox;
        char **cmd, **env;
} ExecArgs;

static void put_u64(WireWriter *w, const char *key, uint64_t v) {
        (void) put_key(w, key, 't', &v);
}

/* Exec(s sandbox, a{sv} options, as argv, h stdin, h stdout, h stderr), as run.c's exec_options_append() and
 * append_stdio() make it. */
static int build_exec(const void *userdata, const int stdio[3], WireWriter *w, uint8_t **ret, size_t *ret_len) {
        const ExecArgs *a = userdata;

        wire_append_basic(w, 's', a->sandbox);
        wire_open(w, 'a', "{sv}");
        if (arg_timeout > 0)
                put_u64(w, "timeout_usec", arg_timeout);
        if (arg_output_max > 0)
                put_u64(w, "output_max", arg_output_max);
        put_byte_strings(w, "argv_bytes", a->cmd);
        if (a->env && a->env[0])
                put_byte_strings(w, "environment", a->env);
        wire_close(w);
        wire_append_strv(w, NULL);
        for (int i = 0; i < 3; i++)
                wire_append_basic(w, 'h', &stdio[i]);
        return wire_call_build(w, 1, 0, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Exec", ret, ret_len);
}

int exec_direct(int argc, char **argv, char **orig_argv) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH };
        _cleanup_(direct_run_done) DirectRun d = { .conn = WIRE_CONN_INIT, .serial = 1, .exit_status = -1 };
        _cleanup_strv_free_ char **env = NULL;
        char **cmd;
        int r;

        /* and what else sbxctl-bus does: no sandbox given, a name sd-bus would not send (it says so) */
        if (!direct_possible() || argc == 0 || streq(argv[0], "--") || !utf8_valid_dbus(argv[0], strlen(argv[0])))
                return RUN_DIRECT_ELSEWHERE;
        d.sandbox = argv[0];
        r = exec_words(argc, argv, &cmd, &env);
        if (r <= 0)
                return -r;
        /* options after the sandbox: -H, -M, -t */
        if (arg_host || arg_machine || use_terminal())
                return RUN_DIRECT_ELSEWHERE;

        r = call_and_wait(&d, sigs, ELEMENTSOF(sigs), build_exec, &(ExecArgs) { d.sandbox, cmd, env }, orig_argv);
        if (r != 0)
                return r;
        return d.exit_status >= 0 ? d.exit_status : failed("no result for the command");
}
