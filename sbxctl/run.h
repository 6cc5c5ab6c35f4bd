/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What run, exec and create share: the request to sbxd, and the wait for a run's (or a sandbox's) end. */

#include <stdbool.h>
#include <sys/signalfd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "client-request.h"
#include "record.h"
#include "terminal.h"

typedef struct RunState {
        sd_bus *bus;
        sd_event *event;
        char *run_id;
        char *daemon;          /* unique name of sbxd, from the Run reply (on sbxd's own socket: its path) */
        RunRecord *record;
        int got_signal;
        bool daemon_gone;
        bool disconnected;     /* the connection itself ended (with -H: ssh) */
        bool wait_cleanup;     /* a run: its answer at Finished (--wait-cleanup, --export), not at Exited */
        unsigned attach_tries;
        bool may_direct;       /* run: sbxd's own socket if it is there (run_state_open()) */
        bool direct;           /* bus is a connection on sbxd's own socket, not the system bus */
        sd_bus *system_bus;    /* the system bus, taken when that connection ended mid-run (sbxd went away) */
} RunState;

/* Ctrl-C, SIGTERM, SIGHUP: Stop() for the run, once there is one. */
int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata);
/* basics.c (no libsystemd: the front shares them): */
/* --credential NAME=@FILE: FILE must be a regular file sbxctl can read, of 1 byte to 64 KiB. */
int check_credential_files(void);
/* The directory's absolute path without symlinks: sbxd wants nothing else. */
int resolve_dir(const char *what, const char *arg, char **ret);
/* run and exec: the command line (the options' environment checked with it, in *ret_env); with -H, sbxctl on
 * HOST runs it (over ssh: this returns only if ssh could not be started). 0, or sbxctl's exit status. */
int command_start(const char *verb, const char *usage, char **cmd, char ***ret_env);
/* exec's words from the sandbox (argv[0]) on: the options after it ("exec SB --timeout 5s -- cmd"), then
 * the command (*ret_cmd, in argv) and its environment (command_start()). 1 to go on, else sbxctl's exit
 * status negated (as parse_argv()). */
int exec_words(int argc, char **argv, char ***ret_cmd, char ***ret_env);
/* The plain keys of a Run (sandbox false) or CreateSandbox request from the options. */
void run_request_init(ClientRequest *req, const char *workspace, const char *dataset, int export_fd, bool sandbox);
/* Every string of the request (req, --cache-ro, --credential) goes as a D-Bus string, which must be UTF-8:
 * 0, or refused()'s exit status naming the first that is not (nothing was sent). */
int check_request_utf8(const ClientRequest *req);
/* What a Run or Exec passes as the command's stdin, stdout or stderr for the caller's fd: fd itself, a
 * read-only description of a terminal that is stdin, or /dev/null (opened into *ret_opened) for one the
 * caller has not got. */
int fd_or_null(int fd, int flags, int *ret_opened);
/* The signals taken from the shell (default action, blocked: read from a signalfd). */
void take_signals(const int *sigs, size_t n);
/* The end of a run: its lines (limits, egress, export) and sbxctl's exit status, from its record (NULL:
 * none came) and how the wait ended. */
int run_outcome(const RunRecord *rec, const char *run_id, int got_signal, bool disconnected, bool daemon_gone);
/* The end of an exec, from ExecFinished's json: the command's exit status (128 + a signal's number), or
 * the sentence of a timeout, an output limit, a lost command and the like, said, and its exit status. */
int exec_outcome(const char *json, const char *sandbox, const char *op);
/* The bus and event loop of a client waiting for a run's (or sandbox's) end; with s->may_direct, sbxd's own
 * socket when it is there (s->direct). 0, or sbxctl's exit status. */
int run_state_open(RunState *s, sd_bus **ret_bus, sd_event **ret_event);
/* A call to sbxd (Run, CreateSandbox, Exec) that returns an id: its reply and the id in it. 0, or sbxctl's
 * exit status. */
int call_for_id(sd_bus *bus, sd_bus_message *call, uint64_t usec, sd_bus_message **ret_reply, const char **ret_id);
/* The id kept, and the unique name of the sbxd that sent the reply (whose signals are the ones to read). */
int follow_reply(sd_bus_message *reply, const char *id, char **ret_id, char **ret_daemon);
/* follow_reply() into s, and a signal that came before the reply passed on (Stop()). 0, or sbxctl's exit
 * status. */
int run_state_follow(RunState *s, sd_bus_message *reply, const char *id);
/* The request's a{sv} (Run, CreateSandbox) from the options (tty: a terminal's entry, or NULL). */
int append_request(sd_bus_message *m, const char *workspace, const char *dataset, int export_fd, bool sandbox,
                   char **cmd, char **env, TermRelay *tty);
