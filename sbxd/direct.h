/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbxd's own socket, SBX_BUS_SOCKET: D-Bus peer to peer, for the calls of a run that are on every run's
 * path (Run, Stop; docs/dbus.md, "sbxd's own socket"). The same messages as on the system bus, without its
 * daemon between: no hops through it, and the caller's uid is the one the kernel recorded when it
 * connected (SO_PEERCRED), with no question back to the bus. Anyone may connect, as to the system bus; a
 * run's processes cannot (runs have no /run). A connection is the client of the runs it started: its end
 * ends them, as a bus client's does. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct Manager Manager;
typedef struct DirectServer DirectServer;

/* Connections at once, in all and of one uid: one more is closed before its handshake (its client takes
 * the system bus, whose daemon has limits of its own). */
#define DIRECT_PEERS_MAX 256U
#define DIRECT_PEERS_PER_UID_MAX 64U
/* A connection's handshake (AUTH ... BEGIN) ends within this of its accept(), or the connection is closed:
 * a connection that never finishes one would otherwise hold one of its uid's slots for ever (sbxctl's
 * takes milliseconds, even emulated). */
#define DIRECT_HANDSHAKE_USEC (10 * USEC_PER_SEC)

/* What a new connection gets of the interface (bus_manager_install_direct()). */
typedef int (*DirectInstall)(Manager *m, sd_bus *peer);

/* Binds and listens on path (0666, root's directory); the bus name must be sbxd's already. 0, or -errno
 * (sbxd goes on without: its clients use the system bus). */
int direct_server_open(Manager *m, const char *path, DirectInstall install, DirectServer **ret);
/* Closes every connection (without ending their runs: sbxd is going away) and removes the socket. */
DirectServer *direct_server_free(DirectServer *s);

/* A message came on sbxd's own socket when its connection is a server one: sd_bus_is_server() (the
 * caller's uid, manager_caller_uid(); the run's client, run_set_client_of(); polkit, which is not asked). */
