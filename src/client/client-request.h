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

/* Into an open a{sv}: the keys of req that are set. 0 or -errno. */
int client_request_append(sd_bus_message *m, const ClientRequest *req);
/* Into an open a{sv}: "argv_bytes" (cmd) and, if any, "environment" (env), as byte arrays. 0 or -errno. */
int client_command_append(sd_bus_message *m, char **cmd, char **env);
