/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The egress compiler: a profile's network section (and the mode a run gets) in, the entries of the
 * run's LPM tries out (bpf/egress/egress-api.h), plus the static address lists for systemd's own
 * IPAddressAllow=/IPAddressDeny=. Pure: no libbpf, no syscalls. sbxd writes the entries to the maps
 * (with the run's cgroup id) and keeps the EgressTable as their mirror, so that the run's resolver can
 * add the addresses of allowed names (egress_table_insert_answer()) and drop them when they expire.
 *
 * Semantics of the tries: the longest matching prefix alone decides, so every entry carries the port
 * ranges of the shorter prefixes (same family, same protocol) that cover it, except across an
 * always-denied range: its entry has no ranges (only its reason), and what lies inside it inherits
 * nothing from outside it. Every mode allows the run's own loopback (127.0.0.0/8, ::1; every port, TCP
 * and UDP): each run has a network namespace of its own. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress-api.h"
#include "egress-address.h"
#include "profile.h"

/* Rule indices of entries that no destination of the profile made (struct egress_port_range.rule,
 * struct egress_value.rule). Destinations are numbered from 0 (NetDestination.rule, less than
 * PROFILE_DESTINATIONS_MAX); an always-denied entry carries its row (egress_denied_row()). */
#define EGRESS_RULE_LOOPBACK 0xffffu /* the run's own loopback */
#define EGRESS_RULE_PUBLIC 0xfffeu   /* mode public: every public address */
#define EGRESS_RULE_HOST 0xfffdu     /* an address of the host itself (egress_table_deny_address()) */

/* A DNS answer allows its address for at least this long, and at most this long, whatever its TTL:
 * a TTL of 0 would expire before the client connects. */
#define EGRESS_TTL_MIN_SEC 2u
#define EGRESS_TTL_MAX_SEC 86400u

/* ---- the table of one run ---- */

/* One entry of the run's tries, as sbxd writes it: cgroup 0 in the key (the loader sets it), the
 * address canonical (host bits beyond the prefix zeroed). */
typedef struct EgressEntry {
        int family;             /* AF_INET: k4, AF_INET6: k6 */
        union {
                struct egress_key4 k4;
                struct egress_key6 k6;
        };
        struct egress_value v;
} EgressEntry;

/* What one destination with a "host" allows for the addresses of its answers. */
typedef struct EgressGrant {
        uint16_t rule;          /* NetDestination.rule */
        bool tcp, udp;
        bool private;           /* answers in private or shared ranges are allowed too */
        struct egress_port_range *ranges; /* expires_ns 0 */
        size_t n_ranges;
} EgressGrant;

/* Every destination naming one host (or one wildcard), in profile order. */
typedef struct EgressHostRule {
        char *name;             /* lower case; a wildcard without its "*.": "example.org" */
        bool wildcard;          /* any name strictly below 'name' */
        EgressGrant *grants;
        size_t n_grants;
} EgressHostRule;

typedef struct EgressTable EgressTable;

/* Compiles the entries of a run of profile p in network mode 'mode': p->network, or NONE (a request
 * narrowed to none). Returns -EINVAL (with a message in *ret_error, may be NULL) for a mode wider than
 * the profile's or a destination the profile parser would refuse, -E2BIG (likewise) when an entry
 * needs more than EGRESS_MAX_PORT_RANGES port ranges after merging, -ENOMEM. */
int egress_compile(const Profile *p, NetworkMode mode, EgressTable **ret, char **ret_error);

EgressTable *egress_table_free(EgressTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(EgressTable *, egress_table_free);

NetworkMode egress_table_mode(const EgressTable *t);
size_t egress_table_size(const EgressTable *t);
/* A copy of entry i (0 <= i < egress_table_size()); -ENOENT past the end. The order is stable while
 * the table does not change; an expiry that removes entries renumbers the ones after them. */
int egress_table_get(const EgressTable *t, size_t i, EgressEntry *ret);

/* Denies an address or prefix ("198.51.100.7/32") to the run whatever the profile allows there: the
 * host's own addresses, which the run's traffic would otherwise reach its services through. Entries
 * inside it lose their ranges (reason EGRESS_REASON_LOOPBACK, rule EGRESS_RULE_HOST), and DNS answers
 * in it are refused. Renumbers the entries: write them all afterwards. -EINVAL (with a message in
 * *ret_error, may be NULL) when not an address. */
int egress_table_deny_address(EgressTable *t, const char *prefix, char **ret_error);

/* The rule allowing a name (case-insensitive; a final dot is ignored): an exact name before any
 * wildcard, the longest wildcard domain before a shorter one. NULL: the name is not allowed (always
 * NULL in modes other than allowlist: mode public resolves every name, mode none none). */
const EgressHostRule *egress_table_match_name(const EgressTable *t, const char *name);

/* One address of a DNS answer (A or AAAA; IPv4 in the first 4 bytes of addr; an IPv4-mapped IPv6
 * address is taken as the IPv4 address, the kernel judges it so) for a name that 'rule' allows.
 *
 * In an always-denied range, unless the range is private or shared and a grant of the rule says
 * "private": refused (DNS rebinding): returns 0, *ret_changed NULL, *ret_n 0, *ret_reason the range's
 * reason. Otherwise the address gets a /32 (/128) entry per protocol of the grants (with the ranges of
 * the entries that cover it merged in) whose ranges expire at now_ns + TTL (clamped to
 * EGRESS_TTL_MIN_SEC..EGRESS_TTL_MAX_SEC); an answer repeating one already there refreshes its ranges.
 * Returns 1, the entries to write in *ret_changed (an array of *ret_n, free() it) and *ret_reason -1.
 * -E2BIG: no room left at the address (EGRESS_MAX_PORT_RANGES, after dropping expired ranges); the
 * table is then unchanged. now_ns: CLOCK_BOOTTIME. */
int egress_table_insert_answer(EgressTable *t, const EgressHostRule *rule, int family, const uint8_t addr[static 16],
                               uint32_t ttl_sec, uint64_t now_ns, EgressEntry **ret_changed, size_t *ret_n,
                               int *ret_reason);

/* Drops the answers' ranges that have expired at now_ns (now_ns >= expires_ns, as the kernel judges).
 * An entry made by answers only is removed when none is left: its key is in *ret_removed (the value
 * is the last one written); entries that remain but changed are in *ret_changed. Both arrays are
 * free()d by the caller (NULL when empty). Returns the number of entries changed or removed. */
int egress_table_expire(EgressTable *t, uint64_t now_ns, EgressEntry **ret_changed, size_t *ret_n_changed,
                        EgressEntry **ret_removed, size_t *ret_n_removed);

/* ---- systemd's address filter (defense in depth) ---- */

/* The static part of the policy as IPAddressAllow=/IPAddressDeny= lists (NULL-terminated, CIDR strings
 * or "any"). Mode none: both NULL (the run's namespace has only lo). Public, and allowlist with host
 * names: deny = every always-denied range, allow = the own loopback (where the run's resolver listens)
 * and the destinations opened with "private". Allowlist with addresses only: deny = "any", allow = the
 * own loopback and every destination. systemd lets an allowed address through whatever the deny list
 * says: a destination that covers a denied range opens it there, the egress tries still deny it. */
int egress_ip_address_lists(const Profile *p, NetworkMode mode, char ***ret_allow, char ***ret_deny);
