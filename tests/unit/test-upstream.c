/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The broker's upstream requests (broker/upstream.c) against an HTTP/1.1 server of the test's own on
 * 127.0.0.1 that counts the connections it accepts: a tenant's next request goes over the connection its
 * last one left open (per origin); another tenant's never does; a request without a key keeps nothing; a failed
 * transfer keeps nothing; the kept handles are bounded per tenant. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "upstream.h"
#include "unit-test.h"

#define CLIENTS_MAX 32

typedef struct Server {
        int listen_fd;
        int stop_pipe[2];
        uint16_t port;
        pthread_t thread;
        pthread_mutex_t lock;
        unsigned accepted;     /* connections accepted so far */
        unsigned requests;
        bool close_after;      /* answer with "Connection: close" and close */
        unsigned hold;         /* answer nothing until this many requests wait, then all of them */
} Server;

static Server srv;

/* one thread, every connection in one poll(): HTTP/1.1 requests without a body, answered "ok" */
static void *server_main(void *userdata) {
        Server *s = userdata;
        struct { int fd; char buf[8192]; size_t n; unsigned waiting; } c[CLIENTS_MAX];
        size_t n_c = 0;
        unsigned n_waiting = 0;

        for (;;) {
                struct pollfd p[CLIENTS_MAX + 2] = {
                        { .fd = s->stop_pipe[0], .events = POLLIN },
                        { .fd = s->listen_fd, .events = POLLIN },
                };

                for (size_t i = 0; i < n_c; i++)
                        p[i + 2] = (struct pollfd) { .fd = c[i].fd, .events = POLLIN };
                if (poll(p, n_c + 2, -1) < 0)
                        continue;
                if (p[0].revents)
                        break;
                if ((p[1].revents & POLLIN) && n_c < CLIENTS_MAX) {
                        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

                        if (fd >= 0) {
                                c[n_c].fd = fd;
                                c[n_c].waiting = 0;
                                c[n_c++].n = 0;
                                pthread_mutex_lock(&s->lock);
                                s->accepted++;
                                pthread_mutex_unlock(&s->lock);
                        }
                }
                for (size_t i = 0; i < n_c; i++) {
                        bool closing = false;
                        ssize_t k;

                        if (!p[i + 2].revents)
                                continue;
                        k = read(c[i].fd, c[i].buf + c[i].n, sizeof(c[i].buf) - 1 - c[i].n);
                        if (k <= 0)
                                closing = true;
                        else {
                                char *end;

                                c[i].n += (size_t) k;
                                c[i].buf[c[i].n] = 0;
                                while ((end = strstr(c[i].buf, "\r\n\r\n"))) {
                                        const char *reply = s->close_after ?
                                                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok" :
                                                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                                        size_t used = (size_t) (end + 4 - c[i].buf);

                                        if (s->hold > 0) {
                                                c[i].waiting++;
                                                if (++n_waiting >= s->hold) {
                                                        for (size_t j = 0; j < n_c; j++)
                                                                for (; c[j].waiting > 0; c[j].waiting--)
                                                                        (void) !write(c[j].fd, reply, strlen(reply));
                                                        n_waiting = 0;
                                                }
                                        } else
                                                (void) !write(c[i].fd, reply, strlen(reply));
                                        pthread_mutex_lock(&s->lock);
                                        s->requests++;
                                        pthread_mutex_unlock(&s->lock);
                                        memmove(c[i].buf, c[i].buf + used, c[i].n - used + 1);
                                        c[i].n -= used;
                                        if (s->close_after)
                                                closing = true;
                                }
                        }
                        if (closing) {
                                close(c[i].fd);
                                c[i--] = c[--n_c];
                                /* p[] no longer lines up with c[]: poll again */
                                break;
                        }
                }
        }
        for (size_t i = 0; i < n_c; i++)
                close(c[i].fd);
        return NULL;
}

static int setup(void **state) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);

        srv = (Server) { .lock = PTHREAD_MUTEX_INITIALIZER };
        srv.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(srv.listen_fd >= 0);
        assert_int_equal(bind(srv.listen_fd, (struct sockaddr *) &a, sizeof(a)), 0);
        assert_int_equal(listen(srv.listen_fd, 16), 0);
        assert_int_equal(getsockname(srv.listen_fd, (struct sockaddr *) &a, &len), 0);
        srv.port = ntohs(a.sin_port);
        assert_int_equal(pipe2(srv.stop_pipe, O_CLOEXEC), 0);
        assert_int_equal(pthread_create(&srv.thread, NULL, server_main, &srv), 0);
        return 0;
}

static int teardown(void **state) {
        (void) !write(srv.stop_pipe[1], "x", 1);
        pthread_join(srv.thread, NULL);
        close(srv.listen_fd);
        close(srv.stop_pipe[0]);
        close(srv.stop_pipe[1]);
        return 0;
}

static unsigned accepted(void) {
        unsigned n;

        pthread_mutex_lock(&srv.lock);
        n = srv.accepted;
        pthread_mutex_unlock(&srv.lock);
        return n;
}

/* one GET of http://HOST:PORT/x with the key's kept connections; its status */
static int get_from(const char *key, const char *host) {
        char url[64];
        UpstreamResponse resp = {};
        GrantReason reason;
        char *error = NULL;
        int r;

        snprintf(url, sizeof(url), "http://%s:%u/x", host, (unsigned) srv.port);
        UpstreamRequest req = {
                .url = url,
                .scheme = GRANT_SCHEME_HTTP,
                .method = GRANT_METHOD_GET,
                .secret_header = "Authorization: Bearer t",
                .max_body = 1024,
                .pool_key = key,
        };
        r = upstream_perform(&req, &resp, &reason, &error);
        if (r < 0) {
                fprintf(stderr, "request failed: %s\n", error ?: "?");
                free(error);
                return r;
        }
        assert_int_equal(resp.body_size, 2);
        assert_memory_equal(resp.body, "ok", 2);
        r = resp.status;
        upstream_response_done(&resp);
        return r;
}

static int get(const char *key) {
        return get_from(key, "127.0.0.1");
}

static const char *const A = "0123456789abcdef0123456789abcdef", *const B = "fedcba9876543210fedcba9876543210";

static void test_reuse_within_tenant(void **state) {
        unsigned a0 = accepted();

        assert_int_equal(get(A), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(upstream_pool_size(A), 1);
        /* the same tenant again, twice: the connection its first request left open */
        assert_int_equal(get(A), 200);
        assert_int_equal(get(A), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(upstream_pool_size(A), 1);
}

static void test_never_across_tenants(void **state) {
        unsigned a0;

        assert_int_equal(get(A), 200);
        a0 = accepted();
        /* B has nothing kept: A's connection is not B's */
        assert_int_equal(upstream_pool_size(B), 0);
        assert_int_equal(get(B), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(get(B), 200);
        assert_int_equal(accepted(), a0 + 1);
        /* and A still has its own */
        assert_int_equal(get(A), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(upstream_pool_size(A), 1);
        assert_int_equal(upstream_pool_size(B), 1);
}

static void test_per_origin(void **state) {
        unsigned a0;

        assert_int_equal(get(A), 200);
        a0 = accepted();
        /* another origin (the same server by another name): a connection of its own */
        assert_int_equal(get_from(A, "localhost"), 200);
        assert_int_equal(accepted(), a0 + 1);
        /* each origin's request then goes over its own kept connection */
        assert_int_equal(get(A), 200);
        assert_int_equal(get_from(A, "localhost"), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(upstream_pool_size(A), 2);
}

static void test_no_key_keeps_nothing(void **state) {
        size_t kept = upstream_pool_size(NULL);
        unsigned a0 = accepted();

        assert_int_equal(get(NULL), 200);
        assert_int_equal(get(NULL), 200);
        assert_int_equal(accepted(), a0 + 2);
        assert_int_equal(upstream_pool_size(NULL), kept);
}

static void test_closed_by_upstream(void **state) {
        unsigned a0;

        assert_int_equal(get(A), 200);
        /* the server closes after each answer: libcurl sees it and connects anew, the requests succeed
         * (how many connections that takes depends on when libcurl notices the close) */
        srv.close_after = true;
        assert_int_equal(get(A), 200);
        assert_int_equal(get(A), 200);
        srv.close_after = false;
        /* then a new connection, kept again for the next request */
        a0 = accepted();
        assert_int_equal(get(A), 200);
        assert_int_equal(accepted(), a0 + 1);
        assert_int_equal(get(A), 200);
        assert_int_equal(accepted(), a0 + 1);
}

static void test_failed_transfer_not_kept(void **state) {
        UpstreamResponse resp = {};
        GrantReason reason;
        char *error = NULL;
        size_t kept = upstream_pool_size("refused");

        /* a port nobody listens on: the transfer fails, its handle is not kept */
        UpstreamRequest req = {
                .url = "http://127.0.0.1:1/x",
                .scheme = GRANT_SCHEME_HTTP,
                .method = GRANT_METHOD_GET,
                .secret_header = "Authorization: Bearer t",
                .max_body = 1024,
                .pool_key = "refused",
        };
        assert_true(upstream_perform(&req, &resp, &reason, &error) < 0);
        assert_int_equal(reason, GRANT_REASON_UPSTREAM);
        free(error);
        assert_int_equal(upstream_pool_size("refused"), kept);
}

static void *get_thread(void *userdata) {
        return (void *) (intptr_t) get(userdata);
}

static void test_bounded_per_tenant(void **state) {
        pthread_t t[6];
        unsigned a0 = accepted();

        /* six requests of A at once (the server answers none before all six are there): six handles, six
         * connections; four are kept, the others closed */
        srv.hold = 6;
        for (size_t i = 0; i < 6; i++)
                assert_int_equal(pthread_create(&t[i], NULL, get_thread, (void *) A), 0);
        for (size_t i = 0; i < 6; i++) {
                void *r;

                assert_int_equal(pthread_join(t[i], &r), 0);
                assert_int_equal((intptr_t) r, 200);
        }
        srv.hold = 0;
        assert_true(accepted() >= a0 + 5);
        assert_int_equal(upstream_pool_size(A), 4);
        assert_true(upstream_pool_size(NULL) <= 32);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reuse_within_tenant),
                cmocka_unit_test(test_never_across_tenants),
                cmocka_unit_test(test_per_origin),
                cmocka_unit_test(test_no_key_keeps_nothing),
                cmocka_unit_test(test_closed_by_upstream),
                cmocka_unit_test(test_failed_transfer_not_kept),
                cmocka_unit_test(test_bounded_per_tenant),
        };

        if (upstream_global_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, setup, teardown);
}
