/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dns-packet: queries parsed, error replies built byte for byte, answers read with their CNAME chains. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dns-builder.h"
#include "dns-packet.h"
#include "unit-test.h"

#define QID 0x1234

/* ---- queries ---- */

static void test_query_parse_mkquery(void **state) {
        uint8_t buf[512];
        DnsQuestion q;
        int n;

        n = res_mkquery(ns_o_query, "WWW.Example.COM.", ns_c_in, ns_t_aaaa, NULL, 0, NULL, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(dns_query_parse(buf, (size_t) n, &q), 0);
        assert_string_equal(q.name, "www.example.com");
        assert_int_equal(q.qtype, ns_t_aaaa);
        assert_int_equal(q.qclass, ns_c_in);
        assert_int_equal(q.id, dns_packet_get_id(buf));
        assert_true(q.rd); /* res_mkquery() asks for recursion */

        /* the root */
        n = res_mkquery(ns_o_query, ".", ns_c_in, ns_t_ns, NULL, 0, NULL, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(dns_query_parse(buf, (size_t) n, &q), 0);
        assert_string_equal(q.name, "");
        assert_int_equal(q.qtype, ns_t_ns);
}

static void test_query_parse_fields(void **state) {
        DnsBuilder p;
        DnsQuestion q;

        /* no RD, an EDNS OPT record in the additional section, class CH */
        dnsb_header(&p, 0xbeef, 0x0000, 1, 0, 0, 1);
        dnsb_question(&p, "version.bind", ns_t_txt, ns_c_chaos);
        dnsb_bytes(&p, "\0\0\x29\x10\0\0\0\0\0\0\0", 11);
        assert_int_equal(dns_query_parse(p.b, p.n, &q), 0);
        assert_int_equal(q.id, 0xbeef);
        assert_false(q.rd);
        assert_string_equal(q.name, "version.bind");
        assert_int_equal(q.qtype, ns_t_txt);
        assert_int_equal(q.qclass, ns_c_chaos);

        /* '_' and '-' are plain characters */
        dnsb_header(&p, 1, 0x0100, 1, 0, 0, 0);
        dnsb_question(&p, "_https._tcp.my-host.example", ns_t_srv, ns_c_in);
        assert_int_equal(dns_query_parse(p.b, p.n, &q), 0);
        assert_string_equal(q.name, "_https._tcp.my-host.example");

        /* the longest name: 4 labels of 63, 61 and a root byte = 255 bytes on the wire, 253 chars */
        {
                char name[300], *s = name;

                for (int l = 0; l < 4; l++) {
                        int len = l < 3 ? 63 : 61;

                        memset(s, 'a' + l, (size_t) len);
                        s += len;
                        *s++ = l < 3 ? '.' : '\0';
                }
                dnsb_header(&p, 1, 0x0100, 1, 0, 0, 0);
                dnsb_question(&p, name, ns_t_a, ns_c_in);
                assert_int_equal(dns_query_parse(p.b, p.n, &q), 0);
                assert_int_equal(strlen(q.name), 253);
                assert_string_equal(q.name, name);
        }
}

static void test_query_parse_bad(void **state) {
        static const struct {
                const char *what;
                const uint8_t *pkt;
                size_t n;
                int ret;
        } table[] = {
#define P(s) (const uint8_t *) (s), sizeof(s) - 1
                { "empty", P(""), -EBADMSG },
                { "short header", P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00"), -EBADMSG },
                { "no question bytes", P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"), -EBADMSG },
                { "truncated type/class",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\1\0"), -EBADMSG },
                { "truncated name",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7exam"), -EBADMSG },
                { "compression loop",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\xc0\x0c" "\0\1\0\1"), -EBADMSG },
                { "two-step compression loop",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\1a\xc0\x0e" "\0\1\0\1"), -EBADMSG },
                { "pointer past the end",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\xc0\xff" "\0\1\0\1"), -EBADMSG },
                { "reserved label type",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\x43www\0" "\0\1\0\1"), -EBADMSG },
                { "additional count past the end",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01" "\3www\7example\3com\0" "\0\1\0\1"), -EBADMSG },
                { "trailing garbage",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\1\0\1" "xx"), -EBADMSG },
                { "a response",
                  P("\x12\x34\x81\x80\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\1\0\1"), -EBADMSG },
                { "two questions",
                  P("\x12\x34\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\1\0\1"
                    "\3ftp\xc0\x10" "\0\1\0\1"), -EOPNOTSUPP },
                { "no question", P("\x12\x34\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), -EOPNOTSUPP },
                { "opcode STATUS",
                  P("\x12\x34\x11\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\1\0\1"), -EOPNOTSUPP },
                { "opcode UPDATE",
                  P("\x12\x34\x28\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3www\7example\3com\0" "\0\6\0\1"), -EOPNOTSUPP },
                { "dot inside a label",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3a.b\7example\3com\0" "\0\1\0\1"), -EINVAL },
                { "backslash in a label",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3a\\b\7example\3com\0" "\0\1\0\1"), -EINVAL },
                { "space in a label",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3a b\7example\3com\0" "\0\1\0\1"), -EINVAL },
                { "NUL in a label",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3a\0b\7example\3com\0" "\0\1\0\1"), -EINVAL },
                { "high byte in a label",
                  P("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" "\3a\xc3\xa9\7example\3com\0" "\0\1\0\1"), -EINVAL },
#undef P
        };
        unsigned failures = 0;
        DnsQuestion q;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                int r = dns_query_parse(table[i].pkt, table[i].n, &q);

                check_row(failures, r == table[i].ret, "%s: got %d, want %d", table[i].what, r, table[i].ret);
        }
        assert_int_equal(failures, 0);

        /* a name longer than 255 bytes on the wire: 5 labels of 63 */
        {
                DnsBuilder p;

                dnsb_header(&p, 1, 0x0100, 1, 0, 0, 0);
                for (int l = 0; l < 5; l++) {
                        uint8_t label[64];

                        label[0] = 63;
                        memset(label + 1, 'a', 63);
                        dnsb_bytes(&p, label, sizeof label);
                }
                dnsb_bytes(&p, "\0\0\1\0\1", 5);
                assert_int_equal(dns_query_parse(p.b, p.n, &q), -EBADMSG);
        }
}

/* ---- error replies ---- */

static void test_reply_error_exact(void **state) {
        /* RD set, "WwW.example.com" (the case is kept), and an EDNS OPT record that the reply leaves out */
        static const uint8_t query[] =
                "\xbe\xef\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01"
                "\3WwW\7example\3com\0" "\0\1\0\1"
                "\0\0\x29\x10\0\0\0\0\0\0\0";
        static const uint8_t refused[] =
                "\xbe\xef\x81\x85\x00\x01\x00\x00\x00\x00\x00\x00"
                "\3WwW\7example\3com\0" "\0\1\0\1";
        static const uint8_t servfail[] =
                "\xbe\xef\x81\x82\x00\x01\x00\x00\x00\x00\x00\x00"
                "\3WwW\7example\3com\0" "\0\1\0\1";
        uint8_t out[512];
        size_t len = 0;

        assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, sizeof out, &len), 0);
        assert_int_equal(len, sizeof refused - 1);
        assert_memory_equal(out, refused, len);

        assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_SERVFAIL, out, sizeof out, &len), 0);
        assert_int_equal(len, sizeof servfail - 1);
        assert_memory_equal(out, servfail, len);

        /* exactly big enough, and one byte short */
        assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, sizeof refused - 1, &len), 0);
        assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, sizeof refused - 2, &len),
                         -ENOBUFS);
        assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, 11, &len), -ENOBUFS);
        assert_int_equal(dns_reply_error(query, sizeof query - 1, 16, out, sizeof out, &len), -EINVAL);
        assert_int_equal(dns_reply_error(query, sizeof query - 1, -1, out, sizeof out, &len), -EINVAL);

        /* the reply parses back as a REFUSED answer to the query */
        {
                _cleanup_(dns_answer_done) DnsAnswer a = {};
                DnsQuestion q;

                assert_int_equal(dns_query_parse(query, sizeof query - 1, &q), 0);
                assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, sizeof out, &len), 0);
                assert_int_equal(dns_answer_parse(out, len, &q, &a), 0);
                assert_int_equal(a.rcode, DNS_RCODE_REFUSED);
                assert_int_equal(a.n_addresses, 0);
        }
}

static void test_reply_error_odd_queries(void **state) {
        uint8_t out[512];
        size_t len = 0;

        /* opcode STATUS, no RD: the opcode is kept */
        {
                static const uint8_t query[] = "\x00\x07\x10\x00\x00\x01\x00\x00\x00\x00\x00\x00"
                                               "\1a\0" "\0\1\0\1";
                static const uint8_t want[] = "\x00\x07\x90\x84\x00\x01\x00\x00\x00\x00\x00\x00"
                                              "\1a\0" "\0\1\0\1";

                assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_NOTIMP, out, sizeof out, &len), 0);
                assert_int_equal(len, sizeof want - 1);
                assert_memory_equal(out, want, len);
        }
        /* a question that cannot be read: a header-only FORMERR */
        {
                static const uint8_t query[] = "\xab\xcd\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
                                               "\xc0\x0c" "\0\1\0\1";
                static const uint8_t want[] = "\xab\xcd\x81\x81\x00\x00\x00\x00\x00\x00\x00\x00";

                assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_FORMERR, out, sizeof out, &len), 0);
                assert_int_equal(len, sizeof want - 1);
                assert_memory_equal(out, want, len);
        }
        /* two questions: header only */
        {
                static const uint8_t query[] = "\xab\xcd\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00"
                                               "\1a\0" "\0\1\0\1" "\1b\0" "\0\1\0\1";
                static const uint8_t want[] = "\xab\xcd\x81\x84\x00\x00\x00\x00\x00\x00\x00\x00";

                assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_NOTIMP, out, sizeof out, &len), 0);
                assert_int_equal(len, sizeof want - 1);
                assert_memory_equal(out, want, len);
        }
        /* a compressed question name is written out whole */
        {
                static const uint8_t query[] = "\xab\xcd\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
                                               "\1x\xc0\x14" "\0\1\0\1" "\3com\0";
                static const uint8_t want[] = "\xab\xcd\x81\x85\x00\x01\x00\x00\x00\x00\x00\x00"
                                              "\1x\3com\0" "\0\1\0\1";

                assert_int_equal(dns_reply_error(query, sizeof query - 1, DNS_RCODE_REFUSED, out, sizeof out, &len), 0);
                assert_int_equal(len, sizeof want - 1);
                assert_memory_equal(out, want, len);
        }
        /* never an answer to an answer, nor to less than a header */
        {
                static const uint8_t response[] = "\xab\xcd\x81\x80\x00\x01\x00\x00\x00\x00\x00\x00"
                                                  "\1a\0" "\0\1\0\1";

                assert_int_equal(dns_reply_error(response, sizeof response - 1, DNS_RCODE_FORMERR, out, sizeof out, &len),
                                 -EBADMSG);
                assert_int_equal(dns_reply_error(response, 11, DNS_RCODE_FORMERR, out, sizeof out, &len), -EBADMSG);
        }
}

/* ---- answers ---- */

static DnsQuestion question(const char *name, uint16_t type) {
        DnsQuestion q = { .id = QID, .rd = true, .qtype = type, .qclass = ns_c_in };

        assert_true(strlen(name) < sizeof q.name);
        strcpy(q.name, name);
        return q;
}

static void assert_address(const DnsAddress *a, const char *addr, uint32_t ttl) {
        char buf[INET6_ADDRSTRLEN];

        assert_non_null(inet_ntop(a->family, a->addr, buf, sizeof buf));
        assert_string_equal(buf, addr);
        assert_int_equal(a->ttl, ttl);
}

static void test_answer_simple(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("example.com", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8180, 1, 2, 0, 0);
        dnsb_question(&p, "example.com", ns_t_a, ns_c_in);
        dnsb_a(&p, "example.com", 300, "93.184.216.34");
        dnsb_a(&p, "example.com", 60, "93.184.216.35");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.rcode, DNS_RCODE_NOERROR);
        assert_false(a.truncated);
        assert_int_equal(a.n_addresses, 2);
        assert_int_equal(a.addresses[0].family, AF_INET);
        assert_address(&a.addresses[0], "93.184.216.34", 300);
        assert_address(&a.addresses[1], "93.184.216.35", 60);
        assert_int_equal(a.n_cnames, 0);
        assert_null(a.cnames);
}

static void test_answer_aaaa_and_case(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("v6.example.org", ns_t_aaaa);
        DnsBuilder p;

        /* the server wrote the names in another case */
        dnsb_header(&p, QID, 0x8180, 1, 2, 0, 0);
        dnsb_question(&p, "V6.Example.ORG", ns_t_aaaa, ns_c_in);
        dnsb_aaaa(&p, "V6.EXAMPLE.ORG", 7200, "2001:db8::1");
        dnsb_aaaa(&p, "v6.example.org", 10, "2001:db8::2");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 2);
        assert_int_equal(a.addresses[0].family, AF_INET6);
        assert_address(&a.addresses[0], "2001:db8::1", 7200);
        assert_address(&a.addresses[1], "2001:db8::2", 10);
}

static void test_answer_cname_in_order(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("www.example.com", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8180, 1, 5, 0, 1);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_cname(&p, "www.example.com", 3600, "a.cdn.net");
        dnsb_cname(&p, "a.cdn.net", 300, "b.cdn.net");
        dnsb_a(&p, "b.cdn.net", 20, "1.2.3.4");
        dnsb_a(&p, "evil.example", 20, "6.6.6.6");       /* not on the chain */
        dnsb_aaaa(&p, "a.cdn.net", 30, "2001:db8::a");    /* on the chain */
        dnsb_a(&p, "b.cdn.net", 20, "7.7.7.7");          /* additional section: not an answer */
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 2);
        assert_address(&a.addresses[0], "1.2.3.4", 20);
        assert_address(&a.addresses[1], "2001:db8::a", 30);
        assert_int_equal(a.n_cnames, 2);
        assert_string_equal(a.cnames[0], "a.cdn.net");
        assert_string_equal(a.cnames[1], "b.cdn.net");
        assert_null(a.cnames[2]);
}

static void test_answer_cname_reversed(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("www.example.com", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8180, 1, 4, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_a(&p, "c.cdn.net", 5, "10.0.0.3");
        dnsb_cname(&p, "b.cdn.net", 300, "c.cdn.net");
        dnsb_cname(&p, "a.cdn.net", 300, "B.CDN.NET");
        dnsb_cname(&p, "www.example.com", 3600, "a.cdn.net");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 1);
        assert_address(&a.addresses[0], "10.0.0.3", 5);
        assert_int_equal(a.n_cnames, 3);
        assert_string_equal(a.cnames[0], "a.cdn.net");
        assert_string_equal(a.cnames[1], "b.cdn.net");
        assert_string_equal(a.cnames[2], "c.cdn.net");
}

static void test_answer_cname_loop(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("www.example.com", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8180, 1, 4, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_cname(&p, "www.example.com", 60, "a.loop.net");
        dnsb_cname(&p, "a.loop.net", 60, "b.loop.net");
        dnsb_cname(&p, "b.loop.net", 60, "www.example.com");
        dnsb_a(&p, "b.loop.net", 60, "192.0.2.1");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 1);
        assert_address(&a.addresses[0], "192.0.2.1", 60);
        assert_int_equal(a.n_cnames, 2);

        /* a name that is its own alias */
        dns_answer_done(&a);
        dnsb_header(&p, QID, 0x8180, 1, 1, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_cname(&p, "www.example.com", 60, "www.example.com");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 0);
        assert_int_equal(a.n_cnames, 0);
}

static void test_answer_cname_long_chain(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("c0.example", ns_t_a);
        DnsBuilder p;
        char owner[32], target[32];

        /* c0 -> c1 -> ... -> c20, each with an address 10.0.0.N, in reverse order */
        dnsb_header(&p, QID, 0x8180, 1, 41, 0, 0);
        dnsb_question(&p, "c0.example", ns_t_a, ns_c_in);
        for (int i = 20; i >= 0; i--) {
                char addr[32];

                (void) snprintf(owner, sizeof owner, "c%d.example", i);
                (void) snprintf(addr, sizeof addr, "10.0.0.%d", i);
                dnsb_a(&p, owner, 100, addr);
                if (i < 20) {
                        (void) snprintf(target, sizeof target, "c%d.example", i + 1);
                        dnsb_cname(&p, owner, 100, target);
                }
        }
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        /* the chain is cut after DNS_CNAME_CHAIN_MAX names: c0 .. c16 */
        assert_int_equal(a.n_cnames, DNS_CNAME_CHAIN_MAX);
        assert_string_equal(a.cnames[DNS_CNAME_CHAIN_MAX - 1], "c16.example");
        assert_int_equal(a.n_addresses, DNS_CNAME_CHAIN_MAX + 1);
        for (size_t i = 0; i < a.n_addresses; i++)
                assert_true(a.addresses[i].addr[3] <= DNS_CNAME_CHAIN_MAX);
}

static void test_answer_unrelated(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("www.example.com", ns_t_a);
        DnsBuilder p;

        /* an alias of the question name (not from it), an alias between unrelated names, a record in
         * another class, and records for names that only end like the question name */
        dnsb_header(&p, QID, 0x8180, 1, 7, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_cname(&p, "evil.example", 60, "www.example.com");
        dnsb_a(&p, "evil.example", 60, "6.6.6.1");
        dnsb_cname(&p, "x.other", 60, "y.other");
        dnsb_a(&p, "y.other", 60, "6.6.6.2");
        dnsb_rr(&p, "www.example.com", ns_t_a, ns_c_chaos, 60, "\6\6\6\3", 4);
        dnsb_a(&p, "a.www.example.com", 60, "6.6.6.4");
        dnsb_a(&p, "www.example.com.evil", 60, "6.6.6.5");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 0);
        assert_int_equal(a.n_cnames, 0);
}

static void test_answer_ttls(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("example.com", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8180, 1, 5, 0, 0);
        dnsb_question(&p, "example.com", ns_t_a, ns_c_in);
        dnsb_a(&p, "example.com", 0, "192.0.2.1");
        dnsb_a(&p, "example.com", 0x7fffffff, "192.0.2.2");
        dnsb_a(&p, "example.com", 0x80000000, "192.0.2.3");   /* top bit: 0 (RFC 2181) */
        dnsb_a(&p, "example.com", 10, "192.0.2.4");
        dnsb_a(&p, "example.com", 99, "192.0.2.4");           /* twice: once, the longer TTL */
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.n_addresses, 4);
        assert_address(&a.addresses[0], "192.0.2.1", 0);
        assert_address(&a.addresses[1], "192.0.2.2", 0x7fffffff);
        assert_address(&a.addresses[2], "192.0.2.3", 0);
        assert_address(&a.addresses[3], "192.0.2.4", 99);
}

static void test_answer_rcodes(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("nope.example", ns_t_a);
        DnsBuilder p;

        dnsb_header(&p, QID, 0x8183, 1, 0, 0, 0);
        dnsb_question(&p, "nope.example", ns_t_a, ns_c_in);
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.rcode, DNS_RCODE_NXDOMAIN);
        assert_int_equal(a.n_addresses, 0);

        /* addresses in a failure are not taken */
        dns_answer_done(&a);
        dnsb_header(&p, QID, 0x8182, 1, 1, 0, 0);
        dnsb_question(&p, "nope.example", ns_t_a, ns_c_in);
        dnsb_a(&p, "nope.example", 60, "192.0.2.9");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_int_equal(a.rcode, DNS_RCODE_SERVFAIL);
        assert_int_equal(a.n_addresses, 0);
}

static void test_answer_truncated(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("big.example", ns_t_a);
        DnsBuilder p;

        /* TC with counts that promise records not there: accepted on header and question */
        dnsb_header(&p, QID, 0x8380, 1, 3, 0, 0);
        dnsb_question(&p, "big.example", ns_t_a, ns_c_in);
        dnsb_a(&p, "big.example", 60, "192.0.2.1");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_true(a.truncated);
        assert_int_equal(a.n_addresses, 0);

        /* the same without TC is malformed */
        dns_answer_done(&a);
        p.b[2] = 0x81;
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);

        /* TC, wrong id */
        p.b[2] = 0x83;
        p.b[1] ^= 1;
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);
        p.b[1] ^= 1;

        /* TC, another name */
        dnsb_header(&p, QID, 0x8380, 1, 3, 0, 0);
        dnsb_question(&p, "other.example", ns_t_a, ns_c_in);
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);

        /* TC and readable: what is there is taken */
        dnsb_header(&p, QID, 0x8380, 1, 1, 0, 0);
        dnsb_question(&p, "big.example", ns_t_a, ns_c_in);
        dnsb_a(&p, "big.example", 60, "192.0.2.1");
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), 0);
        assert_true(a.truncated);
        assert_int_equal(a.n_addresses, 1);
}

static void test_answer_mismatch(void **state) {
        static const struct {
                const char *what;
                uint16_t id, flags, qd;
                const char *name;
                uint16_t type, class;
        } table[] = {
                { "ok", QID, 0x8180, 1, "www.example.com", ns_t_a, ns_c_in },
                { "id", QID + 1, 0x8180, 1, "www.example.com", ns_t_a, ns_c_in },
                { "name", QID, 0x8180, 1, "ww.example.com", ns_t_a, ns_c_in },
                { "name suffix", QID, 0x8180, 1, "www.example.com.evil", ns_t_a, ns_c_in },
                { "type", QID, 0x8180, 1, "www.example.com", ns_t_aaaa, ns_c_in },
                { "class", QID, 0x8180, 1, "www.example.com", ns_t_a, ns_c_chaos },
                { "not a response", QID, 0x0180, 1, "www.example.com", ns_t_a, ns_c_in },
                { "no question", QID, 0x8180, 0, NULL, 0, 0 },
        };
        DnsQuestion q = question("www.example.com", ns_t_a);
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(dns_answer_done) DnsAnswer a = {};
                DnsBuilder p;
                int r;

                dnsb_header(&p, table[i].id, table[i].flags, table[i].qd, 1, 0, 0);
                if (table[i].name)
                        dnsb_question(&p, table[i].name, table[i].type, table[i].class);
                dnsb_a(&p, "www.example.com", 60, "192.0.2.1");
                r = dns_answer_parse(p.b, p.n, &q, &a);
                check_row(failures, r == (i == 0 ? 0 : -EBADMSG), "%s: got %d", table[i].what, r);
                check_row(failures, a.n_addresses == (i == 0 ? 1U : 0U), "%s: %zu addresses", table[i].what,
                          a.n_addresses);
        }
        assert_int_equal(failures, 0);
}

static void test_answer_malformed(void **state) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        DnsQuestion q = question("www.example.com", ns_t_a);
        DnsBuilder p;

        /* an A record of 5 bytes */
        dnsb_header(&p, QID, 0x8180, 1, 1, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_rr(&p, "www.example.com", ns_t_a, ns_c_in, 60, "\1\2\3\4\5", 5);
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);

        /* a CNAME whose target loops */
        dnsb_header(&p, QID, 0x8180, 1, 1, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_name(&p, "www.example.com");
        dnsb_bytes(&p, "\0\5\0\1\0\0\0\x3c\0\2", 10);
        {
                uint16_t self = (uint16_t) (0xc000 | p.n);

                dnsb_u16(&p, self);
        }
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);

        /* short, and an owner name pointing past the end */
        assert_int_equal(dns_answer_parse(p.b, 11, &q, &a), -EBADMSG);
        dnsb_header(&p, QID, 0x8180, 1, 1, 0, 0);
        dnsb_question(&p, "www.example.com", ns_t_a, ns_c_in);
        dnsb_bytes(&p, "\xc3\xff\0\1\0\1\0\0\0\x3c\0\4\1\2\3\4", 16);
        assert_int_equal(dns_answer_parse(p.b, p.n, &q, &a), -EBADMSG);
}

static void test_packet_id(void **state) {
        uint8_t h[12] = { 0xab, 0xcd };

        assert_int_equal(dns_packet_get_id(h), 0xabcd);
        dns_packet_set_id(h, 0x0102);
        assert_int_equal(h[0], 1);
        assert_int_equal(h[1], 2);
        assert_int_equal(dns_packet_get_id(h), 0x0102);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_query_parse_mkquery),
                cmocka_unit_test(test_query_parse_fields),
                cmocka_unit_test(test_query_parse_bad),
                cmocka_unit_test(test_reply_error_exact),
                cmocka_unit_test(test_reply_error_odd_queries),
                cmocka_unit_test(test_answer_simple),
                cmocka_unit_test(test_answer_aaaa_and_case),
                cmocka_unit_test(test_answer_cname_in_order),
                cmocka_unit_test(test_answer_cname_reversed),
                cmocka_unit_test(test_answer_cname_loop),
                cmocka_unit_test(test_answer_cname_long_chain),
                cmocka_unit_test(test_answer_unrelated),
                cmocka_unit_test(test_answer_ttls),
                cmocka_unit_test(test_answer_rcodes),
                cmocka_unit_test(test_answer_truncated),
                cmocka_unit_test(test_answer_mismatch),
                cmocka_unit_test(test_answer_malformed),
                cmocka_unit_test(test_packet_id),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
