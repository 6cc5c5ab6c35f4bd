/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sentences of sbxd's clients for what went wrong: an error reply of sbxd's, a lost connection, a
 * command of a sandbox that did not end by itself. The same words whoever prints or returns them. */

#include <errno.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef enum ClientFault {
        CLIENT_FAULT_REFUSED,    /* the request: nothing started (sbxctl's exit status 125) */
        CLIENT_FAULT_FAILED,     /* sbx could not do it (123) */
        CLIENT_FAULT_NOT_FOUND,  /* no such run, sandbox, item (1) */
        CLIENT_FAULT_CONNECTION, /* the bus connection failed or ended */
        _CLIENT_FAULT_MAX,
        _CLIENT_FAULT_INVALID = -EINVAL,
} ClientFault;

/* The sentence for an error reply of sbxd's, from its name and message (or for a failed call: r, when
 * message is NULL), in *ret_sentence; where and elsewhere as below. The fault's kind, or -ENOMEM. */
int client_error_sentence(const char *name, const char *message, int r, const char *where, bool elsewhere,
                          char **ret_sentence);

/* client-bus.c: */
/* Whether the call failed because the connection did (not because of what sbxd answered). */
bool client_connection_failed(sd_bus *bus, const sd_bus_error *e);
/* The sentence for an error reply of sbxd's (or a failed call: r), in *ret_sentence; where names the system
 * bus (" of host HOST", "" for this machine's), elsewhere whether it is another machine's. Returns the
 * fault's kind, or -ENOMEM. A connection failure is the caller's to describe (client_connection_failed()). */
int client_bus_error(const sd_bus_error *e, int r, const char *where, bool elsewhere, char **ret_sentence);
/* The sentence for the end of a command that did not end by itself (an exec's result other than exited and
 * signal: timeout, output-limit, busy, lost, not-started) in *ret_sentence (NULL for exited and signal).
 * 0 or -ENOMEM. */
int client_exec_result_sentence(const char *result, const char *sandbox, const char *exec_id, char **ret_sentence);
/* What a client says when this machine has no systemd as PID 1. */
#define CLIENT_NO_SYSTEMD                                                                                    \
        "systemd is not running as PID 1 on this machine, and sbx runs every sandbox as a systemd unit; use the " \
        "testbed (testbed/vm.sh, see docs/testbed.md)"
