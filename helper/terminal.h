/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A command's terminal (tty-proto.h, docs/sandboxes.md "A terminal"): its stdin, stdout and stderr as the
 * caller gave them are one stream socket. The helper opens a pseudo-terminal of the run's own devpts
 * instance (/dev/ptmx there: nothing of the host's terminals), makes its other end the command's stdin,
 * stdout, stderr and controlling terminal in a session of its own, and relays: the frames read from the
 * socket become the bytes typed into the master and its window size (the kernel then sends SIGWINCH to
 * the foreground process group); what the master gives is the command's output, passed through the
 * output ceiling like any run's (supervise.h). */

#include "tty-proto.h"

/* A pty at rows x cols (0: as the kernel makes it): its master (non-blocking) and other end, both
 * close-on-exec. Also the output relay's pty for a caller's terminal without -t (supervise.c). */
int terminal_open(unsigned rows, unsigned cols, int *ret_master, int *ret_pty);
/* In the child: a session of its own, pty its controlling terminal and its fds 0, 1 and 2. */
int terminal_child(int pty);
/* When in (the caller's socket) is readable: the frames that came, to master. 0 to go on; -EPIPE at the
 * socket's end, -EBADMSG for a stream that is not frames: then it is no longer read (the command reads
 * end of file once the caller is gone). */
int terminal_input(int in, TtyDecoder *d, int master);
