/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* DNS packets for the per-run resolver: parse a client's query, build an error reply to it, and read an
 * upstream answer into the addresses a run may then connect to. Pure: no sockets, no logging. Packets
 * are read with libresolv (ns_initparse()/ns_parserr()/dn_expand()) and names written with dn_comp();
 * only the fixed 12-byte header is touched directly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

#define DNS_HEADER_SIZE 12U
#define DNS_PACKET_MAX 65535U
/* A name in text form, lower case, without the trailing dot ("" is the root): at most 253 chars. */
#define DNS_NAME_MAX 255U
/* CNAME records followed from the question name; a longer chain is cut there (no error). */
#define DNS_CNAME_CHAIN_MAX 16U

/* Types, classes and response codes used here (the values of libresolv's ns_t_*, ns_c_*, ns_r_*; this
 * header leaves <arpa/nameser.h> out, as its <sys/param.h> defines MIN/MAX of its own). */
#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1
#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5

typedef struct DnsQuestion {
        uint16_t id;
        bool rd;                        /* recursion desired, as the client asked */
        char name[DNS_NAME_MAX + 1];    /* lower case, no trailing dot */
        uint16_t qtype;                 /* DNS_TYPE_A, ... */
        uint16_t qclass;                /* DNS_CLASS_IN, ... */
} DnsQuestion;

typedef struct DnsAddress {
        int family;                     /* AF_INET (addr[0..3]) or AF_INET6 */
        uint8_t addr[16];
        uint32_t ttl;                   /* seconds; a TTL with the top bit set counts as 0 (RFC 2181) */
} DnsAddress;

typedef struct DnsAnswer {
        int rcode;                      /* DNS_RCODE_* of the reply */
        bool truncated;                 /* TC set: the client retries over TCP (records are collected only
                                         * when the reply can be read whole) */
        DnsAddress *addresses;          /* A/AAAA of the question name and its CNAME chain (rcode NOERROR) */
        size_t n_addresses;
        char **cnames;                  /* the names reached through CNAMEs, in chain order (NULL-terminated) */
        size_t n_cnames;
} DnsAnswer;

/* Frees what a successful dns_answer_parse() put in *a and resets it; fine on a zeroed DnsAnswer. */
void dns_answer_done(DnsAnswer *a);

/* A client's query: a well-formed message (QR clear) with exactly one question.
 * -EBADMSG: malformed (short, bad name, compression loop, counts past the end, a response);
 * -EOPNOTSUPP: opcode other than QUERY, or a question count other than 1;
 * -EINVAL: well-formed, but the name cannot be written unambiguously as text (a label holding '.',
 *          '\\', a space or a byte outside printable ASCII), so no name policy can judge it. */
int dns_query_parse(const uint8_t *pkt, size_t n, DnsQuestion *ret);

/* An error reply to `query`: its id, opcode and RD, QR and RA set, `rcode`, no records. The question is
 * copied (uncompressed) when the query holds exactly one that can be read, else the count is 0 (a reply
 * to a malformed query). -EBADMSG when `query` is shorter than a header or is itself a response (never
 * answered, so two resolvers cannot bounce errors at each other); -EINVAL for an rcode above 15;
 * -ENOBUFS when out_size is too small. */
int dns_reply_error(const uint8_t *query, size_t n, int rcode, uint8_t *out, size_t out_size, size_t *ret_len);

/* The reply to the query `q` (q->id is the id the query was sent with). -EBADMSG when it is malformed,
 * not a response, or does not match q (id, name, type, class). A truncated reply whose records cannot be
 * read is accepted when its header and question match (ret->truncated, nothing collected). Otherwise the
 * A/AAAA records (class IN) owned by q->name or by a name reached from it through CNAME records of the
 * answer section are collected, whatever their order; records of other names are left out. */
int dns_answer_parse(const uint8_t *pkt, size_t n, const DnsQuestion *q, DnsAnswer *ret);

/* The header id of a packet of at least DNS_HEADER_SIZE bytes. */
uint16_t dns_packet_get_id(const uint8_t *pkt);
void dns_packet_set_id(uint8_t *pkt, uint16_t id);
