/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run record: what sbx keeps about each run, as JSON. Pure (json-c only). It holds no command line,
 * no output, no user name and no uid: the tenant is a keyed hash. */

#include "record-types.h"
#include "record-credentials.h"
#include "record-export.h"
#include "record-image.h"

const char *stop_reason_to_string(StopReason r);
StopReason stop_reason_from_string(const char *s);
/* Maps a systemd service Result= value ("success", "exit-code", "timeout", ...) to a stop reason;
 * an unknown value gives _STOP_REASON_INVALID. */
StopReason stop_reason_from_unit_result(const char *result);

const char *name_verdict_to_string(NameVerdict v);
NameVerdict name_verdict_from_string(const char *s);

/* The enum egress_reason of a record string ("port", "no-policy", ..., "socket": those of
 * egress_reason_to_string()); -EINVAL for anything else. */
int run_record_net_reason_from_string(const char *s);

const char *exec_result_to_string(ExecResult r);
ExecResult exec_result_from_string(const char *s);

RunRecord *run_record_new(void);
RunRecord *run_record_free(RunRecord *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunRecord *, run_record_free);

/* Adds count denied calls of the syscall name (merged with an entry of that name). -EINVAL: not a
 * name; -E2BIG: RECORD_DENIED_MAX distinct names already; -ERANGE: the sum overflows. */
int run_record_add_denied(RunRecord *r, const char *name, uint64_t count);
/* Replaces r's denied calls with the exec helper's list "ioctl:2,io_uring_setup:1" (read up to the first
 * white space or the end). -EBADMSG: not such a list; -E2BIG, -ERANGE: as run_record_add_denied();
 * -ENOMEM. On any error r is unchanged. */
int run_record_parse_denied(RunRecord *r, const char *list);
uint64_t run_record_get_denied(const RunRecord *r, const char *name);

/* Gives r a network section of the mode (or sets the mode of the one it has). -EINVAL: no mode. */
int run_record_net_init(RunRecord *r, NetworkMode mode);
/* Counts one judged call (from an egress ring-buffer event). family AF_INET (addr: the first 4 bytes) or
 * AF_INET6; for reason EGRESS_REASON_SOCKET (never allowed) the socket's family, port its type, and
 * addr is ignored (may be NULL). reason is ignored when allowed. when: CLOCK_REALTIME. name: the name
 * the address came from; NULL looks it up among the allowed names of run_record_net_add_name().
 * Calls with the same destination, protocol, verdict and reason are merged. Returns 1 when the call is
 * in the list, 0 when it was only counted (RECORD_NET_DESTINATIONS_MAX reached). -ENOENT: no network
 * section (run_record_net_init()); -EAFNOSUPPORT: another family; -EINVAL: a bad reason or name;
 * -ENOMEM. */
int run_record_net_add_event(RunRecord *r, int family, const uint8_t addr[16], uint16_t port, uint8_t proto,
                             bool allowed, int reason, usec_t when, const char *name);
/* Counts one lookup of name (case-insensitive, a final dot ignored) with its verdict, and adds the
 * answers allowed to the run (NAME_ALLOWED) and those dropped as rebinding to the name's lists (at most
 * RECORD_NET_NAME_ADDRESSES_MAX each; duplicates once). Each refusal counts in dns_refused. Returns 1
 * when the lookup is in the list, 0 when it was only counted. -ENOENT: no network section; -EINVAL: not
 * a DNS name, a bad verdict, or addresses with a verdict other than NAME_ALLOWED; -EAFNOSUPPORT: an
 * address of another family; -ENOMEM. */
int run_record_net_add_name(RunRecord *r, const char *name, NameVerdict verdict, const NetAddress *addresses,
                            size_t n_addresses, const NetAddress *blocked, size_t n_blocked);
/* Adds one answer of an allowed name as it arrives (blocked: dropped as rebinding) to the name's entry,
 * without counting a lookup (run_record_net_add_name(r, name, NAME_ALLOWED, NULL, 0, NULL, 0) counts
 * it). Returns and fails as run_record_net_add_name(). */
int run_record_net_add_name_address(RunRecord *r, const char *name, const NetAddress *a, bool blocked);
/* The latest allowed name whose answers included the address, or NULL. */
const char *run_record_net_name_of(const RunRecord *r, const NetAddress *a);
/* "203.0.113.10:443/tcp", "[2001:db8::1]:443/udp"; for a socket denial "inet/raw socket, protocol
 * icmp". NULL if it does not fit. */
#define NET_DESTINATION_TEXT_MAX 96
char *net_destination_format(const NetDestinationStat *d, char buf[static NET_DESTINATION_TEXT_MAX]);

/* Everything of the run is gone: finished, unit and cgroup gone, its space gone (if it had one), and its
 * egress map entries removed (if it has a network section). The record's cleanup.completed. */
bool run_record_cleanup_completed(const RunRecord *r);

/* Makes r a sandbox's record. -EINVAL: a name that is not 1-64 characters of [A-Za-z0-9_.-]. */
int run_record_sandbox_init(RunRecord *r, const char *name, usec_t idle_timeout, bool detach);
bool sandbox_name_is_valid(const char *name);
/* Adds an exec (result EXEC_RUNNING) or updates the one of that id. Returns 1 when it is in the list, 0
 * when it was only counted (RECORD_EXECS_MAX). -ENOENT: not a sandbox's record; -EINVAL: a bad id. */
int run_record_sandbox_put_exec(RunRecord *r, const RunExec *e);
RunExec *run_record_sandbox_find_exec(RunRecord *r, const char *id);
/* One exec as the record lists it, on one line (the ExecFinished signal's payload). */
int run_exec_to_json(const RunExec *e, char **ret);

/* Parses what the unit's privileged figures reader (sbx-exec --figures) wrote: "key=value" words
 * ("memory_peak=123 fork_refused=4 ..."), unknown keys ignored. Sets r's memory and tasks peaks and its
 * limit events (known). -EBADMSG: a malformed word or no limit events at all; r is then unchanged. */
int run_record_parse_figures(RunRecord *r, const char *text);
/* e less what its unit had met before the run (a pooled unit's base), never below 0. */
void run_limit_events_subtract(RunLimitEvents *e, const RunLimitEvents *base);

int run_record_to_json(const RunRecord *r, char **ret);
/* Parses and checks a record; on failure ret_error names the key. */
int run_record_from_json(const char *json, RunRecord **ret, char **ret_error);

/* Exit status sbxctl reports for a finished record (see docs/design.md). */
int run_record_exit_status(const RunRecord *r);
