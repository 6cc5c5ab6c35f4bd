/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbxd's network side: the egress programs (egress.h) attached at sbx.slice, each run's entries in their
 * maps, each run's resolver (resolver.h) inside its network namespace, and the telemetry that becomes
 * the record's network section. The policy itself is compiled by the pure core (egress-policy.h);
 * this module applies it and keeps the kernel's maps and the run's mirror of them in step. */

#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "profile.h"
#include "record.h"

typedef struct NetManager NetManager;
typedef struct RunNet RunNet;

int net_manager_new(sd_event *e, sd_bus *bus, NetManager **ret);
NetManager *net_manager_free(NetManager *nm);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetManager *, net_manager_free);

/* Before every run: the programs are attached to sbx.slice as it is now (started, and attached again
 * if the slice was restarted). Fails closed with a one-line reason. */
int net_manager_prepare(NetManager *nm, char **ret_error);
/* Removes the map entries of every run but those whose cgroups (paths) are listed: runs that ended
 * while sbxd was not running. */
int net_manager_gc(NetManager *nm, char **live_cgroups);
/* Inode of the host's network namespace (sbxd's own): a run's must be another one. */
uint64_t net_manager_host_netns(NetManager *nm);

/* A run's network state, compiled before its unit starts: mode is the run's (the profile's or the
 * narrower one it asked for); host_addresses ("ADDR/32", "ADDR/128") are denied on top. The record
 * receives the telemetry; it must outlive the RunNet. */
int run_net_new(NetManager *nm, const Profile *p, NetworkMode mode, char **host_addresses, const char *run_id,
                RunRecord *record, RunNet **ret, char **ret_error);
/* Once the unit's cgroup exists: its resolver in the run's namespace (modes public and allowlist),
 * then its map entries; the run's entry comes last, so a socket of the run is denied until all of its
 * policy is in place. */
int run_net_register(RunNet *rn, const char *cgroup_path, const char *netns_path, char **ret_error);
/* At the end of the run: reads the events still queued, removes every map entry of the run and checks
 * that none is left (the record's network.entries_removed). */
void run_net_finish(RunNet *rn);
/* The run's command has ended: the egress events it caused, waiting in the ring buffer, into its record. */
void run_net_exited(RunNet *rn);
/* run_net_register() put the run's entries in place (and run_net_finish() has not removed them). */
bool run_net_is_registered(const RunNet *rn);
/* The record whose network section rn counts into from now on (a pooled unit's becomes its run's). */
void run_net_set_record(RunNet *rn, RunRecord *record);
RunNet *run_net_free(RunNet *rn);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunNet *, run_net_free);
