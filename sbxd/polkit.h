/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Asking polkit without blocking sbxd. A method that needs an authorization calls polkit_check_async();
 * when the answer is not known yet, the question goes out and the method returns without a reply; when
 * the answer comes in, the method is called again with the same (rewound) message and this time
 * polkit_check_async() answers from what polkit said. Every question is asked without interaction: sbxd
 * never waits on a password prompt, and any answer but "authorized" (polkit absent or silent included)
 * is a no. */

#include <systemd/sd-bus.h>

typedef struct PolkitQuery PolkitQuery;

typedef struct PolkitRegistry {
        sd_bus *bus;
        PolkitQuery *queries;
} PolkitRegistry;

/* 1: authorized (uid 0 always is); 0: asked, the handler runs again with the answer (return 1 from the
 * method without replying); -EACCES: not authorized; other negative errno: the question could not be
 * asked. */
int polkit_check_async(PolkitRegistry *reg, sd_bus_message *call, const char *action, uid_t uid,
                       sd_bus_message_handler_t handler, void *userdata);

/* Drops the questions still out (their callers get no reply: sbxd is going away). */
void polkit_registry_done(PolkitRegistry *reg);
