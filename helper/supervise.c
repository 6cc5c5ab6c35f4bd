/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>

#include "capture-proto.h"
#include "fileio.h"
#include "supervise.h"
#include "terminal.h"
#include "util.h"

void supervisor_done(Supervisor *s) {
        seccomp_program_done(&s->prog);
        s->sock[0] = safe_close(s->sock[0]);
        s->sock[1] = safe_close(s->sock[1]);
        s->listener = safe_close(s->listener);
        s->signal_fd = safe_close(s->signal_fd);
        s->capture_signal_fd = safe_close(s->capture_signal_fd);
        s->capture_fd = safe_close(s->capture_fd);
        seccomp_denials_done(&s->denials);
        s->tty_decoder = mfree(s->tty_decoder);
        for (size_t i = 0; i < ELEMENTSOF(s->streams); i++) {
                s->streams[i].src = safe_close(s->streams[i].src);
                s->streams[i].child_fd = safe_close(s->streams[i].child_fd);
        }
}

static void on_sigchld(int sig) {
        /* only here to interrupt ppoll() */
}

static bool same_file(int a, int b) {
        struct stat x, y;

        return fstat(a, &x) >= 0 && fstat(b, &y) >= 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino &&
               x.st_rdev == y.st_rdev;
}

static int open_pty(OutputStream *o) {
        _cleanup_close_ int master = -EBADF, slave = -EBADF;
        struct termios t;
        struct winsize ws;
        int r;

        r = terminal_open(0, 0, &master, &slave);
        if (r < 0)
                return r;
        /* The caller's settings, but no output processing here: the caller's terminal turns "\n" into
         * "\r\n" itself, and the bytes counted are the bytes the command wrote. */
        if (tcgetattr(o->dst, &t) >= 0) {
                t.c_oflag &= ~(tcflag_t) OPOST;
                (void) tcsetattr(slave, TCSANOW, &t);
        }
        if (ioctl(o->dst, TIOCGWINSZ, &ws) >= 0)
                (void) ioctl(master, TIOCSWINSZ, &ws);
        o->src = TAKE_FD(master);
        o->child_fd = TAKE_FD(slave);
        return 0;
}

/* A terminal stays a terminal: when the caller's fd is one, the command writes to a pty of its own
 * whose master the helper relays (termios and window size copied from the caller's terminal), so
 * isatty() stays true and colours, line buffering and progress output behave as they would without a
 * limit. Later window size changes are not passed on. Where no pty can be had (no /dev/ptmx), a pipe:
 * the limit holds, but the command then sees no terminal. Anything else (file, pipe, socket) gets a
 * pipe. */
static int open_stream(OutputStream *o) {
        int fds[2];

        if (isatty(o->dst) && open_pty(o) >= 0)
                return 0;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        o->src = fds[0];
        o->child_fd = fds[1];
        if (fcntl(o->src, F_SETFL, O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

int supervisor_prepare(Supervisor *s, const char *seccomp_hex, uint64_t output_max, bool output_cut,
                       char **ret_error) {
        struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_NOCLDSTOP };
        sigset_t chld;
        int r;

        if (seccomp_hex) {
                r = seccomp_program_from_hex(seccomp_hex, &s->prog);
                if (r < 0)
                        return error_setf(ret_error, r, "the seccomp filter is invalid: %s", strerror(-r));
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sock) < 0)
                        return error_setf(ret_error, negative_errno(),
                                    "cannot create the socket for the seccomp filter's listener: %m");
        }

        s->output_max = output_max;
        s->output_cut = output_cut;
        if (s->tty) {
                /* stdout and stderr are the caller's one socket: one stream, the pty's output */
                s->stderr_shared = true;
                s->tty_decoder = calloc(1, sizeof(TtyDecoder));
                r = output_max == 0 ? -EINVAL : !s->tty_decoder ? -ENOMEM :
                        terminal_open(s->tty_rows, s->tty_cols, &s->streams[0].src, &s->streams[0].child_fd);
                /* the caller's frames are read as they come, never waited for */
                if (r >= 0 && fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK) < 0)
                        r = negative_errno();
                if (r < 0)
                        return error_setf(ret_error, r, "cannot open a terminal in the run: %s", strerror(-r));
                s->tty_in = STDIN_FILENO;
        } else if (output_max > 0) {
                /* One stream when the caller's stdout and stderr are one file (2>&1, one terminal): the
                 * order of what the command writes to both is kept. */
                s->stderr_shared = same_file(STDOUT_FILENO, STDERR_FILENO);
                for (size_t i = 0; i < (s->stderr_shared ? 1 : 2); i++) {
                        r = open_stream(&s->streams[i]);
                        if (r < 0)
                                return error_setf(ret_error, r, "cannot set up the output limit: %s", strerror(-r));
                }
        }

        /* SIGCHLD ends the wait in ppoll(): blocked everywhere else, so none is missed. */
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &chld, &s->wait_mask) < 0 || sigaction(SIGCHLD, &sa, NULL) < 0)
                return error_setf(ret_error, negative_errno(), "cannot set up SIGCHLD: %m");
        sigdelset(&s->wait_mask, SIGCHLD);
        return 0;
}

int supervisor_offer_capture(Supervisor *s) {
        _cleanup_close_ int sfd = -EBADF, r_end = -EBADF, w_end = -EBADF;
        sigset_t sig;
        int fds[2];

        if (s->output_max == 0)
                return -EOPNOTSUPP; /* nothing relayed: nothing to copy */
        /* the number sbxd opens must be free: never take over a descriptor of something else */
        if (fcntl(SBX_CAPTURE_FD, F_GETFD) >= 0 || errno != EBADF)
                return -EBUSY;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        r_end = fds[0];
        w_end = fds[1];
        /* room for a burst while sbxd writes the file (the default 64 KiB where this is refused) */
        (void) fcntl(w_end, F_SETPIPE_SZ, 1024 * 1024);

        /* blocked before the pipe can be found: a signal sbxd sends is never one that ends us */
        sigemptyset(&sig);
        sigaddset(&sig, SBX_CAPTURE_SIGNAL);
        if (sigprocmask(SIG_BLOCK, &sig, NULL) < 0)
                return negative_errno();
        sigaddset(&s->wait_mask, SBX_CAPTURE_SIGNAL);
        sfd = signalfd(-1, &sig, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return negative_errno();
        if (dup3(r_end, SBX_CAPTURE_FD, O_CLOEXEC) < 0)
                return negative_errno();
        s->capture_signal_fd = TAKE_FD(sfd);
        s->capture_fd = TAKE_FD(w_end);
        return 0;
}

/* sbxd holds the pipe's read end and asks for the copy: ours goes, so that sbxd's is the only one (when it
 * closes it, our writes fail and capture ends). */
static void capture_start(Supervisor *s) {
        struct signalfd_siginfo si;

        if (read(s->capture_signal_fd, &si, sizeof(si)) != (ssize_t) sizeof(si) ||
            si.ssi_signo != (uint32_t) SBX_CAPTURE_SIGNAL)
                return;
        s->capture_signal_fd = safe_close(s->capture_signal_fd);
        (void) close(SBX_CAPTURE_FD);
        s->capture_on = s->capture_fd >= 0;
}

int supervisor_child_output(Supervisor *s) {
        int out = s->streams[0].child_fd, err = s->stderr_shared ? s->streams[0].child_fd : s->streams[1].child_fd;

        if (s->tty)
                return terminal_child(s->streams[0].child_fd);

        if (out >= 0 && dup2(out, STDOUT_FILENO) < 0)
                return negative_errno();
        if (err >= 0 && dup2(err, STDERR_FILENO) < 0)
                return negative_errno();
        return 0;
}

int supervisor_child_seal(Supervisor *s) {
        int fd, r;

        if (!s->prog.filter)
                return 0;
        fd = seccomp_install_with_listener(&s->prog);
        /* from here on the rules are in force: sendmsg() is the one call left before execve() that no
         * rule may catch (seccomp_rules_compile() refuses rules on it). The listener and our end of the
         * socket are close-on-exec: nothing is closed here, where close() could be caught, and nothing
         * of s changes (the child may share the helper's memory: spawn-child.h). */
        r = seccomp_listener_send(s->sock[1], fd);
        return fd < 0 ? fd : r;
}

/* Ends and reaps the child that was to hand over the listener; how it ended: " (killed by SIGKILL)",
 * " (exit status 1)". (When its end of the socket closed, it had ended already: SIGKILL changes nothing
 * in what waitpid() says then.) */
static const char *child_end(pid_t pid, char buf[static 64]) {
        int status;
        pid_t k;

        (void) kill(pid, SIGKILL);
        do
                k = waitpid(pid, &status, 0);
        while (k < 0 && errno == EINTR);
        if (k != pid)
                return "";
        if (WIFSIGNALED(status))
                (void) snprintf(buf, 64, " (killed by SIG%s)", sigabbrev_np(WTERMSIG(status)) ?: "?");
        else
                (void) snprintf(buf, 64, " (exit status %d)", WEXITSTATUS(status));
        return buf;
}

int supervisor_start(Supervisor *s, pid_t pid, char **ret_error) {
        char buf[64];
        int r;

        for (size_t i = 0; i < ELEMENTSOF(s->streams); i++)
                s->streams[i].child_fd = safe_close(s->streams[i].child_fd);
        if (!s->prog.filter)
                return 0;

        s->sock[1] = safe_close(s->sock[1]);
        r = seccomp_listener_recv(s->sock[0], &s->listener);
        s->sock[0] = safe_close(s->sock[0]);
        if (r >= 0)
                return 0;
        if (r == -EPIPE)
                return error_setf(ret_error, r, "the seccomp filter was not installed: the child ended before it "
                            "handed over the listener%s", child_end(pid, buf));
        /* it sent why it failed, or broke the protocol: either way it must not go on to the command */
        (void) child_end(pid, buf);
        if (r == -EPERM)
                return error_setf(ret_error, r, "the seccomp filter cannot be installed: %s (is seccomp() allowed by "
                            "the unit's SystemCallFilter=?)", strerror(-r));
        if (r < 0)
                return error_setf(ret_error, r, "the seccomp filter cannot be installed: %s", strerror(-r));
        return 0;
}

/* The copy: what the caller was passed, in the order read. A failure (sbxd closed its end: the capture
 * expired, or sbxd went away) ends capture for the rest of the run. */
static void capture_write(Supervisor *s, const uint8_t *p, size_t n) {
        if (!s->capture_on || n == 0)
                return;
        if (loop_write(s->capture_fd, p, n) < 0) {
                s->capture_fd = safe_close(s->capture_fd);
                s->capture_on = false;
        }
}

/* The caller's end is gone (a pipe without readers: POLLERR; a hung-up terminal or socket: POLLHUP).
 * Without us the command's next write there would fail (EPIPE, SIGPIPE); closing our end of its stream
 * does the same, also once the limit is reached and nothing is written any more (`yes | head`). */
static void caller_gone(OutputStream *o) {
        o->src = safe_close(o->src);
}

/* Reads once from a stream and passes on what the limit allows. Returns the bytes read, 0 when there
 * was nothing (or the stream is done). */
static size_t relay(Supervisor *s, OutputStream *o) {
        static uint8_t buf[64 * 1024];
        ssize_t k;
        int r;

        if (o->src < 0)
                return 0;
        k = read(o->src, buf, sizeof(buf));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0) {
                /* end of file; EIO: a pty whose other side is closed */
                o->src = safe_close(o->src);
                return 0;
        }
        s->output_read += (uint64_t) k;
        /* past the ceiling: supervisor_wait() ends the command */
        if (s->output_read > s->output_max && !s->output_cut)
                s->output_stopped = true;
        if (s->output_written < s->output_max) {
                size_t w = (size_t) MIN((uint64_t) k, s->output_max - s->output_written);

                s->output_written += w;
                capture_write(s, buf, w);
                if (!o->discard) {
                        r = loop_write(o->dst, buf, w);
                        if (r == -EPIPE) {
                                caller_gone(o);
                                return (size_t) k;
                        }
                        if (r < 0)
                                o->discard = true;
                }
        }
        return (size_t) k;
}

/* The listener cannot be served any more: closing it makes every call the rules catch fail with ENOSYS
 * (the kernel's answer without a supervisor). Still denied, no longer counted. */
static void give_up_listener(Supervisor *s, int error) {
        s->listener = safe_close(s->listener);
        if (s->notify_error == 0)
                s->notify_error = error;
}

int supervisor_wait(Supervisor *s, pid_t pid, int *ret_status) {
        enum { LISTENER, SOURCE, DESTINATION, SIGNALS, CAPTURE, TERMINAL };
        bool killed = false;

        for (;;) {
                struct pollfd p[4 + 2 * ELEMENTSOF(s->streams)];
                struct timespec ts, *timeout = NULL;
                struct {
                        int kind;
                        OutputStream *stream;
                } what[ELEMENTSOF(p)];
                size_t n = 0;
                bool done = false;
                int status;
                pid_t w;

                /* the command, and orphans of its that came to us (we are a subreaper) */
                while ((w = waitpid(-1, &status, WNOHANG)) > 0)
                        if (w == pid) {
                                *ret_status = status;
                                done = true;
                        }
                if (done)
                        return 0;
                if (w < 0 && errno != EINTR)
                        return negative_errno();
                if (s->output_stopped && !killed) {
                        (void) kill(s->group > 0 ? -s->group : pid, SIGKILL);
                        killed = true;
                }

                if (s->group > 0 && s->signal_fd >= 0) {
                        what[n].kind = SIGNALS;
                        what[n].stream = NULL;
                        p[n++] = (struct pollfd) { .fd = s->signal_fd, .events = POLLIN };
                }
                if (s->group > 0 && s->deadline > 0 && !s->timed_out) {
                        uint64_t now = now_monotonic();

                        if (now >= s->deadline) {
                                s->timed_out = true;
                                (void) kill(-s->group, SIGKILL);
                                continue;
                        }
                        ts.tv_sec = (time_t) ((s->deadline - now) / 1000000);
                        ts.tv_nsec = (long) ((s->deadline - now) % 1000000) * 1000;
                        timeout = &ts;
                }
                if (s->capture_signal_fd >= 0) {
                        what[n].kind = CAPTURE;
                        what[n].stream = NULL;
                        p[n++] = (struct pollfd) { .fd = s->capture_signal_fd, .events = POLLIN };
                }
                if (s->tty_in >= 0) {
                        what[n].kind = TERMINAL;
                        what[n].stream = NULL;
                        p[n++] = (struct pollfd) { .fd = s->tty_in, .events = POLLIN };
                }
                if (s->listener >= 0) {
                        what[n].kind = LISTENER;
                        what[n].stream = NULL;
                        p[n++] = (struct pollfd) { .fd = s->listener, .events = POLLIN };
                }
                for (size_t i = 0; i < ELEMENTSOF(s->streams); i++) {
                        OutputStream *o = &s->streams[i];

                        if (o->src < 0)
                                continue;
                        what[n].kind = SOURCE;
                        what[n].stream = o;
                        p[n++] = (struct pollfd) { .fd = o->src, .events = POLLIN };
                        if (!o->discard) { /* only the error conditions, which poll() always reports */
                                what[n].kind = DESTINATION;
                                what[n].stream = o;
                                p[n++] = (struct pollfd) { .fd = o->dst, .events = 0 };
                        }
                }
                if (ppoll(p, n, timeout, &s->wait_mask) < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                for (size_t i = 0; i < n; i++) {
                        if (p[i].revents == 0)
                                continue;
                        switch (what[i].kind) {
                        case SOURCE:
                                (void) relay(s, what[i].stream);
                                break;
                        case CAPTURE:
                                capture_start(s);
                                break;
                        case TERMINAL:
                                if (terminal_input(s->tty_in, s->tty_decoder, s->streams[0].src) < 0)
                                        s->tty_in = -EBADF; /* fd 0, ours: left open, no longer read */
                                break;
                        case SIGNALS: {
                                struct signalfd_siginfo si;

                                if (read(s->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                        (void) kill(-s->group, (int) si.ssi_signo);
                                break;
                        }
                        case DESTINATION:
                                if (p[i].revents & (POLLERR | POLLHUP))
                                        caller_gone(what[i].stream);
                                else /* POLLNVAL: nothing to watch */
                                        what[i].stream->discard = true;
                                break;
                        case LISTENER:
                        default:
                                if (p[i].revents & POLLIN) {
                                        int r = seccomp_notify_handle(s->listener, &s->denials);
                                        if (r < 0)
                                                give_up_listener(s, r);
                                } else
                                        /* POLLHUP: no task uses the filter any more */
                                        s->listener = safe_close(s->listener);
                        }
                }
        }
}

void supervisor_finish(Supervisor *s) {
        /* Every writer is gone (the cgroup is empty): read to the end. The fds are non-blocking, so a
         * writer outside the cgroup could not stall us. A capture asked for meanwhile takes it too. */
        if (s->capture_signal_fd >= 0)
                capture_start(s);
        for (size_t i = 0; i < ELEMENTSOF(s->streams); i++)
                while (s->streams[i].src >= 0 && relay(s, &s->streams[i]) > 0)
                        ;
        s->listener = safe_close(s->listener);
}

int supervisor_status(const Supervisor *s, char **ret) {
        _cleanup_free_ char *denied = NULL, *buf = NULL;
        int r;

        if (s->prog.filter && s->denials.n > 0) {
                r = seccomp_denials_format(&s->denials, &denied);
                if (r < 0)
                        return r;
        }
        if (asprintf(&buf, "%s%s", denied ? " denied=" : "", denied ?: "") < 0)
                return -ENOMEM;
        if (s->output_max > 0) {
                char *t;

                if (asprintf(&t, "%s output_bytes=%" PRIu64 " output_truncated=%d output_limit=%d", buf,
                             s->output_read, s->output_read > s->output_max, s->output_stopped) < 0)
                        return -ENOMEM;
                free(buf);
                buf = t;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}
