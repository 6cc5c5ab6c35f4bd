/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run and exec with a terminal: the caller's side of the relay (terminal.h, src/shared/tty-proto.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "common.h"
#include "fileio.h"
#include "policy.h"
#include "terminal.h"
#include "tty-proto.h"

/* The caller's terminal modes while it is raw: put back at exit, whichever way it comes */
static struct termios saved_modes;
static bool modes_saved;

static void restore_modes(void) {
        if (!modes_saved)
                return;
        (void) tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_modes);
        modes_saved = false;
}

static void window_size(unsigned *ret_rows, unsigned *ret_cols) {
        struct winsize ws = {};

        *ret_rows = *ret_cols = 0;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
                return;
        if (ws.ws_row == 0 || ws.ws_col == 0 || ws.ws_row > TTY_SIZE_MAX || ws.ws_col > TTY_SIZE_MAX)
                return;
        *ret_rows = ws.ws_row;
        *ret_cols = ws.ws_col;
}

int term_relay_open(TermRelay *t) {
        int pair[2];

        if (arg_tty == 0 || (arg_tty < 0 && !(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))))
                return 0;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return failed("cannot make the terminal's socket: %m");
        t->sock = pair[0];
        t->peer = pair[1];
        t->is_auto = arg_tty < 0;
        window_size(&t->rows, &t->cols);
        return 0;
}

int term_relay_append(TermRelay *t, sd_bus_message *m) {
        const char *term = getenv("TERM");
        int r;

        if (t->sock < 0)
                return 0;
        r = sd_bus_message_open_container(m, 'e', "sv");
        r = r < 0 ? r : sd_bus_message_append(m, "s", "tty");
        r = r < 0 ? r : sd_bus_message_open_container(m, 'v', "a{sv}");
        r = r < 0 ? r : sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && t->rows > 0)
                r = sd_bus_message_append(m, "{sv}{sv}", "rows", "q", (uint16_t) t->rows, "cols", "q",
                                          (uint16_t) t->cols);
        /* only a name sbxd would accept (else the command goes without TERM) */
        if (r >= 0 && term && run_request_term_is_valid(term))
                r = sd_bus_message_append(m, "{sv}", "term", "s", term);
        r = r < 0 ? r : sd_bus_message_close_container(m);
        r = r < 0 ? r : sd_bus_message_close_container(m);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

void term_relay_drop(TermRelay *t, const char *why) {
        t->sock = safe_close(t->sock);
        t->peer = safe_close(t->peer);
        fprintf(stderr, "sbxctl: no terminal: %s; the command's stdin, stdout and stderr are sbxctl's\n", why);
}

static int send_frame(TermRelay *t, const uint8_t *frame, int n) {
        if (n < 0)
                return n;
        return loop_write(t->sock, frame, (size_t) n);
}

void term_relay_winch(TermRelay *t) {
        uint8_t frame[TTY_FRAME_HEADER + 4];

        if (t->sock < 0)
                return;
        window_size(&t->rows, &t->cols);
        if (t->rows > 0)
                (void) send_frame(t, frame, tty_frame_winsize(frame, sizeof(frame), t->rows, t->cols));
}

static int on_winch(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        term_relay_winch(userdata);
        return 0;
}

/* What is typed: to the run, as it comes */
static int on_input(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        TermRelay *t = userdata;
        uint8_t buf[TTY_FRAME_PAYLOAD_MAX], frame[TTY_FRAME_MAX];
        ssize_t k;

        k = read(fd, buf, sizeof(buf));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0 || send_frame(t, frame, tty_frame_data(frame, sizeof(frame), buf, (size_t) k)) < 0) {
                /* stdin ended (or the run's end is gone): nothing more to type */
                t->in = sd_event_source_disable_unref(t->in);
                if (t->sock >= 0)
                        (void) shutdown(t->sock, SHUT_WR);
        }
        return 0;
}

/* Returns false at the end of the run's output. */
static bool copy_output(TermRelay *t) {
        uint8_t buf[64 * 1024];
        ssize_t k;

        k = read(t->sock, buf, sizeof(buf));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
        if (k <= 0)
                return false;
        (void) loop_write(STDOUT_FILENO, buf, (size_t) k);
        return true;
}

static int on_output(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        TermRelay *t = userdata;

        if (!copy_output(t)) {
                t->out = sd_event_source_disable_unref(t->out);
                t->in = sd_event_source_disable_unref(t->in);
        }
        return 0;
}

int term_relay_start(TermRelay *t, sd_event *event, bool watch_winch) {
        int r;

        if (t->sock < 0)
                return 0;
        t->peer = safe_close(t->peer);
        if (fcntl(t->sock, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_modes) >= 0) {
                struct termios raw = saved_modes;

                modes_saved = true;
                (void) atexit(restore_modes);
                cfmakeraw(&raw);
                if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
                        return -errno;
        }
        r = sd_event_add_io(event, &t->out, t->sock, EPOLLIN, on_output, t);
        if (r >= 0)
                r = sd_event_add_io(event, &t->in, STDIN_FILENO, EPOLLIN, on_input, t);
        if (r == -EPERM) /* stdin a regular file or /dev/null: nothing to wait for, the end of it at once */
                r = shutdown(t->sock, SHUT_WR) < 0 ? -errno : 0;
        if (r >= 0 && watch_winch) {
                sigset_t mask;

                sigemptyset(&mask);
                sigaddset(&mask, SIGWINCH);
                r = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
                if (r >= 0)
                        r = sd_event_add_signal(event, &t->winch, SIGWINCH, on_winch, t);
        }
        /* a resize between the request and now */
        if (r >= 0)
                term_relay_winch(t);
        return r;
}

void term_relay_finish(TermRelay *t) {
        if (t->sock < 0)
                return;
        /* the rest of the output: the unit is gone, so the socket ends soon (or has ended) */
        while (t->out) {
                struct pollfd p = { .fd = t->sock, .events = POLLIN };

                if (poll(&p, 1, 2000) <= 0 || !copy_output(t))
                        break;
        }
        term_relay_done(t);
        restore_modes();
}

void term_relay_done(TermRelay *t) {
        t->in = sd_event_source_disable_unref(t->in);
        t->out = sd_event_source_disable_unref(t->out);
        t->winch = sd_event_source_disable_unref(t->winch);
        t->sock = safe_close(t->sock);
        t->peer = safe_close(t->peer);
}
