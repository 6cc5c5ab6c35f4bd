/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* Two of the service manager's socket protocols, spoken without libsystemd: the readiness and status
 * notifications (sd_notify(3): datagrams to $NOTIFY_SOCKET) and the journal's native protocol
 * (systemd-journald.service(8): one datagram of fields to /run/systemd/journal/socket). Both are stable
 * interfaces systemd documents for programs that do not link it. The programs that need nothing else of
 * libsystemd (sbx-exec, started several times for every run; the generator; the exporter) start without
 * it and its chain of libraries. */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "macro.h"

#define JOURNAL_SOCKET_PATH "/run/systemd/journal/socket"

/* The address $NOTIFY_SOCKET names: a path ("/...") or an abstract name ("@..."). -EINVAL for anything
 * else (a vsock address, an empty or too long one). */
int notify_address(const char *name, struct sockaddr_un *ret, socklen_t *ret_len);

/* sd_notify(0, state): > 0 sent, 0 when $NOTIFY_SOCKET is not set, a negative errno on failure. */
int notify_send(const char *state);
int notify_sendf(const char *format, ...) _printf_(1, 2);

/* sd_notify_barrier(0, timeout): sends BARRIER=1 with the write end of a pipe and waits until the
 * service manager has closed it, i.e. has handled every notification sent before. 1 when it has, 0
 * when $NOTIFY_SOCKET is not set, -ETIMEDOUT, or another negative errno. */
int notify_barrier(uint64_t timeout_usec);

/* The datagram for the journal's native protocol from fields "KEY=value": a value with a newline in it
 * goes as KEY, newline, its length (64 bits, little endian), the value, newline; any other as the field
 * and a newline. A field without "=", or with an empty or invalid key (A-Z, 0-9, "_", not "_" first),
 * is -EINVAL. */
int journal_serialize(const struct iovec *fields, size_t n, char **ret, size_t *ret_size);

/* sd_journal_sendv(): 0, or a negative errno (no journal, a message too large for one datagram). */
int journal_sendv(const struct iovec *fields, size_t n);
