/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "seccomp-filter.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release);

/* One alternative of a rule: (arg & mask) == value, or every call when always is set. */
static int add_alternative(scmp_filter_ctx ctx, int nr, unsigned arg, uint64_t mask, uint64_t value, bool always) {
        int r;

        if (always)
                r = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, nr, 0);
        else
                r = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, nr, 1,
                                           (struct scmp_arg_cmp) { .arg = arg, .op = SCMP_CMP_MASKED_EQ,
                                                                   .datum_a = mask, .datum_b = value });
        /* the same alternative from another rule */
        return r == -EEXIST ? 0 : r;
}

/* Every comparison becomes a set of masked equalities, OR-ed: exact for both widths, and for 32 bits the
 * upper half of the argument is simply not part of any mask. libseccomp's own 64-bit ordered comparisons
 * are not used, nor its "32-bit" ones (which still require the upper half to be 0).
 *   x <  v: x agrees with v above some bit i where v has 1 and x has 0
 *   x >  v: x agrees with v above some bit i where v has 0 and x has 1
 *   x != v: x differs from v in some bit
 * Returns 0, or 1 if the comparison can never be true. */
static int add_comparison(scmp_filter_ctx ctx, const SyscallRule *rule, bool arg32) {
        unsigned bits = arg32 ? 32 : 64;
        uint64_t all = arg32 ? UINT64_C(0xffffffff) : UINT64_MAX, v = rule->value;
        SyscallCmp cmp = rule->cmp;
        int r;

        /* x <= v is x < v + 1; x >= v is x > v - 1 */
        if (cmp == SYSCALL_CMP_LE) {
                if (v == all)
                        return add_alternative(ctx, rule->nr, 0, 0, 0, true);
                cmp = SYSCALL_CMP_LT;
                v++;
        } else if (cmp == SYSCALL_CMP_GE) {
                if (v == 0)
                        return add_alternative(ctx, rule->nr, 0, 0, 0, true);
                cmp = SYSCALL_CMP_GT;
                v--;
        }

        switch (cmp) {
        case SYSCALL_CMP_EQ:
                return add_alternative(ctx, rule->nr, rule->arg, all, v, false);
        case SYSCALL_CMP_MASKED_EQ:
                if ((v & ~rule->mask) != 0)
                        return 1;
                if ((rule->mask & all) == 0)
                        return add_alternative(ctx, rule->nr, 0, 0, 0, true);
                return add_alternative(ctx, rule->nr, rule->arg, rule->mask & all, v, false);
        case SYSCALL_CMP_NE:
                for (unsigned i = 0; i < bits; i++) {
                        uint64_t b = UINT64_C(1) << i;
                        r = add_alternative(ctx, rule->nr, rule->arg, b, ~v & b, false);
                        if (r < 0)
                                return r;
                }
                return 0;
        case SYSCALL_CMP_LT:
        case SYSCALL_CMP_GT: {
                bool any = false;

                for (unsigned i = 0; i < bits; i++) {
                        uint64_t b = UINT64_C(1) << i, above = all & ~(b - 1) & ~b;
                        bool v_set = (v & b) != 0;

                        if (v_set != (cmp == SYSCALL_CMP_LT))
                                continue;
                        r = add_alternative(ctx, rule->nr, rule->arg, above | b,
                                            (v & above) | (cmp == SYSCALL_CMP_GT ? b : 0), false);
                        if (r < 0)
                                return r;
                        any = true;
                }
                return any ? 0 : 1;
        }
        case SYSCALL_CMP_LE:
        case SYSCALL_CMP_GE:
        case _SYSCALL_CMP_MAX:
        case _SYSCALL_CMP_INVALID:
        default:
                return -EINVAL;
        }
}

static int add_rule(scmp_filter_ctx ctx, const SyscallRule *rule, size_t i, char **ret_error) {
        const char *name = strna(rule->syscall);
        bool arg32;
        int r;

        if (rule->nr < 0)
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: '%s' is not a syscall of this architecture", i, name);
        /* The exec helper's pre-exec child hands the listener over with sendmsg() after the program is
         * in force: a notification there would wait for a supervisor that does not have the listener
         * yet. */
        if (rule->nr == SCMP_SYS(sendmsg))
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: rules on sendmsg are not supported (the exec helper "
                           "needs it to start the command)", i);
        /* seccomp() is always caught whole (see seccomp-filter.h): a rule on it adds nothing. */
        if (rule->nr == SCMP_SYS(seccomp))
                return 0;
        if (!rule->has_arg)
                return add_alternative(ctx, rule->nr, 0, 0, 0, true);
        if (rule->arg > 5)
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: argument %u does not exist (0-5)", i, rule->arg);
        if (rule->cmp < 0 || rule->cmp >= _SYSCALL_CMP_MAX)
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: unknown comparison", i);
        /* The kernel reads ioctl's request as 32 bits: a 64-bit comparison could be dodged with high bits. */
        arg32 = rule->arg32 || (rule->nr == SCMP_SYS(ioctl) && rule->arg == 1);
        if (arg32 && (rule->value > UINT32_MAX || (rule->cmp == SYSCALL_CMP_MASKED_EQ && rule->mask > UINT32_MAX)))
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: %s argument %u is compared as 32 bits, the value "
                           "0x%" PRIx64 " (mask 0x%" PRIx64 ") does not fit", i, name, rule->arg, rule->value,
                           rule->cmp == SYSCALL_CMP_MASKED_EQ ? rule->mask : 0);

        r = add_comparison(ctx, rule, arg32);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: libseccomp cannot add the rule on %s: %s", i, name,
                           strerror(-r));
        if (r > 0)
                return error_setf(ret_error, -EINVAL, "syscall_rules[%zu]: the comparison on %s argument %u can never be true", i,
                           name, rule->arg);
        return 0;
}

static int export_hex(scmp_filter_ctx ctx, char **ret) {
        static const char digits[] = "0123456789abcdef";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_free_ char *hex = NULL;
        struct stat st;
        size_t size, got = 0;
        int r;

        /* A memfd, not a pipe: a program larger than the pipe's buffer would block the export. */
        fd = memfd_create("sbx-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        size = (size_t) st.st_size;
        if (size == 0 || size % 8 != 0) /* whole struct sock_filter entries */
                return -EBADMSG;
        buf = malloc(size);
        hex = malloc(size * 2 + 1);
        if (!buf || !hex)
                return -ENOMEM;
        while (got < size) {
                ssize_t k = pread(fd, buf + got, size - got, (off_t) got);
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EBADMSG;
                got += (size_t) k;
        }
        for (size_t i = 0; i < size; i++) {
                hex[2 * i] = digits[buf[i] >> 4];
                hex[2 * i + 1] = digits[buf[i] & 0xf];
        }
        hex[size * 2] = 0;
        *ret = TAKE_PTR(hex);
        return 0;
}

/* The kernel's SOCK_TYPE_MASK (linux/net.h, not exported): the type without SOCK_CLOEXEC/SOCK_NONBLOCK */
#define SOCKET_TYPE_MASK UINT64_C(0xf)

/* socket() and socketpair() of AF_UNIX datagram sockets fail with EACCES, in the kernel, whatever flags
 * are or-ed into the type. A datagram socket is the only kind that reaches another datagram socket
 * (connect() of a stream or seqpacket socket to one fails with EPROTOTYPE), and it can address any
 * path it may write, even as one end of a connected pair (sendto() with an address): the one such
 * path in a run is systemd's notify socket, bound in for the exec helper's reports. systemd refuses
 * every message there that is not from the unit's main PID, but logs each refusal without a rate limit,
 * so a command could flood PID 1 and the journal. Both arguments are ints to the kernel: only their
 * low 32 bits are compared. */
static int add_unix_dgram_refusal(scmp_filter_ctx ctx) {
        static const int calls[] = { SCMP_SYS(socket), SCMP_SYS(socketpair) };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                r = seccomp_rule_add_exact(
                        ctx, SCMP_ACT_ERRNO(EACCES), calls[i], 2,
                        (struct scmp_arg_cmp) { .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = UINT32_MAX,
                                                .datum_b = AF_UNIX },
                        (struct scmp_arg_cmp) { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = SOCKET_TYPE_MASK,
                                                .datum_b = SOCK_DGRAM });
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        return 0;
}

int seccomp_rules_compile(const SyscallRule *rules, size_t n, char **ret_hex, char **ret_error) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        int r;

        if (!ret_hex || (n > 0 && !rules))
                return -EINVAL;

        /* Tell libseccomp what to assume instead of probing the kernel of the process that compiles: the
         * program is only exported here, the exec helper finds out whether the kernel takes it. */
        r = seccomp_api_set(5);
        if (r < 0)
                return r;

        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
        if (r < 0)
                return r;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return r;

        /* before the profile's rules: where one of those covers the same calls, either refuses them */
        r = add_unix_dgram_refusal(ctx);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = add_rule(ctx, &rules[i], i, ret_error);
                if (r < 0)
                        return r;
        }
        r = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(seccomp), 0);
        if (r < 0 && r != -EEXIST)
                return r;

        return export_hex(ctx, ret_hex);
}

int seccomp_syscall_name(int nr, char **ret) {
        char *name;

        if (nr < 0)
                return -ENOENT;
        name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        if (!name)
                return -ENOENT;
        *ret = name;
        return 0;
}

bool seccomp_rules_catch_child_calls(const SyscallRule *rules, size_t n) {
        static const int child_calls[] = { SCMP_SYS(execve), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(exit),
                                           SCMP_SYS(exit_group) };

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < ELEMENTSOF(child_calls); j++)
                        if (rules[i].nr == child_calls[j])
                                return true;
        return false;
}
