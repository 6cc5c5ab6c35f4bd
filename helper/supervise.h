/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the exec helper does while the command runs, besides waiting for it:
 *   - the profile's argument-level syscall rules (--seccomp-filter=HEX): the child installs the program
 *     right before execve() and hands its listener over; the helper answers every caught call with
 *     EPERM and counts it per syscall;
 *   - the output ceiling (--output-max=N[:cut]): the command's stdout and stderr reach the caller through
 *     the helper, which passes the first N bytes of both together; past them it ends the command (kills
 *     it: output_stopped), or with "cut" drains the rest while the command goes on;
 *   - a terminal (terminal.h): the command's output is the pty's, relayed and limited as above, and what
 *     the caller types and its window size reach the pty;
 *   - with the output relayed, temporary elevated capture (src/shared/capture-proto.h, docs/capture.md):
 *     once sbxd asks, what is passed to the caller is also written to sbxd's end of a pipe.
 * Without either, the command gets the caller's fds directly and the helper only waits. */

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "seccomp-notify.h"

typedef struct OutputStream {
        int src;        /* our end: a pipe's read end or a pty's master; -EBADF when done */
        int child_fd;   /* the child's end, -EBADF in the parent after the fork */
        int dst;        /* the caller's fd we write to (1 or 2) */
        bool discard;   /* writing to dst failed: drain, write nothing */
} OutputStream;

typedef struct Supervisor {
        /* seccomp */
        struct sock_fprog prog;   /* .filter NULL: no rules */
        int sock[2];              /* the listener's hand-over: [0] the helper's, [1] the child's */
        int listener;
        SeccompDenials denials;
        int notify_error;         /* why the listener was given up early, or 0 */

        /* output */
        uint64_t output_max;      /* 0: not limited, no relay */
        OutputStream streams[2];  /* [0] stdout, [1] stderr (unused: src < 0 and child_fd < 0) */
        bool stderr_shared;       /* stderr goes through streams[0] too (the caller's fds 1 and 2 are one file) */
        uint64_t output_read;     /* bytes the command wrote */
        uint64_t output_written;  /* bytes passed on: at most output_max */
        bool output_cut;          /* past output_max: drain and go on (else the command is ended) */
        bool output_stopped;      /* the command was ended for writing past output_max */

        /* a terminal (terminal.h): streams[0] is the pty's master; the caller's frames come on tty_in */
        bool tty;                 /* set before supervisor_prepare(), with tty_rows and tty_cols */
        unsigned tty_rows, tty_cols;
        int tty_in;               /* fd 0 while it is read, else -EBADF */
        struct TtyDecoder *tty_decoder;

        /* capture (capture-proto.h): offered when the output is relayed */
        int capture_signal_fd;    /* a signalfd of SBX_CAPTURE_SIGNAL while capture is offered, or -EBADF */
        int capture_fd;           /* the pipe's write end; written to once capture is on */
        bool capture_on;          /* sbxd holds the read end and asked: what is passed on goes there too */

        sigset_t wait_mask;       /* the signal mask while waiting: SIGCHLD deliverable */

        /* a sandbox's command (helper/serve.c): it runs in a process group of its own */
        pid_t group;              /* that group: signals read from signal_fd go to it; 0: none */
        int signal_fd;            /* a signalfd of the signals to pass on, or -EBADF */
        uint64_t deadline;        /* CLOCK_MONOTONIC µs: the group is killed then; 0: none */
        bool timed_out;
} Supervisor;

#define SUPERVISOR_INIT                                                                              \
        {                                                                                            \
                .sock = { -EBADF, -EBADF }, .listener = -EBADF,                                      \
                .streams = { { .src = -EBADF, .child_fd = -EBADF, .dst = 1 },                        \
                             { .src = -EBADF, .child_fd = -EBADF, .dst = 2 } },                      \
                .signal_fd = -EBADF, .capture_signal_fd = -EBADF, .capture_fd = -EBADF,              \
                .tty_in = -EBADF,                                                                    \
        }

void supervisor_done(Supervisor *s);

/* Before the fork (SIGCHLD is blocked from here on; the child's signal reset unblocks it). On failure a
 * negative errno and a message for the refusal in *ret_error. With s->tty, output_max must be set (the
 * pty's output is always relayed: UINT64_MAX for no ceiling). */
int supervisor_prepare(Supervisor *s, const char *seccomp_hex, uint64_t output_max, bool output_cut,
                       char **ret_error);

/* After supervisor_prepare() of a run whose output is relayed: offers capture. Makes the pipe (its read end at
 * SBX_CAPTURE_FD, for sbxd to open) and blocks SBX_CAPTURE_SIGNAL, read from a signalfd while waiting. A
 * negative errno when it cannot: the run goes on, and sbxd refuses to capture it (no pipe to open). */
int supervisor_offer_capture(Supervisor *s);

/* In the child, first thing: stdout and stderr become the relay's ends (with a terminal: stdin, stdout,
 * stderr and the controlling terminal become the pty's). */
int supervisor_child_output(Supervisor *s);
/* In the child, the last thing before execve(): installs the program and hands the listener over. On
 * failure the child must not run the command (the helper refuses the run). */
int supervisor_child_seal(Supervisor *s);

/* In the parent after the fork of pid: takes the listener. On failure (the child could not install the
 * program, and did not and will not run the command) the child is ended and reaped, and *ret_error says
 * why, with how the child ended when it ended by itself. */
int supervisor_start(Supervisor *s, pid_t pid, char **ret_error);

/* Until the child pid ends: answers notifications, relays output, reaps orphans; with a group, passes the
 * signals of signal_fd on to it and kills it at the deadline (timed_out). Output past the ceiling (unless
 * output_cut) kills the group, or pid without one (output_stopped; what pid left is the caller's to end). Returns its wait status in
 * *ret_status. */
int supervisor_wait(Supervisor *s, pid_t pid, int *ret_status);

/* After everything in the cgroup is gone: the output still in the pipes. */
void supervisor_finish(Supervisor *s);

/* " denied=ioctl:2 output_bytes=N output_truncated=0 output_limit=0" for the STATUS= line ("" when neither
 * applies; output_limit=1: the command was ended at the output ceiling). */
int supervisor_status(const Supervisor *s, char **ret);
