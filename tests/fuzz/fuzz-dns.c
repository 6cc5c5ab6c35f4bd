/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DNS packets (src/dns/dns-packet.c), from a run's clients and from upstream: the input is one packet,
 * read as a client's query (and answered with an error reply), and as an upstream answer to the query its
 * own question section makes (or to a fixed one). */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>

#include "dns-packet.h"
#include "fuzz.h"

/* lower case, and not longer than max: DNS_NAME_MAX for a question; a CNAME target is libresolv's text of
 * whatever the answer holds, "\\DDD" escapes included (NS_MAXDNAME) */
static void check_name(const char *name, size_t max) {
        fuzz_check(strlen(name) <= max);
        for (const char *c = name; *c; c++)
                fuzz_check(!(*c >= 'A' && *c <= 'Z'));
}

static void check_answer(const uint8_t *pkt, size_t n, const DnsQuestion *q) {
        DnsAnswer a = {};
        int r;

        r = dns_answer_parse(pkt, n, q, &a);
        if (r < 0) {
                fuzz_check(r == -EBADMSG || r == -ENOMEM);
                fuzz_check(!a.addresses && !a.cnames);
                return;
        }
        fuzz_check(a.rcode >= 0 && a.rcode <= 15);
        fuzz_check(a.n_cnames <= DNS_CNAME_CHAIN_MAX);
        for (size_t i = 0; i < a.n_addresses; i++)
                fuzz_check(a.addresses[i].family == AF_INET || a.addresses[i].family == AF_INET6);
        for (size_t i = 0; i < a.n_cnames; i++)
                check_name(a.cnames[i], 1024);
        fuzz_check(!a.cnames || !a.cnames[a.n_cnames]);
        dns_answer_done(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        DnsQuestion q = {}, fixed = { .id = 0x1234, .rd = true, .name = "example.org", .qtype = DNS_TYPE_A,
                                      .qclass = DNS_CLASS_IN };
        uint8_t out[DNS_PACKET_MAX], *copy;
        size_t len = 0;
        int r;

        r = dns_query_parse(data, size, &q);
        if (r >= 0)
                check_name(q.name, DNS_NAME_MAX);
        else
                fuzz_check(r == -EBADMSG || r == -EOPNOTSUPP || r == -EINVAL);

        r = dns_reply_error(data, size, DNS_RCODE_REFUSED, out, sizeof(out), &len);
        if (r >= 0) {
                DnsQuestion back;

                fuzz_check(len >= DNS_HEADER_SIZE && len <= sizeof(out));
                /* a reply is never taken for a query */
                fuzz_check(dns_query_parse(out, len, &back) == -EBADMSG);
        } else
                fuzz_check(r == -EBADMSG || r == -ENOBUFS);
        /* a reply buffer too small for the question */
        r = dns_reply_error(data, size, DNS_RCODE_SERVFAIL, out, 20, &len);
        fuzz_check(r < 0 || len <= 20);

        check_answer(data, size, &fixed);
        /* the question the packet holds, as if it had been asked */
        if (size >= DNS_HEADER_SIZE && size <= DNS_PACKET_MAX) {
                copy = malloc(size);
                if (!copy)
                        abort();
                memcpy(copy, data, size);
                copy[2] &= 0x07;                        /* QR clear, opcode QUERY */
                copy[4] = 0, copy[5] = 1;               /* one question */
                memset(copy + 6, 0, 6);                 /* no records */
                if (dns_query_parse(copy, size, &q) >= 0) {
                        q.id = dns_packet_get_id(data);
                        check_answer(data, size, &q);
                }
                free(copy);
        }
        return 0;
}
