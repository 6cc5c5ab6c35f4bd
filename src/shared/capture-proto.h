/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Temporary elevated capture (docs/capture.md): how sbxd takes a copy of a running run's output from the
 * run's exec helper, which relays it under the output limit.
 *
 * The helper makes a pipe before the command starts and keeps its read end at SBX_CAPTURE_FD (close-on-exec;
 * the helper is not dumpable, so the command, the same user, cannot open or take it) with the write end
 * unused. To capture, sbxd (root, CAP_SYS_PTRACE) opens /proc/<helper>/fd/SBX_CAPTURE_FD, which gives it a
 * read end of that same pipe, and sends SBX_CAPTURE_SIGNAL to the helper. The helper, which blocks the signal
 * and reads it from a signalfd, then closes its own read end and from then on writes everything it passes to
 * the caller to the pipe too. sbxd alone writes the capture file. When sbxd closes its end (the capture
 * expired, or sbxd went away), the helper's next write fails with EPIPE and it stops for good. */

#include <signal.h>

#define SBX_CAPTURE_FD 99
#define SBX_CAPTURE_SIGNAL (SIGRTMIN + 6)
