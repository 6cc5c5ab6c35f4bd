/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Addresses as the egress rules see them (egress-address.h): the always-denied ranges, address prefixes
 * from and to text, and the names of the reasons a packet is denied. Pure: no libbpf, no syscalls. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "egress-address.h"

/* ---- the always-denied ranges ---- */

/* The documentation ranges 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32 are NOT
 * here on purpose: they are never routed, so the tests use them as stand-ins for public addresses. */
typedef struct DeniedBase {
        int family;
        uint8_t addr[16];
        unsigned prefixlen;
        uint8_t reason;
        const char *name;
} DeniedBase;

#define V4(a, b, c, d) { a, b, c, d }
static const DeniedBase denied_base[] = {
        { AF_INET, V4(0, 0, 0, 0), 8, EGRESS_REASON_UNSPECIFIED, "unspecified" },
        { AF_INET, V4(10, 0, 0, 0), 8, EGRESS_REASON_PRIVATE, "private" },
        { AF_INET, V4(100, 64, 0, 0), 10, EGRESS_REASON_SHARED, "shared" },
        /* the run's own loopback is allowed by entries of its own (every mode); this row keeps the
         * embedded forms below, and the address lists for systemd, complete */
        { AF_INET, V4(127, 0, 0, 0), 8, EGRESS_REASON_LOOPBACK, "loopback" },
        { AF_INET, V4(169, 254, 0, 0), 16, EGRESS_REASON_LINK_LOCAL, "link-local" },
        { AF_INET, V4(172, 16, 0, 0), 12, EGRESS_REASON_PRIVATE, "private" },
        { AF_INET, V4(192, 0, 0, 0), 24, EGRESS_REASON_RESERVED, "IETF protocol assignments" },
        { AF_INET, V4(192, 168, 0, 0), 16, EGRESS_REASON_PRIVATE, "private" },
        { AF_INET, V4(198, 18, 0, 0), 15, EGRESS_REASON_RESERVED, "benchmarking" },
        { AF_INET, V4(224, 0, 0, 0), 4, EGRESS_REASON_MULTICAST, "multicast" },
        { AF_INET, V4(240, 0, 0, 0), 4, EGRESS_REASON_RESERVED, "reserved" },
        { AF_INET, V4(255, 255, 255, 255), 32, EGRESS_REASON_BROADCAST, "broadcast" },

        { AF_INET6, {}, 128, EGRESS_REASON_UNSPECIFIED, "unspecified" },
        { AF_INET6, { [15] = 1 }, 128, EGRESS_REASON_LOOPBACK, "loopback" },
        { AF_INET6, { 0xfe, 0x80 }, 10, EGRESS_REASON_LINK_LOCAL, "link-local" },
        { AF_INET6, { 0xfc }, 7, EGRESS_REASON_PRIVATE, "unique local" },
        /* AWS's IPv6 metadata service: inside fc00::/7, yet never to be opened with "private" */
        { AF_INET6, { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 }, 128, EGRESS_REASON_LINK_LOCAL, "metadata" },
        { AF_INET6, { 0xfe, 0xc0 }, 10, EGRESS_REASON_RESERVED, "site-local" },
        { AF_INET6, { 0xff }, 8, EGRESS_REASON_MULTICAST, "multicast" },
        { AF_INET6, { 0x01, 0x00 }, 64, EGRESS_REASON_RESERVED, "discard-only" },
        /* NAT64 local-use (RFC 8215): what it maps to is the operator's choice, so all of it */
        { AF_INET6, { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, EGRESS_REASON_EMBEDDED, "NAT64 local-use" },
};
#undef V4

/* The IPv6 forms of every IPv4 row (IPv4-mapped ::ffff:a.b.c.d needs none: the kernel judges it with
 * the IPv4 trie). */
static const struct {
        const char *name;
        uint8_t prefix[16];
        unsigned offset; /* byte where the IPv4 address starts = bits of the prefix / 8 */
} embedded_forms[] = {
        { "IPv4-compatible", {}, 12 },                           /* ::a.b.c.d */
        { "NAT64", { 0x00, 0x64, 0xff, 0x9b }, 12 },             /* 64:ff9b::a.b.c.d */
        { "6to4", { 0x20, 0x02 }, 2 },                           /* 2002:AABB:CCDD:: */
};

#define N_BASE ELEMENTSOF(denied_base)
#define N_V4_ROWS 12 /* the IPv4 rows come first in denied_base */
#define N_ROWS (N_BASE + N_V4_ROWS * ELEMENTSOF(embedded_forms))

int egress_denied_row(size_t i, EgressDeniedRow *ret) {
        const DeniedBase *b;

        if (!ret)
                return -EINVAL;
        if (i < N_BASE) {
                b = &denied_base[i];
                *ret = (EgressDeniedRow) {
                        .family = b->family,
                        .prefixlen = b->prefixlen,
                        .reason = b->reason,
                        .name = b->name,
                        .embedded_reason = -1,
                };
                memcpy(ret->addr, b->addr, 16);
                return 0;
        }
        if (i >= N_ROWS)
                return -ENOENT;
        i -= N_BASE;
        b = &denied_base[i / ELEMENTSOF(embedded_forms)];
        {
                size_t f = i % ELEMENTSOF(embedded_forms);
                EgressDeniedRow r = {
                        .family = AF_INET6,
                        .prefixlen = embedded_forms[f].offset * 8 + b->prefixlen,
                        .reason = EGRESS_REASON_EMBEDDED,
                        .name = embedded_forms[f].name,
                        .embedded_reason = b->reason,
                };

                memcpy(r.addr, embedded_forms[f].prefix, 16);
                memcpy(r.addr + embedded_forms[f].offset, b->addr, 4);
                *ret = r;
        }
        return 0;
}

size_t egress_family_bits(int family) {
        return family == AF_INET ? 32 : 128;
}

bool egress_prefix_contains(const uint8_t prefix[], unsigned prefixlen, const uint8_t addr[]) {
        unsigned whole = prefixlen / 8, rest = prefixlen % 8;

        if (memcmp(prefix, addr, whole) != 0)
                return false;
        if (rest == 0)
                return true;
        return ((prefix[whole] ^ addr[whole]) & (uint8_t) (0xff << (8 - rest))) == 0;
}

static void prefix_mask(uint8_t addr[], unsigned prefixlen, int family) {
        for (unsigned bit = prefixlen; bit < egress_family_bits(family); bit++)
                addr[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
        if (family == AF_INET)
                memset(addr + 4, 0, 12);
}

static bool reason_is_openable(int reason) {
        return reason == EGRESS_REASON_PRIVATE || reason == EGRESS_REASON_SHARED;
}

EgressClass egress_classify(int family, const uint8_t addr[static 16], unsigned prefixlen, EgressDeniedRow *ret_row) {
        EgressDeniedRow best_denied = {}, best_private = {}, row;
        bool denied = false, private = false;

        if ((family != AF_INET && family != AF_INET6) || prefixlen > egress_family_bits(family))
                return _EGRESS_CLASS_INVALID;
        for (size_t i = 0; egress_denied_row(i, &row) >= 0; i++) {
                if (row.family != family || row.prefixlen > prefixlen || !egress_prefix_contains(row.addr, row.prefixlen, addr))
                        continue;
                if (!reason_is_openable(row.reason)) {
                        if (!denied || row.prefixlen > best_denied.prefixlen)
                                best_denied = row;
                        denied = true;
                } else {
                        if (!private || row.prefixlen > best_private.prefixlen)
                                best_private = row;
                        private = true;
                }
        }
        if (denied) {
                if (ret_row)
                        *ret_row = best_denied;
                return EGRESS_CLASS_DENIED;
        }
        if (private) {
                if (ret_row)
                        *ret_row = best_private;
                return EGRESS_CLASS_PRIVATE;
        }
        return EGRESS_CLASS_PUBLIC;
}

int egress_prefix_from_string(const char *s, int *ret_family, uint8_t ret_addr[static 16], unsigned *ret_prefixlen) {
        const char *slash;
        char a[INET6_ADDRSTRLEN];
        uint8_t buf[16] = {};
        unsigned plen;
        size_t n;
        int family;

        if (!s || !ret_family || !ret_prefixlen)
                return -EINVAL;
        slash = strchr(s, '/');
        n = slash ? (size_t) (slash - s) : strlen(s);
        if (n == 0 || n >= sizeof(a))
                return -EINVAL;
        memcpy(a, s, n);
        a[n] = 0;
        if (inet_pton(AF_INET, a, buf) == 1)
                family = AF_INET;
        else if (inet_pton(AF_INET6, a, buf) == 1)
                family = AF_INET6;
        else
                return -EINVAL;
        plen = (unsigned) egress_family_bits(family);
        if (slash) {
                const char *d = slash + 1;
                size_t k = strspn(d, "0123456789");

                /* digits only, no sign, no leading zero */
                if (k == 0 || k > 3 || d[k] != 0 || (k > 1 && d[0] == '0'))
                        return -EINVAL;
                plen = (unsigned) strtoul(d, NULL, 10);
                if (plen > egress_family_bits(family))
                        return -EINVAL;
        }
        prefix_mask(buf, plen, family);
        *ret_family = family;
        memcpy(ret_addr, buf, 16);
        *ret_prefixlen = plen;
        return 0;
}

int egress_prefix_to_string(int family, const uint8_t addr[], unsigned prefixlen, char **ret) {
        char a[INET6_ADDRSTRLEN];

        if (!inet_ntop(family, addr, a, sizeof(a)))
                return -EINVAL;
        return asprintf(ret, "%s/%u", a, prefixlen) < 0 ? -ENOMEM : 0;
}

/* ---- names ---- */

static const char *const reason_table[_EGRESS_REASON_MAX] = {
        [EGRESS_REASON_PORT] = "port",
        [EGRESS_REASON_NO_POLICY] = "no-policy",
        [EGRESS_REASON_NOT_ALLOWED] = "not-allowed",
        [EGRESS_REASON_EXPIRED] = "expired",
        [EGRESS_REASON_LOOPBACK] = "loopback",
        [EGRESS_REASON_LINK_LOCAL] = "link-local",
        [EGRESS_REASON_PRIVATE] = "private",
        [EGRESS_REASON_SHARED] = "shared",
        [EGRESS_REASON_MULTICAST] = "multicast",
        [EGRESS_REASON_BROADCAST] = "broadcast",
        [EGRESS_REASON_UNSPECIFIED] = "unspecified",
        [EGRESS_REASON_RESERVED] = "reserved",
        [EGRESS_REASON_EMBEDDED] = "embedded-ipv4",
        [EGRESS_REASON_SOCKET] = "socket",
};

static const char *const reason_phrase_table[_EGRESS_REASON_MAX] = {
        [EGRESS_REASON_PORT] = "port or protocol not allowed",
        [EGRESS_REASON_NO_POLICY] = "no policy for the run",
        [EGRESS_REASON_NOT_ALLOWED] = "destination not allowed",
        [EGRESS_REASON_EXPIRED] = "DNS answer expired",
        [EGRESS_REASON_LOOPBACK] = "loopback range",
        [EGRESS_REASON_LINK_LOCAL] = "link-local (metadata) range",
        [EGRESS_REASON_PRIVATE] = "private range",
        [EGRESS_REASON_SHARED] = "shared (carrier-grade NAT) range",
        [EGRESS_REASON_MULTICAST] = "multicast range",
        [EGRESS_REASON_BROADCAST] = "broadcast address",
        [EGRESS_REASON_UNSPECIFIED] = "unspecified address range",
        [EGRESS_REASON_RESERVED] = "reserved range",
        [EGRESS_REASON_EMBEDDED] = "IPv6 form of a denied IPv4 range",
        [EGRESS_REASON_SOCKET] = "socket type other than TCP and UDP",
};

DEFINE_NAME_TABLE_TO_STRING(egress_reason, int, reason_table, _EGRESS_REASON_MAX);

const char *egress_reason_to_phrase(int reason) {
        return name_table_to_string(reason_phrase_table, _EGRESS_REASON_MAX, reason);
}

int egress_format_destination(int family, const uint8_t addr[static 16], uint16_t port, uint8_t proto, char *buf,
                              size_t size) {
        char a[INET6_ADDRSTRLEN], p[8];
        int n;

        if (!addr || !buf)
                return -EINVAL;
        if (family != AF_INET && family != AF_INET6)
                return -EAFNOSUPPORT;
        if (!inet_ntop(family, addr, a, sizeof(a)))
                return -EINVAL;
        if (proto == IPPROTO_TCP)
                strcpy(p, "tcp");
        else if (proto == IPPROTO_UDP)
                strcpy(p, "udp");
        else
                (void) snprintf(p, sizeof(p), "%u", proto);
        n = snprintf(buf, size, family == AF_INET6 ? "[%s]:%u/%s" : "%s:%u/%s", a, port, p);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}
