/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's DNS resolver. The run's DNS packets are redirected to sockets sbxd holds inside the run's
 * network namespace; this answers them on sbxd's event loop: names the run's profile does not allow get
 * REFUSED, allowed ones are forwarded to the host's resolvers, and the addresses of the answer are handed
 * to the caller (for the run's allow-map) before the reply goes back to the run. */

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "dns-packet.h"
#include "util.h"

#define RESOLVER_QUERY_TIMEOUT_USEC (5 * USEC_PER_SEC)      /* per upstream, then the next one */
#define RESOLVER_IDLE_TIMEOUT_USEC (10 * USEC_PER_SEC)      /* a client's TCP connection without traffic */
#define RESOLVER_QUERIES_MAX 64U                            /* in flight per run; beyond: SERVFAIL */
#define RESOLVER_CONNECTIONS_MAX 16U                        /* client TCP connections per run */
#define RESOLVER_UPSTREAMS_MAX 3U                           /* as many "nameserver" lines as glibc reads */

typedef struct Resolver Resolver;

/* Called synchronously from the event loop; none of them may free the Resolver. */
typedef struct ResolverCallbacks {
        /* is this name allowed for the run? return >0 allowed, 0 refused (the resolver answers REFUSED),
         * <0 an error (SERVFAIL) */
        int (*decide)(void *userdata, const char *name, uint16_t qtype);
        /* an allowed name's answer: insert addresses; called before the reply is sent; a negative return
         * makes the reply SERVFAIL. Called for every reply an upstream gives to an allowed name (a->rcode
         * may be other than NOERROR, with no addresses). */
        int (*answer)(void *userdata, const char *name, const DnsAnswer *a);
        /* telemetry: a name asked and what happened ("allowed", "refused", "failed") */
        void (*asked)(void *userdata, const char *name, uint16_t qtype, const char *verdict);
} ResolverCallbacks;

/* fds: sockets created in the run's namespace and bound to the address the run's DNS packets are sent
 * to (127.0.0.53:53, [::1]:53 — a specific address, as replies leave from it): SOCK_DGRAM ones are
 * served directly, SOCK_STREAM ones must be listening. Ownership of the fds passes to the Resolver, also
 * on failure. upstreams: tried in order (at least one). cb->decide must be set; answer and asked may be
 * NULL. */
int resolver_new(sd_event *e, const int *fds, size_t n_fds, const struct sockaddr_storage *upstreams,
                 size_t n_upstreams, const ResolverCallbacks *cb, void *userdata, Resolver **ret);
Resolver *resolver_free(Resolver *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Resolver *, resolver_free);

/* The time given to each upstream before the next one is tried (default RESOLVER_QUERY_TIMEOUT_USEC);
 * applies to queries that start afterwards. */
void resolver_set_timeout(Resolver *r, usec_t usec);

/* The "nameserver" lines of a resolv.conf (IPv4 and IPv6, port 53), the first RESOLVER_UPSTREAMS_MAX of
 * them; none: 127.0.0.1, as glibc does. -errno if the file cannot be read. *ret is malloc'ed. */
int resolver_upstreams_from_resolv_conf(const char *path, struct sockaddr_storage **ret, size_t *ret_n);

/* "ADDR", "ADDR:PORT", "V6", "[V6]" or "[V6]:PORT" (port 53 when not given; a V6 may carry a %scope).
 * -EINVAL if it is none of these. */
int resolver_upstream_parse(const char *s, struct sockaddr_storage *ret);
