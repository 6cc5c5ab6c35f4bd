/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The contract between the egress BPF programs (egress.bpf.c) and user space (the pure compiler in
 * src/plan/egress-policy.c fills entries, sbxd/egress.c loads, pins and writes them, and reads events).
 * Only __u* types, enums and constants: this header is compiled for the kernel and for user space.
 *
 * The programs are attached once, at sbx.slice, and pinned (links and maps) below EGRESS_PIN_DIR. A
 * socket call of a task below sbx.slice is judged for the run it belongs to: the cgroup two levels below
 * sbx.slice (sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUN.service), found by walking the task's ancestor
 * cgroup ids up to the slice's id (a fixed level would break under a cgroup namespace). A run with no
 * entry in the runs map is denied everything (fail closed).
 *
 * Matching: one LPM trie per family keyed (cgroup, protocol, address); the longest matching prefix
 * decides. Its value lists the port ranges allowed at that prefix (the compiler merges in the ranges of
 * every shorter prefix that covers it, so the longest match alone is the answer). No entry, or no
 * range for the port: denied, with the entry's reason (an always-denied range carries its own). An
 * IPv4-mapped IPv6 destination (::ffff:a.b.c.d) is judged by the IPv4 trie. */

#include <linux/types.h>

#define EGRESS_PIN_DIR "/sys/fs/bpf/sbx/egress"

#define EGRESS_MAX_PORT_RANGES 8     /* per trie entry */
#define EGRESS_MAX_LEVEL 32          /* deepest cgroup level searched for sbx.slice */
#define EGRESS_RULES_MAX 131072      /* entries per trie (both families: each) */
#define EGRESS_RUNS_MAX 8192
#define EGRESS_DNS_ORIG_MAX 16384
#define EGRESS_RINGBUF_BYTES (256 * 1024)

/* the run's own resolver, inside the run's network namespace (sbxd holds the sockets) */
#define EGRESS_RESOLVER_ADDR4 0x7f000035u /* 127.0.0.53, host byte order */
#define EGRESS_RESOLVER_PORT 53

/* key = prefixlen | cgroup id (64 bits, always matched) | protocol (8 bits, always matched) | address */
#define EGRESS_KEY_HDR_BITS (64 + 8)

struct egress_key4 {
        __u32 prefixlen;             /* EGRESS_KEY_HDR_BITS + CIDR prefix length */
        __u64 cgroup;                /* the run's cgroup id (the inode of its cgroup directory) */
        __u8 proto;                  /* IPPROTO_TCP or IPPROTO_UDP */
        __u8 addr[4];                /* network byte order */
} __attribute__((packed));

struct egress_key6 {
        __u32 prefixlen;
        __u64 cgroup;
        __u8 proto;
        __u8 addr[16];
} __attribute__((packed));

struct egress_port_range {
        __u16 lo, hi;                /* host byte order, inclusive; 0-65535 = every port */
        __u16 rule;                  /* index of the profile rule that allowed it (telemetry) */
        __u16 pad;
        __u64 expires_ns;            /* CLOCK_BOOTTIME ns after which it no longer allows; 0: never */
};

struct egress_value {
        __u8 reason;                 /* enum egress_reason when no range allows: 0 = EGRESS_REASON_PORT */
        __u8 n_ranges;               /* valid entries in r[] */
        __u16 rule;                  /* rule index of the entry itself (always-denied range: its row) */
        __u32 pad;
        struct egress_port_range r[EGRESS_MAX_PORT_RANGES];
};

enum egress_run_flags {
        EGRESS_RUN_DNS_REDIRECT = 1 << 0, /* port 53 (TCP and UDP) goes to the run's own resolver */
};

struct egress_run {
        __u32 flags;                 /* enum egress_run_flags */
        __u32 generation;            /* changed by sbxd/egress.c on every write of the run's rules: the
                                      * programs' per-destination verdict cache is valid for one value */
};

/* the destination a redirected DNS socket asked for (keyed by socket cookie), restored on recvmsg and
 * getpeername so that unconnected clients accept the answer */
struct egress_dns_orig {
        __u8 addr[16];               /* IPv4: first 4 bytes */
        __u16 port;                  /* network byte order */
        __u8 family;                 /* AF_INET or AF_INET6 */
        __u8 pad[5];
};

struct egress_config {
        __u64 slice_cgroup;          /* cgroup id of sbx.slice; 0: not configured, deny all */
        __u64 object_digest;         /* user space only: digest of the BPF object that was loaded, so a
                                      * new build replaces pinned programs of an older one */
};

enum egress_verdict {
        EGRESS_VERDICT_ALLOW = 1,
        EGRESS_VERDICT_DENY = 2,
        EGRESS_VERDICT_DNS = 3,      /* redirected to the run's resolver */
};

enum egress_reason {
        EGRESS_REASON_PORT = 0,      /* the address is allowed, not this port or protocol */
        EGRESS_REASON_NO_POLICY,     /* the run has no registered policy (yet, or any more) */
        EGRESS_REASON_NOT_ALLOWED,   /* no rule names this destination */
        EGRESS_REASON_EXPIRED,       /* allowed through DNS, but the answer's TTL has passed */
        EGRESS_REASON_LOOPBACK,      /* always denied, whatever a profile says: */
        EGRESS_REASON_LINK_LOCAL,    /*   169.254.0.0/16, fe80::/10 (metadata services included) */
        EGRESS_REASON_PRIVATE,       /*   10/8, 172.16/12, 192.168/16, fc00::/7 */
        EGRESS_REASON_SHARED,        /*   100.64.0.0/10 */
        EGRESS_REASON_MULTICAST,     /*   224.0.0.0/4, ff00::/8 */
        EGRESS_REASON_BROADCAST,     /*   255.255.255.255 */
        EGRESS_REASON_UNSPECIFIED,   /*   0.0.0.0/8, :: */
        EGRESS_REASON_RESERVED,      /*   240.0.0.0/4, benchmarking, IETF protocol assignments, ... */
        EGRESS_REASON_EMBEDDED,      /*   an IPv6 form (NAT64, 6to4, IPv4-compatible) of a denied IPv4 */
        EGRESS_REASON_SOCKET,        /* a raw, packet or other non-TCP/UDP socket */
        _EGRESS_REASON_MAX,
};

enum egress_hook {
        EGRESS_HOOK_CONNECT4 = 1,
        EGRESS_HOOK_CONNECT6,
        EGRESS_HOOK_SENDMSG4,
        EGRESS_HOOK_SENDMSG6,
        EGRESS_HOOK_SOCK_CREATE,
};

/* one ring buffer record per judged call (allowed calls are posted without waking the reader) */
struct egress_event {
        __u64 cgroup;
        __u64 time_ns;               /* CLOCK_BOOTTIME */
        __u8 verdict;                /* enum egress_verdict */
        __u8 reason;                 /* enum egress_reason (deny) */
        __u8 family;                 /* AF_INET or AF_INET6 of the destination as judged */
        __u8 proto;                  /* IPPROTO_TCP, IPPROTO_UDP; sock_create: the socket's protocol */
        __u16 port;                  /* host byte order; sock_create: the socket type */
        __u16 rule;                  /* allowing rule, or the always-denied row */
        __u8 addr[16];               /* IPv4: first 4 bytes; the destination asked for (before redirect) */
        __u8 hook;                   /* enum egress_hook */
        __u8 pad[7];
};

/* per-CPU counters (array map "stats") */
enum egress_stat {
        EGRESS_STAT_ALLOW,
        EGRESS_STAT_DENY,
        EGRESS_STAT_DNS_REDIRECT,
        EGRESS_STAT_RESTORE,
        EGRESS_STAT_EVENT_LOST,      /* ring buffer full */
        _EGRESS_STAT_MAX,
};
