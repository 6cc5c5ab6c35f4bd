/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The calls sbx-mcp makes to sbxd, asynchronous, and the signals it listens to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "client-error.h"
#include "policy.h"
#include "mcp-bus.h"
#include "util.h"

#define CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)  /* Run and CreateSandbox are answered once the unit started */

static int match(sd_bus *bus, const char *interface, const char *member, sd_bus_message_handler_t cb, void *userdata) {
        bool own = streq(interface, "org.freedesktop.DBus");

        return sd_bus_match_signal_async(bus, NULL, own ? "org.freedesktop.DBus" : NULL,
                                         own ? "/org/freedesktop/DBus" : SBX_BUS_PATH, interface, member, cb, NULL,
                                         userdata);
}

int mcp_bus_open(sd_event *event, const McpBusHandlers *h, void *userdata, sd_bus **ret, char **ret_sentence) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (sd_booted() <= 0) {
                *ret_sentence = strdup(CLIENT_NO_SYSTEMD);
                return *ret_sentence ? -ENOMEDIUM : -ENOMEM;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                if (asprintf(ret_sentence, "the connection to the system bus failed: %s", strerror(-r)) < 0)
                        return -ENOMEM;
                return r;
        }
        r = sd_bus_attach_event(bus, event, 0);
        if (r >= 0)
                r = match(bus, SBX_BUS_INTERFACE, "Exited", h->exited, userdata);
        if (r >= 0)
                r = match(bus, SBX_BUS_INTERFACE, "Finished", h->finished, userdata);
        if (r >= 0)
                r = match(bus, SBX_BUS_INTERFACE, "ExecFinished", h->exec_finished, userdata);
        if (r >= 0)
                r = match(bus, "org.freedesktop.DBus", "NameOwnerChanged", h->owner_changed, userdata);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, h->disconnected, userdata);
        if (r >= 0 && sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) <= 0)
                r = -EPROTONOSUPPORT;
        if (r < 0) {
                if (asprintf(ret_sentence, "cannot set up the bus connection: %s", strerror(-r)) < 0)
                        return -ENOMEM;
                return r;
        }
        *ret = TAKE_PTR(bus);
        return 0;
}

int mcp_bus_reply_sentence(sd_bus_message *reply, char **ret_sentence) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r = sd_bus_message_get_errno(reply);

        if (client_connection_failed(sd_bus_message_get_bus(reply), e))
                return asprintf(ret_sentence, "the connection to the system bus failed: %s",
                                e && e->message ? e->message : strerror(r > 0 ? r : EIO)) < 0 ? -ENOMEM : 0;
        return client_bus_error(e, -r, "", false, ret_sentence) < 0 ? -ENOMEM : 0;
}

static int new_call(sd_bus *bus, const char *method, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(bus, ret, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, method);
}

int mcp_bus_command(sd_bus *bus, const char *sandbox, const ClientRequest *req, char **cmd, char **env,
                    const int stdio[3], sd_bus_message_handler_t cb, void *userdata, sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_call(bus, sandbox ? "Exec" : "Run", &m);
        if (r >= 0 && sandbox)
                r = sd_bus_message_append(m, "s", sandbox);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = client_request_append(m, req);
        if (r >= 0)
                r = client_command_append(m, cmd, env);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append(m, "hhh", stdio[0], stdio[1], stdio[2]);
        if (r >= 0)
                r = sd_bus_call_async(bus, ret_slot, m, cb, userdata, CALL_TIMEOUT_USEC);
        return r;
}

int mcp_bus_create(sd_bus *bus, const ClientRequest *req, sd_bus_message_handler_t cb, void *userdata,
                   sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_call(bus, "CreateSandbox", &m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = client_request_append(m, req);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call_async(bus, ret_slot, m, cb, userdata, CALL_TIMEOUT_USEC);
        return r;
}

int mcp_bus_export(sd_bus *bus, const char *sandbox, const char *path, int dir_fd, sd_bus_message_handler_t cb,
                   void *userdata, sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_call(bus, "Export", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ssh", sandbox, path, dir_fd);
        if (r >= 0)
                r = sd_bus_call_async(bus, ret_slot, m, cb, userdata, (EXPORT_REVIEW_TIMEOUT_SEC + 60) * USEC_PER_SEC);
        return r;
}

int mcp_bus_call(sd_bus *bus, const char *method, const char *arg, sd_bus_message_handler_t cb, void *userdata,
                 sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_call(bus, method, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", arg);
        if (r >= 0)
                r = sd_bus_call_async(bus, ret_slot, m, cb, userdata, 0);
        return r;
}

int mcp_bus_signal_exec(sd_bus *bus, const char *sandbox, const char *exec_id, int sig) {
        return sd_bus_call_method_async(bus, NULL, SBX_BUS_NAME, SBX_BUS_PATH, SBX_BUS_INTERFACE, "SignalExec", NULL,
                                        NULL, "ssi", sandbox, exec_id, (int32_t) sig);
}
