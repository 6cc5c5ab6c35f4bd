/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxd's network side: the egress programs and their maps, each run's entries, resolver and telemetry
 * (network.h); feature-network.c is its feature's table. */
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "egress-api.h"
#include "egress-policy.h"
#include "egress.h"
#include "event-limit.h"
#include "log.h"
#include "message-ids.h"
#include "network.h"
#include "policy.h"
#include "resolver.h"

#define SLICE_CGROUP "/sys/fs/cgroup/" SBX_SLICE_PARENT
#define EVENTS_POLL_USEC (500 * USEC_PER_MSEC)   /* allowed calls are posted without a wake-up */

/* The exec helper's own probes (helper/sbx-exec.c): UDP connect()s to 127.0.0.1 and to the metadata
 * address, port 9, before the command starts. Not the workload's: left out of the record. */
#define PROBE_PORT 9
static const uint8_t probe_allowed[4] = { 127, 0, 0, 1 };
static const uint8_t probe_denied[4] = { 169, 254, 169, 254 };

struct NetManager {
        sd_event *event;
        sd_bus *bus;
        Egress *egress;
        int host_netns_fd;
        uint64_t host_netns_ino;
        sd_event_source *events_io, *events_timer;
        RunNet *runs;
};

struct RunNet {
        NetManager *nm;
        RunNet *next;
        char run_id[RUN_ID_LEN + 1];
        char *profile;
        NetworkMode mode;
        EgressTable *table;
        Resolver *resolver;
        RunRecord *record;
        uint64_t cgroup;
        bool registered;
        bool probe_allowed_seen, probe_denied_seen; /* the exec helper's probes, not the workload's */
        size_t host_probes_left;
        char *unit;
        EventLimit denials;
};

/* ---- clocks: events carry CLOCK_BOOTTIME, records realtime ---- */

static uint64_t now_boottime_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static usec_t boottime_to_realtime(uint64_t ns) {
        uint64_t now = now_boottime_ns();
        usec_t rt = now_realtime();

        return ns >= now ? rt : rt - (now - ns) / 1000;
}

/* ---- telemetry ---- */

static RunNet *find_run(NetManager *nm, uint64_t cgroup) {
        for (RunNet *rn = nm->runs; rn; rn = rn->next)
                if (rn->registered && rn->cgroup == cgroup)
                        return rn;
        return NULL;
}

/* Journal: a denial is an event, at most one per destination (or name) and run every
 * EGRESS_EVENT_INTERVAL_USEC; the ones in between are counted in the next (SBX_COUNT). */
static void log_denial(RunNet *rn, const char *what, const char *reason, bool dns) {
        uint64_t suppressed = 0;
        char count[32];

        if (event_limit_check(&rn->denials, what, now_monotonic(), &suppressed) <= 0)
                return;
        (void) snprintf(count, sizeof count, "%" PRIu64, suppressed + 1);
        if (dns)
                log_event(LOG_NOTICE, SBX_MESSAGE_DNS_REFUSED,
                          LOG_FIELDS({ "SBX_RUN_ID", rn->run_id }, { "SBX_UNIT", rn->unit }, { "SBX_PROFILE", rn->profile },
                                     { "SBX_NAME", what }, { "SBX_COUNT", count }),
                          "Run %s: DNS name %s refused (not in profile %s).", rn->run_id, what, rn->profile);
        else
                log_event(LOG_NOTICE, SBX_MESSAGE_EGRESS_DENIED,
                          LOG_FIELDS({ "SBX_RUN_ID", rn->run_id }, { "SBX_UNIT", rn->unit }, { "SBX_PROFILE", rn->profile },
                                     { "SBX_DESTINATION", what }, { "SBX_REASON", reason }, { "SBX_COUNT", count }),
                          "Run %s: egress to %s denied (%s).", rn->run_id, what, reason);
}

static int on_event(const struct egress_event *ev, void *userdata) {
        NetManager *nm = userdata;
        RunNet *rn = find_run(nm, ev->cgroup);
        bool allowed = ev->verdict != EGRESS_VERDICT_DENY;
        char what[128];

        if (!rn)
                return 0;
        if (ev->verdict == EGRESS_VERDICT_DNS)
                return 0; /* the resolver records the names asked */
        /* the helper also sends one datagram to each of the host's own addresses (they must be denied) */
        if ((ev->hook == EGRESS_HOOK_SENDMSG4 || ev->hook == EGRESS_HOOK_SENDMSG6) && !allowed &&
            ev->proto == IPPROTO_UDP && ev->port == PROBE_PORT && ev->rule == EGRESS_RULE_HOST &&
            rn->host_probes_left > 0) {
                rn->host_probes_left--;
                return 0;
        }
        /* the helper probes each once, before the command: only those first two are its own */
        if (ev->hook == EGRESS_HOOK_CONNECT4 && ev->proto == IPPROTO_UDP && ev->port == PROBE_PORT) {
                if (!rn->probe_allowed_seen && allowed && memcmp(ev->addr, probe_allowed, 4) == 0) {
                        rn->probe_allowed_seen = true;
                        return 0;
                }
                if (!rn->probe_allowed_seen && !allowed && memcmp(ev->addr, probe_allowed, 4) == 0 &&
                    ev->reason == EGRESS_REASON_NO_POLICY)
                        return 0; /* its probe while it waits for the policy (retried until allowed) */
                if (!rn->probe_denied_seen && !allowed && memcmp(ev->addr, probe_denied, 4) == 0) {
                        rn->probe_denied_seen = true;
                        return 0;
                }
        }
        (void) run_record_net_add_event(rn->record, ev->family, ev->addr, ev->port, ev->proto, allowed, ev->reason,
                                        boottime_to_realtime(ev->time_ns), NULL);
        if (!allowed) {
                if (ev->hook == EGRESS_HOOK_SOCK_CREATE)
                        (void) snprintf(what, sizeof what, "socket type %u protocol %u", ev->port, ev->proto);
                else if (egress_format_destination(ev->family, ev->addr, ev->port, ev->proto, what, sizeof what) < 0)
                        return 0;
                log_denial(rn, what, egress_reason_to_string(ev->reason), false);
        }
        return 0;
}

static void consume_events(NetManager *nm) {
        int r;

        if (!nm->egress)
                return;
        r = egress_events_consume(nm->egress, on_event, nm);
        if (r < 0)
                log_debug_errno(r, "Failed to read egress events, ignoring: %m");
}

static int on_events_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        consume_events(userdata);
        return 0;
}

/* One entry of the run's table into the kernel's maps, keyed by the run's cgroup. */
static int entry_put(RunNet *rn, EgressEntry *e) {
        if (e->family == AF_INET) {
                e->k4.cgroup = rn->cgroup;
                return egress_rule_put4(rn->nm->egress, &e->k4, &e->v);
        }
        e->k6.cgroup = rn->cgroup;
        return egress_rule_put6(rn->nm->egress, &e->k6, &e->v);
}

static int entry_del(RunNet *rn, EgressEntry *e) {
        if (e->family == AF_INET) {
                e->k4.cgroup = rn->cgroup;
                return egress_rule_del4(rn->nm->egress, &e->k4);
        }
        e->k6.cgroup = rn->cgroup;
        return egress_rule_del6(rn->nm->egress, &e->k6);
}

/* Answers whose TTL has passed: the kernel denies them already (it checks the expiry itself); their
 * entries go, so that a run that resolves endless names does not fill the maps every run shares. */
static void run_net_expire(RunNet *rn, uint64_t now) {
        _cleanup_free_ EgressEntry *changed = NULL, *removed = NULL;
        size_t n_changed = 0, n_removed = 0;
        int r;

        if (!rn->registered || egress_table_expire(rn->table, now, &changed, &n_changed, &removed, &n_removed) <= 0)
                return;
        for (size_t i = 0; i < n_changed; i++) {
                r = entry_put(rn, &changed[i]);
                if (r < 0)
                        log_debug_errno(r, "Run %s: cannot rewrite an expired entry, ignoring: %m", rn->run_id);
        }
        for (size_t i = 0; i < n_removed; i++) {
                r = entry_del(rn, &removed[i]);
                if (r < 0 && r != -ENOENT)
                        log_debug_errno(r, "Run %s: cannot remove an expired entry, ignoring: %m", rn->run_id);
        }
}

static int on_events_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        NetManager *nm = userdata;
        uint64_t now = now_boottime_ns();

        consume_events(nm);
        for (RunNet *rn = nm->runs; rn; rn = rn->next)
                run_net_expire(rn, now);
        if (nm->runs) {
                (void) sd_event_source_set_time_relative(s, EVENTS_POLL_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* ---- the manager ---- */

/* libbpf's own messages (verifier logs, probes) go to the debug log, not to sbxd's stderr. */
_printf_(2, 0) static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        _cleanup_free_ char *m = NULL;

        if (level == LIBBPF_DEBUG || vasprintf(&m, fmt, ap) < 0)
                return 0;
        m[strcspn(m, "\n")] = 0;
        log_debug("libbpf: %s", m);
        return 0;
}

int net_manager_new(sd_event *e, sd_bus *bus, NetManager **ret) {
        _cleanup_(net_manager_freep) NetManager *nm = calloc(1, sizeof(NetManager));
        struct stat st;
        int r;

        if (!nm)
                return -ENOMEM;
        (void) libbpf_set_print(libbpf_print);
        nm->event = sd_event_ref(e);
        nm->bus = sd_bus_ref(bus);
        nm->host_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (nm->host_netns_fd < 0)
                return -errno;
        if (fstat(nm->host_netns_fd, &st) < 0)
                return -errno;
        nm->host_netns_ino = (uint64_t) st.st_ino;
        r = sd_event_add_time_relative(e, &nm->events_timer, CLOCK_MONOTONIC, EVENTS_POLL_USEC, 0, on_events_timer, nm);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(nm->events_timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(nm);
        return 0;
}

NetManager *net_manager_free(NetManager *nm) {
        if (!nm)
                return NULL;
        while (nm->runs)
                run_net_free(nm->runs);
        sd_event_source_disable_unref(nm->events_io);
        sd_event_source_disable_unref(nm->events_timer);
        egress_free(nm->egress);
        safe_close(nm->host_netns_fd);
        sd_bus_unref(nm->bus);
        sd_event_unref(nm->event);
        free(nm);
        return NULL;
}

uint64_t net_manager_host_netns(NetManager *nm) {
        return nm->host_netns_ino;
}

/* sbx.slice's cgroup exists only while the slice is active. */
static int start_slice(NetManager *nm, char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct stat st;
        int r;

        if (stat(SLICE_CGROUP, &st) >= 0)
                return 0;
        r = sd_bus_call_method(nm->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "StartUnit", &error, NULL, "ss", SBX_SLICE_PARENT,
                               "replace");
        if (r < 0)
                return error_setf(ret_error, r, "cannot start %s: %s", SBX_SLICE_PARENT, error.message ?: strerror(-r));
        for (int i = 0; i < 200; i++) {
                if (stat(SLICE_CGROUP, &st) >= 0)
                        return 0;
                (void) usleep(10000);
        }
        return error_setf(ret_error, -ETIMEDOUT, "%s was started, but its cgroup %s did not appear", SBX_SLICE_PARENT,
                          SLICE_CGROUP);
}

int net_manager_prepare(NetManager *nm, char **ret_error) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (nm->egress && egress_verify(nm->egress, NULL) >= 0)
                return 0;
        /* Not attached, or attached to a cgroup that is gone (the slice was stopped and started again:
         * its runs ended with it). Attach to the slice as it is now. */
        nm->events_io = sd_event_source_disable_unref(nm->events_io);
        nm->egress = egress_free(nm->egress);
        r = start_slice(nm, ret_error);
        if (r < 0)
                return r;
        r = egress_open(SLICE_CGROUP, &nm->egress, &why);
        if (r < 0)
                return error_setf(ret_error, r, "egress enforcement is not available: %s", why ?: strerror(-r));
        r = egress_verify(nm->egress, &why);
        if (r < 0)
                return error_setf(ret_error, r, "egress enforcement is not in force: %s", why ?: strerror(-r));
        r = sd_event_add_io(nm->event, &nm->events_io, egress_events_fd(nm->egress), EPOLLIN, on_events_io, nm);
        if (r < 0)
                return error_setf(ret_error, r, "cannot watch egress events: %s", strerror(-r));
        return 0;
}

/* After sbxd took up the runs of an earlier one: the entries of any other run are of a run that ended
 * while no sbxd was there to remove them. */
int net_manager_gc(NetManager *nm, char **live_cgroups) {
        _cleanup_free_ uint64_t *keep = NULL;
        size_t n = 0, removed = 0;
        int r;

        if (!nm->egress)
                return 0;
        keep = calloc(strv_length(live_cgroups) + 1, sizeof(uint64_t));
        if (!keep)
                return -ENOMEM;
        STRV_FOREACH(c, live_cgroups) {
                struct stat st;

                if (stat(*c, &st) >= 0)
                        keep[n++] = (uint64_t) st.st_ino;
        }
        r = egress_gc(nm->egress, keep, n, &removed);
        if (r < 0)
                return r;
        if (removed > 0)
                log_info("Removed the egress entries of %zu run(s) that ended while sbxd was not running.", removed);
        return 0;
}

/* ---- a run ---- */

int run_net_new(NetManager *nm, const Profile *p, NetworkMode mode, char **host_addresses, const char *run_id,
                RunRecord *record, RunNet **ret, char **ret_error) {
        _cleanup_(run_net_freep) RunNet *rn = calloc(1, sizeof(RunNet));
        int r;

        if (!rn)
                return -ENOMEM;
        rn->mode = mode;
        rn->record = record;
        (void) snprintf(rn->run_id, sizeof rn->run_id, "%s", run_id);
        if (!(rn->profile = strdup(p->name)))
                return -ENOMEM;
        r = egress_compile(p, mode, &rn->table, ret_error);
        if (r < 0)
                return r;
        if (mode != NETWORK_NONE)
                STRV_FOREACH(a, host_addresses) {
                        r = egress_table_deny_address(rn->table, *a, ret_error);
                        if (r < 0)
                                return r;
                        rn->host_probes_left++;
                }
        r = run_record_net_init(record, mode);
        if (r < 0)
                return r;
        rn->denials = EVENT_LIMIT_INIT(EGRESS_EVENT_INTERVAL_USEC);
        if (record->unit && !(rn->unit = strdup(record->unit)))
                return -ENOMEM;
        rn->nm = nm;
        rn->next = nm->runs;
        nm->runs = rn;
        *ret = TAKE_PTR(rn);
        return 0;
}

/* ---- its resolver ---- */

static int resolver_decide(void *userdata, const char *name, uint16_t qtype) {
        RunNet *rn = userdata;

        /* mode public: every name (every public address is allowed anyway) */
        if (rn->mode == NETWORK_PUBLIC)
                return 1;
        return egress_table_match_name(rn->table, name) ? 1 : 0;
}

static int resolver_answer(void *userdata, const char *name, const DnsAnswer *a) {
        RunNet *rn = userdata;
        const EgressHostRule *rule = egress_table_match_name(rn->table, name);
        uint64_t now = now_boottime_ns();
        int r;

        if (!rule) {
                /* mode public: nothing to open, only to record */
                if (rn->mode != NETWORK_PUBLIC)
                        return -EPERM;
                for (size_t i = 0; i < a->n_addresses; i++) {
                        NetAddress na = { .family = a->addresses[i].family };

                        memcpy(na.bytes, a->addresses[i].addr, sizeof na.bytes);
                        (void) run_record_net_add_name_address(
                                rn->record, name, &na,
                                egress_classify(na.family, na.bytes, na.family == AF_INET ? 32 : 128, NULL) !=
                                        EGRESS_CLASS_PUBLIC);
                }
                return 0;
        }
        for (size_t i = 0; i < a->n_addresses; i++) {
                _cleanup_free_ EgressEntry *changed = NULL;
                size_t n = 0;
                int reason = 0;
                NetAddress na = { .family = a->addresses[i].family };

                r = egress_table_insert_answer(rn->table, rule, a->addresses[i].family, a->addresses[i].addr,
                                               a->addresses[i].ttl, now, &changed, &n, &reason);
                if (r < 0)
                        return r;
                memcpy(na.bytes, a->addresses[i].addr, sizeof na.bytes);
                (void) run_record_net_add_name_address(rn->record, name, &na, n == 0);
                for (size_t k = 0; k < n; k++) {
                        r = entry_put(rn, &changed[k]);
                        if (r < 0)
                                return r; /* the client gets SERVFAIL: nothing half-allowed */
                }
        }
        return 0;
}

static void resolver_asked(void *userdata, const char *name, uint16_t qtype, const char *verdict) {
        RunNet *rn = userdata;
        NameVerdict v = name_verdict_from_string(verdict);

        if (v < 0)
                return;
        (void) run_record_net_add_name(rn->record, name, v, NULL, 0, NULL, 0);
        if (v == NAME_REFUSED)
                log_denial(rn, name, NULL, true);
}

static const ResolverCallbacks resolver_callbacks = {
        .decide = resolver_decide,
        .answer = resolver_answer,
        .asked = resolver_asked,
};

static int bound_socket(int family, int type, int *ret) {
        _cleanup_close_ int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        union {
                struct sockaddr sa;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
        } u = {};
        socklen_t len;
        int one = 1;

        if (fd < 0)
                return -errno;
        if (family == AF_INET) {
                u.in.sin_family = AF_INET;
                u.in.sin_port = htons(EGRESS_RESOLVER_PORT);
                u.in.sin_addr.s_addr = htonl(EGRESS_RESOLVER_ADDR4);
                len = sizeof u.in;
        } else {
                u.in6.sin6_family = AF_INET6;
                u.in6.sin6_port = htons(EGRESS_RESOLVER_PORT);
                u.in6.sin6_addr = in6addr_loopback;
                len = sizeof u.in6;
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, &u.sa, len) < 0)
                return -errno;
        if (type == SOCK_STREAM && listen(fd, 16) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

/* The resolver's sockets live in the run's namespace: sbxd enters it for as long as it takes to make
 * them (it is single-threaded), then returns to the host's. */
static int resolver_sockets(NetManager *nm, const char *netns_path, int fds[static 4], size_t *ret_n, char **ret_error) {
        _cleanup_close_ int ns = open(netns_path, O_RDONLY | O_CLOEXEC);
        size_t n = 0;
        int r = 0;

        if (ns < 0)
                return error_setf(ret_error, -errno, "cannot open the run's network namespace %s: %m", netns_path);
        if (setns(ns, CLONE_NEWNET) < 0)
                return error_setf(ret_error, -errno, "cannot enter the run's network namespace: %m");
        r = bound_socket(AF_INET, SOCK_DGRAM, &fds[n]);
        if (r >= 0)
                n++, r = bound_socket(AF_INET, SOCK_STREAM, &fds[n]);
        if (r >= 0) {
                n++;
                /* IPv6 may be off in the namespace: then there is no ::1 to serve */
                if (bound_socket(AF_INET6, SOCK_DGRAM, &fds[n]) >= 0) {
                        n++;
                        if (bound_socket(AF_INET6, SOCK_STREAM, &fds[n]) >= 0)
                                n++;
                }
        }
        if (setns(nm->host_netns_fd, CLONE_NEWNET) < 0) {
                /* never go on in the run's namespace */
                log_error("Cannot return to the host's network namespace: %m");
                abort();
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        safe_close(fds[i]);
                return error_setf(ret_error, r, "cannot open the run's resolver sockets: %s", strerror(-r));
        }
        *ret_n = n;
        return 0;
}

static int upstreams(struct sockaddr_storage **ret, size_t *ret_n) {
        const char *e = getenv("SBX_DNS_UPSTREAM");

        if (e) {
                _cleanup_free_ struct sockaddr_storage *s = calloc(1, sizeof(struct sockaddr_storage));
                int r;

                if (!s)
                        return -ENOMEM;
                r = resolver_upstream_parse(e, s);
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(s);
                *ret_n = 1;
                return 0;
        }
        return resolver_upstreams_from_resolv_conf("/etc/resolv.conf", ret, ret_n);
}

/* A registration that failed half-way: nothing of it stays (the helper refuses the run meanwhile). */
static void run_net_unregister(RunNet *rn) {
        int r;

        rn->resolver = resolver_free(rn->resolver);
        if (!rn->nm || !rn->nm->egress || rn->cgroup == 0)
                return;
        r = egress_run_remove(rn->nm->egress, rn->cgroup);
        if (r < 0)
                log_warning_errno(r, "Run %s: cannot remove its egress entries: %m", rn->run_id);
}

void run_net_set_record(RunNet *rn, RunRecord *record) {
        rn->record = record;
}

bool run_net_is_registered(const RunNet *rn) {
        return rn && rn->registered;
}

int run_net_register(RunNet *rn, const char *cgroup_path, const char *netns_path, char **ret_error) {
        NetManager *nm = rn->nm;
        struct stat st;
        size_t n;
        int r;

        if (!nm->egress)
                return error_setf(ret_error, -ENOTCONN, "egress programs are not loaded");
        if (stat(cgroup_path, &st) < 0)
                return error_setf(ret_error, -errno, "cannot find the run's cgroup %s: %m", cgroup_path);
        rn->cgroup = (uint64_t) st.st_ino;

        if (rn->mode != NETWORK_NONE) {
                _cleanup_free_ struct sockaddr_storage *up = NULL;
                size_t n_up = 0, n_fds = 0;
                int fds[4];

                r = upstreams(&up, &n_up);
                if (r < 0 || n_up == 0)
                        return error_setf(ret_error, r < 0 ? r : -ENOENT,
                                          "no DNS server to forward the run's queries to (/etc/resolv.conf%s)",
                                          getenv("SBX_DNS_UPSTREAM") ? ", SBX_DNS_UPSTREAM" : "");
                r = resolver_sockets(nm, netns_path, fds, &n_fds, ret_error);
                if (r < 0)
                        return r;
                r = resolver_new(nm->event, fds, n_fds, up, n_up, &resolver_callbacks, rn, &rn->resolver);
                if (r < 0)
                        return error_setf(ret_error, r, "cannot start the run's resolver: %s", strerror(-r));
        }

        n = egress_table_size(rn->table);
        for (size_t i = 0; i < n; i++) {
                EgressEntry e;

                r = egress_table_get(rn->table, i, &e);
                if (r >= 0)
                        r = entry_put(rn, &e);
                if (r < 0) {
                        run_net_unregister(rn);
                        return error_setf(ret_error, r, "cannot write the run's egress entries: %s", strerror(-r));
                }
        }
        r = egress_run_set(nm->egress, rn->cgroup, rn->mode != NETWORK_NONE ? EGRESS_RUN_DNS_REDIRECT : 0);
        if (r < 0) {
                run_net_unregister(rn);
                return error_setf(ret_error, r, "cannot register the run's egress policy: %s", strerror(-r));
        }
        rn->registered = true;
        (void) sd_event_source_set_time_relative(nm->events_timer, EVENTS_POLL_USEC);
        (void) sd_event_source_set_enabled(nm->events_timer, SD_EVENT_ONESHOT);
        return 0;
}

void run_net_exited(RunNet *rn) {
        if (rn->nm)
                consume_events(rn->nm);
}

void run_net_finish(RunNet *rn) {
        NetManager *nm = rn->nm;
        size_t left = 1;

        if (!nm)
                return;
        consume_events(nm);
        rn->resolver = resolver_free(rn->resolver);
        if (nm->egress && rn->cgroup != 0) {
                int r = egress_run_remove(nm->egress, rn->cgroup);

                if (r < 0)
                        log_warning_errno(r, "Run %s: cannot remove its egress entries: %m", rn->run_id);
                if (egress_run_count(nm->egress, rn->cgroup, &left) < 0)
                        left = 1;
        } else if (rn->cgroup == 0)
                left = 0; /* never registered: nothing was written */
        rn->registered = false;
        if (rn->record->network)
                rn->record->network->entries_removed = left == 0;
}

RunNet *run_net_free(RunNet *rn) {
        if (!rn)
                return NULL;
        if (rn->nm)
                for (RunNet **p = &rn->nm->runs; *p; p = &(*p)->next)
                        if (*p == rn) {
                                *p = rn->next;
                                break;
                        }
        resolver_free(rn->resolver);
        egress_table_free(rn->table);
        free(rn->profile);
        free(rn->unit);
        free(rn);
        return NULL;
}
