/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seccomp: argument-level syscall rules compiled with libseccomp, installed with a listener in a child
 * and supervised from the parent the way the exec helper does it. No root needed: the child sets
 * no_new_privs itself. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <cmocka.h>

#include "profile.h"
#include "seccomp-filter.h"
#include "seccomp-notify.h"
#include "syscall-groups.h"
#include "unit-test.h"

#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define HI(x) ((uint64_t) (x) << 32)

/* sbx's own rules (policy_baseline_rules), written out here so this test stands alone. */
static const SyscallRule baseline[] = {
        { .syscall = (char *) "ioctl", .nr = SCMP_SYS(ioctl), .has_arg = true, .arg = 1, .cmp = SYSCALL_CMP_EQ,
          .value = TIOCSTI, .arg32 = true },
        { .syscall = (char *) "ioctl", .nr = SCMP_SYS(ioctl), .has_arg = true, .arg = 1, .cmp = SYSCALL_CMP_EQ,
          .value = TIOCLINUX, .arg32 = true },
        { .syscall = (char *) "io_uring_setup", .nr = SCMP_SYS(io_uring_setup) },
};

static char *compile_ok(const SyscallRule *rules, size_t n) {
        _cleanup_free_ char *error = NULL;
        char *hex = NULL;
        int r = seccomp_rules_compile(rules, n, &hex, &error);

        if (r < 0)
                fail_msg("seccomp_rules_compile: %s: %s", strerror(-r), strna(error));
        assert_non_null(hex);
        assert_null(error);
        return hex;
}

/* ---- running under a program, supervised ---- */

#define MAX_PROBES 64

typedef struct Probe {
        long ret;
        int err;
} Probe;

/* Runs in the child with the program in force; fills probes[], returns how many. */
typedef size_t (*ProbeFunc)(const void *userdata, Probe probes[static MAX_PROBES]);

typedef struct Supervised {
        Probe probes[MAX_PROBES];
        size_t n_probes;
        SeccompDenials denials;
        int status;
} Supervised;

static void supervised_done(Supervised *s) {
        seccomp_denials_done(&s->denials);
}

static Probe probe_result(long ret) {
        return (Probe) { .ret = ret, .err = ret < 0 ? errno : 0 };
}

/* fork; the child installs the program (no_new_privs first), hands the listener over, runs f and writes
 * its results to a pipe; the parent answers every notification with EPERM until the child is gone. */
static void run_supervised(const char *hex, ProbeFunc f, const void *userdata, Supervised *ret) {
        int sv[2], res[2], listener = -EBADF, r;
        pid_t pid;

        *ret = (Supervised) {};
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(pipe2(res, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sock_fprog prog;
                Probe probes[MAX_PROBES];
                size_t n;
                int fd;

                reset_crash_signals();
                close(sv[0]);
                close(res[0]);
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(10);
                r = seccomp_program_from_hex(hex, &prog);
                if (r < 0) {
                        (void) seccomp_listener_send(sv[1], r);
                        _exit(11);
                }
                fd = seccomp_install_with_listener(&prog);
                if (seccomp_listener_send(sv[1], fd) < 0 || fd < 0)
                        _exit(12);
                close(fd);
                close(sv[1]);
                n = f(userdata, probes);
                if (write(res[1], probes, n * sizeof(Probe)) != (ssize_t) (n * sizeof(Probe)))
                        _exit(13);
                _exit(0);
        }
        close(sv[1]);
        close(res[1]);
        r = seccomp_listener_recv(sv[0], &listener);
        close(sv[0]);
        if (r < 0)
                fail_msg("no listener from the child: %s", strerror(-r));

        for (;;) {
                struct pollfd p = { .fd = listener, .events = POLLIN };
                pid_t w = waitpid(pid, &ret->status, WNOHANG);

                if (w == pid)
                        break;
                assert_true(w == 0);
                if (poll(&p, 1, 50) > 0 && (p.revents & POLLIN))
                        assert_true(seccomp_notify_handle(listener, &ret->denials) >= 0);
        }
        close(listener);
        {
                ssize_t k = read(res[0], ret->probes, sizeof(ret->probes));
                assert_true(k >= 0 && k % sizeof(Probe) == 0);
                ret->n_probes = (size_t) k / sizeof(Probe);
        }
        close(res[0]);
        if (!WIFEXITED(ret->status) || WEXITSTATUS(ret->status) != 0)
                fail_msg("the child failed (status 0x%x)", (unsigned) ret->status);
}

/* ---- the baseline rules bite ---- */

enum {
        P_TIOCSTI,
        P_TIOCSTI_HIGH,
        P_TIOCLINUX,
        P_IO_URING_SETUP,
        P_TIOCGWINSZ,
        P_SECCOMP_LISTENER,
        P_X32,
        P_I386,
        _P_MAX,
};

/* Whether this kernel runs i386 system calls at all (int 0x80): kernels built or booted without IA32
 * emulation kill the caller with SIGSEGV instead, before any filter sees the call. Probed once, in a
 * child without a filter. */
static int ia32_available = -1;

static bool probe_ia32(void) {
#if defined(__x86_64__)
        if (ia32_available < 0) {
                int status;
                pid_t pid = fork();

                assert_true(pid >= 0);
                if (pid == 0) {
                        long ret;

                        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(64L) : "memory", "r8", "r9", "r10", "r11");
                        _exit(ret > 0 ? 0 : 1);
                }
                assert_true(waitpid(pid, &status, 0) == pid);
                ia32_available = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                if (!ia32_available)
                        print_message("note: this kernel has no i386 system calls (IA32 emulation off): "
                                      "the i386 probe is not run\n");
        }
        return ia32_available;
#else
        return false;
#endif
}

static size_t probe_terminal(const void *userdata, Probe p[static MAX_PROBES]) {
        char c = 'x', sel[2] = { 3, 0 }; /* TIOCLINUX subcode 3: TIOCL_SETSEL... harmless on a pty */
        struct sock_fprog prog = { .len = 1, .filter = (struct sock_filter[]) { BPF_STMT(BPF_RET | BPF_K,
                                                                                          SECCOMP_RET_ALLOW) } };
        struct winsize ws;
        uint8_t params[120] = {};
        int master, slave;

        /* A pty that is our controlling terminal: there TIOCSTI would work without the filter. */
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || setsid() < 0)
                _exit(20);
        slave = open(ptsname(master), O_RDWR | O_CLOEXEC);
        if (slave < 0)
                _exit(21);

        p[P_TIOCSTI] = probe_result(ioctl(slave, TIOCSTI, &c));
        /* the kernel reads the request as 32 bits: the same request with high bits set */
        p[P_TIOCSTI_HIGH] = probe_result(syscall(SYS_ioctl, slave, (unsigned long) TIOCSTI | (1UL << 32), &c));
        p[P_TIOCLINUX] = probe_result(ioctl(slave, TIOCLINUX, sel));
        p[P_IO_URING_SETUP] = probe_result(syscall(SYS_io_uring_setup, 1, params));
        p[P_TIOCGWINSZ] = probe_result(ioctl(slave, TIOCGWINSZ, &ws));
        p[P_SECCOMP_LISTENER] = probe_result(
                syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
        /* x32 numbering (same arch token, bit 30 set): not the native ABI */
        p[P_X32] = probe_result(syscall(0x40000000 | SYS_getppid));
#if defined(__x86_64__)
        if (ia32_available > 0) {
                long ret;
                /* i386 getppid (64) through int 0x80 */
                __asm__ volatile("int $0x80" : "=a"(ret) : "a"(64L) : "memory", "r8", "r9", "r10", "r11");
                p[P_I386] = ret < 0 ? (Probe) { .ret = -1, .err = (int) -ret } : (Probe) { .ret = ret };
        } else
                p[P_I386] = (Probe) { .ret = -1, .err = ENOSYS };
#else
        p[P_I386] = (Probe) { .ret = -1, .err = EPERM };
#endif
        return _P_MAX;
}

static void test_baseline_bites(void **state) {
        _cleanup_free_ char *hex = compile_ok(baseline, ELEMENTSOF(baseline)), *list = NULL;
        bool ia32 = probe_ia32();
        Supervised s;

        run_supervised(hex, probe_terminal, NULL, &s);
        assert_int_equal(s.n_probes, _P_MAX);
        for (size_t i = 0; i < _P_MAX; i++)
                print_message("probe %zu: ret %ld errno %d\n", i, s.probes[i].ret, s.probes[i].err);
        assert_int_equal(s.probes[P_TIOCSTI].ret, -1);
        assert_int_equal(s.probes[P_TIOCSTI].err, EPERM);
        assert_int_equal(s.probes[P_TIOCSTI_HIGH].ret, -1);
        assert_int_equal(s.probes[P_TIOCSTI_HIGH].err, EPERM);
        assert_int_equal(s.probes[P_TIOCLINUX].ret, -1);
        assert_int_equal(s.probes[P_TIOCLINUX].err, EPERM);
        assert_int_equal(s.probes[P_IO_URING_SETUP].ret, -1);
        assert_int_equal(s.probes[P_IO_URING_SETUP].err, EPERM);
        assert_int_equal(s.probes[P_TIOCGWINSZ].ret, 0);
        assert_int_equal(s.probes[P_SECCOMP_LISTENER].ret, -1);
        assert_int_equal(s.probes[P_SECCOMP_LISTENER].err, EPERM);
        assert_int_equal(s.probes[P_X32].ret, -1);
        assert_int_equal(s.probes[P_X32].err, EPERM);
        assert_int_equal(s.probes[P_I386].ret, -1);
        assert_int_equal(s.probes[P_I386].err, ia32 ? EPERM : ENOSYS);

        /* counted per syscall by the supervisor; the other architectures' calls are not notified */
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(ioctl)), 3);
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(io_uring_setup)), 1);
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(seccomp)), 1);
        assert_int_equal(s.denials.n, 3);
        assert_int_equal(seccomp_denials_format(&s.denials, &list), 0);
        assert_string_equal(list, "ioctl:3,io_uring_setup:1,seccomp:1");
        supervised_done(&s);
}

/* The same calls under a program without rules: nothing is notified, and the calls the rules deny
 * give something other than EPERM here, so EPERM above came from the rules. */
static void test_baseline_control(void **state) {
        _cleanup_free_ char *hex = compile_ok(NULL, 0);
        Supervised s;

        (void) probe_ia32();
        run_supervised(hex, probe_terminal, NULL, &s);
        assert_int_equal(s.n_probes, _P_MAX);
        for (size_t i = 0; i < _P_MAX; i++)
                print_message("probe %zu: ret %ld errno %d\n", i, s.probes[i].ret, s.probes[i].err);
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(ioctl)), 0);
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(io_uring_setup)), 0);
        /* the request's high bits are ignored by the kernel: both forms do the same */
        assert_int_equal(s.probes[P_TIOCSTI_HIGH].ret, s.probes[P_TIOCSTI].ret);
        assert_int_equal(s.probes[P_TIOCSTI_HIGH].err, s.probes[P_TIOCSTI].err);
        assert_int_not_equal(s.probes[P_TIOCSTI].err, EPERM); /* our controlling terminal */
        assert_int_not_equal(s.probes[P_TIOCLINUX].err, EPERM);
        assert_int_equal(s.probes[P_TIOCGWINSZ].ret, 0);
        /* seccomp() is always caught */
        assert_int_equal(s.probes[P_SECCOMP_LISTENER].err, EPERM);
        assert_int_equal(seccomp_denials_get(&s.denials, SCMP_SYS(seccomp)), 1);
        supervised_done(&s);
}

/* ---- AF_UNIX datagram sockets: refused with EACCES by every program ---- */

enum {
        U_DGRAM,
        U_DGRAM_FLAGS,
        U_DGRAM_HIGH_BITS,
        U_PAIR_DGRAM,
        U_STREAM,
        U_SEQPACKET,
        U_PAIR_STREAM,
        U_INET_DGRAM,
        U_STREAM_TO_DGRAM,
        U_SEQPACKET_TO_DGRAM,
        U_STREAM_SENDTO,
        _U_MAX,
};

/* a path-bound datagram socket, as systemd's notify socket is */
typedef struct DgramTarget {
        char dir[64];
        struct sockaddr_un sa;
        int fd;
} DgramTarget;

static void dgram_target_open(DgramTarget *t) {
        *t = (DgramTarget) { .fd = -1, .sa.sun_family = AF_UNIX };
        strcpy(t->dir, "/tmp/sbx-test-seccomp.XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->sa.sun_path, sizeof(t->sa.sun_path), "%s/notify", t->dir);
        t->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(t->fd >= 0);
        assert_int_equal(bind(t->fd, (struct sockaddr *) &t->sa, sizeof(t->sa)), 0);
}

static void dgram_target_close(DgramTarget *t) {
        close(t->fd);
        (void) unlink(t->sa.sun_path);
        (void) rmdir(t->dir);
}

static Probe probe_fd(long fd) {
        Probe p = probe_result(fd);

        if (fd >= 0)
                close((int) fd);
        return p;
}

static Probe probe_pair(int domain, int type) {
        int sv[2];
        Probe p = probe_result(socketpair(domain, type, 0, sv));

        if (p.ret == 0) {
                close(sv[0]);
                close(sv[1]);
        }
        return p;
}

static Probe probe_connect(int type, const struct sockaddr_un *sa) {
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        Probe p;

        if (fd < 0)
                return probe_result(fd);
        p = probe_result(connect(fd, (const struct sockaddr *) sa, sizeof(*sa)));
        close(fd);
        return p;
}

static size_t probe_unix_dgram(const void *userdata, Probe p[static MAX_PROBES]) {
        const DgramTarget *t = userdata;
        int fd;

        p[U_DGRAM] = probe_fd(socket(AF_UNIX, SOCK_DGRAM, 0));
        p[U_DGRAM_FLAGS] = probe_fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        /* both are ints to the kernel: high bits do not dodge the rule */
        p[U_DGRAM_HIGH_BITS] = probe_fd(syscall(SYS_socket, HI(1) | AF_UNIX, HI(7) | SOCK_DGRAM, 0));
        p[U_PAIR_DGRAM] = probe_pair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC);
        p[U_STREAM] = probe_fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        p[U_SEQPACKET] = probe_fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        p[U_PAIR_STREAM] = probe_pair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC);
        p[U_INET_DGRAM] = probe_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        /* the kinds that are left cannot reach a datagram socket */
        p[U_STREAM_TO_DGRAM] = probe_connect(SOCK_STREAM, &t->sa);
        p[U_SEQPACKET_TO_DGRAM] = probe_connect(SOCK_SEQPACKET, &t->sa);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        p[U_STREAM_SENDTO] = fd < 0 ? probe_result(fd) :
                probe_result(sendto(fd, "x", 1, MSG_DONTWAIT, (const struct sockaddr *) &t->sa, sizeof(t->sa)));
        if (fd >= 0)
                close(fd);
        return _U_MAX;
}

static void test_unix_dgram_refused(void **state) {
        _cleanup_free_ char *hex = compile_ok(baseline, ELEMENTSOF(baseline));
        DgramTarget t;
        Supervised s;
        char buf[8];

        dgram_target_open(&t);
        run_supervised(hex, probe_unix_dgram, &t, &s);
        assert_int_equal(s.n_probes, _U_MAX);
        for (size_t i = 0; i < _U_MAX; i++)
                print_message("probe %zu: ret %ld errno %d\n", i, s.probes[i].ret, s.probes[i].err);
        for (size_t i = U_DGRAM; i <= U_PAIR_DGRAM; i++) {
                assert_int_equal(s.probes[i].ret, -1);
                assert_int_equal(s.probes[i].err, EACCES);
        }
        for (size_t i = U_STREAM; i <= U_INET_DGRAM; i++)
                assert_true(s.probes[i].ret >= 0);
        assert_int_equal(s.probes[U_STREAM_TO_DGRAM].err, EPROTOTYPE);
        assert_int_equal(s.probes[U_SEQPACKET_TO_DGRAM].err, EPROTOTYPE);
        assert_int_equal(s.probes[U_STREAM_SENDTO].err, EOPNOTSUPP);
        /* nothing reached the target, and the refusals are the kernel's own (not notified, not counted) */
        assert_int_equal(recv(t.fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
        assert_int_equal(errno, EAGAIN);
        assert_int_equal(s.denials.n, 0);
        supervised_done(&s);
        dgram_target_close(&t);
}

/* Why socketpair() is refused too: one end of a connected datagram pair still sends to any path. */
static void test_unix_dgram_pair_reaches_paths(void **state) {
        DgramTarget t;
        int sv[2];
        char buf[8];

        dgram_target_open(&t);
        assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(sendto(sv[0], "hi", 2, 0, (const struct sockaddr *) &t.sa, sizeof(t.sa)), 2);
        assert_int_equal(recv(t.fd, buf, sizeof(buf), MSG_DONTWAIT), 2);
        close(sv[0]);
        close(sv[1]);
        dgram_target_close(&t);
}

/* ---- every comparison, both widths ---- */

typedef struct CmpCase {
        SyscallCmp cmp;
        uint64_t value, mask;
        bool has_arg, arg32;
        uint64_t probes[8];
        bool denied[8];
        size_t n;
} CmpCase;

static const char *cmp_name(SyscallCmp c) {
        static const char *const names[_SYSCALL_CMP_MAX] = {
                [SYSCALL_CMP_EQ] = "eq", [SYSCALL_CMP_NE] = "ne", [SYSCALL_CMP_LT] = "lt", [SYSCALL_CMP_LE] = "le",
                [SYSCALL_CMP_GT] = "gt", [SYSCALL_CMP_GE] = "ge", [SYSCALL_CMP_MASKED_EQ] = "masked_eq",
        };
        return c >= 0 && c < _SYSCALL_CMP_MAX ? names[c] : "?";
}

static size_t probe_getppid(const void *userdata, Probe p[static MAX_PROBES]) {
        const CmpCase *c = userdata;

        for (size_t i = 0; i < c->n; i++)
                p[i] = probe_result(syscall(SYS_getppid, c->probes[i], 0, 0, 0, 0, 0));
        return c->n;
}

static void test_comparisons(void **state) {
        static const CmpCase table[] = {
                { SYSCALL_CMP_EQ, 5, 0, true, false, { 5, 6, HI(1) | 5 }, { 1, 0, 0 }, 3 },
                { SYSCALL_CMP_EQ, 5, 0, true, true, { 5, 6, HI(1) | 5, HI(0xffffffff) | 5, 0 }, { 1, 0, 1, 1, 0 }, 5 },
                { SYSCALL_CMP_NE, 5, 0, true, true, { 5, HI(1) | 5, 6, 0 }, { 0, 0, 1, 1 }, 4 },
                { SYSCALL_CMP_NE, 5, 0, true, false, { 5, HI(1) | 5, 6 }, { 0, 1, 1 }, 3 },
                { SYSCALL_CMP_LT, 5, 0, true, true, { 0, 4, 5, 6, 0xffffffff, HI(1 << 8) | 4 }, { 1, 1, 0, 0, 0, 1 }, 6 },
                { SYSCALL_CMP_LT, 5, 0, true, false, { 4, HI(1 << 8) | 4, 5, 0 }, { 1, 0, 0, 1 }, 4 },
                { SYSCALL_CMP_LE, 5, 0, true, true, { 5, 6, 0, HI(3) | 5 }, { 1, 0, 1, 1 }, 4 },
                { SYSCALL_CMP_GT, 5, 0, true, true, { 6, 0xffffffff, 5, 0, HI(1) | 5 }, { 1, 1, 0, 0, 0 }, 5 },
                { SYSCALL_CMP_GT, 5, 0, true, false, { 6, HI(1) | 5, 5, 0 }, { 1, 1, 0, 0 }, 4 },
                { SYSCALL_CMP_GE, 5, 0, true, false, { 5, 4, UINT64_MAX }, { 1, 0, 1 }, 3 },
                { SYSCALL_CMP_GE, 0, 0, true, true, { 0, 7, UINT64_MAX }, { 1, 1, 1 }, 3 },
                { SYSCALL_CMP_LE, 0xffffffff, 0, true, true, { 0, 7, UINT64_MAX }, { 1, 1, 1 }, 3 },
                { SYSCALL_CMP_MASKED_EQ, 0x30, 0xf0, true, true, { 0x35, 0x45, HI(1) | 0x35, 0x30 }, { 1, 0, 1, 1 }, 4 },
                { SYSCALL_CMP_MASKED_EQ, HI(3), HI(0xf), true, false, { HI(3), 0x30, HI(0x13) | 7 }, { 1, 0, 1 }, 3 },
                /* unsigned */
                { SYSCALL_CMP_GT, INT64_MAX, 0, true, false, { UINT64_C(1) << 63, 5 }, { 1, 0 }, 2 },
                { SYSCALL_CMP_LT, 0x80000000, 0, true, true, { 0xffffffff, 1 }, { 0, 1 }, 2 },
                /* no argument: every call */
                { SYSCALL_CMP_EQ, 0, 0, false, false, { 0, 1, UINT64_MAX }, { 1, 1, 1 }, 3 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                const CmpCase *c = &table[i];
                SyscallRule rule = {
                        .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = c->has_arg, .arg = 0,
                        .cmp = c->cmp, .value = c->value, .mask = c->mask, .arg32 = c->arg32,
                };
                _cleanup_free_ char *hex = compile_ok(&rule, 1);
                uint64_t want = 0;
                Supervised s;

                run_supervised(hex, probe_getppid, c, &s);
                assert_int_equal(s.n_probes, c->n);
                for (size_t j = 0; j < c->n; j++) {
                        bool denied = s.probes[j].ret == -1 && s.probes[j].err == EPERM;

                        check_row(failures, denied == c->denied[j],
                                  "case %zu (%s %s 0x%" PRIx64 "/0x%" PRIx64 "): probe 0x%" PRIx64 " %s", i,
                                  c->arg32 ? "32" : "64", cmp_name(c->cmp), c->value, c->mask,
                                  c->probes[j], denied ? "denied" : "allowed");
                        if (!denied)
                                check_row(failures, s.probes[j].ret == getpid(), "case %zu: probe %zu returned %ld",
                                          i, j, s.probes[j].ret);
                        want += c->denied[j];
                }
                check_row(failures, seccomp_denials_get(&s.denials, SCMP_SYS(getppid)) == want,
                          "case %zu: counted %" PRIu64 ", expected %" PRIu64, i,
                          seccomp_denials_get(&s.denials, SCMP_SYS(getppid)), want);
                supervised_done(&s);
        }
        assert_int_equal(failures, 0);
}

/* ---- rules that are refused ---- */

static void test_compile_refused(void **state) {
        static const struct {
                SyscallRule rule;
                const char *error;
        } table[] = {
                { { .syscall = (char *) "nosuch", .nr = -1 }, "syscall_rules[0]: 'nosuch' is not a syscall" },
                { { .syscall = (char *) "sendmsg", .nr = SCMP_SYS(sendmsg) }, "rules on sendmsg are not supported" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .arg = 6 },
                  "argument 6 does not exist" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .cmp = _SYSCALL_CMP_MAX },
                  "unknown comparison" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .arg32 = true,
                    .value = HI(1) },
                  "compared as 32 bits" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .arg32 = true,
                    .cmp = SYSCALL_CMP_MASKED_EQ, .value = 1, .mask = HI(1) | 1 },
                  "compared as 32 bits" },
                /* ioctl's request is 32 bits whatever the rule says */
                { { .syscall = (char *) "ioctl", .nr = SCMP_SYS(ioctl), .has_arg = true, .arg = 1,
                    .value = HI(1) | TIOCSTI },
                  "compared as 32 bits" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .cmp = SYSCALL_CMP_LT },
                  "can never be true" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .cmp = SYSCALL_CMP_GT,
                    .value = UINT64_MAX },
                  "can never be true" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true, .arg32 = true,
                    .cmp = SYSCALL_CMP_GT, .value = 0xffffffff },
                  "can never be true" },
                { { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid), .has_arg = true,
                    .cmp = SYSCALL_CMP_MASKED_EQ, .value = 0x11, .mask = 0x10 },
                  "can never be true" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *error = NULL;
                char *hex = (char *) 0x1;
                int r = seccomp_rules_compile(&table[i].rule, 1, &hex, &error);

                check_row(failures, r == -EINVAL && error && strstr(error, table[i].error) && hex == (char *) 0x1,
                          "row %zu: %d '%s', expected '%s'", i, r, strna(error), table[i].error);
        }
        assert_int_equal(failures, 0);
}

/* A rule on seccomp() adds nothing (it is always caught); an identical rule twice is one. */
static void test_compile_redundant(void **state) {
        const SyscallRule rules[] = {
                baseline[0], baseline[0],
                { .syscall = (char *) "seccomp", .nr = SCMP_SYS(seccomp), .has_arg = true, .value = 1 },
        };
        _cleanup_free_ char *a = compile_ok(rules, ELEMENTSOF(rules)), *b = compile_ok(baseline, 1);

        assert_string_equal(a, b);
}

/* ---- program text ---- */

static void test_program_from_hex(void **state) {
        static const char *const bad[] = { "", "0", "0011223344556677aa", "zz11223344556677", "00112233445566" };
        _cleanup_free_ char *hex = compile_ok(baseline, ELEMENTSOF(baseline)), *big = NULL;
        struct sock_fprog prog;
        size_t n = (BPF_MAXINSNS + 1) * 16;

        assert_int_equal(strlen(hex) % 16, 0);
        assert_int_equal(seccomp_program_from_hex(hex, &prog), 0);
        assert_int_equal(prog.len, strlen(hex) / 16);
        /* the program starts by loading the architecture (seccomp_data.arch, offset 4) */
        assert_int_equal(prog.filter[0].code, BPF_LD | BPF_W | BPF_ABS);
        assert_int_equal(prog.filter[0].k, 4);
        seccomp_program_done(&prog);
        assert_null(prog.filter);
        /* upper case is hex too */
        for (char *p = hex; *p; p++)
                *p = (char) toupper(*p);
        assert_int_equal(seccomp_program_from_hex(hex, &prog), 0);
        seccomp_program_done(&prog);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(seccomp_program_from_hex(bad[i], &prog), -EINVAL);
        assert_int_equal(seccomp_program_from_hex(NULL, &prog), -EINVAL);
        big = malloc(n + 1);
        assert_non_null(big);
        memset(big, '0', n);
        big[n] = 0;
        assert_int_equal(seccomp_program_from_hex(big, &prog), -EINVAL);
}

/* ---- the hand-over ---- */

static void test_listener_handover_errors(void **state) {
        int sv[2], fd = -1;

        /* the child reports why there is no listener */
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(seccomp_listener_send(sv[1], -EACCES), 0);
        assert_int_equal(seccomp_listener_recv(sv[0], &fd), -EACCES);
        assert_int_equal(fd, -1);
        /* the child ended without a word */
        close(sv[1]);
        assert_int_equal(seccomp_listener_recv(sv[0], &fd), -EPIPE);
        assert_int_equal(fd, -1);
        close(sv[0]);

        /* an fd passes */
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(seccomp_listener_send(sv[1], STDERR_FILENO), 0);
        assert_int_equal(seccomp_listener_recv(sv[0], &fd), 0);
        assert_true(fd > STDERR_FILENO);
        assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        close(fd);
        close(sv[0]);
        close(sv[1]);
}

/* A caller that dies while its call waits: the supervisor gets ENOENT and carries on. */
static void test_notify_target_gone(void **state) {
        const SyscallRule rule = { .syscall = (char *) "getppid", .nr = SCMP_SYS(getppid) };
        _cleanup_free_ char *hex = compile_ok(&rule, 1);

        for (int when = 0; when < 2; when++) { /* 0: before the supervisor receives it, 1: before it answers */
                SeccompDenials d = {};
                struct seccomp_notif n;
                struct pollfd p;
                int sv[2], listener = -1, status;
                pid_t pid;

                assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        struct sock_fprog prog;
                        int fd;

                        reset_crash_signals();
                        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_program_from_hex(hex, &prog) < 0)
                                _exit(10);
                        fd = seccomp_install_with_listener(&prog);
                        if (seccomp_listener_send(sv[1], fd) < 0 || fd < 0)
                                _exit(11);
                        close(fd);
                        (void) syscall(SYS_getppid); /* waits for an answer that never comes */
                        _exit(12);
                }
                close(sv[1]);
                assert_int_equal(seccomp_listener_recv(sv[0], &listener), 0);
                close(sv[0]);
                p = (struct pollfd) { .fd = listener, .events = POLLIN };
                assert_int_equal(poll(&p, 1, 10000), 1);
                if (when == 1)
                        assert_int_equal(seccomp_notify_next(listener, &n), 1);
                assert_int_equal(kill(pid, SIGKILL), 0);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
                if (when == 0)
                        assert_int_equal(seccomp_notify_handle(listener, &d), 0);
                else
                        assert_int_equal(seccomp_notify_deny(listener, &n), 0);
                assert_int_equal(d.n, 0);
                /* no task uses the filter any more */
                p = (struct pollfd) { .fd = listener, .events = POLLIN };
                assert_int_equal(poll(&p, 1, 10000), 1);
                assert_true(p.revents & POLLHUP);
                close(listener);
                seccomp_denials_done(&d);
        }
}

/* ---- names ---- */

/* Which rules keep the exec helper's child from sharing its memory (helper/spawn-child.h): those on a call the
 * child makes once the program is in force, whatever their arguments. */
static void test_catch_child_calls(void **state) {
        static const char *const caught[] = { "execve", "write", "writev", "exit", "exit_group" };
        SyscallRule rules[2] = {
                { .syscall = (char *) "ioctl", .nr = SCMP_SYS(ioctl), .has_arg = true, .arg = 1, .value = 0x5412 },
        };

        assert_false(seccomp_rules_catch_child_calls(NULL, 0));
        assert_false(seccomp_rules_catch_child_calls(baseline, ELEMENTSOF(baseline)));
        assert_false(seccomp_rules_catch_child_calls(rules, 1));
        for (size_t i = 0; i < ELEMENTSOF(caught); i++) {
                int nr = seccomp_syscall_resolve_name(caught[i]);

                assert_true(nr >= 0);
                rules[1] = (SyscallRule) { .syscall = (char *) caught[i], .nr = nr, .has_arg = true, .arg = 0, .value = 7 };
                assert_true(seccomp_rules_catch_child_calls(rules, 2));
                assert_true(seccomp_rules_catch_child_calls(rules + 1, 1));
        }
        /* calls made before the program is in force, or by the command only */
        rules[1] = (SyscallRule) { .syscall = (char *) "close", .nr = SCMP_SYS(close) };
        assert_false(seccomp_rules_catch_child_calls(rules, 2));
        rules[1] = (SyscallRule) { .syscall = (char *) "execveat", .nr = SCMP_SYS(execveat) };
        assert_false(seccomp_rules_catch_child_calls(rules, 2));
}

static void test_denials_format(void **state) {
        SeccompDenials d = {};
        _cleanup_free_ char *empty = NULL, *list = NULL;

        assert_int_equal(seccomp_denials_format(&d, &empty), 0);
        assert_string_equal(empty, "");
        assert_int_equal(seccomp_denials_add(&d, SCMP_SYS(io_uring_setup)), 0);
        assert_int_equal(seccomp_denials_add(&d, 99999), 0);
        assert_int_equal(seccomp_denials_add(&d, SCMP_SYS(io_uring_setup)), 0);
        assert_int_equal(seccomp_denials_add(&d, SCMP_SYS(ioctl)), 0);
        assert_int_equal(seccomp_denials_format(&d, &list), 0);
        assert_string_equal(list, "io_uring_setup:2,99999:1,ioctl:1");
        seccomp_denials_done(&d);
        assert_int_equal(d.n, 0);
}

static void test_syscall_name(void **state) {
        _cleanup_free_ char *a = NULL, *b = NULL;
        char *c = NULL;

        assert_int_equal(seccomp_syscall_name(SCMP_SYS(ioctl), &a), 0);
        assert_string_equal(a, "ioctl");
        assert_int_equal(seccomp_syscall_name(SCMP_SYS(io_uring_setup), &b), 0);
        assert_string_equal(b, "io_uring_setup");
        assert_int_equal(seccomp_syscall_name(-1, &c), -ENOENT);
        assert_int_equal(seccomp_syscall_name(99999, &c), -ENOENT);
        assert_null(c);
}

/* systemd's groups, as this build's systemd lists them: nested ones expanded, names kept, each once */
static void test_syscall_groups(void **state) {
        _cleanup_strv_free_ char **service = NULL, **mixed = NULL, **none = NULL, **bad = (char **) 0x1;

        assert_int_equal(syscall_groups_expand(ARGV("@system-service"), &service), 0);
        /* @system-service holds @basic-io (read) and @process (clone), not @mount or @reboot */
        assert_true(strv_contains(service, "read"));
        assert_true(strv_contains(service, "clone"));
        assert_false(strv_contains(service, "mount"));
        assert_false(strv_contains(service, "reboot"));
        for (size_t i = 0; service[i]; i++) {
                assert_true(service[i][0] != '@');
                for (size_t j = i + 1; service[j]; j++)
                        if (streq(service[i], service[j]))
                                fail_msg("%s listed twice", service[i]);
        }
        assert_int_equal(syscall_groups_expand(ARGV("ptrace", "@default", "ptrace"), &mixed), 0);
        assert_string_equal(mixed[0], "ptrace");
        assert_true(strv_contains(mixed, "execve"));
        assert_int_equal(syscall_groups_expand(((char *[]) { NULL }), &none), 0);
        assert_null(none[0]);
        assert_int_equal(syscall_groups_expand(ARGV("@no-such-group"), &bad), -ENOENT);
        assert_ptr_equal(bad, (char **) 0x1);
        bad = NULL;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_baseline_bites),
                cmocka_unit_test(test_baseline_control),
                cmocka_unit_test(test_unix_dgram_refused),
                cmocka_unit_test(test_unix_dgram_pair_reaches_paths),
                cmocka_unit_test(test_comparisons),
                cmocka_unit_test(test_compile_refused),
                cmocka_unit_test(test_compile_redundant),
                cmocka_unit_test(test_program_from_hex),
                cmocka_unit_test(test_listener_handover_errors),
                cmocka_unit_test(test_notify_target_gone),
                cmocka_unit_test(test_catch_child_calls),
                cmocka_unit_test(test_denials_format),
                cmocka_unit_test(test_syscall_name),
                cmocka_unit_test(test_syscall_groups),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
