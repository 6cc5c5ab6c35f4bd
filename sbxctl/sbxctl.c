/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl: run commands in sbx sandboxes and inspect their records. See sbxctl(1). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "exit-codes.h"
#include "fileio.h"
#include "grant.h"
#include "log.h"
#include "policy.h"
#include "profile-load.h"
#include "observe.h"
#include "record.h"
#include "command-line.h"
#include "sbxctl.h"

/* One word for a POSIX shell (the login shell on the other end of ssh): in single quotes, ' as '\'' */
static void shell_quote(FILE *f, const char *s) {
        fputc('\'', f);
        for (; *s; s++)
                if (*s == '\'')
                        fputs("'\\''", f);
                else
                        fputc(*s, f);
        fputc('\'', f);
}

/* run and exec with -H. Their stdin, stdout and stderr are file descriptors passed in the D-Bus call, and D-Bus
 * over ssh cannot carry file descriptors (systemd-stdio-bridge relays messages, not descriptors). So sbxctl runs
 * itself on HOST with the same arguments but -H, and ssh carries what the descriptors would have: the streams,
 * the terminal, Ctrl-C, the end of the connection (see watch_hangup()) and the exit status. */
static int exec_over_ssh(void) {
        _cleanup_free_ char *dest = NULL, *port = NULL, *machine = NULL, *cmdline = NULL;
        const char *args[16];
        size_t n = 0, size = 0;
        FILE *f;
        int r;

        r = parse_host(arg_host, &dest, &port, &machine);
        if (r == -ENOMEM)
                return failed("out of memory");
        if (r < 0)
                return refused("--host: '%s' is not [USER@]HOST[:PORT][/MACHINE]", arg_host);
        f = open_memstream(&cmdline, &size);
        if (!f)
                return failed("out of memory");
        fputs("sbxctl", f);
        if (machine) {
                fputs(" -M ", f);
                shell_quote(f, machine);
        }
        for (size_t i = 1; arg_argv[i]; i++)
                if (!arg_host_word[i]) {
                        fputc(' ', f);
                        shell_quote(f, arg_argv[i]);
                }
        if (fclose(f) != 0 || !cmdline)
                return failed("out of memory");

        args[n++] = "ssh";
        args[n++] = "-x";
        /* a terminal on the other end only when this end is all terminal: otherwise the three streams stay
         * apart and byte for byte what the command wrote */
        args[n++] = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) ? "-t" : "-T";
        args[n++] = "-o";
        args[n++] = "BatchMode=yes";
        args[n++] = "-o";
        args[n++] = "LogLevel=ERROR"; /* errors, but no "Connection to HOST closed." after each command */
        if (port) {
                args[n++] = "-p";
                args[n++] = port;
        }
        args[n++] = "--";
        args[n++] = dest;
        args[n++] = cmdline;
        args[n] = NULL;
        log_debug("on %s: ssh ... -- %s %s", arg_host, dest, cmdline);
        fflush(stdout);
        execvp("ssh", (char **) args);
        return unreachable("cannot run ssh: %s", strerror(errno));
}

/* ---- run ------------------------------------------------------------------------------------------- */

typedef struct RunState {
        sd_bus *bus;
        sd_event *event;
        char *run_id;
        char *daemon;          /* unique name of sbxd, from the Run reply */
        RunRecord *record;
        int got_signal;
        bool daemon_gone;
        bool disconnected;     /* the connection itself ended (with -H: ssh) */
        unsigned attach_tries;
} RunState;

/* how long (in tries, a second apart) to wait for a new sbxd after the one the run was started with left */
#define ATTACH_TRIES 20
#define ATTACH_CALL_TIMEOUT_USEC (5 * USEC_PER_SEC)

static int attach(RunState *s);

static int on_finished(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;
        const char *id, *json;
        _cleanup_free_ char *err = NULL;

        if (!s->run_id || !s->daemon || !streq_ptr(sd_bus_message_get_sender(msg), s->daemon))
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

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
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

/* sd-bus's own message when the connection ends: nothing more can come */
static int on_run_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        RunState *s = userdata;

        /* the bus is closing already: this one is sd-bus's own, nobody else's */
        if (!sd_bus_message_is_signal(msg, "org.freedesktop.DBus.Local", "Disconnected") ||
            sd_bus_is_open(sd_bus_message_get_bus(msg)) > 0)
                return 0;
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
        if (rec->finished) {  /* it ended while no sbxd was there to tell us */
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

static int fd_or_null(int fd, int flags, int *ret_opened) {
        /* A terminal as stdin goes read-only (a description of its own): opened for writing, the
         * command could write to the caller's terminal past the output limit. */
        if (fd == STDIN_FILENO && fd_is_writable_tty(fd)) {
                *ret_opened = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_CLOEXEC);
                if (*ret_opened >= 0)
                        return *ret_opened;
        }
        if (fcntl(fd, F_GETFD) >= 0)
                return fd;
        *ret_opened = open("/dev/null", flags | O_CLOEXEC);
        return *ret_opened;
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

/* --credential NAME=@FILE: FILE must be a regular file sbxctl can read, of 1 byte to 64 KiB. */
static int check_credential_files(void) {
        for (char **i = arg_credential_files; i && i[0] && i[1]; i += 2) {
                struct stat st;

                if (stat(i[1], &st) < 0 || access(i[1], R_OK) < 0)
                        return refused("--credential: cannot read '%s': %m", i[1]);
                if (!S_ISREG(st.st_mode))
                        return refused("--credential: '%s' is not a regular file", i[1]);
                if (st.st_size < 1 || st.st_size > (off_t) SECRET_MAX)
                        return refused("--credential: '%s' is empty or larger than %u KiB", i[1], SECRET_MAX / 1024);
        }
        return 0;
}

static int append_request(sd_bus_message *m, const char *workspace, const char *dataset, int export_fd, bool sandbox,
                          char **cmd, char **env) {
        char *term = getenv("TERM");
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && arg_profile)
                r = sd_bus_message_append(m, "{sv}", "profile", "s", arg_profile);
        if (r >= 0 && workspace)
                r = sd_bus_message_append(m, "{sv}", "workspace", "s", workspace);
        if (r >= 0 && dataset)
                r = sd_bus_message_append(m, "{sv}", "dataset", "s", dataset);
        if (r >= 0 && arg_image)
                r = sd_bus_message_append(m, "{sv}", "image", "s", arg_image);
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
        if (r >= 0 && arg_network)
                r = sd_bus_message_append(m, "{sv}", "network", "s", arg_network);
        if (r >= 0 && arg_cpu > 0)
                r = sd_bus_message_append(m, "{sv}", "cpu_percent", "t", arg_cpu);
        if (r >= 0 && arg_memory > 0)
                r = sd_bus_message_append(m, "{sv}", "memory", "t", arg_memory);
        if (r >= 0 && arg_tasks > 0)
                r = sd_bus_message_append(m, "{sv}", "tasks", "t", arg_tasks);
        if (r >= 0 && arg_timeout > 0)
                r = sd_bus_message_append(m, "{sv}", "timeout_usec", "t", arg_timeout);
        /* TERM only for a terminal, and only a name sbxd would accept (else the run goes without it) */
        if (r >= 0 && !sandbox && term && isatty(STDOUT_FILENO) && run_request_term_is_valid(term))
                r = sd_bus_message_append(m, "{sv}", "term", "s", term);
        if (r >= 0 && sandbox && arg_idle_timeout > 0)
                r = sd_bus_message_append(m, "{sv}", "idle_timeout_usec", "t", arg_idle_timeout);
        if (r >= 0 && sandbox && arg_name)
                r = sd_bus_message_append(m, "{sv}", "name", "s", arg_name);
        if (r >= 0 && sandbox && arg_detach)
                r = sd_bus_message_append(m, "{sv}", "detach", "b", 1);
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
                r = command_append(m, cmd, env);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* The directory's absolute path without symlinks: sbxd wants nothing else. */
static int resolve_dir(const char *what, const char *arg, char **ret) {
        struct stat st;

        /* a directory of the other machine: sbxd there checks it (this machine's file system says nothing) */
        if (arg_host || arg_machine) {
                if (arg[0] != '/')
                        return refused("%s: '%s' is a directory%s: give it as an absolute path there", what, arg,
                                       bus_owner());
                *ret = strdup(arg);
                return *ret ? 0 : failed("out of memory");
        }
        if (stat(arg, &st) < 0) {
                if (errno == ENOENT)
                        return refused("%s: '%s' does not exist", what, arg);
                return refused("%s: '%s': %s", what, arg, strerror(errno));
        }
        if (!S_ISDIR(st.st_mode))
                return refused("%s: '%s' is not a directory", what, arg);
        *ret = realpath(arg, NULL);
        if (!*ret)
                return refused("%s: '%s': %s", what, arg, strerror(errno));
        return 0;
}

/* Signals are handled from the event loop from here on. A shell may have started us with them ignored
 * (a background job): take them back first. */
static void take_signals(const int *sigs, size_t n) {
        sigset_t mask;

        sigemptyset(&mask);
        for (size_t i = 0; i < n; i++) {
                (void) signal(sigs[i], SIG_DFL);
                sigaddset(&mask, sigs[i]);
        }
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
}

/* The bus and event loop of a client waiting for a run's (or sandbox's) end: Finished, sbxd leaving
 * (attach() to the next one), and Ctrl-C/SIGTERM/SIGHUP becoming Stop(). 0, or sbxctl's exit status. */
static int run_state_open(RunState *s, sd_bus **ret_bus, sd_event **ret_event) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        int r;

        r = check_systemd();
        if (r != 0)
                return r;
        take_signals(sigs, ELEMENTSOF(sigs));
        r = connect_bus(&bus);
        if (r != 0)
                return r;
        r = sd_event_default(&event);
        if (r < 0)
                return failed("cannot create an event loop: %s", strerror(-r));
        s->bus = bus;
        s->event = event;
        r = sd_bus_attach_event(bus, event, 0);
        if (r >= 0)
                r = match_signal(bus, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Finished", on_finished, s);
        if (r >= 0)
                r = match_signal(bus, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                 on_name_owner_changed, s);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, on_run_disconnected, s);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sigs); i++)
                r = sd_event_add_signal(event, NULL, sigs[i], on_signal, s);
        if (r < 0)
                return failed("cannot set up the bus connection: %s", strerror(-r));
        *ret_bus = TAKE_PTR(bus);
        *ret_event = TAKE_PTR(event);
        return 0;
}

static int verb_run(char **cmd) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *workspace = NULL, *dataset = NULL;
        _cleanup_close_ int null_in = -EBADF, null_out = -EBADF, null_err = -EBADF, export_fd = -EBADF;
        _cleanup_strv_free_ char **env = NULL;
        RunState s = {};
        bool export_failed = false;
        const char *id;
        int r, ret;

        if (strv_length(cmd) == 0)
                return refused("run: no command given (usage: sbxctl run [OPTIONS] -- CMD [ARGS...])");
        if (arg_host)
                return exec_over_ssh();
        r = command_prepare(cmd, &env);
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

        r = run_state_open(&s, &bus, &event);
        if (r != 0)
                return r;
        r = check_fd_passing(bus);
        if (r != 0)
                return r;
        r = watch_hangup(event, on_run_hangup, &s);
        if (r < 0)
                return failed("cannot watch stdout and stderr: %s", strerror(-r));

        r = sd_bus_message_new_method_call(bus, &call, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Run");
        if (r >= 0)
                r = append_request(call, workspace, dataset, export_fd, false, cmd, env);
        if (r >= 0)
                r = sd_bus_message_append(call, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append(call, "hhh", fd_or_null(STDIN_FILENO, O_RDONLY, &null_in),
                                          fd_or_null(STDOUT_FILENO, O_WRONLY, &null_out),
                                          fd_or_null(STDERR_FILENO, O_WRONLY, &null_err));
        if (r < 0)
                return failed("cannot build the request: %s", strerror(-r));

        r = sd_bus_call(bus, call, 60 * USEC_PER_SEC, &error, &reply);
        if (r < 0)
                return bus_failure(bus, &error, r);
        r = sd_bus_message_read(reply, "s", &id);
        if (r < 0 || !run_id_is_valid(id))
                return failed("sbxd sent an invalid reply");
        s.run_id = strdup(id);
        s.daemon = strdup(sd_bus_message_get_sender(reply));
        if (!s.run_id || !s.daemon)
                return failed("out of memory");
        if (s.got_signal)
                (void) on_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = (uint32_t) s.got_signal }, &s);

        r = sd_event_loop(event);
        if (r >= 0 && s.record)
                print_unenforced(s.record);
        if (r >= 0 && s.record && !arg_quiet) {
                print_observations(s.record);
                print_egress_summary(s.record);
        }
        if (r >= 0 && s.record)
                export_failed = print_export_summary(s.record);
        if (r < 0)
                ret = failed("event loop failed: %s", strerror(-r));
        else if (s.disconnected)
                ret = complain(arg_machine ? SBXCTL_EXIT_UNREACHABLE : SBX_EXIT_FAILURE,
                               "the connection to the system bus%s ended during run %s, which ends with it",
                               bus_owner(), s.run_id);
        else if (s.daemon_gone)
                ret = failed("sbxd went away during run %s; its outcome is unknown", s.run_id);
        else if (!s.record)
                ret = failed("no valid record for run %s", s.run_id);
        else if (s.record->stop_reason == STOP_REFUSED || s.record->stop_reason == STOP_START_FAILED)
                ret = failed("run %s did not start: %s", s.run_id, strna(s.record->error));
        else if (s.record->stop_reason == STOP_LOST)
                ret = failed("run %s ended with an outcome sbx does not know: %s", s.run_id,
                             strna(s.record->error));
        else if (s.record->stop_reason == STOP_CANCELLED && s.got_signal > 0)
                ret = 128 + s.got_signal;
        else
                ret = run_record_exit_status(s.record); /* a limit that stopped it has its line above */
        /* a command that succeeded, its output not delivered: not a success (the line is above) */
        if (ret == 0 && export_failed)
                ret = SBX_EXIT_FAILURE;

        free(s.run_id);
        free(s.daemon);
        run_record_free(s.record);
        return ret;
}

/* ---- sandboxes ------------------------------------------------------------------------------------- */

static int verb_create(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *workspace = NULL, *dataset = NULL;
        RunState s = {};
        const char *id;
        int r, ret = 0;

        if ((r = check_credential_files()) != 0)
                return r;
        if (command_env_given())
                return refused("create: -E/--setenv and --env-file are given to each command (exec), not to the "
                               "sandbox");
        if (arg_workspace && (r = resolve_dir("workspace", arg_workspace, &workspace)) != 0)
                return r;
        if (arg_dataset && (r = resolve_dir("dataset", arg_dataset, &dataset)) != 0)
                return r;
        r = run_state_open(&s, &bus, &event);
        if (r != 0)
                return r;
        r = sd_bus_message_new_method_call(bus, &call, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "CreateSandbox");
        if (r >= 0)
                r = append_request(call, workspace, dataset, -EBADF, true, NULL, NULL);
        if (r < 0)
                return failed("cannot build the request: %s", strerror(-r));
        r = sd_bus_call(bus, call, 120 * USEC_PER_SEC, &error, &reply);
        if (r < 0)
                return bus_failure(bus, &error, r);
        r = sd_bus_message_read(reply, "s", &id);
        if (r < 0 || !run_id_is_valid(id))
                return failed("sbxd sent an invalid reply");
        printf("%s\n", id);
        fflush(stdout);
        if (arg_detach)
                return 0;

        /* Attached: the sandbox lives as long as this connection. Ctrl-C removes it. */
        s.run_id = strdup(id);
        s.daemon = strdup(sd_bus_message_get_sender(reply));
        if (!s.run_id || !s.daemon)
                return failed("out of memory");
        if (s.got_signal)
                (void) on_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = (uint32_t) s.got_signal }, &s);
        r = sd_event_loop(event);
        if (r < 0)
                ret = failed("event loop failed: %s", strerror(-r));
        else if (s.disconnected && s.got_signal > 0)
                ret = 0; /* Ctrl-C ended ssh (-H) as well as us: the sandbox ends with its creator's connection */
        else if (s.disconnected)
                ret = complain(arg_host || arg_machine ? SBXCTL_EXIT_UNREACHABLE : SBX_EXIT_FAILURE,
                               "the connection to the system bus%s ended; sandbox %s ended with it", bus_owner(),
                               s.run_id);
        else if (s.daemon_gone)
                ret = failed("sbxd went away; sandbox %s ended with it", s.run_id);
        else if (!s.record)
                ret = failed("no valid record for sandbox %s", s.run_id);
        else if (s.record->stop_reason == STOP_REFUSED || s.record->stop_reason == STOP_START_FAILED)
                ret = failed("sandbox %s stopped: %s", s.run_id, strna(s.record->error));
        else if (s.record->stop_reason == STOP_TIMEOUT)
                ret = complain(SBX_EXIT_TIMEOUT, "sandbox %s reached its time limit", s.run_id);
        free(s.run_id);
        free(s.daemon);
        run_record_free(s.record);
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
} ExecState;

static int on_exec_finished(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        ExecState *s = userdata;
        const char *sb, *op, *json, *result;
        json_object *o, *v;
        int code = -1, sig = 0;

        if (!s->op || !s->daemon || !streq_ptr(sd_bus_message_get_sender(msg), s->daemon))
                return 0;
        if (sd_bus_message_read(msg, "sss", &sb, &op, &json) < 0 || !streq(op, s->op))
                return 0;
        o = json_tokener_parse(json);
        if (!o || !json_object_object_get_ex(o, "result", &v) || !(result = json_object_get_string(v))) {
                json_object_put(o);
                s->exit_status = failed("sbxd sent an invalid exec result");
                return sd_event_exit(s->event, 0);
        }
        if (json_object_object_get_ex(o, "exit_code", &v) && v)
                code = json_object_get_int(v);
        if (json_object_object_get_ex(o, "exit_signal", &v) && v)
                sig = json_object_get_int(v);
        if (streq(result, "exited"))
                s->exit_status = code >= 0 ? code : SBX_EXIT_FAILURE;
        else if (streq(result, "signal"))
                s->exit_status = 128 + sig;
        else if (streq(result, "timeout"))
                s->exit_status = complain(SBX_EXIT_TIMEOUT, "exec %s reached its time limit", s->op);
        else if (streq(result, "output-limit"))
                s->exit_status = complain(SBX_EXIT_OUTPUT_LIMIT, "exec %s was stopped at its output limit", s->op);
        else if (streq(result, "busy"))
                s->exit_status = failed("sandbox %s runs too many commands already", s->sandbox);
        else if (streq(result, "lost"))
                s->exit_status = failed("sandbox %s ended before the command did", s->sandbox);
        else
                s->exit_status = failed("the command could not be started in sandbox %s", s->sandbox);
        json_object_put(o);
        return sd_event_exit(s->event, 0);
}

static int on_exec_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        ExecState *s = userdata;
        int r;

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

static int verb_exec(const char *sandbox, char **cmd) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int null_in = -EBADF, null_out = -EBADF, null_err = -EBADF;
        _cleanup_strv_free_ char **env = NULL;
        ExecState s = { .sandbox = sandbox, .exit_status = -1 };
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH };
        const char *op;
        int r;

        if (strv_length(cmd) == 0)
                return refused("exec: no command given (usage: sbxctl exec [OPTIONS] SANDBOX -- CMD [ARGS...])");
        if (arg_host)
                return exec_over_ssh();
        r = command_prepare(cmd, &env);
        if (r != 0)
                return r;
        r = check_systemd();
        if (r != 0)
                return r;
        take_signals(sigs, ELEMENTSOF(sigs));
        r = connect_bus(&bus);
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
        r = sd_bus_attach_event(bus, event, 0);
        if (r >= 0)
                r = match_signal(bus, SBX_BUS_PATH, SBX_BUS_INTERFACE, "ExecFinished", on_exec_finished, &s);
        if (r >= 0)
                r = match_signal(bus, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                 on_exec_daemon_gone, &s);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, on_exec_disconnected, &s);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(sigs); i++)
                r = sd_event_add_signal(event, NULL, sigs[i], on_exec_signal, &s);
        if (r >= 0)
                r = watch_hangup(event, on_exec_hangup, &s);
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &call, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "Exec");
        if (r >= 0)
                r = sd_bus_message_append(call, "s", sandbox);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "{sv}");
        if (r >= 0 && arg_timeout > 0)
                r = sd_bus_message_append(call, "{sv}", "timeout_usec", "t", arg_timeout);
        if (r >= 0 && arg_output_max > 0)
                r = sd_bus_message_append(call, "{sv}", "output_max", "t", arg_output_max);
        if (r >= 0)
                r = command_append(call, cmd, env);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r >= 0)
                r = sd_bus_message_append(call, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append(call, "hhh", fd_or_null(STDIN_FILENO, O_RDONLY, &null_in),
                                          fd_or_null(STDOUT_FILENO, O_WRONLY, &null_out),
                                          fd_or_null(STDERR_FILENO, O_WRONLY, &null_err));
        if (r < 0)
                return failed("cannot build the request: %s", strerror(-r));
        r = sd_bus_call(bus, call, 60 * USEC_PER_SEC, &error, &reply);
        if (r < 0)
                return bus_failure(bus, &error, r);
        r = sd_bus_message_read(reply, "s", &op);
        if (r < 0 || !run_id_is_valid(op))
                return failed("sbxd sent an invalid reply");
        s.op = strdup(op);
        s.daemon = strdup(sd_bus_message_get_sender(reply));
        if (!s.op || !s.daemon)
                return failed("out of memory");
        if (s.got_signal)
                (void) on_exec_signal(NULL, &(struct signalfd_siginfo) { .ssi_signo = (uint32_t) s.got_signal }, &s);
        r = sd_event_loop(event);
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

static int verb_rm(char **ids) {
        int ret = 0;

        if (strv_length(ids) == 0)
                return refused("rm: expected one or more sandbox ids or names");
        STRV_FOREACH(id, ids) {
                int r = call_daemon("RemoveSandbox", *id, NULL);

                if (r != 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

/* ---- list / show / stop ---------------------------------------------------------------------------- */

static const char *exit_text(const RunRecord *r, char *buf, size_t l) {
        if (r->exit_signal > 0)
                snprintf(buf, l, "SIG%s", sigabbrev_np(r->exit_signal) ?: "?");
        else if (r->exit_code >= 0)
                snprintf(buf, l, "%d", r->exit_code);
        else
                snprintf(buf, l, "-");
        return buf;
}

static int verb_list(void) {
        _cleanup_free_ char *json = NULL;
        json_object *arr;
        int r;

        r = call_daemon(arg_all ? "ListAll" : "List", NULL, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                fputs(json, stdout);
                return 0;
        }
        arr = json_tokener_parse(json);
        if (!arr || !json_object_is_type(arr, json_type_array))
                return failed("sbxd sent an invalid list");
        if (arg_legend)
                printf("%-32s  %-10s  %-8s  %-12s  %-6s  %-27s  %s\n", "RUN", "PROFILE", "STATE", "REASON", "EXIT",
                       "STARTED", "KIND");
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                const char *text = json_object_to_json_string(json_object_array_get_idx(arr, i));
                _cleanup_(run_record_freep) RunRecord *rec = NULL;
                char ts[TIMESTAMP_MAX], ex[16];

                if (run_record_from_json(text, &rec, NULL) < 0)
                        continue;
                printf("%-32s  %-10s  %-8s  %-12s  %-6s  %-27s  %s%s%s\n", rec->run_id, rec->profile,
                       rec->finished ? "finished" : "running", strna(stop_reason_to_string(rec->stop_reason)),
                       exit_text(rec, ex, sizeof(ex)), format_timestamp(ts, rec->started_at),
                       rec->sandbox ? "sandbox" : "run", rec->sandbox && rec->sandbox->name ? ":" : "",
                       rec->sandbox && rec->sandbox->name ? rec->sandbox->name : "");
        }
        json_object_put(arr);
        return 0;
}

static void print_u64(const char *label, uint64_t v, bool bytes) {
        char buf[32];

        if (v == UINT64_MAX)
                printf("%-14s n/a\n", label);
        else if (bytes)
                printf("%-14s %s (%" PRIu64 " bytes)\n", label, format_bytes(buf, sizeof(buf), v), v);
        else
                printf("%-14s %" PRIu64 "\n", label, v);
}

static void print_addresses(const char *sep, const NetAddress *a, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char buf[INET6_ADDRSTRLEN];

                printf("%s%s", i == 0 ? sep : ", ", inet_ntop(a[i].family, a[i].bytes, buf, sizeof(buf)) ?: "?");
        }
}

/* The record's network section: destinations allowed, denied, and the names the run looked up. */
static void print_network(const RunRecord *rec) {
        const RunNetwork *n = rec->network;
        char buf[512];

        if (!n) {
                printf("%-14s %s\n", "Network:", "not recorded");
                return;
        }
        printf("%-14s %s\n", "Network:", strna(network_mode_to_string(n->mode)));
        for (int allowed = 1; allowed >= 0; allowed--) {
                const char *label = allowed ? "  allowed:" : "  denied:";
                bool any = false;

                for (size_t i = 0; i < n->n_destinations; i++) {
                        const NetDestinationStat *d = &n->destinations[i];

                        if (d->allowed != (bool) allowed)
                                continue;
                        printf("%-14s %s x%" PRIu64 "\n", any ? "" : label,
                               format_destination(d, rec->profile, buf, sizeof(buf)), d->count);
                        any = true;
                }
                if (!any)
                        printf("%-14s none\n", label);
        }
        for (size_t i = 0; i < n->n_names; i++) {
                const NetNameStat *e = &n->names[i];

                printf("%-14s %s %s x%" PRIu64, i == 0 ? "  names:" : "", e->name,
                       strna(name_verdict_to_string(e->verdict)), e->count);
                print_addresses(": ", e->addresses, e->n_addresses);
                if (e->n_blocked > 0) {
                        print_addresses(" (dropped as rebinding: ", e->blocked, e->n_blocked);
                        printf(")");
                }
                printf("\n");
        }
        if (n->n_names == 0)
                printf("%-14s none\n", "  names:");
        printf("%-14s %" PRIu64 " denied calls, %" PRIu64 " refused lookups, %" PRIu64 " events lost\n", "  counted:",
               n->denied, n->dns_refused, n->events_lost);
        if (n->destinations_overflow > 0 || n->names_overflow > 0)
                printf("%-14s %" PRIu64 " calls to further destinations, %" PRIu64 " lookups of further names\n",
                       "  not listed:", n->destinations_overflow, n->names_overflow);
        printf("%-14s %s\n", "  map entries:", n->entries_removed ? "removed" : "NOT removed");
}

static int verb_show(const char *id) {
        _cleanup_free_ char *json = NULL;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        char ts[TIMESTAMP_MAX], ex[16];
        int r;

        if (!run_id_is_valid(id))
                return refused("show: '%s' is not a run id (32 hex characters)", id);
        r = call_daemon("Get", id, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                fputs(json, stdout);
                return 0;
        }
        if (run_record_from_json(json, &rec, NULL) < 0)
                return failed("sbxd sent an invalid record");
        printf("%-14s %s\n", "Run:", rec->run_id);
        printf("%-14s %s\n", "Unit:", strna(rec->unit));
        printf("%-14s %s\n", "Profile:", rec->profile);
        printf("%-14s %s\n", "Policy:", strna(rec->policy_digest));
        printf("%-14s %s\n", "Tenant:", rec->tenant);
        printf("%-14s %s\n", "State:", rec->finished ? "finished" : "running");
        printf("%-14s %s\n", "Started:", format_timestamp(ts, rec->started_at));
        printf("%-14s %s\n", "Start:", rec->pooled ? "pool (a unit of the profile's warm pool)" : "cold");
        printf("%-14s %s\n", "Ended:", rec->ended_at ? format_timestamp(ts, rec->ended_at) : "-");
        printf("%-14s %s\n", "Stop reason:", strna(stop_reason_to_string(rec->stop_reason)));
        printf("%-14s %s\n", "Exit:", exit_text(rec, ex, sizeof(ex)));
        print_u64("CPU (usec):", rec->cpu_usec, false);
        print_u64("Memory peak:", rec->memory_peak, true);
        print_u64("Tasks peak:", rec->tasks_peak, false);
        /* the run's space (HOME, /tmp, /var/tmp, /dev/shm) when the command ended */
        if (rec->disk_max > 0) {
                char used[32], cap[32];

                printf("%-14s %s of %s used%s\n", "Disk:",
                       rec->disk_used == UINT64_MAX ? "n/a" : format_bytes(used, sizeof(used), rec->disk_used),
                       format_bytes(cap, sizeof(cap), rec->disk_max),
                       rec->disk_full ? " (full: writes past the cap failed)" : "");
        }
        /* UINT64_MAX: not counted (the profile sets no output limit) */
        if (rec->output_bytes != UINT64_MAX)
                printf("%-14s %" PRIu64 " bytes%s\n", "Output:", rec->output_bytes,
                       rec->output_truncated ? " (cut at the profile's limit)" : "");
        else if (rec->output_truncated)
                printf("%-14s cut at the profile's limit\n", "Output:");
        printf("%-14s", "Denied calls:");
        for (size_t i = 0; i < rec->n_denied; i++)
                printf(" %s x%" PRIu64, rec->denied[i].name, rec->denied[i].count);
        printf("%s\n", rec->n_denied ? "" : " none (of sbx's argument-level rules)");
        print_network(rec);
        if (rec->sandbox) {
                const RunSandbox *sb = rec->sandbox;

                printf("%-14s %s%s%s\n", "Sandbox:", sb->name ?: "(no name)", sb->detach ? ", detached" : "",
                       sb->idle_timeout ? ", idle timeout set" : "");
                if (sb->idle_timeout)
                        printf("%-14s %" PRIu64 " s\n", "Idle timeout:", sb->idle_timeout / USEC_PER_SEC);
                printf("%-14s %" PRIu64 "%s\n", "Execs:", sb->execs_total,
                       sb->execs_total > sb->n_execs ? " (the first ones listed)" : "");
                for (size_t i = 0; i < sb->n_execs; i++) {
                        const RunExec *e = &sb->execs[i];
                        char code[16] = "-";

                        if (e->exit_signal > 0)
                                snprintf(code, sizeof(code), "SIG%s", sigabbrev_np(e->exit_signal) ?: "?");
                        else if (e->exit_code >= 0)
                                snprintf(code, sizeof(code), "%d", e->exit_code);
                        printf("  %s  %s  %-11s %-7s %8.3f s  %" PRIu64 " bytes%s\n", e->id,
                               format_timestamp(ts, e->started_at), exec_result_to_string(e->result), code,
                               (double) e->duration / USEC_PER_SEC, e->output_bytes,
                               e->output_truncated ? " (cut)" : "");
                }
        }
        if (run_capture_enabled(&rec->capture)) {
                const RunCapture *c = &rec->capture;
                char ts2[TIMESTAMP_MAX];

                printf("%-14s enabled %s by tenant %s, until %s, %" PRIu64 " bytes%s\n", "Capture:",
                       format_timestamp(ts, c->enabled_at), c->by_tenant, format_timestamp(ts2, c->until), c->bytes,
                       c->ended_at ? "" : " so far");
                if (c->ended_at)
                        printf("%-14s ended %s, file %s%s\n", "", format_timestamp(ts, c->ended_at),
                               c->deleted_at ? "deleted " : "kept until the reaper deletes it",
                               c->deleted_at ? format_timestamp(ts2, c->deleted_at) : "");
        }
        printf("%-14s %s\n", "Cleanup:",
               rec->finished ? (run_record_cleanup_completed(rec) ? "completed" : "INCOMPLETE") : "-");
        if (rec->error)
                printf("%-14s %s\n", "Error:", rec->error);
        return 0;
}

/* One pass of sbxd's reaper (docs/reaper.md): what it stopped, measured again and removed. */
static int verb_gc(void) {
        _cleanup_free_ char *json = NULL;
        json_object *o, *stopped = NULL, *incomplete = NULL, *caches, *v;
        uint64_t verified = 0, removed = 0, kept = 0;
        int r;

        r = call_daemon("CollectGarbage", NULL, &json);
        if (r != 0)
                return r;
        if (arg_json) {
                printf("%s\n", json);
                return 0;
        }
        o = json_tokener_parse(json);
        if (!o || !json_object_object_get_ex(o, "stopped", &stopped) || !json_object_object_get_ex(o, "incomplete", &incomplete)) {
                json_object_put(o);
                return failed("sbxd sent an invalid reply");
        }
        if (json_object_object_get_ex(o, "verified", &v))
                verified = json_object_get_uint64(v);
        if (json_object_object_get_ex(o, "removed", &v))
                removed = json_object_get_uint64(v);
        if (json_object_object_get_ex(o, "kept", &v))
                kept = json_object_get_uint64(v);
        for (size_t i = 0; i < json_object_array_length(stopped); i++)
                printf("stopped %s (past its deadline, or its owner is gone)\n",
                       json_object_get_string(json_object_array_get_idx(stopped, i)));
        for (size_t i = 0; i < json_object_array_length(incomplete); i++)
                printf("incomplete cleanup: run %s (sbxctl show %s)\n",
                       json_object_get_string(json_object_array_get_idx(incomplete, i)),
                       json_object_get_string(json_object_array_get_idx(incomplete, i)));
        printf("%zu stopped, %" PRIu64 " measured again, %zu with something left, %" PRIu64 " records removed, %" PRIu64
               " kept\n", json_object_array_length(stopped), verified, json_object_array_length(incomplete), removed, kept);
        if (json_object_object_get_ex(o, "caches", &caches) && json_object_object_get_ex(caches, "removed", &v)) {
                json_object *k;
                uint64_t kept_bytes = 0, n_kept = 0;
                char b[32];

                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *c = json_object_array_get_idx(v, i), *name, *why;

                        if (json_object_object_get_ex(c, "cache", &name) && json_object_object_get_ex(c, "reason", &why))
                                printf("removing cache %s (%s)\n", json_object_get_string(name),
                                       streq(json_object_get_string(why), "unused") ? "unused past its retention"
                                                                                    : "least recently used, above the size cap");
                }
                if (json_object_object_get_ex(caches, "kept", &k))
                        n_kept = json_object_get_uint64(k);
                if (json_object_object_get_ex(caches, "kept_bytes", &k))
                        kept_bytes = json_object_get_uint64(k);
                printf("caches: %zu removed, %" PRIu64 " kept (%s)\n", json_object_array_length(v), n_kept,
                       format_bytes(b, sizeof(b), kept_bytes));
        }
        if (json_object_object_get_ex(o, "captures_deleted", &v) && json_object_get_uint64(v) > 0)
                printf("captures: %" PRIu64 " files past their expiry deleted\n", json_object_get_uint64(v));
        json_object_put(o);
        return 0;
}

static int verb_stop(const char *id) {
        if (!run_id_is_valid(id))
                return refused("stop: '%s' is not a run id (32 hex characters)", id);
        return call_daemon("Stop", id, NULL);
}

/* Temporary elevated capture (docs/capture.md): sbxd copies the run's output into a root-only file until
 * the expiry; the reaper deletes the file then. */
static int verb_capture(const char *id) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char ts[TIMESTAMP_MAX];
        uint64_t until;
        int r;

        if (!run_id_is_valid(id))
                return refused("capture: '%s' is not a run id (32 hex characters)", id);
        if (arg_until == 0)
                return refused("capture: --until=DURATION is required (how long to capture, e.g. 30min; at most 24h)");
        if (capture_check_duration(arg_until) < 0)
                return refused("capture: --until: at most 24h");
        r = call_daemon_reply("Capture", &reply, "st", id, (uint64_t) arg_until);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "t", &until);
        if (r < 0 || !format_timestamp(ts, until))
                return failed("sbxd sent an invalid reply");
        if (arg_json)
                printf("{\"run_id\": \"%s\", \"until\": \"%s\", \"file\": \"" SBX_CAPTURE_DIR "/%s\"}\n", id, ts, id);
        else
                printf("Capturing the output of run %s until %s into " SBX_CAPTURE_DIR "/%s (root's only; deleted "
                       "by the reaper once that time has passed).\n", id, ts, id);
        return 0;
}

/* ---- profile ---------------------------------------------------------------------------------------- */

static int load_profile_arg(const char *arg, Profile **ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (strchr(arg, '/'))
                r = profile_load_file(arg, ret, &err);
        else {
                r = profile_search_path(&dirs);
                if (r < 0)
                        return failed("out of memory");
                r = profile_load(dirs, arg, ret, &err);
        }
        if (r < 0)
                return r == -ENOENT || r == -ERFKILL || r == -EINVAL ? refused("%s", err ?: strerror(-r))
                                                                   : failed("%s", err ?: strerror(-r));
        return 0;
}

/* max NULL: the profile sets no ceiling. */
static void print_bound(const char *what, const RequestBound *b, const char *min, const char *max) {
        if (b->allowed)
                printf(" %s (%s..%s)", what, min, max ?: "unlimited");
}

static void fmt_size(char buf[static 32], uint64_t v) {
        static const char suffix[] = "KMGT";

        if (v == 0) {
                snprintf(buf, 32, "0");
                return;
        }
        for (int i = 4; i >= 1; i--)
                if (v >= (1ULL << (10 * i)) && v % (1ULL << (10 * i)) == 0) {
                        snprintf(buf, 32, "%" PRIu64 "%c", v >> (10 * i), suffix[i - 1]);
                        return;
                }
        snprintf(buf, 32, "%" PRIu64, v);
}

static void fmt_usec(char buf[static 32], usec_t u) {
        if (u == 0)
                snprintf(buf, 32, "0");
        else if (u % (3600 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "h", u / (3600 * USEC_PER_SEC));
        else if (u % (60 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "min", u / (60 * USEC_PER_SEC));
        else if (u % USEC_PER_SEC == 0)
                snprintf(buf, 32, "%" PRIu64 "s", u / USEC_PER_SEC);
        else if (u % USEC_PER_MSEC == 0)
                snprintf(buf, 32, "%" PRIu64 "ms", u / USEC_PER_MSEC);
        else
                snprintf(buf, 32, "%" PRIu64 "us", u);
}

static void print_rule(const SyscallRule *r, const char *origin) {
        printf("  %s", r->syscall);
        if (r->has_arg) {
                printf(" arg%u%s %s ", r->arg, r->arg32 ? " (32 bits)" : "", syscall_cmp_to_string(r->cmp));
                if (r->value_name)
                        printf("%s", r->value_name);
                else
                        printf("%" PRIu64, r->value);
                if (r->cmp == SYSCALL_CMP_MASKED_EQ)
                        printf(" mask 0x%" PRIx64, r->mask);
        }
        printf(" -> EPERM (%s)\n", origin);
}

static int show_profile(const Profile *p) {
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_(prop_table_freep) PropTable *fixed = NULL, *slice = NULL;
        _cleanup_free_ char *err = NULL, *t_fixed = NULL, *t_run = NULL, *t_slice = NULL, *dropin = NULL,
                            *slice_name = NULL;
        /* a run's properties as sbxd would compile them, with RUN for its id */
        RunRequest req = { .argv = (char *[]) { (char *) "CMD", NULL }, .run_id = (char *) "RUN",
                           .netns_path = (char *) SBX_NETNS_DIR "/RUN" };
        char a[32], b[32], c[32], d[32], e[32], f[32];
        const SyscallRule *base;
        size_t n_base;
        PropTable rest;
        int r;

        r = policy_compile_fixed(p, &fixed);
        r = r < 0 ? r : policy_compile_slice(p, &slice);
        if (r < 0)
                return failed("cannot compile profile %s: %s", p->name, strerror(-r));
        r = policy_compile(p, &req, SBX_EXEC_PATH, &plan, &err);
        if (r < 0 && r != -EOPNOTSUPP)
                return failed("cannot compile profile %s: %s", p->name, err ?: strerror(-r));
        if (!arg_legend) { /* just a run's properties, one per line (used by bench/) */
                if (!plan)
                        return failed("%s", err);
                r = prop_table_render_text(plan->props, &t_run);
                if (r < 0)
                        return failed("cannot render the properties: %s", strerror(-r));
                fputs(t_run, stdout);
                return 0;
        }

        printf("profile %s: %s\n", p->name, p->description);
        printf("  file:       %s\n  digest:     %s\n", strna(p->path), p->digest);
        printf("  network:    %s", network_mode_to_string(p->network));
        for (size_t i = 0; i < p->n_destinations; i++) {
                const NetDestination *dst = &p->destinations[i];

                printf("%s%s", i == 0 ? " (" : ", ", dst->host ?: dst->address);
                for (size_t k = 0; k < dst->n_ports; k++) {
                        printf("%s%u", k == 0 ? ":" : ",", dst->ports[k].lo);
                        if (dst->ports[k].hi != dst->ports[k].lo)
                                printf("-%u", dst->ports[k].hi);
                }
                if (dst->protocol != NET_PROTOCOL_ANY)
                        printf("/%s", net_protocol_to_string(dst->protocol));
                if (dst->private)
                        printf(" private");
                if (i + 1 == p->n_destinations)
                        printf(")");
        }
        printf("\n");
        if (p->network == NETWORK_ALLOWLIST)
                printf("              (not enforceable per destination yet: runs are refused unless narrowed "
                       "to none)\n");
        printf("  workspace:  %s\n", p->workspace ? "a caller may bind one (writable)" : "none");
        fmt_size(a, p->memory_max);
        fmt_size(b, p->swap_max);
        fmt_usec(c, p->runtime_max);
        fmt_size(d, p->disk_max);
        fmt_size(e, p->output_max);
        snprintf(f, sizeof(f), "%u%%", p->cpu_quota_percent);
        printf("  per run:    memory %s, swap %s, cpu %s, tasks %" PRIu64 ", wall time %s, disk %s, output %s%s\n", a,
               b, p->cpu_quota_percent ? f : "unlimited", p->tasks_max, c, d, p->output_max ? e : "unlimited",
               !p->output_max ? "" : p->output_action == OUTPUT_ACTION_CUT ? " (then cut)" : " (then stopped)");
        /* 0: the slice sets no limit */
        fmt_size(a, p->slice_memory_max);
        snprintf(b, sizeof(b), "%" PRIu64, p->slice_tasks_max);
        snprintf(c, sizeof(c), "%u%%", p->slice_cpu_quota_percent);
        printf("  all runs:   memory %s, tasks %s, cpu %s\n", p->slice_memory_max ? a : "unlimited",
               p->slice_tasks_max ? b : "unlimited", p->slice_cpu_quota_percent ? c : "unlimited");
        printf("  caches:    ");
        for (size_t i = 0; i < p->n_caches; i++)
                printf(" %s=~/%s", p->caches[i].name, p->caches[i].path);
        printf("%s\n", p->n_caches ? "" : " none (everything is ephemeral)");
        printf("  a run may set:");
        fmt_size(a, p->request.memory.min);
        fmt_size(b, p->memory_max);
        print_bound("--memory", &p->request.memory, a, b);
        snprintf(a, sizeof(a), "%" PRIu64, p->request.tasks.min);
        snprintf(b, sizeof(b), "%" PRIu64, p->tasks_max);
        print_bound("--tasks", &p->request.tasks, a, b);
        fmt_usec(a, p->request.runtime.min);
        fmt_usec(b, p->runtime_max);
        print_bound("--timeout", &p->request.runtime, a, b);
        snprintf(a, sizeof(a), "%" PRIu64 "%%", p->request.cpu.min);
        snprintf(b, sizeof(b), "%u%%", p->cpu_quota_percent);
        print_bound("--cpu", &p->request.cpu, a, p->cpu_quota_percent ? b : NULL);
        if (p->request.network_none)
                printf(" --network=none");
        STRV_FOREACH(u, p->request.dataset_under)
                printf("%s%s", u == p->request.dataset_under ? " --dataset=<below " : ", ", *u);
        if (p->request.dataset_under)
                printf(">");
        /* -E: the names allowed, but those denied */
        printf(" -E");
        STRV_FOREACH(g, p->environment_allow)
                printf("%s%s", g == p->environment_allow ? " " : ",", *g);
        if (!p->environment_allow || !p->environment_allow[0])
                printf(" (none)");
        STRV_FOREACH(g, p->environment_deny)
                printf("%s%s", g == p->environment_deny ? " but " : ",", *g);
        printf("\n  syscall rules (seccomp, counted in the record):\n");
        base = policy_baseline_rules(&n_base);
        for (size_t i = 0; i < n_base; i++)
                print_rule(&base[i], "sbx");
        for (size_t i = 0; i < p->n_rules; i++)
                print_rule(&p->rules[i], "profile");

        r = policy_dropin_dir_name(p->name, &dropin);
        r = r < 0 ? r : policy_slice_name(p->name, &slice_name);
        r = r < 0 ? r : prop_table_render_text(fixed, &t_fixed);
        r = r < 0 ? r : prop_table_render_text(slice, &t_slice);
        if (r < 0)
                return failed("cannot render the properties: %s", strerror(-r));
        printf("\n# %s: the fixed hardening, in every run's transient unit and in the drop-in\n"
               "# %s/50-sbx-profile.conf\n[Service]\n%sEnvironment=SBX_PROFILE_DIGEST=%s\n", dropin, dropin, t_fixed,
               p->digest);
        if (plan) {
                rest = (PropTable) { .props = plan->props->props + fixed->n, .n = plan->props->n - fixed->n };
                r = prop_table_render_text(&rest, &t_run);
                if (r < 0)
                        return failed("cannot render the properties: %s", strerror(-r));
                printf("\n# added per run (transient unit, defaults shown)\n%s", t_run);
        } else
                printf("\n# runs: %s\n", err);
        printf("\n# %s: all runs together\n[Slice]\n%s", slice_name, t_slice);
        return 0;
}

static int verb_profile(char **args) {
        int r;

        /* list, show and check read profile files: those of this machine. reload asks systemd over the bus. */
        if ((arg_host || arg_machine) && !(args[0] && streq(args[0], "reload")))
                return refused("profile %s reads the profile files of this machine, not those%s; run sbxctl there",
                               args[0] ?: "list", bus_owner());

        if (!args[0] || streq(args[0], "list")) {
                _cleanup_strv_free_ char **dirs = NULL, **names = NULL, **paths = NULL, **ignored = NULL;
                int ret = 0;

                r = profile_search_path(&dirs);
                r = r < 0 ? r : profile_enumerate(dirs, &names, &paths, &ignored);
                if (r < 0)
                        return failed("cannot list profiles: %s", strerror(-r));
                if (arg_legend)
                        printf("%-12s %-9s %-7s %s\n", "NAME", "NETWORK", "STATE", "DESCRIPTION / FILE");
                for (size_t i = 0; names[i]; i++) {
                        _cleanup_(profile_freep) Profile *p = NULL;
                        _cleanup_free_ char *err = NULL;

                        r = profile_load_file(paths[i], &p, &err);
                        if (r < 0) {
                                printf("%-12s %-9s %-7s %s\n", names[i], "-", "invalid", paths[i]);
                                fprintf(stderr, "sbxctl: %s\n", err ?: strerror(-r));
                                ret = SBX_EXIT_FAILURE;
                                continue;
                        }
                        printf("%-12s %-9s %-7s %s\n", p->name, network_mode_to_string(p->network), "ok",
                               p->description);
                }
                STRV_FOREACH(f, ignored)
                        fprintf(stderr, "sbxctl: ignoring %s: not a valid profile name\n", *f);
                return ret;
        }
        if (streq(args[0], "show")) {
                _cleanup_(profile_freep) Profile *p = NULL;

                if (args[1] && args[2])
                        return refused("profile show: expected at most one profile");
                r = load_profile_arg(args[1] ?: PROFILE_DEFAULT, &p);
                if (r != 0)
                        return r;
                return show_profile(p);
        }
        if (streq(args[0], "check")) {
                int ret = 0;

                if (!args[1])
                        return refused("profile check: expected one or more profile files");
                for (char **f = args + 1; *f; f++) {
                        _cleanup_(profile_freep) Profile *p = NULL;
                        _cleanup_free_ char *err = NULL;

                        r = profile_load_file(*f, &p, &err);
                        if (r < 0) {
                                fprintf(stderr, "%s\n", err ?: strerror(-r));
                                ret = SBX_EXIT_REFUSED;
                        } else if (arg_legend)
                                printf("%s: ok (profile %s, %s)\n", *f, p->name, p->digest);
                }
                return ret;
        }
        if (streq(args[0], "reload")) {
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                if (args[1])
                        return refused("profile reload: unexpected argument '%s'", args[1]);
                r = check_systemd();
                if (r != 0)
                        return r;
                r = connect_bus(&bus);
                if (r != 0)
                        return r;
                /* systemd re-runs its generators, sbx-generator among them, and reloads the units */
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "Reload", &error, NULL, NULL);
                if (r < 0 && connection_failed(bus, &error))
                        return connection_failure(r);
                if (r < 0)
                        return failed("systemd daemon-reload failed%s: %s", arg_host || arg_machine ? bus_owner() : "",
                                      error.message ?: strerror(-r));
                return 0;
        }
        return refused("profile: unknown command '%s' (list, show, check, reload)", args[0]);
}

/* ---- secret ---------------------------------------------------------------------------------------- */



/* The value: one line typed without echo on a terminal, else all of stdin; into a memfd for sbxd (never a
 * file on disk, never argv). */
static int secret_value_fd(const char *name, int *ret) {
        char *buf;
        size_t n = 0, alloc = SECRET_MAX + 2;
        bool tty = isatty(STDIN_FILENO);
        int r = 0;

        buf = mmap(NULL, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
                return -failed("out of memory");
        (void) mlock(buf, alloc);
        (void) madvise(buf, alloc, MADV_DONTDUMP);
        if (tty) {
                struct termios old, quiet;
                bool saved;

                fprintf(stderr, "Value of secret %s: ", name);
                fflush(stderr);
                /* no echo, and no signals: Ctrl-C and Ctrl-Z are read here (and cancel), so that the
                 * terminal always gets its echo back */
                saved = tcgetattr(STDIN_FILENO, &old) == 0;
                if (saved) {
                        quiet = old;
                        quiet.c_lflag &= ~(tcflag_t) (ECHO | ISIG);
                        (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
                }
                while (n < alloc - 1) {
                        ssize_t k = read(STDIN_FILENO, buf + n, 1);

                        if (k <= 0 || buf[n] == '\n' || buf[n] == '\r')
                                break;
                        if (buf[n] == 0x03 || buf[n] == 0x1a || buf[n] == 0x1c) { /* ^C ^Z ^\ */
                                r = -refused("secret add: cancelled");
                                break;
                        }
                        n++;
                }
                if (saved)
                        (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
                fputc('\n', stderr);
        } else
                for (;;) {
                        ssize_t k = read(STDIN_FILENO, buf + n, alloc - n);

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                r = -failed("secret add: cannot read stdin: %m");
                                break;
                        }
                        if (k == 0 || (n += (size_t) k) == alloc)
                                break;
                }
        if (r == 0 && n == 0)
                r = -refused("secret add: the value is empty");
        if (r == 0 && n > SECRET_MAX)
                r = -refused("secret add: the value is larger than %u KiB", SECRET_MAX / 1024);
        if (r == 0 && memfd_sealed(buf, n, ret) < 0)
                r = -failed("secret add: cannot pass the value in a memfd: %m");
        explicit_bzero(buf, alloc);
        munmap(buf, alloc);
        return r;
}

static int verb_secret(int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *verb;
        int r;

        if (argc == 0)
                return refused("secret: expected add, list or rm");
        /* options after the subcommand too: "secret add --replace NAME", "secret list --json" */
        verb = argv[0];
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        argv += optind;
        argc -= optind;
        if (streq(verb, "add")) {
                _cleanup_close_ int fd = -EBADF;
                const char *name;

                if (argc != 1)
                        return refused("secret add: expected exactly one name (the value is read from stdin)");
                name = argv[0];
                if (!credential_name_is_valid(name))
                        return refused("secret add: '%s' is not a credential name ([a-z][a-z0-9_-]{0,63})", name);
                r = secret_value_fd(name, &fd);
                if (r < 0)
                        return -r;
                return call_daemon_reply("AddSecret", NULL, "shb", name, fd, (int) arg_replace);
        }
        if (streq(verb, "list")) {
                _cleanup_(json_object_putp) json_object *list = NULL;

                if (argc != 0)
                        return refused("secret list: unexpected argument '%s'", argv[0]);
                r = call_daemon_reply("ListSecrets", &reply, NULL);
                if (r == 0)
                        r = reply_json_array(reply, &list);
                if (r != 0 || !list)
                        return r;
                if (arg_legend)
                        printf("%-32s %s\n", "NAME", "MODIFIED");
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        json_object *o = json_object_array_get_idx(list, i), *name = NULL, *mod = NULL;

                        (void) json_object_object_get_ex(o, "name", &name);
                        (void) json_object_object_get_ex(o, "modified_at", &mod);
                        printf("%-32s %s\n", json_object_get_string(name), mod ? json_object_get_string(mod) : "-");
                }
                return 0;
        }
        if (streq(verb, "rm")) {
                int ret = 0;

                if (argc < 1)
                        return refused("secret rm: expected one or more names");
                for (int i = 0; i < argc; i++) {
                        r = call_daemon_reply("RemoveSecret", NULL, "s", argv[i]);
                        if (r != 0 && ret == 0)
                                ret = r;
                }
                return ret;
        }
        return refused("secret: unknown command '%s' (add, list, rm)", verb);
}

int main(int argc, char *argv[]) {
        const char *verb;
        int r;

        log_set_prefix("sbxctl");
        log_open();
        arg_argv = argv;
        arg_host_word = calloc((size_t) argc + 1, sizeof(bool));
        if (!arg_host_word)
                return failed("out of memory");

        /* Options may come before the verb or right after it: "sbxctl run -p x -- cmd". */
        r = parse_argv(argc, argv);
        if (r <= 0)
                return -r;
        if (optind >= argc)
                return refused("no command given (run, create, exec, rm, list, show, stop, profile, gc, capture, secret, export, cache, image); see --help");
        verb = argv[optind];
        optind++;
        if (streq(verb, "run") || streq(verb, "show") || streq(verb, "list") || streq(verb, "stop") ||
            streq(verb, "profile") || streq(verb, "create") || streq(verb, "exec") || streq(verb, "rm") ||
            streq(verb, "gc") || streq(verb, "capture") || streq(verb, "secret") || streq(verb, "export") ||
            streq(verb, "cache") || streq(verb, "image")) {
                r = parse_argv(argc, argv);
                if (r <= 0)
                        return -r;
        }
        argv += optind;
        argc -= optind;
        if (argc > 0 && streq(argv[0], "--") && !streq(verb, "run") && !streq(verb, "exec"))
                argv++, argc--;
        if (arg_host && arg_machine)
                return refused("--host and --machine exclude each other (a container on another host: "
                               "-H HOST/MACHINE)");

        if (streq(verb, "run")) {
                if (argc > 0 && streq(argv[0], "--"))
                        argv++, argc--;
                return verb_run(argv);
        }
        if (streq(verb, "create")) {
                if (argc > 0)
                        return refused("create: unexpected argument '%s' (commands go to exec)", argv[0]);
                return verb_create();
        }
        if (streq(verb, "exec")) {
                const char *sandbox;

                if (argc == 0 || streq(argv[0], "--"))
                        return refused("exec: no sandbox given (usage: sbxctl exec [OPTIONS] SANDBOX -- CMD [ARGS...])");
                sandbox = argv[0];
                r = parse_argv_after_first(argc, argv);
                if (r <= 0)
                        return -r;
                argv += optind;
                if (*argv && streq(*argv, "--"))
                        argv++;
                return verb_exec(sandbox, argv);
        }
        if (streq(verb, "rm"))
                return verb_rm(argv);
        if (streq(verb, "list")) {
                if (argc > 0)
                        return refused("list: unexpected argument '%s'", argv[0]);
                return verb_list();
        }
        if (streq(verb, "show") || streq(verb, "stop")) {
                if (argc != 1)
                        return refused("%s: expected exactly one run id", verb);
                return streq(verb, "show") ? verb_show(argv[0]) : verb_stop(argv[0]);
        }
        if (streq(verb, "capture")) {
                const char *id;

                if (argc == 0)
                        return refused("capture: no run given (usage: sbxctl capture RUN --until=DURATION)");
                id = argv[0];
                r = parse_argv_after_first(argc, argv);
                if (r <= 0)
                        return -r;
                if (optind < argc)
                        return refused("capture: unexpected argument '%s'", argv[optind]);
                return verb_capture(id);
        }
        if (streq(verb, "profile"))
                return verb_profile(argv);
        if (streq(verb, "secret"))
                return verb_secret(argc, argv);
        if (streq(verb, "export"))
                return verb_export(argc, argv);
        if (streq(verb, "cache"))
                return verb_cache(argc, argv);
        if (streq(verb, "image"))
                return verb_image(argc, argv);
        if (streq(verb, "gc")) {
                if (argc > 0)
                        return refused("gc: unexpected argument '%s'", argv[0]);
                return verb_gc();
        }
        return refused("unknown command '%s' (run, create, exec, rm, list, show, stop, profile, gc, capture, secret); see --help", verb);
}
