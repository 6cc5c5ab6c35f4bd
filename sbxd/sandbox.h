/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Sandboxes: long-lived runs whose exec helper waits for commands (helper/serve.h). A sandbox is a Run
 * (run.h) with a Sandbox attached: the control channel to its helper, its commands in flight, its
 * idle timer, and the CreateSandbox call until the helper says it is ready. The D-Bus methods are in
 * bus-manager.c's vtable; their bodies are here. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "policy.h"
#include "profile.h"
#include "sandbox-proto.h"
#include "util.h"

typedef struct Manager Manager;
typedef struct Run Run;

typedef struct SandboxExec {
        char id[SBX_OP_ID_LEN + 1];
        char *client;                  /* the Exec caller: gets ExecFinished; its disconnection hangs it up */
        sd_bus_slot *slot_client;
        sd_bus *client_bus;            /* or the caller's connection on sbxd's own socket (direct.h) */
        int ctl;                       /* the sandbox's control channel (borrowed) */
        bool listed;                   /* in the record's list (else only counted: RECORD_EXECS_MAX) */
        struct SandboxExec *next;
} SandboxExec;

typedef struct Sandbox {
        Run *run;
        int ctl;                       /* sbxd's end of the control channel */
        sd_event_source *ctl_source;
        bool ready;                    /* the helper said READY */
        sd_bus_message *pending_create;/* CreateSandbox, answered on READY (or with the failure) */
        usec_t idle_timeout;           /* 0: none */
        sd_event_source *idle_timer;
        SandboxExec *execs;            /* running */
        unsigned n_execs;
        struct LiveExport *live_export;/* its export under way (export.h), or NULL */
        char *profile;                 /* its profile's name, and the environment names it lets an Exec set */
        char **environment_allow;      /* (environment.allow, .deny; command.h), as they were at its start */
        char **environment_deny;
} Sandbox;

/* Takes ctl. The record must already be a sandbox's (run_record_sandbox_init()). */
int sandbox_new(Run *run, int ctl, const Profile *p, usec_t idle_timeout, Sandbox **ret);
Sandbox *sandbox_free(Sandbox *s);

/* The run is over: a CreateSandbox still waiting gets the failure, commands still running are
 * recorded as lost and their callers told. */
void sandbox_run_ended(Sandbox *s);

/* A connection on sbxd's own socket is closed: the commands it started get SIGHUP when it ended by
 * itself (gone), as a bus client's do when it leaves the bus, and nothing is sent on it any more. */
void sandbox_client_bus_gone(Sandbox *s, sd_bus *bus, bool gone);

/* The bodies of the sandbox's methods once the sandbox is known: they read the call from the argument
 * after the sandbox on (the manager's methods name it first; its object's methods do not). */
int sandbox_exec_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error);
int sandbox_signal_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error);
int sandbox_remove_call(Sandbox *s, sd_bus_message *msg, sd_bus_error *error);

/* Sends an EXEC (sandbox-proto.h) on a control channel: the command line and environment entries (in a
 * memfd, command-fd.h), the command's stdin, stdout and stderr, its timeout and output ceiling (0: none),
 * and whether it gets a terminal (tty NULL or off: none). */
int sandbox_send_exec(int ctl, const char *op, char **argv, char **env, const int fds[3], uint64_t timeout,
                      uint64_t output_max, const RunTerminal *tty);

/* A manager method on a sandbox: the sandbox (id or name) first, then what 'body' reads. */
int sandbox_call(sd_bus_message *msg, Manager *m, int (*body)(Sandbox *, sd_bus_message *, sd_bus_error *),
                 sd_bus_error *error);

/* The manager's methods: the sandbox by id or name first */
int sandbox_method_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int sandbox_method_signal_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int sandbox_method_get_object(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int sandbox_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error);
