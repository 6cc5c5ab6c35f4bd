/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resolver: the per-run resolver on loopback, end to end and without root. The test serves as the run's
 * client and as a fake upstream (UDP and TCP on one ephemeral port of 127.0.0.1), all on one sd-event
 * loop, so every step is deterministic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dns-builder.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "resolver.h"
#include "unit-test.h"

#define ALLOWED_ADDR "192.0.2.1"
#define ALLOWED_TTL 120
#define EVIL_ADDR "6.6.6.6"

typedef enum FakeMode {
        FAKE_ANSWER,          /* answers every query */
        FAKE_SILENT,          /* takes queries, never answers */
        FAKE_WRONG_ID_FIRST,  /* a reply with another id (and another address) first, then the answer */
        FAKE_SPOOF_FIRST,     /* the answer from another port (and with another address) first, then from its own */
        FAKE_TRUNCATE,        /* UDP: TC set and no records */
} FakeMode;

#define FAKE_CONNS_MAX 32

typedef struct Fake {
        FakeMode mode;
        int udp, tcp, spoof;
        struct sockaddr_storage addr;
        sd_event_source *udp_src, *tcp_src;
        struct {
                int fd;
                sd_event_source *src;
                uint8_t buf[4096];
                size_t len;
        } conns[FAKE_CONNS_MAX];
        unsigned udp_queries, tcp_queries;
        uint16_t last_id;
} Fake;

typedef struct T {
        sd_event *event;
        Fake fake[2];
        int udp, tcp;                 /* the run's sockets, before they are handed over */
        struct sockaddr_in udp_addr, tcp_addr;
        Resolver *resolver;
        int client_fd;                /* the socket the current query was sent from */
        int answer_ret;
        unsigned n_decide, n_answer;
        bool answer_before_reply;
        DnsAddress first_address;
        size_t n_addresses;
        bool truncated;
        unsigned n_allowed, n_refused, n_failed;
        char last_name[DNS_NAME_MAX + 1];
} T;

/* ---- the fake upstream ---- */

static size_t fake_reply(Fake *f, const uint8_t *query, size_t n, const char *addr, uint8_t *out, size_t size) {
        DnsBuilder p;
        DnsQuestion q;

        assert_int_equal(dns_query_parse(query, n, &q), 0);
        f->last_id = q.id;
        if (f->mode == FAKE_TRUNCATE) {
                dnsb_reply_to(&p, query, n, 0, 0);
                p.b[2] |= 0x02;
        } else if (streq(q.name, "alias.test")) {
                dnsb_reply_to(&p, query, n, 0, 3);
                dnsb_cname(&p, "alias.test", 60, "target.test");
                dnsb_a(&p, "target.test", 30, "192.0.2.7");
                dnsb_a(&p, "unrelated.test", 30, EVIL_ADDR);
        } else {
                dnsb_reply_to(&p, query, n, 0, 1);
                if (q.qtype == ns_t_aaaa)
                        dnsb_aaaa(&p, q.name, ALLOWED_TTL, "2001:db8::1");
                else
                        dnsb_a(&p, q.name, ALLOWED_TTL, addr);
        }
        assert_true(p.n <= size);
        memcpy(out, p.b, p.n);
        return p.n;
}

static int fake_on_udp(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Fake *f = userdata;
        struct sockaddr_storage from;
        socklen_t from_len = sizeof from;
        uint8_t query[4096], out[4096];
        ssize_t n;
        size_t len;

        n = recvfrom(fd, query, sizeof query, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
        if (n < 0)
                return 0;
        f->udp_queries++;
        if (f->mode == FAKE_SILENT)
                return 0;

        if (f->mode == FAKE_WRONG_ID_FIRST) {
                len = fake_reply(f, query, (size_t) n, EVIL_ADDR, out, sizeof out);
                out[1] ^= 0x5a;
                assert_int_equal(sendto(fd, out, len, 0, (struct sockaddr *) &from, from_len), (ssize_t) len);
        } else if (f->mode == FAKE_SPOOF_FIRST) {
                len = fake_reply(f, query, (size_t) n, EVIL_ADDR, out, sizeof out);
                assert_int_equal(sendto(f->spoof, out, len, 0, (struct sockaddr *) &from, from_len), (ssize_t) len);
        }
        len = fake_reply(f, query, (size_t) n, ALLOWED_ADDR, out, sizeof out);
        assert_int_equal(sendto(fd, out, len, 0, (struct sockaddr *) &from, from_len), (ssize_t) len);
        return 0;
}

static int fake_on_conn(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Fake *f = userdata;
        size_t i;
        ssize_t n;

        for (i = 0; i < FAKE_CONNS_MAX; i++)
                if (f->conns[i].src == s)
                        break;
        assert_true(i < FAKE_CONNS_MAX);

        n = recv(fd, f->conns[i].buf + f->conns[i].len, sizeof f->conns[i].buf - f->conns[i].len, MSG_DONTWAIT);
        if (n <= 0) {
                f->conns[i].src = sd_event_source_disable_unref(f->conns[i].src);
                f->conns[i].fd = safe_close(f->conns[i].fd);
                return 0;
        }
        f->conns[i].len += (size_t) n;
        while (f->conns[i].len >= 2) {
                size_t qlen = ((size_t) f->conns[i].buf[0] << 8) | f->conns[i].buf[1], len;
                uint8_t out[4096];

                if (f->conns[i].len < 2 + qlen)
                        break;
                f->tcp_queries++;
                if (f->mode == FAKE_WRONG_ID_FIRST) {
                        len = fake_reply(f, f->conns[i].buf + 2, qlen, EVIL_ADDR, out + 2, sizeof out - 2);
                        out[3] ^= 0x5a;
                } else
                        len = fake_reply(f, f->conns[i].buf + 2, qlen, ALLOWED_ADDR, out + 2, sizeof out - 2);
                out[0] = (uint8_t) (len >> 8);
                out[1] = (uint8_t) len;
                if (f->mode != FAKE_SILENT)
                        assert_int_equal(send(fd, out, len + 2, MSG_NOSIGNAL), (ssize_t) len + 2);
                memmove(f->conns[i].buf, f->conns[i].buf + 2 + qlen, f->conns[i].len - 2 - qlen);
                f->conns[i].len -= 2 + qlen;
        }
        return 0;
}

static int fake_on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Fake *f = userdata;
        int cfd;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return 0;
        for (size_t i = 0; i < FAKE_CONNS_MAX; i++)
                if (!f->conns[i].src) {
                        f->conns[i].fd = cfd;
                        f->conns[i].len = 0;
                        assert_int_equal(sd_event_add_io(sd_event_source_get_event(s), &f->conns[i].src, cfd,
                                                         EPOLLIN, fake_on_conn, f), 0);
                        return 0;
                }
        safe_close(cfd);
        return 0;
}

static int bind_loopback(int type, uint16_t port, struct sockaddr_in *ret) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd;

        fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(fd >= 0);
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        if (type == SOCK_STREAM)
                assert_int_equal(listen(fd, 64), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
        if (ret)
                *ret = sa;
        return fd;
}

static void fake_start(Fake *f, sd_event *e, FakeMode mode) {
        struct sockaddr_in sa;

        *f = (Fake) { .mode = mode, .udp = -EBADF, .tcp = -EBADF, .spoof = -EBADF };
        for (size_t i = 0; i < FAKE_CONNS_MAX; i++)
                f->conns[i].fd = -EBADF;
        /* UDP and TCP on one port, as a resolver has them */
        for (int attempt = 0; attempt < 50 && f->tcp < 0; attempt++) {
                f->udp = safe_close(f->udp);
                f->udp = bind_loopback(SOCK_DGRAM, 0, &sa);
                assert_true(f->udp >= 0);
                f->tcp = bind_loopback(SOCK_STREAM, ntohs(sa.sin_port), NULL);
        }
        assert_true(f->tcp >= 0);
        f->spoof = bind_loopback(SOCK_DGRAM, 0, NULL);
        assert_true(f->spoof >= 0);
        memcpy(&f->addr, &sa, sizeof sa);
        assert_int_equal(sd_event_add_io(e, &f->udp_src, f->udp, EPOLLIN, fake_on_udp, f), 0);
        assert_int_equal(sd_event_add_io(e, &f->tcp_src, f->tcp, EPOLLIN, fake_on_accept, f), 0);
}

static void fake_stop(Fake *f) {
        for (size_t i = 0; i < FAKE_CONNS_MAX; i++) {
                f->conns[i].src = sd_event_source_disable_unref(f->conns[i].src);
                f->conns[i].fd = safe_close(f->conns[i].fd);
        }
        f->udp_src = sd_event_source_disable_unref(f->udp_src);
        f->tcp_src = sd_event_source_disable_unref(f->tcp_src);
        f->udp = safe_close(f->udp);
        f->tcp = safe_close(f->tcp);
        f->spoof = safe_close(f->spoof);
}

/* ---- the callbacks: a profile that allows names starting with "allowed" and "alias" ---- */

static bool readable(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        return poll(&p, 1, 0) > 0;
}

static int cb_decide(void *userdata, const char *name, uint16_t qtype) {
        T *t = userdata;

        t->n_decide++;
        return strneq(name, "allowed", 7) || streq(name, "alias.test");
}

static int cb_answer(void *userdata, const char *name, const DnsAnswer *a) {
        T *t = userdata;

        t->n_answer++;
        t->answer_before_reply = !readable(t->client_fd);
        t->n_addresses = a->n_addresses;
        t->truncated = a->truncated;
        if (a->n_addresses > 0)
                t->first_address = a->addresses[0];
        return t->answer_ret;
}

static void cb_asked(void *userdata, const char *name, uint16_t qtype, const char *verdict) {
        T *t = userdata;

        (void) snprintf(t->last_name, sizeof t->last_name, "%s", name);
        if (streq(verdict, "allowed"))
                t->n_allowed++;
        else if (streq(verdict, "refused"))
                t->n_refused++;
        else if (streq(verdict, "failed"))
                t->n_failed++;
        else
                fail_msg("unknown verdict '%s'", verdict);
}

static const ResolverCallbacks callbacks = {
        .decide = cb_decide,
        .answer = cb_answer,
        .asked = cb_asked,
};

/* ---- fixture ---- */

static void resolver_start(T *t, size_t n_upstreams, usec_t timeout) {
        struct sockaddr_storage up[2];
        int fds[2] = { t->udp, t->tcp };

        for (size_t i = 0; i < n_upstreams; i++)
                up[i] = t->fake[i].addr;
        assert_int_equal(resolver_new(t->event, fds, 2, up, n_upstreams, &callbacks, t, &t->resolver), 0);
        t->udp = t->tcp = -EBADF; /* the resolver's now */
        if (timeout > 0)
                resolver_set_timeout(t->resolver, timeout);
}

static int setup(void **state) {
        T *t = calloc(1, sizeof(T));

        assert_non_null(t);
        assert_int_equal(sd_event_new(&t->event), 0);
        t->udp = bind_loopback(SOCK_DGRAM, 0, &t->udp_addr);
        t->tcp = bind_loopback(SOCK_STREAM, 0, &t->tcp_addr);
        assert_true(t->udp >= 0 && t->tcp >= 0);
        fake_start(&t->fake[0], t->event, FAKE_ANSWER);
        fake_start(&t->fake[1], t->event, FAKE_ANSWER);
        t->client_fd = -EBADF;
        *state = t;
        return 0;
}

static int teardown(void **state) {
        T *t = *state;

        t->resolver = resolver_free(t->resolver);
        fake_stop(&t->fake[0]);
        fake_stop(&t->fake[1]);
        safe_close(t->udp);
        safe_close(t->tcp);
        safe_close(t->client_fd);
        sd_event_unref(t->event);
        free(t);
        return 0;
}

static usec_t now_usec(void) {
        struct timespec ts;

        assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / 1000;
}

/* Runs the loop until fd is readable or `timeout` passed; true if readable. */
static bool run_until_readable(T *t, int fd, usec_t timeout) {
        usec_t end = now_usec() + timeout;

        while (now_usec() < end) {
                if (readable(fd))
                        return true;
                assert_true(sd_event_run(t->event, 5 * USEC_PER_MSEC) >= 0);
        }
        return readable(fd);
}

static void run_for(T *t, usec_t usec) {
        usec_t end = now_usec() + usec;

        while (now_usec() < end)
                assert_true(sd_event_run(t->event, 5 * USEC_PER_MSEC) >= 0);
}

static int udp_client(T *t) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &t->udp_addr, sizeof t->udp_addr), 0);
        safe_close(t->client_fd);
        t->client_fd = fd;
        return fd;
}

static size_t make_query(const char *name, uint16_t type, uint16_t id, uint8_t *buf, size_t size) {
        int n = res_mkquery(ns_o_query, name, ns_c_in, type, NULL, 0, NULL, buf, (int) size);

        assert_true(n > 0);
        dns_packet_set_id(buf, id);
        return (size_t) n;
}

/* A query over UDP; the reply's length, 0 if none came within `timeout`. */
static size_t udp_ask(T *t, const char *name, uint16_t type, uint16_t id, usec_t timeout, uint8_t *reply, size_t size) {
        uint8_t q[512];
        size_t n = make_query(name, type, id, q, sizeof q);
        int fd = udp_client(t);
        ssize_t k;

        assert_int_equal(send(fd, q, n, 0), (ssize_t) n);
        if (!run_until_readable(t, fd, timeout))
                return 0;
        k = recv(fd, reply, size, 0);
        assert_true(k >= 12);
        return (size_t) k;
}

static int rcode_of(const uint8_t *pkt) {
        return pkt[3] & 0xf;
}

static void assert_first_address(T *t, const char *addr, uint32_t ttl) {
        char buf[INET6_ADDRSTRLEN];

        assert_non_null(inet_ntop(t->first_address.family, t->first_address.addr, buf, sizeof buf));
        assert_string_equal(buf, addr);
        assert_int_equal(t->first_address.ttl, ttl);
}

/* ---- tests ---- */

static void test_udp_allowed(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        resolver_start(t, 1, 0);
        n = udp_ask(t, "Allowed.Test", ns_t_a, 0x4242, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(dns_packet_get_id(reply), 0x4242);
        assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
        assert_int_equal(t->fake[0].udp_queries, 1);
        assert_int_equal(t->fake[0].tcp_queries, 0);
        assert_int_equal(t->n_answer, 1);
        assert_true(t->answer_before_reply);
        assert_int_equal(t->n_addresses, 1);
        assert_first_address(t, ALLOWED_ADDR, ALLOWED_TTL);
        assert_int_equal(t->n_allowed, 1);
        assert_string_equal(t->last_name, "allowed.test");

        /* the reply is the upstream's, read back as an answer to the client's question */
        {
                _cleanup_(dns_answer_done) DnsAnswer a = {};
                uint8_t q[512];
                size_t qn = make_query("allowed.test", ns_t_a, 0x4242, q, sizeof q);
                DnsQuestion question;

                assert_int_equal(dns_query_parse(q, qn, &question), 0);
                assert_int_equal(dns_answer_parse(reply, n, &question, &a), 0);
                assert_int_equal(a.n_addresses, 1);
        }

        /* AAAA, and a CNAME chain whose unrelated record is not passed on */
        n = udp_ask(t, "allowed.test", ns_t_aaaa, 7, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(t->n_answer, 2);
        assert_first_address(t, "2001:db8::1", ALLOWED_TTL);
        n = udp_ask(t, "alias.test", ns_t_a, 8, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(t->n_answer, 3);
        assert_int_equal(t->n_addresses, 1);
        assert_first_address(t, "192.0.2.7", 30);
        assert_int_equal(t->n_allowed, 3);
}

static void test_udp_refused(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        resolver_start(t, 1, 0);
        n = udp_ask(t, "denied.test", ns_t_a, 0x1111, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(dns_packet_get_id(reply), 0x1111);
        assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
        assert_int_equal(reply[2] & 0x80, 0x80);     /* QR */
        run_for(t, 50 * USEC_PER_MSEC);
        assert_int_equal(t->fake[0].udp_queries + t->fake[0].tcp_queries, 0);
        assert_int_equal(t->n_answer, 0);
        assert_int_equal(t->n_refused, 1);
        assert_string_equal(t->last_name, "denied.test");

        /* class CH is refused before the policy is asked */
        {
                DnsBuilder p;
                int fd = udp_client(t);
                unsigned decided = t->n_decide;

                dnsb_header(&p, 0x2222, 0x0100, 1, 0, 0, 0);
                dnsb_question(&p, "allowed.bind", ns_t_txt, ns_c_chaos);
                assert_int_equal(send(fd, p.b, p.n, 0), (ssize_t) p.n);
                assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
                assert_true(recv(fd, reply, sizeof reply, 0) >= 12);
                assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
                assert_int_equal(t->n_decide, decided);
        }
        assert_int_equal(t->fake[0].udp_queries + t->fake[0].tcp_queries, 0);
}

static void test_bad_queries(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        int fd;

        resolver_start(t, 1, 0);
        fd = udp_client(t);

        /* malformed: FORMERR */
        assert_int_equal(send(fd, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c\0\1\0\1", 18, 0), 18);
        assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
        assert_true(recv(fd, reply, sizeof reply, 0) == 12);
        assert_int_equal(rcode_of(reply), DNS_RCODE_FORMERR);

        /* opcode STATUS: NOTIMP */
        assert_int_equal(send(fd, "\x12\x35\x10\x00\x00\x01\x00\x00\x00\x00\x00\x00\1a\0\0\1\0\1", 19, 0), 19);
        assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
        assert_true(recv(fd, reply, sizeof reply, 0) == 19);
        assert_int_equal(rcode_of(reply), DNS_RCODE_NOTIMP);

        /* a name with a dot inside a label: REFUSED */
        assert_int_equal(send(fd, "\x12\x36\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\3a.b\0\0\1\0\1", 21, 0), 21);
        assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
        assert_true(recv(fd, reply, sizeof reply, 0) == 21);
        assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);

        /* a response, and a runt: no reply at all */
        assert_int_equal(send(fd, "\x12\x37\x81\x80\x00\x01\x00\x00\x00\x00\x00\x00\1a\0\0\1\0\1", 19, 0), 19);
        assert_int_equal(send(fd, "\x12\x38\x01", 3, 0), 3);
        assert_false(run_until_readable(t, fd, 100 * USEC_PER_MSEC));
        assert_int_equal(t->n_decide, 0);
        assert_int_equal(t->fake[0].udp_queries, 0);
}

static void test_upstream_timeout(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        usec_t start;
        size_t n;

        t->fake[0].mode = FAKE_SILENT;
        t->fake[1].mode = FAKE_SILENT;
        resolver_start(t, 2, 100 * USEC_PER_MSEC);
        start = now_usec();
        n = udp_ask(t, "allowed.slow", ns_t_a, 0x3333, 3 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_true(now_usec() - start >= 200 * USEC_PER_MSEC);
        assert_int_equal(dns_packet_get_id(reply), 0x3333);
        assert_int_equal(rcode_of(reply), DNS_RCODE_SERVFAIL);
        assert_int_equal(t->fake[0].udp_queries, 1);
        assert_int_equal(t->fake[1].udp_queries, 1);
        assert_int_equal(t->n_answer, 0);
        assert_int_equal(t->n_failed, 1);
        assert_int_equal(t->n_allowed, 0);
}

static void test_upstream_fallback(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        /* the first upstream is silent, the second answers */
        t->fake[0].mode = FAKE_SILENT;
        resolver_start(t, 2, 100 * USEC_PER_MSEC);
        n = udp_ask(t, "allowed.test", ns_t_a, 0x3434, 3 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
        assert_int_equal(t->fake[0].udp_queries, 1);
        assert_int_equal(t->fake[1].udp_queries, 1);
        assert_int_equal(t->n_answer, 1);

        /* an upstream that is not there (ICMP port unreachable): the next one at once */
        fake_stop(&t->fake[0]);
        run_for(t, 10 * USEC_PER_MSEC);
        n = udp_ask(t, "allowed.test", ns_t_a, 0x3535, 50 * USEC_PER_MSEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
        assert_int_equal(t->fake[1].udp_queries, 2);
}

static int tcp_client(T *t) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &t->tcp_addr, sizeof t->tcp_addr), 0);
        assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
        return fd;
}

/* Reads one framed reply from a TCP client socket, running the loop meanwhile. */
static size_t tcp_read_reply(T *t, int fd, uint8_t *buf, size_t size) {
        size_t have = 0, need = 2;

        while (have < need) {
                ssize_t k;

                assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
                k = recv(fd, buf + have, need - have, 0);
                assert_true(k > 0);
                have += (size_t) k;
                if (have == 2 && need == 2) {
                        need = 2 + (((size_t) buf[0] << 8) | buf[1]);
                        assert_true(need <= size);
                }
        }
        return need - 2;
}

static void test_tcp_two_queries(void **state) {
        T *t = *state;
        uint8_t out[1024], reply[4096];
        size_t n1, n2, len;
        int fd;

        resolver_start(t, 1, 0);
        fd = tcp_client(t);
        safe_close(t->client_fd);
        t->client_fd = fd;

        /* two framed queries in one write */
        n1 = make_query("allowed.one", ns_t_a, 0x0101, out + 2, 500);
        out[0] = (uint8_t) (n1 >> 8);
        out[1] = (uint8_t) n1;
        n2 = make_query("allowed.two", ns_t_a, 0x0202, out + 2 + n1 + 2, 500);
        out[2 + n1] = (uint8_t) (n2 >> 8);
        out[2 + n1 + 1] = (uint8_t) n2;
        assert_int_equal(send(fd, out, 4 + n1 + n2, 0), (ssize_t) (4 + n1 + n2));

        for (int i = 0; i < 2; i++) {
                uint16_t id;

                len = tcp_read_reply(t, fd, reply, sizeof reply);
                assert_true(len >= 12);
                id = dns_packet_get_id(reply + 2);
                assert_true(id == 0x0101 || id == 0x0202);
                assert_int_equal(rcode_of(reply + 2), DNS_RCODE_NOERROR);
        }
        assert_int_equal(t->fake[0].tcp_queries, 2);
        assert_int_equal(t->fake[0].udp_queries, 0);
        assert_int_equal(t->n_answer, 2);
        assert_true(t->answer_before_reply);
        assert_int_equal(t->n_allowed, 2);

        /* a query in pieces, then a refused one, on the same connection */
        n1 = make_query("allowed.three", ns_t_a, 0x0303, out + 2, 500);
        out[0] = (uint8_t) (n1 >> 8);
        out[1] = (uint8_t) n1;
        assert_int_equal(send(fd, out, 1, 0), 1);
        run_for(t, 20 * USEC_PER_MSEC);
        assert_int_equal(send(fd, out + 1, 5, 0), 5);
        run_for(t, 20 * USEC_PER_MSEC);
        assert_int_equal(send(fd, out + 6, n1 - 4, 0), (ssize_t) n1 - 4);
        len = tcp_read_reply(t, fd, reply, sizeof reply);
        assert_int_equal(dns_packet_get_id(reply + 2), 0x0303);
        assert_int_equal(rcode_of(reply + 2), DNS_RCODE_NOERROR);

        n1 = make_query("nope.test", ns_t_a, 0x0404, out + 2, 500);
        out[0] = (uint8_t) (n1 >> 8);
        out[1] = (uint8_t) n1;
        assert_int_equal(send(fd, out, n1 + 2, 0), (ssize_t) n1 + 2);
        len = tcp_read_reply(t, fd, reply, sizeof reply);
        assert_int_equal(dns_packet_get_id(reply + 2), 0x0404);
        assert_int_equal(rcode_of(reply + 2), DNS_RCODE_REFUSED);
        assert_int_equal(t->fake[0].tcp_queries, 3);
}

static void test_tcp_half_close(void **state) {
        T *t = *state;
        uint8_t out[512], reply[4096];
        size_t n;
        int fd;

        resolver_start(t, 1, 0);
        fd = tcp_client(t);
        safe_close(t->client_fd);
        t->client_fd = fd;
        n = make_query("allowed.test", ns_t_a, 0x0505, out + 2, 500);
        out[0] = (uint8_t) (n >> 8);
        out[1] = (uint8_t) n;
        assert_int_equal(send(fd, out, n + 2, 0), (ssize_t) n + 2);
        assert_int_equal(shutdown(fd, SHUT_WR), 0);
        assert_true(tcp_read_reply(t, fd, reply, sizeof reply) >= 12);
        assert_int_equal(dns_packet_get_id(reply + 2), 0x0505);
        /* then the resolver closes its side */
        assert_true(run_until_readable(t, fd, 2 * USEC_PER_SEC));
        assert_int_equal(recv(fd, reply, sizeof reply, 0), 0);
}

static void test_wrong_id_ignored(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        t->fake[0].mode = FAKE_WRONG_ID_FIRST;
        resolver_start(t, 1, 0);
        n = udp_ask(t, "allowed.test", ns_t_a, 0x6666, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(dns_packet_get_id(reply), 0x6666);
        assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
        assert_int_equal(t->n_answer, 1);
        assert_int_equal(t->n_addresses, 1);
        assert_first_address(t, ALLOWED_ADDR, ALLOWED_TTL);
        /* and the one reply the client got carries the right address */
        assert_non_null(memmem(reply, n, "\xc0\x00\x02\x01", 4));
        assert_null(memmem(reply, n, "\x06\x06\x06\x06", 4));
        assert_false(run_until_readable(t, t->client_fd, 50 * USEC_PER_MSEC));

        /* over TCP, a wrong id spoils the stream: the next upstream (none here) */
        {
                uint8_t out[512];
                int fd = tcp_client(t);

                safe_close(t->client_fd);
                t->client_fd = fd;
                n = make_query("allowed.test", ns_t_a, 0x6767, out + 2, 500);
                out[0] = (uint8_t) (n >> 8);
                out[1] = (uint8_t) n;
                assert_int_equal(send(fd, out, n + 2, 0), (ssize_t) n + 2);
                assert_true(tcp_read_reply(t, fd, reply, sizeof reply) >= 12);
                assert_int_equal(rcode_of(reply + 2), DNS_RCODE_SERVFAIL);
                assert_int_equal(t->n_answer, 1);
        }
}

static void test_spoofed_source_ignored(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        t->fake[0].mode = FAKE_SPOOF_FIRST;
        resolver_start(t, 1, 0);
        n = udp_ask(t, "allowed.test", ns_t_a, 0x7777, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(t->n_answer, 1);
        assert_first_address(t, ALLOWED_ADDR, ALLOWED_TTL);
        assert_null(memmem(reply, n, "\x06\x06\x06\x06", 4));
}

static void test_truncated_passed_back(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        t->fake[0].mode = FAKE_TRUNCATE;
        resolver_start(t, 1, 0);
        n = udp_ask(t, "allowed.big", ns_t_a, 0x7878, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(dns_packet_get_id(reply), 0x7878);
        assert_int_equal(reply[2] & 0x02, 0x02);      /* TC */
        assert_int_equal(t->n_answer, 1);
        assert_true(t->truncated);
        assert_int_equal(t->n_addresses, 0);
}

static void test_answer_callback_fails(void **state) {
        T *t = *state;
        uint8_t reply[4096];
        size_t n;

        t->answer_ret = -EIO;
        resolver_start(t, 1, 0);
        n = udp_ask(t, "allowed.test", ns_t_a, 0x8888, 2 * USEC_PER_SEC, reply, sizeof reply);
        assert_true(n > 0);
        assert_int_equal(dns_packet_get_id(reply), 0x8888);
        assert_int_equal(rcode_of(reply), DNS_RCODE_SERVFAIL);
        assert_int_equal(t->n_answer, 1);
        assert_int_equal(t->n_failed, 1);
        assert_int_equal(t->n_allowed, 0);
}

static void test_in_flight_limit(void **state) {
        T *t = *state;
        uint8_t q[512], reply[4096];
        int fd;

        t->fake[0].mode = FAKE_SILENT;
        resolver_start(t, 1, 10 * USEC_PER_SEC);
        fd = udp_client(t);
        for (unsigned i = 0; i < RESOLVER_QUERIES_MAX; i++) {
                size_t n = make_query("allowed.test", ns_t_a, (uint16_t) (0x1000 + i), q, sizeof q);

                assert_int_equal(send(fd, q, n, 0), (ssize_t) n);
        }
        /* every query forwarded (however long a loaded machine takes), none answered */
        for (usec_t end = now_usec() + 5 * USEC_PER_SEC;
             t->fake[0].udp_queries < RESOLVER_QUERIES_MAX && now_usec() < end;)
                assert_true(sd_event_run(t->event, 5 * USEC_PER_MSEC) >= 0);
        run_for(t, 50 * USEC_PER_MSEC);
        assert_false(readable(fd));
        assert_int_equal(t->fake[0].udp_queries, RESOLVER_QUERIES_MAX);

        {
                size_t n = make_query("allowed.test", ns_t_a, 0x2000, q, sizeof q);

                assert_int_equal(send(fd, q, n, 0), (ssize_t) n);
        }
        assert_true(run_until_readable(t, fd, USEC_PER_SEC));
        assert_true(recv(fd, reply, sizeof reply, 0) >= 12);
        assert_int_equal(dns_packet_get_id(reply), 0x2000);
        assert_int_equal(rcode_of(reply), DNS_RCODE_SERVFAIL);
        assert_int_equal(t->fake[0].udp_queries, RESOLVER_QUERIES_MAX);
        assert_int_equal(t->n_failed, 1);
}

static void test_tcp_connection_limit(void **state) {
        T *t = *state;
        int fds[RESOLVER_CONNECTIONS_MAX + 1];
        uint8_t buf[512];

        resolver_start(t, 1, 0);
        for (size_t i = 0; i <= RESOLVER_CONNECTIONS_MAX; i++) {
                fds[i] = tcp_client(t);
                run_for(t, 10 * USEC_PER_MSEC);
        }
        /* the one too many is closed at once; the others stay open */
        assert_true(run_until_readable(t, fds[RESOLVER_CONNECTIONS_MAX], USEC_PER_SEC));
        assert_true(recv(fds[RESOLVER_CONNECTIONS_MAX], buf, sizeof buf, 0) <= 0);
        for (size_t i = 0; i < RESOLVER_CONNECTIONS_MAX; i++)
                assert_false(readable(fds[i]));

        /* closing one makes room */
        safe_close(fds[0]);
        run_for(t, 20 * USEC_PER_MSEC);
        fds[0] = tcp_client(t);
        run_for(t, 20 * USEC_PER_MSEC);
        assert_false(readable(fds[0]));

        for (size_t i = 0; i <= RESOLVER_CONNECTIONS_MAX; i++)
                safe_close(fds[i]);
}

static void test_resolver_new_fds_owned(void **state) {
        T *t = *state;
        struct sockaddr_storage up = t->fake[0].addr;
        ResolverCallbacks no_decide = {};
        Resolver *r = NULL;
        int fds[2] = { t->udp, t->tcp };

        /* refused, and the fds are closed all the same */
        assert_int_equal(resolver_new(t->event, fds, 2, &up, 1, &no_decide, t, &r), -EINVAL);
        assert_null(r);
        assert_int_equal(fcntl(fds[0], F_GETFD), -1);
        assert_int_equal(fcntl(fds[1], F_GETFD), -1);
        t->udp = t->tcp = -EBADF;
        assert_null(resolver_free(NULL));
}

static void test_upstream_parse(void **state) {
        static const struct {
                const char *s;
                int family;
                const char *addr;
                uint16_t port;
        } table[] = {
                { "1.2.3.4", AF_INET, "1.2.3.4", 53 },
                { "127.0.0.53:5353", AF_INET, "127.0.0.53", 5353 },
                { "::1", AF_INET6, "::1", 53 },
                { "[::1]", AF_INET6, "::1", 53 },
                { "[2001:db8::1]:65535", AF_INET6, "2001:db8::1", 65535 },
                { "[fe80::1%1]:53", AF_INET6, "fe80::1", 53 },
                { "fe80::1%lo", AF_INET6, "fe80::1", 53 },
                { "[fe80::1%no-such-if0]", 0, NULL, 0 },
                { "[fe80::1%0]", 0, NULL, 0 },
                { "", 0, NULL, 0 },
                { "1.2.3.4:", 0, NULL, 0 },
                { "1.2.3.4:0", 0, NULL, 0 },
                { "1.2.3.4:65536", 0, NULL, 0 },
                { "1.2.3.4:53x", 0, NULL, 0 },
                { "1.2.3.4:+53", 0, NULL, 0 },
                { "1.2.3", 0, NULL, 0 },
                { "[::1", 0, NULL, 0 },
                { "[::1]x", 0, NULL, 0 },
                { "[::1]:", 0, NULL, 0 },
                { "[1.2.3.4]:53", 0, NULL, 0 },
                { "dns.example", 0, NULL, 0 },
                { ":53", 0, NULL, 0 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct sockaddr_storage sa = {};
                char buf[INET6_ADDRSTRLEN] = "";
                uint16_t port = 0;
                int r;

                r = resolver_upstream_parse(table[i].s, &sa);
                if (!table[i].addr) {
                        check_row(failures, r == -EINVAL, "'%s': %d", table[i].s, r);
                        continue;
                }
                check_row(failures, r == 0, "'%s': %d", table[i].s, r);
                check_row(failures, sa.ss_family == table[i].family, "'%s'", table[i].s);
                if (sa.ss_family == AF_INET) {
                        (void) inet_ntop(AF_INET, &((struct sockaddr_in *) &sa)->sin_addr, buf, sizeof buf);
                        port = ntohs(((struct sockaddr_in *) &sa)->sin_port);
                } else if (sa.ss_family == AF_INET6) {
                        (void) inet_ntop(AF_INET6, &((struct sockaddr_in6 *) &sa)->sin6_addr, buf, sizeof buf);
                        port = ntohs(((struct sockaddr_in6 *) &sa)->sin6_port);
                }
                check_row(failures, streq(buf, table[i].addr), "'%s': %s", table[i].s, buf);
                check_row(failures, port == table[i].port, "'%s': port %u", table[i].s, port);
        }
        assert_int_equal(failures, 0);
}

static void test_resolv_conf(void **state) {
        char path[] = "/tmp/test-resolver-XXXXXX";
        _cleanup_free_ struct sockaddr_storage *list = NULL;
        size_t n = 0;
        int fd;
        FILE *f;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs("# a comment\n"
              "search example.com\n"
              "options edns0 trust-ad\n"
              "nameserver not-an-address\n"
              "  nameserver\t127.0.0.53   # systemd-resolved\n"
              "nameserver 2001:db8::53\n"
              ";nameserver 9.9.9.9\n"
              "nameservers 8.8.4.4\n"
              "nameserver 192.0.2.53\n"
              "nameserver 192.0.2.54\n", f);
        assert_int_equal(fclose(f), 0);

        assert_int_equal(resolver_upstreams_from_resolv_conf(path, &list, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(list[0].ss_family, AF_INET);
        assert_int_equal(ntohl(((struct sockaddr_in *) &list[0])->sin_addr.s_addr), 0x7f000035);
        assert_int_equal(ntohs(((struct sockaddr_in *) &list[0])->sin_port), 53);
        assert_int_equal(list[1].ss_family, AF_INET6);
        assert_int_equal(ntohs(((struct sockaddr_in6 *) &list[1])->sin6_port), 53);
        assert_int_equal(list[2].ss_family, AF_INET);
        assert_int_equal(ntohl(((struct sockaddr_in *) &list[2])->sin_addr.s_addr), 0xc0000235);
        list = mfree(list);

        /* none named: 127.0.0.1 */
        f = fopen(path, "we");
        assert_non_null(f);
        fputs("options ndots:2\n", f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(resolver_upstreams_from_resolv_conf(path, &list, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(ntohl(((struct sockaddr_in *) &list[0])->sin_addr.s_addr), INADDR_LOOPBACK);
        list = mfree(list);

        assert_int_equal(unlink(path), 0);
        assert_int_equal(resolver_upstreams_from_resolv_conf(path, &list, &n), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_udp_allowed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_udp_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_queries, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upstream_timeout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upstream_fallback, setup, teardown),
                cmocka_unit_test_setup_teardown(test_tcp_two_queries, setup, teardown),
                cmocka_unit_test_setup_teardown(test_tcp_half_close, setup, teardown),
                cmocka_unit_test_setup_teardown(test_wrong_id_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_spoofed_source_ignored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_truncated_passed_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_answer_callback_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_in_flight_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_tcp_connection_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_resolver_new_fds_owned, setup, teardown),
                cmocka_unit_test(test_upstream_parse),
                cmocka_unit_test(test_resolv_conf),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
