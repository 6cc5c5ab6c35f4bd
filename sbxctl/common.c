/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What sbxctl's verbs share: the options' values, the one-line errors, the machine sbxd runs on (this one,
 * -H, -M) and the calls to it, and the lines printed at the end of a run (limits, egress, export). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "client-error.h"
#include "client-lines.h"
#include "common.h"
#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "observe.h"
#include "record-export.h"

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

/* With -H, ssh (started by sd-bus) writes to this file instead of our stderr: when it cannot connect, its
 * last line (or that of systemd-stdio-bridge on the other end) becomes the reason of our one-line error. */
static int ssh_stderr = -EBADF;

static char *ssh_said(void) {
        char buf[4096], *p, *e;
        struct stat st;
        ssize_t n;

        if (ssh_stderr < 0 || fstat(ssh_stderr, &st) < 0 || st.st_size == 0)
                return NULL;
        n = pread(ssh_stderr, buf, sizeof(buf) - 1, MAX(st.st_size - (off_t) sizeof(buf) + 1, (off_t) 0));
        if (n <= 0)
                return NULL;
        for (e = buf + n; e > buf && strchr("\r\n\t ", e[-1]); e--)
                ;
        *e = 0;
        p = strrchr(buf, '\n');
        p = p ? p + 1 : buf;
        for (char *c = p; *c; c++)
                if ((unsigned char) *c < ' ')
                        *c = ' ';
        return *p ? strdup(p) : NULL;
}

static int connect_remote(sd_bus **ret) {
        _cleanup_close_ int saved = -EBADF;
        _cleanup_free_ char *why = NULL;
        int r;

        ssh_stderr = memfd_create("sbxctl-ssh-stderr", MFD_CLOEXEC);
        if (ssh_stderr >= 0)
                saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        if (saved >= 0 && dup2(ssh_stderr, STDERR_FILENO) < 0)
                saved = safe_close(saved);
        /* sd-bus starts "ssh -xT [-p PORT] -- [USER@]HOST systemd-stdio-bridge [--machine=MACHINE]" here */
        r = sd_bus_open_system_remote(ret, arg_host);
        if (saved >= 0)
                (void) dup2(saved, STDERR_FILENO);
        if (r == -EINVAL)
                return refused("--host: '%s' is not [USER@]HOST[:PORT][/MACHINE]", arg_host);
        if (r < 0) {
                why = ssh_said();
                return unreachable("cannot reach the system bus of host %s over ssh: %s", arg_host,
                                   why ?: strerror(-r));
        }
        return 0;
}

int connect_bus(sd_bus **ret) {
        int r;

        if (arg_host)
                return connect_remote(ret);
        if (arg_machine) {
                /* into the container's namespaces, to its system bus socket: a local socket, which passes fds */
                r = sd_bus_open_system_machine(ret, arg_machine);
                if (r == -EINVAL)
                        return refused("--machine: '%s' is not a machine name", arg_machine);
                if (r == -EHOSTDOWN || r == -ENOENT || r == -ENXIO)
                        return unreachable("machine %s is not running (machinectl list shows those that are)",
                                           arg_machine);
                if (r < 0)
                        return unreachable("cannot connect to the system bus of machine %s: %s", arg_machine,
                                           strerror(-r));
                return 0;
        }
        r = sd_bus_open_system(ret);
        if (r < 0)
                return failed("cannot connect to the system bus: %s", strerror(-r));
        return 0;
}

/* Whether a call failed because the connection did: ssh could not connect or log in, the other end has no
 * systemd-stdio-bridge, the connection was lost. */
bool connection_failed(sd_bus *bus, const sd_bus_error *e) {
        return client_connection_failed(bus, e);
}

int connection_failure(int r) {
        _cleanup_free_ char *why = ssh_said();

        if (arg_host)
                return unreachable("cannot reach the system bus of host %s over ssh: %s", arg_host,
                                   why ?: strerror(-r));
        if (arg_machine)
                return unreachable("cannot reach the system bus of machine %s: %s", arg_machine, strerror(-r));
        return failed("the connection to the system bus failed: %s", strerror(-r));
}

/* A signal match for the rest of the connection, without waiting for the bus's answer: the bus handles
 * one connection's messages in order, so it is in place before the call sent after it reaches sbxd, and
 * the first signal of interest cannot be missed. Two round trips fewer for each run and exec. Should the
 * bus refuse it, sd-bus closes the connection (no install callback), and the command ends as on any
 * lost connection. sender: org.freedesktop.DBus for its own signals, else any (sbxd's, checked by the
 * callbacks). */
int match_signal(sd_bus *bus, const char *path, const char *interface, const char *member,
                        sd_bus_message_handler_t callback, void *userdata) {
        const char *sender = streq(interface, "org.freedesktop.DBus") ? "org.freedesktop.DBus" : NULL;

        return sd_bus_match_signal_async(bus, NULL, sender, path, interface, member, callback, NULL, userdata);
}

/* Run and Exec pass the caller's stdin, stdout and stderr as file descriptors. A local socket carries them, to
 * this machine's bus or into a container (-M); a connection that cannot is told so here, not by a call that
 * fails on the way. */
int check_fd_passing(sd_bus *bus) {
        int r = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD);

        if (r < 0)
                return connection_failure(r);
        if (r == 0)
                return failed("the connection to the system bus%s cannot pass file descriptors, and the command's "
                              "stdin, stdout and stderr are passed as such", bus_owner());
        return 0;
}

/* sd_booted() says it of this machine; another one (-H, -M) says it itself (sbxd is not there) */
int check_systemd(void) {
        if (arg_host || arg_machine || sd_booted() > 0)
                return 0;
        return failed("%s", CLIENT_NO_SYSTEMD);
}

int connect_systemd_bus(sd_bus **ret) {
        int r;

        r = check_systemd();
        if (r != 0)
                return r;
        return connect_bus(ret);
}

/* Maps an sbxd error reply (or a failed connection) to our exit codes. */
int bus_failure(sd_bus *bus, const sd_bus_error *e, int r) {
        static const int codes[_CLIENT_FAULT_MAX] = {
                [CLIENT_FAULT_REFUSED] = SBX_EXIT_REFUSED,
                [CLIENT_FAULT_FAILED] = SBX_EXIT_FAILURE,
                [CLIENT_FAULT_NOT_FOUND] = 1,
        };
        _cleanup_free_ char *sentence = NULL;
        int fault;

        if (connection_failed(bus, e))
                return connection_failure(r);
        fault = client_bus_error(e, r, bus_owner(), arg_host || arg_machine, &sentence);
        if (fault < 0)
                return failed("out of memory");
        return complain(codes[fault], "%s", sentence);
}

/* ---- calls to sbxd ------------------------------------------------------------------------------- */

/* Calls a method of sbxd's with the arguments of types (NULL: none), waiting at most usec (0: sd-bus's
 * default); its reply in *ret_reply. An exit status other than 0 when it failed, having said why. */
static int call_daemonv(uint64_t usec, const char *method, sd_bus_message **ret_reply, const char *types, va_list ap) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = connect_systemd_bus(&bus);
        if (r != 0)
                return r;
        r = sd_bus_message_new_method_call(bus, &call, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, method);
        if (r >= 0 && types)
                r = sd_bus_message_appendv(call, types, ap);
        if (r < 0)
                return failed("cannot make the call %s: %s", method, strerror(-r));
        r = sd_bus_call(bus, call, usec, &error, ret_reply);
        if (r < 0)
                return bus_failure(bus, &error, r);
        return 0;
}

int call_daemon_reply(const char *method, sd_bus_message **ret_reply, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = call_daemonv(0, method, ret_reply, types, ap);
        va_end(ap);
        return r;
}

int call_daemon_reply_timeout(uint64_t usec, const char *method, sd_bus_message **ret_reply, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = call_daemonv(usec, method, ret_reply, types, ap);
        va_end(ap);
        return r;
}

int reply_json_array(sd_bus_message *reply, json_object **ret) {
        const char *json;
        json_object *a;

        if (sd_bus_message_read(reply, "s", &json) < 0 || !(a = json_tokener_parse(json)))
                return failed("sbxd sent an invalid reply");
        if (!json_object_is_type(a, json_type_array)) {
                json_object_put(a);
                return failed("sbxd sent an invalid reply");
        }
        if (arg_json) {
                puts(json);
                json_object_put(a);
                a = NULL;
        }
        *ret = a;
        return 0;
}

int call_daemon_each(const char *method, int argc, char **argv) {
        int ret = 0;

        for (int i = 0; i < argc; i++) {
                int r = call_daemon_reply(method, NULL, "s", argv[i]);

                if (r != 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

int call_daemon(const char *method, const char *arg, char **ret_json) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *json;
        int r;

        r = arg ? call_daemon_reply(method, &reply, "s", arg) : call_daemon_reply(method, &reply, NULL);
        if (r != 0)
                return r;
        if (!ret_json)
                return 0;
        r = sd_bus_message_read(reply, "s", &json);
        if (r < 0)
                return failed("sbxd sent an invalid reply");
        *ret_json = strdup(json);
        return *ret_json ? 0 : failed("out of memory");
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

int get_record(const char *id, RunRecord **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *json;
        int r;

        r = call_daemon_reply("Get", &reply, "s", id);
        if (r != 0)
                return r;
        if (sd_bus_message_read(reply, "s", &json) < 0 || run_record_from_json(json, ret, NULL) < 0)
                return failed("sbxd sent an invalid record");
        return 0;
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
