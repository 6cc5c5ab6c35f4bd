/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress compiler: profiles in, trie entries out, judged here the way the kernel judges them
 * (judge(): the longest matching prefix, then its port ranges and their expiry). The documentation
 * ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) stand in for public addresses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "egress-policy.h"
#include "fileio.h"
#include "profile.h"
#include "unit-test.h"

#define TCP IPPROTO_TCP
#define UDP IPPROTO_UDP
#define SEC UINT64_C(1000000000)
#define T0 (1000 * SEC) /* CLOCK_BOOTTIME of the first answer */

/* ---- helpers ---- */

static char *json(const char *s) {
        char *t = strdup(s);

        assert_non_null(t);
        for (char *c = t; *c; c++)
                if (*c == '\'')
                        *c = '"';
        return t;
}

#define DOC(net)                                                                                              \
        "{'version': 1, 'description': 'd', 'network': " net ", 'resources': {'memory': '2G', 'tasks': 512, " \
        "'wall_time': '1h'}}"
#define ALLOW(...) DOC("{'mode': 'allowlist', 'destinations': [" __VA_ARGS__ "]}")

static Profile *parse_ok(const char *doc) {
        _cleanup_free_ char *t = json(doc);
        Profile *p = NULL;
        char *error = NULL;
        int r;

        r = profile_parse(t, strlen(t), "test", "x.json", &p, &error);
        if (r < 0)
                fail_msg("profile_parse() failed: %d %s\n  document: %s", r, strna(error), doc);
        return p;
}

static EgressTable *compile_ok(const Profile *p, NetworkMode mode) {
        EgressTable *t = NULL;
        char *error = NULL;
        int r;

        r = egress_compile(p, mode, &t, &error);
        if (r < 0)
                fail_msg("egress_compile(%s) failed: %d %s", network_mode_to_string(mode), r, strna(error));
        assert_null(error);
        assert_non_null(t);
        return t;
}

static EgressTable *compile_doc(const char *doc, NetworkMode mode) {
        _cleanup_(profile_freep) Profile *p = parse_ok(doc);

        return compile_ok(p, mode);
}

/* An address in text form; IPv4-mapped IPv6 becomes IPv4, as the kernel judges it. */
static int parse_addr(const char *s, uint8_t a[16]) {
        static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

        memset(a, 0, 16);
        if (inet_pton(AF_INET, s, a) == 1)
                return AF_INET;
        assert_int_equal(inet_pton(AF_INET6, s, a), 1);
        if (memcmp(a, mapped, 12) == 0) {
                memmove(a, a + 12, 4);
                memset(a + 4, 0, 12);
                return AF_INET;
        }
        return AF_INET6;
}

static bool prefix_match(const uint8_t *p, unsigned plen, const uint8_t *a) {
        for (unsigned bit = 0; bit < plen; bit++) {
                uint8_t m = (uint8_t) (0x80 >> (bit % 8));

                if ((p[bit / 8] & m) != (a[bit / 8] & m))
                        return false;
        }
        return true;
}

typedef struct Verdict {
        bool allow;
        int reason;   /* deny */
        unsigned rule;
} Verdict;

/* What the kernel decides for a call to addr:port over proto at now_ns. */
static Verdict judge(const EgressTable *t, const char *addr, uint8_t proto, uint16_t port, uint64_t now_ns) {
        const struct egress_value *v = NULL;
        unsigned best = 0;
        bool expired = false;
        EgressEntry e, found;
        uint8_t a[16];
        int family = parse_addr(addr, a);

        for (size_t i = 0; egress_table_get(t, i, &e) >= 0; i++) {
                unsigned plen;
                const uint8_t *k;

                if (e.family != family)
                        continue;
                if ((family == AF_INET ? e.k4.proto : e.k6.proto) != proto)
                        continue;
                plen = (family == AF_INET ? e.k4.prefixlen : e.k6.prefixlen) - EGRESS_KEY_HDR_BITS;
                k = family == AF_INET ? e.k4.addr : e.k6.addr;
                if (!prefix_match(k, plen, a) || (v && plen <= best))
                        continue;
                found = e;
                v = &found.v;
                best = plen;
        }
        if (!v)
                return (Verdict) { .reason = EGRESS_REASON_NOT_ALLOWED };
        for (size_t i = 0; i < v->n_ranges; i++) {
                if (port < v->r[i].lo || port > v->r[i].hi)
                        continue;
                if (v->r[i].expires_ns != 0 && now_ns >= v->r[i].expires_ns) {
                        expired = true;
                        continue;
                }
                return (Verdict) { .allow = true, .rule = v->r[i].rule };
        }
        return (Verdict) { .reason = expired ? EGRESS_REASON_EXPIRED : v->reason, .rule = v->rule };
}

typedef struct VerdictCase {
        const char *addr;
        uint8_t proto;
        uint16_t port;
        bool allow;
        int reason;        /* when denied */
} VerdictCase;

#define ALLOWED(a, pr, po) { a, pr, po, true, -1 }
#define DENIED(a, pr, po, why) { a, pr, po, false, why }

static unsigned check_verdicts_at(const EgressTable *t, const VerdictCase *c, size_t n, uint64_t now_ns,
                                  const char *what) {
        unsigned failures = 0;

        for (size_t i = 0; i < n; i++) {
                Verdict v = judge(t, c[i].addr, c[i].proto, c[i].port, now_ns);
                char buf[EGRESS_DESTINATION_STRING_MAX];
                uint8_t a[16];
                int family = parse_addr(c[i].addr, a);

                assert_int_equal(egress_format_destination(family, a, c[i].port, c[i].proto, buf, sizeof(buf)), 0);
                check_row(failures, v.allow == c[i].allow, "%s: %s: %s, expected %s", what, buf,
                          v.allow ? "allowed" : egress_reason_to_string(v.reason),
                          c[i].allow ? "allowed" : egress_reason_to_string(c[i].reason));
                check_row(failures, v.allow || v.reason == c[i].reason, "%s: %s: denied as %s, expected %s", what,
                          buf, egress_reason_to_string(v.reason), egress_reason_to_string(c[i].reason));
        }
        return failures;
}

#define CHECK_VERDICTS(t, table, now) assert_int_equal(check_verdicts_at(t, table, ELEMENTSOF(table), now, #table), 0)

/* Every entry: header bits, cgroup 0, canonical address, ranges within bounds, no key twice. */
static void check_entries(const EgressTable *t) {
        size_t n = egress_table_size(t);

        for (size_t i = 0; i < n; i++) {
                EgressEntry e, f;
                unsigned plen, bits;
                const uint8_t *k;

                assert_int_equal(egress_table_get(t, i, &e), 0);
                assert_true(e.family == AF_INET || e.family == AF_INET6);
                bits = e.family == AF_INET ? 32 : 128;
                plen = (e.family == AF_INET ? e.k4.prefixlen : e.k6.prefixlen) - EGRESS_KEY_HDR_BITS;
                k = e.family == AF_INET ? e.k4.addr : e.k6.addr;
                assert_true(plen <= bits);
                assert_int_equal(e.family == AF_INET ? e.k4.cgroup : e.k6.cgroup, 0);
                for (unsigned bit = plen; bit < bits; bit++)
                        assert_int_equal(k[bit / 8] & (0x80 >> (bit % 8)), 0);
                assert_true(e.v.n_ranges <= EGRESS_MAX_PORT_RANGES);
                assert_true(e.v.reason < _EGRESS_REASON_MAX);
                for (size_t j = 0; j < e.v.n_ranges; j++)
                        assert_true(e.v.r[j].lo <= e.v.r[j].hi);
                for (size_t j = i + 1; j < n; j++) {
                        assert_int_equal(egress_table_get(t, j, &f), 0);
                        if (f.family != e.family)
                                continue;
                        assert_false(e.family == AF_INET ? memcmp(&e.k4, &f.k4, sizeof(e.k4)) == 0
                                                         : memcmp(&e.k6, &f.k6, sizeof(e.k6)) == 0);
                }
        }
        assert_int_equal(egress_table_get(t, n, &(EgressEntry) {}), -ENOENT);
}

static void assert_strv(char **a, const char *const *b) {
        size_t i;

        assert_non_null(a);
        for (i = 0; a[i] && b[i]; i++)
                assert_string_equal(a[i], b[i]);
        assert_null(a[i]);
        assert_null(b[i]);
}
#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* ---- the always-denied ranges ---- */

static void test_denied_rows(void **state) {
        EgressDeniedRow row;
        size_t n = 0, v4 = 0, embedded = 0;

        for (; egress_denied_row(n, &row) >= 0; n++) {
                unsigned bits = row.family == AF_INET ? 32 : 128;

                assert_true(row.prefixlen <= bits);
                for (unsigned bit = row.prefixlen; bit < 128; bit++)
                        assert_int_equal(row.addr[bit / 8] & (0x80 >> (bit % 8)), 0);
                assert_non_null(row.name);
                assert_true(row.reason >= EGRESS_REASON_LOOPBACK && row.reason <= EGRESS_REASON_EMBEDDED);
                v4 += row.family == AF_INET;
                embedded += row.reason == EGRESS_REASON_EMBEDDED;
                assert_true(row.reason == EGRESS_REASON_EMBEDDED || row.embedded_reason == -1);
        }
        assert_int_equal(v4, 12);
        /* three IPv6 forms of each IPv4 row, and NAT64's local-use /48 */
        assert_int_equal(embedded, 3 * 12 + 1);
        assert_int_equal(egress_denied_row(n, &row), -ENOENT);
        assert_int_equal(egress_denied_row(0, NULL), -EINVAL);
}

static void test_classify(void **state) {
        static const struct {
                const char *prefix;
                EgressClass class;
                int reason;
        } table[] = {
                { "93.184.216.34", EGRESS_CLASS_PUBLIC, -1 },
                { "192.0.2.1", EGRESS_CLASS_PUBLIC, -1 },
                { "198.51.100.0/24", EGRESS_CLASS_PUBLIC, -1 },
                { "203.0.113.9", EGRESS_CLASS_PUBLIC, -1 },
                { "2001:db8::1", EGRESS_CLASS_PUBLIC, -1 },
                { "0.0.0.0/0", EGRESS_CLASS_PUBLIC, -1 },    /* covers denied ranges, does not lie in one */
                { "10.0.0.0/7", EGRESS_CLASS_PUBLIC, -1 },
                { "::/0", EGRESS_CLASS_PUBLIC, -1 },
                { "10.1.2.3", EGRESS_CLASS_PRIVATE, EGRESS_REASON_PRIVATE },
                { "172.31.255.255", EGRESS_CLASS_PRIVATE, EGRESS_REASON_PRIVATE },
                { "172.32.0.0", EGRESS_CLASS_PUBLIC, -1 },
                { "192.168.1.0/24", EGRESS_CLASS_PRIVATE, EGRESS_REASON_PRIVATE },
                { "100.64.0.1", EGRESS_CLASS_PRIVATE, EGRESS_REASON_SHARED },
                { "100.128.0.1", EGRESS_CLASS_PUBLIC, -1 },
                { "fd12:3456::1", EGRESS_CLASS_PRIVATE, EGRESS_REASON_PRIVATE },
                { "fd00:ec2::254", EGRESS_CLASS_DENIED, EGRESS_REASON_LINK_LOCAL },
                { "fd00:ec2::253", EGRESS_CLASS_PRIVATE, EGRESS_REASON_PRIVATE },
                { "169.254.169.254", EGRESS_CLASS_DENIED, EGRESS_REASON_LINK_LOCAL },
                { "127.0.0.1", EGRESS_CLASS_DENIED, EGRESS_REASON_LOOPBACK },
                { "::1", EGRESS_CLASS_DENIED, EGRESS_REASON_LOOPBACK },
                { "::", EGRESS_CLASS_DENIED, EGRESS_REASON_UNSPECIFIED },
                { "0.1.2.3", EGRESS_CLASS_DENIED, EGRESS_REASON_UNSPECIFIED },
                { "192.0.0.8", EGRESS_CLASS_DENIED, EGRESS_REASON_RESERVED },
                { "198.19.0.1", EGRESS_CLASS_DENIED, EGRESS_REASON_RESERVED },
                { "239.1.1.1", EGRESS_CLASS_DENIED, EGRESS_REASON_MULTICAST },
                { "250.0.0.1", EGRESS_CLASS_DENIED, EGRESS_REASON_RESERVED },
                { "255.255.255.255", EGRESS_CLASS_DENIED, EGRESS_REASON_BROADCAST },
                { "fe80::1", EGRESS_CLASS_DENIED, EGRESS_REASON_LINK_LOCAL },
                { "fec0::1", EGRESS_CLASS_DENIED, EGRESS_REASON_RESERVED },
                { "ff02::1", EGRESS_CLASS_DENIED, EGRESS_REASON_MULTICAST },
                { "100::1", EGRESS_CLASS_DENIED, EGRESS_REASON_RESERVED },
                { "100:0:0:1::1", EGRESS_CLASS_PUBLIC, -1 },
                { "::10.0.0.1", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
                { "::93.184.216.34", EGRESS_CLASS_PUBLIC, -1 },
                { "64:ff9b::169.254.169.254", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
                { "64:ff9b::93.184.216.34", EGRESS_CLASS_PUBLIC, -1 },
                { "64:ff9b:1::93.184.216.34", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
                { "2002:a9fe:a9fe::1", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
                { "2002:c0a8:101::", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
                { "2002:5db8:d822::1", EGRESS_CLASS_PUBLIC, -1 },
                { "2002:ffff:ffff::/48", EGRESS_CLASS_DENIED, EGRESS_REASON_EMBEDDED },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                EgressDeniedRow row = { .reason = -1 };
                uint8_t addr[16];
                unsigned plen;
                int family;
                EgressClass c;

                assert_int_equal(egress_prefix_from_string(table[i].prefix, &family, addr, &plen), 0);
                c = egress_classify(family, addr, plen, &row);
                check_row(failures, c == table[i].class, "%s: class %d, expected %d", table[i].prefix, c,
                          table[i].class);
                check_row(failures, c == EGRESS_CLASS_PUBLIC || row.reason == table[i].reason,
                          "%s: reason %s, expected %s", table[i].prefix, strna(egress_reason_to_string(row.reason)),
                          strna(egress_reason_to_string(table[i].reason)));
        }
        assert_int_equal(failures, 0);
}

static void test_prefix_from_string(void **state) {
        static const struct {
                const char *in;
                int family;
                const char *canonical;
                unsigned plen;
        } ok[] = {
                { "192.0.2.5/24", AF_INET, "192.0.2.0", 24 },
                { "192.0.2.5", AF_INET, "192.0.2.5", 32 },
                { "0.0.0.0/0", AF_INET, "0.0.0.0", 0 },
                { "2001:db8::ffff/112", AF_INET6, "2001:db8::", 112 },
                { "2001:db8:1:2:3:4:5:6/33", AF_INET6, "2001:db8::", 33 },
                { "::/0", AF_INET6, "::", 0 },
                { "fe80::1", AF_INET6, "fe80::1", 128 },
        };
        static const char *const bad[] = { "", "/24", "192.0.2.0/", "192.0.2.0/33", "192.0.2.0/08", "192.0.2.0/-1",
                                           "192.0.2.0/24x", "10.1", "2001:db8::/129", "a.org", "192.0.2.0/24/1" };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                char s[INET6_ADDRSTRLEN];
                uint8_t addr[16];
                unsigned plen;
                int family;

                assert_int_equal(egress_prefix_from_string(ok[i].in, &family, addr, &plen), 0);
                assert_int_equal(family, ok[i].family);
                assert_int_equal(plen, ok[i].plen);
                assert_non_null(inet_ntop(family, addr, s, sizeof(s)));
                assert_string_equal(s, ok[i].canonical);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                uint8_t addr[16];
                unsigned plen;
                int family;

                if (egress_prefix_from_string(bad[i], &family, addr, &plen) != -EINVAL)
                        fail_msg("'%s' accepted", bad[i]);
        }
}

static void test_strings(void **state) {
        static const char *const names[] = { "port",        "no-policy", "not-allowed", "expired",   "loopback",
                                             "link-local",  "private",   "shared",      "multicast", "broadcast",
                                             "unspecified", "reserved",  "embedded-ipv4", "socket" };
        static const struct {
                const char *addr;
                uint16_t port;
                uint8_t proto;
                const char *text;
        } dest[] = {
                { "10.0.0.5", 22, TCP, "10.0.0.5:22/tcp" },
                { "2001:db8::1", 443, UDP, "[2001:db8::1]:443/udp" },
                { "0.0.0.0", 0, 47, "0.0.0.0:0/47" },
                { "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, UDP,
                  "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535/udp" },
        };

        assert_int_equal(ELEMENTSOF(names), _EGRESS_REASON_MAX);
        for (int i = 0; i < _EGRESS_REASON_MAX; i++) {
                assert_string_equal(egress_reason_to_string(i), names[i]);
                assert_non_null(egress_reason_to_phrase(i));
        }
        assert_string_equal(egress_reason_to_phrase(EGRESS_REASON_PRIVATE), "private range");
        assert_string_equal(egress_reason_to_phrase(EGRESS_REASON_LINK_LOCAL), "link-local (metadata) range");
        assert_null(egress_reason_to_string(_EGRESS_REASON_MAX));
        assert_null(egress_reason_to_string(-1));
        assert_null(egress_reason_to_phrase(_EGRESS_REASON_MAX));

        for (size_t i = 0; i < ELEMENTSOF(dest); i++) {
                char buf[EGRESS_DESTINATION_STRING_MAX];
                uint8_t a[16] = {};
                int family = strchr(dest[i].addr, ':') ? AF_INET6 : AF_INET;

                assert_int_equal(inet_pton(family, dest[i].addr, a), 1);
                assert_int_equal(egress_format_destination(family, a, dest[i].port, dest[i].proto, buf, sizeof(buf)),
                                 0);
                assert_string_equal(buf, dest[i].text);
                assert_int_equal(egress_format_destination(family, a, dest[i].port, dest[i].proto, buf,
                                                           strlen(dest[i].text)),
                                 -ENOBUFS);
        }
        {
                char buf[EGRESS_DESTINATION_STRING_MAX];

                assert_int_equal(egress_format_destination(AF_UNIX, (uint8_t[16]) {}, 1, TCP, buf, sizeof(buf)),
                                 -EAFNOSUPPORT);
        }
}

/* ---- compiled tables ---- */

static const VerdictCase always_denied[] = {
        DENIED("169.254.169.254", TCP, 80, EGRESS_REASON_LINK_LOCAL),
        DENIED("10.1.2.3", TCP, 443, EGRESS_REASON_PRIVATE),
        DENIED("172.16.0.1", UDP, 53, EGRESS_REASON_PRIVATE),
        DENIED("192.168.1.1", TCP, 80, EGRESS_REASON_PRIVATE),
        DENIED("100.64.0.1", TCP, 443, EGRESS_REASON_SHARED),
        DENIED("224.0.0.1", UDP, 5353, EGRESS_REASON_MULTICAST),
        DENIED("0.0.0.0", TCP, 80, EGRESS_REASON_UNSPECIFIED),
        DENIED("255.255.255.255", UDP, 67, EGRESS_REASON_BROADCAST),
        DENIED("240.0.0.1", TCP, 80, EGRESS_REASON_RESERVED),
        DENIED("198.18.0.1", TCP, 80, EGRESS_REASON_RESERVED),
        DENIED("192.0.0.170", TCP, 80, EGRESS_REASON_RESERVED),
        DENIED("fe80::1", TCP, 80, EGRESS_REASON_LINK_LOCAL),
        DENIED("fd00:ec2::254", TCP, 80, EGRESS_REASON_LINK_LOCAL),
        DENIED("fd12::1", TCP, 80, EGRESS_REASON_PRIVATE),
        DENIED("ff02::fb", UDP, 5353, EGRESS_REASON_MULTICAST),
        DENIED("::", TCP, 80, EGRESS_REASON_UNSPECIFIED),
        DENIED("fec0::1", TCP, 80, EGRESS_REASON_RESERVED),
        DENIED("100::1", TCP, 80, EGRESS_REASON_RESERVED),
        DENIED("::ffff:169.254.169.254", TCP, 80, EGRESS_REASON_LINK_LOCAL), /* mapped: the IPv4 trie */
        DENIED("::ffff:10.0.0.1", TCP, 80, EGRESS_REASON_PRIVATE),
        DENIED("64:ff9b::a9fe:a9fe", TCP, 80, EGRESS_REASON_EMBEDDED),
        DENIED("64:ff9b:1::1", TCP, 80, EGRESS_REASON_EMBEDDED),
        DENIED("2002:a9fe:a9fe::1", TCP, 80, EGRESS_REASON_EMBEDDED),
        DENIED("::a9fe:a9fe", TCP, 80, EGRESS_REASON_EMBEDDED),
        DENIED("::7f00:1", TCP, 80, EGRESS_REASON_EMBEDDED),
        DENIED("2002:7f00:1::", TCP, 80, EGRESS_REASON_EMBEDDED),
};

static const VerdictCase own_loopback[] = {
        ALLOWED("127.0.0.1", TCP, 8080),
        ALLOWED("127.0.0.53", UDP, 53),
        ALLOWED("127.255.255.254", TCP, 1),
        ALLOWED("::1", TCP, 0),
        ALLOWED("::1", UDP, 65535),
        ALLOWED("::ffff:127.0.0.1", TCP, 22),
};

static void test_public(void **state) {
        static const VerdictCase table[] = {
                ALLOWED("93.184.216.34", TCP, 443),
                ALLOWED("93.184.216.34", UDP, 443),
                ALLOWED("192.0.2.1", TCP, 1),
                ALLOWED("2001:db8::1", TCP, 443),
                ALLOWED("2606:2800:220:1::1", UDP, 443),
                ALLOWED("::ffff:93.184.216.34", TCP, 80),
                ALLOWED("64:ff9b::5db8:d822", TCP, 443), /* NAT64 of a public address */
                ALLOWED("172.32.0.1", TCP, 443),
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(DOC("{'mode': 'public'}"), NETWORK_PUBLIC);
        EgressDeniedRow row;
        Verdict v;
        size_t n_rows = 0;

        while (egress_denied_row(n_rows, &row) >= 0)
                n_rows++;
        check_entries(t);
        /* every row, own loopback (127/8 and ::1 are rows already) and 0/0, ::/0; for TCP and UDP */
        assert_int_equal(egress_table_size(t), 2 * (n_rows + 2));
        assert_int_equal(egress_table_mode(t), NETWORK_PUBLIC);
        CHECK_VERDICTS(t, table, T0);
        CHECK_VERDICTS(t, always_denied, T0);
        CHECK_VERDICTS(t, own_loopback, T0);

        v = judge(t, "93.184.216.34", TCP, 443, T0);
        assert_int_equal(v.rule, EGRESS_RULE_PUBLIC);
        v = judge(t, "127.0.0.1", TCP, 443, T0);
        assert_int_equal(v.rule, EGRESS_RULE_LOOPBACK);
        /* the row of a denial is its telemetry */
        v = judge(t, "169.254.169.254", TCP, 80, T0);
        assert_int_equal(egress_denied_row(v.rule, &row), 0);
        assert_string_equal(row.name, "link-local");
        /* names: mode public resolves every name itself */
        assert_null(egress_table_match_name(t, "example.org"));
}

static void test_none(void **state) {
        static const VerdictCase table[] = {
                DENIED("93.184.216.34", TCP, 443, EGRESS_REASON_NOT_ALLOWED),
                DENIED("2001:db8::1", UDP, 53, EGRESS_REASON_NOT_ALLOWED),
        };
        _cleanup_(profile_freep) Profile *p = parse_ok(ALLOW("{'address': '192.0.2.0/24'}, {'host': 'a.org'}"));
        _cleanup_(egress_table_freep) EgressTable *t = compile_ok(p, NETWORK_NONE);
        _cleanup_(egress_table_freep) EgressTable *pub = NULL;
        _cleanup_free_ char *error = NULL;

        check_entries(t);
        CHECK_VERDICTS(t, table, T0);
        CHECK_VERDICTS(t, always_denied, T0);
        CHECK_VERDICTS(t, own_loopback, T0);
        assert_false(judge(t, "192.0.2.1", TCP, 80, T0).allow);
        assert_null(egress_table_match_name(t, "a.org"));

        /* narrower only */
        assert_int_equal(egress_compile(p, NETWORK_PUBLIC, &pub, &error), -EINVAL);
        assert_null(pub);
        assert_string_equal(error, "network: mode public is not narrower than the profile's (allowlist)");
        assert_int_equal(egress_compile(p, _NETWORK_MODE_INVALID, &pub, NULL), -EINVAL);
}

static void test_allowlist(void **state) {
        static const VerdictCase table[] = {
                /* an address with one port */
                ALLOWED("203.0.113.7", TCP, 443),
                ALLOWED("203.0.113.7", UDP, 443),
                DENIED("203.0.113.7", TCP, 80, EGRESS_REASON_PORT),
                DENIED("203.0.113.8", TCP, 443, EGRESS_REASON_NOT_ALLOWED),
                /* a /24 on port 80, a /32 inside it on 443: both at the /32 */
                ALLOWED("198.51.100.1", TCP, 80),
                DENIED("198.51.100.1", TCP, 443, EGRESS_REASON_PORT),
                ALLOWED("198.51.100.9", TCP, 80),
                ALLOWED("198.51.100.9", TCP, 443),
                DENIED("198.51.100.9", TCP, 22, EGRESS_REASON_PORT),
                /* a range, TCP only */
                ALLOWED("2001:db8::5", TCP, 8000),
                ALLOWED("2001:db8::5", TCP, 8050),
                ALLOWED("2001:db8::5", TCP, 8100),
                DENIED("2001:db8::5", TCP, 7999, EGRESS_REASON_PORT),
                DENIED("2001:db8::5", TCP, 8101, EGRESS_REASON_PORT),
                DENIED("2001:db8::5", UDP, 8000, EGRESS_REASON_NOT_ALLOWED),
                /* UDP only, every port */
                ALLOWED("192.0.2.53", UDP, 53),
                ALLOWED("192.0.2.53", UDP, 1),
                DENIED("192.0.2.53", TCP, 53, EGRESS_REASON_NOT_ALLOWED),
                /* a private range opened on port 22: nothing else of 10/8 */
                ALLOWED("10.200.2.3", TCP, 22),
                DENIED("10.200.2.3", TCP, 80, EGRESS_REASON_PORT),
                DENIED("10.2.0.1", TCP, 22, EGRESS_REASON_PRIVATE),
                /* not named */
                DENIED("93.184.216.34", TCP, 443, EGRESS_REASON_NOT_ALLOWED),
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'address': '203.0.113.7', 'ports': [443]}, "
                      "{'address': '198.51.100.0/24', 'ports': [80]}, "
                      "{'address': '198.51.100.9', 'ports': [443]}, "
                      "{'address': '2001:db8::/64', 'ports': ['8000-8100'], 'protocol': 'tcp'}, "
                      "{'address': '192.0.2.53', 'protocol': 'udp'}, "
                      "{'address': '10.200.0.0/16', 'private': true, 'ports': [22]}, "
                      "{'host': 'pypi.org'}"),
                NETWORK_ALLOWLIST);
        Verdict v;

        check_entries(t);
        CHECK_VERDICTS(t, table, T0);
        CHECK_VERDICTS(t, always_denied, T0);
        CHECK_VERDICTS(t, own_loopback, T0);
        /* rule indices */
        assert_int_equal(judge(t, "198.51.100.9", TCP, 443, T0).rule, 2);
        assert_int_equal(judge(t, "198.51.100.9", TCP, 80, T0).rule, 1);
        assert_int_equal(judge(t, "10.200.2.3", TCP, 22, T0).rule, 5);
        v = judge(t, "203.0.113.7", TCP, 80, T0);
        assert_int_equal(v.rule, 0);
}

/* A destination covering denied ranges leaves them denied; inside an opened private range nothing of
 * the wider destinations applies. */
static void test_shadowing(void **state) {
        static const VerdictCase table[] = {
                ALLOWED("93.184.216.34", TCP, 443),
                ALLOWED("2001:db8::1", UDP, 9),
                DENIED("10.0.0.1", TCP, 443, EGRESS_REASON_PRIVATE),
                ALLOWED("10.9.0.1", TCP, 5432),
                DENIED("10.9.0.1", TCP, 443, EGRESS_REASON_PORT),
                ALLOWED("10.9.9.9", TCP, 5432),
                ALLOWED("10.9.9.9", TCP, 6432),
                DENIED("10.9.9.9", TCP, 443, EGRESS_REASON_PORT),
                DENIED("169.254.169.254", TCP, 80, EGRESS_REASON_LINK_LOCAL),
                DENIED("fd00:ec2::254", TCP, 80, EGRESS_REASON_LINK_LOCAL),
                ALLOWED("fd00:ec2::253", TCP, 80),
                DENIED("fe80::1", TCP, 80, EGRESS_REASON_LINK_LOCAL),
                DENIED("64:ff9b::a00:1", TCP, 443, EGRESS_REASON_EMBEDDED),
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'address': '0.0.0.0/0'}, {'address': '::/0'}, "
                      "{'address': '10.9.0.0/16', 'private': true, 'ports': [5432]}, "
                      "{'address': '10.9.9.0/24', 'private': true, 'ports': [6432]}, "
                      "{'address': 'fd00::/8', 'private': true}"),
                NETWORK_ALLOWLIST);

        check_entries(t);
        CHECK_VERDICTS(t, table, T0);
        CHECK_VERDICTS(t, own_loopback, T0);
}

static void test_overflow(void **state) {
        static const struct {
                const char *doc;
                const char *error;
        } table[] = {
                { ALLOW("{'address': '192.0.2.1', 'ports': [1, 3, 5, 7, 9, 11, 13, 15, 17]}"),
                  "network.destinations[0] (192.0.2.1): more than 8 port ranges at 192.0.2.1/32 (tcp) together with "
                  "the destinations covering it" },
                { ALLOW("{'address': '192.0.2.0/24', 'ports': [1, 3, 5, 7, 9]}, "
                        "{'address': '192.0.2.128/25', 'ports': [21, 23, 25, 27], 'protocol': 'udp'}"),
                  "network.destinations[1] (192.0.2.128/25): more than 8 port ranges at 192.0.2.128/25 (udp) "
                  "together with the destinations covering it" },
                { ALLOW("{'host': 'a.org', 'ports': [1, 3, 5, 7, 9]}, {'host': 'a.org', 'ports': [21, 23, 25, 27], "
                        "'protocol': 'tcp'}"),
                  "network.destinations[1] (a.org): more than 8 port ranges for one name (tcp)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(profile_freep) Profile *p = parse_ok(table[i].doc);
                _cleanup_free_ char *error = NULL;
                EgressTable *t = NULL;

                assert_int_equal(egress_compile(p, NETWORK_ALLOWLIST, &t, &error), -E2BIG);
                assert_null(t);
                assert_non_null(error);
                if (!streq(error, table[i].error))
                        fail_msg("row %zu:\n expected: %s\n got:      %s", i, table[i].error, error);
        }
}

/* Adjacent and overlapping ranges are merged only when the entry would overflow. */
static void test_coalesce(void **state) {
        static const VerdictCase table[] = {
                ALLOWED("192.0.2.1", TCP, 80),
                ALLOWED("192.0.2.1", TCP, 89),
                ALLOWED("192.0.2.1", TCP, 1000),
                DENIED("192.0.2.1", TCP, 90, EGRESS_REASON_PORT),
                ALLOWED("192.0.2.2", TCP, 80), /* the /24 */
                DENIED("192.0.2.2", TCP, 81, EGRESS_REASON_PORT),
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'address': '192.0.2.1', 'ports': [81, 82, 83, 84, 85, 86, 87, 88, 89, '1000-2000']}, "
                      "{'address': '192.0.2.0/24', 'ports': [80, '1500-1600']}"),
                NETWORK_ALLOWLIST);
        _cleanup_(egress_table_freep) EgressTable *small =
                compile_doc(ALLOW("{'address': '192.0.2.1', 'ports': [80, 81]}"), NETWORK_ALLOWLIST);
        uint8_t a[16];
        EgressEntry e;
        bool found = false;

        check_entries(t);
        CHECK_VERDICTS(t, table, T0);
        /* the /24's 1500-1600 lies in the /32's 1000-2000: dropped there */
        parse_addr("192.0.2.1", a);
        for (size_t i = 0; egress_table_get(t, i, &e) >= 0; i++)
                if (e.family == AF_INET && e.k4.proto == TCP && memcmp(e.k4.addr, a, 4) == 0 &&
                    e.k4.prefixlen == EGRESS_KEY_HDR_BITS + 32) {
                        assert_int_equal(e.v.n_ranges, 2); /* 80-89, 1000-2000 */
                        found = true;
                }
        assert_true(found);
        found = false;
        for (size_t i = 0; egress_table_get(small, i, &e) >= 0; i++)
                if (e.family == AF_INET && e.k4.proto == TCP && memcmp(e.k4.addr, a, 4) == 0) {
                        assert_int_equal(e.v.n_ranges, 2); /* room enough: kept apart */
                        found = true;
                }
        assert_true(found);
}

/* ---- names and answers ---- */

static void test_match_name(void **state) {
        static const struct {
                const char *query;
                const char *rule;   /* name of the matching rule, NULL: none */
                bool wildcard;
        } table[] = {
                { "x.example.org", "example.org", true },
                { "a.b.c.example.org", "example.org", true },
                { "example.org", NULL, false },
                { "EXAMPLE.org.", NULL, false },
                { "a.example.org", "a.example.org", false },
                { "A.Example.ORG.", "a.example.org", false },
                { "x.a.example.org", "example.org", true },
                { "b.example.org", "example.org", true },
                { "c.b.example.org", "b.example.org", true },
                { "d.c.b.example.org", "b.example.org", true },
                { "xexample.org", NULL, false },
                { "pypi.org", "pypi.org", false },
                { "pypi.org.", "pypi.org", false },
                { "www.pypi.org", NULL, false },
                { "org", NULL, false },
                { "", NULL, false },
                { ".", NULL, false },
                { ".example.org", NULL, false },
                { "a..example.org", "example.org", true }, /* not a valid name; upstream refuses it */
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'host': '*.example.org'}, {'host': 'a.example.org', 'ports': [443]}, "
                      "{'host': '*.b.example.org'}, {'host': 'pypi.org'}, {'host': 'PyPI.org', 'protocol': 'udp'}"),
                NETWORK_ALLOWLIST);
        const EgressHostRule *h;
        unsigned failures = 0;
        char *long_name;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                h = egress_table_match_name(t, table[i].query);
                if (!table[i].rule) {
                        check_row(failures, !h, "'%s' matched '%s'", table[i].query, h ? h->name : "");
                        continue;
                }
                check_row(failures, h && streq(h->name, table[i].rule) && h->wildcard == table[i].wildcard,
                          "'%s' matched '%s', expected '%s'", table[i].query, h ? h->name : "(nothing)",
                          table[i].rule);
        }
        assert_int_equal(failures, 0);

        /* one rule per name, with a grant per destination */
        h = egress_table_match_name(t, "pypi.org");
        assert_non_null(h);
        assert_int_equal(h->n_grants, 2);
        assert_int_equal(h->grants[0].rule, 3);
        assert_true(h->grants[0].tcp && h->grants[0].udp);
        assert_int_equal(h->grants[1].rule, 4);
        assert_false(h->grants[1].tcp);
        assert_true(h->grants[1].udp);
        assert_int_equal(h->grants[1].n_ranges, 1);
        assert_int_equal(h->grants[1].ranges[0].lo, 0);
        assert_int_equal(h->grants[1].ranges[0].hi, 65535);
        h = egress_table_match_name(t, "a.example.org");
        assert_int_equal(h->grants[0].ranges[0].lo, 443);
        assert_int_equal(h->grants[0].ranges[0].hi, 443);

        long_name = malloc(300);
        assert_non_null(long_name);
        memset(long_name, 'a', 299);
        memcpy(long_name + 299 - 12, ".example.org", 12);
        long_name[299] = 0;
        assert_null(egress_table_match_name(t, long_name));
        free(long_name);
        assert_null(egress_table_match_name(t, NULL));
}

static int insert(EgressTable *t, const EgressHostRule *h, const char *addr, uint32_t ttl, uint64_t now,
                  size_t *ret_n, int *ret_reason) {
        _cleanup_free_ EgressEntry *changed = NULL;
        uint8_t a[16] = {};
        int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
        int r;

        assert_int_equal(inet_pton(family, addr, a), 1);
        r = egress_table_insert_answer(t, h, family, a, ttl, now, &changed, ret_n, ret_reason);
        if (r > 0)
                for (size_t i = 0; i < *ret_n; i++) {
                        /* what is written is what the table holds */
                        bool found = false;
                        EgressEntry e;

                        for (size_t j = 0; egress_table_get(t, j, &e) >= 0 && !found; j++)
                                found = memcmp(&e, &changed[i], sizeof(e)) == 0;
                        assert_true(found);
                }
        return r;
}

static void test_answers(void **state) {
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'host': 'pypi.org', 'ports': [443], 'protocol': 'tcp'}, "
                      "{'host': 'mirror.example.org', 'private': true, 'ports': [80]}, "
                      "{'address': '192.0.2.0/24', 'ports': [80]}, "
                      "{'host': 'cdn.example.org', 'ports': [443]}"),
                NETWORK_ALLOWLIST);
        const EgressHostRule *pypi = egress_table_match_name(t, "pypi.org"),
                             *mirror = egress_table_match_name(t, "mirror.example.org"),
                             *cdn = egress_table_match_name(t, "cdn.example.org");
        size_t size = egress_table_size(t), n = 99;
        int reason = 99;
        EgressEntry *changed = NULL, *removed = NULL;
        size_t n_changed, n_removed;

        assert_non_null(pypi);
        assert_non_null(mirror);
        assert_non_null(cdn);

        /* before the answer: not allowed */
        assert_int_equal(judge(t, "151.101.0.223", TCP, 443, T0).reason, EGRESS_REASON_NOT_ALLOWED);

        /* an answer: TCP only (the rule's protocol), for its TTL */
        assert_int_equal(insert(t, pypi, "151.101.0.223", 60, T0, &n, &reason), 1);
        assert_int_equal(n, 1);
        assert_int_equal(reason, -1);
        assert_int_equal(egress_table_size(t), size + 1);
        check_entries(t);
        assert_true(judge(t, "151.101.0.223", TCP, 443, T0).allow);
        assert_int_equal(judge(t, "151.101.0.223", TCP, 443, T0).rule, 0);
        assert_true(judge(t, "151.101.0.223", TCP, 443, T0 + 59 * SEC).allow);
        assert_int_equal(judge(t, "151.101.0.223", TCP, 443, T0 + 60 * SEC).reason, EGRESS_REASON_EXPIRED);
        assert_int_equal(judge(t, "151.101.0.223", TCP, 80, T0).reason, EGRESS_REASON_PORT);
        assert_int_equal(judge(t, "151.101.0.223", UDP, 443, T0).reason, EGRESS_REASON_NOT_ALLOWED);

        /* the same answer again refreshes the range, it adds none */
        assert_int_equal(insert(t, pypi, "151.101.0.223", 60, T0 + 30 * SEC, &n, &reason), 1);
        assert_int_equal(egress_table_size(t), size + 1);
        assert_true(judge(t, "151.101.0.223", TCP, 443, T0 + 80 * SEC).allow);
        assert_int_equal(judge(t, "151.101.0.223", TCP, 443, T0 + 90 * SEC).reason, EGRESS_REASON_EXPIRED);

        /* IPv6, and an IPv4-mapped answer is an IPv4 entry */
        assert_int_equal(insert(t, pypi, "2a04:4e42::223", 300, T0, &n, &reason), 1);
        assert_true(judge(t, "2a04:4e42::223", TCP, 443, T0).allow);
        assert_int_equal(insert(t, pypi, "::ffff:151.101.64.223", 300, T0, &n, &reason), 1);
        assert_true(judge(t, "151.101.64.223", TCP, 443, T0).allow);
        check_entries(t);
        size = egress_table_size(t);

        /* DNS rebinding: a private answer is refused unless the rule says private */
        assert_int_equal(insert(t, pypi, "10.0.0.5", 60, T0, &n, &reason), 0);
        assert_int_equal(n, 0);
        assert_int_equal(reason, EGRESS_REASON_PRIVATE);
        assert_int_equal(insert(t, pypi, "::ffff:10.0.0.5", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_PRIVATE);
        assert_int_equal(insert(t, pypi, "100.64.1.1", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_SHARED);
        assert_int_equal(insert(t, pypi, "127.0.0.1", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_LOOPBACK);
        assert_int_equal(insert(t, pypi, "169.254.169.254", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_LINK_LOCAL);
        assert_int_equal(insert(t, pypi, "64:ff9b::a00:5", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_EMBEDDED);
        assert_int_equal(egress_table_size(t), size);
        assert_int_equal(judge(t, "10.0.0.5", TCP, 443, T0).reason, EGRESS_REASON_PRIVATE);

        /* ... and allowed for a name with "private": true; never in the ranges no profile opens */
        assert_int_equal(insert(t, mirror, "10.0.0.5", 60, T0, &n, &reason), 1);
        assert_int_equal(n, 2); /* TCP and UDP */
        assert_true(judge(t, "10.0.0.5", TCP, 80, T0).allow);
        assert_true(judge(t, "10.0.0.5", UDP, 80, T0).allow);
        assert_int_equal(judge(t, "10.0.0.5", TCP, 443, T0).reason, EGRESS_REASON_PORT);
        assert_int_equal(judge(t, "10.0.0.6", TCP, 80, T0).reason, EGRESS_REASON_PRIVATE);
        assert_int_equal(insert(t, mirror, "169.254.169.254", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_LINK_LOCAL);
        assert_int_equal(insert(t, mirror, "fd00:ec2::254", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_LINK_LOCAL);
        assert_int_equal(insert(t, mirror, "fd00:ec2::1", 60, T0, &n, &reason), 1);

        /* inside an address destination: both apply at the answer's entry, the /24 again after expiry */
        assert_int_equal(insert(t, cdn, "192.0.2.7", 0, T0, &n, &reason), 1);
        assert_true(judge(t, "192.0.2.7", TCP, 443, T0).allow);
        assert_true(judge(t, "192.0.2.7", TCP, 80, T0).allow);
        /* TTL 0 still allows for EGRESS_TTL_MIN_SEC */
        assert_true(judge(t, "192.0.2.7", TCP, 443, T0 + (EGRESS_TTL_MIN_SEC - 1) * SEC).allow);
        assert_false(judge(t, "192.0.2.7", TCP, 443, T0 + EGRESS_TTL_MIN_SEC * SEC).allow);
        assert_true(judge(t, "192.0.2.7", TCP, 80, T0 + EGRESS_TTL_MIN_SEC * SEC).allow);
        check_entries(t);

        /* expiry: nothing yet */
        size = egress_table_size(t);
        assert_int_equal(egress_table_expire(t, T0 + 1 * SEC, &changed, &n_changed, &removed, &n_removed), 0);
        assert_null(changed);
        assert_null(removed);
        /* at T0 + 70s: 192.0.2.7 (EGRESS_TTL_MIN_SEC), 10.0.0.5 and fd00:ec2::1 (60s, both protocols) are gone;
         * 151.101.0.223 (until 90s) and the 300s ones stay */
        assert_int_equal(egress_table_expire(t, T0 + 70 * SEC, &changed, &n_changed, &removed, &n_removed), 6);
        assert_int_equal(n_changed, 0);
        assert_int_equal(n_removed, 6);
        free(changed);
        free(removed);
        assert_int_equal(egress_table_size(t), size - 6);
        check_entries(t);
        assert_int_equal(judge(t, "192.0.2.7", TCP, 443, T0 + 70 * SEC).reason, EGRESS_REASON_PORT);
        assert_true(judge(t, "192.0.2.7", TCP, 80, T0 + 70 * SEC).allow);
        assert_int_equal(judge(t, "10.0.0.5", TCP, 80, T0 + 70 * SEC).reason, EGRESS_REASON_PRIVATE);
        assert_true(judge(t, "151.101.0.223", TCP, 443, T0 + 70 * SEC).allow);
        assert_int_equal(egress_table_expire(t, T0 + 1000 * SEC, &changed, &n_changed, &removed, &n_removed), 3);
        free(changed);
        free(removed);
        check_entries(t);
}

/* An answer into an address destination's own entry: that entry stays, only the answer's range goes. */
static void test_answer_static_entry(void **state) {
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'address': '192.0.2.7', 'ports': [80]}, {'host': 'a.org', 'ports': [443]}"), NETWORK_ALLOWLIST);
        const EgressHostRule *h = egress_table_match_name(t, "a.org");
        size_t size = egress_table_size(t), n, n_changed, n_removed;
        EgressEntry *changed = NULL, *removed = NULL;
        int reason;

        assert_int_equal(insert(t, h, "192.0.2.7", 60, T0, &n, &reason), 1);
        assert_int_equal(egress_table_size(t), size);
        assert_true(judge(t, "192.0.2.7", TCP, 443, T0).allow);
        assert_true(judge(t, "192.0.2.7", TCP, 80, T0).allow);
        assert_int_equal(egress_table_expire(t, T0 + 60 * SEC, &changed, &n_changed, &removed, &n_removed), 2);
        assert_int_equal(n_changed, 2);
        assert_int_equal(n_removed, 0);
        assert_int_equal(changed[0].v.n_ranges, 1);
        free(changed);
        free(removed);
        assert_int_equal(egress_table_size(t), size);
        assert_int_equal(judge(t, "192.0.2.7", TCP, 443, T0 + 60 * SEC).reason, EGRESS_REASON_PORT);
        assert_true(judge(t, "192.0.2.7", TCP, 80, T0 + 60 * SEC).allow);
}

/* One address, many names: the entry fills up; expired ranges make room. */
static void test_answer_full(void **state) {
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'host': 'a.org', 'ports': [1, 2, 3, 4, 5, 6]}, {'host': 'b.org', 'ports': [11, 12, 13]}"),
                NETWORK_ALLOWLIST);
        const EgressHostRule *a = egress_table_match_name(t, "a.org"), *b = egress_table_match_name(t, "b.org");
        size_t size, n;
        int reason;
        EgressEntry before, after;

        /* coalesced when needed: 1-6 is one range once there is no room for six */
        assert_int_equal(insert(t, a, "192.0.2.1", 30, T0, &n, &reason), 1);
        assert_int_equal(insert(t, b, "192.0.2.1", 300, T0, &n, &reason), 1);
        assert_true(judge(t, "192.0.2.1", TCP, 4, T0).allow);
        assert_true(judge(t, "192.0.2.1", TCP, 12, T0).allow);
        size = egress_table_size(t);

        /* 6 + 3 answer ranges with different expiries: no room for another name's three */
        {
                _cleanup_(egress_table_freep) EgressTable *u = compile_doc(
                        ALLOW("{'host': 'a.org', 'ports': [1, 3, 5, 7, 9, 11]}, {'host': 'b.org', 'ports': [21, 23, 25]}"),
                        NETWORK_ALLOWLIST);
                const EgressHostRule *ua = egress_table_match_name(u, "a.org"),
                                     *ub = egress_table_match_name(u, "b.org");
                size_t usize;

                assert_int_equal(insert(u, ua, "192.0.2.1", 30, T0, &n, &reason), 1);
                usize = egress_table_size(u);
                assert_int_equal(egress_table_get(u, usize - 1, &before), 0);
                assert_int_equal(insert(u, ub, "192.0.2.1", 300, T0, &n, &reason), -E2BIG);
                /* unchanged */
                assert_int_equal(egress_table_size(u), usize);
                assert_int_equal(egress_table_get(u, usize - 1, &after), 0);
                assert_memory_equal(&before, &after, sizeof(before));
                /* once a.org's answer has expired, b.org's fits */
                assert_int_equal(insert(u, ub, "192.0.2.1", 300, T0 + 31 * SEC, &n, &reason), 1);
                assert_true(judge(u, "192.0.2.1", TCP, 23, T0 + 31 * SEC).allow);
                assert_false(judge(u, "192.0.2.1", TCP, 3, T0 + 31 * SEC).allow);
        }
        assert_int_equal(egress_table_size(t), size);
}

/* The host's own addresses: denied whatever the profile allows there, and to DNS answers. */
static void test_deny_address(void **state) {
        static const VerdictCase table[] = {
                DENIED("192.0.2.10", TCP, 443, EGRESS_REASON_LOOPBACK),
                DENIED("192.0.2.10", UDP, 53, EGRESS_REASON_LOOPBACK),
                ALLOWED("192.0.2.11", TCP, 443),
                DENIED("2001:db8::10", TCP, 443, EGRESS_REASON_LOOPBACK),
                ALLOWED("2001:db8::11", TCP, 443),
                ALLOWED("127.0.0.1", TCP, 80),
        };
        _cleanup_(egress_table_freep) EgressTable *t = compile_doc(
                ALLOW("{'address': '192.0.2.0/24'}, {'address': '192.0.2.10', 'ports': [22]}, "
                      "{'address': '2001:db8::/64'}, {'host': 'a.org'}"),
                NETWORK_ALLOWLIST);
        _cleanup_(egress_table_freep) EgressTable *pub = compile_doc(DOC("{'mode': 'public'}"), NETWORK_PUBLIC);
        _cleanup_free_ char *error = NULL;
        size_t n;
        int reason;

        assert_int_equal(egress_table_deny_address(t, "192.0.2.10/32", NULL), 0);
        assert_int_equal(egress_table_deny_address(t, "2001:db8::10/128", NULL), 0);
        assert_int_equal(egress_table_deny_address(t, "bogus", &error), -EINVAL);
        assert_string_equal(error, "'bogus' is not an address or prefix");
        check_entries(t);
        CHECK_VERDICTS(t, table, T0);
        assert_int_equal(judge(t, "192.0.2.10", TCP, 22, T0).rule, EGRESS_RULE_HOST);
        assert_int_equal(insert(t, egress_table_match_name(t, "a.org"), "192.0.2.10", 60, T0, &n, &reason), 0);
        assert_int_equal(reason, EGRESS_REASON_LOOPBACK);
        assert_int_equal(insert(t, egress_table_match_name(t, "a.org"), "192.0.2.11", 60, T0, &n, &reason), 1);

        assert_int_equal(egress_table_deny_address(pub, "198.51.100.7", NULL), 0);
        check_entries(pub);
        assert_int_equal(judge(pub, "198.51.100.7", TCP, 443, T0).reason, EGRESS_REASON_LOOPBACK);
        assert_true(judge(pub, "198.51.100.8", TCP, 443, T0).allow);
}

/* ---- shipped profiles ---- */

static void test_shipped_profiles(void **state) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *pattern = NULL;
        glob_t g = {};
        int r;

        if (!root) {
                print_message("SBX_SOURCE_ROOT not set (run the test through meson): skipping\n");
                skip();
        }
        assert_true(asprintf(&pattern, "%s/profiles/*" PROFILE_SUFFIX, root) > 0);
        r = glob(pattern, 0, NULL, &g);
        if (r == GLOB_NOMATCH) {
                print_message("no %s: skipping\n", pattern);
                globfree(&g);
                skip();
        }
        assert_int_equal(r, 0);

        for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *path = g.gl_pathv[i], *base = strrchr(path, '/') + 1;
                _cleanup_free_ char *text = NULL, *name = strndup(base, strlen(base) - strlen(PROFILE_SUFFIX));
                _cleanup_(profile_freep) Profile *p = NULL;
                _cleanup_free_ char *error = NULL;
                size_t size;

                assert_non_null(name);
                assert_int_equal(read_file_at(AT_FDCWD, path, 1024 * 1024, &text, &size), 0);
                r = profile_parse(text, size, name, path, &p, &error);
                if (r < 0)
                        fail_msg("%s: %s", path, strna(error));

                for (NetworkMode m = 0; m < _NETWORK_MODE_MAX; m++) {
                        _cleanup_(egress_table_freep) EgressTable *t = NULL;
                        _cleanup_free_ char *e = NULL;
                        _cleanup_strv_free_ char **allow = NULL, **deny = NULL;

                        r = egress_compile(p, m, &t, &e);
                        if (m != p->network && m != NETWORK_NONE) {
                                assert_int_equal(r, -EINVAL);
                                assert_non_null(e);
                                assert_int_equal(egress_ip_address_lists(p, m, &allow, &deny), -EINVAL);
                                continue;
                        }
                        if (r < 0)
                                fail_msg("%s in mode %s: %d %s", name, network_mode_to_string(m), r, strna(e));
                        check_entries(t);
                        assert_int_equal(check_verdicts_at(t, always_denied, ELEMENTSOF(always_denied), T0, name), 0);
                        assert_int_equal(check_verdicts_at(t, own_loopback, ELEMENTSOF(own_loopback), T0, name), 0);
                        assert_int_equal(judge(t, "93.184.216.34", TCP, 443, T0).allow, m == NETWORK_PUBLIC);
                        assert_int_equal(egress_ip_address_lists(p, m, &allow, &deny), 0);
                        assert_true(m == NETWORK_NONE ? !allow && !deny : allow && deny);
                        /* every host of the profile resolves in its own mode */
                        for (size_t d = 0; m == NETWORK_ALLOWLIST && d < p->n_destinations; d++) {
                                const EgressHostRule *h;

                                if (!p->destinations[d].host)
                                        continue;
                                h = egress_table_match_name(t, p->destinations[d].host);
                                assert_non_null(h);
                                assert_int_equal(h->grants[0].rule, d);
                        }
                }
                print_message("%s: compiled\n", name);
        }
        globfree(&g);
}

/* ---- systemd's lists ---- */

static void test_ip_address_lists(void **state) {
        _cleanup_(profile_freep) Profile *pub = parse_ok(DOC("{'mode': 'public'}"));
        _cleanup_(profile_freep) Profile *addrs = parse_ok(
                ALLOW("{'address': '192.0.2.5/24'}, {'address': '10.1.0.0/16', 'private': true}, "
                      "{'address': '2001:db8::1', 'ports': [443]}, {'address': '192.0.2.0/24', 'protocol': 'udp'}"));
        _cleanup_(profile_freep) Profile *hosts = parse_ok(
                ALLOW("{'host': 'pypi.org'}, {'address': '192.0.2.0/24'}, {'address': '10.1.0.0/16', 'private': true}, "
                      "{'address': 'fd00::/8', 'private': true}"));
        _cleanup_strv_free_ char **allow = NULL, **deny = NULL;
        EgressDeniedRow row;
        size_t n_rows = 0;

        while (egress_denied_row(n_rows, &row) >= 0)
                n_rows++;

        assert_int_equal(egress_ip_address_lists(pub, NETWORK_PUBLIC, &allow, &deny), 0);
        assert_strv(allow, STRV("127.0.0.0/8", "::1/128"));
        assert_int_equal(strv_length(deny), n_rows);
        assert_string_equal(deny[0], "0.0.0.0/8");
        assert_string_equal(deny[11], "255.255.255.255/32");
        for (const char *const *s = STRV("10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
                                         "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15",
                                         "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "fe80::/10", "fc00::/7",
                                         "fd00:ec2::254/128", "fec0::/10", "ff00::/8", "100::/64", "64:ff9b:1::/48",
                                         "::169.254.0.0/112", "64:ff9b::a9fe:0/112", "2002:a9fe::/32", "::/104",
                                         "2002::/24", "2002:ffff:ffff::/48", "64:ff9b::ffff:ffff/128");
             *s; s++)
                if (!strv_contains(deny, *s))
                        fail_msg("%s is not denied", *s);
        for (const char *const *s = STRV("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32");
             *s; s++)
                assert_false(strv_contains(deny, *s));
        allow = strv_free(allow);
        deny = strv_free(deny);

        assert_int_equal(egress_ip_address_lists(pub, NETWORK_NONE, &allow, &deny), 0);
        assert_null(allow);
        assert_null(deny);

        assert_int_equal(egress_ip_address_lists(addrs, NETWORK_ALLOWLIST, &allow, &deny), 0);
        assert_strv(deny, STRV("0.0.0.0/0", "::/0"));
        assert_strv(allow, STRV("127.0.0.0/8", "::1/128", "192.0.2.0/24", "10.1.0.0/16", "2001:db8::1/128"));
        allow = strv_free(allow);
        deny = strv_free(deny);

        assert_int_equal(egress_ip_address_lists(hosts, NETWORK_ALLOWLIST, &allow, &deny), 0);
        assert_int_equal(strv_length(deny), n_rows);
        assert_strv(allow, STRV("127.0.0.0/8", "::1/128", "10.1.0.0/16", "fd00::/8"));
        allow = strv_free(allow);
        deny = strv_free(deny);

        assert_int_equal(egress_ip_address_lists(pub, NETWORK_ALLOWLIST, &allow, &deny), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_denied_rows),
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_prefix_from_string),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_public),
                cmocka_unit_test(test_none),
                cmocka_unit_test(test_allowlist),
                cmocka_unit_test(test_shadowing),
                cmocka_unit_test(test_overflow),
                cmocka_unit_test(test_coalesce),
                cmocka_unit_test(test_match_name),
                cmocka_unit_test(test_answers),
                cmocka_unit_test(test_answer_static_entry),
                cmocka_unit_test(test_answer_full),
                cmocka_unit_test(test_deny_address),
                cmocka_unit_test(test_shipped_profiles),
                cmocka_unit_test(test_ip_address_lists),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
