/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sentences of sbxd's clients for sbxd's error replies and for an exec's abnormal end (pure: the
 * sd-bus side is client-bus.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-error.h"
#include "util.h"

static bool name_in(const char *name, const char *const *names) {
        for (; name && *names; names++)
                if (streq(name, *names))
                        return true;
        return false;
}

int client_error_sentence(const char *name, const char *message, int r, const char *where, bool elsewhere,
                          char **ret_sentence) {
        static const char *const refused[] = {
                "org.sbx.Error.InvalidRequest", "org.sbx.Error.NoSuchProfile", "org.sbx.Error.AccessDenied",
                "org.sbx.Error.Exists", "org.sbx.Error.NoSuchImage", "org.sbx.Error.NoTerminal", NULL,
        };
        static const char *const not_found[] = {
                "org.sbx.Error.NoSuchRun", "org.sbx.Error.NoSuchSandbox", "org.sbx.Error.NoSuchSecret",
                "org.sbx.Error.NoSuchItem", "org.sbx.Error.NoSuchCache", NULL,
        };
        static const char *const no_sbxd[] = {
                "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner", NULL,
        };
        ClientFault fault = CLIENT_FAULT_FAILED;
        char *s;
        int n;

        if (name_in(name, refused))
                fault = CLIENT_FAULT_REFUSED;
        else if (name_in(name, not_found))
                fault = CLIENT_FAULT_NOT_FOUND;
        /* a broken profile or a policy sbx cannot enforce here (BadProfile, CannotEnforce, CannotCapture) and
         * anything else: nothing ran, and not the caller's fault */
        if (name_in(name, no_sbxd))
                n = asprintf(&s, "sbxd is not available on the system bus%s (%s); is sbx installed%s?", where,
                             message, elsewhere ? " there" : "");
        else
                n = asprintf(&s, "%s", message ?: strerror(r < 0 ? -r : EIO));
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
