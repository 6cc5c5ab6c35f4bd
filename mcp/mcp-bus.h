/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbx-mcp's calls to sbxd (docs/dbus.md), each asynchronous on the server's event loop: the reply goes to
 * a callback, the ends (Exited, Finished, ExecFinished) to the handlers given when the connection was made. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "client-request.h"

typedef struct McpBusHandlers {
        sd_bus_message_handler_t exited;         /* Exited(s id, s record_json): the command's end */
        sd_bus_message_handler_t finished;       /* Finished(s id, s record_json) */
        sd_bus_message_handler_t exec_finished;  /* ExecFinished(s sandbox, s exec_id, s exec_json) */
        sd_bus_message_handler_t owner_changed;  /* NameOwnerChanged of the bus */
        sd_bus_message_handler_t disconnected;   /* sd-bus's own Disconnected */
} McpBusHandlers;

/* The system bus on the event loop with the handlers' matches. 0, or -errno with the sentence sbxctl says
 * (no systemd, no bus) in *ret_sentence. */
int mcp_bus_open(sd_event *event, const McpBusHandlers *h, void *userdata, sd_bus **ret, char **ret_sentence);
/* The sentence for a failed reply (an error of sbxd's, or of the connection). 0 or -ENOMEM. */
int mcp_bus_reply_sentence(sd_bus_message *reply, char **ret_sentence);

/* Run(request, argv, stdin, stdout, stderr), or with a sandbox Exec(sandbox, options, ...) (only the timeout
 * of req is an Exec option). stdio: the three descriptors (duplicated into the message). */
int mcp_bus_command(sd_bus *bus, const char *sandbox, const ClientRequest *req, char **cmd, char **env,
                    const int stdio[3], sd_bus_message_handler_t cb, void *userdata, sd_bus_slot **ret_slot);
/* CreateSandbox(request) */
int mcp_bus_create(sd_bus *bus, const ClientRequest *req, sd_bus_message_handler_t cb, void *userdata,
                   sd_bus_slot **ret_slot);
/* Export(sandbox, path, directory) */
int mcp_bus_export(sd_bus *bus, const char *sandbox, const char *path, int dir_fd, sd_bus_message_handler_t cb,
                   void *userdata, sd_bus_slot **ret_slot);
/* A method of one string (Get, Stop, RemoveSandbox); cb NULL: no answer wanted. */
int mcp_bus_call(sd_bus *bus, const char *method, const char *arg, sd_bus_message_handler_t cb, void *userdata,
                 sd_bus_slot **ret_slot);
/* SignalExec(sandbox, exec_id, sig), no answer wanted */
int mcp_bus_signal_exec(sd_bus *bus, const char *sandbox, const char *exec_id, int sig);
