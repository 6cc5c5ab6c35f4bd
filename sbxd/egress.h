/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "egress/egress-api.h"
#include "macro.h"

/* The egress BPF programs (bpf/egress/), attached once at sbx.slice by pinned BPF links, and their maps.
 * All functions return 0 (or a count) on success and a negative errno on failure; the ones taking
 * ret_error also hand back a one-line reason (to be freed) on failure. Nothing here logs. */
typedef struct Egress Egress;

/* Attaches (or, when EGRESS_PIN_DIR holds pins attached to the slice's current cgroup, adopts) the
 * programs at slice_cgroup_dir (e.g. "/sys/fs/cgroup/sbx.slice", which must exist). -EOPNOTSUPP when
 * the kernel lacks a needed hook or feature, or bpffs is not mounted. */
int egress_open(const char *slice_cgroup_dir, Egress **ret, char **ret_error);
/* The same with another pin directory (tests and benchmarks); pin_dir must lie on a bpffs. */
int egress_open_at(const char *pin_dir, const char *slice_cgroup_dir, Egress **ret, char **ret_error);

/* Closes the descriptors; the pins (and so the attachment and the maps' contents) stay. */
Egress *egress_free(Egress *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(Egress *, egress_free);
#define _cleanup_egress_free_ _cleanup_(egress_freep)

/* Unpins everything: the programs detach once the last descriptor is closed (tests, benchmarks). */
int egress_unpin(Egress *e);

/* Every program still attached, through its pinned link, to the slice's current cgroup; -ESTALE
 * otherwise (slice stopped and started again, links unpinned or detached). Call before every run. */
int egress_verify(Egress *e, char **ret_error);

/* The slice's cgroup id the programs are attached to. */
uint64_t egress_slice_cgroup(const Egress *e);

int egress_run_set(Egress *e, uint64_t cgroup, uint32_t flags);
int egress_rule_put4(Egress *e, const struct egress_key4 *k, const struct egress_value *v);
int egress_rule_put6(Egress *e, const struct egress_key6 *k, const struct egress_value *v);
int egress_rule_del4(Egress *e, const struct egress_key4 *k);
int egress_rule_del6(Egress *e, const struct egress_key6 *k);

/* Deletes the run's entry (from then on it is denied everything) and every rule of the run. */
int egress_run_remove(Egress *e, uint64_t cgroup);
/* Removes the entries of every run whose cgroup is not in keep (runs that ended while no sbxd was
 * there to remove them); *ret_removed: how many runs. */
int egress_gc(Egress *e, const uint64_t *keep, size_t n_keep, size_t *ret_removed);
/* Entries left for the run: its runs entry plus its rules in both tries. */
int egress_run_count(Egress *e, uint64_t cgroup, size_t *ret_entries);

/* The ring buffer of struct egress_event: an fd to poll for input, and a call that hands every
 * pending event to cb (a negative return from cb stops and is returned). Returns the number handled. */
int egress_events_fd(Egress *e);
int egress_events_consume(Egress *e, int (*cb)(const struct egress_event *ev, void *userdata), void *userdata);

/* The counters of enum egress_stat, summed over CPUs. */
int egress_stats(Egress *e, uint64_t ret[_EGRESS_STAT_MAX]);
