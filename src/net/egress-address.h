/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Addresses as the egress rules see them: the ranges no run may reach (or only with "private": true),
 * address prefixes from and to text, and the names of the reasons bpf/egress gives a denied packet. The
 * profile parser checks destinations with it, the egress compiler (egress-policy.h) builds on it, and
 * the record names reasons with it. Pure: no libbpf, no syscalls. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress-api.h"
#include "macro.h"
#include "util.h"

/* ---- addresses ---- */

/* "192.0.2.0/24", "2001:db8::1" (no prefix: the whole address). Host bits beyond the prefix are
 * zeroed in *ret_addr (IPv4: the first 4 bytes, the rest 0). -EINVAL when not an address. */
int egress_prefix_from_string(const char *s, int *ret_family, uint8_t ret_addr[static 16], unsigned *ret_prefixlen);

/* One always-denied range. */
typedef struct EgressDeniedRow {
        int family;             /* AF_INET or AF_INET6 */
        uint8_t addr[16];       /* IPv4: the first 4 bytes */
        unsigned prefixlen;
        int reason;             /* enum egress_reason */
        const char *name;       /* "link-local", "private", ...; IPv6 forms of IPv4 rows: "NAT64", "6to4", ... */
        int embedded_reason;    /* reason EGRESS_REASON_EMBEDDED: the IPv4 row's reason; otherwise -1 */
} EgressDeniedRow;

/* The rows, numbered from 0 (the number is struct egress_value.rule of their entries). -ENOENT past
 * the last one. */
int egress_denied_row(size_t i, EgressDeniedRow *ret);

typedef enum EgressClass {
        EGRESS_CLASS_PUBLIC,    /* in no always-denied range */
        EGRESS_CLASS_PRIVATE,   /* in private or shared ranges only: "private": true may open it */
        EGRESS_CLASS_DENIED,    /* in a range no profile can open (loopback, link-local, metadata, ...) */
        _EGRESS_CLASS_MAX,
        _EGRESS_CLASS_INVALID = -EINVAL,
} EgressClass;

/* Which always-denied ranges the prefix lies in (wholly: a wider prefix that only covers a denied
 * range is PUBLIC, the range stays denied inside it). *ret_row (may be NULL): the deciding row, the
 * most specific one of the class returned; untouched for PUBLIC. */
EgressClass egress_classify(int family, const uint8_t addr[static 16], unsigned prefixlen, EgressDeniedRow *ret_row);

/* "port", "no-policy", ..., "socket"; NULL for anything else. */
const char *egress_reason_to_string(int reason);
/* For messages: "private range", "link-local (metadata) range", ... NULL for anything else. */
const char *egress_reason_to_phrase(int reason);

/* "10.0.0.5:22/tcp", "[2001:db8::1]:443/udp" (other protocols by number: "/47") into buf. addr: IPv4
 * in the first 4 bytes. -EAFNOSUPPORT, -ENOBUFS (size < EGRESS_DESTINATION_STRING_MAX always fits). */
#define EGRESS_DESTINATION_STRING_MAX 64
int egress_format_destination(int family, const uint8_t addr[static 16], uint16_t port, uint8_t proto, char *buf,
                              size_t size);

/* 32 for AF_INET, 128 for AF_INET6. */
size_t egress_family_bits(int family);
/* Whether addr/plen (plen >= prefixlen) lies in prefix/prefixlen. */
bool egress_prefix_contains(const uint8_t prefix[], unsigned prefixlen, const uint8_t addr[]);
/* "ADDRESS/PREFIXLEN" */
int egress_prefix_to_string(int family, const uint8_t addr[], unsigned prefixlen, char **ret);
