/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What sbxctl's verbs share: the options' values, the one-line errors with their exit codes, the machine
 * sbxd runs on and the calls to it, and the lines printed at the end of a run. Includes no verb. */

#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "exit-codes.h"
#include "macro.h"
#include "record.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define SECRET_MAX (64U * 1024U)        /* bytes of a secret's value (sbxd's SBX_SECRET_MAX) */

/* With -H or -M: the machine could not be reached, or its connection was lost. ssh's own exit status for
 * its failures, so that run and exec over ssh (where it is ssh's) and the other commands agree. */
#define SBXCTL_EXIT_UNREACHABLE 255

/* ---- the options (set by options.c) ---- */
extern const char *arg_profile;
extern const char *arg_workspace;
extern const char *arg_dataset;
extern const char *arg_network;
extern uint64_t arg_memory, arg_tasks, arg_cpu;
extern usec_t arg_timeout;
extern bool arg_json;
extern usec_t arg_until;                /* capture --until: a duration from now; 0: not given */
extern bool arg_quiet;                  /* run: no end-of-run summary lines */
extern const char *arg_export_to;       /* export --to=DIR */
extern const char *arg_export;          /* run --export=DIR */
extern char **arg_caches_ro;            /* --cache-ro=NAME */
extern bool arg_legend;
extern const char *arg_image;           /* run, create --image=NAME[@sha256:DIGEST] */
extern bool arg_all;
extern usec_t arg_idle_timeout;
extern const char *arg_name;
extern bool arg_detach;
extern bool arg_wait_cleanup;
extern int arg_tty;                     /* run, exec: -1 a terminal if stdin and stdout are, 1 -t, 0 -T */
extern uint64_t arg_output_max;
extern char **arg_credentials;          /* --credential NAME: a stored secret */
extern char **arg_credential_files;     /* --credential NAME=@FILE: NAME, then FILE */
extern bool arg_replace;                /* secret add --replace */
extern const char *arg_host;            /* -H [USER@]HOST[:PORT][/MACHINE]: that machine's sbxd, over ssh */
extern const char *arg_machine;         /* -M MACHINE: the sbxd of a local container */
extern char **arg_argv;                 /* the command line and, for each word, whether it was -H or its value: */
extern bool *arg_host_word;             /* run and exec over ssh pass on everything else */

/* ---- verbs: one table of them (sbxctl.c), and of a verb's subcommands ---- */
#define VERB_ANY UINT_MAX

typedef enum VerbFlags {
        VERB_COMMAND = 1 << 0,  /* its arguments end in a command line: a leading "--" is the verb's to read */
} VerbFlags;

typedef struct Verb {
        const char *name;
        unsigned min_args, max_args;    /* the words after it; VERB_ANY: no bound */
        int (*run)(int argc, char **argv);      /* the words after it: 0 or sbxctl's exit status */
        VerbFlags flags;
        const char *usage;      /* what is expected, said when the words are too few (or too many, if set) */
        const char *hint;       /* after "unexpected argument 'WORD'" */
} Verb;

/* The verb called name in a table that ends with an empty entry, or NULL. */
const Verb *verb_find(const Verb *verbs, const char *name);
/* Whether argc words are within v's bounds: 0, or the exit status (the error printed, family first if
 * given: "secret add: ..."). */
int verb_check_args(const Verb *v, const char *family, int argc, char **argv);
/* A family's subcommand (secret add, cache rm, ...): name looked up in verbs (names lists them, for the
 * error when it is not there), the words after it checked and given to it. */
int verb_dispatch(const Verb *verbs, const char *family, const char *names, const char *name, int argc, char **argv);

/* ---- errors ---- */
/* One line on stderr ("sbxctl: ..."), and the exit code given back. */
_printf_(2, 3) int complain(int code, const char *fmt, ...);
#define refused(...) complain(SBX_EXIT_REFUSED, __VA_ARGS__)
#define failed(...) complain(SBX_EXIT_FAILURE, __VA_ARGS__)
#define unreachable(...) complain(SBXCTL_EXIT_UNREACHABLE, __VA_ARGS__)

/* ---- machines: this one, another over ssh (-H), a local container (-M) ---- */
/* " of host HOST", " of machine MACHINE" or "", for messages about "the system bus" */
const char *bus_owner(void);
bool machine_name_ok(const char *s);
int parse_host(const char *s, char **ret_dest, char **ret_port, char **ret_machine);
/* The system bus of the machine (-H, -M, or this one): 0, or sbxctl's exit status (the error printed). */
int connect_bus(sd_bus **ret);
bool connection_failed(sd_bus *bus, const sd_bus_error *e);
int connection_failure(int r);
int match_signal(sd_bus *bus, const char *path, const char *interface, const char *member,
                 sd_bus_message_handler_t callback, void *userdata);
int check_fd_passing(sd_bus *bus);
int check_systemd(void);
/* check_systemd(), then connect_bus(). */
int connect_systemd_bus(sd_bus **ret);
/* Maps an sbxd error reply (or a failed connection) to our exit codes. */
int bus_failure(sd_bus *bus, const sd_bus_error *e, int r);

/* ---- calls to sbxd ---- */
/* A method of sbxd's: 0, or sbxctl's exit status (the error printed). */
int call_daemon_reply(const char *method, sd_bus_message **ret_reply, const char *types, ...);
/* The same with a timeout of its own (a call that may take long: an image import). */
int call_daemon_reply_timeout(uint64_t usec, const char *method, sd_bus_message **ret_reply, const char *types, ...);
/* A method with one string argument (or none: NULL) and, if ret_json, a string reply in *ret_json. */
int call_daemon(const char *method, const char *arg, char **ret_json);
/* A reply of one JSON array (a list method's): in *ret; with --json printed instead, and *ret NULL. 0, or
 * sbxctl's exit status. */
int reply_json_array(sd_bus_message *reply, json_object **ret);
/* A method with one string argument called with each of argv in turn: 0, or the first failure's exit
 * status (the others said too). */
int call_daemon_each(const char *method, int argc, char **argv);
/* A run's record from sbxd (Get). */
int get_record(const char *id, RunRecord **ret);
/* A value for sbxd in a sealed memfd: 0 or -errno. */
int memfd_sealed(const void *data, size_t size, int *ret);

/* ---- the lines at the end of a run ---- */
const char *format_destination(const NetDestinationStat *d, const char *profile, char *buf, size_t l);
void print_observations(const RunRecord *rec);
void print_unenforced(const RunRecord *rec);
void print_egress_summary(const RunRecord *rec);
/* The lines of one export review: run_id is where held items are approved, missing says what an absent
 * source was. Returns true if the review did not finish. */
bool print_export_lines(const RunExport *e, const char *run_id, const char *missing);
/* The end-of-run lines of a run's export: one per refused and held item, and what was delivered.
 * Returns true if the review did not finish. */
bool print_export_summary(const RunRecord *r);
