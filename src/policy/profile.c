/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The profile parser: one JSON document (docs/profiles.md) in, a validated Profile or the first error
 * as one line out. Pure: json-c for the syntax (json-doc.c), libseccomp only to look syscall names up. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <inttypes.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>

#include "egress-policy.h"
#include "json-doc.h"
#include "profile.h"
#include "sha256.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define PROFILE_PATH_MAX 4095
#define PROFILE_DESCRIPTION_MAX 200
#define PROFILE_MEMORY_MIN (4ULL << 20)
#define PROFILE_DISK_MIN (1ULL << 20)
#define PROFILE_TASKS_MIN 2
#define PROFILE_CPU_PERCENT_MAX 1000000U /* 10000 CPUs: anything above is a typo */
#define PROFILE_NAME_MAX 32
#define SYSCALL_NAME_MAX 64

/* NULL-terminated, for json_doc_get_choice() */
static const char *const network_mode_table[_NETWORK_MODE_MAX + 1] = {
        [NETWORK_NONE] = "none",
        [NETWORK_PUBLIC] = "public",
        [NETWORK_ALLOWLIST] = "allowlist",
};

const char *network_mode_to_string(NetworkMode m) {
        if (m < 0 || m >= _NETWORK_MODE_MAX)
                return NULL;
        return network_mode_table[m];
}

NetworkMode network_mode_from_string(const char *s) {
        if (!s)
                return _NETWORK_MODE_INVALID;
        for (int i = 0; i < _NETWORK_MODE_MAX; i++)
                if (streq(network_mode_table[i], s))
                        return (NetworkMode) i;
        return _NETWORK_MODE_INVALID;
}

static const char *const net_protocol_table[_NET_PROTOCOL_MAX + 1] = {
        [NET_PROTOCOL_ANY] = "any",
        [NET_PROTOCOL_TCP] = "tcp",
        [NET_PROTOCOL_UDP] = "udp",
};

const char *net_protocol_to_string(NetProtocol p) {
        if (p < 0 || p >= _NET_PROTOCOL_MAX)
                return NULL;
        return net_protocol_table[p];
}

NetProtocol net_protocol_from_string(const char *s) {
        if (!s)
                return _NET_PROTOCOL_INVALID;
        for (int i = 0; i < _NET_PROTOCOL_MAX; i++)
                if (streq(net_protocol_table[i], s))
                        return (NetProtocol) i;
        return _NET_PROTOCOL_INVALID;
}

static const char *const syscall_cmp_table[_SYSCALL_CMP_MAX + 1] = {
        [SYSCALL_CMP_EQ] = "eq",
        [SYSCALL_CMP_NE] = "ne",
        [SYSCALL_CMP_LT] = "lt",
        [SYSCALL_CMP_LE] = "le",
        [SYSCALL_CMP_GT] = "gt",
        [SYSCALL_CMP_GE] = "ge",
        [SYSCALL_CMP_MASKED_EQ] = "masked_eq",
};

const char *syscall_cmp_to_string(SyscallCmp c) {
        if (c < 0 || c >= _SYSCALL_CMP_MAX)
                return NULL;
        return syscall_cmp_table[c];
}

SyscallCmp syscall_cmp_from_string(const char *s) {
        if (!s)
                return _SYSCALL_CMP_INVALID;
        for (int i = 0; i < _SYSCALL_CMP_MAX; i++)
                if (streq(syscall_cmp_table[i], s))
                        return (SyscallCmp) i;
        return _SYSCALL_CMP_INVALID;
}

/* The syscall groups systemd 252 knows (SystemCallFilter=), sorted for bsearch(). */
static const char *const syscall_groups[] = {
        "@aio",        "@basic-io",    "@chown",    "@clock",      "@cpu-emulation",  "@debug",
        "@default",    "@file-system", "@io-event", "@ipc",        "@keyring",        "@known",
        "@memlock",    "@module",      "@mount",    "@network-io", "@obsolete",       "@pkey",
        "@privileged", "@process",     "@raw-io",   "@reboot",     "@resources",      "@sandbox",
        "@setuid",     "@signal",      "@swap",     "@sync",       "@system-service", "@timer",
        NULL,
};

const char *const *profile_syscall_groups(void) {
        return syscall_groups;
}

static int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static bool syscall_group_is_known(const char *name) {
        return bsearch(&name, syscall_groups, ELEMENTSOF(syscall_groups) - 1, sizeof(syscall_groups[0]), strcmp_ptr);
}

static const struct {
        const char *name;
        uint64_t value;
} rule_value_names[] = {
        { "TIOCSTI", TIOCSTI },
        { "TIOCLINUX", TIOCLINUX },
        { "TIOCSETD", TIOCSETD },
        { "TIOCCONS", TIOCCONS },
};

static const struct {
        const char *name;
        uint64_t flag;
} namespace_types[] = {
        { "cgroup", CLONE_NEWCGROUP }, { "ipc", CLONE_NEWIPC },   { "mnt", CLONE_NEWNS },  { "net", CLONE_NEWNET },
        { "pid", CLONE_NEWPID },       { "user", CLONE_NEWUSER }, { "uts", CLONE_NEWUTS },
};

static void syscall_rule_done(SyscallRule *r) {
        free(r->syscall);
        free(r->value_name);
}

static void net_destination_done(NetDestination *d) {
        free(d->host);
        free(d->address);
        free(d->ports);
}

static void profile_cache_done(ProfileCache *c) {
        free(c->name);
        free(c->path);
}

Profile *profile_free(Profile *p) {
        if (!p)
                return NULL;
        free(p->name);
        free(p->path);
        free(p->description);
        strv_free(p->read_only);
        strv_free(p->read_write);
        strv_free(p->hidden);
        strv_free(p->syscall_allow);
        strv_free(p->syscall_deny);
        for (size_t i = 0; i < p->n_rules; i++)
                syscall_rule_done(&p->rules[i]);
        free(p->rules);
        for (size_t i = 0; i < p->n_destinations; i++)
                net_destination_done(&p->destinations[i]);
        free(p->destinations);
        for (size_t i = 0; i < p->n_caches; i++)
                profile_cache_done(&p->caches[i]);
        free(p->caches);
        strv_free(p->request.dataset_under);
        return mfree(p);
}

bool profile_name_is_valid(const char *name) {
        size_t n;

        if (isempty(name))
                return false;
        n = strlen(name);
        if (n > PROFILE_NAME_MAX || !islower((unsigned char) name[0]))
                return false;
        for (const char *c = name; *c; c++)
                if (!(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '_'))
                        return false;
        return true;
}

/* ---- paths and names ---- */

static bool path_is_below(const char *path, const char *dir) {
        size_t n = strlen(dir);

        return strneq(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

static bool path_has_bad_chars(const char *s) {
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c < 0x20 || *c == 0x7f || *c == ' ' || *c == ':' || *c == '"' || *c == '\\' || *c == '%')
                        return true;
        return false;
}

/* A host path of files.* or request.dataset.under. */
static int check_host_path(JsonDoc *jd, const JsonPath *p, json_object *v) {
        const char *s = json_object_get_string(v);

        if (!path_is_absolute_normalized(s))
                return json_doc_fail_got(jd, p, v, "expected an absolute, normalized path");
        if (strlen(s) > PROFILE_PATH_MAX)
                return json_doc_fail(jd, p, "expected a path of at most %d bytes, got %zu", PROFILE_PATH_MAX,
                                     strlen(s));
        if (path_has_bad_chars(s))
                return json_doc_fail_got(jd, p, v,
                                         "expected a path without ':', '\"', '\\', '%%', white space or control characters");
        if (streq(s, "/") || path_is_below(s, "/proc") || path_is_below(s, "/sys") || path_is_below(s, "/dev"))
                return json_doc_fail_got(jd, p, v, "expected a path other than / and outside /proc, /sys and /dev");
        return 0;
}

static int get_host_paths(JsonDoc *jd, const JsonPath *p, json_object *v, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        for (size_t i = 0; l[i]; i++) {
                r = check_host_path(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i));
                if (r < 0)
                        return r;
        }
        r = json_doc_check_unique(jd, &(const JsonNamedList) { p, l }, 1);
        if (r < 0)
                return r;
        strv_free(*ret);
        *ret = TAKE_PTR(l);
        return 0;
}

/* Relative to HOME: non-empty components, none ".", no leading or trailing "/", and no ".." anywhere (the
 * exec helper refuses any "..", even inside a name like "a..b"). */
static bool relative_path_is_normalized(const char *s) {
        if (isempty(s) || strstr(s, ".."))
                return false;
        for (const char *c = s;;) {
                size_t n = strcspn(c, "/");

                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
                if (*c == 0)
                        return true;
                c++;
        }
}

static bool name_is_valid(const char *s, const char *chars, size_t max) {
        size_t n = strlen(s);

        return n > 0 && n <= max && strspn(s, chars) == n;
}

/* A DNS name: at least two dot-separated labels of 1 to 63 letters, digits and inner hyphens, at most
 * 253 characters, no final dot, the last label not all digits (so that an IPv4 address is not taken for
 * a name). A wildcard is "*." and such a name. */
static bool dns_name_is_valid(const char *s) {
        const char *label = s;
        size_t labels = 0;

        if (strneq(s, "*.", 2))
                label = s + 2;
        if (strlen(label) == 0 || strlen(s) > 253)
                return false;
        for (;;) {
                size_t l = strcspn(label, ".");

                if (l == 0 || l > 63 || label[0] == '-' || label[l - 1] == '-' ||
                    strspn(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") < l)
                        return false;
                labels++;
                if (label[l] == 0)
                        return labels >= 2 && strspn(label, "0123456789") < l;
                label += l + 1;
        }
}

/* ---- sections ---- */

static int parse_files(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "base", "read_only", "read_write", "hidden", "workspace", NULL };
        static const char *const bases[] = { "host", NULL };
        static const char *const workspaces[] = { "writable", "none", NULL };
        json_object *v;
        unsigned u;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (json_doc_get(o, "base", &v)) {
                r = json_doc_get_choice(jd, JSON_KEY(p, "base"), v, bases, "\"host\"", &u);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "read_only", &v)) {
                r = get_host_paths(jd, JSON_KEY(p, "read_only"), v, &prof->read_only);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "read_write", &v)) {
                r = get_host_paths(jd, JSON_KEY(p, "read_write"), v, &prof->read_write);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "hidden", &v)) {
                r = get_host_paths(jd, JSON_KEY(p, "hidden"), v, &prof->hidden);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "workspace", &v)) {
                r = json_doc_get_choice(jd, JSON_KEY(p, "workspace"), v, workspaces, "\"writable\" or \"none\"", &u);
                if (r < 0)
                        return r;
                prof->workspace = u == 0;
        }

        /* One path in one list only. A path below another one in a different list is fine (a
         * read-write directory inside a hidden one, say): systemd applies the more specific one. */
        return json_doc_check_unique(jd,
                                     (const JsonNamedList[]) {
                                             { JSON_KEY(p, "read_only"), prof->read_only },
                                             { JSON_KEY(p, "read_write"), prof->read_write },
                                             { JSON_KEY(p, "hidden"), prof->hidden },
                                     },
                                     3);
}

static int check_syscall_names(JsonDoc *jd, const JsonPath *p, json_object *v, char **l, bool deny) {
        for (size_t i = 0; l[i]; i++) {
                const char *s = l[i];

                if (s[0] == '@') {
                        if (!name_is_valid(s + 1, "abcdefghijklmnopqrstuvwxyz-", SYSCALL_NAME_MAX))
                                return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                         "expected a syscall group or name");
                        if (!syscall_group_is_known(s))
                                return json_doc_fail(jd, JSON_INDEX(p, i), "unknown syscall group '%s'", s);
                } else {
                        if (!name_is_valid(s, "abcdefghijklmnopqrstuvwxyz0123456789_", SYSCALL_NAME_MAX))
                                return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                         "expected a syscall group or name");
                        /* Names of other architectures resolve to negative pseudo numbers: fine here,
                         * systemd skips what the native architecture does not have. */
                        if (seccomp_syscall_resolve_name(s) == __NR_SCMP_ERROR)
                                return json_doc_fail(jd, JSON_INDEX(p, i), "unknown syscall '%s'", s);
                        if (deny && streq(s, "seccomp"))
                                return json_doc_fail(jd, JSON_INDEX(p, i),
                                                     "seccomp may not be denied (sbx's exec helper needs seccomp() to "
                                                     "install its filter)");
                }
        }
        return 0;
}

static int parse_syscalls(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "allow", "deny", NULL };
        json_object *v;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (json_doc_get(o, "allow", &v)) {
                _cleanup_strv_free_ char **l = NULL;

                r = json_doc_get_string_array(jd, JSON_KEY(p, "allow"), v, &l);
                if (r < 0)
                        return r;
                if (!l[0])
                        return json_doc_fail_got(jd, JSON_KEY(p, "allow"), v,
                                                 "expected at least one syscall group or name");
                r = check_syscall_names(jd, JSON_KEY(p, "allow"), v, l, false);
                if (r < 0)
                        return r;
                strv_free(prof->syscall_allow);
                prof->syscall_allow = TAKE_PTR(l);
        }
        if (json_doc_get(o, "deny", &v)) {
                _cleanup_strv_free_ char **l = NULL;

                r = json_doc_get_string_array(jd, JSON_KEY(p, "deny"), v, &l);
                if (r < 0)
                        return r;
                r = check_syscall_names(jd, JSON_KEY(p, "deny"), v, l, true);
                if (r < 0)
                        return r;
                strv_free(prof->syscall_deny);
                prof->syscall_deny = TAKE_PTR(l);
        }
        /* Also refuses a name listed twice in one list. */
        return json_doc_check_unique(jd,
                                     (const JsonNamedList[]) {
                                             { JSON_KEY(p, "allow"), prof->syscall_allow },
                                             { JSON_KEY(p, "deny"), prof->syscall_deny },
                                     },
                                     2);
}

static int get_rule_value(JsonDoc *jd, const JsonPath *p, json_object *v, SyscallRule *rule) {
        const char *s = json_doc_string(v);

        if (json_doc_to_uint(v, &rule->value))
                return 0;
        for (size_t i = 0; s && i < ELEMENTSOF(rule_value_names); i++)
                if (streq(s, rule_value_names[i].name)) {
                        rule->value = rule_value_names[i].value;
                        rule->value_name = strdup(rule_value_names[i].name);
                        return rule->value_name ? 0 : -ENOMEM;
                }
        return json_doc_fail_got(jd, p, v,
                                 "expected an integer >= 0 or one of TIOCSTI, TIOCLINUX, TIOCSETD, TIOCCONS");
}

static int parse_syscall_rule(JsonDoc *jd, const JsonPath *p, json_object *o, SyscallRule *rule) {
        static const char *const keys[] = { "syscall", "arg", "op", "value", "mask", "bits", NULL };
        json_object *v;
        const char *s;
        uint64_t u, bits = 64;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;

        if (!json_doc_get(o, "syscall", &v))
                return json_doc_missing(jd, JSON_KEY(p, "syscall"));
        r = json_doc_get_string(jd, JSON_KEY(p, "syscall"), v, &s);
        if (r < 0)
                return r;
        if (!name_is_valid(s, "abcdefghijklmnopqrstuvwxyz0123456789_", SYSCALL_NAME_MAX))
                return json_doc_fail_got(jd, JSON_KEY(p, "syscall"), v, "expected a syscall name");
        rule->nr = seccomp_syscall_resolve_name(s);
        if (rule->nr == __NR_SCMP_ERROR)
                return json_doc_fail(jd, JSON_KEY(p, "syscall"), "unknown syscall '%s'", s);
        /* The exec helper hands the seccomp listener over with sendmsg() once the filter is in force: a
         * rule there would make every run wait for a supervisor that has no listener yet. */
        if (rule->nr == SCMP_SYS(sendmsg))
                return json_doc_fail(jd, JSON_KEY(p, "syscall"),
                                     "a rule on sendmsg is not supported (sbx's exec helper calls it after the "
                                     "filter is in force)");
        if (rule->nr == SCMP_SYS(seccomp))
                return json_doc_fail(jd, JSON_KEY(p, "syscall"),
                                     "a rule on seccomp is not supported (sbx catches every seccomp() call of the "
                                     "command already)");
        /* A name of another architecture only: libseccomp gives a negative pseudo number. */
        if (rule->nr < 0)
                return json_doc_fail(jd, JSON_KEY(p, "syscall"),
                                     "'%s' is not a syscall of the native architecture, a rule on it could never "
                                     "match",
                                     s);
        rule->syscall = strdup(s);
        if (!rule->syscall)
                return -ENOMEM;

        if (!json_doc_get(o, "arg", &v)) {
                /* The whole syscall: nothing to compare. */
                static const char *const arg_only[] = { "op", "value", "mask", "bits", NULL };

                for (const char *const *k = arg_only; *k; k++)
                        if (json_doc_get(o, *k, &v))
                                return json_doc_fail(jd, JSON_KEY(p, *k), "only allowed with \"arg\"");
                return 0;
        }
        if (!json_doc_to_uint(v, &u) || u > 5)
                return json_doc_fail_got(jd, JSON_KEY(p, "arg"), v, "expected an argument number from 0 to 5");
        rule->has_arg = true;
        rule->arg = (unsigned) u;

        rule->cmp = SYSCALL_CMP_EQ;
        if (json_doc_get(o, "op", &v)) {
                unsigned c;

                r = json_doc_get_choice(jd, JSON_KEY(p, "op"), v, syscall_cmp_table,
                                        "one of eq, ne, lt, le, gt, ge, masked_eq", &c);
                if (r < 0)
                        return r;
                rule->cmp = (SyscallCmp) c;
        }

        if (!json_doc_get(o, "value", &v))
                return json_doc_fail(jd, JSON_KEY(p, "value"), "missing required key (a rule with \"arg\" needs one)");
        r = get_rule_value(jd, JSON_KEY(p, "value"), v, rule);
        if (r < 0)
                return r;

        if (json_doc_get(o, "mask", &v)) {
                if (rule->cmp != SYSCALL_CMP_MASKED_EQ)
                        return json_doc_fail(jd, JSON_KEY(p, "mask"), "only allowed with \"op\": \"masked_eq\"");
                if (!json_doc_to_uint(v, &rule->mask))
                        return json_doc_fail_got(jd, JSON_KEY(p, "mask"), v, "expected an integer >= 0");
        } else if (rule->cmp == SYSCALL_CMP_MASKED_EQ)
                return json_doc_fail(jd, JSON_KEY(p, "mask"),
                                     "missing required key (\"op\": \"masked_eq\" needs one)");

        if (json_doc_get(o, "bits", &v) && (!json_doc_to_uint(v, &bits) || (bits != 32 && bits != 64)))
                return json_doc_fail_got(jd, JSON_KEY(p, "bits"), v, "expected 32 or 64");
        /* The kernel reads ioctl()'s request as 32 bits: a 64-bit compare could be dodged by setting
         * high bits that the kernel then ignores. */
        rule->arg32 = bits == 32 || (streq(rule->syscall, "ioctl") && rule->arg == 1);
        if (rule->arg32) {
                /* A 32-bit compare of a larger value would never match (or, masked, match on less than
                 * was written). */
                if (rule->value > UINT32_MAX)
                        return json_doc_fail(jd, JSON_KEY(p, "value"),
                                             "expected a 32-bit value (the compare uses 32 bits), got %" PRIu64,
                                             rule->value);
                if (rule->mask > UINT32_MAX)
                        return json_doc_fail(jd, JSON_KEY(p, "mask"),
                                             "expected a 32-bit mask (the compare uses 32 bits), got %" PRIu64,
                                             rule->mask);
        }
        return 0;
}

static int parse_syscall_rules(JsonDoc *jd, const JsonPath *p, json_object *v, Profile *prof) {
        size_t n = 0;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        prof->rules = calloc(MAX(n, 1u), sizeof(SyscallRule));
        if (!prof->rules)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                prof->n_rules++;
                r = parse_syscall_rule(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i), &prof->rules[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_namespaces(JsonDoc *jd, const JsonPath *p, json_object *v, Profile *prof) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        for (size_t i = 0; l[i]; i++) {
                bool found = false;

                for (size_t j = 0; j < ELEMENTSOF(namespace_types) && !found; j++)
                        if (streq(l[i], namespace_types[j].name)) {
                                prof->namespaces |= namespace_types[j].flag;
                                found = true;
                        }
                if (!found)
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                 "expected one of cgroup, ipc, mnt, net, pid, user, uts");
        }
        return json_doc_check_unique(jd, &(const JsonNamedList) { p, l }, 1);
}

static int parse_process(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "syscalls", "syscall_rules",        "namespaces", "capabilities",
                                            "devices",  "write_execute_memory", NULL };
        static const char *const devices[] = { "private", NULL };
        json_object *v;
        unsigned u;
        size_t n = 0;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (json_doc_get(o, "syscalls", &v)) {
                r = parse_syscalls(jd, JSON_KEY(p, "syscalls"), v, prof);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "syscall_rules", &v)) {
                r = parse_syscall_rules(jd, JSON_KEY(p, "syscall_rules"), v, prof);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "namespaces", &v)) {
                r = parse_namespaces(jd, JSON_KEY(p, "namespaces"), v, prof);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "capabilities", &v)) {
                r = json_doc_get_array(jd, JSON_KEY(p, "capabilities"), v, &n);
                if (r < 0)
                        return r;
                if (n > 0)
                        return json_doc_fail(jd, JSON_KEY(p, "capabilities"),
                                             "expected [] (runs get no capabilities in version 1)");
        }
        if (json_doc_get(o, "devices", &v)) {
                r = json_doc_get_choice(jd, JSON_KEY(p, "devices"), v, devices, "\"private\"", &u);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "write_execute_memory", &v)) {
                r = json_doc_get_bool(jd, JSON_KEY(p, "write_execute_memory"), v, &prof->write_execute_memory);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "LO-HI": digits without leading zeros, 1 <= LO <= HI <= 65535 */
static bool port_range_from_string(const char *s, PortRange *ret) {
        unsigned long v[2];
        const char *c = s;

        for (size_t i = 0; i < 2; i++) {
                size_t n = strspn(c, "0123456789");

                if (n == 0 || n > 5 || (n > 1 && c[0] == '0'))
                        return false;
                v[i] = strtoul(c, NULL, 10);
                c += n;
                if (i == 0 && *c++ != '-')
                        return false;
        }
        if (*c != 0 || v[0] < 1 || v[0] > v[1] || v[1] > 65535)
                return false;
        *ret = (PortRange) { .lo = (uint16_t) v[0], .hi = (uint16_t) v[1] };
        return true;
}

static int parse_ports(JsonDoc *jd, const JsonPath *p, json_object *v, NetDestination *d) {
        size_t n = 0;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return json_doc_fail_got(jd, p, v, "expected at least one port (leave \"ports\" out for every port)");
        d->ports = calloc(n, sizeof(PortRange));
        if (!d->ports)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *s = json_doc_string(e);
                PortRange pr;
                uint64_t u;

                if (json_doc_to_uint(e, &u)) {
                        if (u < 1 || u > 65535)
                                return json_doc_fail_got(jd, JSON_INDEX(p, i), e, "expected a port from 1 to 65535");
                        pr = (PortRange) { .lo = (uint16_t) u, .hi = (uint16_t) u };
                } else if (s && strchr(s, '-')) {
                        if (!port_range_from_string(s, &pr))
                                return json_doc_fail_got(jd, JSON_INDEX(p, i), e,
                                                         "expected a range \"LO-HI\" with 1 <= LO <= HI <= 65535");
                } else
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), e,
                                                 "expected a port from 1 to 65535 or a range \"LO-HI\"");
                for (size_t j = 0; j < i; j++) {
                        const PortRange *o = &d->ports[j];
                        _cleanup_free_ char *other = NULL;

                        if (pr.hi < o->lo || pr.lo > o->hi)
                                continue;
                        r = json_path_to_string(JSON_INDEX(p, j), &other);
                        if (r < 0)
                                return r;
                        if (pr.lo == pr.hi && o->lo == o->hi)
                                return json_doc_fail(jd, JSON_INDEX(p, i), "%u is also in %s", pr.lo, other);
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), e, "overlaps %s, expected ports and ranges "
                                                 "that do not", other);
                }
                d->ports[d->n_ports++] = pr;
        }
        return 0;
}

/* An address destination: an address or prefix outside the ranges no profile can open, and in a
 * private or shared range only with "private": true (and then only there). */
static int check_address(JsonDoc *jd, const JsonPath *p, json_object *v, const NetDestination *d) {
        _cleanup_free_ char *range = NULL;
        char a[INET6_ADDRSTRLEN];
        EgressDeniedRow row;
        uint8_t addr[16];
        unsigned plen;
        EgressClass c;
        int family;

        if (egress_prefix_from_string(d->address, &family, addr, &plen) < 0)
                return json_doc_fail_got(jd, JSON_KEY(p, "address"), v,
                                         "expected an IPv4 or IPv6 address, optionally with a /prefix length");
        c = egress_classify(family, addr, plen, &row);
        if (c == EGRESS_CLASS_PUBLIC) {
                if (d->private)
                        return json_doc_fail(jd, JSON_KEY(p, "private"),
                                             "only allowed with a \"host\", or an \"address\" in a private or "
                                             "shared range ('%s' is in neither)",
                                             d->address);
                return 0;
        }
        if (!inet_ntop(row.family, row.addr, a, sizeof(a)) || asprintf(&range, "%s/%u", a, row.prefixlen) < 0)
                return -ENOMEM;
        if (c == EGRESS_CLASS_DENIED)
                return json_doc_fail(jd, JSON_KEY(p, "address"), "'%s' lies in the %s %s, which no profile can open%s",
                                     d->address, egress_reason_to_phrase(row.reason), range,
                                     row.reason == EGRESS_REASON_LOOPBACK
                                             ? " (a run's own loopback is always allowed)"
                                             : "");
        if (!d->private)
                return json_doc_fail(jd, JSON_KEY(p, "address"),
                                     "'%s' lies in the %s %s: set \"private\": true to open it", d->address,
                                     egress_reason_to_phrase(row.reason), range);
        return 0;
}

static int parse_destination(JsonDoc *jd, const JsonPath *p, json_object *o, NetDestination *d) {
        static const char *const keys[] = { "host", "address", "ports", "protocol", "private", NULL };
        json_object *host, *address, *v;
        bool has_host, has_address;
        const char *s;
        unsigned u;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        has_host = json_doc_get(o, "host", &host);
        has_address = json_doc_get(o, "address", &address);
        if (has_host == has_address)
                return json_doc_fail(jd, p, "expected exactly one of \"host\" and \"address\"");
        if (json_doc_get(o, "private", &v)) {
                r = json_doc_get_bool(jd, JSON_KEY(p, "private"), v, &d->private);
                if (r < 0)
                        return r;
        }
        if (has_host) {
                r = json_doc_get_string(jd, JSON_KEY(p, "host"), host, &s);
                if (r < 0)
                        return r;
                if (!dns_name_is_valid(s))
                        return json_doc_fail_got(jd, JSON_KEY(p, "host"), host,
                                                 "expected a DNS name of at least two labels, or \"*.\" and one");
                d->host = strdup(s);
                if (!d->host)
                        return -ENOMEM;
                for (char *c = d->host; *c; c++)
                        *c = (char) tolower((unsigned char) *c);
        } else {
                r = json_doc_get_string(jd, JSON_KEY(p, "address"), address, &s);
                if (r < 0)
                        return r;
                d->address = strdup(s);
                if (!d->address)
                        return -ENOMEM;
                r = check_address(jd, p, address, d);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "ports", &v)) {
                r = parse_ports(jd, JSON_KEY(p, "ports"), v, d);
                if (r < 0)
                        return r;
        }
        d->protocol = NET_PROTOCOL_ANY;
        if (json_doc_get(o, "protocol", &v)) {
                r = json_doc_get_choice(jd, JSON_KEY(p, "protocol"), v, net_protocol_table, "one of tcp, udp, any", &u);
                if (r < 0)
                        return r;
                d->protocol = (NetProtocol) u;
        }
        return 0;
}

static int parse_network(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "mode", "destinations", NULL };
        json_object *v;
        unsigned u;
        size_t n = 0;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (!json_doc_get(o, "mode", &v))
                return json_doc_missing(jd, JSON_KEY(p, "mode"));
        r = json_doc_get_choice(jd, JSON_KEY(p, "mode"), v, network_mode_table, "one of none, public, allowlist", &u);
        if (r < 0)
                return r;
        prof->network = (NetworkMode) u;

        if (!json_doc_get(o, "destinations", &v)) {
                if (prof->network == NETWORK_ALLOWLIST)
                        return json_doc_fail(jd, JSON_KEY(p, "destinations"),
                                             "missing required key (\"mode\": \"allowlist\" needs it)");
                return 0;
        }
        if (prof->network != NETWORK_ALLOWLIST)
                return json_doc_fail(jd, JSON_KEY(p, "destinations"), "only allowed with \"mode\": \"allowlist\"");
        r = json_doc_get_array(jd, JSON_KEY(p, "destinations"), v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return json_doc_fail_got(jd, JSON_KEY(p, "destinations"), v, "expected at least one destination");
        if (n > PROFILE_DESTINATIONS_MAX)
                return json_doc_fail(jd, JSON_KEY(p, "destinations"), "expected at most %d destinations, got %zu",
                                     PROFILE_DESTINATIONS_MAX, n);
        prof->destinations = calloc(n, sizeof(NetDestination));
        if (!prof->destinations)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                prof->n_destinations++;
                prof->destinations[i].rule = i;
                r = parse_destination(jd, JSON_INDEX(JSON_KEY(p, "destinations"), i), json_object_array_get_idx(v, i),
                                      &prof->destinations[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_resources(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "memory", "swap", "cpu", "tasks", "wall_time", "disk", "output", NULL };
        json_object *v;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;

        if (!json_doc_get(o, "memory", &v))
                return json_doc_missing(jd, JSON_KEY(p, "memory"));
        r = json_doc_get_size(jd, JSON_KEY(p, "memory"), v, &prof->memory_max);
        if (r < 0)
                return r;
        if (prof->memory_max < PROFILE_MEMORY_MIN)
                return json_doc_fail_got(jd, JSON_KEY(p, "memory"), v, "expected at least 4M");

        if (json_doc_get(o, "swap", &v)) {
                r = json_doc_get_size(jd, JSON_KEY(p, "swap"), v, &prof->swap_max);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "cpu", &v)) {
                r = json_doc_get_cpu_percent(jd, JSON_KEY(p, "cpu"), v, PROFILE_CPU_PERCENT_MAX,
                                             &prof->cpu_quota_percent);
                if (r < 0)
                        return r;
        }

        if (!json_doc_get(o, "tasks", &v))
                return json_doc_missing(jd, JSON_KEY(p, "tasks"));
        if (!json_doc_to_uint(v, &prof->tasks_max) || prof->tasks_max < PROFILE_TASKS_MIN)
                return json_doc_fail_got(jd, JSON_KEY(p, "tasks"), v, "expected an integer of at least 2");

        if (!json_doc_get(o, "wall_time", &v))
                return json_doc_missing(jd, JSON_KEY(p, "wall_time"));
        r = json_doc_get_duration(jd, JSON_KEY(p, "wall_time"), v, &prof->runtime_max);
        if (r < 0)
                return r;
        if (prof->runtime_max < USEC_PER_SEC)
                return json_doc_fail_got(jd, JSON_KEY(p, "wall_time"), v, "expected at least 1s");

        if (json_doc_get(o, "disk", &v)) {
                r = json_doc_get_size(jd, JSON_KEY(p, "disk"), v, &prof->disk_max);
                if (r < 0)
                        return r;
                if (prof->disk_max < PROFILE_DISK_MIN)
                        return json_doc_fail_got(jd, JSON_KEY(p, "disk"), v, "expected at least 1M");
        }
        if (json_doc_get(o, "output", &v)) {
                r = json_doc_get_size(jd, JSON_KEY(p, "output"), v, &prof->output_max);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_aggregate(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "memory", "tasks", "cpu", NULL };
        json_object *v;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (json_doc_get(o, "memory", &v)) {
                r = json_doc_get_size(jd, JSON_KEY(p, "memory"), v, &prof->slice_memory_max);
                if (r < 0)
                        return r;
                if (prof->slice_memory_max > 0 && prof->slice_memory_max < prof->memory_max)
                        return json_doc_fail_got(
                                jd, JSON_KEY(p, "memory"), v,
                                "expected 0 (no limit) or at least the per-run value (resources.memory)");
        }
        if (json_doc_get(o, "tasks", &v)) {
                if (!json_doc_to_uint(v, &prof->slice_tasks_max))
                        return json_doc_fail_got(jd, JSON_KEY(p, "tasks"), v, "expected an integer >= 0");
                if (prof->slice_tasks_max > 0 && prof->slice_tasks_max < prof->tasks_max)
                        return json_doc_fail_got(
                                jd, JSON_KEY(p, "tasks"), v,
                                "expected 0 (no limit) or at least the per-run value (resources.tasks)");
        }
        if (json_doc_get(o, "cpu", &v)) {
                r = json_doc_get_cpu_percent(jd, JSON_KEY(p, "cpu"), v, PROFILE_CPU_PERCENT_MAX,
                                             &prof->slice_cpu_quota_percent);
                if (r < 0)
                        return r;
                /* A run without a quota of its own ("0%") is still held by the slice's. */
                if (prof->slice_cpu_quota_percent > 0 && prof->slice_cpu_quota_percent < prof->cpu_quota_percent)
                        return json_doc_fail_got(
                                jd, JSON_KEY(p, "cpu"), v,
                                "expected \"0%%\" (no limit) or at least the per-run value (resources.cpu)");
        }
        return 0;
}

static int parse_cache(JsonDoc *jd, const JsonPath *p, json_object *o, ProfileCache *c) {
        static const char *const keys[] = { "name", "path", NULL };
        json_object *v;
        const char *s;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;

        if (!json_doc_get(o, "name", &v))
                return json_doc_missing(jd, JSON_KEY(p, "name"));
        r = json_doc_get_string(jd, JSON_KEY(p, "name"), v, &s);
        if (r < 0)
                return r;
        if (!name_is_valid(s, "abcdefghijklmnopqrstuvwxyz0123456789_", 32))
                return json_doc_fail_got(jd, JSON_KEY(p, "name"), v, "expected 1 to 32 characters of a-z, 0-9 and _");
        c->name = strdup(s);
        if (!c->name)
                return -ENOMEM;

        if (!json_doc_get(o, "path", &v))
                return json_doc_missing(jd, JSON_KEY(p, "path"));
        r = json_doc_get_string(jd, JSON_KEY(p, "path"), v, &s);
        if (r < 0)
                return r;
        if (!relative_path_is_normalized(s))
                return json_doc_fail_got(jd, JSON_KEY(p, "path"), v,
                                         "expected a normalized path relative to HOME, without \"..\"");
        if (strlen(s) > PROFILE_PATH_MAX)
                return json_doc_fail(jd, JSON_KEY(p, "path"), "expected a path of at most %d bytes, got %zu",
                                     PROFILE_PATH_MAX, strlen(s));
        if (path_has_bad_chars(s))
                return json_doc_fail_got(jd, JSON_KEY(p, "path"), v,
                                         "expected a path without ':', '\"', '\\', '%%', white space or control characters");
        /* HOME/workspace and HOME/dataset are where a run's workspace and dataset are bound. */
        if (path_is_below(s, "workspace") || path_is_below(s, "dataset"))
                return json_doc_fail_got(jd, JSON_KEY(p, "path"), v,
                                         "expected a path outside \"workspace\" and \"dataset\" (where a run's "
                                         "workspace and dataset are bound)");
        c->path = strdup(s);
        if (!c->path)
                return -ENOMEM;
        return 0;
}

static int parse_lifetime(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "caches", NULL };
        const JsonPath *cp = JSON_KEY(p, "caches");
        json_object *v;
        size_t n = 0;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (!json_doc_get(o, "caches", &v))
                return 0;
        r = json_doc_get_array(jd, cp, v, &n);
        if (r < 0)
                return r;
        prof->caches = calloc(MAX(n, 1u), sizeof(ProfileCache));
        if (!prof->caches)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ProfileCache *c = &prof->caches[i];

                prof->n_caches++;
                r = parse_cache(jd, JSON_INDEX(cp, i), json_object_array_get_idx(v, i), c);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++) {
                        if (streq(c->name, prof->caches[j].name))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(cp, i), "name"),
                                                     "'%s' is also in lifetime.caches[%zu].name", c->name, j);
                        if (streq(c->path, prof->caches[j].path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(cp, i), "path"),
                                                     "'%s' is also in lifetime.caches[%zu].path", c->path, j);
                        /* One cache inside another would be linked into a directory of the other. */
                        if (path_is_below(c->path, prof->caches[j].path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(cp, i), "path"),
                                                     "'%s' lies below '%s' (lifetime.caches[%zu].path): caches "
                                                     "may not nest",
                                                     c->path, prof->caches[j].path, j);
                        if (path_is_below(prof->caches[j].path, c->path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(cp, i), "path"),
                                                     "'%s' contains '%s' (lifetime.caches[%zu].path): caches "
                                                     "may not nest",
                                                     c->path, prof->caches[j].path, j);
                }
        }
        return 0;
}

typedef enum BoundKind {
        BOUND_SIZE,
        BOUND_COUNT,
        BOUND_DURATION,
        BOUND_CPU,
} BoundKind;

/* request.X: { "min": ... }, the lowest value a caller may ask for; the highest is the profile's. */
static int parse_request_bound(JsonDoc *jd, const JsonPath *p, json_object *o, BoundKind kind, uint64_t floor,
                               const char *floor_text, uint64_t profile_value, const char *profile_key,
                               RequestBound *ret) {
        static const char *const keys[] = { "min", NULL };
        const JsonPath *mp = JSON_KEY(p, "min");
        json_object *v;
        uint64_t min = 0;
        unsigned cpu;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (!json_doc_get(o, "min", &v))
                return json_doc_missing(jd, mp);
        switch (kind) {
        case BOUND_SIZE:
                r = json_doc_get_size(jd, mp, v, &min);
                break;
        case BOUND_COUNT:
                r = json_doc_to_uint(v, &min) ? 0 : json_doc_fail_got(jd, mp, v, "expected an integer >= 0");
                break;
        case BOUND_DURATION:
                r = json_doc_get_duration(jd, mp, v, &min);
                break;
        case BOUND_CPU:
                r = json_doc_get_cpu_percent(jd, mp, v, PROFILE_CPU_PERCENT_MAX, &cpu);
                min = cpu;
                break;
        }
        if (r < 0)
                return r;
        if (min < floor)
                return json_doc_fail_got(jd, mp, v, "expected at least %s", floor_text);
        /* The profile's value 0 is "no limit" only for the CPU quota; the others are never 0. */
        if (profile_value > 0 && min > profile_value)
                return json_doc_fail_got(jd, mp, v, "expected at most the profile's own value (%s)", profile_key);
        *ret = (RequestBound) { .allowed = true, .min = min };
        return 0;
}

static int parse_request(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof) {
        static const char *const keys[] = { "memory", "tasks", "wall_time", "cpu", "network", "dataset", NULL };
        json_object *v;
        int r;

        r = json_doc_check_object(jd, p, o, keys);
        if (r < 0)
                return r;
        if (json_doc_get(o, "memory", &v)) {
                r = parse_request_bound(jd, JSON_KEY(p, "memory"), v, BOUND_SIZE, PROFILE_MEMORY_MIN, "4M",
                                        prof->memory_max, "resources.memory", &prof->request.memory);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "tasks", &v)) {
                r = parse_request_bound(jd, JSON_KEY(p, "tasks"), v, BOUND_COUNT, PROFILE_TASKS_MIN, "2",
                                        prof->tasks_max, "resources.tasks", &prof->request.tasks);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "wall_time", &v)) {
                r = parse_request_bound(jd, JSON_KEY(p, "wall_time"), v, BOUND_DURATION, USEC_PER_SEC, "1s",
                                        prof->runtime_max, "resources.wall_time", &prof->request.runtime);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "cpu", &v)) {
                r = parse_request_bound(jd, JSON_KEY(p, "cpu"), v, BOUND_CPU, 1, "1%", prof->cpu_quota_percent,
                                        "resources.cpu", &prof->request.cpu);
                if (r < 0)
                        return r;
        }
        if (json_doc_get(o, "network", &v)) {
                _cleanup_strv_free_ char **l = NULL;

                r = json_doc_get_string_array(jd, JSON_KEY(p, "network"), v, &l);
                if (r < 0)
                        return r;
                if (!l[0])
                        return json_doc_fail_got(jd, JSON_KEY(p, "network"), v, "expected [\"none\"]");
                for (size_t i = 0; l[i]; i++)
                        if (!streq(l[i], "none"))
                                return json_doc_fail_got(
                                        jd, JSON_INDEX(JSON_KEY(p, "network"), i), json_object_array_get_idx(v, i),
                                        "expected \"none\" (the only mode a run may narrow to in version 1)");
                r = json_doc_check_unique(jd, &(const JsonNamedList) { JSON_KEY(p, "network"), l }, 1);
                if (r < 0)
                        return r;
                prof->request.network_none = true;
        }
        if (json_doc_get(o, "dataset", &v)) {
                static const char *const dataset_keys[] = { "under", NULL };
                const JsonPath *dp = JSON_KEY(p, "dataset");
                json_object *under;

                r = json_doc_check_object(jd, dp, v, dataset_keys);
                if (r < 0)
                        return r;
                if (!json_doc_get(v, "under", &under))
                        return json_doc_missing(jd, JSON_KEY(dp, "under"));
                r = get_host_paths(jd, JSON_KEY(dp, "under"), under, &prof->request.dataset_under);
                if (r < 0)
                        return r;
                if (!prof->request.dataset_under[0])
                        return json_doc_fail_got(jd, JSON_KEY(dp, "under"), under, "expected at least one path");
        }
        return 0;
}

static int check_description(JsonDoc *jd, const JsonPath *p, json_object *v) {
        const unsigned char *s = (const unsigned char *) json_object_get_string(v);
        size_t n = 0;

        for (const unsigned char *c = s; *c; c++) {
                if (*c < 0x20 || *c == 0x7f || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
                        return json_doc_fail_got(jd, p, v, "expected one line without control characters");
                if ((*c & 0xc0) != 0x80) /* not a UTF-8 continuation byte */
                        n++;
        }
        if (n < 1 || n > PROFILE_DESCRIPTION_MAX)
                return json_doc_fail(jd, p, "expected 1 to %d characters, got %zu", PROFILE_DESCRIPTION_MAX, n);
        return 0;
}

static int profile_from_json(JsonDoc *jd, json_object *root, Profile *prof) {
        static const char *const keys[] = { "version",   "description", "files",    "process", "network",
                                            "resources", "aggregate",   "lifetime", "request", NULL };
        static const struct {
                const char *key;
                bool required;
                int (*parse)(JsonDoc *jd, const JsonPath *p, json_object *o, Profile *prof);
        } sections[] = {
                /* in this order: aggregate and request are checked against resources */
                { "files", false, parse_files },         { "process", false, parse_process },
                { "network", true, parse_network },      { "resources", true, parse_resources },
                { "aggregate", false, parse_aggregate }, { "lifetime", false, parse_lifetime },
                { "request", false, parse_request },
        };
        json_object *v;
        const char *s;
        int r;

        if (!json_object_is_type(root, json_type_object))
                return json_doc_fail_got(jd, NULL, root, "expected a JSON object");

        /* The version first: a document of another version is reported as that, not as unknown keys. */
        if (!json_doc_get(root, "version", &v))
                return json_doc_missing(jd, JSON_KEY(NULL, "version"));
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) != PROFILE_FORMAT_VERSION)
                return json_doc_fail_got(jd, JSON_KEY(NULL, "version"), v, "expected format version %d",
                                         PROFILE_FORMAT_VERSION);

        r = json_doc_check_object(jd, NULL, root, keys);
        if (r < 0)
                return r;

        if (!json_doc_get(root, "description", &v))
                return json_doc_missing(jd, JSON_KEY(NULL, "description"));
        r = json_doc_get_string(jd, JSON_KEY(NULL, "description"), v, &s);
        if (r < 0)
                return r;
        r = check_description(jd, JSON_KEY(NULL, "description"), v);
        if (r < 0)
                return r;
        prof->description = strdup(s);
        if (!prof->description)
                return -ENOMEM;

        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                if (!json_doc_get(root, sections[i].key, &v)) {
                        if (sections[i].required)
                                return json_doc_missing(jd, JSON_KEY(NULL, sections[i].key));
                        continue;
                }
                r = sections[i].parse(jd, JSON_KEY(NULL, sections[i].key), v, prof);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A Profile with the defaults of every optional key. */
static int profile_new(const char *name, const char *path, const char *text, size_t size, Profile **ret) {
        _cleanup_(profile_freep) Profile *p = NULL;
        uint8_t digest[SHA256_DIGEST_SIZE];

        p = calloc(1, sizeof(Profile));
        if (!p)
                return -ENOMEM;
        p->name = strdup(name);
        p->path = path ? strdup(path) : NULL;
        p->read_only = calloc(1, sizeof(char *));
        p->read_write = calloc(1, sizeof(char *));
        p->hidden = calloc(1, sizeof(char *));
        p->syscall_allow = calloc(2, sizeof(char *));
        p->syscall_deny = calloc(1, sizeof(char *));
        if (!p->name || (path && !p->path) || !p->read_only || !p->read_write || !p->hidden || !p->syscall_allow ||
            !p->syscall_deny)
                return -ENOMEM;
        p->syscall_allow[0] = strdup("@system-service");
        if (!p->syscall_allow[0])
                return -ENOMEM;

        p->workspace = true;
        p->write_execute_memory = true;
        p->disk_max = 1ULL << 30;

        sha256(text, size, digest);
        memcpy(p->digest, "sha256:", 7);
        hex_encode(digest, sizeof(digest), p->digest + 7);

        *ret = TAKE_PTR(p);
        return 0;
}

static int fail_name(JsonDoc *jd, const char *name) {
        _cleanup_(json_object_putp) json_object *v = NULL;

        if (name) {
                v = json_object_new_string(name);
                if (!v)
                        return -ENOMEM;
        }
        return json_doc_fail_got(jd, NULL, v, "invalid profile name: expected [a-z][a-z0-9_]{0,31}");
}

int profile_parse(const char *text, size_t size, const char *name, const char *path, Profile **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_(profile_freep) Profile *p = NULL;
        JsonDoc jd = { .file = path ?: "<input>" };
        int r;

        if (!ret || (!text && size > 0))
                return -EINVAL;

        if (!profile_name_is_valid(name))
                r = fail_name(&jd, name);
        else
                r = json_doc_parse(&jd, text, size, &root);
        if (r >= 0)
                r = profile_new(name, path, size > 0 ? text : "", size, &p);
        if (r >= 0)
                r = profile_from_json(&jd, root, p);
        if (r < 0) {
                if (r == -EINVAL && ret_error)
                        *ret_error = TAKE_PTR(jd.error);
                free(jd.error);
                return r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}
