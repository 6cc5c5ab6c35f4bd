/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "fileio.h"
#include "terminal.h"
#include "util.h"

int terminal_open(unsigned rows, unsigned cols, int *ret_master, int *ret_pty) {
        _cleanup_close_ int master = -EBADF, pty = -EBADF;

        /* /dev/ptmx of the run's /dev: the devpts instance the run's space unit mounted for it alone
         * (policy.h, SBX_SPACE_PTS) */
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (master < 0)
                return negative_errno();
        if (unlockpt(master) < 0)
                return negative_errno();
        pty = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (pty < 0)
                return negative_errno();
        if (rows > 0 && cols > 0) {
                struct winsize ws = { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };

                if (ioctl(master, TIOCSWINSZ, &ws) < 0)
                        return negative_errno();
        }
        *ret_master = TAKE_FD(master);
        *ret_pty = TAKE_FD(pty);
        return 0;
}

int terminal_child(int pty) {
        /* a sandbox's command is a session leader already (serve.c) */
        if (setsid() < 0 && errno != EPERM)
                return negative_errno();
        if (ioctl(pty, TIOCSCTTY, 0) < 0)
                return negative_errno();
        for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
                if (dup2(pty, fd) < 0)
                        return negative_errno();
        return 0;
}

int terminal_input(int in, TtyDecoder *d, int master) {
        uint8_t buf[TTY_FRAME_MAX];
        ssize_t k;

        k = read(in, buf, sizeof(buf));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0)
                return -EPIPE;
        for (size_t off = 0; off < (size_t) k;) {
                TtyFrame f;
                int r;

                off += tty_decoder_feed(d, buf + off, (size_t) k - off);
                while ((r = tty_decoder_next(d, &f)) > 0) {
                        if (f.type == TTY_FRAME_WINSIZE) {
                                struct winsize ws = { .ws_row = (unsigned short) f.rows,
                                                      .ws_col = (unsigned short) f.cols };

                                /* the kernel sends SIGWINCH to the foreground process group */
                                (void) ioctl(master, TIOCSWINSZ, &ws);
                        } else if (master >= 0)
                                (void) loop_write(master, f.data, f.size);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}
