/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/egress-connect: what the egress programs cost a connect(). Root, inside a testbed (never on a
 * host whose cgroups are not its own). Creates, and removes again when done:
 *   PARENT/egress-bench-PID.slice                 the "slice" the programs are attached to (own pins)
 *   PARENT/egress-bench-PID.slice/p.slice/r.service  the run: N rules plus one allowing the test host
 *   PARENT/egress-bench-PID-plain                 a cgroup no program applies to
 *   a network namespace for itself and one for a test host behind a veth pair (198.51.100.1 and .2/24,
 *   no other address), with a TCP listener, a bulk TCP sink and nothing else.
 * Then interleaves rounds in the run cgroup and in the plain one: TCP connect()+close (linger 0) and
 * UDP connect() to the test host, prints the medians and the ratios (targets: TCP <= 1.05, UDP <= 1.25
 * with 10,000 rules), and the bulk TCP throughput of both (median of 3 interleaved transfers each). PARENT must be a cgroup2 directory with no
 * egress programs attached above it (not sbx.slice).
 *
 *   egress-connect [--rules N] [--rounds N] [--ops N] [--bulk-mb N] [--pin-dir DIR] PARENT
 *   (defaults 10000 rules, 15 rounds, 200 operations per round and mode, 256 MB, /sys/fs/bpf/sbx-egress-bench-PID)
 * One "BENCH key value" line per figure. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "egress.h"

#define HOST_ADDR "198.51.100.2"
#define LOCAL_ADDR "198.51.100.1"
#define PREFIX_LEN "/24"
#define PORT_CONNECT 5001
#define PORT_BULK 5002
#define PORT_UDP 5003
#define PORT_DENIED 5004
#define BULK_ROUNDS 3

typedef struct Bench {
        char *slice, *profile, *run, *plain, *pin_dir;
        char veth_local[16], veth_host[16];
        Egress *egress;
        pid_t host;
} Bench;

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, size_t n) {
        qsort(v, n, sizeof(uint64_t), cmp_u64);
        return v[n / 2] / 1000.0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static uint64_t *memdup_u64(const uint64_t *p, size_t n) {
        uint64_t *c = malloc(n * sizeof(uint64_t));

        if (c)
                memcpy(c, p, n * sizeof(uint64_t));
        return c;
}

static int run_cmd(char *const argv[]) {
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execvp(argv[0], argv);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int cgroup_enter(const char *dir) {
        _cleanup_free_ char *p = NULL;
        FILE *f;
        int r = 0;

        if (asprintf(&p, "%s/cgroup.procs", dir) < 0)
                return -ENOMEM;
        f = fopen(p, "we");
        if (!f)
                return -errno;
        if (fputs("0\n", f) < 0)
                r = -EIO;
        if (fclose(f) != 0)
                r = -errno;
        return r;
}

static int cgroup_id(const char *dir, uint64_t *ret) {
        struct stat st;

        if (stat(dir, &st) < 0)
                return -errno;
        *ret = st.st_ino;
        return 0;
}

static Bench *bench_free(Bench *b) {
        if (!b)
                return NULL;
        if (b->host > 0) {
                (void) kill(b->host, SIGKILL);
                (void) waitpid(b->host, NULL, 0);
        }
        if (b->egress) {
                (void) egress_unpin(b->egress);
                b->egress = egress_free(b->egress);
        }
        /* the worker that sat in these has exited; the host's netns (and so the veth pair) died with it */
        if (b->run)
                (void) rmdir(b->run);
        if (b->profile)
                (void) rmdir(b->profile);
        if (b->slice)
                (void) rmdir(b->slice);
        if (b->plain)
                (void) rmdir(b->plain);
        free(b->run);
        free(b->profile);
        free(b->slice);
        free(b->plain);
        free(b->pin_dir);
        return mfree(b);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Bench *, bench_free);

static int listen_on(int type, int port) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
        int one = 1, fd;

        inet_pton(AF_INET, HOST_ADDR, &a.sin_addr);
        fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0 || (type == SOCK_STREAM && listen(fd, 4096) < 0)) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* The test host, in its own network namespace: accepts and drops connections, sinks bulk data. */
_noreturn_ static void host_main(int ready_fd, int go_fd, const char *veth) {
        char *addr[] = { "ip", "addr", "add", HOST_ADDR PREFIX_LEN, "dev", (char *) veth, NULL };
        char *up[] = { "ip", "link", "set", (char *) veth, "up", NULL };
        char *lo[] = { "ip", "link", "set", "lo", "up", NULL };
        static char buf[1 << 17];
        int lc, lb, lu;
        char c = 0;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (unshare(CLONE_NEWNET) < 0)
                _exit(1);
        if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
                _exit(1);
        if (run_cmd(lo) < 0 || run_cmd(addr) < 0 || run_cmd(up) < 0)
                _exit(1);
        lc = listen_on(SOCK_STREAM, PORT_CONNECT);
        lb = listen_on(SOCK_STREAM, PORT_BULK);
        lu = listen_on(SOCK_DGRAM, PORT_UDP);
        if (lc < 0 || lb < 0 || lu < 0)
                _exit(1);
        if (write(ready_fd, "l", 1) != 1)
                _exit(1);

        for (;;) {
                struct pollfd p[2] = { { .fd = lc, .events = POLLIN }, { .fd = lb, .events = POLLIN } };
                int fd;

                if (poll(p, 2, -1) < 0)
                        continue;
                if (p[0].revents & POLLIN) {
                        fd = accept4(lc, NULL, NULL, SOCK_CLOEXEC);
                        if (fd >= 0)
                                close(fd);
                }
                if (p[1].revents & POLLIN) {
                        fd = accept4(lb, NULL, NULL, SOCK_CLOEXEC);
                        if (fd >= 0) {
                                while (read(fd, buf, sizeof(buf)) > 0)
                                        ;
                                close(fd);
                        }
                }
        }
}

static int bench_network(Bench *b) {
        char *add[] = { "ip", "link", "add", b->veth_local, "type", "veth", "peer", "name", b->veth_host, NULL };
        char *addr[] = { "ip", "addr", "add", LOCAL_ADDR PREFIX_LEN, "dev", b->veth_local, NULL };
        char *up[] = { "ip", "link", "set", b->veth_local, "up", NULL };
        char pid[16];
        char *move[] = { "ip", "link", "set", b->veth_host, "netns", pid, NULL };
        int ready[2], go[2], r;
        char c;

        /* our own network namespace first: the testbed's stays untouched */
        if (unshare(CLONE_NEWNET) < 0)
                return -errno;
        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0)
                return -errno;
        b->host = fork();
        if (b->host < 0)
                return -errno;
        if (b->host == 0)
                host_main(ready[1], go[0], b->veth_host);
        close(ready[1]);
        close(go[0]);
        if (read(ready[0], &c, 1) != 1)
                return -EIO;

        snprintf(pid, sizeof(pid), "%d", (int) b->host);
        r = run_cmd(add);
        if (r >= 0)
                r = run_cmd(move);
        if (r >= 0)
                r = run_cmd(addr);
        if (r >= 0)
                r = run_cmd(up);
        if (r < 0)
                return r;
        if (write(go[1], "g", 1) != 1 || read(ready[0], &c, 1) != 1)
                return -EIO;
        close(go[1]);
        close(ready[0]);
        return 0;
}

static uint32_t xorshift(uint32_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 17;
        *s ^= *s << 5;
        return *s;
}

static int bench_rules(Bench *b, uint64_t run, size_t n) {
        struct egress_value allow = { .n_ranges = 1, .r[0] = { .lo = PORT_CONNECT, .hi = PORT_UDP, .rule = 1 } };
        struct egress_key4 k = { .prefixlen = EGRESS_KEY_HDR_BITS + 32, .cgroup = run };
        uint32_t seed = 0x5b7e1234;
        int r;

        r = egress_run_set(b->egress, run, 0);
        if (r < 0)
                return r;
        inet_pton(AF_INET, HOST_ADDR, k.addr);
        for (int proto = 0; proto < 2; proto++) {
                k.proto = proto == 0 ? IPPROTO_TCP : IPPROTO_UDP;
                r = egress_rule_put4(b->egress, &k, &allow);
                if (r < 0)
                        return r;
        }

        /* N other rules of the run: prefixes /16../32 anywhere but 198.51.100.0/24, a few port ranges */
        for (size_t i = 0; i < n;) {
                struct egress_value v = { .rule = (uint16_t) i, .n_ranges = 1 + xorshift(&seed) % 3 };
                uint32_t a = xorshift(&seed), plen = 16 + xorshift(&seed) % 17;

                if ((a >> 8) == 0xc63364)
                        continue;
                a &= plen == 32 ? UINT32_MAX : ~(UINT32_MAX >> plen);
                for (size_t j = 0; j < v.n_ranges; j++) {
                        uint16_t lo = xorshift(&seed) % 60000;
                        v.r[j] = (struct egress_port_range) { .lo = lo, .hi = lo + xorshift(&seed) % 100, .rule = (uint16_t) i };
                }
                k = (struct egress_key4) { .prefixlen = EGRESS_KEY_HDR_BITS + plen, .cgroup = run,
                                          .proto = xorshift(&seed) % 2 ? IPPROTO_TCP : IPPROTO_UDP };
                a = htonl(a);
                memcpy(k.addr, &a, sizeof(a));
                r = egress_rule_put4(b->egress, &k, &v);
                if (r < 0)
                        return r;
                i++;
        }
        return 0;
}

static void host_sockaddr(struct sockaddr_in *a, int port) {
        *a = (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(port) };
        inet_pton(AF_INET, HOST_ADDR, &a->sin_addr);
}

static int tcp_connect_close(uint64_t *ret_ns) {
        struct linger lg = { .l_onoff = 1, .l_linger = 0 };
        struct sockaddr_in a;
        uint64_t t;
        int fd, r = 0;

        host_sockaddr(&a, PORT_CONNECT);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* reset on close: no TIME_WAIT to run out of ports with */
        (void) setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        t = now_ns();
        if (connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0)
                r = -errno;
        close(fd);
        *ret_ns = now_ns() - t;
        return r;
}

static int udp_connect(int fd, uint64_t *ret_ns) {
        struct sockaddr_in a;
        uint64_t t;
        int r = 0;

        host_sockaddr(&a, PORT_UDP);
        t = now_ns();
        if (connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0)
                r = -errno;
        *ret_ns = now_ns() - t;
        return r;
}

static int bulk(size_t mb, double *ret_mbps) {
        static char buf[1 << 17];
        struct sockaddr_in a;
        _cleanup_close_ int fd = -EBADF;
        size_t left = mb << 20;
        uint64_t t;

        host_sockaddr(&a, PORT_BULK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        t = now_ns();
        if (connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0)
                return -errno;
        while (left > 0) {
                ssize_t n = write(fd, buf, MIN(left, sizeof(buf)));
                if (n < 0)
                        return -errno;
                left -= n;
        }
        (void) shutdown(fd, SHUT_WR);
        {
                char c;
                /* EOF once the sink has read everything */
                if (read(fd, &c, 1) < 0)
                        return -errno;
        }
        *ret_mbps = (double) mb / ((now_ns() - t) / 1e9);
        return 0;
}

static int count_event(const struct egress_event *ev, void *userdata) {
        (*(size_t *) userdata)++;
        return 0;
}

/* The measuring process: moves itself between the two cgroups, so it must not be the one that removes them. */
static int worker(Bench *b, size_t rounds, size_t ops, size_t bulk_mb) {
        _cleanup_free_ uint64_t *tcp[2] = {}, *udp[2] = {};
        _cleanup_free_ double *ratio_tcp = NULL, *ratio_udp = NULL;
        double bulk_mbps[2] = {}, bulk_all[2][BULK_ROUNDS] = {}, m_tcp[2], m_udp[2];
        const char *where[2] = { b->plain, b->run };
        size_t events = 0;
        uint64_t stats[_EGRESS_STAT_MAX], t;
        int r;

        /* one CPU for the measuring process: fewer migrations between the modes */
        {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET(0, &set);
                (void) sched_setaffinity(0, sizeof(set), &set);
        }
        ratio_tcp = calloc(rounds, sizeof(double));
        ratio_udp = calloc(rounds, sizeof(double));
        if (!ratio_tcp || !ratio_udp)
                return -ENOMEM;
        for (int m = 0; m < 2; m++) {
                tcp[m] = calloc(rounds * ops, sizeof(uint64_t));
                udp[m] = calloc(rounds * ops, sizeof(uint64_t));
                if (!tcp[m] || !udp[m])
                        return -ENOMEM;
        }

        /* the programs are there: a port the run may not use fails at once */
        r = cgroup_enter(b->run);
        if (r < 0)
                return r;
        {
                struct sockaddr_in a;
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

                host_sockaddr(&a, PORT_DENIED);
                r = connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0 ? -errno : 0;
                close(fd);
                if (r != -EPERM) {
                        fprintf(stderr, "egress-connect: a denied port gave %s, not EPERM\n", strerror(-r));
                        return -EIO;
                }
        }

        for (size_t round = 0; round < rounds; round++)
                for (int i = 0; i < 2; i++) {
                        int m = (round + i) % 2; /* alternate which mode goes first */
                        _cleanup_close_ int u = -EBADF;

                        r = cgroup_enter(where[m]);
                        if (r < 0)
                                return r;
                        u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                        if (u < 0)
                                return -errno;
                        for (size_t o = 0; o < ops; o++) {
                                r = tcp_connect_close(&tcp[m][round * ops + o]);
                                if (r < 0)
                                        return r;
                                r = udp_connect(u, &udp[m][round * ops + o]);
                                if (r < 0)
                                        return r;
                        }
                        r = egress_events_consume(b->egress, count_event, &events);
                        if (r < 0)
                                return r;
                }

        /* each round's ratio of medians: slow drift of the machine cancels out */
        for (size_t round = 0; round < rounds; round++) {
                uint64_t *s[4];

                for (int m = 0; m < 2; m++) {
                        s[m] = memdup_u64(tcp[m] + round * ops, ops);
                        s[2 + m] = memdup_u64(udp[m] + round * ops, ops);
                }
                if (!s[0] || !s[1] || !s[2] || !s[3])
                        r = -ENOMEM;
                else {
                        ratio_tcp[round] = median_us(s[1], ops) / median_us(s[0], ops);
                        ratio_udp[round] = median_us(s[3], ops) / median_us(s[2], ops);
                }
                for (int i = 0; i < 4; i++)
                        free(s[i]);
                if (r < 0)
                        return r;
        }
        qsort(ratio_tcp, rounds, sizeof(double), cmp_double);
        qsort(ratio_udp, rounds, sizeof(double), cmp_double);

        /* bulk: BULK_ROUNDS interleaved transfers per mode, the median of each */
        for (size_t round = 0; round < BULK_ROUNDS; round++)
                for (int i = 0; i < 2; i++) {
                        int m = (round + i) % 2;

                        r = cgroup_enter(where[m]);
                        if (r < 0)
                                return r;
                        r = bulk(bulk_mb, &bulk_all[m][round]);
                        if (r < 0)
                                return r;
                }
        for (int m = 0; m < 2; m++) {
                qsort(bulk_all[m], BULK_ROUNDS, sizeof(double), cmp_double);
                bulk_mbps[m] = bulk_all[m][BULK_ROUNDS / 2];
        }

        r = cgroup_enter(b->plain);
        if (r < 0)
                return r;
        r = egress_stats(b->egress, stats);
        if (r < 0)
                return r;

        for (int m = 0; m < 2; m++) {
                m_tcp[m] = median_us(tcp[m], rounds * ops);
                m_udp[m] = median_us(udp[m], rounds * ops);
        }
        t = rounds * ops;
        printf("BENCH ops_per_mode %" PRIu64 "\n", t);
        printf("BENCH tcp_connect_close_plain_us %.2f\n", m_tcp[0]);
        printf("BENCH tcp_connect_close_egress_us %.2f\n", m_tcp[1]);
        printf("BENCH tcp_connect_ratio %.3f (target <= 1.05)\n", m_tcp[1] / m_tcp[0]);
        printf("BENCH tcp_connect_ratio_paired %.3f (median over rounds)\n", ratio_tcp[rounds / 2]);
        printf("BENCH udp_connect_plain_us %.2f\n", m_udp[0]);
        printf("BENCH udp_connect_egress_us %.2f\n", m_udp[1]);
        printf("BENCH udp_connect_ratio %.3f (target <= 1.25)\n", m_udp[1] / m_udp[0]);
        printf("BENCH udp_connect_ratio_paired %.3f (median over rounds)\n", ratio_udp[rounds / 2]);
        printf("BENCH bulk_plain_MBps %.0f\n", bulk_mbps[0]);
        printf("BENCH bulk_egress_MBps %.0f\n", bulk_mbps[1]);
        printf("BENCH bulk_ratio %.3f\n", bulk_mbps[1] / bulk_mbps[0]);
        printf("BENCH events_read %zu\n", events);
        printf("BENCH stat_allow %" PRIu64 "\n", stats[EGRESS_STAT_ALLOW]);
        printf("BENCH stat_deny %" PRIu64 "\n", stats[EGRESS_STAT_DENY]);
        printf("BENCH stat_event_lost %" PRIu64 "\n", stats[EGRESS_STAT_EVENT_LOST]);
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "rules", required_argument, NULL, 'n' },
                { "rounds", required_argument, NULL, 'r' },
                { "ops", required_argument, NULL, 'o' },
                { "bulk-mb", required_argument, NULL, 'b' },
                { "pin-dir", required_argument, NULL, 'p' },
                {}
        };
        _cleanup_(bench_freep) Bench *b = NULL;
        _cleanup_free_ char *error = NULL;
        size_t n_rules = 10000, rounds = 15, ops = 200, bulk_mb = 256;
        const char *pin_dir = NULL, *parent;
        uint64_t run_id = 0;
        int c, r, status;
        pid_t w;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'n':
                        n_rules = strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        rounds = MAX(strtoul(optarg, NULL, 10), 1UL);
                        break;
                case 'o':
                        ops = MAX(strtoul(optarg, NULL, 10), 1UL);
                        break;
                case 'b':
                        bulk_mb = MAX(strtoul(optarg, NULL, 10), 1UL);
                        break;
                case 'p':
                        pin_dir = optarg;
                        break;
                default:
                        return 2;
                }
        if (optind != argc - 1) {
                fprintf(stderr, "usage: egress-connect [--rules N] [--rounds N] [--ops N] [--bulk-mb N] [--pin-dir DIR] PARENT_CGROUP_DIR\n");
                return 2;
        }
        parent = argv[optind];

        b = calloc(1, sizeof(*b));
        if (!b)
                return 1;
        snprintf(b->veth_local, sizeof(b->veth_local), "egb%da", (int) getpid() % 100000);
        snprintf(b->veth_host, sizeof(b->veth_host), "egb%db", (int) getpid() % 100000);
        if (asprintf(&b->slice, "%s/egress-bench-%d.slice", parent, (int) getpid()) < 0 ||
            asprintf(&b->plain, "%s/egress-bench-%d-plain", parent, (int) getpid()) < 0)
                return 1;
        b->pin_dir = pin_dir ? strdup(pin_dir) : NULL;
        if (!pin_dir && asprintf(&b->pin_dir, "/sys/fs/bpf/sbx-egress-bench-%d", (int) getpid()) < 0)
                return 1;
        if (!b->pin_dir)
                return 1;
        if (mkdir(b->slice, 0755) < 0 || mkdir(b->plain, 0755) < 0) {
                fprintf(stderr, "egress-connect: cannot create cgroups below %s: %m\n", parent);
                return 1;
        }
        if (asprintf(&b->profile, "%s/p.slice", b->slice) < 0 || mkdir(b->profile, 0755) < 0)
                return 1;
        if (asprintf(&b->run, "%s/r.service", b->profile) < 0 || mkdir(b->run, 0755) < 0)
                return 1;

        r = egress_open_at(b->pin_dir, b->slice, &b->egress, &error);
        if (r < 0) {
                fprintf(stderr, "egress-connect: %s\n", strna(error));
                return 1;
        }
        r = cgroup_id(b->run, &run_id);
        if (r >= 0)
                r = bench_rules(b, run_id, n_rules);
        if (r < 0) {
                fprintf(stderr, "egress-connect: cannot fill the rules: %s\n", strerror(-r));
                return 1;
        }
        r = bench_network(b);
        if (r < 0) {
                fprintf(stderr, "egress-connect: cannot set up the test host: %s\n", strerror(-r));
                return 1;
        }
        printf("BENCH rules %zu\n", n_rules);
        fflush(stdout);

        w = fork();
        if (w < 0)
                return 1;
        if (w == 0) {
                r = worker(b, rounds, ops, bulk_mb);
                if (r < 0)
                        fprintf(stderr, "egress-connect: %s\n", strerror(-r));
                fflush(stdout);
                _exit(r < 0 ? 1 : 0);
        }
        if (waitpid(w, &status, 0) < 0)
                return 1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
