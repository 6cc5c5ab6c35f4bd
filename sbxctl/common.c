/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What sbxctl's verbs share through sd-bus: the machine's system bus (this one, -H, -M), the calls to sbxd
 * and their errors (the rest they share with the front is basics.c). */
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