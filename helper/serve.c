/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command-fd.h"
#include "exit-codes.h"
#include "macro.h"
#include "sandbox-proto.h"
#include "sd-protocols.h"
#include "serve.h"
#include "spawn-child.h"
#include "util.h"

typedef struct Op {
        char id[SBX_OP_ID_LEN + 1];
        pid_t pid;  /* its supervisor */
} Op;

static Op ops[SBX_SANDBOX_EXECS_MAX];

static int send_done(int ctl, const SbxDoneMsg *d) {
        ssize_t n = send(ctl, d, sizeof(*d), MSG_NOSIGNAL);

        return n == (ssize_t) sizeof(*d) ? 0 : n < 0 ? -errno : -EIO;
}

static void done_init(SbxDoneMsg *d, const char *op) {
        *d = (SbxDoneMsg) { .h.type = SBX_MSG_DONE, .exit_code = -1 };
        memcpy(d->h.op, op, strnlen(op, SBX_OP_ID_LEN));
}

static bool valid_op(const char *op) {
        size_t n = strnlen(op, SBX_OP_ID_LEN + 1);

        if (n == 0 || n > SBX_OP_ID_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdef", op[i]))
                        return false;
        return true;
}

typedef struct ServeChild {
        const ServeConfig *cfg;
        char **argv, **envp;
        Supervisor *sup;
} ServeChild;

/* the command's side of spawn_child(): a session of its own, then as a run's */
static void serve_child(void *userdata) {
        ServeChild *c = userdata;

        (void) setsid();
        c->cfg->exec_child(c->argv, c->envp, c->sup);
}

/* The supervisor of one command: a child of the serving helper, which has blocked every signal it
 * passes on. It owns the command's fds, starts the command in a session of its own (spawn-child.h), and sends
 * DONE. */
_noreturn_ static void supervise_one(int ctl, const ServeConfig *cfg, const SbxExecMsg *m, char **argv, char **env,
                                     int fds[3]) {
        Supervisor sup = SUPERVISOR_INIT;
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ char **envp = NULL;
        SbxDoneMsg d;
        sigset_t pass;
        uint64_t t0 = now_monotonic(), output_max;
        int status = 0, r;
        pid_t pid;

        done_init(&d, m->h.op);
        d.started_usec = now_realtime();
        for (int i = 0; i < 3; i++)
                if (dup2(fds[i], i) < 0)
                        goto fail;
        for (int i = 0; i < 3; i++)
                if (fds[i] > 2)
                        (void) close(fds[i]);

        /* Always through the relay: the record counts every command's output. */
        output_max = m->output_max ?: cfg->output_max ?: UINT64_MAX;
        sup.tty = m->flags & SBX_EXEC_TTY;
        sup.tty_rows = m->tty_rows;
        sup.tty_cols = m->tty_cols;
        r = supervisor_prepare(&sup, cfg->seccomp_hex, output_max, cfg->output_cut, &error);
        if (r < 0) {
                fprintf(stderr, "sbx: %s\n", error ?: strerror(-r));
                goto fail;
        }
        sigemptyset(&pass);
        sigaddset(&pass, SIGINT);
        sigaddset(&pass, SIGTERM);
        sigaddset(&pass, SIGHUP);
        sigaddset(&pass, SIGQUIT);
        sigaddset(&pass, SIGUSR1);
        sigaddset(&pass, SIGUSR2);
        sigaddset(&pass, SIGWINCH);
        (void) sigprocmask(SIG_BLOCK, &pass, NULL);
        sup.signal_fd = signalfd(-1, &pass, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sup.signal_fd < 0)
                goto fail;
        if (m->timeout_usec > 0)
                sup.deadline = t0 + m->timeout_usec;

        envp = spawn_environ(env);
        if (!envp)
                goto fail;
        pid = spawn_child(cfg->spawn_shared, serve_child,
                          &(ServeChild) { .cfg = cfg, .argv = argv, .envp = envp, .sup = &sup });
        if (pid < 0)
                goto fail;
        sup.group = pid;
        r = supervisor_start(&sup, pid, &error);
        if (r < 0) {
                fprintf(stderr, "sbx: %s\n", error ?: strerror(-r));
                goto fail;
        }
        r = supervisor_wait(&sup, pid, &status);
        if (r < 0)
                goto fail;
        /* what the command left in its group ends with it: each exec is bounded */
        (void) kill(-pid, SIGKILL);
        supervisor_finish(&sup);

        d.duration_usec = now_monotonic() - t0;
        if (WIFEXITED(status))
                d.exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
                d.exit_signal = WTERMSIG(status);
        if (sup.timed_out)
                d.flags |= SBX_DONE_TIMED_OUT;
        if (sup.output_max != UINT64_MAX && sup.output_read > sup.output_max)
                d.flags |= SBX_DONE_OUTPUT_TRUNCATED;
        if (sup.output_stopped)
                d.flags |= SBX_DONE_OUTPUT_STOPPED;
        d.output_bytes = sup.output_read;
        for (size_t i = 0; i < sup.denials.n; i++)
                d.denied += (uint32_t) sup.denials.entries[i].count;
        r = send_done(ctl, &d);
        /* What is left of us is our exit (our memory given back), after the answer: it must not hold a CPU
         * the answer's way on (sbxd, the caller) would be woken on. A CPU that runs only SCHED_IDLE tasks
         * counts as idle to the scheduler, and such a task gives way to any other at once. Best-effort. */
        (void) sched_setscheduler(0, SCHED_IDLE, &(struct sched_param) {});
        _exit(r < 0 ? SBX_EXIT_FAILURE : 0);

fail:
        d.flags |= SBX_DONE_NOT_STARTED;
        d.exit_code = SBX_EXIT_FAILURE;
        d.duration_usec = now_monotonic() - t0;
        _exit(send_done(ctl, &d) < 0 ? SBX_EXIT_FAILURE : 0);
}

static Op *op_find_pid(pid_t pid) {
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (ops[i].pid == pid)
                        return &ops[i];
        return NULL;
}

static Op *op_find(const char *id) {
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (ops[i].pid > 0 && streq(ops[i].id, id))
                        return &ops[i];
        return NULL;
}

/* Receives one packet from sbxd: a SIGNAL (header only) or an EXEC (its command line and environment
 * read from its memfd, its three fds). Returns 1 when the channel closed, 0 with *h (and for EXEC *m,
 * *ret_argv, *ret_env, fds) set, -EAGAIN when there was nothing after all, -EBADMSG for a malformed packet
 * (its fds closed), another negative errno on failure. With ret_cmd, an EXEC's memfd is kept there (for
 * the packet to go on to a spare supervisor, as it came) instead of closed. */
static int recv_packet(int ctl, SbxMsgHeader *h, SbxExecMsg *m, char ***ret_argv, char ***ret_env, int fds[3],
                       int *ret_cmd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(SBX_EXEC_FDS * sizeof(int))];
        } control = {};
        union {
                SbxMsgHeader h;
                SbxExecMsg m;
                char bytes[SBX_SANDBOX_MSG_MAX];
        } buf;
        struct iovec iov = { .iov_base = &buf, .iov_len = sizeof(buf) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        int all[SBX_EXEC_FDS] = { -EBADF, -EBADF, -EBADF, -EBADF };
        int nfds = 0, r = 0;
        ssize_t n;

        fds[0] = fds[1] = fds[2] = -EBADF;
        n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? -EAGAIN : -errno;
        if (n == 0)
                return 1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        int k = (int) ((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

                        for (int i = 0; i < k; i++) {
                                int fd;

                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (nfds < SBX_EXEC_FDS)
                                        all[nfds++] = fd;
                                else
                                        (void) close(fd);
                        }
                }
        if ((size_t) n < sizeof(*h) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                r = -EBADMSG;
                goto fail;
        }
        *h = buf.h;
        h->op[SBX_OP_ID_LEN] = 0;
        if (!valid_op(h->op)) {
                r = -EBADMSG;
                goto fail;
        }
        if (h->type == SBX_MSG_SIGNAL) {
                if (nfds > 0) {
                        r = -EBADMSG;
                        goto fail;
                }
                return 0;
        }
        if (h->type != SBX_MSG_EXEC || (size_t) n != sizeof(SbxExecMsg) || nfds != SBX_EXEC_FDS) {
                r = -EBADMSG;
                goto fail;
        }
        *m = buf.m;
        m->h = *h;
        r = command_fd_read(all[3], h->arg, m->envc, ret_argv, ret_env);
        if (r < 0)
                goto fail;
        if (ret_cmd)
                *ret_cmd = all[3];
        else
                (void) close(all[3]);
        memcpy(fds, all, 3 * sizeof(int));
        return 0;
fail:
        for (int i = 0; i < nfds; i++)
                safe_close(all[i]);
        return r;
}

/* ---- the spare supervisor ----
 * A supervisor forked while the sandbox is idle, waiting for its EXEC on a socket pair of its own: the
 * next command does not wait for the helper's fork (a page-table copy, then a copy of each page the new
 * process writes). It is forked only when no command runs, so that it never holds one of the unit's
 * tasks (TasksMax=) while a command might want it; the first command takes it, the others are forked
 * as they come. The EXEC reaches it as it came from sbxd, and it checks and reads it the same way. */

static pid_t spare_pid;
static int spare_fd = -EBADF;    /* the helper's end of the spare's socket pair */

_noreturn_ static void spare_main(int ctl, int fd, const ServeConfig *cfg) {
        int fds[3];
        char **argv = NULL, **env = NULL;
        SbxExecMsg m;
        SbxMsgHeader h;
        sigset_t term;
        int r;

        /* while it waits, the unit's stop (SIGTERM) ends it; from its EXEC on, it is passed on to the
         * command, as by any supervisor */
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        (void) sigprocmask(SIG_UNBLOCK, &term, NULL);
        /* the page faults of a fresh fork, taken now rather than on the command's path */
        spawn_prepare(cfg->spawn_shared);
        do
                r = recv_packet(fd, &h, &m, &argv, &env, fds, NULL);
        while (r == -EAGAIN);
        (void) sigprocmask(SIG_BLOCK, &term, NULL);
        /* the helper's end closed (it is gone, or dropped this spare), or no EXEC: nothing to do */
        if (r != 0 || h.type != SBX_MSG_EXEC)
                _exit(0);
        (void) close(fd);
        supervise_one(ctl, cfg, &m, argv, env, fds);
}

static void spare_drop(void) {
        spare_fd = safe_close(spare_fd);
        spare_pid = 0;
}

/* A spare, if there is none and no command runs. Without one, commands are forked as they come. */
static void spare_start(int ctl, const ServeConfig *cfg) {
        int pair[2];
        pid_t pid;

        if (spare_pid > 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (ops[i].pid > 0)
                        return;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return;
        pid = fork();
        if (pid < 0) {
                safe_close(pair[0]);
                safe_close(pair[1]);
                return;
        }
        if (pid == 0) {
                safe_close(pair[0]);
                spare_main(ctl, pair[1], cfg);
        }
        safe_close(pair[1]);
        spare_fd = pair[0];
        spare_pid = pid;
}

/* The EXEC (its header m, command memfd cmd, fds) to the spare; its pid, or 0 when there is no spare or
 * it could not take it (then it is dropped). */
static pid_t spare_take(const SbxExecMsg *m, int cmd, const int fds[3]) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(SBX_EXEC_FDS * sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (void *) m, .iov_len = sizeof(*m) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        int all[SBX_EXEC_FDS] = { fds[0], fds[1], fds[2], cmd };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        pid_t pid = spare_pid;

        if (pid <= 0)
                return 0;
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(all));
        memcpy(CMSG_DATA(c), all, sizeof(all));
        if (sendmsg(spare_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) sizeof(*m)) {
                /* gone while it waited, and not reaped yet (reap() will): the EXEC is forked instead */
                (void) kill(pid, SIGKILL);
                spare_drop();
                return 0;
        }
        spare_drop();
        return pid;
}

/* One packet from sbxd. Returns 0 to go on, 1 when the channel closed, a negative errno on failure. */
static int handle_packet(int ctl, const ServeConfig *cfg) {
        int fds[3], cmd = -EBADF;
        char **argv = NULL, **env = NULL;
        SbxExecMsg m;
        SbxMsgHeader h;
        Op *slot;
        pid_t pid;
        int r;

        r = recv_packet(ctl, &h, &m, &argv, &env, fds, &cmd);
        if (r == -EAGAIN || r == -EBADMSG) /* a malformed packet is sbxd's bug, not the sandbox's end: dropped */
                return 0;
        if (r != 0)
                return r;
        if (h.type == SBX_MSG_SIGNAL) {
                Op *o = op_find(h.op);

                if (o && h.arg > 0 && h.arg < (uint32_t) _NSIG)
                        (void) kill(o->pid, (int) h.arg);
                return 0;
        }
        slot = op_find_pid(0);
        if (op_find(h.op)) /* an id in use: a second command under it could not be told apart */
                goto out;
        if (!slot) {
                SbxDoneMsg d;

                done_init(&d, h.op);
                d.flags = SBX_DONE_BUSY | SBX_DONE_NOT_STARTED;
                d.started_usec = now_realtime();
                r = send_done(ctl, &d);
                goto out;
        }
        pid = spare_take(&m, cmd, fds);
        if (pid == 0) {
                pid = fork();
                if (pid < 0) {
                        r = -errno;
                        goto out;
                }
                if (pid == 0)
                        supervise_one(ctl, cfg, &m, argv, env, fds);
        }
        strcpy(slot->id, h.op);
        slot->pid = pid;
out:
        for (int i = 0; i < 3; i++)
                (void) close(fds[i]);
        safe_close(cmd);
        command_fd_free(argv, env);
        return r;
}

static int reap(int ctl) {
        int status;
        pid_t pid;

        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                Op *o = op_find_pid(pid);

                if (pid == spare_pid)
                        spare_drop(); /* killed while it waited: another is forked when all is idle */
                if (!o)
                        continue; /* an orphan of a command (we are a subreaper), or the spare */
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        SbxDoneMsg d;

                        done_init(&d, o->id);
                        d.flags = SBX_DONE_LOST;
                        (void) send_done(ctl, &d);
                }
                *o = (Op) {};
        }
        return 0;
}

/* Blocks the signals to wait for (SIGTERM: the unit is being stopped; SIGCHLD if with_children), returns
 * a signalfd for them, and (ready_msg) tells sbxd READY on ctl. */
static int serve_begin(int ctl, bool with_children, bool ready_msg) {
        SbxMsgHeader ready = { .type = SBX_MSG_READY };
        _cleanup_close_ int sfd = -EBADF;
        sigset_t set;

        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        if (with_children)
                sigaddset(&set, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return -errno;
        sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return -errno;
        if (ready_msg && send(ctl, &ready, sizeof(ready), MSG_NOSIGNAL) != (ssize_t) sizeof(ready))
                return -errno;
        return TAKE_FD(sfd);
}

int serve(int ctl, const ServeConfig *cfg) {
        _cleanup_close_ int sfd = -EBADF;
        int r;

        /* (its commands get their SIGTERM from systemd too) */
        sfd = serve_begin(ctl, true, true);
        if (sfd < 0)
                return sfd;

        for (;;) {
                /* after READY (the sandbox's creator is answered first), and each time all is idle again */
                spare_start(ctl, cfg);
                struct pollfd p[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                struct signalfd_siginfo si;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents) {
                        bool term = false;

                        while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                if (si.ssi_signo == SIGTERM)
                                        term = true;
                        (void) reap(ctl);
                        if (term)
                                return 0;
                }
                if (p[0].revents & POLLIN) {
                        r = handle_packet(ctl, cfg);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                return 0;
                } else if (p[0].revents & (POLLHUP | POLLERR))
                        return 0;
        }
}

int serve_wait_one(int ctl, bool pooled, char ***ret_argv, char ***ret_env, int fds[3], Supervisor *sup) {
        _cleanup_close_ int sfd = -EBADF;

        /* SIGTERM: the unit is being stopped before it got a run */
        sfd = serve_begin(ctl, false, pooled);
        if (sfd < 0)
                return sfd;
        /* for systemctl status (its READY=1 comes with the command: the unit stays "activating") */
        if (pooled)
                (void) notify_send("STATUS=waiting for a run");
        for (;;) {
                struct pollfd p[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                SbxMsgHeader h;
                SbxExecMsg m;
                int r;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents)
                        return -ECANCELED;
                if (!(p[0].revents & POLLIN)) {
                        if (p[0].revents & (POLLHUP | POLLERR))
                                return 0;
                        continue;
                }
                r = recv_packet(ctl, &h, &m, ret_argv, ret_env, fds, NULL);
                if (r == -EAGAIN)
                        continue;
                if (r == 1)
                        return 0;
                if (r < 0)
                        return r;
                if (h.type != SBX_MSG_EXEC) /* nothing to signal yet */
                        continue;
                sup->tty = m.flags & SBX_EXEC_TTY;
                sup->tty_rows = m.tty_rows;
                sup->tty_cols = m.tty_cols;
                return 1;
        }
}
