/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What sbxctl's two programs share without libsystemd (the sbxctl front, front.c, and sbxctl-bus with every
 * verb): the options' values, the one-line errors, the verb tables, the machines' names, a run's request
 * from the options, and the lines and the exit status at the end of a run. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "client-error.h"
#include "client-lines.h"
#include "command-line.h"
#include "common.h"
#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "observe.h"
#include "options.h"
#include "policy.h"
#include "record-export.h"
#include "run.h"
#include "terminal.h"
#include "utf8.h"

const char *arg_profile = NULL;
const char *arg_workspace = NULL;
const char *arg_dataset = NULL;
const char *arg_network = NULL;
uint64_t arg_memory = 0, arg_tasks = 0, arg_cpu = 0;
usec_t arg_timeout = 0;
bool arg_json = false;
usec_t arg_until = 0;            /* capture --until: a duration from now; 0: not given */
bool arg_quiet = false;                 /* run: no end-of-run summary lines */
const char *arg_export_to = NULL;       /* export --to=DIR */
const char *arg_export = NULL;   /* run --export=DIR */
char **arg_caches_ro = NULL;     /* --cache-ro=NAME */
bool arg_legend = true;
const char *arg_image = NULL;    /* run, create --image=NAME[@sha256:DIGEST] */
bool arg_all = false;
usec_t arg_idle_timeout = 0;
const char *arg_name = NULL;
bool arg_detach = false;
bool arg_wait_cleanup = false;
int arg_tty = -1;                /* -1: decide (both stdin and stdout terminals), 0: -T, 1: -t */
uint64_t arg_output_max = 0;
char **arg_credentials = NULL;   /* --credential NAME: a stored secret */
char **arg_credential_files = NULL; /* --credential NAME=@FILE: NAME, then FILE */
bool arg_replace = false;        /* secret add --replace */

const char *arg_host = NULL;     /* -H [USER@]HOST[:PORT][/MACHINE]: that machine's sbxd, over ssh */
const char *arg_machine = NULL;  /* -M MACHINE: the sbxd of a local container */
char **arg_argv = NULL;          /* the command line and, for each word, whether it was -H or its value: */
bool *arg_host_word = NULL;      /* run and exec over ssh pass on everything else */

/* One line on stderr, and the exit code that says whose fault it was. */
int complain(int code, const char *fmt, ...) {
        va_list ap;

        fputs("sbxctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return code;
}

/* ---- verbs ------------------------------------------------------------------------------------------ */

const Verb *verb_find(const Verb *verbs, const char *name) {
        for (const Verb *v = verbs; v->name; v++)
                if (streq(v->name, name))
                        return v;
        return NULL;
}

int verb_check_args(const Verb *v, const char *family, int argc, char **argv) {
        const char *sp = family ? " " : "";

        family = family ?: "";
        if ((unsigned) argc < v->min_args || (v->usage && v->max_args != VERB_ANY && (unsigned) argc > v->max_args))
                return refused("%s%s%s: %s", family, sp, v->name, v->usage);
        if (v->max_args != VERB_ANY && (unsigned) argc > v->max_args)
                return refused("%s%s%s: unexpected argument '%s'%s", family, sp, v->name, argv[v->max_args],
                               strempty(v->hint));
        return 0;
}

int verb_dispatch(const Verb *verbs, const char *family, const char *names, const char *name, int argc, char **argv) {
        const Verb *v = verb_find(verbs, name);
        int r;

        if (!v)
                return refused("%s: unknown command '%s' (%s)", family, name, names);
        r = verb_check_args(v, family, argc, argv);
        if (r != 0)
                return r;
        return v->run(argc, argv);
}

/* ---- machines: this one, another over ssh (-H), a local container (-M) -------------------------- */

/* " of host HOST", " of machine MACHINE" or "", for messages about "the system bus" */
const char *bus_owner(void) {
        static char buf[320];

        if (arg_host)
                snprintf(buf, sizeof(buf), " of host %s", arg_host);
        else if (arg_machine)
                snprintf(buf, sizeof(buf), " of machine %s", arg_machine);
        else
                buf[0] = 0;
        return buf;
}

/* A container name as machined has them: what sd_bus_open_system_machine() accepts too */
bool machine_name_ok(const char *s) {
        size_t l = strlen(s);

        return l > 0 && l <= 64 &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == l && s[0] != '.' &&
               s[0] != '-' && strspn(s, "0123456789") != l;
}

/* -H [USER@]HOST[:PORT][/MACHINE], HOST a name or an address, an IPv6 one in brackets: as
 * sd_bus_open_system_remote() reads it. What ssh needs of it: [USER@]HOST (without brackets), PORT and
 * MACHINE (NULL when not given). -EINVAL for anything else, and for what ssh could take for an option. */
int parse_host(const char *s, char **ret_dest, char **ret_port, char **ret_machine) {
        _cleanup_free_ char *dest = NULL, *port = NULL, *machine = NULL;
        const char *at, *h, *end;
        size_t l, user;

        if (isempty(s) || s[0] == '-')
                return -EINVAL;
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c <= ' ' || *c == 0x7f || strchr("'\"\\`$;,=", *c))
                        return -EINVAL;
        at = strchr(s, '@');
        if (at && (at == s || strchr(at + 1, '@')))
                return -EINVAL;
        h = at ? at + 1 : s;
        user = (size_t) (h - s); /* "USER@" */
        if (*h == '[') {
                end = strchr(h, ']');
                if (!end || end == h + 1 || !strchr(":/", end[1]))
                        return -EINVAL;
                l = (size_t) (end - h - 1);
                h++;
                end++;
        } else {
                l = strcspn(h, ":/");
                end = h + l;
        }
        if (l == 0 || l > 253 || h[0] == '-')
                return -EINVAL;
        if (asprintf(&dest, "%.*s%.*s", (int) user, s, (int) l, h) < 0)
                return -ENOMEM;
        if (*end == ':') {
                unsigned long p;

                end++;
                l = strcspn(end, "/");
                if (l == 0 || l > 5 || strspn(end, "0123456789") < l || (p = strtoul(end, NULL, 10)) == 0 ||
                    p > 65535)
                        return -EINVAL;
                port = strndup(end, l);
                if (!port)
                        return -ENOMEM;
                end += l;
        }
        if (*end == '/') {
                if (!machine_name_ok(end + 1))
                        return -EINVAL;
                machine = strdup(end + 1);
                if (!machine)
                        return -ENOMEM;
        } else if (*end)
                return -EINVAL;
        if (ret_dest)
                *ret_dest = TAKE_PTR(dest);
        if (ret_port)
                *ret_port = TAKE_PTR(port);
        if (ret_machine)
                *ret_machine = TAKE_PTR(machine);
        return 0;
}

/* A value for sbxd: in a sealed memfd, which sbxd reads from memory (it takes nothing else). */
int memfd_sealed(const void *data, size_t size, int *ret) {
        _cleanup_close_ int fd = memfd_create("sbx-credential", MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0)
                return -errno;
        if (loop_write(fd, data, size) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

/* ---- the lines at the end of a run ------------------------------------------------------------- */

const char *format_destination(const NetDestinationStat *d, const char *profile, char *buf, size_t l) {
        return client_format_destination(d, profile, buf, l);
}

/* The agent's lines (client-lines.h) on stderr, each after "sbx: " */
static void print_lines(int (*make)(const RunRecord *rec, char ***lines), const RunRecord *rec) {
        _cleanup_strv_free_ char **lines = NULL;

        (void) make(rec, &lines);
        STRV_FOREACH(l, lines)
                fprintf(stderr, "sbx: %s\n", *l);
}


/* At the end of a run that met a limit, on stderr: one line per limit (docs/limits.md), or with --json
 * one JSON object per line. Nothing for a run that ended normally. */
void print_observations(const RunRecord *rec) {
        Observation obs[_LIMIT_EVENT_MAX];
        size_t n;

        if (!arg_json)
                return print_lines(client_observation_lines, rec);
        if (rec->stop_reason == STOP_REFUSED || rec->stop_reason == STOP_START_FAILED)
                return;
        n = run_record_observe(rec, obs);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *line = NULL;
                json_object *o;

                if (!obs[i].shown || observation_format(&obs[i], rec->profile, &line) < 0)
                        continue;
                o = json_object_new_object();
                if (!o)
                        continue;
                (void) json_object_object_add(o, "event", json_object_new_string(limit_event_to_string(obs[i].event)));
                (void) json_object_object_add(o, "limit", json_object_new_string(obs[i].limit));
                (void) json_object_object_add(o, "value", obs[i].value ? json_object_new_uint64(obs[i].value) : NULL);
                (void) json_object_object_add(o, "used", obs[i].used != UINT64_MAX ? json_object_new_uint64(obs[i].used) : NULL);
                (void) json_object_object_add(o, "count", json_object_new_uint64(obs[i].count));
                (void) json_object_object_add(o, "raise_to", obs[i].raise_to ? json_object_new_uint64(obs[i].raise_to) : NULL);
                (void) json_object_object_add(o, "stopped", json_object_new_boolean(obs[i].stopped));
                (void) json_object_object_add(o, "message", json_object_new_string(line));
                fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        }
}

/* At the end of a run of a testbed build that went without some of its ceilings (docs/testbed.md), on
 * stderr, whatever --quiet says: one line naming them. The native test lane's cases, which compare what
 * sbxctl prints, set SBX_TESTBED_QUIET=1 (one case checks the line without it); only a testbed build
 * reads it. */
void print_unenforced(const RunRecord *rec) {
        char list[CEILINGS_LIST_MAX];

        if (!rec->limits.known || rec->limits.unenforced == 0)
                return;
#if SBX_TESTBED_UNENFORCED_LIMITS
        if (getenv("SBX_TESTBED_QUIET"))
                return;
#endif
        (void) ceilings_to_list(rec->limits.unenforced, ", ", list);
        fprintf(stderr, "sbx: ceilings not enforced: %s (a testbed build, on a host without their cgroup controllers)\n",
                list);
}

/* At the end of a run, on stderr: one line per denied destination and per refused name. */
void print_egress_summary(const RunRecord *rec) {
        print_lines(client_egress_lines, rec);
}

static void print_item(const char *what, const ExportItem *i) {
        if (i->entry)
                fprintf(stderr, "sbxctl: export: %s %s (archive entry '%s'): %s\n", what, i->path, i->entry,
                        strna(i->reason));
        else
                fprintf(stderr, "sbxctl: export: %s %s: %s\n", what, i->path, strna(i->reason));
}

/* The lines of one review (a run's, or one export of a live sandbox's): run_id is where held items are
 * approved, missing says what an absent source was. Returns true if the review did not finish. */
bool print_export_lines(const RunExport *e, const char *run_id, const char *missing) {
        _cleanup_free_ char *dest = NULL;

        if (!e->reviewed) {
                fprintf(stderr, "sbxctl: export: %s\n", e->error ?: "the review did not finish");
                return true;
        }
        if (arg_quiet)
                return false;
        for (size_t i = 0; i < e->n_refused; i++)
                print_item("refused", &e->refused[i]);
        for (size_t i = 0; i < e->n_held; i++)
                fprintf(stderr, "sbxctl: export: held %s (%s): sbxctl export approve %s %s\n", e->held[i].path,
                        strna(e->held[i].reason), run_id, e->held[i].id);
        /* the record keeps the directory's name as it is: shown on one line, control characters escaped
         * (n/a when out of memory) */
        if (e->destination)
                (void) line_escape(e->destination, 0, &dest);
        fprintf(stderr, "sbxctl: export: %zu file%s (%" PRIu64 " bytes) into %s%s%s%s%s\n", e->n_exported,
                e->n_exported == 1 ? "" : "s", e->exported_bytes, strna(dest),
                e->source_missing ? " (" : "", e->source_missing ? missing : "", e->source_missing ? ")" : "",
                e->n_refused + e->n_held > 0 ? "; see above for what was not" : "");
        return false;
}

bool print_export_summary(const RunRecord *r) {
        return r->export && print_export_lines(r->export, r->run_id, "the run left no ~/out");
}

/* One word for a POSIX shell (the login shell on the other end of ssh): in single quotes, ' as '\'' */
static void shell_quote(FILE *f, const char *s) {
        fputc('\'', f);
        for (; *s; s++)
                if (*s == '\'')
                        fputs("'\\''", f);
                else
                        fputc(*s, f);
        fputc('\'', f);
}

/* run and exec with -H. Their stdin, stdout and stderr are file descriptors passed in the D-Bus call, and D-Bus
 * over ssh cannot carry file descriptors (systemd-stdio-bridge relays messages, not descriptors). So sbxctl runs
 * itself on HOST with the same arguments but -H, and ssh carries what the descriptors would have: the streams,
 * the terminal, Ctrl-C, the end of the connection (see watch_hangup()) and the exit status. */
static int exec_over_ssh(void) {
        _cleanup_free_ char *dest = NULL, *port = NULL, *machine = NULL, *cmdline = NULL;
        const char *args[16];
        size_t n = 0, size = 0;
        FILE *f;
        int r;

        r = parse_host(arg_host, &dest, &port, &machine);
        if (r == -ENOMEM)
                return failed("out of memory");
        if (r < 0)
                return refused("--host: '%s' is not [USER@]HOST[:PORT][/MACHINE]", arg_host);
        f = open_memstream(&cmdline, &size);
        if (!f)
                return failed("out of memory");
        fputs("sbxctl", f);
        if (machine) {
                fputs(" -M ", f);
                shell_quote(f, machine);
        }
        for (size_t i = 1; arg_argv[i]; i++)
                if (!arg_host_word[i]) {
                        fputc(' ', f);
                        shell_quote(f, arg_argv[i]);
                }
        if (fclose(f) != 0 || !cmdline)
                return failed("out of memory");

        args[n++] = "ssh";
        args[n++] = "-x";
        /* a terminal on the other end only when this end is all terminal: otherwise the three streams stay
         * apart and byte for byte what the command wrote */
        args[n++] = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) ? "-t" : "-T";
        args[n++] = "-o";
        args[n++] = "BatchMode=yes";
        args[n++] = "-o";
        args[n++] = "LogLevel=ERROR"; /* errors, but no "Connection to HOST closed." after each command */
        if (port) {
                args[n++] = "-p";
                args[n++] = port;
        }
        args[n++] = "--";
        args[n++] = dest;
        args[n++] = cmdline;
        args[n] = NULL;
        log_debug("on %s: ssh ... -- %s %s", arg_host, dest, cmdline);
        fflush(stdout);
        execvp("ssh", (char **) args);
        return unreachable("cannot run ssh: %s", strerror(errno));
}

/* run and exec: the command line (the options' environment checked with it); with -H, sbxctl on HOST runs
 * it (exec_over_ssh() returns only if ssh could not be started). 0, or sbxctl's exit status. */
int command_start(const char *verb, const char *usage, char **cmd, char ***ret_env) {
        if (strv_length(cmd) == 0)
                return refused("%s: no command given (usage: %s)", verb, usage);
        if (arg_host)
                return exec_over_ssh();
        return command_prepare(cmd, ret_env);
}

/* ---- a run's request and its end ------------------------------------------------------------------- */

int exec_words(int argc, char **argv, char ***ret_cmd, char ***ret_env) {
        char **cmd;
        int r;

        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return r;
        cmd = argv + optind;
        if (*cmd && streq(*cmd, "--"))
                cmd++;
        r = command_start("exec", "sbxctl exec [OPTIONS] SANDBOX -- CMD [ARGS...]", cmd, ret_env);
        if (r != 0)
                return -r;
        *ret_cmd = cmd;
        return 1;
}

void run_request_init(ClientRequest *req, const char *workspace, const char *dataset, int export_fd, bool sandbox) {
        char *term = getenv("TERM");
        *req = (ClientRequest) {
                .profile = arg_profile,
                .workspace = workspace,
                .dataset = dataset,
                .image = arg_image,
                .network = arg_network,
                .cpu_percent = arg_cpu,
                .memory = arg_memory,
                .tasks = arg_tasks,
                .timeout = arg_timeout,
                /* TERM only for a terminal, and only a name sbxd would accept (else the run goes without it) */
                .term = !sandbox && term && isatty(STDOUT_FILENO) && run_request_term_is_valid(term) ? term : NULL,
                .idle_timeout = sandbox ? arg_idle_timeout : 0,
                .name = sandbox ? arg_name : NULL,
                .detach = sandbox && arg_detach,
                /* the export's outcome comes with the cleanup (the review of ~/out before its space goes) */
                .wait_cleanup = !sandbox && (arg_wait_cleanup || export_fd >= 0),
        };
}

int check_request_utf8(const ClientRequest *req) {
        static const struct {
                const char *what;
                char ***list;
        } lists[] = {
                { "--cache-ro", &arg_caches_ro },
                { "--credential", &arg_credentials },
        };
        const char *bad = client_request_not_utf8(req);

        for (size_t i = 0; !bad && i < ELEMENTSOF(lists); i++)
                STRV_FOREACH(s, *lists[i].list)
                        if (!utf8_valid_dbus(*s, strlen(*s))) {
                                bad = lists[i].what;
                                break;
                        }
        if (!bad)
                return 0;
        return refused("%s: not valid UTF-8 (sbxd takes names and paths in UTF-8 only)", bad);
}

int fd_or_null(int fd, int flags, int *ret_opened) {
        /* A terminal as stdin goes read-only (a description of its own): opened for writing, the
         * command could write to the caller's terminal past the output limit. */
        if (fd == STDIN_FILENO && fd_is_writable_tty(fd)) {
                *ret_opened = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_CLOEXEC);
                if (*ret_opened >= 0)
                        return *ret_opened;
        }
        if (fcntl(fd, F_GETFD) >= 0)
                return fd;
        *ret_opened = open("/dev/null", flags | O_CLOEXEC);
        return *ret_opened;
}

/* --credential NAME=@FILE: FILE must be a regular file sbxctl can read, of 1 byte to 64 KiB. */
int check_credential_files(void) {
        for (char **i = arg_credential_files; i && i[0] && i[1]; i += 2) {
                struct stat st;

                if (stat(i[1], &st) < 0 || access(i[1], R_OK) < 0)
                        return refused("--credential: cannot read '%s': %m", i[1]);
                if (!S_ISREG(st.st_mode))
                        return refused("--credential: '%s' is not a regular file", i[1]);
                if (st.st_size < 1 || st.st_size > (off_t) SECRET_MAX)
                        return refused("--credential: '%s' is empty or larger than %u KiB", i[1], SECRET_MAX / 1024);
        }
        return 0;
}

/* The directory's absolute path without symlinks: sbxd wants nothing else. */
int resolve_dir(const char *what, const char *arg, char **ret) {
        struct stat st;

        /* a directory of the other machine: sbxd there checks it (this machine's file system says nothing) */
        if (arg_host || arg_machine) {
                if (arg[0] != '/')
                        return refused("%s: '%s' is a directory%s: give it as an absolute path there", what, arg,
                                       bus_owner());
                *ret = strdup(arg);
                return *ret ? 0 : failed("out of memory");
        }
        if (stat(arg, &st) < 0) {
                if (errno == ENOENT)
                        return refused("%s: '%s' does not exist", what, arg);
                return refused("%s: '%s': %s", what, arg, strerror(errno));
        }
        if (!S_ISDIR(st.st_mode))
                return refused("%s: '%s' is not a directory", what, arg);
        *ret = realpath(arg, NULL);
        if (!*ret)
                return refused("%s: '%s': %s", what, arg, strerror(errno));
        return 0;
}

int run_outcome(const RunRecord *rec, const char *run_id, int got_signal, bool disconnected, bool daemon_gone) {
        bool export_failed = false;
        int ret;

        if (rec)
                print_unenforced(rec);
        if (rec && !arg_quiet) {
                print_observations(rec);
                print_egress_summary(rec);
        }
        if (rec)
                export_failed = print_export_summary(rec);
        if (disconnected)
                ret = complain(arg_machine ? SBXCTL_EXIT_UNREACHABLE : SBX_EXIT_FAILURE,
                               "the connection to the system bus%s ended during run %s, which ends with it",
                               bus_owner(), run_id);
        else if (daemon_gone)
                ret = failed("sbxd went away during run %s; its outcome is unknown", run_id);
        else if (!rec)
                ret = failed("no valid record for run %s", run_id);
        else if (rec->stop_reason == STOP_REFUSED || rec->stop_reason == STOP_START_FAILED)
                ret = failed("run %s did not start: %s", run_id, strna(rec->error));
        else if (rec->stop_reason == STOP_LOST)
                ret = failed("run %s ended with an outcome sbx does not know: %s", run_id, strna(rec->error));
        else if (rec->stop_reason == STOP_CANCELLED && got_signal > 0)
                ret = 128 + got_signal;
        else
                ret = run_record_exit_status(rec); /* a limit that stopped it has its line above */
        /* a command that succeeded, its output not delivered: not a success (the line is above) */
        if (ret == 0 && export_failed)
                ret = SBX_EXIT_FAILURE;
        return ret;
}

int exec_outcome(const char *json, const char *sandbox, const char *op) {
        _cleanup_free_ char *sentence = NULL;
        json_object *o, *v;
        const char *result;
        int code = -1, sig = 0, ret;

        o = json_tokener_parse(json);
        if (!o || !json_object_object_get_ex(o, "result", &v) || !(result = json_object_get_string(v))) {
                json_object_put(o);
                return failed("sbxd sent an invalid exec result");
        }
        if (json_object_object_get_ex(o, "exit_code", &v) && v)
                code = json_object_get_int(v);
        if (json_object_object_get_ex(o, "exit_signal", &v) && v)
                sig = json_object_get_int(v);
        if (streq(result, "exited"))
                ret = code >= 0 ? code : SBX_EXIT_FAILURE;
        else if (streq(result, "signal"))
                ret = 128 + sig;
        /* timeout, output-limit, busy, lost, not-started: the sentence sbx-mcp gives too */
        else if (client_exec_result_sentence(result, sandbox, op, &sentence) < 0 || !sentence)
                ret = failed("out of memory");
        else
                ret = complain(streq(result, "timeout") ? SBX_EXIT_TIMEOUT :
                               streq(result, "output-limit") ? SBX_EXIT_OUTPUT_LIMIT : SBX_EXIT_FAILURE,
                               "%s", sentence);
        json_object_put(o);
        return ret;
}

/* Signals are handled from the event loop from here on. A shell may have started us with them ignored
 * (a background job): take them back first. */
void take_signals(const int *sigs, size_t n) {
        sigset_t mask;

        sigemptyset(&mask);
        for (size_t i = 0; i < n; i++) {
                (void) signal(sigs[i], SIG_DFL);
                sigaddset(&mask, sigs[i]);
        }
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
}

