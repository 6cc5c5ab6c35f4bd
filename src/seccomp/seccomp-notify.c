/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "seccomp-filter.h"
#include "seccomp-notify.h"

int seccomp_program_from_hex(const char *hex, struct sock_fprog *ret) {
        size_t len = hex ? strlen(hex) : 0, size = len / 2;
        _cleanup_free_ uint8_t *buf = NULL;

        if (len == 0 || len % 2 != 0 || size % sizeof(struct sock_filter) != 0 ||
            size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -EINVAL;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < size; i++) {
                int hi = hex_digit_value(hex[2 * i]), lo = hex_digit_value(hex[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                buf[i] = (uint8_t) (hi << 4 | lo);
        }
        *ret = (struct sock_fprog) {
                .len = (unsigned short) (size / sizeof(struct sock_filter)),
                .filter = (struct sock_filter *) TAKE_PTR(buf),
        };
        return 0;
}

void seccomp_program_done(struct sock_fprog *prog) {
        prog->filter = mfree(prog->filter);
        prog->len = 0;
}

int seccomp_install_with_listener(const struct sock_fprog *prog) {
        long fd;

        /* The kernel sets O_CLOEXEC on the listener. */
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
        if (fd < 0)
                return negative_errno();
        return (int) fd;
}

int seccomp_listener_send(int sock, int listener_or_error) {
        int32_t payload = listener_or_error >= 0 ? 0 : listener_or_error;
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = &payload, .iov_len = sizeof(payload) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (listener_or_error >= 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &listener_or_error, sizeof(int));
        }
        for (;;) {
                ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (k >= 0)
                        return k == (ssize_t) sizeof(payload) ? 0 : -EIO;
                if (errno != EINTR)
                        return negative_errno();
        }
}

int seccomp_listener_recv(int sock, int *ret_listener) {
        int32_t payload = 0;
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 4)];
        } control = {};
        struct iovec iov = { .iov_base = &payload, .iov_len = sizeof(payload) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof(control) };
        int fd = -EBADF;
        ssize_t k;

        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                                int f;
                                memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (fd < 0)
                                        fd = f;
                                else
                                        safe_close(f);
                        }
        if (k == 0) {
                safe_close(fd);
                return -EPIPE;
        }
        if (k != (ssize_t) sizeof(payload) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                safe_close(fd);
                return -EBADMSG;
        }
        if (payload < 0) {
                safe_close(fd);
                return payload;
        }
        if (fd < 0)
                return -EBADMSG;
        *ret_listener = fd;
        return 0;
}

void seccomp_denials_done(SeccompDenials *d) {
        d->entries = mfree(d->entries);
        d->n = 0;
}

int seccomp_denials_add(SeccompDenials *d, int nr) {
        SeccompDenial *e;

        for (size_t i = 0; i < d->n; i++)
                if (d->entries[i].nr == nr) {
                        d->entries[i].count++;
                        return 0;
                }
        e = reallocarray(d->entries, d->n + 1, sizeof(SeccompDenial));
        if (!e)
                return -ENOMEM;
        d->entries = e;
        d->entries[d->n++] = (SeccompDenial) { .nr = nr, .count = 1 };
        return 0;
}

uint64_t seccomp_denials_get(const SeccompDenials *d, int nr) {
        for (size_t i = 0; i < d->n; i++)
                if (d->entries[i].nr == nr)
                        return d->entries[i].count;
        return 0;
}

int seccomp_denials_format(const SeccompDenials *d, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++) {
                _cleanup_free_ char *name = NULL;

                if (seccomp_syscall_name(d->entries[i].nr, &name) >= 0)
                        fprintf(f, "%s%s:%" PRIu64, i > 0 ? "," : "", name, d->entries[i].count);
                else
                        fprintf(f, "%s%d:%" PRIu64, i > 0 ? "," : "", d->entries[i].nr, d->entries[i].count);
        }
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int seccomp_notify_next(int listener, struct seccomp_notif *ret) {
        /* The kernel wants it zeroed. */
        *ret = (struct seccomp_notif) {};
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, ret) < 0) {
                if (errno == ENOENT || errno == EINTR)
                        return 0;
                return negative_errno();
        }
        return 1;
}

int seccomp_notify_deny(int listener, const struct seccomp_notif *n) {
        struct seccomp_notif_resp resp = {
                .id = n->id,
                .error = -EPERM,
        };

        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0) {
                if (errno == ENOENT)
                        return 0;
                return negative_errno();
        }
        return 1;
}

int seccomp_notify_handle(int listener, SeccompDenials *d) {
        struct seccomp_notif n;
        int r;

        r = seccomp_notify_next(listener, &n);
        if (r <= 0)
                return r;
        r = seccomp_notify_deny(listener, &n);
        if (r < 0)
                return r;
        r = seccomp_denials_add(d, n.data.nr);
        return r < 0 ? r : 1;
}
