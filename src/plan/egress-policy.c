/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress compiler (egress.h): a profile's network section in, the entries of a run's LPM tries out.
 * Pure: no libbpf, no syscalls. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "egress-policy.h"

/* ---- the table ---- */

typedef struct EgressNode {
        EgressEntry e;                  /* what the kernel holds */
        unsigned prefixlen;             /* CIDR */
        bool barrier;                   /* an always-denied range: nothing of a shorter prefix is inherited */
        bool is_static;                 /* compiled from the profile; false: made by answers only */
        bool host;                      /* denied as an address of the host (egress_table_deny_address()) */
        struct egress_port_range *own;  /* static ranges at this prefix */
        size_t n_own;
        struct egress_port_range *dyn;  /* from DNS answers (at most EGRESS_DYN_MAX) */
        size_t n_dyn;
} EgressNode;

struct EgressTable {
        NetworkMode mode;
        EgressNode *nodes;
        size_t n_nodes;
        EgressHostRule *hosts;
        size_t n_hosts;
};

/* Answer ranges kept per entry before they are merged (and coalesced) into its value. */
#define EGRESS_DYN_MAX (4 * EGRESS_MAX_PORT_RANGES)

static const uint8_t protocols[] = { IPPROTO_TCP, IPPROTO_UDP };

EgressTable *egress_table_free(EgressTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_nodes; i++) {
                free(t->nodes[i].own);
                free(t->nodes[i].dyn);
        }
        free(t->nodes);
        for (size_t i = 0; i < t->n_hosts; i++) {
                for (size_t j = 0; j < t->hosts[i].n_grants; j++)
                        free(t->hosts[i].grants[j].ranges);
                free(t->hosts[i].grants);
                free(t->hosts[i].name);
        }
        free(t->hosts);
        return mfree(t);
}

NetworkMode egress_table_mode(const EgressTable *t) {
        return t ? t->mode : _NETWORK_MODE_INVALID;
}

size_t egress_table_size(const EgressTable *t) {
        return t ? t->n_nodes : 0;
}

int egress_table_get(const EgressTable *t, size_t i, EgressEntry *ret) {
        if (!t || !ret)
                return -EINVAL;
        if (i >= t->n_nodes)
                return -ENOENT;
        *ret = t->nodes[i].e;
        return 0;
}

static const uint8_t *node_addr(const EgressNode *n) {
        return n->e.family == AF_INET ? n->e.k4.addr : n->e.k6.addr;
}

static uint8_t node_proto(const EgressNode *n) {
        return n->e.family == AF_INET ? n->e.k4.proto : n->e.k6.proto;
}

static void node_init(EgressNode *n, int family, uint8_t proto, const uint8_t addr[], unsigned prefixlen) {
        *n = (EgressNode) { .prefixlen = prefixlen };
        n->e.family = family;
        if (family == AF_INET) {
                n->e.k4.prefixlen = EGRESS_KEY_HDR_BITS + prefixlen;
                n->e.k4.proto = proto;
                memcpy(n->e.k4.addr, addr, 4);
        } else {
                n->e.k6.prefixlen = EGRESS_KEY_HDR_BITS + prefixlen;
                n->e.k6.proto = proto;
                memcpy(n->e.k6.addr, addr, 16);
        }
}

static bool node_is(const EgressNode *n, int family, uint8_t proto, const uint8_t addr[], unsigned prefixlen) {
        return n->e.family == family && node_proto(n) == proto && n->prefixlen == prefixlen &&
               memcmp(node_addr(n), addr, family == AF_INET ? 4 : 16) == 0;
}

static EgressNode *table_find(EgressTable *t, int family, uint8_t proto, const uint8_t addr[],
                              unsigned prefixlen) {
        for (size_t i = 0; i < t->n_nodes; i++)
                if (node_is(&t->nodes[i], family, proto, addr, prefixlen))
                        return &t->nodes[i];
        return NULL;
}

/* The longest prefix strictly shorter than 'prefixlen' that covers addr (same family, same protocol). */
static const EgressNode *table_parent(const EgressTable *t, int family, uint8_t proto, const uint8_t addr[],
                                      unsigned prefixlen) {
        const EgressNode *best = NULL;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const EgressNode *n = &t->nodes[i];

                if (n->e.family != family || node_proto(n) != proto || n->prefixlen >= prefixlen)
                        continue;
                if (best && n->prefixlen <= best->prefixlen)
                        continue;
                if (egress_prefix_contains(node_addr(n), n->prefixlen, addr))
                        best = n;
        }
        return best;
}

static EgressNode *table_add(EgressTable *t, int family, uint8_t proto, const uint8_t addr[],
                             unsigned prefixlen) {
        EgressNode *n = reallocarray(t->nodes, t->n_nodes + 1, sizeof(EgressNode));

        if (!n)
                return NULL;
        t->nodes = n;
        n = &t->nodes[t->n_nodes++];
        node_init(n, family, proto, addr, prefixlen);
        return n;
}

static int node_add_own(EgressNode *n, const struct egress_port_range *r, size_t k) {
        struct egress_port_range *o = reallocarray(n->own, n->n_own + k, sizeof(*r));

        if (!o)
                return -ENOMEM;
        n->own = o;
        memcpy(n->own + n->n_own, r, k * sizeof(*r));
        n->n_own += k;
        return 0;
}

/* ---- merging port ranges ---- */

/* Whether b allows at least whatever a allows, for at least as long. */
static bool range_covers(const struct egress_port_range *b, const struct egress_port_range *a) {
        return b->lo <= a->lo && b->hi >= a->hi &&
               (b->expires_ns == 0 || (a->expires_ns != 0 && b->expires_ns >= a->expires_ns));
}

static void ranges_drop_covered(struct egress_port_range *r, size_t *n) {
        for (size_t i = 0; i < *n;) {
                bool covered = false;

                /* of two equal ones the first stays (the kernel reports the first match's rule) */
                for (size_t j = 0; j < *n && !covered; j++)
                        covered = j != i && range_covers(&r[j], &r[i]) &&
                                  (j < i || !range_covers(&r[i], &r[j]));
                if (covered) {
                        memmove(r + i, r + i + 1, (*n - i - 1) * sizeof(*r));
                        (*n)--;
                } else
                        i++;
        }
}

/* Overlapping or adjacent ranges that expire together become one (the first one's rule). */
static void ranges_coalesce(struct egress_port_range *r, size_t *n) {
        bool changed = true;

        while (changed) {
                changed = false;
                for (size_t i = 0; i < *n && !changed; i++)
                        for (size_t j = i + 1; j < *n && !changed; j++) {
                                if (r[i].expires_ns != r[j].expires_ns)
                                        continue;
                                if ((uint32_t) r[j].lo > (uint32_t) r[i].hi + 1 ||
                                    (uint32_t) r[i].lo > (uint32_t) r[j].hi + 1)
                                        continue;
                                r[i].lo = MIN(r[i].lo, r[j].lo);
                                r[i].hi = MAX(r[i].hi, r[j].hi);
                                memmove(r + j, r + j + 1, (*n - j - 1) * sizeof(*r));
                                (*n)--;
                                changed = true;
                        }
        }
}

/* Drops what other ranges allow already; when more than EGRESS_MAX_PORT_RANGES remain, coalesces.
 * Returns how many remain (possibly still too many). */
static size_t ranges_fit(struct egress_port_range *r, size_t n) {
        ranges_drop_covered(r, &n);
        if (n > EGRESS_MAX_PORT_RANGES) {
                ranges_coalesce(r, &n);
                ranges_drop_covered(r, &n);
        }
        return n;
}

/* The value of node n: its own ranges, its answers' ranges, and (unless it is an always-denied range)
 * the merged ranges of the entry covering it. -E2BIG: more than EGRESS_MAX_PORT_RANGES remain. */
static int node_compute(const EgressTable *t, EgressNode *n) {
        _cleanup_free_ struct egress_port_range *r = NULL;
        const EgressNode *parent = NULL;
        size_t k = 0, total;

        if (!n->barrier)
                parent = table_parent(t, n->e.family, node_proto(n), node_addr(n), n->prefixlen);
        total = n->n_own + n->n_dyn + (parent ? parent->e.v.n_ranges : 0);
        r = calloc(MAX(total, 1u), sizeof(*r));
        if (!r)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_own; i++)
                r[k++] = n->own[i];
        for (size_t i = 0; i < n->n_dyn; i++)
                r[k++] = n->dyn[i];
        for (size_t i = 0; parent && i < parent->e.v.n_ranges; i++)
                r[k++] = parent->e.v.r[i];

        k = ranges_fit(r, k);
        if (k > EGRESS_MAX_PORT_RANGES)
                return -E2BIG;

        memset(n->e.v.r, 0, sizeof(n->e.v.r));
        memcpy(n->e.v.r, r, k * sizeof(*r));
        n->e.v.n_ranges = (uint8_t) k;
        n->e.v.pad = 0;
        for (size_t i = 0; i < k; i++)
                n->e.v.r[i].pad = 0;
        return 0;
}

static int cmp_nodes(const void *a, const void *b) {
        const EgressNode *x = a, *y = b;
        int c;

        if (x->e.family != y->e.family)
                return x->e.family < y->e.family ? -1 : 1;
        if (node_proto(x) != node_proto(y))
                return node_proto(x) < node_proto(y) ? -1 : 1;
        if (x->prefixlen != y->prefixlen)
                return x->prefixlen < y->prefixlen ? -1 : 1;
        c = memcmp(node_addr(x), node_addr(y), x->e.family == AF_INET ? 4 : 16);
        return c;
}

/* ---- compiling ---- */

static int check_mode(const Profile *p, NetworkMode mode, char **ret_error) {
        if (mode < 0 || mode >= _NETWORK_MODE_MAX)
                return error_setf(ret_error, -EINVAL, "network: invalid mode");
        if (mode != p->network && mode != NETWORK_NONE)
                return error_setf(ret_error, -EINVAL, "network: mode %s is not narrower than the profile's (%s)",
                                  network_mode_to_string(mode), network_mode_to_string(p->network));
        return 0;
}

static bool protocol_has(NetProtocol p, uint8_t proto) {
        return p == NET_PROTOCOL_ANY || (p == NET_PROTOCOL_TCP && proto == IPPROTO_TCP) ||
               (p == NET_PROTOCOL_UDP && proto == IPPROTO_UDP);
}

/* A destination's ports as ranges of the rule (every port when it lists none). */
static int destination_ranges(const NetDestination *d, uint16_t rule, struct egress_port_range **ret, size_t *ret_n) {
        size_t n = MAX(d->n_ports, 1u);
        struct egress_port_range *r = calloc(n, sizeof(*r));

        if (!r)
                return -ENOMEM;
        if (d->n_ports == 0)
                r[0] = (struct egress_port_range) { .lo = 0, .hi = 65535, .rule = rule };
        for (size_t i = 0; i < d->n_ports; i++)
                r[i] = (struct egress_port_range) { .lo = d->ports[i].lo, .hi = d->ports[i].hi,
                                                    .rule = rule };
        *ret = r;
        *ret_n = n;
        return 0;
}

/* The address of a destination, checked as the profile parser checks it (a Profile may be made by
 * hand). */
static int destination_prefix(const NetDestination *d, size_t i, int *ret_family, uint8_t ret_addr[],
                              unsigned *ret_prefixlen, char **ret_error) {
        EgressDeniedRow row;
        EgressClass c;
        int r;

        r = egress_prefix_from_string(d->address, ret_family, ret_addr, ret_prefixlen);
        if (r < 0)
                return error_setf(ret_error, -EINVAL, "network.destinations[%zu].address: '%s' is not an address",
                                  i, d->address);
        c = egress_classify(*ret_family, ret_addr, *ret_prefixlen, &row);
        if (c == EGRESS_CLASS_DENIED || (c == EGRESS_CLASS_PRIVATE && !d->private))
                return error_setf(ret_error, -EINVAL, "network.destinations[%zu].address: '%s' lies in a %s", i,
                                  d->address, egress_reason_to_phrase(row.reason));
        if (c == EGRESS_CLASS_PUBLIC && d->private)
                return error_setf(ret_error, -EINVAL,
                                  "network.destinations[%zu].private: '%s' is not in a private or shared range", i,
                                  d->address);
        return 0;
}

static int compile_denied(EgressTable *t) {
        EgressDeniedRow row;

        for (size_t i = 0; egress_denied_row(i, &row) >= 0; i++)
                for (size_t k = 0; k < ELEMENTSOF(protocols); k++) {
                        EgressNode *n = table_add(t, row.family, protocols[k], row.addr, row.prefixlen);

                        if (!n)
                                return -ENOMEM;
                        n->barrier = true;
                        n->is_static = true;
                        n->e.v.reason = (uint8_t) row.reason;
                        n->e.v.rule = (uint16_t) i;
                }
        return 0;
}

static int compile_allow(EgressTable *t, int family, const uint8_t addr[], unsigned prefixlen,
                         uint8_t proto, const struct egress_port_range *r, size_t k, uint16_t rule) {
        EgressNode *n = table_find(t, family, proto, addr, prefixlen);
        bool fresh = !n;

        if (!n) {
                n = table_add(t, family, proto, addr, prefixlen);
                if (!n)
                        return -ENOMEM;
        }
        n->is_static = true;
        /* The first allowing rule names the entry; an always-denied range opened here (own loopback,
         * "private") denies other ports as "port" too. */
        if (fresh || n->n_own == 0) {
                n->e.v.rule = rule;
                n->e.v.reason = EGRESS_REASON_PORT;
        }
        return node_add_own(n, r, k);
}

static int host_rule_add(EgressTable *t, const NetDestination *d, uint16_t rule) {
        _cleanup_free_ char *name = NULL;
        EgressHostRule *h = NULL;
        EgressGrant *g;
        bool wildcard;
        const char *s = d->host;

        wildcard = strneq(s, "*.", 2);
        name = strdup(wildcard ? s + 2 : s);
        if (!name)
                return -ENOMEM;
        for (char *c = name; *c; c++)
                *c = (char) tolower((unsigned char) *c);

        for (size_t i = 0; i < t->n_hosts && !h; i++)
                if (t->hosts[i].wildcard == wildcard && streq(t->hosts[i].name, name))
                        h = &t->hosts[i];
        if (!h) {
                h = reallocarray(t->hosts, t->n_hosts + 1, sizeof(EgressHostRule));
                if (!h)
                        return -ENOMEM;
                t->hosts = h;
                h = &t->hosts[t->n_hosts++];
                *h = (EgressHostRule) { .name = TAKE_PTR(name), .wildcard = wildcard };
        }
        g = reallocarray(h->grants, h->n_grants + 1, sizeof(EgressGrant));
        if (!g)
                return -ENOMEM;
        h->grants = g;
        g = &h->grants[h->n_grants];
        *g = (EgressGrant) {
                .rule = rule,
                .tcp = protocol_has(d->protocol, IPPROTO_TCP),
                .udp = protocol_has(d->protocol, IPPROTO_UDP),
                .private = d->private,
        };
        if (destination_ranges(d, rule, &g->ranges, &g->n_ranges) < 0)
                return -ENOMEM;
        h->n_grants++;
        return 0;
}

int egress_compile(const Profile *p, NetworkMode mode, EgressTable **ret, char **ret_error) {
        static const struct egress_port_range loopback = { .lo = 0, .hi = 65535, .rule = EGRESS_RULE_LOOPBACK };
        static const struct egress_port_range public = { .lo = 0, .hi = 65535, .rule = EGRESS_RULE_PUBLIC };
        static const uint8_t lo4[16] = { 127 }, lo6[16] = { [15] = 1 }, any[16] = {};
        _cleanup_(egress_table_freep) EgressTable *t = NULL;
        int r;

        if (!p || !ret)
                return -EINVAL;
        r = check_mode(p, mode, ret_error);
        if (r < 0)
                return r;
        if (p->n_destinations > PROFILE_DESTINATIONS_MAX)
                return error_setf(ret_error, -EINVAL, "network.destinations: more than %d destinations",
                                  PROFILE_DESTINATIONS_MAX);
        t = calloc(1, sizeof(EgressTable));
        if (!t)
                return -ENOMEM;
        t->mode = mode;

        r = compile_denied(t);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(protocols); k++) {
                r = compile_allow(t, AF_INET, lo4, 8, protocols[k], &loopback, 1, EGRESS_RULE_LOOPBACK);
                r = r ?: compile_allow(t, AF_INET6, lo6, 128, protocols[k], &loopback, 1, EGRESS_RULE_LOOPBACK);
                if (r == 0 && mode == NETWORK_PUBLIC) {
                        r = compile_allow(t, AF_INET, any, 0, protocols[k], &public, 1, EGRESS_RULE_PUBLIC);
                        r = r ?: compile_allow(t, AF_INET6, any, 0, protocols[k], &public, 1, EGRESS_RULE_PUBLIC);
                }
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; mode == NETWORK_ALLOWLIST && i < p->n_destinations; i++) {
                const NetDestination *d = &p->destinations[i];
                _cleanup_free_ struct egress_port_range *ranges = NULL;
                size_t n_ranges;
                uint8_t addr[16];
                unsigned plen;
                int family;

                if (!d->host == !d->address)
                        return error_setf(ret_error, -EINVAL,
                                          "network.destinations[%zu]: expected exactly one of host and address", i);
                if (d->host) {
                        r = host_rule_add(t, d, (uint16_t) i);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = destination_prefix(d, i, &family, addr, &plen, ret_error);
                if (r < 0)
                        return r;
                r = destination_ranges(d, (uint16_t) i, &ranges, &n_ranges);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < ELEMENTSOF(protocols); k++) {
                        if (!protocol_has(d->protocol, protocols[k]))
                                continue;
                        r = compile_allow(t, family, addr, plen, protocols[k], ranges, n_ranges, (uint16_t) i);
                        if (r < 0)
                                return r;
                }
        }

        /* Shorter prefixes first: every entry's covering entry is final when it is merged in. */
        qsort(t->nodes, t->n_nodes, sizeof(EgressNode), cmp_nodes);
        for (size_t i = 0; i < t->n_nodes; i++) {
                EgressNode *n = &t->nodes[i];

                r = node_compute(t, n);
                if (r == -E2BIG) {
                        _cleanup_free_ char *prefix = NULL;
                        size_t rule = n->n_own > 0 ? n->own[0].rule : n->e.v.rule;

                        r = egress_prefix_to_string(n->e.family, node_addr(n), n->prefixlen, &prefix);
                        if (r < 0)
                                return r;
                        if (rule >= p->n_destinations) /* cannot happen: loopback and public have one range */
                                return error_setf(ret_error, -E2BIG, "network: more than %d port ranges at %s",
                                                  EGRESS_MAX_PORT_RANGES, prefix);
                        return error_setf(ret_error, -E2BIG,
                                          "network.destinations[%zu] (%s): more than %d port ranges at %s (%s) "
                                          "together with the destinations covering it",
                                          rule, p->destinations[rule].address, EGRESS_MAX_PORT_RANGES, prefix,
                                          node_proto(n) == IPPROTO_TCP ? "tcp" : "udp");
                }
                if (r < 0)
                        return r;
        }

        /* The grants of one name must fit one entry (an answer's entry gets more when it lies inside an
         * address destination: that is found when the answer comes). */
        for (size_t i = 0; i < t->n_hosts; i++)
                for (size_t k = 0; k < ELEMENTSOF(protocols); k++) {
                        const EgressHostRule *h = &t->hosts[i];
                        struct egress_port_range all[EGRESS_MAX_PORT_RANGES + 1];
                        size_t n = 0;

                        for (size_t g = 0; g < h->n_grants; g++) {
                                if (protocols[k] == IPPROTO_TCP ? !h->grants[g].tcp : !h->grants[g].udp)
                                        continue;
                                for (size_t j = 0; j < h->grants[g].n_ranges; j++) {
                                        all[n++] = h->grants[g].ranges[j];
                                        n = ranges_fit(all, n);
                                        if (n > EGRESS_MAX_PORT_RANGES)
                                                return error_setf(
                                                        ret_error, -E2BIG,
                                                        "network.destinations[%u] (%s): more than %d port ranges "
                                                        "for one name (%s)",
                                                        h->grants[g].rule, p->destinations[h->grants[g].rule].host,
                                                        EGRESS_MAX_PORT_RANGES,
                                                        protocols[k] == IPPROTO_TCP ? "tcp" : "udp");
                                }
                        }
                }

        *ret = TAKE_PTR(t);
        return 0;
}

int egress_table_deny_address(EgressTable *t, const char *prefix, char **ret_error) {
        uint8_t addr[16];
        unsigned plen;
        int family, r;

        if (!t || !prefix)
                return -EINVAL;
        if (egress_prefix_from_string(prefix, &family, addr, &plen) < 0)
                return error_setf(ret_error, -EINVAL, "'%s' is not an address or prefix", prefix);
        for (size_t k = 0; k < ELEMENTSOF(protocols); k++)
                if (!table_find(t, family, protocols[k], addr, plen) && !table_add(t, family, protocols[k], addr, plen))
                        return -ENOMEM;
        for (size_t i = 0; i < t->n_nodes; i++) {
                EgressNode *n = &t->nodes[i];

                if (n->e.family != family || n->prefixlen < plen || !egress_prefix_contains(addr, plen, node_addr(n)))
                        continue;
                n->host = n->barrier = n->is_static = true;
                n->n_own = n->n_dyn = 0;
                n->e.v.reason = EGRESS_REASON_LOOPBACK;
                n->e.v.rule = EGRESS_RULE_HOST;
        }
        qsort(t->nodes, t->n_nodes, sizeof(EgressNode), cmp_nodes);
        for (size_t i = 0; i < t->n_nodes; i++) {
                r = node_compute(t, &t->nodes[i]);
                if (r < 0) /* cannot happen: no entry got more ranges */
                        return r;
        }
        return 0;
}

/* ---- names and answers ---- */

const EgressHostRule *egress_table_match_name(const EgressTable *t, const char *name) {
        const EgressHostRule *best = NULL;
        char q[254];
        size_t n;

        if (!t || !name || t->mode != NETWORK_ALLOWLIST)
                return NULL;
        n = strlen(name);
        if (n > 0 && name[n - 1] == '.')
                n--;
        if (n == 0 || n >= sizeof(q))
                return NULL;
        for (size_t i = 0; i < n; i++)
                q[i] = (char) tolower((unsigned char) name[i]);
        q[n] = 0;

        for (size_t i = 0; i < t->n_hosts; i++) {
                const EgressHostRule *h = &t->hosts[i];
                size_t l = strlen(h->name);

                if (!h->wildcard) {
                        if (streq(h->name, q))
                                return h;
                        continue;
                }
                /* strictly below: at least one label, then ".", then the domain */
                if (n < l + 2 || q[n - l - 1] != '.' || !streq(q + n - l, h->name))
                        continue;
                if (!best || l > strlen(best->name))
                        best = h;
        }
        return best;
}

static uint64_t answer_expiry(uint32_t ttl_sec, uint64_t now_ns) {
        uint64_t ttl = MIN(MAX(ttl_sec, EGRESS_TTL_MIN_SEC), EGRESS_TTL_MAX_SEC);

        return now_ns + ttl * UINT64_C(1000000000);
}

static bool range_expired(const struct egress_port_range *r, uint64_t now_ns) {
        /* as the kernel judges it: allowed while now < expires_ns */
        return r->expires_ns != 0 && now_ns >= r->expires_ns;
}

static size_t node_drop_expired(EgressNode *n, uint64_t now_ns) {
        size_t dropped = 0;

        for (size_t i = 0; i < n->n_dyn;)
                if (range_expired(&n->dyn[i], now_ns)) {
                        memmove(n->dyn + i, n->dyn + i + 1, (n->n_dyn - i - 1) * sizeof(n->dyn[0]));
                        n->n_dyn--;
                        dropped++;
                } else
                        i++;
        return dropped;
}

static int node_add_answer(EgressNode *n, const struct egress_port_range *a, uint64_t now_ns) {
        for (size_t i = 0; i < n->n_dyn; i++)
                if (n->dyn[i].rule == a->rule && n->dyn[i].lo == a->lo && n->dyn[i].hi == a->hi) {
                        n->dyn[i].expires_ns = MAX(n->dyn[i].expires_ns, a->expires_ns);
                        return 0;
                }
        if (n->n_dyn >= EGRESS_DYN_MAX && node_drop_expired(n, now_ns) == 0)
                return -E2BIG;
        n->dyn[n->n_dyn++] = *a;
        return 0;
}

static void staged_done(EgressNode (*s)[ELEMENTSOF(protocols)]) {
        for (size_t i = 0; i < ELEMENTSOF(*s); i++)
                free((*s)[i].dyn);
}

int egress_table_insert_answer(EgressTable *t, const EgressHostRule *rule, int family, const uint8_t addr[static 16],
                               uint32_t ttl_sec, uint64_t now_ns, EgressEntry **ret_changed, size_t *ret_n,
                               int *ret_reason) {
        static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
        _cleanup_(staged_done) EgressNode staged[ELEMENTSOF(protocols)] = {};
        bool existing[ELEMENTSOF(protocols)] = {};
        _cleanup_free_ EgressEntry *out = NULL;
        uint64_t expires = answer_expiry(ttl_sec, now_ns);
        size_t n_staged = 0, n_new = 0;
        EgressDeniedRow row;
        EgressNode *nodes;
        uint8_t a[16] = {};
        unsigned plen;
        EgressClass c;
        int r = 0;

        if (!t || !rule || !addr || !ret_changed || !ret_n || !ret_reason)
                return -EINVAL;
        if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
                family = AF_INET;
                memcpy(a, addr + 12, 4);
        } else if (family == AF_INET)
                memcpy(a, addr, 4);
        else if (family == AF_INET6)
                memcpy(a, addr, 16);
        else
                return -EAFNOSUPPORT;
        plen = (unsigned) egress_family_bits(family);

        c = egress_classify(family, a, plen, &row);
        for (size_t i = 0; i < t->n_nodes && c != EGRESS_CLASS_DENIED; i++)
                if (t->nodes[i].host && t->nodes[i].e.family == family &&
                    egress_prefix_contains(node_addr(&t->nodes[i]), t->nodes[i].prefixlen, a)) {
                        c = EGRESS_CLASS_DENIED;
                        row.reason = EGRESS_REASON_LOOPBACK;
                }
        if (c == EGRESS_CLASS_PRIVATE) {
                bool any_private = false;

                for (size_t i = 0; i < rule->n_grants; i++)
                        any_private = any_private || rule->grants[i].private;
                if (!any_private)
                        c = EGRESS_CLASS_DENIED;
        }
        if (c == EGRESS_CLASS_DENIED) {
                *ret_changed = NULL;
                *ret_n = 0;
                *ret_reason = row.reason;
                return 0;
        }

        /* Staged on copies: the table changes only when every protocol fits. */
        for (size_t k = 0; k < ELEMENTSOF(protocols); k++) {
                const EgressNode *cur = table_find(t, family, protocols[k], a, plen);
                EgressNode *s = &staged[n_staged];
                bool any = false;

                for (size_t i = 0; i < rule->n_grants && r == 0; i++) {
                        const EgressGrant *g = &rule->grants[i];

                        if ((protocols[k] == IPPROTO_TCP ? !g->tcp : !g->udp) ||
                            (c == EGRESS_CLASS_PRIVATE && !g->private))
                                continue;
                        if (!any) {
                                if (cur)
                                        *s = *cur;
                                else {
                                        node_init(s, family, protocols[k], a, plen);
                                        s->e.v.reason = EGRESS_REASON_PORT;
                                        s->e.v.rule = g->rule;
                                }
                                s->dyn = calloc(EGRESS_DYN_MAX, sizeof(struct egress_port_range));
                                if (!s->dyn)
                                        return -ENOMEM;
                                if (cur && cur->n_dyn > 0) /* a static entry has no list (NULL) */
                                        memcpy(s->dyn, cur->dyn, cur->n_dyn * sizeof(struct egress_port_range));
                                any = true;
                        }
                        for (size_t j = 0; j < g->n_ranges && r == 0; j++) {
                                struct egress_port_range x = g->ranges[j];

                                x.expires_ns = expires;
                                r = node_add_answer(s, &x, now_ns);
                        }
                }
                if (r < 0)
                        return r;
                if (!any)
                        continue;
                r = node_compute(t, s);
                if (r == -E2BIG && node_drop_expired(s, now_ns) > 0)
                        r = node_compute(t, s);
                if (r < 0)
                        return r;
                existing[n_staged] = cur;
                n_new += !cur;
                n_staged++;
        }

        out = calloc(MAX(n_staged, 1u), sizeof(EgressEntry));
        if (!out)
                return -ENOMEM;
        nodes = reallocarray(t->nodes, t->n_nodes + MAX(n_new, 1u), sizeof(EgressNode));
        if (!nodes)
                return -ENOMEM;
        t->nodes = nodes;
        for (size_t i = 0; i < n_staged; i++) {
                EgressNode *cur = existing[i] ? table_find(t, staged[i].e.family, node_proto(&staged[i]), a, plen)
                                              : &t->nodes[t->n_nodes++];

                if (existing[i])
                        free(cur->dyn);
                *cur = staged[i]; /* 'own' is the same array */
                staged[i].dyn = NULL;
                out[i] = cur->e;
        }
        *ret_changed = n_staged > 0 ? TAKE_PTR(out) : NULL;
        *ret_n = n_staged;
        *ret_reason = -1;
        return 1;
}

static int entries_append(EgressEntry **l, size_t *n, const EgressEntry *e) {
        EgressEntry *x = reallocarray(*l, *n + 1, sizeof(EgressEntry));

        if (!x)
                return -ENOMEM;
        *l = x;
        x[(*n)++] = *e;
        return 0;
}

int egress_table_expire(EgressTable *t, uint64_t now_ns, EgressEntry **ret_changed, size_t *ret_n_changed,
                        EgressEntry **ret_removed, size_t *ret_n_removed) {
        _cleanup_free_ EgressEntry *changed = NULL, *removed = NULL;
        size_t n_changed = 0, n_removed = 0;
        int r;

        if (!t || !ret_changed || !ret_n_changed || !ret_removed || !ret_n_removed)
                return -EINVAL;
        for (size_t i = 0; i < t->n_nodes;) {
                EgressNode *n = &t->nodes[i];

                if (n->n_dyn == 0 || node_drop_expired(n, now_ns) == 0) {
                        i++;
                        continue;
                }
                if (!n->is_static && n->n_dyn == 0) {
                        r = entries_append(&removed, &n_removed, &n->e);
                        if (r < 0)
                                return r;
                        free(n->own);
                        free(n->dyn);
                        memmove(n, n + 1, (t->n_nodes - i - 1) * sizeof(EgressNode));
                        t->n_nodes--;
                        continue;
                }
                /* fewer ranges than before: always fits */
                r = node_compute(t, n);
                if (r < 0)
                        return r;
                r = entries_append(&changed, &n_changed, &n->e);
                if (r < 0)
                        return r;
                i++;
        }
        *ret_changed = TAKE_PTR(changed);
        *ret_n_changed = n_changed;
        *ret_removed = TAKE_PTR(removed);
        *ret_n_removed = n_removed;
        return (int) MIN(n_changed + n_removed, (size_t) INT32_MAX);
}

/* ---- systemd's address filter ---- */

static int strv_push(char ***l, size_t *n, char *s) {
        char **x;

        if (!s)
                return -ENOMEM;
        if (strv_contains(*l, s)) {
                free(s);
                return 0;
        }
        x = reallocarray(*l, *n + 2, sizeof(char *));
        if (!x) {
                free(s);
                return -ENOMEM;
        }
        *l = x;
        x[(*n)++] = s;
        x[*n] = NULL;
        return 0;
}

static int strv_push_prefix(char ***l, size_t *n, int family, const uint8_t addr[], unsigned prefixlen) {
        char *s = NULL;
        int r;

        r = egress_prefix_to_string(family, addr, prefixlen, &s);
        if (r < 0)
                return r;
        return strv_push(l, n, s);
}

int egress_ip_address_lists(const Profile *p, NetworkMode mode, char ***ret_allow, char ***ret_deny) {
        _cleanup_strv_free_ char **allow = NULL, **deny = NULL;
        size_t n_allow = 0, n_deny = 0;
        bool hosts = false;
        EgressDeniedRow row;
        int r;

        if (!p || !ret_allow || !ret_deny)
                return -EINVAL;
        r = check_mode(p, mode, NULL);
        if (r < 0)
                return r;
        if (mode == NETWORK_NONE) {
                *ret_allow = *ret_deny = NULL;
                return 0;
        }
        for (size_t i = 0; mode == NETWORK_ALLOWLIST && i < p->n_destinations; i++)
                hosts = hosts || p->destinations[i].host;

        r = strv_push(&allow, &n_allow, strdup("127.0.0.0/8"));
        r = r ?: strv_push(&allow, &n_allow, strdup("::1/128"));
        if (r < 0)
                return r;
        if (mode == NETWORK_ALLOWLIST && !hosts) {
                /* "any", as prefixes (the D-Bus form of the property takes prefixes only) */
                r = strv_push(&deny, &n_deny, strdup("0.0.0.0/0"));
                r = r ?: strv_push(&deny, &n_deny, strdup("::/0"));
        } else
                for (size_t i = 0; r == 0 && egress_denied_row(i, &row) >= 0; i++)
                        r = strv_push_prefix(&deny, &n_deny, row.family, row.addr, row.prefixlen);
        if (r < 0)
                return r;
        for (size_t i = 0; mode == NETWORK_ALLOWLIST && i < p->n_destinations; i++) {
                const NetDestination *d = &p->destinations[i];
                uint8_t addr[16];
                unsigned plen;
                int family;

                if (!d->address || (hosts && !d->private))
                        continue;
                r = destination_prefix(d, i, &family, addr, &plen, NULL);
                if (r < 0)
                        return r;
                r = strv_push_prefix(&allow, &n_allow, family, addr, plen);
                if (r < 0)
                        return r;
        }
        *ret_allow = TAKE_PTR(allow);
        *ret_deny = TAKE_PTR(deny);
        return 0;
}
