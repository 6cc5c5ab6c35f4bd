/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <ctype.h>
#include <resolv.h>
#include <sys/socket.h>
/* <sys/param.h>, pulled in by <arpa/nameser.h>, has MIN/MAX of its own: macro.h's are used here. */
#undef MIN
#undef MAX

#include "dns-packet.h"

/* Header flag bits (second 16-bit word of the header, RFC 1035 4.1.1). */
#define FLAG_QR 0x8000U
#define FLAG_OPCODE_MASK 0x7800U
#define FLAG_TC 0x0200U
#define FLAG_RD 0x0100U
#define FLAG_RA 0x0080U

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

uint16_t dns_packet_get_id(const uint8_t *pkt) {
        return get16(pkt);
}

void dns_packet_set_id(uint8_t *pkt, uint16_t id) {
        put16(pkt, id);
}

void dns_answer_done(DnsAnswer *a) {
        if (!a)
                return;
        free(a->addresses);
        strv_free(a->cnames);
        *a = (DnsAnswer) {};
}

/* The text libresolv gives for a name ("." for the root, escapes for odd bytes) in the form compared
 * here: lower case, no trailing dot. */
static void name_normalize(char *s) {
        if (streq(s, ".")) {
                s[0] = '\0';
                return;
        }
        for (char *p = s; *p; p++)
                *p = (char) tolower((unsigned char) *p);
}

int dns_query_parse(const uint8_t *pkt, size_t n, DnsQuestion *ret) {
        ns_msg h;
        ns_rr rr;

        if (!pkt || n < DNS_HEADER_SIZE || n > DNS_PACKET_MAX)
                return -EBADMSG;
        if (ns_initparse(pkt, (int) n, &h) < 0)
                return -EBADMSG;
        if (ns_msg_getflag(h, ns_f_qr))
                return -EBADMSG;
        if (ns_msg_getflag(h, ns_f_opcode) != ns_o_query || ns_msg_count(h, ns_s_qd) != 1)
                return -EOPNOTSUPP;
        if (ns_parserr(&h, ns_s_qd, 0, &rr) < 0)
                return -EBADMSG;

        /* ns_name_ntop() escapes every byte that is not a plain printable character, or is special in
         * text form ('.', '\\', ...): a backslash means the name would be ambiguous to a policy. */
        if (strchr(ns_rr_name(rr), '\\'))
                return -EINVAL;
        name_normalize(rr.name);
        if (strlen(rr.name) > DNS_NAME_MAX)
                return -EBADMSG;

        *ret = (DnsQuestion) {
                .id = ns_msg_id(h),
                .rd = ns_msg_getflag(h, ns_f_rd),
                .qtype = ns_rr_type(rr),
                .qclass = ns_rr_class(rr),
        };
        strcpy(ret->name, rr.name);
        return 0;
}

int dns_reply_error(const uint8_t *query, size_t n, int rcode, uint8_t *out, size_t out_size, size_t *ret_len) {
        char name[NS_MAXDNAME];
        uint16_t flags, qtype = 0, qclass = 0;
        bool with_question = false;
        size_t len = DNS_HEADER_SIZE;

        if (!query || n < DNS_HEADER_SIZE || n > DNS_PACKET_MAX)
                return -EBADMSG;
        if (rcode < 0 || rcode > 15)
                return -EINVAL;
        flags = get16(query + 2);
        if (flags & FLAG_QR)
                return -EBADMSG;

        if (get16(query + 4) == 1) {
                int k = dn_expand(query, query + n, query + DNS_HEADER_SIZE, name, sizeof name);

                if (k > 0 && DNS_HEADER_SIZE + (size_t) k + 4 <= n) {
                        const uint8_t *p = query + DNS_HEADER_SIZE + k;

                        qtype = get16(p);
                        qclass = get16(p + 2);
                        with_question = true;
                }
        }

        if (out_size < DNS_HEADER_SIZE)
                return -ENOBUFS;
        if (with_question) {
                /* dn_comp() without a table of earlier names writes the name uncompressed. */
                int k = dn_comp(name, out + DNS_HEADER_SIZE, (int) MIN(out_size - DNS_HEADER_SIZE, (size_t) INT32_MAX),
                                NULL, NULL);

                if (k < 0 || DNS_HEADER_SIZE + (size_t) k + 4 > out_size)
                        return -ENOBUFS;
                len += (size_t) k;
                put16(out + len, qtype);
                put16(out + len + 2, qclass);
                len += 4;
        }

        put16(out, get16(query));
        put16(out + 2, (uint16_t) (FLAG_QR | (flags & (FLAG_OPCODE_MASK | FLAG_RD)) | FLAG_RA | (unsigned) rcode));
        put16(out + 4, with_question ? 1 : 0);
        put16(out + 6, 0);
        put16(out + 8, 0);
        put16(out + 10, 0);
        *ret_len = len;
        return 0;
}

static bool question_matches(const DnsQuestion *q, char *name, uint16_t qtype, uint16_t qclass) {
        name_normalize(name);
        return qtype == q->qtype && qclass == q->qclass && streq(name, q->name);
}

/* A truncated reply may stop in the middle of a record, where ns_initparse() refuses it: check what can
 * be read, the header and the question. */
static int truncated_parse(const uint8_t *pkt, size_t n, const DnsQuestion *q, DnsAnswer *ret) {
        char name[NS_MAXDNAME];
        const uint8_t *p;
        uint16_t flags = get16(pkt + 2);
        int k;

        if (!(flags & FLAG_QR) || !(flags & FLAG_TC) || get16(pkt) != q->id || get16(pkt + 4) != 1)
                return -EBADMSG;
        k = dn_expand(pkt, pkt + n, pkt + DNS_HEADER_SIZE, name, sizeof name);
        if (k <= 0 || DNS_HEADER_SIZE + (size_t) k + 4 > n)
                return -EBADMSG;
        p = pkt + DNS_HEADER_SIZE + k;
        if (!question_matches(q, name, get16(p), get16(p + 2)))
                return -EBADMSG;

        *ret = (DnsAnswer) {
                .rcode = flags & 0xf,
                .truncated = true,
        };
        return 0;
}

static bool name_in(char * const *names, size_t n_names, const char *name) {
        for (size_t i = 0; i < n_names; i++)
                if (streq(names[i], name))
                        return true;
        return false;
}

static int names_add(char ***names, size_t *n_names, const char *name) {
        char **l, *s;

        s = strdup(name);
        if (!s)
                return -ENOMEM;
        l = reallocarray(*names, *n_names + 2, sizeof(char *));
        if (!l) {
                free(s);
                return -ENOMEM;
        }
        l[(*n_names)++] = s;
        l[*n_names] = NULL;
        *names = l;
        return 0;
}

/* The names of the chain: the question name first, then every CNAME target reached from a name already
 * in the chain, in as many passes over the answer section as the chain is long (the records may come in
 * any order). A target already in the chain ends a loop; the chain stops at DNS_CNAME_CHAIN_MAX. */
static int chain_collect(ns_msg *h, const char *qname, char ***ret, size_t *ret_n) {
        _cleanup_strv_free_ char **names = NULL;
        size_t n_names = 0;
        int r;

        r = names_add(&names, &n_names, qname);
        if (r < 0)
                return r;

        for (bool grew = true; grew && n_names <= DNS_CNAME_CHAIN_MAX;) {
                grew = false;
                for (int i = 0; i < ns_msg_count(*h, ns_s_an) && n_names <= DNS_CNAME_CHAIN_MAX; i++) {
                        char target[NS_MAXDNAME];
                        ns_rr rr;

                        if (ns_parserr(h, ns_s_an, i, &rr) < 0)
                                return -EBADMSG;
                        if (ns_rr_type(rr) != ns_t_cname || ns_rr_class(rr) != ns_c_in)
                                continue;
                        name_normalize(rr.name);
                        if (!name_in(names, n_names, rr.name))
                                continue;
                        if (ns_name_uncompress(ns_msg_base(*h), ns_msg_end(*h), ns_rr_rdata(rr), target,
                                               sizeof target) < 0)
                                return -EBADMSG;
                        name_normalize(target);
                        if (name_in(names, n_names, target))
                                continue;
                        r = names_add(&names, &n_names, target);
                        if (r < 0)
                                return r;
                        grew = true;
                }
        }

        *ret = TAKE_PTR(names);
        *ret_n = n_names;
        return 0;
}

static int address_add(DnsAddress **addresses, size_t *n, int family, const uint8_t *addr, uint32_t ttl) {
        size_t len = family == AF_INET ? 4 : 16;
        DnsAddress *a;

        if (ttl > INT32_MAX)
                ttl = 0;
        /* The same address twice (two names of the chain): once, with the longer TTL. */
        for (size_t i = 0; i < *n; i++)
                if ((*addresses)[i].family == family && memcmp((*addresses)[i].addr, addr, len) == 0) {
                        (*addresses)[i].ttl = MAX((*addresses)[i].ttl, ttl);
                        return 0;
                }

        a = reallocarray(*addresses, *n + 1, sizeof(DnsAddress));
        if (!a)
                return -ENOMEM;
        *addresses = a;
        a[*n] = (DnsAddress) { .family = family, .ttl = ttl };
        memcpy(a[*n].addr, addr, len);
        (*n)++;
        return 0;
}

int dns_answer_parse(const uint8_t *pkt, size_t n, const DnsQuestion *q, DnsAnswer *ret) {
        _cleanup_strv_free_ char **chain = NULL;
        _cleanup_free_ DnsAddress *addresses = NULL;
        size_t n_chain = 0, n_addresses = 0;
        ns_msg h;
        ns_rr rr;
        int rcode, r;

        if (!pkt || !q || n < DNS_HEADER_SIZE || n > DNS_PACKET_MAX)
                return -EBADMSG;
        if (ns_initparse(pkt, (int) n, &h) < 0)
                return truncated_parse(pkt, n, q, ret);

        if (!ns_msg_getflag(h, ns_f_qr) || ns_msg_id(h) != q->id || ns_msg_count(h, ns_s_qd) != 1)
                return -EBADMSG;
        if (ns_parserr(&h, ns_s_qd, 0, &rr) < 0)
                return -EBADMSG;
        if (!question_matches(q, rr.name, ns_rr_type(rr), ns_rr_class(rr)))
                return -EBADMSG;

        rcode = ns_msg_getflag(h, ns_f_rcode);
        if (rcode == DNS_RCODE_NOERROR) {
                r = chain_collect(&h, q->name, &chain, &n_chain);
                if (r < 0)
                        return r;

                for (int i = 0; i < ns_msg_count(h, ns_s_an); i++) {
                        int family;

                        if (ns_parserr(&h, ns_s_an, i, &rr) < 0)
                                return -EBADMSG;
                        if (ns_rr_class(rr) != ns_c_in)
                                continue;
                        if (ns_rr_type(rr) == ns_t_a)
                                family = AF_INET;
                        else if (ns_rr_type(rr) == ns_t_aaaa)
                                family = AF_INET6;
                        else
                                continue;
                        if (ns_rr_rdlen(rr) != (family == AF_INET ? 4 : 16))
                                return -EBADMSG;
                        name_normalize(rr.name);
                        if (!name_in(chain, n_chain, rr.name))
                                continue;
                        r = address_add(&addresses, &n_addresses, family, ns_rr_rdata(rr), ns_rr_ttl(rr));
                        if (r < 0)
                                return r;
                }
        }

        *ret = (DnsAnswer) {
                .rcode = rcode,
                .truncated = ns_msg_getflag(h, ns_f_tc),
                .addresses = TAKE_PTR(addresses),
                .n_addresses = n_addresses,
        };
        if (n_chain > 1) {
                /* The question name leads the chain: the CNAME targets follow it. */
                free(chain[0]);
                memmove(chain, chain + 1, n_chain * sizeof(char *));
                ret->cnames = TAKE_PTR(chain);
                ret->n_cnames = n_chain - 1;
        }
        return 0;
}
