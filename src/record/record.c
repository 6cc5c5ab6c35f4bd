/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "egress-address.h"
#include "exit-codes.h"
#include "record.h"
#include "record-credentials.h"
#include "record-export.h"
#include "record-image.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static const char *const stop_reason_table[_STOP_REASON_MAX] = {
        [STOP_SUCCESS] = "success",
        [STOP_EXIT_CODE] = "exit-code",
        [STOP_SIGNAL] = "signal",
        [STOP_CORE_DUMP] = "core-dump",
        [STOP_TIMEOUT] = "timeout",
        [STOP_OOM_KILL] = "oom-kill",
        [STOP_CANCELLED] = "cancelled",
        [STOP_START_FAILED] = "start-failed",
        [STOP_REFUSED] = "refused",
        [STOP_LOST] = "lost",
        [STOP_IDLE_TIMEOUT] = "idle-timeout",
        [STOP_OUTPUT_LIMIT] = "output-limit",
};

static const char *const exec_result_table[_EXEC_RESULT_MAX] = {
        [EXEC_RUNNING] = "running",
        [EXEC_EXITED] = "exited",
        [EXEC_SIGNAL] = "signal",
        [EXEC_TIMEOUT] = "timeout",
        [EXEC_NOT_STARTED] = "not-started",
        [EXEC_BUSY] = "busy",
        [EXEC_LOST] = "lost",
        [EXEC_OUTPUT_LIMIT] = "output-limit",
};

DEFINE_NAME_TABLE_LOOKUP(exec_result, ExecResult, exec_result_table, _EXEC_RESULT_MAX);
DEFINE_NAME_TABLE_LOOKUP(stop_reason, StopReason, stop_reason_table, _STOP_REASON_MAX);

StopReason stop_reason_from_unit_result(const char *result) {
        static const struct {
                const char *result;
                StopReason reason;
        } map[] = {
                { "success", STOP_SUCCESS },      { "exit-code", STOP_EXIT_CODE },
                { "signal", STOP_SIGNAL },        { "core-dump", STOP_CORE_DUMP },
                { "timeout", STOP_TIMEOUT },      { "oom-kill", STOP_OOM_KILL },
                { "resources", STOP_START_FAILED }, { "protocol", STOP_START_FAILED },
                { "start-limit-hit", STOP_START_FAILED }, { "exec-condition", STOP_START_FAILED },
                { "watchdog", STOP_TIMEOUT },
        };
        if (!result)
                return _STOP_REASON_INVALID;
        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (streq(map[i].result, result))
                        return map[i].reason;
        return _STOP_REASON_INVALID;
}

RunRecord *run_record_new(void) {
        RunRecord *r = calloc(1, sizeof(RunRecord));
        if (!r)
                return NULL;
        r->stop_reason = _STOP_REASON_INVALID;
        r->exit_code = -1;
        r->cpu_usec = r->memory_peak = r->tasks_peak = r->output_bytes = r->disk_used = UINT64_MAX;
        r->landlock_abi = -1;
        return r;
}

static void denied_list_free(DeniedSyscall *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(list[i].name);
        free(list);
}

static void run_network_free(RunNetwork *n) {
        if (!n)
                return;
        for (size_t i = 0; i < n->n_destinations; i++)
                free(n->destinations[i].name);
        free(n->destinations);
        for (size_t i = 0; i < n->n_names; i++) {
                free(n->names[i].name);
                free(n->names[i].addresses);
                free(n->names[i].blocked);
        }
        free(n->names);
        free(n);
}

RunRecord *run_record_free(RunRecord *r) {
        if (!r)
                return NULL;
        free(r->unit);
        free(r->profile);
        free(r->policy_digest);
        free(r->profile_digest);
        free(r->error);
        free(r->runsc_version);
        denied_list_free(r->denied, r->n_denied);
        run_network_free(r->network);
        if (r->sandbox) {
                free(r->sandbox->name);
                free(r->sandbox->execs);
                free(r->sandbox);
        }
        run_credentials_free(r->credentials);
        run_export_free(r->export);
        run_record_image_free(r->image);
        free(r);
        return NULL;
}

static bool denied_name_is_valid(const char *s, size_t len) {
        if (len == 0 || len > 64)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

/* run_record_add_denied() on a bare list, so that a new list can be built before it replaces the old. */
static int denied_list_add(DeniedSyscall **list, size_t *n, const char *name, uint64_t count) {
        DeniedSyscall *d;
        char *copy;

        if (!name || !denied_name_is_valid(name, strlen(name)))
                return -EINVAL;
        for (size_t i = 0; i < *n; i++)
                if (streq((*list)[i].name, name)) {
                        if (count > UINT64_MAX - 1 - (*list)[i].count)
                                return -ERANGE;
                        (*list)[i].count += count;
                        return 0;
                }
        if (count == UINT64_MAX)
                return -ERANGE;
        if (*n >= RECORD_DENIED_MAX)
                return -E2BIG;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        d = reallocarray(*list, *n + 1, sizeof(DeniedSyscall));
        if (!d) {
                free(copy);
                return -ENOMEM;
        }
        *list = d;
        (*list)[(*n)++] = (DeniedSyscall) { .name = copy, .count = count };
        return 0;
}

int run_record_add_denied(RunRecord *r, const char *name, uint64_t count) {
        return denied_list_add(&r->denied, &r->n_denied, name, count);
}

uint64_t run_record_get_denied(const RunRecord *r, const char *name) {
        for (size_t i = 0; i < r->n_denied; i++)
                if (streq(r->denied[i].name, name))
                        return r->denied[i].count;
        return 0;
}

/* One "name:count" item of the helper's list at *p; advances *p past it. */
static int parse_denied_item(const char **p, char *name, uint64_t *ret_count) {
        const char *s = *p, *colon = s + strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
        char *end;

        if (*colon != ':' || !denied_name_is_valid(s, (size_t) (colon - s)) || colon[1] < '0' || colon[1] > '9')
                return -EBADMSG;
        errno = 0;
        *ret_count = strtoull(colon + 1, &end, 10);
        if (errno != 0 || *ret_count == UINT64_MAX || !(*end == 0 || *end == ',' || *end == ' ' || *end == '\n'))
                return -EBADMSG;
        if (name) {
                memcpy(name, s, (size_t) (colon - s));
                name[colon - s] = 0;
        }
        *p = end;
        return 0;
}

int run_record_parse_denied(RunRecord *r, const char *list) {
        DeniedSyscall *denied = NULL;
        size_t n_denied = 0;
        char name[65];
        uint64_t count;
        int k = 0;

        if (!list)
                return -EBADMSG;
        /* First the syntax of the whole list, so that a bad one is -EBADMSG whatever else is wrong with
         * it; then the new list is built on the side and replaces r's only once it is complete. */
        for (int pass = 0; pass < 2 && k >= 0; pass++) {
                const char *p = list;

                if (*p == 0 || *p == ' ' || *p == '\n')
                        continue; /* an empty list */
                for (;;) {
                        k = parse_denied_item(&p, pass == 0 ? NULL : name, &count);
                        if (k >= 0 && pass == 1)
                                k = denied_list_add(&denied, &n_denied, name, count);
                        if (k < 0 || *p != ',')
                                break;
                        p++;
                }
        }
        if (k < 0) {
                denied_list_free(denied, n_denied);
                return k;
        }

        denied_list_free(r->denied, r->n_denied);
        r->denied = denied;
        r->n_denied = n_denied;
        return 0;
}

/* ---- network ---------------------------------------------------------------------------------------- */

static const char *const name_verdict_table[_NAME_VERDICT_MAX] = {
        [NAME_ALLOWED] = "allowed",
        [NAME_REFUSED] = "refused",
        [NAME_FAILED] = "failed",
};

DEFINE_NAME_TABLE_LOOKUP(name_verdict, NameVerdict, name_verdict_table, _NAME_VERDICT_MAX);

/* The strings are egress.c's (egress_reason_to_string()): part of the record format, never changed. */
int run_record_net_reason_from_string(const char *s) {
        for (int i = 0; s && i < _EGRESS_REASON_MAX; i++)
                if (streq(egress_reason_to_string(i), s))
                        return i;
        return -EINVAL;
}

/* Numbers with a name, written as the name or else in decimal. */
typedef struct NamedNumber {
        int number;
        const char *name;
} NamedNumber;

static const NamedNumber protocol_names[] = {
        { IPPROTO_TCP, "tcp" },   { IPPROTO_UDP, "udp" },         { IPPROTO_ICMP, "icmp" },
        { IPPROTO_ICMPV6, "icmpv6" }, { IPPROTO_SCTP, "sctp" },   { IPPROTO_UDPLITE, "udplite" },
        { IPPROTO_RAW, "raw" },
};
static const NamedNumber family_names[] = {
        { AF_INET, "inet" }, { AF_INET6, "inet6" }, { AF_PACKET, "packet" }, { AF_NETLINK, "netlink" },
        { AF_UNIX, "unix" },
};
static const NamedNumber socktype_names[] = {
        { SOCK_STREAM, "stream" }, { SOCK_DGRAM, "dgram" },   { SOCK_RAW, "raw" },
        { SOCK_RDM, "rdm" },       { SOCK_SEQPACKET, "seqpacket" }, { SOCK_PACKET, "packet" },
};

static const char *named_number_to_string(const NamedNumber *t, size_t n, int v, char buf[static 12]) {
        for (size_t i = 0; i < n; i++)
                if (t[i].number == v)
                        return t[i].name;
        snprintf(buf, 12, "%d", v);
        return buf;
}

/* A name of the table or a decimal number 0..max without leading zeros; -EINVAL otherwise. */
static int named_number_from_string(const NamedNumber *t, size_t n, const char *s, size_t len, int max) {
        int v = 0;

        for (size_t i = 0; i < n; i++)
                if (strlen(t[i].name) == len && strneq(t[i].name, s, len))
                        return t[i].number;
        if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
        }
        return v <= max ? v : -EINVAL;
}

static const char *protocol_to_string(uint8_t p, char buf[static 12]) {
        return named_number_to_string(protocol_names, ELEMENTSOF(protocol_names), p, buf);
}

static int protocol_from_string(const char *s) {
        return named_number_from_string(protocol_names, ELEMENTSOF(protocol_names), s, strlen(s), UINT8_MAX);
}

/* "inet/raw": the family and type of a socket denied at creation */
static char *socket_to_string(int family, uint16_t type, char buf[static 32]) {
        char a[12], b[12];

        snprintf(buf, 32, "%s/%s", named_number_to_string(family_names, ELEMENTSOF(family_names), family, a),
                 named_number_to_string(socktype_names, ELEMENTSOF(socktype_names), type, b));
        return buf;
}

static int socket_from_string(const char *s, int *ret_family, uint16_t *ret_type) {
        const char *slash = strchr(s, '/');
        int f, t;

        if (!slash)
                return -EINVAL;
        f = named_number_from_string(family_names, ELEMENTSOF(family_names), s, (size_t) (slash - s), UINT8_MAX);
        t = named_number_from_string(socktype_names, ELEMENTSOF(socktype_names), slash + 1, strlen(slash + 1),
                                     UINT16_MAX);
        if (f < 0 || t < 0)
                return -EINVAL;
        *ret_family = f;
        *ret_type = (uint16_t) t;
        return 0;
}

static int net_address_set(NetAddress *a, int family, const uint8_t *bytes) {
        if (family != AF_INET && family != AF_INET6)
                return -EAFNOSUPPORT;
        *a = (NetAddress) { .family = family };
        memcpy(a->bytes, bytes, family == AF_INET ? 4 : 16);
        return 0;
}

static bool net_address_equal(const NetAddress *a, const NetAddress *b) {
        return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

static const char *net_address_to_string(const NetAddress *a, char buf[static INET6_ADDRSTRLEN]) {
        return inet_ntop(a->family, a->bytes, buf, INET6_ADDRSTRLEN);
}

static int net_address_from_string(const char *s, NetAddress *ret) {
        NetAddress a = {};

        if (inet_pton(AF_INET, s, a.bytes) == 1)
                a.family = AF_INET;
        else if (inet_pton(AF_INET6, s, a.bytes) == 1)
                a.family = AF_INET6;
        else
                return -EINVAL;
        *ret = a;
        return 0;
}

/* A DNS name as the record keeps it: lower case, without the final dot, letters, digits, '-' and '_',
 * labels of 1..63, 1..RECORD_NET_NAME_MAX in all. */
static int net_name_normalize(const char *name, char ret[static RECORD_NET_NAME_MAX + 1]) {
        size_t len = name ? strlen(name) : 0, label = 0;

        if (len > 1 && name[len - 1] == '.')
                len--;
        if (len == 0 || len > RECORD_NET_NAME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];

                if (c >= 'A' && c <= 'Z')
                        c = (char) (c - 'A' + 'a');
                if (c == '.') {
                        if (label == 0)
                                return -EINVAL;
                        label = 0;
                } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
                        if (++label > 63)
                                return -EINVAL;
                } else
                        return -EINVAL;
                ret[i] = c;
        }
        if (label == 0) /* "a.b..": an empty last label */
                return -EINVAL;
        ret[len] = 0;
        return 0;
}

static void count_add(uint64_t *c, uint64_t k) {
        *c = *c > UINT64_MAX - k ? UINT64_MAX : *c + k;
}

int run_record_net_init(RunRecord *r, NetworkMode mode) {
        if (!network_mode_to_string(mode))
                return -EINVAL;
        if (!r->network) {
                r->network = calloc(1, sizeof(RunNetwork));
                if (!r->network)
                        return -ENOMEM;
        }
        r->network->mode = mode;
        return 0;
}

const char *run_record_net_name_of(const RunRecord *r, const NetAddress *a) {
        if (!r->network)
                return NULL;
        for (size_t i = r->network->n_names; i > 0; i--) {
                const NetNameStat *n = &r->network->names[i - 1];

                if (n->verdict != NAME_ALLOWED)
                        continue;
                for (size_t k = 0; k < n->n_addresses; k++)
                        if (net_address_equal(&n->addresses[k], a))
                                return n->name;
        }
        return NULL;
}

static bool destination_matches(const NetDestinationStat *d, const NetAddress *a, uint16_t port, uint8_t proto,
                                bool allowed, int reason) {
        return net_address_equal(&d->address, a) && d->port == port && d->protocol == proto &&
               d->allowed == allowed && d->reason == reason;
}

int run_record_net_add_event(RunRecord *r, int family, const uint8_t addr[16], uint16_t port, uint8_t proto,
                             bool allowed, int reason, usec_t when, const char *name) {
        RunNetwork *n = r->network;
        NetDestinationStat *d = NULL, *list;
        char norm[RECORD_NET_NAME_MAX + 1];
        _cleanup_free_ char *copy = NULL;
        const char *known;
        NetAddress a = {};
        int k;

        if (!n)
                return -ENOENT;
        if (allowed)
                reason = -1;
        else if (!egress_reason_to_string(reason))
                return -EINVAL;
        if (reason == EGRESS_REASON_SOCKET) {
                if (family < 0 || family > UINT8_MAX)
                        return -EAFNOSUPPORT;
                a.family = family; /* no address: the socket was never connected */
        } else {
                if (!addr)
                        return -EINVAL;
                k = net_address_set(&a, family, addr);
                if (k < 0)
                        return k;
        }
        if (name && net_name_normalize(name, norm) < 0)
                return -EINVAL;
        known = name ? norm : reason == EGRESS_REASON_SOCKET ? NULL : run_record_net_name_of(r, &a);

        for (size_t i = 0; i < n->n_destinations && !d; i++)
                if (destination_matches(&n->destinations[i], &a, port, proto, allowed, reason))
                        d = &n->destinations[i];
        if (known && !(d && d->name) && !(copy = strdup(known)))
                return -ENOMEM;
        if (!d && n->n_destinations < RECORD_NET_DESTINATIONS_MAX) {
                list = reallocarray(n->destinations, n->n_destinations + 1, sizeof(NetDestinationStat));
                if (!list)
                        return -ENOMEM;
                n->destinations = list;
                d = &list[n->n_destinations++];
                *d = (NetDestinationStat) { .address = a, .port = port, .protocol = proto, .allowed = allowed,
                                            .reason = reason, .first = when, .last = when };
        }

        if (!allowed)
                count_add(&n->denied, 1);
        if (!d) {
                count_add(&n->destinations_overflow, 1);
                return 0;
        }
        if (!d->name)
                d->name = TAKE_PTR(copy);
        count_add(&d->count, 1);
        if (when != 0 && (d->first == 0 || when < d->first))
                d->first = when;
        if (when > d->last)
                d->last = when;
        return 1;
}

/* Adds a to the list unless it is there or the list is full. The list has room for
 * RECORD_NET_NAME_ADDRESSES_MAX from its start (address_list_reserve()), so this cannot fail. */
static void address_list_add(NetAddress *list, size_t *n, const NetAddress *a) {
        for (size_t i = 0; i < *n; i++)
                if (net_address_equal(&list[i], a))
                        return;
        if (*n < RECORD_NET_NAME_ADDRESSES_MAX)
                list[(*n)++] = *a;
}

static int address_list_reserve(NetAddress **list, size_t want) {
        if (want == 0 || *list)
                return 0;
        *list = calloc(RECORD_NET_NAME_ADDRESSES_MAX, sizeof(NetAddress));
        return *list ? 0 : -ENOMEM;
}

/* run_record_net_add_name(), counting 'lookups' (0 or 1) lookups. */
static int net_name_add(RunRecord *r, const char *name, NameVerdict verdict, uint64_t lookups,
                        const NetAddress *addresses, size_t n_addresses, const NetAddress *blocked, size_t n_blocked) {
        RunNetwork *n = r->network;
        NetNameStat *e = NULL, *list;
        char norm[RECORD_NET_NAME_MAX + 1];

        if (!n)
                return -ENOENT;
        if (!name_verdict_to_string(verdict) || net_name_normalize(name, norm) < 0 ||
            (verdict != NAME_ALLOWED && n_addresses > 0) || (n_addresses > 0 && !addresses) ||
            (n_blocked > 0 && !blocked))
                return -EINVAL;
        for (size_t i = 0; i < n_addresses; i++)
                if (addresses[i].family != AF_INET && addresses[i].family != AF_INET6)
                        return -EAFNOSUPPORT;
        for (size_t i = 0; i < n_blocked; i++)
                if (blocked[i].family != AF_INET && blocked[i].family != AF_INET6)
                        return -EAFNOSUPPORT;

        for (size_t i = 0; i < n->n_names && !e; i++)
                if (n->names[i].verdict == verdict && streq(n->names[i].name, norm))
                        e = &n->names[i];
        /* all allocations before anything is counted */
        if (e && (address_list_reserve(&e->addresses, n_addresses) < 0 ||
                  address_list_reserve(&e->blocked, n_blocked) < 0))
                return -ENOMEM;
        if (!e && n->n_names < RECORD_NET_NAMES_MAX) {
                _cleanup_free_ NetAddress *a = NULL, *b = NULL;
                _cleanup_free_ char *copy = strdup(norm);

                if (!copy || address_list_reserve(&a, n_addresses) < 0 || address_list_reserve(&b, n_blocked) < 0)
                        return -ENOMEM;
                list = reallocarray(n->names, n->n_names + 1, sizeof(NetNameStat));
                if (!list)
                        return -ENOMEM;
                n->names = list;
                e = &list[n->n_names++];
                *e = (NetNameStat) { .name = TAKE_PTR(copy), .verdict = verdict, .addresses = TAKE_PTR(a),
                                     .blocked = TAKE_PTR(b) };
        }

        if (verdict == NAME_REFUSED)
                count_add(&n->dns_refused, lookups);
        if (!e) {
                count_add(&n->names_overflow, lookups);
                return 0;
        }
        count_add(&e->count, lookups);
        for (size_t i = 0; i < n_addresses; i++) {
                NetAddress a;

                (void) net_address_set(&a, addresses[i].family, addresses[i].bytes);
                address_list_add(e->addresses, &e->n_addresses, &a);
        }
        for (size_t i = 0; i < n_blocked; i++) {
                NetAddress a;

                (void) net_address_set(&a, blocked[i].family, blocked[i].bytes);
                address_list_add(e->blocked, &e->n_blocked, &a);
        }
        return 1;
}

int run_record_net_add_name(RunRecord *r, const char *name, NameVerdict verdict, const NetAddress *addresses,
                            size_t n_addresses, const NetAddress *blocked, size_t n_blocked) {
        return net_name_add(r, name, verdict, 1, addresses, n_addresses, blocked, n_blocked);
}

int run_record_net_add_name_address(RunRecord *r, const char *name, const NetAddress *a, bool blocked) {
        if (!a)
                return -EINVAL;
        return net_name_add(r, name, NAME_ALLOWED, 0, blocked ? NULL : a, blocked ? 0 : 1, blocked ? a : NULL,
                            blocked ? 1 : 0);
}

char *net_destination_format(const NetDestinationStat *d, char buf[static NET_DESTINATION_TEXT_MAX]) {
        char a[INET6_ADDRSTRLEN], p[12], sock[32];
        int k;

        if (!d->allowed && d->reason == EGRESS_REASON_SOCKET)
                k = snprintf(buf, NET_DESTINATION_TEXT_MAX, "%s socket, protocol %s",
                             socket_to_string(d->address.family, d->port, sock), protocol_to_string(d->protocol, p));
        else if (!net_address_to_string(&d->address, a))
                return NULL;
        else
                k = snprintf(buf, NET_DESTINATION_TEXT_MAX, d->address.family == AF_INET6 ? "[%s]:%u/%s" : "%s:%u/%s",
                             a, d->port, protocol_to_string(d->protocol, p));
        return k > 0 && k < NET_DESTINATION_TEXT_MAX ? buf : NULL;
}

bool run_record_cleanup_completed(const RunRecord *r) {
        return r->finished && r->unit_gone && r->cgroup_gone && r->user_gone && r->mounts_gone &&
               (!r->has_workspace || r->workspace_returned) && (r->disk_max == 0 || r->space_gone) &&
               (!r->network || r->network->entries_removed) && (!r->credentials || r->credentials->gone);
}

static json_object *json_u64_or_null(uint64_t v) {
        return v == UINT64_MAX ? NULL : json_object_new_uint64(v);
}

static int json_time_or_null(usec_t t, json_object **ret) {
        char buf[TIMESTAMP_MAX];

        if (t == 0) {
                *ret = NULL;
                return 0;
        }
        if (!format_timestamp(buf, t))
                return -ERANGE;
        *ret = json_object_new_string(buf);
        return *ret ? 0 : -ENOMEM;
}

#define ADD(o, k, v)                                                  \
        do {                                                          \
                if (json_object_object_add((o), (k), (v)) < 0)        \
                        return -ENOMEM;                               \
        } while (0)

static int json_time_add(json_object *o, const char *key, usec_t t) {
        json_object *v;
        int k = json_time_or_null(t, &v);

        if (k < 0)
                return k;
        ADD(o, key, v);
        return 0;
}

static int address_list_to_json(json_object *o, const char *key, const NetAddress *list, size_t n) {
        json_object *arr = json_object_new_array();

        if (!arr)
                return -ENOMEM;
        ADD(o, key, arr);
        for (size_t i = 0; i < n; i++) {
                char a[INET6_ADDRSTRLEN];
                json_object *v;

                if (!net_address_to_string(&list[i], a))
                        return -EINVAL;
                v = json_object_new_string(a);
                if (!v || json_object_array_add(arr, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* Adds a new object to the array and returns it (owned by the array). */
static json_object *json_array_add_object(json_object *arr) {
        json_object *o = json_object_new_object();

        if (o && json_object_array_add(arr, o) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static int network_to_json(const RunNetwork *n, json_object *net) {
        json_object *dests, *names, *overflow;
        int k;

        ADD(net, "mode", json_object_new_string(network_mode_to_string(n->mode) ?: "none"));
        if (!(dests = json_object_new_array()))
                return -ENOMEM;
        ADD(net, "destinations", dests);
        for (size_t i = 0; i < n->n_destinations; i++) {
                const NetDestinationStat *d = &n->destinations[i];
                json_object *o = json_array_add_object(dests);
                char a[INET6_ADDRSTRLEN], p[12], sock[32];
                bool socket_denial = !d->allowed && d->reason == EGRESS_REASON_SOCKET;

                if (!o)
                        return -ENOMEM;
                if (socket_denial) {
                        ADD(o, "address", NULL);
                        ADD(o, "port", NULL);
                        ADD(o, "socket", json_object_new_string(socket_to_string(d->address.family, d->port, sock)));
                } else {
                        if (!net_address_to_string(&d->address, a))
                                return -EINVAL;
                        ADD(o, "address", json_object_new_string(a));
                        ADD(o, "port", json_object_new_int(d->port));
                }
                ADD(o, "protocol", json_object_new_string(protocol_to_string(d->protocol, p)));
                if (d->name)
                        ADD(o, "name", json_object_new_string(d->name));
                ADD(o, "verdict", json_object_new_string(d->allowed ? "allowed" : "denied"));
                if (!d->allowed)
                        ADD(o, "reason", json_object_new_string(egress_reason_to_string(d->reason) ?: "?"));
                ADD(o, "count", json_object_new_uint64(d->count));
                if ((k = json_time_add(o, "first_at", d->first)) < 0 || (k = json_time_add(o, "last_at", d->last)) < 0)
                        return k;
        }
        if (!(names = json_object_new_array()))
                return -ENOMEM;
        ADD(net, "names", names);
        for (size_t i = 0; i < n->n_names; i++) {
                const NetNameStat *e = &n->names[i];
                json_object *o = json_array_add_object(names);

                if (!o)
                        return -ENOMEM;
                ADD(o, "name", json_object_new_string(e->name));
                ADD(o, "verdict", json_object_new_string(name_verdict_to_string(e->verdict) ?: "?"));
                ADD(o, "count", json_object_new_uint64(e->count));
                if ((k = address_list_to_json(o, "addresses", e->addresses, e->n_addresses)) < 0 ||
                    (k = address_list_to_json(o, "blocked_addresses", e->blocked, e->n_blocked)) < 0)
                        return k;
        }
        ADD(net, "denied", json_object_new_uint64(n->denied));
        ADD(net, "dns_refused", json_object_new_uint64(n->dns_refused));
        ADD(net, "events_lost", json_object_new_uint64(n->events_lost));
        if (!(overflow = json_object_new_object()))
                return -ENOMEM;
        ADD(net, "overflow", overflow);
        ADD(overflow, "destinations", json_object_new_uint64(n->destinations_overflow));
        ADD(overflow, "names", json_object_new_uint64(n->names_overflow));
        ADD(net, "entries_removed", json_object_new_boolean(n->entries_removed));
        return 0;
}

/* ---- sandbox ---------------------------------------------------------------------------------------- */

static bool is_hex(const char *s, size_t len);

bool sandbox_name_is_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;

        if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
                      (name[i] >= '0' && name[i] <= '9') || strchr("_.-", name[i])))
                        return false;
        return true;
}

int run_record_sandbox_init(RunRecord *r, const char *name, usec_t idle_timeout, bool detach) {
        RunSandbox *s;

        if (name && !sandbox_name_is_valid(name))
                return -EINVAL;
        s = calloc(1, sizeof(RunSandbox));
        if (!s)
                return -ENOMEM;
        if (name && !(s->name = strdup(name))) {
                free(s);
                return -ENOMEM;
        }
        s->idle_timeout = idle_timeout;
        s->detach = detach;
        if (r->sandbox) {
                free(r->sandbox->name);
                free(r->sandbox->execs);
                free(r->sandbox);
        }
        r->sandbox = s;
        return 0;
}

RunExec *run_record_sandbox_find_exec(RunRecord *r, const char *id) {
        if (!r->sandbox || !id)
                return NULL;
        for (size_t i = 0; i < r->sandbox->n_execs; i++)
                if (streq(r->sandbox->execs[i].id, id))
                        return &r->sandbox->execs[i];
        return NULL;
}

int run_record_sandbox_put_exec(RunRecord *r, const RunExec *e) {
        RunSandbox *s = r->sandbox;
        RunExec *x;

        if (!s)
                return -ENOENT;
        if (!is_hex(e->id, RUN_ID_LEN) || e->result < 0 || e->result >= _EXEC_RESULT_MAX)
                return -EINVAL;
        x = run_record_sandbox_find_exec(r, e->id);
        if (x) {
                *x = *e;
                return 1;
        }
        s->execs_total++;
        if (s->n_execs >= RECORD_EXECS_MAX)
                return 0;
        x = realloc(s->execs, (s->n_execs + 1) * sizeof(RunExec));
        if (!x) {
                s->execs_total--;
                return -ENOMEM;
        }
        s->execs = x;
        s->execs[s->n_execs++] = *e;
        return 1;
}

static int exec_to_json_object(const RunExec *e, json_object *x) {
        json_object *t;
        int k;

        if ((k = json_time_or_null(e->started_at, &t)) < 0)
                return k;
        ADD(x, "id", json_object_new_string(e->id));
        ADD(x, "started_at", t);
        ADD(x, "duration_usec", e->result == EXEC_RUNNING ? NULL : json_object_new_uint64(e->duration));
        ADD(x, "result", json_object_new_string(exec_result_to_string(e->result)));
        ADD(x, "exit_code", e->exit_code >= 0 ? json_object_new_int(e->exit_code) : NULL);
        ADD(x, "exit_signal", e->exit_signal > 0 ? json_object_new_int(e->exit_signal) : NULL);
        ADD(x, "output_bytes", json_object_new_uint64(e->output_bytes));
        ADD(x, "output_truncated", json_object_new_boolean(e->output_truncated));
        ADD(x, "denied_syscalls", json_object_new_uint64(e->denied_syscalls));
        return 0;
}

int run_exec_to_json(const RunExec *e, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        const char *s;
        int k;

        if (!o)
                return -ENOMEM;
        if ((k = exec_to_json_object(e, o)) < 0)
                return k;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s || !(*ret = strdup(s)))
                return -ENOMEM;
        return 0;
}

static int sandbox_to_json(const RunSandbox *s, json_object *o) {
        json_object *execs = json_object_new_array();
        int k = -ENOMEM;

        if (!execs)
                return -ENOMEM;
        ADD(o, "name", s->name ? json_object_new_string(s->name) : NULL);
        ADD(o, "idle_timeout_usec", s->idle_timeout ? json_object_new_uint64(s->idle_timeout) : NULL);
        ADD(o, "detach", json_object_new_boolean(s->detach));
        ADD(o, "execs_total", json_object_new_uint64(s->execs_total));
        ADD(o, "execs", execs);
        for (size_t i = 0; i < s->n_execs; i++) {
                const RunExec *e = &s->execs[i];
                json_object *x = json_object_new_object();

                if (!x || json_object_array_add(execs, x) < 0) {
                        json_object_put(x);
                        return -ENOMEM;
                }
                if ((k = exec_to_json_object(e, x)) < 0)
                        return k;
        }
        return 0;
}

/* 0 ("none") is null in the record */
static json_object *json_u64_or_none(uint64_t v) {
        return v == 0 ? NULL : json_object_new_uint64(v);
}

static int limits_to_json(const RunLimits *l, json_object *o) {
        json_object *x = json_object_new_object(), *raise;

        if (!x)
                return -ENOMEM;
        ADD(o, "limits", x);
        ADD(x, "memory_bytes", json_object_new_uint64(l->memory));
        ADD(x, "tasks", json_object_new_uint64(l->tasks));
        ADD(x, "cpu_percent", json_u64_or_none(l->cpu_percent));
        ADD(x, "wall_time_usec", json_u64_or_none(l->wall_time));
        ADD(x, "output_bytes", json_u64_or_none(l->output));
        raise = json_object_new_object();
        if (!raise)
                return -ENOMEM;
        ADD(x, "raise_to", raise);
        ADD(raise, "memory_bytes", json_u64_or_none(l->memory_raise));
        ADD(raise, "tasks", json_u64_or_none(l->tasks_raise));
        ADD(raise, "cpu_percent", json_u64_or_none(l->cpu_percent_raise));
        ADD(raise, "wall_time_usec", json_u64_or_none(l->wall_time_raise));
        /* true unless a testbed build ran it without some of its ceilings, listed in "unenforced" */
        ADD(x, "enforced", json_object_new_boolean(l->unenforced == 0));
        if (l->unenforced != 0) {
                json_object *a = json_object_new_array();

                ADD(x, "unenforced", a);
                for (unsigned c = 1; c & _CEILINGS_ALL; c <<= 1)
                        if ((l->unenforced & c) && json_object_array_add(a, json_object_new_string(ceiling_to_string(c))) < 0)
                                return -ENOMEM;
        }
        return 0;
}

static const struct {
        const char *key;
        size_t offset;
} limit_event_keys[] = {
        { "memory_max", offsetof(RunLimitEvents, memory_max) },
        { "oom", offsetof(RunLimitEvents, oom) },
        { "oom_kill", offsetof(RunLimitEvents, oom_kill) },
        { "fork_refused", offsetof(RunLimitEvents, fork_refused) },
        { "cpu_throttled", offsetof(RunLimitEvents, cpu_throttled) },
        { "cpu_throttled_usec", offsetof(RunLimitEvents, cpu_throttled_usec) },
};

#define LIMIT_EVENT(e, i) (*(uint64_t *) ((uint8_t *) (e) + limit_event_keys[i].offset))

static int limit_events_to_json(const RunLimitEvents *e, json_object *o) {
        json_object *x;

        if (!e->known) {
                ADD(o, "limit_events", NULL);
                return 0;
        }
        x = json_object_new_object();
        if (!x)
                return -ENOMEM;
        ADD(o, "limit_events", x);
        for (size_t i = 0; i < ELEMENTSOF(limit_event_keys); i++)
                ADD(x, limit_event_keys[i].key, json_object_new_uint64(LIMIT_EVENT(e, i)));
        return 0;
}

void run_limit_events_subtract(RunLimitEvents *e, const RunLimitEvents *base) {
        for (size_t i = 0; i < ELEMENTSOF(limit_event_keys); i++)
                LIMIT_EVENT(e, i) = LIMIT_EVENT(e, i) > LIMIT_EVENT(base, i) ? LIMIT_EVENT(e, i) - LIMIT_EVENT(base, i) : 0;
}

int run_record_parse_figures(RunRecord *r, const char *text) {
        RunLimitEvents e = { .known = true };
        uint64_t mem = UINT64_MAX, tasks = UINT64_MAX, disk_used = UINT64_MAX, disk_full = UINT64_MAX;
        unsigned seen = 0;
        const char *p = text;

        if (!text)
                return -EBADMSG;
        for (;;) {
                char key[32], *end;
                size_t k;
                uint64_t v;

                p += strspn(p, " \t\n");
                if (!*p)
                        break;
                k = strcspn(p, "=");
                if (k == 0 || k >= sizeof(key) || p[k] != '=' || !(p[k + 1] >= '0' && p[k + 1] <= '9'))
                        return -EBADMSG;
                memcpy(key, p, k);
                key[k] = 0;
                errno = 0;
                v = strtoull(p + k + 1, &end, 10);
                if (errno != 0 || v == UINT64_MAX || (*end && !strchr(" \t\n", *end)))
                        return -EBADMSG;
                p = end;
                if (streq(key, "memory_peak"))
                        mem = v;
                else if (streq(key, "tasks_peak"))
                        tasks = v;
                else if (streq(key, "disk_used"))
                        disk_used = v;
                else if (streq(key, "disk_full"))
                        disk_full = v;
                for (size_t i = 0; i < ELEMENTSOF(limit_event_keys); i++)
                        if (streq(key, limit_event_keys[i].key)) {
                                LIMIT_EVENT(&e, i) = v;
                                seen |= 1U << i;
                        }
        }
        /* every counter, or the reader could not read the cgroup: then nothing is known */
        if (seen != (1U << ELEMENTSOF(limit_event_keys)) - 1)
                return -EBADMSG;
        r->limit_events = e;
        r->memory_peak = mem;
        r->tasks_peak = tasks;
        /* the run's space (its disk cap), when it had one */
        if (disk_used != UINT64_MAX) {
                r->disk_used = disk_used;
                r->disk_full = disk_full == 1;
        }
        return 0;
}

/* "denied_syscalls": each syscall the filter refused, by name, with how often */
static int denied_syscalls_to_json(const RunRecord *r, json_object *o) {
        json_object *denied;

        denied = json_object_new_object();
        if (!denied)
                return -ENOMEM;
        ADD(o, "denied_syscalls", denied);
        for (size_t i = 0; i < r->n_denied; i++) {
                json_object *c = json_object_new_uint64(r->denied[i].count);
                if (!c)
                        return -ENOMEM;
                ADD(denied, r->denied[i].name, c);
        }
        return 0;
}

/* "cleanup": what of the run is gone, and while a finished run's cleanup is not complete, what remains */
static int cleanup_to_json(const RunRecord *r, json_object *o) {
        json_object *cleanup;

        cleanup = json_object_new_object();
        if (!cleanup)
                return -ENOMEM;
        ADD(o, "cleanup", cleanup);
        ADD(cleanup, "unit_gone", json_object_new_boolean(r->unit_gone));
        ADD(cleanup, "cgroup_gone", json_object_new_boolean(r->cgroup_gone));
        ADD(cleanup, "user_gone", json_object_new_boolean(r->user_gone));
        ADD(cleanup, "mounts_gone", json_object_new_boolean(r->mounts_gone));
        if (r->has_workspace)
                ADD(cleanup, "workspace_returned", json_object_new_boolean(r->workspace_returned));
        if (r->disk_max > 0)
                ADD(cleanup, "space_gone", json_object_new_boolean(r->space_gone));
        if (r->credentials)
                ADD(cleanup, "credentials_gone", json_object_new_boolean(r->credentials->gone));
        ADD(cleanup, "completed", json_object_new_boolean(run_record_cleanup_completed(r)));
        if (r->finished && !run_record_cleanup_completed(r)) {
                json_object *remaining = json_object_new_array();

                if (!remaining)
                        return -ENOMEM;
                ADD(cleanup, "remaining", remaining);
                if (!r->unit_gone && json_object_array_add(remaining, json_object_new_string("unit")) < 0)
                        return -ENOMEM;
                if (!r->cgroup_gone && json_object_array_add(remaining, json_object_new_string("cgroup")) < 0)
                        return -ENOMEM;
                if (!r->user_gone && json_object_array_add(remaining, json_object_new_string("user")) < 0)
                        return -ENOMEM;
                if (!r->mounts_gone && json_object_array_add(remaining, json_object_new_string("mounts")) < 0)
                        return -ENOMEM;
                if (r->has_workspace && !r->workspace_returned &&
                    json_object_array_add(remaining, json_object_new_string("workspace")) < 0)
                        return -ENOMEM;
                if (r->network && !r->network->entries_removed &&
                    json_object_array_add(remaining, json_object_new_string("network-entries")) < 0)
                        return -ENOMEM;
                if (r->disk_max > 0 && !r->space_gone &&
                    json_object_array_add(remaining, json_object_new_string("space")) < 0)
                        return -ENOMEM;
                if (r->credentials && !r->credentials->gone &&
                    json_object_array_add(remaining, json_object_new_string("credentials")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The sections a run has only when its profile asked for them: network, credentials, image, export and
 * sandbox, in this order */
static int sections_to_json(const RunRecord *r, json_object *o) {
        int k;

        if (r->network) {
                json_object *net = json_object_new_object();

                if (!net)
                        return -ENOMEM;
                ADD(o, "network", net);
                if ((k = network_to_json(r->network, net)) < 0)
                        return k;
        }
        if (r->credentials) {
                json_object *cr = json_object_new_object();

                if (!cr)
                        return -ENOMEM;
                ADD(o, "credentials", cr);
                if ((k = run_credentials_to_json(r->credentials, cr)) < 0)
                        return k;
        }
        if (r->image) {
                json_object *im = json_object_new_object();

                if (!im)
                        return -ENOMEM;
                ADD(o, "image", im);
                if ((k = run_record_image_to_json(r->image, im)) < 0)
                        return k;
        }
        if (r->export) {
                json_object *ex = json_object_new_object();

                if (!ex)
                        return -ENOMEM;
                ADD(o, "export", ex);
                if ((k = run_export_to_json(r->export, ex)) < 0)
                        return k;
        }
        if (r->sandbox) {
                json_object *sb = json_object_new_object();

                if (!sb)
                        return -ENOMEM;
                ADD(o, "sandbox", sb);
                if ((k = sandbox_to_json(r->sandbox, sb)) < 0)
                        return k;
        }
        return 0;
}

int run_record_to_json(const RunRecord *r, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *exit_o, *res, *started, *ended, *capture;
        const char *s;
        char *text;
        int k;

        if (!o)
                return -ENOMEM;
        if ((k = json_time_or_null(r->started_at, &started)) < 0)
                return k;
        if ((k = json_time_or_null(r->ended_at, &ended)) < 0) {
                json_object_put(started);
                return k;
        }
        ADD(o, "version", json_object_new_int(RECORD_VERSION));
        ADD(o, "run_id", json_object_new_string(r->run_id));
        ADD(o, "unit", r->unit ? json_object_new_string(r->unit) : NULL);
        ADD(o, "tenant", json_object_new_string(r->tenant));
        ADD(o, "profile", json_object_new_string(strna(r->profile)));
        ADD(o, "policy_digest", r->policy_digest ? json_object_new_string(r->policy_digest) : NULL);
        if (r->profile_digest)
                ADD(o, "profile_digest", json_object_new_string(r->profile_digest));
        ADD(o, "state", json_object_new_string(r->finished ? "finished" : r->exited ? "exited" : "running"));
        ADD(o, "start", json_object_new_string(r->pooled ? "pool" : "cold"));
        ADD(o, "started_at", started);
        ADD(o, "ended_at", ended);
        s = stop_reason_to_string(r->stop_reason);
        ADD(o, "stop_reason", s ? json_object_new_string(s) : NULL);

        exit_o = json_object_new_object();
        if (!exit_o)
                return -ENOMEM;
        ADD(o, "exit", exit_o);
        ADD(exit_o, "code", r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
        ADD(exit_o, "signal", r->exit_signal > 0 ? json_object_new_int(r->exit_signal) : NULL);

        res = json_object_new_object();
        if (!res)
                return -ENOMEM;
        ADD(o, "resources", res);
        ADD(res, "cpu_usec", json_u64_or_null(r->cpu_usec));
        ADD(res, "memory_peak_bytes", json_u64_or_null(r->memory_peak));
        ADD(res, "tasks_peak", json_u64_or_null(r->tasks_peak));
        ADD(res, "output_bytes", json_u64_or_null(r->output_bytes));
        ADD(o, "output_truncated", json_object_new_boolean(r->output_truncated));
        ADD(o, "landlock_abi", r->landlock_abi >= 0 ? json_object_new_int(r->landlock_abi) : NULL);
        ADD(o, "isolation", json_object_new_string(isolation_to_string(r->isolation)));
        if (r->isolation == ISOLATION_GVISOR)
                ADD(o, "runsc_version", r->runsc_version ? json_object_new_string(r->runsc_version) : NULL);
        if (r->limits.known && (k = limits_to_json(&r->limits, o)) < 0)
                return k;
        if ((k = limit_events_to_json(&r->limit_events, o)) < 0)
                return k;
        if (r->disk_max > 0) {
                json_object *disk = json_object_new_object();

                if (!disk)
                        return -ENOMEM;
                ADD(o, "disk", disk);
                ADD(disk, "max_bytes", json_object_new_uint64(r->disk_max));
                ADD(disk, "used_bytes", json_u64_or_null(r->disk_used));
                ADD(disk, "full", json_object_new_boolean(r->disk_full));
        }

        if ((k = denied_syscalls_to_json(r, o)) < 0)
                return k;
        if ((k = cleanup_to_json(r, o)) < 0)
                return k;

        if (r->error)
                ADD(o, "error", json_object_new_string(r->error));
        if ((k = run_capture_to_json(&r->capture, &capture)) < 0)
                return k;
        ADD(o, "capture", capture);

        if ((k = sections_to_json(r, o)) < 0)
                return k;

        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        text = malloc(strlen(s) + 2);
        if (!text)
                return -ENOMEM;
        sprintf(text, "%s\n", s);
        *ret = text;
        return 0;
}

static bool is_hex(const char *s, size_t len) {
        return lower_hex_is_valid(s, len);
}

static int get_string(json_object *o, const char *key, bool nullable, const char **ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return error_setf(ret_error, -EBADMSG, "%s: missing", key);
        if (!v) {
                if (!nullable)
                        return error_setf(ret_error, -EBADMSG, "%s: null, expected a string", key);
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return error_setf(ret_error, -EBADMSG, "%s: expected a string", key);
        *ret = json_object_get_string(v);
        return 0;
}

static int get_u64(json_object *o, const char *path, const char *key, uint64_t *ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return error_setf(ret_error, -EBADMSG, "%s.%s: missing", path, key);
        if (!v) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return error_setf(ret_error, -EBADMSG, "%s.%s: expected a non-negative integer or null", path, key);
        *ret = json_object_get_uint64(v);
        if (*ret == UINT64_MAX) /* our own "unknown" marker: never a real value */
                return error_setf(ret_error, -EBADMSG, "%s.%s: out of range", path, key);
        return 0;
}

static int get_time(json_object *o, const char *key, bool nullable, usec_t *ret, char **ret_error) {
        const char *s;
        int r = get_string(o, key, nullable, &s, ret_error);

        if (r < 0)
                return r;
        if (!s) {
                *ret = 0;
                return 0;
        }
        if (parse_timestamp(s, ret) < 0)
                return error_setf(ret_error, -EBADMSG, "%s: '%s' is not an RFC 3339 UTC timestamp", key, s);
        return 0;
}

/* ---- reading the network section: every message names the key, as "network.names[2].verdict: ..." ---- */

static int net_get(json_object *o, const char *path, const char *key, json_type type, bool nullable,
                   const char *expected, json_object **ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return error_setf(ret_error, -EBADMSG, "%s.%s: missing", path, key);
        if (!(v ? json_object_is_type(v, type) : nullable))
                return error_setf(ret_error, -EBADMSG, "%s.%s: expected %s", path, key, expected);
        *ret = v;
        return 0;
}

static int net_get_count(json_object *o, const char *path, const char *key, uint64_t *ret, char **ret_error) {
        json_object *v;
        int k = net_get(o, path, key, json_type_int, false, "a non-negative integer", &v, ret_error);

        if (k < 0)
                return k;
        if (json_object_get_int64(v) < 0)
                return error_setf(ret_error, -EBADMSG, "%s.%s: expected a non-negative integer", path, key);
        *ret = json_object_get_uint64(v);
        return 0;
}

static int net_get_time(json_object *o, const char *path, const char *key, usec_t *ret, char **ret_error) {
        json_object *v;
        int k = net_get(o, path, key, json_type_string, true, "a timestamp or null", &v, ret_error);

        if (k < 0)
                return k;
        *ret = 0;
        if (v && parse_timestamp(json_object_get_string(v), ret) < 0)
                return error_setf(ret_error, -EBADMSG, "%s.%s: '%s' is not an RFC 3339 UTC timestamp", path, key,
                                  json_object_get_string(v));
        return 0;
}

/* A DNS name as the record writes it (already normalized). */
static int net_get_name(json_object *o, const char *path, const char *key, bool optional, char **ret,
                        char **ret_error) {
        char norm[RECORD_NET_NAME_MAX + 1];
        json_object *v;
        int k;

        *ret = NULL;
        if (optional && !json_object_object_get_ex(o, key, NULL))
                return 0;
        k = net_get(o, path, key, json_type_string, optional, "a DNS name", &v, ret_error);
        if (k < 0 || !v)
                return k;
        if (net_name_normalize(json_object_get_string(v), norm) < 0 || !streq(norm, json_object_get_string(v)))
                return error_setf(ret_error, -EBADMSG, "%s.%s: '%s' is not a DNS name in lower case", path, key,
                                  json_object_get_string(v));
        *ret = strdup(norm);
        return *ret ? 0 : -ENOMEM;
}

static int net_get_addresses(json_object *o, const char *path, const char *key, NetAddress **list, size_t *n,
                             char **ret_error) {
        json_object *arr;
        size_t len;
        int k = net_get(o, path, key, json_type_array, false, "an array of addresses", &arr, ret_error);

        if (k < 0)
                return k;
        len = json_object_array_length(arr);
        if (len > RECORD_NET_NAME_ADDRESSES_MAX)
                return error_setf(ret_error, -EBADMSG, "%s.%s: more than %d addresses", path, key,
                                  RECORD_NET_NAME_ADDRESSES_MAX);
        if (address_list_reserve(list, len) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                json_object *v = json_object_array_get_idx(arr, i);
                NetAddress a;

                if (!json_object_is_type(v, json_type_string) ||
                    net_address_from_string(json_object_get_string(v), &a) < 0)
                        return error_setf(ret_error, -EBADMSG, "%s.%s[%zu]: expected an IPv4 or IPv6 address", path,
                                          key, i);
                address_list_add(*list, n, &a);
        }
        return 0;
}

static int destination_from_json(json_object *o, const char *path, NetDestinationStat *d, char **ret_error) {
        json_object *v;
        const char *s;
        int k, x;

        if (!json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "%s: expected an object", path);
        if ((k = net_get(o, path, "verdict", json_type_string, false, "\"allowed\" or \"denied\"", &v, ret_error)) < 0)
                return k;
        s = json_object_get_string(v);
        if (!streq(s, "allowed") && !streq(s, "denied"))
                return error_setf(ret_error, -EBADMSG, "%s.verdict: expected \"allowed\" or \"denied\"", path);
        d->allowed = streq(s, "allowed");
        d->reason = -1;
        if (d->allowed) {
                if (json_object_object_get_ex(o, "reason", NULL))
                        return error_setf(ret_error, -EBADMSG, "%s.reason: only a denied destination has one", path);
        } else {
                if ((k = net_get(o, path, "reason", json_type_string, false, "a reason", &v, ret_error)) < 0)
                        return k;
                d->reason = run_record_net_reason_from_string(json_object_get_string(v));
                if (d->reason < 0)
                        return error_setf(ret_error, -EBADMSG, "%s.reason: unknown value '%s'", path,
                                          json_object_get_string(v));
        }

        if (d->reason == EGRESS_REASON_SOCKET) {
                /* denied when the socket was created: no address, no port */
                static const char null_expected[] = "null for a socket denial";

                if ((k = net_get(o, path, "address", json_type_null, true, null_expected, &v, ret_error)) < 0 ||
                    (k = net_get(o, path, "port", json_type_null, true, null_expected, &v, ret_error)) < 0 ||
                    (k = net_get(o, path, "socket", json_type_string, false, "FAMILY/TYPE", &v, ret_error)) < 0)
                        return k;
                if (socket_from_string(json_object_get_string(v), &d->address.family, &d->port) < 0)
                        return error_setf(ret_error, -EBADMSG, "%s.socket: '%s' is not FAMILY/TYPE", path,
                                          json_object_get_string(v));
        } else {
                if (json_object_object_get_ex(o, "socket", NULL))
                        return error_setf(ret_error, -EBADMSG, "%s.socket: only a socket denial has one", path);
                if ((k = net_get(o, path, "address", json_type_string, false, "an IPv4 or IPv6 address", &v,
                                 ret_error)) < 0)
                        return k;
                if (net_address_from_string(json_object_get_string(v), &d->address) < 0)
                        return error_setf(ret_error, -EBADMSG, "%s.address: expected an IPv4 or IPv6 address", path);
                if ((k = net_get(o, path, "port", json_type_int, false, "a port (0-65535)", &v, ret_error)) < 0)
                        return k;
                if (json_object_get_int64(v) < 0 || json_object_get_int64(v) > UINT16_MAX)
                        return error_setf(ret_error, -EBADMSG, "%s.port: expected a port (0-65535)", path);
                d->port = (uint16_t) json_object_get_int64(v);
        }
        if ((k = net_get(o, path, "protocol", json_type_string, false, "a protocol", &v, ret_error)) < 0)
                return k;
        if ((x = protocol_from_string(json_object_get_string(v))) < 0)
                return error_setf(ret_error, -EBADMSG, "%s.protocol: unknown value '%s'", path,
                                  json_object_get_string(v));
        d->protocol = (uint8_t) x;
        if ((k = net_get_name(o, path, "name", true, &d->name, ret_error)) < 0 ||
            (k = net_get_count(o, path, "count", &d->count, ret_error)) < 0 ||
            (k = net_get_time(o, path, "first_at", &d->first, ret_error)) < 0 ||
            (k = net_get_time(o, path, "last_at", &d->last, ret_error)) < 0)
                return k;
        return 0;
}

static int name_from_json(json_object *o, const char *path, NetNameStat *e, char **ret_error) {
        json_object *v;
        int k;

        if (!json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "%s: expected an object", path);
        if ((k = net_get_name(o, path, "name", false, &e->name, ret_error)) < 0 ||
            (k = net_get(o, path, "verdict", json_type_string, false, "a verdict", &v, ret_error)) < 0)
                return k;
        e->verdict = name_verdict_from_string(json_object_get_string(v));
        if (e->verdict < 0)
                return error_setf(ret_error, -EBADMSG, "%s.verdict: expected \"allowed\", \"refused\" or \"failed\"",
                                  path);
        if ((k = net_get_count(o, path, "count", &e->count, ret_error)) < 0 ||
            (k = net_get_addresses(o, path, "addresses", &e->addresses, &e->n_addresses, ret_error)) < 0 ||
            (k = net_get_addresses(o, path, "blocked_addresses", &e->blocked, &e->n_blocked, ret_error)) < 0)
                return k;
        if (e->verdict != NAME_ALLOWED && e->n_addresses > 0)
                return error_setf(ret_error, -EBADMSG, "%s.addresses: only an allowed name has any", path);
        return 0;
}

static int network_from_json(json_object *net, RunNetwork **ret, char **ret_error) {
        RunNetwork *n;
        json_object *v, *arr;
        char path[64];
        size_t len;
        int k;

        if (!json_object_is_type(net, json_type_object))
                return error_setf(ret_error, -EBADMSG, "network: expected an object");
        n = calloc(1, sizeof(RunNetwork));
        if (!n)
                return -ENOMEM;
        *ret = n; /* the caller owns it from here, complete or not */

        if ((k = net_get(net, "network", "mode", json_type_string, false, "a network mode", &v, ret_error)) < 0)
                return k;
        n->mode = network_mode_from_string(json_object_get_string(v));
        if (n->mode < 0)
                return error_setf(ret_error, -EBADMSG, "network.mode: unknown value '%s'", json_object_get_string(v));

        if ((k = net_get(net, "network", "destinations", json_type_array, false, "an array", &arr, ret_error)) < 0)
                return k;
        len = json_object_array_length(arr);
        if (len > RECORD_NET_DESTINATIONS_MAX)
                return error_setf(ret_error, -EBADMSG, "network.destinations: more than %d destinations",
                                  RECORD_NET_DESTINATIONS_MAX);
        if (len > 0 && !(n->destinations = calloc(len, sizeof(NetDestinationStat))))
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                snprintf(path, sizeof(path), "network.destinations[%zu]", i);
                n->n_destinations++;
                if ((k = destination_from_json(json_object_array_get_idx(arr, i), path, &n->destinations[i],
                                               ret_error)) < 0)
                        return k;
        }

        if ((k = net_get(net, "network", "names", json_type_array, false, "an array", &arr, ret_error)) < 0)
                return k;
        len = json_object_array_length(arr);
        if (len > RECORD_NET_NAMES_MAX)
                return error_setf(ret_error, -EBADMSG, "network.names: more than %d names", RECORD_NET_NAMES_MAX);
        if (len > 0 && !(n->names = calloc(len, sizeof(NetNameStat))))
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                snprintf(path, sizeof(path), "network.names[%zu]", i);
                n->n_names++;
                if ((k = name_from_json(json_object_array_get_idx(arr, i), path, &n->names[i], ret_error)) < 0)
                        return k;
        }

        if ((k = net_get_count(net, "network", "denied", &n->denied, ret_error)) < 0 ||
            (k = net_get_count(net, "network", "dns_refused", &n->dns_refused, ret_error)) < 0 ||
            (k = net_get_count(net, "network", "events_lost", &n->events_lost, ret_error)) < 0 ||
            (k = net_get(net, "network", "overflow", json_type_object, false, "an object", &v, ret_error)) < 0 ||
            (k = net_get_count(v, "network.overflow", "destinations", &n->destinations_overflow, ret_error)) < 0 ||
            (k = net_get_count(v, "network.overflow", "names", &n->names_overflow, ret_error)) < 0 ||
            (k = net_get(net, "network", "entries_removed", json_type_boolean, false, "a boolean", &v, ret_error)) < 0)
                return k;
        n->entries_removed = json_object_get_boolean(v);
        return 0;
}

static int sandbox_from_json(json_object *sb, RunRecord *r, char **ret_error) {
        json_object *v, *arr;
        uint64_t u;
        int k;

        if (!json_object_is_type(sb, json_type_object))
                return error_setf(ret_error, -EBADMSG, "sandbox: expected an object");
        if ((k = net_get(sb, "sandbox", "name", json_type_string, true, "a string", &v, ret_error)) < 0)
                return k;
        if (v && !sandbox_name_is_valid(json_object_get_string(v)))
                return error_setf(ret_error, -EBADMSG, "sandbox.name: not a sandbox name");
        {
                const char *name = v ? json_object_get_string(v) : NULL;
                usec_t idle = 0;

                if ((k = net_get(sb, "sandbox", "idle_timeout_usec", json_type_int, true, "a non-negative integer",
                                 &v, ret_error)) < 0)
                        return k;
                if (v) {
                        if (json_object_get_int64(v) < 0)
                                return error_setf(ret_error, -EBADMSG, "sandbox.idle_timeout_usec: expected a non-negative integer");
                        idle = json_object_get_uint64(v);
                }
                if ((k = net_get(sb, "sandbox", "detach", json_type_boolean, false, "a boolean", &v, ret_error)) < 0)
                        return k;
                if ((k = run_record_sandbox_init(r, name, idle, json_object_get_boolean(v))) < 0)
                        return k;
        }
        if ((k = net_get(sb, "sandbox", "execs", json_type_array, false, "an array", &arr, ret_error)) < 0)
                return k;
        if (json_object_array_length(arr) > RECORD_EXECS_MAX)
                return error_setf(ret_error, -EBADMSG, "sandbox.execs: more than %d execs", RECORD_EXECS_MAX);
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *x = json_object_array_get_idx(arr, i);
                RunExec e = { .exit_code = -1 };
                char path[48];
                const char *s;

                snprintf(path, sizeof(path), "sandbox.execs[%zu]", i);
                if (!json_object_is_type(x, json_type_object))
                        return error_setf(ret_error, -EBADMSG, "%s: expected an object", path);
                if ((k = net_get(x, path, "id", json_type_string, false, "a string", &v, ret_error)) < 0)
                        return k;
                s = json_object_get_string(v);
                if (!is_hex(s, RUN_ID_LEN))
                        return error_setf(ret_error, -EBADMSG, "%s.id: not an operation id", path);
                strcpy(e.id, s);
                if ((k = net_get_time(x, path, "started_at", &e.started_at, ret_error)) < 0)
                        return k;
                if ((k = net_get(x, path, "result", json_type_string, false, "a string", &v, ret_error)) < 0)
                        return k;
                e.result = exec_result_from_string(json_object_get_string(v));
                if (e.result < 0)
                        return error_setf(ret_error, -EBADMSG, "%s.result: unknown value '%s'", path,
                                          json_object_get_string(v));
                if ((k = net_get(x, path, "duration_usec", json_type_int, true, "a non-negative integer", &v,
                                 ret_error)) < 0)
                        return k;
                e.duration = v ? json_object_get_uint64(v) : 0;
                if ((k = net_get(x, path, "exit_code", json_type_int, true, "an integer", &v, ret_error)) < 0)
                        return k;
                if (v) {
                        if (json_object_get_int64(v) < 0 || json_object_get_int64(v) > 255)
                                return error_setf(ret_error, -EBADMSG, "%s.exit_code: out of range", path);
                        e.exit_code = json_object_get_int(v);
                }
                if ((k = net_get(x, path, "exit_signal", json_type_int, true, "an integer", &v, ret_error)) < 0)
                        return k;
                if (v) {
                        if (json_object_get_int64(v) <= 0 || json_object_get_int64(v) > 64)
                                return error_setf(ret_error, -EBADMSG, "%s.exit_signal: out of range", path);
                        e.exit_signal = json_object_get_int(v);
                }
                if ((k = net_get_count(x, path, "output_bytes", &e.output_bytes, ret_error)) < 0 ||
                    (k = net_get_count(x, path, "denied_syscalls", &e.denied_syscalls, ret_error)) < 0 ||
                    (k = net_get(x, path, "output_truncated", json_type_boolean, false, "a boolean", &v, ret_error)) < 0)
                        return k;
                e.output_truncated = json_object_get_boolean(v);
                if (run_record_sandbox_find_exec(r, e.id))
                        return error_setf(ret_error, -EBADMSG, "%s.id: listed twice", path);
                if ((k = run_record_sandbox_put_exec(r, &e)) < 0)
                        return k;
        }
        if ((k = net_get_count(sb, "sandbox", "execs_total", &u, ret_error)) < 0)
                return k;
        if (u < r->sandbox->n_execs)
                return error_setf(ret_error, -EBADMSG, "sandbox.execs_total: fewer than the execs listed");
        r->sandbox->execs_total = u;
        return 0;
}

static int get_u64_or_none(json_object *o, const char *path, const char *key, uint64_t *ret, char **ret_error) {
        int k = get_u64(o, path, key, ret, ret_error);

        if (k >= 0 && *ret == UINT64_MAX)
                *ret = 0;
        return k;
}

/* "enforced" and "unenforced" (records of earlier versions have neither: their ceilings were enforced) */
static int unenforced_from_json(json_object *x, unsigned *ret, char **ret_error) {
        json_object *enforced = NULL, *list = NULL;
        unsigned mask = 0;
        size_t n;

        if (json_object_object_get_ex(x, "enforced", &enforced) && !json_object_is_type(enforced, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "limits.enforced: expected a boolean");
        if (json_object_object_get_ex(x, "unenforced", &list) && !json_object_is_type(list, json_type_array))
                return error_setf(ret_error, -EBADMSG, "limits.unenforced: expected an array");
        n = list ? json_object_array_length(list) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(list, i);
                int c = json_object_is_type(v, json_type_string) ? ceiling_from_string(json_object_get_string(v)) : -EINVAL;

                if (c < 0)
                        return error_setf(ret_error, -EBADMSG, "limits.unenforced[%zu]: expected memory, tasks or cpu", i);
                mask |= (unsigned) c;
        }
        if (enforced && json_object_get_boolean(enforced) != (mask == 0))
                return error_setf(ret_error, -EBADMSG, "limits.enforced: %s with %s unenforced ceilings",
                                  mask ? "true" : "false", mask ? "some" : "no");
        *ret = mask;
        return 0;
}

static int limits_from_json(json_object *x, RunLimits *l, char **ret_error) {
        json_object *raise;
        int k;

        if (!json_object_is_type(x, json_type_object))
                return error_setf(ret_error, -EBADMSG, "limits: expected an object");
        if ((k = get_u64(x, "limits", "memory_bytes", &l->memory, ret_error)) < 0 ||
            (k = get_u64(x, "limits", "tasks", &l->tasks, ret_error)) < 0 ||
            (k = get_u64_or_none(x, "limits", "cpu_percent", &l->cpu_percent, ret_error)) < 0 ||
            (k = get_u64_or_none(x, "limits", "wall_time_usec", &l->wall_time, ret_error)) < 0 ||
            (k = get_u64_or_none(x, "limits", "output_bytes", &l->output, ret_error)) < 0)
                return k;
        if (l->memory == UINT64_MAX || l->tasks == UINT64_MAX)
                return error_setf(ret_error, -EBADMSG, "limits: memory_bytes and tasks must be numbers");
        if (!json_object_object_get_ex(x, "raise_to", &raise) || !json_object_is_type(raise, json_type_object))
                return error_setf(ret_error, -EBADMSG, "limits.raise_to: expected an object");
        if ((k = get_u64_or_none(raise, "limits.raise_to", "memory_bytes", &l->memory_raise, ret_error)) < 0 ||
            (k = get_u64_or_none(raise, "limits.raise_to", "tasks", &l->tasks_raise, ret_error)) < 0 ||
            (k = get_u64_or_none(raise, "limits.raise_to", "cpu_percent", &l->cpu_percent_raise, ret_error)) < 0 ||
            (k = get_u64_or_none(raise, "limits.raise_to", "wall_time_usec", &l->wall_time_raise, ret_error)) < 0)
                return k;
        k = unenforced_from_json(x, &l->unenforced, ret_error);
        if (k < 0)
                return k;
        l->known = true;
        return 0;
}

static int limit_events_from_json(json_object *x, RunLimitEvents *e, char **ret_error) {
        int k;

        if (!json_object_is_type(x, json_type_object))
                return error_setf(ret_error, -EBADMSG, "limit_events: expected an object or null");
        for (size_t i = 0; i < ELEMENTSOF(limit_event_keys); i++) {
                k = get_u64(x, "limit_events", limit_event_keys[i].key, &LIMIT_EVENT(e, i), ret_error);
                if (k < 0)
                        return k;
                if (LIMIT_EVENT(e, i) == UINT64_MAX)
                        return error_setf(ret_error, -EBADMSG, "limit_events.%s: expected a number",
                                          limit_event_keys[i].key);
        }
        e->known = true;
        return 0;
}

/* The record's text as one JSON object, with nothing but white space after it */
static int record_parse_object(const char *json, json_object **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_tokener *tok = json_tokener_new();
        size_t len = strlen(json), end;

        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, json, (int) len);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!o || !json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "not a JSON object");
        /* nothing but white space may follow the object */
        for (; end < len; end++)
                if (!strchr(" \t\r\n", json[end]))
                        return error_setf(ret_error, -EBADMSG, "trailing data after the record");
        *ret = TAKE_PTR(o);
        return 0;
}

/* "exit": the main process's exit code, or the signal that ended it */
static int exit_from_json(json_object *o, RunRecord *r, char **ret_error) {
        json_object *sub;
        uint64_t u;
        int k;

        if (!json_object_object_get_ex(o, "exit", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "exit: expected an object");
        if ((k = get_u64(sub, "exit", "code", &u, ret_error)) < 0)
                return k;
        if (u != UINT64_MAX && u > 255)
                return error_setf(ret_error, -EBADMSG, "exit.code: out of range");
        r->exit_code = u == UINT64_MAX ? -1 : (int) u;
        if ((k = get_u64(sub, "exit", "signal", &u, ret_error)) < 0)
                return k;
        if (u != UINT64_MAX && (u == 0 || u > 64))
                return error_setf(ret_error, -EBADMSG, "exit.signal: out of range");
        r->exit_signal = u == UINT64_MAX ? 0 : (int) u;
        return 0;
}

/* "resources": what the run used */
static int resources_from_json(json_object *o, RunRecord *r, char **ret_error) {
        json_object *sub;
        int k;

        if (!json_object_object_get_ex(o, "resources", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "resources: expected an object");
        if ((k = get_u64(sub, "resources", "cpu_usec", &r->cpu_usec, ret_error)) < 0 ||
            (k = get_u64(sub, "resources", "memory_peak_bytes", &r->memory_peak, ret_error)) < 0 ||
            (k = get_u64(sub, "resources", "tasks_peak", &r->tasks_peak, ret_error)) < 0)
                return k;
        /* Added later in version 1: absent in older records. */
        if (json_object_object_get_ex(sub, "output_bytes", NULL) &&
            (k = get_u64(sub, "resources", "output_bytes", &r->output_bytes, ret_error)) < 0)
                return k;
        return 0;
}

/* "denied_syscalls": each syscall the filter refused, with how often */
static int denied_syscalls_from_json(json_object *o, RunRecord *r, char **ret_error) {
        json_object *sub;
        int k;

        if (json_object_object_get_ex(o, "denied_syscalls", &sub)) {
                if (!json_object_is_type(sub, json_type_object))
                        return error_setf(ret_error, -EBADMSG, "denied_syscalls: expected an object");
                json_object_object_foreach(sub, name, count) {
                        if (!json_object_is_type(count, json_type_int) || json_object_get_int64(count) < 0 ||
                            json_object_get_uint64(count) == UINT64_MAX)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls.%s: expected a non-negative integer", name);
                        k = run_record_add_denied(r, name, json_object_get_uint64(count));
                        if (k == -ENOMEM)
                                return k;
                        if (k == -E2BIG)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls: more than %d syscalls", RECORD_DENIED_MAX);
                        if (k < 0)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls: '%s' is not a syscall name", name);
                }
        }
        return 0;
}

/* "cleanup": what of the run is gone */
static int cleanup_from_json(json_object *o, RunRecord *r, char **ret_error) {
        json_object *v, *sub;

        if (!json_object_object_get_ex(o, "cleanup", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "cleanup: expected an object");
        if (!json_object_object_get_ex(sub, "unit_gone", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "cleanup.unit_gone: expected a boolean");
        r->unit_gone = json_object_get_boolean(v);
        if (!json_object_object_get_ex(sub, "cgroup_gone", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "cleanup.cgroup_gone: expected a boolean");
        r->cgroup_gone = json_object_get_boolean(v);
        /* Added later in version 1: absent in older records, whose users were not measured */
        r->user_gone = true;
        if (json_object_object_get_ex(sub, "user_gone", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "cleanup.user_gone: expected a boolean");
                r->user_gone = json_object_get_boolean(v);
        }
        /* likewise: not measured before */
        r->mounts_gone = true;
        if (json_object_object_get_ex(sub, "mounts_gone", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "cleanup.mounts_gone: expected a boolean");
                r->mounts_gone = json_object_get_boolean(v);
        }
        if (json_object_object_get_ex(sub, "workspace_returned", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "cleanup.workspace_returned: expected a boolean");
                r->has_workspace = true;
                r->workspace_returned = json_object_get_boolean(v);
        }
        return 0;
}

/* "disk": the run's space, and whether cleanup removed it */
static int disk_from_json(json_object *o, RunRecord *r, char **ret_error) {
        json_object *v, *sub;
        int k;

        /* Added later in version 1: absent in older records, which had no space */
        if (json_object_object_get_ex(o, "disk", &sub)) {
                if (!sub || !json_object_is_type(sub, json_type_object))
                        return error_setf(ret_error, -EBADMSG, "disk: expected an object");
                if ((k = get_u64(sub, "disk", "max_bytes", &r->disk_max, ret_error)) < 0 ||
                    (k = get_u64(sub, "disk", "used_bytes", &r->disk_used, ret_error)) < 0)
                        return k;
                if (r->disk_max == 0 || r->disk_max == UINT64_MAX)
                        return error_setf(ret_error, -EBADMSG, "disk.max_bytes: expected a positive integer");
                if (!json_object_object_get_ex(sub, "full", &v) || !json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "disk.full: expected a boolean");
                r->disk_full = json_object_get_boolean(v);
                if (!json_object_object_get_ex(o, "cleanup", &sub) || !json_object_object_get_ex(sub, "space_gone", &v) ||
                    !json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "cleanup.space_gone: expected a boolean");
                r->space_gone = json_object_get_boolean(v);
        }
        return 0;
}

int run_record_from_json(const char *json, RunRecord **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(run_record_freep) RunRecord *r = NULL;
        json_object *v, *sub;
        const char *s;
        int k;

        if ((k = record_parse_object(json, &o, ret_error)) < 0)
                return k;
        r = run_record_new();
        if (!r)
                return -ENOMEM;

        if (!json_object_object_get_ex(o, "version", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int(v) != RECORD_VERSION)
                return error_setf(ret_error, -EBADMSG, "version: expected %d", RECORD_VERSION);

        if ((k = get_string(o, "run_id", false, &s, ret_error)) < 0)
                return k;
        if (!run_id_is_valid(s))
                return error_setf(ret_error, -EBADMSG, "run_id: not a run id");
        strcpy(r->run_id, s);
        if ((k = get_string(o, "unit", true, &s, ret_error)) < 0)
                return k;
        if (s && !(r->unit = strdup(s)))
                return -ENOMEM;
        if ((k = get_string(o, "tenant", false, &s, ret_error)) < 0)
                return k;
        if (!is_hex(s, TENANT_ID_LEN))
                return error_setf(ret_error, -EBADMSG, "tenant: not a tenant id");
        strcpy(r->tenant, s);
        if ((k = get_string(o, "profile", false, &s, ret_error)) < 0)
                return k;
        if (!(r->profile = strdup(s)))
                return -ENOMEM;
        if ((k = get_string(o, "policy_digest", true, &s, ret_error)) < 0)
                return k;
        if (s && !(r->policy_digest = strdup(s)))
                return -ENOMEM;
        /* absent in records of earlier versions */
        if (json_object_object_get_ex(o, "profile_digest", NULL)) {
                if ((k = get_string(o, "profile_digest", false, &s, ret_error)) < 0)
                        return k;
                if (!(r->profile_digest = strdup(s)))
                        return -ENOMEM;
        }
        if ((k = get_string(o, "state", false, &s, ret_error)) < 0)
                return k;
        if (!streq(s, "running") && !streq(s, "exited") && !streq(s, "finished"))
                return error_setf(ret_error, -EBADMSG, "state: expected \"running\", \"exited\" or \"finished\"");
        r->finished = streq(s, "finished");
        r->exited = streq(s, "exited");
        if ((k = get_time(o, "started_at", false, &r->started_at, ret_error)) < 0)
                return k;
        if ((k = get_time(o, "ended_at", !r->finished ? true : false, &r->ended_at, ret_error)) < 0)
                return k;
        if ((k = get_string(o, "stop_reason", !r->finished, &s, ret_error)) < 0)
                return k;
        if (s && (r->stop_reason = stop_reason_from_string(s)) < 0)
                return error_setf(ret_error, -EBADMSG, "stop_reason: unknown value '%s'", s);

        if ((k = exit_from_json(o, r, ret_error)) < 0)
                return k;

        if ((k = resources_from_json(o, r, ret_error)) < 0)
                return k;
        /* absent in records of earlier versions: those runs were all started cold */
        if (json_object_object_get_ex(o, "start", &v)) {
                s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                if (!s || (!streq(s, "cold") && !streq(s, "pool")))
                        return error_setf(ret_error, -EBADMSG, "start: expected \"cold\" or \"pool\"");
                r->pooled = streq(s, "pool");
        }
        if (json_object_object_get_ex(o, "output_truncated", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "output_truncated: expected a boolean");
                r->output_truncated = json_object_get_boolean(v);
        }
        /* added later in version 1: absent in older records; null: not reported */
        if (json_object_object_get_ex(o, "landlock_abi", &v) && v) {
                int64_t abi = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;

                if (abi < 0 || abi > 1000)
                        return error_setf(ret_error, -EBADMSG, "landlock_abi: expected an integer >= 0 or null");
                r->landlock_abi = (int) abi;
        }
        /* added later in version 1: absent in older records (kernel) */
        if (json_object_object_get_ex(o, "isolation", &v)) {
                s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                if (!s || isolation_from_string(s) < 0)
                        return error_setf(ret_error, -EBADMSG, "isolation: expected \"kernel\" or \"gvisor\"");
                r->isolation = isolation_from_string(s);
        }
        if (json_object_object_get_ex(o, "runsc_version", &v) && v) {
                s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                if (!s || r->isolation != ISOLATION_GVISOR)
                        return error_setf(ret_error, -EBADMSG,
                                          "runsc_version: expected a string (of a run of isolation \"gvisor\") or null");
                r->runsc_version = strdup(s);
                if (!r->runsc_version)
                        return -ENOMEM;
        }
        /* added later in version 1: absent in older records */
        if (json_object_object_get_ex(o, "limits", &sub) && (k = limits_from_json(sub, &r->limits, ret_error)) < 0)
                return k;
        if (json_object_object_get_ex(o, "limit_events", &sub) && sub &&
            (k = limit_events_from_json(sub, &r->limit_events, ret_error)) < 0)
                return k;
        if ((k = denied_syscalls_from_json(o, r, ret_error)) < 0)
                return k;

        if ((k = cleanup_from_json(o, r, ret_error)) < 0)
                return k;
        if ((k = disk_from_json(o, r, ret_error)) < 0)
                return k;

        if (json_object_object_get_ex(o, "error", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return error_setf(ret_error, -EBADMSG, "error: expected a string");
                if (!(r->error = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }
        /* Added later in version 1: absent in older records, and in those of runs without one. */
        if (json_object_object_get_ex(o, "sandbox", &sub) && (k = sandbox_from_json(sub, r, ret_error)) < 0)
                return k;
        if (json_object_object_get_ex(o, "network", &sub) && (k = network_from_json(sub, &r->network, ret_error)) < 0)
                return k;
        /* added later in version 1: absent in older records (never enabled) */
        if (json_object_object_get_ex(o, "capture", &sub) && (k = run_capture_from_json(sub, &r->capture, ret_error)) < 0)
                return k;
        /* added later in version 1: absent in older records and in those of runs without credentials */
        if (json_object_object_get_ex(o, "credentials", &sub)) {
                json_object *cleanup_o = NULL;

                (void) json_object_object_get_ex(o, "cleanup", &cleanup_o);
                if ((k = run_credentials_from_json(sub, cleanup_o, &r->credentials, ret_error)) < 0)
                        return k;
        }
        /* added later in version 1: absent in older records and in those of runs without an export */
        if (json_object_object_get_ex(o, "export", &sub) && (k = run_export_from_json(sub, &r->export, ret_error)) < 0)
                return k;
        /* added later in version 1: absent in older records; null for a run on the host's OS */
        if (json_object_object_get_ex(o, "image", &sub) && (k = run_record_image_from_json(sub, &r->image, ret_error)) < 0)
                return k;

        *ret = TAKE_PTR(r);
        return 0;
}

int run_record_exit_status(const RunRecord *r) {
        switch (r->stop_reason) {
        case STOP_SUCCESS:
        case STOP_EXIT_CODE:
                if (r->exit_signal > 0)
                        return 128 + r->exit_signal;
                return r->exit_code >= 0 ? r->exit_code : SBX_EXIT_FAILURE;
        case STOP_SIGNAL:
        case STOP_CORE_DUMP:
                return r->exit_signal > 0 ? 128 + r->exit_signal : SBX_EXIT_FAILURE;
        case STOP_TIMEOUT:
                return SBX_EXIT_TIMEOUT;
        case STOP_OOM_KILL:
                return 128 + SIGKILL;
        case STOP_CANCELLED:
                return 128 + (r->exit_signal > 0 ? r->exit_signal : SIGTERM);
        case STOP_IDLE_TIMEOUT:
                return 0; /* a sandbox that ended as asked */
        case STOP_OUTPUT_LIMIT:
                return SBX_EXIT_OUTPUT_LIMIT;
        case STOP_START_FAILED:
        case STOP_REFUSED:
        case STOP_LOST:
        case _STOP_REASON_MAX:
        case _STOP_REASON_INVALID:
        default:
                return SBX_EXIT_FAILURE;
        }
}
