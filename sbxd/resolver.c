/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's DNS resolver: the run's queries arrive on sockets in its namespace; allowed ones are forwarded,
 * each on a socket of its own, to the host's resolvers; the answer's addresses go to the caller before the
 * reply goes back. Everything runs on sbxd's sd-event loop. */
#include <fcntl.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/random.h>

#include "log.h"
#include "resolver.h"

#define UDP_BATCH 32        /* datagrams read per wake-up, so one busy socket cannot starve the others */
#define TIMER_ACCURACY_USEC (1 * USEC_PER_MSEC)
#define FRAME_MAX (2 + DNS_PACKET_MAX)

/* A non-blocking call that found nothing to do. */
static bool errno_is_again(int e) {
        return e == EAGAIN || e == EWOULDBLOCK;
}

typedef struct Connection Connection;
typedef struct Query Query;

typedef struct Listener {
        Resolver *resolver;
        int fd;
        int socktype;
        sd_event_source *source;
} Listener;

/* Where a reply goes: a UDP peer of a listener, or a client's TCP connection. */
typedef struct Client {
        Listener *listener;
        struct sockaddr_storage addr;
        socklen_t addr_len;
        Connection *conn;
} Client;

struct Connection {
        Resolver *resolver;
        Connection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *idle;
        uint8_t *in;              /* FRAME_MAX bytes: a partly read frame */
        size_t in_len;
        uint8_t *out;             /* framed replies not written yet */
        size_t out_len;
        unsigned n_queries;
        bool eof;                 /* the client shut its side: answer what is pending, then close */
};

struct Query {
        Resolver *resolver;
        Query *prev, *next;
        Client client;
        bool tcp;
        uint16_t client_id;
        DnsQuestion question;     /* with the id sent upstream */
        uint8_t *packet;          /* 2-byte length, then the query as sent upstream */
        size_t size;              /* of the query (without the length) */
        size_t upstream;          /* index of the one being asked */
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
        size_t sent;              /* TCP: bytes of the framed query written */
        uint8_t *reply;           /* TCP: FRAME_MAX bytes: the framed reply read so far */
        size_t reply_len;
};

struct Resolver {
        sd_event *event;
        ResolverCallbacks cb;
        void *userdata;
        struct sockaddr_storage *upstreams;
        size_t n_upstreams;
        usec_t timeout_usec;
        Listener *listeners;
        size_t n_listeners;
        Query *queries;
        unsigned n_queries;
        Connection *connections;
        unsigned n_connections;
        uint8_t buf[DNS_PACKET_MAX + 1];
};

static socklen_t sockaddr_len(const struct sockaddr_storage *sa) {
        return sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static bool sockaddr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
        if (a->ss_family != b->ss_family)
                return false;
        if (a->ss_family == AF_INET) {
                const struct sockaddr_in *x = (const struct sockaddr_in *) a, *y = (const struct sockaddr_in *) b;
                return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
        }
        if (a->ss_family == AF_INET6) {
                const struct sockaddr_in6 *x = (const struct sockaddr_in6 *) a, *y = (const struct sockaddr_in6 *) b;
                return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
        }
        return false;
}

static void asked(Resolver *r, const char *name, uint16_t qtype, const char *verdict) {
        log_debug("DNS query '%s' type %u: %s.", name, qtype, verdict);
        if (r->cb.asked)
                r->cb.asked(r->userdata, name, qtype, verdict);
}

/* ---- client connections (TCP) -------------------------------------------------------------------- */

static void query_free(Query *q);
static void handle_query(Resolver *r, uint8_t *pkt, size_t n, const Client *client);

static Connection *connection_free(Connection *c) {
        Resolver *r;

        if (!c)
                return NULL;
        r = c->resolver;
        for (Query *q = r->queries, *next; q; q = next) {
                next = q->next;
                if (q->client.conn == c)
                        query_free(q);
        }
        if (c->prev)
                c->prev->next = c->next;
        else
                r->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        r->n_connections--;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->idle);
        safe_close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
        return NULL;
}

static void connection_touch(Connection *c) {
        (void) sd_event_source_set_time_relative(c->idle, RESOLVER_IDLE_TIMEOUT_USEC);
        (void) sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
}

/* A client that sends queries but does not read the answers: no more queries are read from it while
 * this much is waiting to be written (its replies would otherwise pile up in sbxd). */
#define CONNECTION_OUT_MAX (64U * 1024U)

/* What to wait for next; false when the connection is done with (the caller frees it). */
static bool connection_update(Connection *c) {
        uint32_t events = 0;

        if (c->eof && c->n_queries == 0 && c->out_len == 0)
                return false;
        if (!c->eof && c->out_len < CONNECTION_OUT_MAX)
                events |= EPOLLIN;
        if (c->out_len > 0)
                events |= EPOLLOUT;
        return sd_event_source_set_io_events(c->io, events) >= 0;
}

/* Queues a reply; it is written from the connection's own handler, so that nothing here can free the
 * connection (or the query being answered) under the caller. */
static void connection_send(Connection *c, const uint8_t *pkt, size_t n) {
        uint8_t *p;

        if (n > DNS_PACKET_MAX)
                return;
        p = realloc(c->out, c->out_len + 2 + n);
        if (!p) {
                log_debug("Out of memory, dropping a DNS reply.");
                return;
        }
        c->out = p;
        p[c->out_len] = (uint8_t) (n >> 8);
        p[c->out_len + 1] = (uint8_t) n;
        memcpy(p + c->out_len + 2, pkt, n);
        c->out_len += 2 + n;
        (void) sd_event_source_set_io_events(c->io, (c->eof || c->out_len >= CONNECTION_OUT_MAX ? 0 : EPOLLIN) | EPOLLOUT);
}

static int connection_write(Connection *c) {
        ssize_t k;

        k = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k < 0)
                return errno_is_again(errno) ? 0 : -errno;
        memmove(c->out, c->out + k, c->out_len - (size_t) k);
        c->out_len -= (size_t) k;
        connection_touch(c);
        return 0;
}

static int connection_read(Connection *c) {
        ssize_t k;

        k = recv(c->fd, c->in + c->in_len, FRAME_MAX - c->in_len, MSG_DONTWAIT);
        if (k < 0)
                return errno_is_again(errno) ? 0 : -errno;
        if (k == 0) {
                c->eof = true;
                return 0;
        }
        c->in_len += (size_t) k;
        connection_touch(c);

        for (;;) {
                Client client = { .conn = c };
                size_t len;

                if (c->in_len < 2)
                        break;
                len = ((size_t) c->in[0] << 8) | c->in[1];
                if (c->in_len < 2 + len)
                        break;
                handle_query(c->resolver, c->in + 2, len, &client);
                memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
                c->in_len -= 2 + len;
        }
        return 0;
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;
        int r = 0;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("DNS client connection closed.");
                connection_free(c);
                return 0;
        }
        if ((revents & EPOLLOUT) && c->out_len > 0)
                r = connection_write(c);
        if (r >= 0 && (revents & EPOLLIN) && !c->eof)
                r = connection_read(c);
        if (r < 0)
                log_debug_errno(r, "DNS client connection failed: %m");
        if (r < 0 || !connection_update(c))
                connection_free(c);
        return 0;
}

static int on_connection_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;

        if (c->n_queries > 0 || c->out_len > 0) {
                connection_touch(c);
                return 0;
        }
        log_debug("DNS client connection idle, closing.");
        connection_free(c);
        return 0;
}

static int connection_new(Resolver *r, int fd_in) {
        _cleanup_close_ int fd = fd_in;
        Connection *c;
        int k;

        c = calloc(1, sizeof(Connection));
        if (!c)
                return -ENOMEM;
        *c = (Connection) { .resolver = r, .fd = TAKE_FD(fd), .next = r->connections };
        if (r->connections)
                r->connections->prev = c;
        r->connections = c;
        r->n_connections++;

        c->in = malloc(FRAME_MAX);
        if (!c->in) {
                connection_free(c);
                return -ENOMEM;
        }
        k = sd_event_add_io(r->event, &c->io, c->fd, EPOLLIN, on_connection_io, c);
        if (k >= 0)
                k = sd_event_add_time_relative(r->event, &c->idle, CLOCK_MONOTONIC, RESOLVER_IDLE_TIMEOUT_USEC,
                                               TIMER_ACCURACY_USEC, on_connection_idle, c);
        if (k < 0) {
                connection_free(c);
                return k;
        }
        return 0;
}

/* ---- replies ------------------------------------------------------------------------------------- */

static void client_send(const Client *client, const uint8_t *pkt, size_t n) {
        if (client->conn) {
                connection_send(client->conn, pkt, n);
                return;
        }
        if (sendto(client->listener->fd, pkt, n, MSG_DONTWAIT | MSG_NOSIGNAL,
                   (const struct sockaddr *) &client->addr, client->addr_len) < 0)
                log_debug_errno(-errno, "Failed to send a DNS reply, ignoring: %m");
}

/* An error reply to the query pkt; nothing when pkt cannot be answered (too short, or a response). */
static void client_send_error(const Client *client, const uint8_t *pkt, size_t n, int rcode) {
        uint8_t out[DNS_HEADER_SIZE + DNS_NAME_MAX + 4];
        size_t len;
        int r;

        r = dns_reply_error(pkt, n, rcode, out, sizeof out, &len);
        if (r < 0) {
                log_debug_errno(r, "Cannot answer a DNS packet, dropping it: %m");
                return;
        }
        client_send(client, out, len);
}

/* ---- forwarding ---------------------------------------------------------------------------------- */

static void query_reset_io(Query *q) {
        q->io = sd_event_source_disable_unref(q->io);
        q->timer = sd_event_source_disable_unref(q->timer);
        q->fd = safe_close(q->fd);
        q->sent = 0;
        q->reply_len = 0;
}

static void query_free(Query *q) {
        Resolver *r;

        if (!q)
                return;
        r = q->resolver;
        if (q->prev)
                q->prev->next = q->next;
        else
                r->queries = q->next;
        if (q->next)
                q->next->prev = q->prev;
        r->n_queries--;
        if (q->client.conn)
                q->client.conn->n_queries--;
        query_reset_io(q);
        free(q->packet);
        free(q->reply);
        free(q);
}

/* After a reply or an error went to a TCP client: a connection the client shut may be done now. */
static void connection_check(Connection *c) {
        if (c && !connection_update(c))
                connection_free(c);
}

static void query_fail(Query *q) {
        Connection *c = q->client.conn;

        dns_packet_set_id(q->packet + 2, q->client_id);
        client_send_error(&q->client, q->packet + 2, q->size, DNS_RCODE_SERVFAIL);
        asked(q->resolver, q->question.name, q->question.qtype, "failed");
        query_free(q);
        connection_check(c);
}

/* A reply on the upstream socket: 1 if it answered the query (which is freed then), 0 if it is not the
 * reply to this query and is ignored. */
static int query_got_reply(Query *q, uint8_t *pkt, size_t n) {
        _cleanup_(dns_answer_done) DnsAnswer a = {};
        Resolver *r = q->resolver;
        Connection *c = q->client.conn;
        int k;

        k = dns_answer_parse(pkt, n, &q->question, &a);
        if (k == -EBADMSG) {
                log_debug("Ignoring a DNS reply that does not answer query '%s'.", q->question.name);
                return 0;
        }
        if (k < 0) {
                query_fail(q);
                return 1;
        }
        if (r->cb.answer) {
                k = r->cb.answer(r->userdata, q->question.name, &a);
                if (k < 0) {
                        log_debug_errno(k, "Answer to '%s' not taken: %m", q->question.name);
                        query_fail(q);
                        return 1;
                }
        }
        dns_packet_set_id(pkt, q->client_id);
        client_send(&q->client, pkt, n);
        asked(r, q->question.name, q->question.qtype, "allowed");
        query_free(q);
        connection_check(c);
        return 1;
}

static int query_start(Query *q);

static void query_next_upstream(Query *q) {
        query_reset_io(q);
        q->upstream++;
        if (query_start(q) < 0)
                query_fail(q);
}

static int on_query_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Query *q = userdata;

        log_debug("DNS query '%s' timed out on upstream %zu.", q->question.name, q->upstream);
        query_next_upstream(q);
        return 0;
}

static int on_udp_upstream(Query *q) {
        Resolver *r = q->resolver;

        for (;;) {
                struct sockaddr_storage from = {};
                socklen_t from_len = sizeof from;
                ssize_t n;

                n = recvfrom(q->fd, r->buf, sizeof r->buf, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
                if (n < 0) {
                        if (errno_is_again(errno))
                                return 0;
                        return -errno; /* ECONNREFUSED and the like: the next upstream */
                }
                /* The socket is connected, so the kernel drops other senders; checked all the same. */
                if (!sockaddr_equal(&from, &r->upstreams[q->upstream])) {
                        log_debug("Ignoring a DNS reply from an unexpected address.");
                        continue;
                }
                if (query_got_reply(q, r->buf, (size_t) n) > 0)
                        return 1;
        }
}

static int on_tcp_upstream(Query *q, uint32_t revents) {
        ssize_t k;
        size_t need;

        if (q->sent < 2 + q->size) {
                if (!(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                        return 0;
                k = send(q->fd, q->packet + q->sent, 2 + q->size - q->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0)
                        return errno_is_again(errno) ? 0 : -errno;
                q->sent += (size_t) k;
                if (q->sent == 2 + q->size)
                        return sd_event_source_set_io_events(q->io, EPOLLIN);
                return 0;
        }

        if (!q->reply) {
                q->reply = malloc(FRAME_MAX);
                if (!q->reply)
                        return -ENOMEM;
        }
        need = q->reply_len < 2 ? 2 : 2 + (((size_t) q->reply[0] << 8) | q->reply[1]);
        k = recv(q->fd, q->reply + q->reply_len, need - q->reply_len, MSG_DONTWAIT);
        if (k < 0)
                return errno_is_again(errno) ? 0 : -errno;
        if (k == 0)
                return -ECONNRESET;
        q->reply_len += (size_t) k;
        if (q->reply_len < 2)
                return 0;
        need = 2 + (((size_t) q->reply[0] << 8) | q->reply[1]);
        if (q->reply_len < need)
                return 0;
        /* The connection is this query's alone: anything but its reply means the stream is not to be
         * trusted, so the next upstream is asked. */
        if (query_got_reply(q, q->reply + 2, need - 2) > 0)
                return 1;
        return -EBADMSG;
}

static int on_upstream_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Query *q = userdata;
        int r;

        r = q->tcp ? on_tcp_upstream(q, revents) : on_udp_upstream(q);
        if (r > 0) /* answered, q is gone */
                return 0;
        if (r < 0) {
                log_debug_errno(r, "DNS upstream %zu failed for '%s': %m", q->upstream, q->question.name);
                query_next_upstream(q);
        }
        return 0;
}

/* Asks upstream q->upstream, or the ones after it until one can be asked; -ENETUNREACH when none is
 * left. */
static int query_start(Query *q) {
        Resolver *r = q->resolver;

        for (; q->upstream < r->n_upstreams; q->upstream++) {
                const struct sockaddr_storage *u = &r->upstreams[q->upstream];
                int k;

                q->fd = socket(u->ss_family, (q->tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (q->fd < 0) {
                        log_debug_errno(-errno, "Failed to create an upstream DNS socket: %m");
                        continue;
                }
                if (connect(q->fd, (const struct sockaddr *) u, sockaddr_len(u)) < 0 && errno != EINPROGRESS) {
                        log_debug_errno(-errno, "Failed to connect to DNS upstream %zu: %m", q->upstream);
                        query_reset_io(q);
                        continue;
                }
                if (!q->tcp && send(q->fd, q->packet + 2, q->size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                        log_debug_errno(-errno, "Failed to send to DNS upstream %zu: %m", q->upstream);
                        query_reset_io(q);
                        continue;
                }
                k = sd_event_add_io(r->event, &q->io, q->fd, q->tcp ? EPOLLOUT : EPOLLIN, on_upstream_io, q);
                if (k >= 0)
                        k = sd_event_add_time_relative(r->event, &q->timer, CLOCK_MONOTONIC, r->timeout_usec,
                                                       TIMER_ACCURACY_USEC, on_query_timeout, q);
                if (k < 0) {
                        query_reset_io(q);
                        return k;
                }
                return 0;
        }
        return -ENETUNREACH;
}

static int query_new(Resolver *r, const uint8_t *pkt, size_t n, const DnsQuestion *question, const Client *client,
                     Query **ret) {
        Query *q;
        uint16_t id;

        if (getrandom(&id, sizeof id, 0) != sizeof id)
                return negative_errno();

        q = calloc(1, sizeof(Query));
        if (!q)
                return -ENOMEM;
        *q = (Query) {
                .resolver = r,
                .client = *client,
                .tcp = client->conn != NULL,
                .client_id = question->id,
                .question = *question,
                .size = n,
                .fd = -EBADF,
                .next = r->queries,
        };
        if (r->queries)
                r->queries->prev = q;
        r->queries = q;
        r->n_queries++;
        if (q->client.conn)
                q->client.conn->n_queries++;

        q->packet = malloc(2 + n);
        if (!q->packet) {
                query_free(q);
                return -ENOMEM;
        }
        q->packet[0] = (uint8_t) (n >> 8);
        q->packet[1] = (uint8_t) n;
        memcpy(q->packet + 2, pkt, n);
        q->question.id = id;
        dns_packet_set_id(q->packet + 2, id);
        *ret = q;
        return 0;
}

/* ---- queries from the run ------------------------------------------------------------------------ */

static void handle_query(Resolver *r, uint8_t *pkt, size_t n, const Client *client) {
        DnsQuestion question;
        Query *q;
        int k;

        k = dns_query_parse(pkt, n, &question);
        if (k < 0) {
                log_debug_errno(k, "Bad DNS query: %m");
                client_send_error(client, pkt, n,
                                  k == -EOPNOTSUPP ? DNS_RCODE_NOTIMP :
                                  k == -EINVAL     ? DNS_RCODE_REFUSED :
                                                     DNS_RCODE_FORMERR);
                return;
        }

        if (question.qclass != DNS_CLASS_IN) {
                client_send_error(client, pkt, n, DNS_RCODE_REFUSED);
                asked(r, question.name, question.qtype, "refused");
                return;
        }

        k = r->cb.decide(r->userdata, question.name, question.qtype);
        if (k <= 0) {
                if (k < 0)
                        log_debug_errno(k, "No decision on '%s': %m", question.name);
                client_send_error(client, pkt, n, k < 0 ? DNS_RCODE_SERVFAIL : DNS_RCODE_REFUSED);
                asked(r, question.name, question.qtype, k < 0 ? "failed" : "refused");
                return;
        }

        if (r->n_queries >= RESOLVER_QUERIES_MAX) {
                log_debug("Too many DNS queries in flight, failing '%s'.", question.name);
                client_send_error(client, pkt, n, DNS_RCODE_SERVFAIL);
                asked(r, question.name, question.qtype, "failed");
                return;
        }

        k = query_new(r, pkt, n, &question, client, &q);
        if (k < 0) {
                log_debug_errno(k, "Failed to forward '%s': %m", question.name);
                client_send_error(client, pkt, n, DNS_RCODE_SERVFAIL);
                asked(r, question.name, question.qtype, "failed");
                return;
        }
        /* query_fail() cannot free the connection here: the query being handled came from it, and a
         * connection is only done when its client shut it. */
        if (query_start(q) < 0)
                query_fail(q);
}

static int on_udp_listener(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        Resolver *r = l->resolver;

        for (unsigned i = 0; i < UDP_BATCH; i++) {
                Client client = { .listener = l, .addr_len = sizeof client.addr };
                ssize_t n;

                n = recvfrom(fd, r->buf, sizeof r->buf, MSG_DONTWAIT, (struct sockaddr *) &client.addr,
                             &client.addr_len);
                if (n < 0) {
                        if (!errno_is_again(errno) && errno != EINTR)
                                log_debug_errno(-errno, "Failed to receive a DNS query, ignoring: %m");
                        break;
                }
                handle_query(r, r->buf, (size_t) n, &client);
        }
        return 0;
}

static int on_tcp_listener(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        Resolver *r = l->resolver;

        for (unsigned i = 0; i < RESOLVER_CONNECTIONS_MAX; i++) {
                int cfd, k;

                cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (!errno_is_again(errno) && errno != EINTR && errno != ECONNABORTED)
                                log_debug_errno(-errno, "Failed to accept a DNS connection, ignoring: %m");
                        break;
                }
                if (r->n_connections >= RESOLVER_CONNECTIONS_MAX) {
                        log_debug("Too many DNS connections, closing a new one.");
                        safe_close(cfd);
                        continue;
                }
                k = connection_new(r, cfd);
                if (k < 0)
                        log_debug_errno(k, "Failed to set up a DNS connection, ignoring: %m");
        }
        return 0;
}

/* ---- setup --------------------------------------------------------------------------------------- */

Resolver *resolver_free(Resolver *r) {
        if (!r)
                return NULL;
        while (r->connections)
                connection_free(r->connections);
        while (r->queries)
                query_free(r->queries);
        for (size_t i = 0; i < r->n_listeners; i++) {
                sd_event_source_disable_unref(r->listeners[i].source);
                safe_close(r->listeners[i].fd);
        }
        free(r->listeners);
        free(r->upstreams);
        sd_event_unref(r->event);
        free(r);
        return NULL;
}

void resolver_set_timeout(Resolver *r, usec_t usec) {
        r->timeout_usec = usec;
}

static int listener_setup(Resolver *r, Listener *l) {
        socklen_t len = sizeof l->socktype;
        int flags;

        if (getsockopt(l->fd, SOL_SOCKET, SO_TYPE, &l->socktype, &len) < 0)
                return -errno;
        if (l->socktype != SOCK_DGRAM && l->socktype != SOCK_STREAM)
                return -EPROTOTYPE;
        flags = fcntl(l->fd, F_GETFL);
        if (flags < 0 || fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return sd_event_add_io(r->event, &l->source, l->fd, EPOLLIN,
                               l->socktype == SOCK_DGRAM ? on_udp_listener : on_tcp_listener, l);
}

int resolver_new(sd_event *e, const int *fds, size_t n_fds, const struct sockaddr_storage *upstreams,
                 size_t n_upstreams, const ResolverCallbacks *cb, void *userdata, Resolver **ret) {
        _cleanup_(resolver_freep) Resolver *r = NULL;
        int k;

        r = calloc(1, sizeof(Resolver));
        if (r)
                r->listeners = calloc(MAX(n_fds, 1U), sizeof(Listener));
        if (!r || !r->listeners) {
                for (size_t i = 0; i < n_fds; i++)
                        safe_close(fds[i]);
                return -ENOMEM;
        }
        /* The fds are ours from here on, whatever happens below. */
        for (size_t i = 0; i < n_fds; i++)
                r->listeners[r->n_listeners++] = (Listener) { .resolver = r, .fd = fds[i] };

        if (!e || !cb || !cb->decide || n_upstreams == 0 || !upstreams || !ret)
                return -EINVAL;
        for (size_t i = 0; i < n_upstreams; i++)
                if (upstreams[i].ss_family != AF_INET && upstreams[i].ss_family != AF_INET6)
                        return -EAFNOSUPPORT;

        r->event = sd_event_ref(e);
        r->cb = *cb;
        r->userdata = userdata;
        r->timeout_usec = RESOLVER_QUERY_TIMEOUT_USEC;
        r->upstreams = calloc(n_upstreams, sizeof(struct sockaddr_storage));
        if (!r->upstreams)
                return -ENOMEM;
        memcpy(r->upstreams, upstreams, n_upstreams * sizeof(struct sockaddr_storage));
        r->n_upstreams = n_upstreams;

        for (size_t i = 0; i < r->n_listeners; i++) {
                k = listener_setup(r, &r->listeners[i]);
                if (k < 0)
                        return k;
        }

        *ret = TAKE_PTR(r);
        return 0;
}

/* ---- upstreams ----------------------------------------------------------------------------------- */

/* A numeric address in the strict inet_pton() forms (no "1.2.3"); an IPv6 one may carry a %scope (an
 * interface name or index). */
static int address_parse(const char *host, uint16_t port, bool v6_only, struct sockaddr_storage *ret) {
        _cleanup_free_ char *copy = NULL;
        struct sockaddr_storage sa = {};
        struct sockaddr_in *sin = (struct sockaddr_in *) &sa;
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &sa;
        char *scope;

        if (isempty(host))
                return -EINVAL;
        if (!v6_only && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
                sin->sin_family = AF_INET;
                sin->sin_port = htons(port);
                *ret = sa;
                return 0;
        }

        copy = strdup(host);
        if (!copy)
                return -ENOMEM;
        scope = strchr(copy, '%');
        if (scope)
                *scope++ = '\0';
        if (inet_pton(AF_INET6, copy, &sin6->sin6_addr) != 1)
                return -EINVAL;
        if (scope) {
                unsigned idx = 0;
                char *end = NULL;

                errno = 0;
                if (*scope >= '0' && *scope <= '9') {
                        unsigned long v = strtoul(scope, &end, 10);

                        if (errno != 0 || *end != '\0' || v == 0 || v > UINT32_MAX)
                                return -EINVAL;
                        idx = (unsigned) v;
                } else
                        idx = if_nametoindex(scope);
                if (idx == 0)
                        return -EINVAL;
                sin6->sin6_scope_id = idx;
        }
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(port);
        *ret = sa;
        return 0;
}

static int port_parse(const char *s, uint16_t *ret) {
        unsigned long v = 0;

        if (isempty(s) || strlen(s) > 5)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*p - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

int resolver_upstream_parse(const char *s, struct sockaddr_storage *ret) {
        _cleanup_free_ char *host = NULL;
        const char *colon, *port_s = NULL;
        uint16_t port = 53;
        bool v6 = false;
        int k;

        if (isempty(s))
                return -EINVAL;
        if (s[0] == '[') {
                const char *end = strchr(s, ']');

                if (!end)
                        return -EINVAL;
                host = strndup(s + 1, (size_t) (end - s - 1));
                if (end[1] == ':')
                        port_s = end + 2;
                else if (end[1] != '\0')
                        return -EINVAL;
                v6 = true;
        } else if ((colon = strchr(s, ':')) && !strchr(colon + 1, ':')) {
                host = strndup(s, (size_t) (colon - s));
                port_s = colon + 1;
        } else
                host = strdup(s);
        if (!host)
                return -ENOMEM;
        if (port_s) {
                k = port_parse(port_s, &port);
                if (k < 0)
                        return k;
        }
        return address_parse(host, port, v6, ret);
}

int resolver_upstreams_from_resolv_conf(const char *path, struct sockaddr_storage **ret, size_t *ret_n) {
        _cleanup_free_ struct sockaddr_storage *list = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0, size = 0;
        FILE *f;

        list = calloc(RESOLVER_UPSTREAMS_MAX, sizeof(struct sockaddr_storage));
        if (!list)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (n < RESOLVER_UPSTREAMS_MAX && getline(&line, &size, f) >= 0) {
                char *save = NULL, *key, *value;

                line[strcspn(line, "#;")] = '\0';
                key = strtok_r(line, " \t\r\n", &save);
                if (!key || !streq(key, "nameserver"))
                        continue;
                value = strtok_r(NULL, " \t\r\n", &save);
                if (value && address_parse(value, 53, false, &list[n]) >= 0)
                        n++;
                else
                        log_debug("Ignoring nameserver line with '%s' in %s.", strna(value), path);
        }
        fclose(f);

        if (n == 0) {
                /* glibc's default when resolv.conf names none */
                struct sockaddr_in *sin = (struct sockaddr_in *) &list[0];

                *sin = (struct sockaddr_in) {
                        .sin_family = AF_INET,
                        .sin_port = htons(53),
                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                };
                n = 1;
        }
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}
