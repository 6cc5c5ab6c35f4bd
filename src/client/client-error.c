/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sentences of sbxd's clients for sbxd's error replies and for an exec's abnormal end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-error.h"
#include "util.h"

bool client_connection_failed(sd_bus *bus, const sd_bus_error *e) {
        return sd_bus_is_open(bus) <= 0 ||
               sd_bus_error_has_names(e, "System.Error.ECONNRESET", "System.Error.ENOTCONN", "System.Error.EPIPE",
                                      "System.Error.ESHUTDOWN", "System.Error.ECONNREFUSED",
                                      SD_BUS_ERROR_DISCONNECTED);
}

int client_bus_error(const sd_bus_error *e, int r, const char *where, bool elsewhere, char **ret_sentence) {
        ClientFault fault = CLIENT_FAULT_FAILED;
        char *s;
        int n;

        if (sd_bus_error_has_names(e, "org.sbx.Error.InvalidRequest", "org.sbx.Error.NoSuchProfile",
                                   "org.sbx.Error.AccessDenied", "org.sbx.Error.Exists", "org.sbx.Error.NoSuchImage",
                                   "org.sbx.Error.NoTerminal"))
                fault = CLIENT_FAULT_REFUSED;
        else if (sd_bus_error_has_names(e, "org.sbx.Error.NoSuchRun", "org.sbx.Error.NoSuchSandbox",
                                        "org.sbx.Error.NoSuchSecret", "org.sbx.Error.NoSuchItem",
                                        "org.sbx.Error.NoSuchCache"))
                fault = CLIENT_FAULT_NOT_FOUND;
        /* a broken profile or a policy sbx cannot enforce here (BadProfile, CannotEnforce, CannotCapture) and
         * anything else: nothing ran, and not the caller's fault */
        if (sd_bus_error_has_names(e, "org.freedesktop.DBus.Error.ServiceUnknown",
                                   "org.freedesktop.DBus.Error.NameHasNoOwner"))
                n = asprintf(&s, "sbxd is not available on the system bus%s (%s); is sbx installed%s?", where,
                             e->message, elsewhere ? " there" : "");
        else
                n = asprintf(&s, "%s", e && e->message ? e->message : strerror(r < 0 ? -r : EIO));
        if (n < 0)
                return -ENOMEM;
        *ret_sentence = s;
        return fault;
}

int client_exec_result_sentence(const char *result, const char *sandbox, const char *exec_id, char **ret_sentence) {
        int n = 0;

        *ret_sentence = NULL;
        if (streq(result, "exited") || streq(result, "signal"))
                return 0;
        if (streq(result, "timeout"))
                n = asprintf(ret_sentence, "exec %s reached its time limit", exec_id);
        else if (streq(result, "output-limit"))
                n = asprintf(ret_sentence, "exec %s was stopped at its output limit", exec_id);
        else if (streq(result, "busy"))
                n = asprintf(ret_sentence, "sandbox %s runs too many commands already", sandbox);
        else if (streq(result, "lost"))
                n = asprintf(ret_sentence, "sandbox %s ended before the command did", sandbox);
        else
                n = asprintf(ret_sentence, "the command could not be started in sandbox %s", sandbox);
        return n < 0 ? -ENOMEM : 0;
}
