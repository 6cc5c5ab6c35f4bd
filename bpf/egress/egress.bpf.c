/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Egress control for every run below sbx.slice: the programs are attached once, at the slice, and judge
 * each connect()/sendmsg() of a task below it against the LPM trie entries of the run it belongs to
 * (the layouts and the rules of the game are in egress-api.h). Port 53 of a run with
 * EGRESS_RUN_DNS_REDIRECT goes to the run's resolver, and the answers are shown as coming from the
 * server the program asked for. */

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "egress-api.h"

/* not in the uapi headers the BPF side can include without libc */
#define AF_INET 2
#define AF_INET6 10
#define SOCK_RAW 3
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

/* The helpers used here (ring buffer, socket cookie, cgroup ancestry) are GPL-only in the kernel, so
 * the programs must declare a GPL-compatible license to load at all. */
char _license[] SEC("license") = "GPL";

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct egress_config);
} config SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, EGRESS_RUNS_MAX);
        __type(key, __u64);
        __type(value, struct egress_run);
} runs SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LPM_TRIE);
        __uint(max_entries, EGRESS_RULES_MAX);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, struct egress_key4);
        __type(value, struct egress_value);
} rules4 SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LPM_TRIE);
        __uint(max_entries, EGRESS_RULES_MAX);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, struct egress_key6);
        __type(value, struct egress_value);
} rules6 SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, EGRESS_DNS_ORIG_MAX);
        __type(key, __u64);
        __type(value, struct egress_dns_orig);
} dns_orig SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, EGRESS_RINGBUF_BYTES);
} events SEC(".maps");

/* The trie's answer per run and destination, so that a repeated destination costs a hash lookup
 * instead of a walk down a trie of thousands of entries. Valid while the run's generation is the one
 * it was computed under (user space changes it after every write of the run's rules) and, for an
 * answer that allowed through an expiring range, until that range expires. Internal: not pinned. */
struct verdict_key {
        __u64 cgroup;
        __u32 addr[4];
        __u16 port;
        __u8 proto;
        __u8 family;
        __u32 pad;             /* hashed with the rest: always 0 */
};

struct verdict_value {
        __u32 generation;
        __u8 verdict;
        __u8 reason;
        __u16 rule;
        __u64 expires_ns;            /* 0: does not expire */
};

#define VERDICT_CACHE_MAX 16384

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, VERDICT_CACHE_MAX);
        __type(key, struct verdict_key);
        __type(value, struct verdict_value);
} verdicts SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, _EGRESS_STAT_MAX);
        __type(key, __u32);
        __type(value, __u64);
} stats SEC(".maps");

/* the level of the slice in the cgroup hierarchy, learnt by the first walk */
static __u32 slice_level_hint;

/* what one connect/sendmsg call asked for, and what was decided */
struct judgement {
        __u64 cgroup;
        __u8 verdict;
        __u8 reason;
        __u8 family;           /* as judged: AF_INET for an IPv4-mapped destination */
        __u8 proto;
        __u16 port;            /* host byte order */
        __u16 rule;
        __u32 addr[4];         /* network byte order; IPv4: addr[0] */
        __u64 expires_ns;      /* an allowing range's end of validity, 0: none */
};

static __always_inline void stat_inc(__u32 i) {
        __u64 *v = bpf_map_lookup_elem(&stats, &i);

        if (v)
                *v += 1; /* per-CPU slot, and cgroup sock_addr programs do not nest on one CPU */
}

/* The run of the current task: the cgroup two levels below the slice. Returns 0 if the task is not
 * below the slice (or sits in the profile slice itself); *ret_below tells whether the slice was found. */
static __always_inline __u64 current_run(bool *ret_below) {
        struct egress_config *c;
        __u32 zero = 0;
        __u64 slice;
        __u32 hint;

        *ret_below = false;
        c = bpf_map_lookup_elem(&config, &zero);
        if (!c)
                return 0;
        slice = c->slice_cgroup;
        if (slice == 0)
                return 0;

        /* every task these programs run for is below the same slice, at the same level: try the level
         * found last time before walking (a stale or racing value only costs the walk) */
        hint = slice_level_hint;
        if (hint > 0 && hint < EGRESS_MAX_LEVEL && bpf_get_current_ancestor_cgroup_id(hint) == slice) {
                *ret_below = true;
                return bpf_get_current_ancestor_cgroup_id(hint + 2);
        }

        for (int level = 1; level < EGRESS_MAX_LEVEL; level++) {
                __u64 id = bpf_get_current_ancestor_cgroup_id(level);

                if (id == 0)
                        return 0; /* walked past the task's own cgroup */
                if (id == slice) {
                        slice_level_hint = level;
                        *ret_below = true;
                        return bpf_get_current_ancestor_cgroup_id(level + 2);
                }
        }
        return 0;
}

static __always_inline void post_event(const struct judgement *j, __u8 hook) {
        struct egress_event *ev;

        ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
        if (!ev) {
                stat_inc(EGRESS_STAT_EVENT_LOST);
                return;
        }
        ev->cgroup = j->cgroup;
        ev->time_ns = bpf_ktime_get_boot_ns();
        ev->verdict = j->verdict;
        ev->reason = j->reason;
        ev->family = j->family;
        ev->proto = j->proto;
        ev->port = j->port;
        ev->rule = j->rule;
        __builtin_memcpy(ev->addr, j->addr, sizeof(ev->addr));
        ev->hook = hook;
        __builtin_memset(ev->pad, 0, sizeof(ev->pad));
        /* a denial wakes the reader (forced: the default only wakes it when nothing unread is ahead,
         * and unannounced records of allowed calls usually are); allowed calls wait for its next pass */
        bpf_ringbuf_submit(ev, j->verdict == EGRESS_VERDICT_DENY ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Allow, or the reason to deny, from the trie entry of the longest matching prefix. */
static __always_inline void judge_value(const struct egress_value *v, struct judgement *j) {
        bool expired = false;
        __u64 now = 0;

        if (!v) {
                j->verdict = EGRESS_VERDICT_DENY;
                j->reason = EGRESS_REASON_NOT_ALLOWED;
                return;
        }

        for (int i = 0; i < EGRESS_MAX_PORT_RANGES; i++) {
                const struct egress_port_range *r = &v->r[i];

                if (i >= v->n_ranges)
                        break;
                if (j->port < r->lo || j->port > r->hi)
                        continue;
                if (r->expires_ns != 0) {
                        if (now == 0)
                                now = bpf_ktime_get_boot_ns();
                        if (now >= r->expires_ns) {
                                expired = true;
                                continue;
                        }
                }
                j->verdict = EGRESS_VERDICT_ALLOW;
                j->rule = r->rule;
                j->expires_ns = r->expires_ns;
                return;
        }

        j->verdict = EGRESS_VERDICT_DENY;
        j->reason = expired ? EGRESS_REASON_EXPIRED : v->reason;
        j->rule = v->rule;
}

static __always_inline void judge4(struct judgement *j) {
        struct egress_key4 k;

        __builtin_memset(&k, 0, sizeof(k));
        k.prefixlen = EGRESS_KEY_HDR_BITS + 32;
        k.cgroup = j->cgroup;
        k.proto = j->proto;
        __builtin_memcpy(k.addr, &j->addr[0], sizeof(k.addr));
        judge_value(bpf_map_lookup_elem(&rules4, &k), j);
}

static __always_inline void judge6(struct judgement *j) {
        struct egress_key6 k;

        __builtin_memset(&k, 0, sizeof(k));
        k.prefixlen = EGRESS_KEY_HDR_BITS + 128;
        k.cgroup = j->cgroup;
        k.proto = j->proto;
        __builtin_memcpy(k.addr, j->addr, sizeof(k.addr));
        judge_value(bpf_map_lookup_elem(&rules6, &k), j);
}

/* The trie's answer, from the cache when it still holds for this generation of the run's rules. */
static __always_inline void judge_cached(struct judgement *j, __u32 generation) {
        struct verdict_key k = {
                .cgroup = j->cgroup,
                .addr = { j->addr[0], j->addr[1], j->addr[2], j->addr[3] },
                .port = j->port,
                .proto = j->proto,
                .family = j->family,
        };
        struct verdict_value *c, n;

        c = bpf_map_lookup_elem(&verdicts, &k);
        if (c && c->generation == generation &&
            (c->expires_ns == 0 || bpf_ktime_get_boot_ns() < c->expires_ns)) {
                j->verdict = c->verdict;
                j->reason = c->reason;
                j->rule = c->rule;
                return;
        }

        if (j->family == AF_INET)
                judge4(j);
        else
                judge6(j);

        n = (struct verdict_value) {
                .generation = generation,
                .verdict = j->verdict,
                .reason = j->reason,
                .rule = j->rule,
                .expires_ns = j->verdict == EGRESS_VERDICT_ALLOW ? j->expires_ns : 0,
        };
        bpf_map_update_elem(&verdicts, &k, &n, BPF_ANY);
}

/* Remembers where a DNS socket wanted to go, keyed by its cookie, so that recvmsg and getpeername
 * can show the answer as coming from there. */
static __always_inline void dns_remember(struct bpf_sock_addr *ctx, const struct judgement *j) {
        struct egress_dns_orig o;
        __u64 cookie;

        __builtin_memset(&o, 0, sizeof(o));
        __builtin_memcpy(o.addr, j->addr, sizeof(o.addr));
        o.port = bpf_htons(j->port);
        o.family = j->family;
        cookie = bpf_get_socket_cookie(ctx);
        bpf_map_update_elem(&dns_orig, &cookie, &o, BPF_ANY);
}

static __always_inline void dns_forget(struct bpf_sock_addr *ctx) {
        __u64 cookie = bpf_get_socket_cookie(ctx);

        bpf_map_delete_elem(&dns_orig, &cookie);
}

static __always_inline bool is_v4_mapped(const __u32 a[4]) {
        return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff);
}

static __always_inline bool is_resolver6(const __u32 a[4]) {
        return a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == bpf_htonl(1);
}

/* Everything a connect/sendmsg hook does: find the run, judge, redirect DNS, post the event.
 * Returns what the hook returns: 1 allow, 0 deny (the caller gets EPERM). */
static __always_inline int egress_judge(struct bpf_sock_addr *ctx, int family, __u8 hook) {
        struct judgement j = {
                .family = AF_INET,
                .proto = (__u8) ctx->protocol,
                .port = bpf_ntohs((__u16) ctx->user_port),
        };
        struct egress_run *run;
        bool below, mapped = false;

        if (family == AF_INET)
                j.addr[0] = ctx->user_ip4;
        else {
                j.addr[0] = ctx->user_ip6[0];
                j.addr[1] = ctx->user_ip6[1];
                j.addr[2] = ctx->user_ip6[2];
                j.addr[3] = ctx->user_ip6[3];
                if (is_v4_mapped(j.addr)) {
                        /* ::ffff:a.b.c.d is IPv4: judged (and redirected) as such */
                        mapped = true;
                        j.addr[0] = j.addr[3];
                        j.addr[1] = j.addr[2] = j.addr[3] = 0;
                } else
                        j.family = AF_INET6;
        }

        j.cgroup = current_run(&below);
        run = j.cgroup != 0 ? bpf_map_lookup_elem(&runs, &j.cgroup) : NULL;
        if (!run) {
                j.verdict = EGRESS_VERDICT_DENY;
                j.reason = EGRESS_REASON_NO_POLICY;
                goto done;
        }
        if (ctx->protocol != IPPROTO_TCP && ctx->protocol != IPPROTO_UDP) {
                j.verdict = EGRESS_VERDICT_DENY;
                j.reason = EGRESS_REASON_SOCKET;
                goto done;
        }

        if ((run->flags & EGRESS_RUN_DNS_REDIRECT) && j.port == EGRESS_RESOLVER_PORT) {
                bool resolver = j.family == AF_INET ? j.addr[0] == bpf_htonl(EGRESS_RESOLVER_ADDR4)
                                                     : is_resolver6(j.addr);

                j.verdict = EGRESS_VERDICT_DNS;
                if (resolver) {
                        /* asked for the resolver itself: nothing to rewrite nor to restore */
                        dns_forget(ctx);
                        goto done;
                }
                dns_remember(ctx, &j);
                ctx->user_port = bpf_htons(EGRESS_RESOLVER_PORT);
                if (family == AF_INET)
                        ctx->user_ip4 = bpf_htonl(EGRESS_RESOLVER_ADDR4);
                else if (mapped)
                        ctx->user_ip6[3] = bpf_htonl(EGRESS_RESOLVER_ADDR4);
                else {
                        ctx->user_ip6[0] = 0;
                        ctx->user_ip6[1] = 0;
                        ctx->user_ip6[2] = 0;
                        ctx->user_ip6[3] = bpf_htonl(1);
                }
                goto done;
        }

        judge_cached(&j, run->generation);

done:
        stat_inc(j.verdict == EGRESS_VERDICT_ALLOW ? EGRESS_STAT_ALLOW
                 : j.verdict == EGRESS_VERDICT_DNS ? EGRESS_STAT_DNS_REDIRECT
                                                   : EGRESS_STAT_DENY);
        post_event(&j, hook);
        return j.verdict != EGRESS_VERDICT_DENY;
}

/* A reply from the resolver to a redirected socket shows the address the program asked for. */
static __always_inline void dns_restore(struct bpf_sock_addr *ctx, int family) {
        struct egress_dns_orig *o;
        bool mapped = false;
        __u64 cookie;

        if (ctx->user_port != bpf_htons(EGRESS_RESOLVER_PORT))
                return;
        if (family == AF_INET) {
                if (ctx->user_ip4 != bpf_htonl(EGRESS_RESOLVER_ADDR4))
                        return;
        } else {
                __u32 a[4] = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3] };

                if (is_v4_mapped(a) && a[3] == bpf_htonl(EGRESS_RESOLVER_ADDR4))
                        mapped = true;
                else if (!is_resolver6(a))
                        return;
        }

        cookie = bpf_get_socket_cookie(ctx);
        o = bpf_map_lookup_elem(&dns_orig, &cookie);
        if (!o)
                return;

        if (family == AF_INET) {
                if (o->family != AF_INET)
                        return;
                ctx->user_ip4 = *(__u32 *) o->addr;
        } else if (mapped) {
                if (o->family != AF_INET)
                        return;
                ctx->user_ip6[3] = *(__u32 *) o->addr;
        } else {
                if (o->family != AF_INET6)
                        return;
                ctx->user_ip6[0] = *(__u32 *) &o->addr[0];
                ctx->user_ip6[1] = *(__u32 *) &o->addr[4];
                ctx->user_ip6[2] = *(__u32 *) &o->addr[8];
                ctx->user_ip6[3] = *(__u32 *) &o->addr[12];
        }
        ctx->user_port = o->port;
        stat_inc(EGRESS_STAT_RESTORE);
}

/* Below the slice only TCP and UDP inet sockets: no raw sockets, no ICMP (ping) sockets, no SCTP... */
static __always_inline int egress_sock_create(struct bpf_sock *sk) {
        struct judgement j = {};
        __u32 family = sk->family, type = sk->type, protocol = sk->protocol;
        bool below;

        if (family != AF_INET && family != AF_INET6)
                return 1;
        if (type != SOCK_RAW && (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_UDP))
                return 1;

        j.cgroup = current_run(&below);
        if (!below)
                return 1;

        j.verdict = EGRESS_VERDICT_DENY;
        j.reason = EGRESS_REASON_SOCKET;
        j.family = (__u8) family;
        j.proto = (__u8) protocol;
        j.port = (__u16) type;
        stat_inc(EGRESS_STAT_DENY);
        post_event(&j, EGRESS_HOOK_SOCK_CREATE);
        return 0;
}

SEC("cgroup/connect4")
int egress_connect4(struct bpf_sock_addr *ctx) {
        return egress_judge(ctx, AF_INET, EGRESS_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int egress_connect6(struct bpf_sock_addr *ctx) {
        return egress_judge(ctx, AF_INET6, EGRESS_HOOK_CONNECT6);
}

SEC("cgroup/sendmsg4")
int egress_sendmsg4(struct bpf_sock_addr *ctx) {
        return egress_judge(ctx, AF_INET, EGRESS_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int egress_sendmsg6(struct bpf_sock_addr *ctx) {
        return egress_judge(ctx, AF_INET6, EGRESS_HOOK_SENDMSG6);
}

/* the restoring hooks never deny: they must return 1 */
SEC("cgroup/recvmsg4")
int egress_recvmsg4(struct bpf_sock_addr *ctx) {
        dns_restore(ctx, AF_INET);
        return 1;
}

SEC("cgroup/recvmsg6")
int egress_recvmsg6(struct bpf_sock_addr *ctx) {
        dns_restore(ctx, AF_INET6);
        return 1;
}

SEC("cgroup/getpeername4")
int egress_getpeername4(struct bpf_sock_addr *ctx) {
        dns_restore(ctx, AF_INET);
        return 1;
}

SEC("cgroup/getpeername6")
int egress_getpeername6(struct bpf_sock_addr *ctx) {
        dns_restore(ctx, AF_INET6);
        return 1;
}

SEC("cgroup/sock_create")
int egress_sock_create_hook(struct bpf_sock *sk) {
        return egress_sock_create(sk);
}

/* Packets whose next hop is not the destination the connect and sendmsg programs judged: IPv4 options
 * (a loose or strict source route, set with IP_OPTIONS or per datagram with an IP_RETOPTS control
 * message, sends the packet to its first hop) and IPv6 routing headers (IPV6_RTHDR), or the hop-by-hop
 * and destination options a routing header may follow. Dropped for every task below the slice: the
 * sender gets EPERM. Nothing a run needs: multicast, which uses hop-by-hop options, is denied anyway. */
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPV6_NEXTHDR_HOP 0
#define IPV6_NEXTHDR_ROUTING 43
#define IPV6_NEXTHDR_DEST 60

SEC("cgroup_skb/egress")
int egress_packet(struct __sk_buff *skb) {
        __u8 b;

        if (skb->protocol == bpf_htons(ETH_P_IP)) {
                if (bpf_skb_load_bytes(skb, 0, &b, 1) < 0)
                        return 0;
                return (b & 0x0f) == 5; /* header length: 5 words, no options */
        }
        if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
                if (bpf_skb_load_bytes(skb, 6, &b, 1) < 0)
                        return 0;
                return b != IPV6_NEXTHDR_HOP && b != IPV6_NEXTHDR_ROUTING && b != IPV6_NEXTHDR_DEST;
        }
        return 1;
}
