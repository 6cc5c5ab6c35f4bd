/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A D-Bus peer-to-peer connection on a local socket, without libsystemd: connected, its other end checked
 * (SO_PEERCRED), through its handshake (AUTH EXTERNAL, file descriptors agreed), then messages sent with
 * their descriptors and read back whole (wire.h). Descriptors that come with a message are closed: the
 * client reads none. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WIRE_HANDSHAKE_TIMEOUT_MSEC 25000

typedef struct WireConn {
        int fd;
        uint8_t *in;           /* what was read and not yet taken as messages */
        size_t in_len, in_cap;
        uint8_t *msg;          /* the message wire_conn_next() gave last */
} WireConn;

#define WIRE_CONN_INIT { .fd = -1 }

void wire_conn_done(WireConn *c);

/* Connects to path, checks that its other end is peer_uid's, and goes through the handshake. 1: connected;
 * 0: not usable (no socket, nobody listening, another owner, closed or refused in the handshake: the
 * caller goes another way, nothing having been sent but the handshake); -errno otherwise. */
int wire_conn_open(const char *path, uid_t peer_uid, WireConn *c);

/* Sends one message (wire_call_build()) with its descriptors. 0 or -errno. */
int wire_conn_send(WireConn *c, const uint8_t *msg, size_t len, const int *fds, unsigned n_fds);

/* Reads what the socket has (it is non-blocking after the handshake). 0: read (or nothing there);
 * -ECONNRESET: the other end closed it; -errno. */
int wire_conn_fill(WireConn *c);

/* The next whole message read, parsed into *ret (its strings point into the connection's buffer, valid until
 * the next call). 1: a message; 0: none whole yet; -EBADMSG: not a message. */
struct WireMessage;
int wire_conn_next(WireConn *c, struct WireMessage *ret);
