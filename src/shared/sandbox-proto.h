/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The control channel between sbxd and the exec helper of a unit: one SOCK_SEQPACKET socket pair, made
 * by sbxd, the helper's end given to the unit as its standard input. A sandbox's helper (a long-lived
 * unit that waits for work) and a pooled unit's take their commands on it; a run's helper takes its one
 * command from it too, sent before the unit starts (a command line never is a unit property). It is
 * nobody else's: the commands never inherit it and cannot reach the helper's fds (the helper is not
 * dumpable). Every message is one packet of a fixed size; SBX_MSG_EXEC carries, as SCM_RIGHTS, the
 * command's stdin, stdout and stderr and a sealed memfd with its command line and environment
 * (command-fd.h).
 *
 *   helper -> sbxd  READY              the helper's checks passed; it takes requests from now on
 *   sbxd -> helper  EXEC op fds        run a command (its own session, the sandbox's confinement,
 *                                      the profile's syscall rules, timeout and output ceiling; with
 *                                      SBX_EXEC_TTY a terminal of its own, tty-proto.h)
 *   sbxd -> helper  SIGNAL op sig      deliver sig to the command's process group
 *   helper -> sbxd  DONE op result     the command ended (or could not start: flags)
 *   helper -> sbxd  FINISHED status    a run's command exited (a run's or a pooled unit's helper, once,
 *                                      after its command's processes are all gone): the same status line
 *                                      it gives systemd as STATUS= right after, for sbxd to answer the
 *                                      run without waiting for systemd to pass that on (docs/design.md)
 *
 * Nothing of a command's arguments or output ever comes back: only figures. */

#include <stdint.h>

#define SBX_OP_ID_LEN 32                        /* hex characters of an exec's operation id */
#define SBX_SANDBOX_MSG_MAX 1024U               /* one packet, at most */
#define SBX_EXEC_FDS 4                          /* stdin, stdout, stderr, the command's memfd */
#define SBX_SANDBOX_EXECS_MAX 64U               /* commands running at once in one sandbox */

enum {
        SBX_MSG_READY = 1,
        SBX_MSG_EXEC = 2,
        SBX_MSG_SIGNAL = 3,
        SBX_MSG_DONE = 4,
        SBX_MSG_FINISHED = 5,
};

#define SBX_FINISHED_STATUS_MAX 512U     /* bytes of a FINISHED status line, its NUL included */

/* SbxDone.flags */
enum {
        SBX_DONE_TIMED_OUT = 1U << 0,       /* killed at its timeout */
        SBX_DONE_OUTPUT_TRUNCATED = 1U << 1,/* wrote more than its output ceiling; the rest was dropped */
        SBX_DONE_NOT_STARTED = 1U << 2,     /* its supervisor could not be set up (a command not found or
                                             * not executable exits 127/126 as usual) */
        SBX_DONE_LOST = 1U << 3,            /* its supervisor ended without a result */
        SBX_DONE_BUSY = 1U << 4,            /* refused: SBX_SANDBOX_EXECS_MAX commands already running */
        SBX_DONE_OUTPUT_STOPPED = 1U << 5,  /* ended (killed) when its output went past the ceiling */
};

/* SbxExecMsg.flags */
enum {
        SBX_EXEC_TTY = 1U << 0,             /* stdin, stdout and stderr are one stream socket of tty-proto.h:
                                             * the command gets a terminal of the run's own devpts */
};

typedef struct SbxMsgHeader {
        uint32_t type;
        uint32_t arg;                   /* EXEC: argc; SIGNAL: the signal number */
        char op[SBX_OP_ID_LEN + 1];     /* NUL-terminated */
        uint8_t pad[7];
} SbxMsgHeader;

typedef struct SbxExecMsg {
        SbxMsgHeader h;
        uint64_t timeout_usec;          /* 0: none (the sandbox's own ceilings still hold) */
        uint64_t output_max;            /* bytes of stdout+stderr passed on; 0: not limited */
        uint32_t envc;                  /* entries "NAME=VALUE" after the h.arg arguments in the memfd */
        uint32_t flags;                 /* SBX_EXEC_* */
        uint16_t tty_rows, tty_cols;    /* SBX_EXEC_TTY: the caller's window at start; 0: not known */
        uint32_t pad;
} SbxExecMsg;

typedef struct SbxDoneMsg {
        SbxMsgHeader h;
        int32_t exit_code;              /* -1 if it was ended by a signal */
        int32_t exit_signal;            /* 0 if it exited */
        uint32_t flags;
        uint32_t denied;                /* calls the profile's syscall rules refused */
        uint64_t started_usec;          /* CLOCK_REALTIME */
        uint64_t duration_usec;
        uint64_t output_bytes;          /* bytes of stdout+stderr it wrote */
} SbxDoneMsg;

typedef struct SbxFinishedMsg {
        SbxMsgHeader h;                 /* h.arg: the command's exit status; h.op: empty */
        char status[SBX_FINISHED_STATUS_MAX]; /* "finished ... exit_status=N ...", NUL-terminated */
} SbxFinishedMsg;
_Static_assert(sizeof(SbxFinishedMsg) <= SBX_SANDBOX_MSG_MAX, "FINISHED is one packet");
