/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Asking polkit without blocking sbxd: the question goes out, the method runs again with the answer (polkit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "polkit.h"
#include "util.h"

#define POLKIT_TIMEOUT_USEC (5 * USEC_PER_SEC)

struct PolkitQuery {
        PolkitRegistry *reg;
        sd_bus_message *call;
        char *action;
        sd_bus_message_handler_t handler;
        void *userdata;
        sd_bus_slot *slot;
        int result; /* -1: asked, no answer yet; 0: no; 1: yes */
        PolkitQuery *next;
};

static PolkitQuery *query_free(PolkitQuery *q) {
        if (!q)
                return NULL;
        if (q->reg)
                for (PolkitQuery **p = &q->reg->queries; *p; p = &(*p)->next)
                        if (*p == q) {
                                *p = q->next;
                                break;
                        }
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->call);
        free(q->action);
        free(q);
        return NULL;
}

static int on_check_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        PolkitQuery *q = userdata;
        int authorized = 0, challenge = 0, r;

        q->slot = sd_bus_slot_unref(q->slot);
        if (sd_bus_message_is_method_error(reply, NULL))
                log_debug("polkit check for %s failed: %s", q->action, sd_bus_message_get_error(reply)->message);
        else {
                r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
                if (r >= 0)
                        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
                if (r < 0) {
                        log_debug("polkit's answer for %s cannot be read: %s", q->action, strerror(-r));
                        authorized = 0;
                }
        }
        q->result = authorized ? 1 : 0;

        /* The method again, from its first argument: this time it finds the answer. */
        r = sd_bus_message_rewind(q->call, true);
        if (r >= 0)
                r = q->handler(q->call, q->userdata, &error);
        if (r < 0 || sd_bus_error_is_set(&error)) {
                if (sd_bus_error_is_set(&error))
                        (void) sd_bus_reply_method_error(q->call, &error);
                else
                        (void) sd_bus_reply_method_errno(q->call, r, NULL);
        }
        query_free(q);
        return 0;
}

int polkit_check_async(PolkitRegistry *reg, sd_bus_message *call, const char *action, uid_t uid,
                       sd_bus_message_handler_t handler, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *q_call = NULL;
        PolkitQuery *q;
        int r;

        if (uid == 0)
                return 1;
        /* polkit knows the caller by its bus name: a call on sbxd's own socket has none (and no method
         * there asks) */
        if (sd_bus_is_server(sd_bus_message_get_bus(call)) > 0)
                return -EACCES;
        for (q = reg->queries; q; q = q->next)
                if (q->call == call && streq(q->action, action)) {
                        if (q->result < 0)
                                return 0; /* called again before the answer: still waiting */
                        return q->result ? 1 : -EACCES;
                }

        r = sd_bus_message_new_method_call(reg->bus, &q_call, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        /* subject: the caller's bus name; flags 0: no interaction */
        r = sd_bus_message_append(q_call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                  sd_bus_message_get_sender(call), action, 0, 0, "");
        if (r < 0)
                return r;
        q = calloc(1, sizeof(PolkitQuery));
        if (!q)
                return -ENOMEM;
        q->reg = reg;
        q->call = sd_bus_message_ref(call);
        q->handler = handler;
        q->userdata = userdata;
        q->result = -1;
        q->next = reg->queries;
        reg->queries = q;
        q->action = strdup(action);
        if (!q->action) {
                query_free(q);
                return -ENOMEM;
        }
        r = sd_bus_call_async(reg->bus, &q->slot, q_call, on_check_reply, q, POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                query_free(q);
                return r;
        }
        return 0;
}

void polkit_registry_done(PolkitRegistry *reg) {
        while (reg->queries)
                query_free(reg->queries);
}
