/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a client of sbxd sends in a Run or CreateSandbox request (docs/dbus.md) and in an Exec's options:
 * the plain keys and the command line as bytes. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "util.h"

typedef struct ClientRequest {
        const char *profile, *workspace, *dataset, *image, *network, *term, *name;  /* NULL: not sent */
        uint64_t memory, tasks, cpu_percent;      /* 0: not sent */
        usec_t timeout, idle_timeout;             /* 0: not sent */
        bool detach;
        bool wait_cleanup;
} ClientRequest;

/* Each key of req that is set, in the table's order: put(userdata, key, type, value) with type 's' (value is
 * the string), 't' (a uint64_t *) or 'b' (a bool *, true). Stops at put's first error. 0 or -errno. */
typedef int (*ClientRequestPut)(void *userdata, const char *key, char type, const void *value);
int client_request_walk(const ClientRequest *req, ClientRequestPut put, void *userdata);
/* The first key of req whose string is not valid UTF-8, which a D-Bus string must be; NULL: none. */
const char *client_request_not_utf8(const ClientRequest *req);

/* Into an open a{sv} (client-bus.c): the keys of req that are set. 0 or -errno. */
int client_request_append(sd_bus_message *m, const ClientRequest *req);
/* Into an open a{sv}: "argv_bytes" (cmd) and, if any, "environment" (env), as byte arrays. 0 or -errno. */
int client_command_append(sd_bus_message *m, char **cmd, char **env);
