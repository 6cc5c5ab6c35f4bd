/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Builds DNS packets for the DNS tests: names through dn_comp() (compressed against earlier ones), the
 * rest as plain big-endian fields. Include after <cmocka.h> and before macro.h: the MIN/MAX of
 * <sys/param.h> (from <arpa/nameser.h>) are dropped for macro.h's. */

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <resolv.h>
#include <stdint.h>
#include <string.h>
#undef MIN
#undef MAX

typedef struct DnsBuilder {
        uint8_t b[8192];
        size_t n;
        uint8_t *dnptrs[64];
} DnsBuilder;

static inline void dnsb_u16(DnsBuilder *p, uint16_t v) {
        assert_true(p->n + 2 <= sizeof p->b);
        p->b[p->n++] = (uint8_t) (v >> 8);
        p->b[p->n++] = (uint8_t) v;
}

static inline void dnsb_u32(DnsBuilder *p, uint32_t v) {
        dnsb_u16(p, (uint16_t) (v >> 16));
        dnsb_u16(p, (uint16_t) v);
}

static inline void dnsb_bytes(DnsBuilder *p, const void *d, size_t n) {
        assert_true(p->n + n <= sizeof p->b);
        memcpy(p->b + p->n, d, n);
        p->n += n;
}

/* flags: the whole second header word (QR 0x8000, opcode << 11, AA 0x400, TC 0x200, RD 0x100, RA 0x80,
 * rcode). */
static inline void dnsb_header(DnsBuilder *p, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
                               uint16_t ns, uint16_t ar) {
        p->n = 0;
        memset(p->dnptrs, 0, sizeof p->dnptrs);
        p->dnptrs[0] = p->b;
        dnsb_u16(p, id);
        dnsb_u16(p, flags);
        dnsb_u16(p, qd);
        dnsb_u16(p, an);
        dnsb_u16(p, ns);
        dnsb_u16(p, ar);
}

static inline void dnsb_name(DnsBuilder *p, const char *name) {
        int k = dn_comp(name, p->b + p->n, (int) (sizeof p->b - p->n), p->dnptrs,
                        p->dnptrs + sizeof p->dnptrs / sizeof p->dnptrs[0]);
        assert_true(k > 0);
        p->n += (size_t) k;
}

static inline void dnsb_question(DnsBuilder *p, const char *name, uint16_t type, uint16_t class) {
        dnsb_name(p, name);
        dnsb_u16(p, type);
        dnsb_u16(p, class);
}

static inline void dnsb_rr(DnsBuilder *p, const char *name, uint16_t type, uint16_t class, uint32_t ttl,
                           const void *rdata, uint16_t rdlen) {
        dnsb_name(p, name);
        dnsb_u16(p, type);
        dnsb_u16(p, class);
        dnsb_u32(p, ttl);
        dnsb_u16(p, rdlen);
        dnsb_bytes(p, rdata, rdlen);
}

static inline void dnsb_a(DnsBuilder *p, const char *name, uint32_t ttl, const char *addr) {
        struct in_addr a;

        assert_int_equal(inet_pton(AF_INET, addr, &a), 1);
        dnsb_rr(p, name, ns_t_a, ns_c_in, ttl, &a, 4);
}

static inline void dnsb_aaaa(DnsBuilder *p, const char *name, uint32_t ttl, const char *addr) {
        struct in6_addr a;

        assert_int_equal(inet_pton(AF_INET6, addr, &a), 1);
        dnsb_rr(p, name, ns_t_aaaa, ns_c_in, ttl, &a, 16);
}

static inline void dnsb_cname(DnsBuilder *p, const char *owner, uint32_t ttl, const char *target) {
        size_t at;

        dnsb_name(p, owner);
        dnsb_u16(p, ns_t_cname);
        dnsb_u16(p, ns_c_in);
        dnsb_u32(p, ttl);
        at = p->n;
        dnsb_u16(p, 0);
        dnsb_name(p, target);
        p->b[at] = (uint8_t) ((p->n - at - 2) >> 8);
        p->b[at + 1] = (uint8_t) (p->n - at - 2);
}

/* A reply to `query` (a well-formed packet with one question) from the query's bytes: the same id and
 * question, QR/RA set, rcode, and n_an answer records the caller appends. */
static inline void dnsb_reply_to(DnsBuilder *p, const uint8_t *query, size_t n, uint16_t rcode, uint16_t n_an) {
        char name[NS_MAXDNAME];
        int k;

        assert_true(n >= 12);
        k = dn_expand(query, query + n, query + 12, name, sizeof name);
        assert_true(k > 0);
        dnsb_header(p, (uint16_t) ((query[0] << 8) | query[1]),
                    (uint16_t) (0x8000 | 0x0080 | (((query[2] << 8) | query[3]) & 0x0100) | rcode), 1, n_an, 0, 0);
        dnsb_question(p, name, (uint16_t) ((query[12 + k] << 8) | query[13 + k]),
                      (uint16_t) ((query[14 + k] << 8) | query[15 + k]));
}
