/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What sbxd's clients that use sd-bus (sbxctl's verbs, sbx-mcp) share: the request's keys and command line
 * appended to a message, and an error reply of sbxd's told from a lost connection. */
#include <string.h>

#include "client-error.h"
#include "client-request.h"
#include "macro.h"

bool client_connection_failed(sd_bus *bus, const sd_bus_error *e) {
        return sd_bus_is_open(bus) <= 0 ||
               sd_bus_error_has_names(e, "System.Error.ECONNRESET", "System.Error.ENOTCONN", "System.Error.EPIPE",
                                      "System.Error.ESHUTDOWN", "System.Error.ECONNREFUSED",
                                      SD_BUS_ERROR_DISCONNECTED);
}

int client_bus_error(const sd_bus_error *e, int r, const char *where, bool elsewhere, char **ret_sentence) {
        return client_error_sentence(e ? e->name : NULL, e ? e->message : NULL, r, where, elsewhere, ret_sentence);
}

static int put_key(void *userdata, const char *key, char type, const void *value) {
        sd_bus_message *m = userdata;
        char t[2] = { type, 0 };
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', t);
        if (r >= 0)
                r = type == 'b' ? sd_bus_message_append(m, "b", (int) *(const bool *) value) :
                                  sd_bus_message_append_basic(m, type, value);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int client_request_append(sd_bus_message *m, const ClientRequest *req) {
        return client_request_walk(req, put_key, m);
}

static int append_byte_strings(sd_bus_message *m, const char *key, char **l) {
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "aay");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "ay");
        STRV_FOREACH(s, l)
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 'y', *s, strlen(*s));
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

int client_command_append(sd_bus_message *m, char **cmd, char **env) {
        int r;

        r = append_byte_strings(m, "argv_bytes", cmd);
        if (r >= 0 && env && env[0])
                r = append_byte_strings(m, "environment", env);
        return r;
}
