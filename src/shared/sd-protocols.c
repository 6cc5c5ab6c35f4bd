/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The notification and native journal protocols (sd-protocols.h). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sd-protocols.h"
#include "util.h"

int notify_address(const char *name, struct sockaddr_un *ret, socklen_t *ret_len) {
        size_t n = name ? strlen(name) : 0;

        if (n < 2 || (name[0] != '/' && name[0] != '@') || n >= sizeof(ret->sun_path))
                return -EINVAL;
        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(ret->sun_path, name, n);
        if (name[0] == '@') {
                ret->sun_path[0] = 0; /* abstract: its length is the address's, no NUL after it */
                *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n);
        } else
                *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
        return 0;
}

/* Sends state (and fd, unless negative) to $NOTIFY_SOCKET. */
static int notify_with_fd(const char *state, int fd) {
        const char *name = getenv("NOTIFY_SOCKET");
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (char *) state, .iov_len = strlen(state) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        if (!name)
                return 0;
        r = notify_address(name, &sa, &len);
        if (r < 0)
                return r;
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return negative_errno();
        mh.msg_name = &sa;
        mh.msg_namelen = len;
        if (fd >= 0) {
                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 1;
}

int notify_send(const char *state) {
        return notify_with_fd(state, -EBADF);
}

int notify_sendf(const char *format, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return notify_send(s);
}

int notify_barrier(uint64_t timeout_usec) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        struct pollfd p;
        int fds[2], r;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rfd = fds[0];
        wfd = fds[1];
        r = notify_with_fd("BARRIER=1", wfd);
        if (r <= 0)
                return r;
        wfd = safe_close(wfd);
        /* the manager closes its copy once it has handled everything before: POLLHUP */
        p = (struct pollfd) { .fd = rfd, .events = 0 };
        for (usec_t end = now_monotonic() + timeout_usec;;) {
                usec_t now = now_monotonic();

                if (now >= end)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) MIN((end - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC, (usec_t) INT32_MAX));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r > 0)
                        return 1;
        }
}

static bool journal_key_valid(const char *k, size_t n) {
        if (n == 0 || n > 64 || k[0] == '_' || (k[0] >= '0' && k[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
                        return false;
        return true;
}

int journal_serialize(const struct iovec *fields, size_t n, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, used = 0;

        /* at most: each field, a newline, and 8 bytes of length */
        for (size_t i = 0; i < n; i++) {
                if (fields[i].iov_len > SIZE_MAX / 2 - size - 9)
                        return -E2BIG;
                size += fields[i].iov_len + 9;
        }
        buf = malloc(size ?: 1);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *f = fields[i].iov_base, *eq = memchr(f, '=', fields[i].iov_len);
                size_t k, v;

                if (!eq || !journal_key_valid(f, k = (size_t) (eq - f)))
                        return -EINVAL;
                v = fields[i].iov_len - k - 1;
                if (memchr(eq + 1, '\n', v)) {
                        uint64_t le = htole64((uint64_t) v);

                        memcpy(buf + used, f, k);
                        used += k;
                        buf[used++] = '\n';
                        memcpy(buf + used, &le, sizeof(le));
                        used += sizeof(le);
                        memcpy(buf + used, eq + 1, v);
                        used += v;
                } else {
                        memcpy(buf + used, f, fields[i].iov_len);
                        used += fields[i].iov_len;
                }
                buf[used++] = '\n';
        }
        *ret = TAKE_PTR(buf);
        *ret_size = used;
        return 0;
}

int journal_sendv(const struct iovec *fields, size_t n) {
        static const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET_PATH };
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int s = -EBADF;
        size_t size;
        int r;

        r = journal_serialize(fields, n, &buf, &size);
        if (r < 0)
                return r;
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return negative_errno();
        if (sendto(s, buf, size, MSG_NOSIGNAL, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        return 0;
}
