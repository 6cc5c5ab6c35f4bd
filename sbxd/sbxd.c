/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxd: the sbx system daemon. See sbxd(8) and docs/design.md. */
#include <signal.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "bus-manager.h"
#include "ceilings.h"
#include "direct.h"
#include "log.h"
#include "manager.h"

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        sigset_t mask;
        int r;

        log_set_prefix("sbxd");
        log_open();

        if (argc > 1) {
                if (streq(argv[1], "--version")) {
                        printf("sbxd %s%s\n", PACKAGE_VERSION, SBX_BUILD_KIND);
                        return 0;
                }
                log_error("This program takes no arguments.");
                return 2;
        }
        if (sd_booted() <= 0) {
                log_error("systemd is not running as PID 1 here; sbxd needs it (see docs/testbed.md).");
                return 1;
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        r = manager_new(&m);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the manager: %m"), 1;
        r = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m"), 1;

        r = manager_start(m);
        if (r >= 0)
                r = bus_manager_install(m);
        if (r < 0)
                return 1;
        /* the run's path without the bus's daemon; without it, clients use the system bus */
        r = direct_server_open(m, SBX_BUS_SOCKET, bus_manager_install_direct, &m->direct);
        if (r < 0)
                log_warning_errno(r, "Failed to listen on %s; clients use the system bus: %m", SBX_BUS_SOCKET);

        (void) sd_notify(0, "READY=1\nSTATUS=Ready.");
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m"), 1;
        if (r > 0) {
                /* the bus connection ended (the D-Bus daemon was restarted): a failure, so that systemd
                 * starts sbxd again (Restart=on-failure), which adopts the runs on the new bus */
                log_error("The connection to the system bus ended; exiting.");
                return 1;
        }
        return 0;
}
