/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* run and exec with a terminal (-t, or stdin and stdout both terminals without -T): the command's stdin,
 * stdout and stderr are one stream socket whose other end sbxctl relays (src/shared/tty-proto.h). What is
 * typed goes as frames, unprocessed (the caller's terminal is raw meanwhile: Ctrl-C, Ctrl-Z and Ctrl-\ are
 * bytes the run's terminal turns into signals), and so does the window size at each SIGWINCH; the run's
 * output is written to stdout as it comes. The caller's terminal modes are put back on every way out of
 * sbxctl but SIGKILL. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

typedef struct TermRelay {
        int sock;                   /* our end; -EBADF: no terminal asked for */
        int peer;                   /* the run's end, passed in the call; closed once it is sent */
        bool is_auto;               /* not asked for with -t: a profile without terminals means none */
        unsigned rows, cols;        /* the caller's window (0: not a terminal) */
        sd_event_source *in, *out, *winch;
} TermRelay;

#define TERM_RELAY_INIT { .sock = -EBADF, .peer = -EBADF }

/* Whether run or exec gets a terminal (-t, -T, or both stdin and stdout terminals); if so, the socket
 * pair. 0, or sbxctl's exit status. */
int term_relay_open(TermRelay *t);
/* The request's (Run) or options' (Exec) "tty" entry, if t has a terminal. */
int term_relay_append(TermRelay *t, sd_bus_message *m);
/* Drops the terminal (sbxd refused one, and it was not asked for): plain stdio, and a note on stderr. */
void term_relay_drop(TermRelay *t, const char *why);
/* The call went out: the caller's terminal goes raw and the relay starts. watch_winch: SIGWINCH is ours
 * to take (exec takes it itself and calls term_relay_winch()). 0 or -errno. */
int term_relay_start(TermRelay *t, sd_event *event, bool watch_winch);
/* SIGWINCH: the new window size to the run. */
void term_relay_winch(TermRelay *t);
/* The run's end: what it still wrote, then the caller's terminal as it was. */
void term_relay_finish(TermRelay *t);
void term_relay_done(TermRelay *t);
