/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A D-Bus connection to a local peer without libsystemd (wire-socket.h): the handshake as the D-Bus
 * specification's "Authentication Protocol" has it, EXTERNAL with our uid, the lines sent at once (as
 * sd-bus does) and the server's two answers read back before any message goes. (Not the first message
 * with them, a round trip fewer: its descriptors would come in the read of the handshake's lines, and an
 * sd-bus server fails a handshake whose read brings descriptors, EIO.) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "wire.h"
#include "wire-socket.h"

void wire_conn_done(WireConn *c) {
        if (c->fd >= 0)
                close(c->fd);
        free(c->in);
        free(c->msg);
        *c = (WireConn) WIRE_CONN_INIT;
}

/* Closes the descriptors a message brought: the client takes none. */
static void close_passed(struct msghdr *mh) {
        for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h))
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                        size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                        for (size_t i = 0; i < n; i++) {
                                int fd;

                                memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
                                close(fd);
                        }
                }
}

/* Reads what is there into c->in. > 0: bytes read; 0: the other end closed; -errno (-EAGAIN). */
static ssize_t read_some(WireConn *c) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * WIRE_FDS_MAX)];
        } control;
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof control };
        ssize_t k;

        if (c->in_cap - c->in_len < 4096) {
                size_t cap = c->in_cap * 2 + 65536;
                uint8_t *b = realloc(c->in, cap);

                if (!b)
                        return -ENOMEM;
                c->in = b;
                c->in_cap = cap;
        }
        iov = (struct iovec) { .iov_base = c->in + c->in_len, .iov_len = c->in_cap - c->in_len };
        do
                k = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        close_passed(&mh);
        c->in_len += (size_t) k;
        return k;
}

/* The handshake's line at the start of c->in (without its "\r\n") copied to line; its bytes taken out.
 * 1: a line; 0: not whole yet. */
static int take_line(WireConn *c, char *line, size_t size) {
        uint8_t *end = c->in ? memmem(c->in, c->in_len, "\r\n", 2) : NULL;
        size_t n;

        if (!end)
                return 0;
        n = (size_t) (end - c->in);
        if (n >= size)
                n = size - 1;
        memcpy(line, c->in, n);
        line[n] = 0;
        c->in_len -= (size_t) (end - c->in) + 2;
        memmove(c->in, end + 2, c->in_len);
        return 1;
}

static int handshake(WireConn *c) {
        char hex[2 * 16 + 1], uid[16], out[128], line[256];
        const char *want[2] = { "OK ", "AGREE_UNIX_FD" };
        int n;

        (void) snprintf(uid, sizeof uid, "%u", (unsigned) getuid());
        for (size_t i = 0; uid[i]; i++)
                (void) snprintf(hex + 2 * i, 3, "%02x", (unsigned char) uid[i]);
        n = snprintf(out, sizeof out, "%cAUTH EXTERNAL %s\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n", 0, hex);
        if (send(c->fd, out, (size_t) n, MSG_NOSIGNAL) != n)
                return 0;
        for (int got = 0; got < 2;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                ssize_t k;

                if (take_line(c, line, sizeof line)) {
                        if (strncmp(line, want[got], strlen(want[got])) != 0)
                                return 0; /* REJECTED, ERROR: not ours to use */
                        got++;
                        continue;
                }
                if (c->in_len > 1024)
                        return 0;
                n = poll(&p, 1, WIRE_HANDSHAKE_TIMEOUT_MSEC);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return 0;
                k = read_some(c);
                if (k <= 0 && k != -EAGAIN)
                        return 0;
        }
        return c->in_len == 0; /* the server says nothing more before our first message */
}

int wire_conn_open(const char *path, uid_t peer_uid, WireConn *c) {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } addr = { .un.sun_family = AF_UNIX };
        struct ucred cred = {};
        socklen_t len = sizeof cred;
        int r;

        if (strlen(path) >= sizeof addr.un.sun_path)
                return -EINVAL;
        strcpy(addr.un.sun_path, path);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return -errno;
        if (connect(c->fd, &addr.sa, sizeof addr.un) < 0) {
                r = errno == ENOENT || errno == ECONNREFUSED || errno == EACCES ? 0 : -errno;
                wire_conn_done(c);
                return r;
        }
        /* the other end must be peer_uid's before anything is sent to it */
        if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof cred ||
            cred.uid != peer_uid || handshake(c) <= 0) {
                wire_conn_done(c);
                return 0;
        }
        if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                wire_conn_done(c);
                return r;
        }
        return 1;
}

int wire_conn_send(WireConn *c, const uint8_t *msg, size_t len, const int *fds, unsigned n_fds) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * WIRE_FDS_MAX)];
        } control = {};
        size_t done = 0;

        if (n_fds > WIRE_FDS_MAX)
                return -E2BIG;
        while (done < len) {
                struct iovec iov = { .iov_base = (uint8_t *) msg + done, .iov_len = len - done };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t k;

                /* the descriptors go with the first byte */
                if (done == 0 && n_fds > 0) {
                        mh.msg_control = &control;
                        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                        CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
                        CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
                        CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                        memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * n_fds);
                }
                k = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN) {
                        struct pollfd p = { .fd = c->fd, .events = POLLOUT };

                        if (poll(&p, 1, -1) < 0 && errno != EINTR)
                                return -errno;
                        continue;
                }
                if (k < 0)
                        return -errno;
                done += (size_t) k;
        }
        return 0;
}

int wire_conn_fill(WireConn *c) {
        ssize_t k = read_some(c);

        if (k == 0)
                return -ECONNRESET;
        if (k == -EAGAIN)
                return 0;
        return k < 0 ? (int) k : 0;
}

int wire_conn_next(WireConn *c, WireMessage *ret) {
        size_t total;
        int r;

        if (c->in_len < 16)
                return 0;
        r = wire_message_size(c->in, &total);
        if (r < 0)
                return r;
        if (c->in_len < total)
                return 0;
        free(c->msg);
        c->msg = malloc(total ?: 1);
        if (!c->msg)
                return -ENOMEM;
        memcpy(c->msg, c->in, total);
        c->in_len -= total;
        memmove(c->in, c->in + total, c->in_len);
        r = wire_message_parse(c->msg, total, ret);
        return r < 0 ? r : 1;
}
