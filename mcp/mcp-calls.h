/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the server (mcp-server.c) and its tool calls (mcp-calls.c) share: the server's state, a call in
 * flight, the sandboxes the server made. Internal to sbx-mcp. */

#include <stdbool.h>
#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "mcp-output.h"
#include "mcp-proto.h"
#include "mcp-tools.h"
#include "record.h"

typedef struct Server Server;
typedef struct Call Call;
typedef struct Sandbox Sandbox;

struct Sandbox {
        Sandbox *next;
        char *id, *name;
};

struct Call {
        Call *next, *prev;
        Server *server;
        json_object *id, *progress_token;
        McpTool tool;
        McpArgs args;
        char *op_id;            /* the run's id, the exec's, or the sandbox's (create, remove) */
        char *sandbox;          /* the sandbox's id: sandbox_exec, the file tools, remove, export */
        int out_fd, err_fd, in_fd;
        sd_event_source *out_src, *err_src, *in_src, *timer_src, *progress_src;
        char *in_data;
        size_t in_size, in_off;
        McpCapture out, err;
        sd_bus_slot *slot;
        RunRecord *record;      /* run: Finished's */
        json_object *exec;      /* the others: ExecFinished's */
        bool ended, cancelled;
        unsigned polls, cancel_step;
        usec_t started;
};

struct Server {
        const McpConfig *cfg;
        sd_event *event;
        sd_bus *bus;            /* NULL until a tool needs it, and again once it is lost */
        char *daemon;           /* the unique name of the sbxd that answered: whose signals count */
        Call *calls;
        Sandbox *sandboxes;
        unsigned removals;      /* RemoveSandbox calls of the shutdown not yet answered */
        char *buf;              /* stdin's bytes not yet a whole line */
        size_t len;
        bool discarding;        /* in a line over the cap: dropped up to its newline */
        McpLogLevel level;      /* _MCP_LOG_INVALID: the client set none (diagnostics to stderr) */
        bool closing;           /* stdin ended: no new calls, the rest stopped */
        bool stdout_gone;
        sd_event_source *stdin_src, *deadline_src;
};

/* ---- mcp-server.c ---- */
/* A message to the client (taken), as one line. */
void server_send(Server *s, json_object *m);
_printf_(3, 4) void server_log(Server *s, McpLogLevel level, const char *fmt, ...);
/* The loop ends once the server is closing and nothing is left in flight. */
void server_check_done(Server *s);

/* ---- mcp-calls.c ---- */
/* tools/call: answered now (bad params, a tool error) or when it is done. */
void call_start(Server *s, json_object *id, json_object *params);
/* notifications/cancelled for the request id */
void call_cancel_id(Server *s, json_object *request_id);
/* stdin ended: every call stopped, every sandbox removed (unless kept) */
void calls_shutdown(Server *s);
void calls_free_all(Server *s);
