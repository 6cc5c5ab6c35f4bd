/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The profile parser: one JSON document (docs/profiles.md) in, a validated Profile or the first error
 * as one line out. Pure: json-c for the syntax (json-doc.c), libseccomp only to look syscall names up. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <inttypes.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "command.h"
#include "egress-address.h"
#include "image.h"
#include "json-doc.h"
#include "profile.h"
#include "sha256.h"
#include "syscall-name.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define PROFILE_PATH_MAX 4095
#define PROFILE_DESCRIPTION_MAX 200
#define PROFILE_MEMORY_MIN (4ULL << 20)
#define PROFILE_DISK_MIN (1ULL << 20)
#define PROFILE_TASKS_MIN 2
#define PROFILE_CPU_PERCENT_MAX 1000000U /* 10000 CPUs: anything above is a typo */
#define SYSCALL_NAME_MAX 64

/* NULL-terminated, for json_doc_get_choice() */
static const char *const output_action_table[_OUTPUT_ACTION_MAX + 1] = {
        [OUTPUT_ACTION_STOP] = "stop",
        [OUTPUT_ACTION_CUT] = "cut",
        NULL,
};

static const char *const landlock_mode_table[_LANDLOCK_MODE_MAX + 1] = {
        [LANDLOCK_MODE_REQUIRED] = "required",
        [LANDLOCK_MODE_BEST_EFFORT] = "best-effort",
        NULL,
};

DEFINE_NAME_TABLE_LOOKUP(landlock_mode, LandlockMode, landlock_mode_table, _LANDLOCK_MODE_MAX);

static const char *const isolation_table[_ISOLATION_MAX + 1] = {
        [ISOLATION_KERNEL] = "kernel",
        [ISOLATION_GVISOR] = "gvisor",
        NULL,
};

DEFINE_NAME_TABLE_LOOKUP(isolation, Isolation, isolation_table, _ISOLATION_MAX);

static const char *const network_mode_table[_NETWORK_MODE_MAX + 1] = {
        [NETWORK_NONE] = "none",
        [NETWORK_PUBLIC] = "public",
        [NETWORK_ALLOWLIST] = "allowlist",
};

DEFINE_NAME_TABLE_LOOKUP(network_mode, NetworkMode, network_mode_table, _NETWORK_MODE_MAX);

static const char *const net_protocol_table[_NET_PROTOCOL_MAX + 1] = {
        [NET_PROTOCOL_ANY] = "any",
        [NET_PROTOCOL_TCP] = "tcp",
        [NET_PROTOCOL_UDP] = "udp",
};

DEFINE_NAME_TABLE_LOOKUP(net_protocol, NetProtocol, net_protocol_table, _NET_PROTOCOL_MAX);

static const char *const syscall_cmp_table[_SYSCALL_CMP_MAX + 1] = {
        [SYSCALL_CMP_EQ] = "eq",
        [SYSCALL_CMP_NE] = "ne",
        [SYSCALL_CMP_LT] = "lt",
        [SYSCALL_CMP_LE] = "le",
        [SYSCALL_CMP_GT] = "gt",
        [SYSCALL_CMP_GE] = "ge",
        [SYSCALL_CMP_MASKED_EQ] = "masked_eq",
};

DEFINE_NAME_TABLE_LOOKUP(syscall_cmp, SyscallCmp, syscall_cmp_table, _SYSCALL_CMP_MAX);

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
        free(p->image);
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
        strv_free(p->credential_files);
        strv_free(p->environment_allow);
        strv_free(p->environment_deny);
        for (size_t i = 0; i < p->n_grants; i++)
                grant_done(&p->grants[i]);
        free(p->grants);
        export_policy_done(&p->export);
        strv_free(p->request.dataset_under);
        return mfree(p);
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

/* ---- sections ----
 *
 * Each object of the format is a table of its keys, decoded by json_doc_dispatch(): a key not in the
 * table is an error, and the keys are checked in the table's order, so that the first error found is
 * the one reported. A key checked against another one comes after it. */

static const unsigned cpu_percent_max = PROFILE_CPU_PERCENT_MAX;
static const JsonDocMin memory_min = { PROFILE_MEMORY_MIN, "4M" };
static const JsonDocMin tasks_min = { PROFILE_TASKS_MIN, "2" };
static const JsonDocMin wall_time_min = { USEC_PER_SEC, "1s" };

/* A string with one possible value in version 1, kept nowhere; arg: a JsonDocChoice. */
static int dispatch_only(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const JsonDocChoice *c = arg;
        unsigned u;

        return json_doc_get_choice(jd, p, v, c->choices, c->expected, &u);
}

/* char **: an array of strings, each one passing check, each at most once. */
static int dispatch_unique_strings(JsonDoc *jd, const JsonPath *p, json_object *v, char ***ret,
                                   int (*check)(JsonDoc *jd, const JsonPath *p, json_object *v)) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        for (size_t i = 0; l[i]; i++) {
                r = check(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i));
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

/* char **: host paths (files.*, request.dataset.under), each at most once. */
static int dispatch_host_paths(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return dispatch_unique_strings(jd, p, v, field, check_host_path);
}

/* files */

/* bool: "writable" (true) or "none" */
static int dispatch_workspace(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        static const char *const workspaces[] = { "writable", "none", NULL };
        unsigned u;
        int r;

        r = json_doc_get_choice(jd, p, v, workspaces, "\"writable\" or \"none\"", &u);
        if (r < 0)
                return r;
        *(bool *) field = u == 0;
        return 0;
}

/* the profile's base: files.base ("host" or "image") and files.image (docs/images.md) */

/* files.base: "host" or "image" (field: the Profile) */
static int dispatch_base(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        static const char *const bases[] = { "host", "image", NULL };
        Profile *prof = field;
        unsigned u;
        int r;

        r = json_doc_get_choice(jd, p, v, bases, "\"host\" or \"image\"", &u);
        if (r < 0)
                return r;
        prof->base_image = u == 1;
        return 0;
}

/* files.image: "NAME" or "NAME@sha256:HEX", only with files.base "image" (field: the Profile) */
static int dispatch_image(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_free_ char *why = NULL;
        Profile *prof = field;
        const char *s;
        ImageRef ref;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!prof->base_image)
                return json_doc_fail(jd, p, "only with files.base \"image\"");
        if (image_ref_parse(s, &ref, &why) < 0)
                return json_doc_fail_got(jd, p, v, "expected NAME or NAME@sha256:DIGEST (NAME: 1-64 of a-z 0-9 . _ -, "
                                         "starting with a letter or digit; DIGEST: 64 lower-case hex digits)");
        free(prof->image);
        prof->image = strdup(s);
        return prof->image ? 0 : -ENOMEM;
}

/* After the files section: base "image" needs files.image, and no host paths bound into the image. p: the
 * files section's path. */
static int check_image(JsonDoc *jd, const JsonPath *p, const Profile *prof) {
        if (!prof->base_image)
                return 0;
        if (!prof->image)
                return json_doc_fail(jd, JSON_KEY(p, "image"), "files.base \"image\" needs the image's name");
        /* a read-only image has no mount point for a host path that it does not have itself */
        if (strv_length(prof->read_only) > 0)
                return json_doc_fail(jd, JSON_KEY(p, "read_only"), "host paths cannot be bound into a base image");
        if (strv_length(prof->read_write) > 0)
                return json_doc_fail(jd, JSON_KEY(p, "read_write"), "host paths cannot be bound into a base image");
        return 0;
}

static int dispatch_landlock(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;

        prof->landlock_given = true;
        return json_doc_dispatch_choice(jd, p, v, &prof->landlock, arg);
}

static const JsonDocField files_fields[] = {
        /* the host's tree, narrowed by the lists below, or a base image (files.image, docs/images.md) */
        { "base", dispatch_base, 0 },
        /* after base: checked against it */
        { "image", dispatch_image, 0 },
        { "read_only", dispatch_host_paths, offsetof(Profile, read_only) },
        { "read_write", dispatch_host_paths, offsetof(Profile, read_write) },
        { "hidden", dispatch_host_paths, offsetof(Profile, hidden) },
        /* whether a caller may bind a writable workspace directory */
        { "workspace", dispatch_workspace, offsetof(Profile, workspace) },
        /* a kernel without Landlock: the run is refused, or runs without it */
        { "landlock", dispatch_landlock, 0, 0,
          &(const JsonDocChoice) { landlock_mode_table, "one of required, best-effort" } },
        {}
};

static int dispatch_files(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        int r;

        r = json_doc_dispatch(jd, p, v, files_fields, prof);
        if (r < 0)
                return r;
        r = check_image(jd, p, prof);
        if (r < 0)
                return r;
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

/* process.syscalls */

static int check_syscall_names(JsonDoc *jd, const JsonPath *p, json_object *v, char **l, bool deny) {
        for (size_t i = 0; l[i]; i++) {
                const char *s = l[i];
                int r, nr;

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
                        r = syscall_name_resolve(s, &nr);
                        if (r == -ELIBACC)
                                return json_doc_fail(jd, JSON_INDEX(p, i), "cannot check syscall '%s': %s cannot be "
                                                     "loaded", s, SBX_LIBSECCOMP_SONAME);
                        if (r < 0)
                                return json_doc_fail(jd, JSON_INDEX(p, i), "unknown syscall '%s'", s);
                        if (deny && streq(s, "seccomp"))
                                return json_doc_fail(jd, JSON_INDEX(p, i),
                                                     "seccomp may not be denied (sbx's exec helper needs seccomp() to "
                                                     "install its filter)");
                }
        }
        return 0;
}

static int get_syscall_names(JsonDoc *jd, const JsonPath *p, json_object *v, bool deny, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        if (!deny && !l[0])
                return json_doc_fail_got(jd, p, v, "expected at least one syscall group or name");
        r = check_syscall_names(jd, p, v, l, deny);
        if (r < 0)
                return r;
        strv_free(*ret);
        *ret = TAKE_PTR(l);
        return 0;
}

/* char **: groups and names */
static int dispatch_syscall_allow(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return get_syscall_names(jd, p, v, false, field);
}

static int dispatch_syscall_deny(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return get_syscall_names(jd, p, v, true, field);
}

/* systemd's SystemCallFilter=: the allow list, then the deny list */
static const JsonDocField syscalls_fields[] = {
        { "allow", dispatch_syscall_allow, offsetof(Profile, syscall_allow) }, /* default: @system-service */
        { "deny", dispatch_syscall_deny, offsetof(Profile, syscall_deny) },
        {}
};

static int dispatch_syscalls(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        int r;

        r = json_doc_dispatch(jd, p, v, syscalls_fields, prof);
        if (r < 0)
                return r;
        /* Also refuses a name listed twice in one list. */
        return json_doc_check_unique(jd,
                                     (const JsonNamedList[]) {
                                             { JSON_KEY(p, "allow"), prof->syscall_allow },
                                             { JSON_KEY(p, "deny"), prof->syscall_deny },
                                     },
                                     2);
}

/* process.syscall_rules[]: every dispatcher takes the whole SyscallRule */

static int dispatch_rule_syscall(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!name_is_valid(s, "abcdefghijklmnopqrstuvwxyz0123456789_", SYSCALL_NAME_MAX))
                return json_doc_fail_got(jd, p, v, "expected a syscall name");
        r = syscall_name_resolve(s, &rule->nr);
        if (r == -ELIBACC)
                return json_doc_fail(jd, p, "cannot check syscall '%s': %s cannot be loaded", s,
                                     SBX_LIBSECCOMP_SONAME);
        if (r < 0)
                return json_doc_fail(jd, p, "unknown syscall '%s'", s);
        /* The exec helper hands the seccomp listener over with sendmsg() once the filter is in force: a
         * rule there would make every run wait for a supervisor that has no listener yet. */
        if (rule->nr == __NR_sendmsg)
                return json_doc_fail(jd, p,
                                     "a rule on sendmsg is not supported (sbx's exec helper calls it after the "
                                     "filter is in force)");
        if (rule->nr == __NR_seccomp)
                return json_doc_fail(jd, p,
                                     "a rule on seccomp is not supported (sbx catches every seccomp() call of the "
                                     "command already)");
        /* A name of another architecture only: libseccomp gives a negative pseudo number. */
        if (rule->nr < 0)
                return json_doc_fail(jd, p,
                                     "'%s' is not a syscall of the native architecture, a rule on it could never "
                                     "match",
                                     s);
        return json_doc_dispatch_string(jd, p, v, &rule->syscall, NULL);
}

static int dispatch_rule_arg(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        uint64_t u;

        if (!json_doc_to_uint(v, &u) || u > 5)
                return json_doc_fail_got(jd, p, v, "expected an argument number from 0 to 5");
        rule->has_arg = true;
        rule->arg = (unsigned) u;
        return 0;
}

/* The keys after "arg" compare the argument: a rule without one denies the whole syscall. */
static int need_arg(JsonDoc *jd, const JsonPath *p, const SyscallRule *rule) {
        return rule->has_arg ? 0 : json_doc_fail(jd, p, "only allowed with \"arg\"");
}

static int dispatch_rule_op(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        int r;

        r = need_arg(jd, p, rule);
        return r < 0 ? r : json_doc_dispatch_choice(jd, p, v, &rule->cmp, arg);
}

static int dispatch_rule_value(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        const char *s = json_doc_string(v);
        int r;

        r = need_arg(jd, p, rule);
        if (r < 0)
                return r;
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

static int rule_value_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *base, const void *arg) {
        const SyscallRule *rule = base;

        return rule->has_arg ? json_doc_fail(jd, p, "missing required key (a rule with \"arg\" needs one)") : 0;
}

static int dispatch_rule_mask(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        int r;

        r = need_arg(jd, p, rule);
        if (r < 0)
                return r;
        if (rule->cmp != SYSCALL_CMP_MASKED_EQ)
                return json_doc_fail(jd, p, "only allowed with \"op\": \"masked_eq\"");
        return json_doc_dispatch_uint64(jd, p, v, &rule->mask, NULL);
}

static int rule_mask_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *base, const void *arg) {
        const SyscallRule *rule = base;

        if (rule->cmp == SYSCALL_CMP_MASKED_EQ)
                return json_doc_fail(jd, p, "missing required key (\"op\": \"masked_eq\" needs one)");
        return 0;
}

static int dispatch_rule_bits(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        SyscallRule *rule = field;
        uint64_t bits;
        int r;

        r = need_arg(jd, p, rule);
        if (r < 0)
                return r;
        if (!json_doc_to_uint(v, &bits) || (bits != 32 && bits != 64))
                return json_doc_fail_got(jd, p, v, "expected 32 or 64");
        rule->arg32 = bits == 32;
        return 0;
}

static const JsonDocField syscall_rule_fields[] = {
        { "syscall", dispatch_rule_syscall, 0, JSON_DOC_MANDATORY },
        /* the argument compared, 0 to 5; none: every call of the syscall is denied */
        { "arg", dispatch_rule_arg, 0 },
        /* default: eq */
        { "op", dispatch_rule_op, 0, 0,
          &(const JsonDocChoice) { syscall_cmp_table, "one of eq, ne, lt, le, gt, ge, masked_eq" } },
        /* an integer, or the name of an ioctl request ("TIOCSTI"); required with "arg" */
        { "value", dispatch_rule_value, 0, 0, NULL, rule_value_missing },
        /* for "op": "masked_eq" only, and required there */
        { "mask", dispatch_rule_mask, 0, 0, NULL, rule_mask_missing },
        /* 32: compare the low 32 bits only (default: 64; always 32 for ioctl's request) */
        { "bits", dispatch_rule_bits, 0 },
        {}
};

static int parse_syscall_rule(JsonDoc *jd, const JsonPath *p, json_object *o, SyscallRule *rule) {
        int r;

        r = json_doc_dispatch(jd, p, o, syscall_rule_fields, rule);
        if (r < 0 || !rule->has_arg)
                return r;
        /* The kernel reads ioctl()'s request as 32 bits: a 64-bit compare could be dodged by setting
         * high bits that the kernel then ignores. */
        rule->arg32 = rule->arg32 || (streq(rule->syscall, "ioctl") && rule->arg == 1);
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

static int dispatch_syscall_rules(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
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

/* process */

/* uint64_t: CLONE_NEW* flags */
static int dispatch_namespaces(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_strv_free_ char **l = NULL;
        uint64_t *namespaces = field;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        for (size_t i = 0; l[i]; i++) {
                bool found = false;

                for (size_t j = 0; j < ELEMENTSOF(namespace_types) && !found; j++)
                        if (streq(l[i], namespace_types[j].name)) {
                                *namespaces |= namespace_types[j].flag;
                                found = true;
                        }
                if (!found)
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                 "expected one of cgroup, ipc, mnt, net, pid, user, uts");
        }
        return json_doc_check_unique(jd, &(const JsonNamedList) { p, l }, 1);
}

static int dispatch_capabilities(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        size_t n = 0;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        if (n > 0)
                return json_doc_fail(jd, p, "expected [] (runs get no capabilities in version 1)");
        return 0;
}

/* process.isolation: after the rest of process and after files, which it is checked against. The gVisor
 * tier refuses what it cannot give as asked (fail closed, docs/security.md "Isolation tiers"). */
static int dispatch_isolation(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        const char *why = NULL;
        int r;

        r = json_doc_dispatch_choice(jd, p, v, &prof->isolation, arg);
        if (r < 0 || prof->isolation != ISOLATION_GVISOR)
                return r;
        if (prof->landlock_given)
                why = "files.landlock cannot be set (Landlock cannot confine runsc; the command's file view is "
                      "the unit's, through gVisor's own kernel)";
        else if (prof->base_image)
                why = "files.base must be \"host\" (runsc comes from the host's OS)";
        else if (prof->n_rules > 0)
                why = "process.syscall_rules cannot be used (the command's calls never reach the host's "
                      "seccomp filters; process.syscalls are applied inside gVisor)";
        else if (prof->namespaces != 0)
                why = "process.namespaces must be [] (runsc uses the namespaces the unit allows it)";
        else if (!prof->write_execute_memory)
                why = "process.write_execute_memory must be true (runsc's platform maps code it writes)";
        if (why)
                return json_doc_fail(jd, p, "\"gvisor\": %s", why);
        return 0;
}

static const JsonDocField process_fields[] = {
        { "syscalls", dispatch_syscalls, 0 },
        /* argument-level rules: a matching call fails with EPERM */
        { "syscall_rules", dispatch_syscall_rules, 0 },
        /* the namespace types a run may create: cgroup, ipc, mnt, net, pid, user, uts */
        { "namespaces", dispatch_namespaces, offsetof(Profile, namespaces) },
        { "capabilities", dispatch_capabilities, 0 },
        /* a private /dev: the only kind in version 1 */
        { "devices", dispatch_only, 0, 0,
          &(const JsonDocChoice) { (const char *const[]) { "private", NULL }, "\"private\"" } },
        /* false: MemoryDenyWriteExecute=yes */
        { "write_execute_memory", json_doc_dispatch_bool, offsetof(Profile, write_execute_memory) },
        /* after the keys above: checked against them */
        { "isolation", dispatch_isolation, 0, 0,
          &(const JsonDocChoice) { isolation_table, "one of kernel, gvisor" } },
        {}
};

/* network.destinations[]: the rows with offset 0 take the whole NetDestination */

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

static int dispatch_ports(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        NetDestination *d = field;
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

/* char *: a DNS name, kept in lower case */
static int dispatch_host(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        char **host = field;
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!dns_name_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected a DNS name of at least two labels, or \"*.\" and one");
        r = json_doc_dispatch_string(jd, p, v, host, NULL);
        if (r < 0)
                return r;
        for (char *c = *host; *c; c++)
                *c = (char) tolower((unsigned char) *c);
        return 0;
}

/* An address or prefix outside the ranges no profile can open, and in a private or shared range only
 * with "private": true (and then only there): "private" comes first in the table. */
static int dispatch_address(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const JsonPath *private_path = JSON_KEY(p->parent, "private");
        _cleanup_free_ char *range = NULL;
        NetDestination *d = field;
        char a[INET6_ADDRSTRLEN];
        EgressDeniedRow row;
        uint8_t addr[16];
        unsigned plen;
        EgressClass c;
        int family, r;

        r = json_doc_dispatch_string(jd, p, v, &d->address, NULL);
        if (r < 0)
                return r;
        if (egress_prefix_from_string(d->address, &family, addr, &plen) < 0)
                return json_doc_fail_got(jd, p, v,
                                         "expected an IPv4 or IPv6 address, optionally with a /prefix length");
        c = egress_classify(family, addr, plen, &row);
        if (c == EGRESS_CLASS_PUBLIC) {
                if (d->private)
                        return json_doc_fail(jd, private_path,
                                             "only allowed with a \"host\", or an \"address\" in a private or "
                                             "shared range ('%s' is in neither)",
                                             d->address);
                return 0;
        }
        if (!inet_ntop(row.family, row.addr, a, sizeof(a)) || asprintf(&range, "%s/%u", a, row.prefixlen) < 0)
                return -ENOMEM;
        if (c == EGRESS_CLASS_DENIED)
                return json_doc_fail(jd, p, "'%s' lies in the %s %s, which no profile can open%s", d->address,
                                     egress_reason_to_phrase(row.reason), range,
                                     row.reason == EGRESS_REASON_LOOPBACK
                                             ? " (a run's own loopback is always allowed)"
                                             : "");
        if (!d->private)
                return json_doc_fail(jd, p, "'%s' lies in the %s %s: set \"private\": true to open it", d->address,
                                     egress_reason_to_phrase(row.reason), range);
        return 0;
}

/* Exactly one of "host" and "address" (parse_destination() checks that first). */
static const JsonDocField destination_fields[] = {
        /* address: may lie in a private or shared range; host: its answers there are allowed */
        { "private", json_doc_dispatch_bool, offsetof(NetDestination, private) },
        /* a DNS name ("pypi.org"), or "*." and one for any name strictly below it */
        { "host", dispatch_host, offsetof(NetDestination, host) },
        /* an IPv4 or IPv6 address, or a prefix ("192.0.2.0/24") */
        { "address", dispatch_address, 0 },
        /* ports (443) and ranges ("8000-8100"), not overlapping; none: every port */
        { "ports", dispatch_ports, 0 },
        /* default: any */
        { "protocol", json_doc_dispatch_choice, offsetof(NetDestination, protocol), 0,
          &(const JsonDocChoice) { net_protocol_table, "one of tcp, udp, any" } },
        {}
};

static int parse_destination(JsonDoc *jd, const JsonPath *p, json_object *o, NetDestination *d) {
        int r;

        r = json_doc_check_fields(jd, p, o, destination_fields);
        if (r < 0)
                return r;
        if (json_doc_get(o, "host", NULL) == json_doc_get(o, "address", NULL))
                return json_doc_fail(jd, p, "expected exactly one of \"host\" and \"address\"");
        return json_doc_dispatch(jd, p, o, destination_fields, d);
}

/* network */

static int dispatch_destinations(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        size_t n = 0;
        int r;

        if (prof->network != NETWORK_ALLOWLIST)
                return json_doc_fail(jd, p, "only allowed with \"mode\": \"allowlist\"");
        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return json_doc_fail_got(jd, p, v, "expected at least one destination");
        if (n > PROFILE_DESTINATIONS_MAX)
                return json_doc_fail(jd, p, "expected at most %d destinations, got %zu", PROFILE_DESTINATIONS_MAX, n);
        prof->destinations = calloc(n, sizeof(NetDestination));
        if (!prof->destinations)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                prof->n_destinations++;
                prof->destinations[i] = (NetDestination) { .rule = i, .protocol = NET_PROTOCOL_ANY };
                r = parse_destination(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i), &prof->destinations[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int destinations_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *base, const void *arg) {
        const Profile *prof = base;

        if (prof->network == NETWORK_ALLOWLIST)
                return json_doc_fail(jd, p, "missing required key (\"mode\": \"allowlist\" needs it)");
        return 0;
}

static const JsonDocField network_fields[] = {
        { "mode", json_doc_dispatch_choice, offsetof(Profile, network), JSON_DOC_MANDATORY,
          &(const JsonDocChoice) { network_mode_table, "one of none, public, allowlist" } },
        /* with "mode": "allowlist" only, and required there */
        { "destinations", dispatch_destinations, 0, 0, NULL, destinations_missing },
        {}
};

/* resources */

static int dispatch_tasks(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        if (!json_doc_to_uint(v, field) || *(uint64_t *) field < PROFILE_TASKS_MIN)
                return json_doc_fail_got(jd, p, v, "expected an integer of at least 2");
        return 0;
}

/* of one run */
static const JsonDocField resources_fields[] = {
        { "memory", json_doc_dispatch_size, offsetof(Profile, memory_max), JSON_DOC_MANDATORY, &memory_min },
        { "swap", json_doc_dispatch_size, offsetof(Profile, swap_max) }, /* default: 0 */
        /* "200%": two CPUs; default: no quota */
        { "cpu", json_doc_dispatch_cpu_percent, offsetof(Profile, cpu_quota_percent), 0, &cpu_percent_max },
        { "tasks", dispatch_tasks, offsetof(Profile, tasks_max), JSON_DOC_MANDATORY },
        { "wall_time", json_doc_dispatch_duration, offsetof(Profile, runtime_max), JSON_DOC_MANDATORY, &wall_time_min },
        /* the size of each private tmpfs (HOME, /tmp, /var/tmp); default: 1G */
        { "disk", json_doc_dispatch_size, offsetof(Profile, disk_max), 0,
          &(const JsonDocMin) { PROFILE_DISK_MIN, "1M" } },
        /* bytes of stdout and stderr together; default: not limited */
        { "output", json_doc_dispatch_size, offsetof(Profile, output_max) },
        /* what reaching it does; default: "stop" */
        { "output_action", json_doc_dispatch_choice, offsetof(Profile, output_action), 0,
          &(const JsonDocChoice) { output_action_table, "one of stop, cut" } },
        {}
};

/* aggregate: its dispatchers take the whole Profile, to compare with resources */

/* 0 or at least the per-run value of the same resource. */
static int check_per_run(JsonDoc *jd, const JsonPath *p, json_object *v, uint64_t value, uint64_t per_run,
                         const char *zero, const char *per_run_key) {
        if (value > 0 && value < per_run)
                return json_doc_fail_got(jd, p, v, "expected %s (no limit) or at least the per-run value (%s)", zero,
                                         per_run_key);
        return 0;
}

static int dispatch_aggregate_memory(JsonDoc *jd, const JsonPath *p, json_object *v, void *field,
                                     const void *arg) {
        Profile *prof = field;
        int r;

        r = json_doc_dispatch_size(jd, p, v, &prof->slice_memory_max, NULL);
        if (r < 0)
                return r;
        return check_per_run(jd, p, v, prof->slice_memory_max, prof->memory_max, "0", "resources.memory");
}

static int dispatch_aggregate_tasks(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        int r;

        r = json_doc_dispatch_uint64(jd, p, v, &prof->slice_tasks_max, NULL);
        if (r < 0)
                return r;
        return check_per_run(jd, p, v, prof->slice_tasks_max, prof->tasks_max, "0", "resources.tasks");
}

static int dispatch_aggregate_cpu(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        int r;

        r = json_doc_dispatch_cpu_percent(jd, p, v, &prof->slice_cpu_quota_percent, &cpu_percent_max);
        if (r < 0)
                return r;
        /* A run without a quota of its own ("0%") is still held by the slice's. */
        return check_per_run(jd, p, v, prof->slice_cpu_quota_percent, prof->cpu_quota_percent, "\"0%\"",
                             "resources.cpu");
}

/* of all runs of the profile together (its slice); 0: not limited */
static const JsonDocField aggregate_fields[] = {
        { "memory", dispatch_aggregate_memory, 0 },
        { "tasks", dispatch_aggregate_tasks, 0 },
        { "cpu", dispatch_aggregate_cpu, 0 },
        {}
};

/* lifetime */

/* char *: [a-z0-9_]{1,32} */
static int dispatch_cache_name(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!cache_name_is_valid(s))
                return json_doc_fail_got(jd, p, v, "expected 1 to 32 characters of a-z, 0-9 and _");
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

/* char *: relative to HOME */
static int dispatch_cache_path(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!relative_path_is_normalized(s))
                return json_doc_fail_got(jd, p, v, "expected a normalized path relative to HOME, without \"..\"");
        if (strlen(s) > PROFILE_PATH_MAX)
                return json_doc_fail(jd, p, "expected a path of at most %d bytes, got %zu", PROFILE_PATH_MAX,
                                     strlen(s));
        if (path_has_bad_chars(s))
                return json_doc_fail_got(jd, p, v,
                                         "expected a path without ':', '\"', '\\', '%%', white space or control characters");
        /* HOME/workspace and HOME/dataset are where a run's workspace and dataset are bound. */
        if (path_is_below(s, "workspace") || path_is_below(s, "dataset"))
                return json_doc_fail_got(jd, p, v,
                                         "expected a path outside \"workspace\" and \"dataset\" (where a run's "
                                         "workspace and dataset are bound)");
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

/* a directory kept per caller across runs */
/* uint64_t: lifetime.caches[].max_size, 8M to 1T, whole KiB (the cache's ext4 is made of 1 KiB blocks at
 * least) */
static int dispatch_cache_size(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        static const JsonDocMin min = { PROFILE_CACHE_SIZE_MIN, "8M" };
        uint64_t *size = field;
        int r;

        r = json_doc_dispatch_size(jd, p, v, size, &min);
        if (r < 0)
                return r;
        if (*size > PROFILE_CACHE_SIZE_MAX)
                return json_doc_fail_got(jd, p, v, "expected at most 1T");
        *size -= *size % 1024;
        return 0;
}

static const JsonDocField cache_fields[] = {
        { "name", dispatch_cache_name, offsetof(ProfileCache, name), JSON_DOC_MANDATORY },
        { "path", dispatch_cache_path, offsetof(ProfileCache, path), JSON_DOC_MANDATORY }, /* ".cache/pip" */
        { "max_size", dispatch_cache_size, offsetof(ProfileCache, max_size) },
        {}
};

static int dispatch_caches(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        size_t n = 0;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        /* systemd makes a cache's state directory below /var/lib, which a read-only image cannot have */
        if (n > 0 && prof->image)
                return json_doc_fail(jd, p, "caches are not available on a base image (files.base \"image\")");
        prof->caches = calloc(MAX(n, 1u), sizeof(ProfileCache));
        if (!prof->caches)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ProfileCache *c = &prof->caches[i];

                c->max_size = PROFILE_CACHE_SIZE_DEFAULT;
                prof->n_caches++;
                r = json_doc_dispatch(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i), cache_fields, c);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++) {
                        if (streq(c->name, prof->caches[j].name))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(p, i), "name"),
                                                     "'%s' is also in lifetime.caches[%zu].name", c->name, j);
                        if (streq(c->path, prof->caches[j].path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(p, i), "path"),
                                                     "'%s' is also in lifetime.caches[%zu].path", c->path, j);
                        /* One cache inside another would be linked into a directory of the other. */
                        if (path_is_below(c->path, prof->caches[j].path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(p, i), "path"),
                                                     "'%s' lies below '%s' (lifetime.caches[%zu].path): caches "
                                                     "may not nest",
                                                     c->path, prof->caches[j].path, j);
                        if (path_is_below(prof->caches[j].path, c->path))
                                return json_doc_fail(jd, JSON_KEY(JSON_INDEX(p, i), "path"),
                                                     "'%s' contains '%s' (lifetime.caches[%zu].path): caches "
                                                     "may not nest",
                                                     c->path, prof->caches[j].path, j);
                }
        }
        return 0;
}

/* none: everything a run writes is ephemeral */
static const JsonDocField lifetime_fields[] = {
        { "caches", dispatch_caches, 0 },
        {}
};

/* pool: units kept started for the profile's runs. A pooled unit is made before its run's request is
 * known: what a request may change must be what a claim can still apply (docs/pool.md), so a profile whose
 * runs get a network of their own or caches has no pool. Checked against network and lifetime, which
 * come first in profile_fields. */
static int dispatch_pool_size(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        uint64_t n;
        int r;

        r = json_doc_dispatch_uint64(jd, p, v, &n, NULL);
        if (r < 0)
                return r;
        if (n > PROFILE_POOL_SIZE_MAX)
                return json_doc_fail_got(jd, p, v, "expected at most %u", PROFILE_POOL_SIZE_MAX);
        if (n > 0 && prof->network != NETWORK_NONE)
                return json_doc_fail(jd, p, "a pool serves only profiles whose network mode is \"none\"");
        if (n > 0 && prof->n_caches > 0)
                return json_doc_fail(jd, p, "a pool cannot serve a profile with caches (lifetime.caches)");
        /* a run's image is looked up in the store for it (docs/images.md) */
        if (n > 0 && prof->image)
                return json_doc_fail(jd, p, "a pool cannot serve a profile on a base image (files.base \"image\")");
        /* a run's grants are written for it before its unit starts (docs/credentials.md) */
        if (n > 0 && prof->n_grants > 0)
                return json_doc_fail(jd, p, "a pool cannot serve a profile with broker grants (credentials.grants)");
        prof->pool_size = (unsigned) n;
        return 0;
}

static const JsonDocField pool_fields[] = {
        { "size", dispatch_pool_size, 0 },
        {}
};

/* environment: the names a caller may set (command.h) */

static int check_environment_pattern(JsonDoc *jd, const JsonPath *p, json_object *v) {
        const char *s = json_object_get_string(v);
        size_t n = strlen(s);

        /* a name, or a glob of names: the characters of a name and "*", "?", "[...]" */
        for (size_t i = 0; i < n; i++)
                if (s[i] <= ' ' || s[i] > '~' || s[i] == '=')
                        return json_doc_fail_got(jd, p, v, "expected a variable name or a glob of names");
        if (n == 0)
                return json_doc_fail_got(jd, p, v, "expected a variable name or a glob of names");
        return 0;
}

static int dispatch_environment_patterns(JsonDoc *jd, const JsonPath *p, json_object *v, void *field,
                                         const void *arg) {
        return dispatch_unique_strings(jd, p, v, field, check_environment_pattern);
}

static const JsonDocField environment_fields[] = {
        /* default: ["*"] */
        { "allow", dispatch_environment_patterns, offsetof(Profile, environment_allow) },
        /* default: environment_deny_default */
        { "deny", dispatch_environment_patterns, offsetof(Profile, environment_deny) },
        {}
};

/* credentials (docs/credentials.md) */

static int check_credential_name(JsonDoc *jd, const JsonPath *p, json_object *v) {
        if (!credential_name_is_valid(json_object_get_string(v)))
                return json_doc_fail_got(jd, p, v, "expected a credential name ([a-z][a-z0-9_-]{0,63})");
        return 0;
}

/* char **: credentials.files, names of the caller's secrets a run may receive as files */
static int dispatch_credential_files(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return dispatch_unique_strings(jd, p, v, field, check_credential_name);
}

#define PROFILE_GRANTS_MAX 64

/* credentials.grants: { NAME: grant, ... } */
static int dispatch_grants(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;
        size_t n, i = 0;
        int r;

        if (!json_object_is_type(v, json_type_object))
                return json_doc_fail_got(jd, p, v, "expected an object of grants by name");
        n = (size_t) json_object_object_length(v);
        if (n > PROFILE_GRANTS_MAX)
                return json_doc_fail(jd, p, "expected at most %d grants, got %zu", PROFILE_GRANTS_MAX, n);
        prof->grants = calloc(MAX(n, 1u), sizeof(Grant));
        if (!prof->grants)
                return -ENOMEM;
        json_object_object_foreach(v, key, value) {
                r = grant_dispatch(jd, JSON_KEY(p, key), value, key, true, &prof->grants[i]);
                if (r < 0)
                        return r;
                prof->n_grants = ++i;
        }
        return 0;
}

static const JsonDocField credentials_fields[] = {
        { "files", dispatch_credential_files, offsetof(Profile, credential_files) },
        { "grants", dispatch_grants, 0 },
        {}
};

/* request: what a caller may set per run */

/* uint64_t: request.cpu.min, a CPU share of at least 1% */
static int dispatch_cpu_min(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        unsigned u;
        int r;

        r = json_doc_get_cpu_percent(jd, p, v, PROFILE_CPU_PERCENT_MAX, &u);
        if (r < 0)
                return r;
        if (u < 1)
                return json_doc_fail_got(jd, p, v, "expected at least 1%%");
        *(uint64_t *) field = u;
        return 0;
}

/* request.X: { "min": ... }, the lowest value a caller may ask for, decoded into a uint64_t; the highest is
 * the profile's own value. */
static const JsonDocField request_memory_fields[] = {
        { "min", json_doc_dispatch_size, 0, JSON_DOC_MANDATORY, &memory_min },
        {}
};

static const JsonDocField request_tasks_fields[] = {
        { "min", json_doc_dispatch_uint64, 0, JSON_DOC_MANDATORY, &tasks_min },
        {}
};

static const JsonDocField request_wall_time_fields[] = {
        { "min", json_doc_dispatch_duration, 0, JSON_DOC_MANDATORY, &wall_time_min },
        {}
};

static const JsonDocField request_cpu_fields[] = {
        { "min", dispatch_cpu_min, 0, JSON_DOC_MANDATORY },
        {}
};

static int request_bound(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *table,
                         uint64_t profile_value, const char *profile_key, RequestBound *ret) {
        json_object *v = NULL;
        uint64_t min = 0;
        int r;

        r = json_doc_dispatch(jd, p, o, table, &min);
        if (r < 0)
                return r;
        /* The profile's value 0 is "no limit" only for the CPU quota; the others are never 0. */
        if (profile_value > 0 && min > profile_value) {
                (void) json_doc_get(o, "min", &v);
                return json_doc_fail_got(jd, JSON_KEY(p, "min"), v, "expected at most the profile's own value (%s)",
                                         profile_key);
        }
        *ret = (RequestBound) { .allowed = true, .min = min };
        return 0;
}

/* The request.X dispatchers take the whole Profile. */
static int dispatch_request_memory(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;

        return request_bound(jd, p, v, request_memory_fields, prof->memory_max, "resources.memory",
                             &prof->request.memory);
}

static int dispatch_request_tasks(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;

        return request_bound(jd, p, v, request_tasks_fields, prof->tasks_max, "resources.tasks", &prof->request.tasks);
}

static int dispatch_request_wall_time(JsonDoc *jd, const JsonPath *p, json_object *v, void *field,
                                      const void *arg) {
        Profile *prof = field;

        return request_bound(jd, p, v, request_wall_time_fields, prof->runtime_max, "resources.wall_time",
                             &prof->request.runtime);
}

static int dispatch_request_cpu(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Profile *prof = field;

        return request_bound(jd, p, v, request_cpu_fields, prof->cpu_quota_percent, "resources.cpu",
                             &prof->request.cpu);
}

/* bool: ["none"] */
static int dispatch_request_network(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        if (!l[0])
                return json_doc_fail_got(jd, p, v, "expected [\"none\"]");
        for (size_t i = 0; l[i]; i++)
                if (!streq(l[i], "none"))
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                 "expected \"none\" (the only mode a run may narrow to in version 1)");
        r = json_doc_check_unique(jd, &(const JsonNamedList) { p, l }, 1);
        if (r < 0)
                return r;
        *(bool *) field = true;
        return 0;
}

/* char **: at least one host path */
static int dispatch_dataset_under(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        char ***under = field;
        int r;

        r = dispatch_host_paths(jd, p, v, under, NULL);
        if (r < 0)
                return r;
        if (!(*under)[0])
                return json_doc_fail_got(jd, p, v, "expected at least one path");
        return 0;
}

/* a read-only dataset a run may bind */
static const JsonDocField dataset_fields[] = {
        /* the directories it may lie below */
        { "under", dispatch_dataset_under, offsetof(Profile, request.dataset_under), JSON_DOC_MANDATORY },
        {}
};

/* what a caller may set per run: each one absent is not allowed */
static const JsonDocField request_fields[] = {
        /* { "min": X }: the lowest value a run may ask for; the highest is the profile's, in resources */
        { "memory", dispatch_request_memory, 0 },
        { "tasks", dispatch_request_tasks, 0 },
        { "wall_time", dispatch_request_wall_time, 0 },
        { "cpu", dispatch_request_cpu, 0 },
        /* ["none"]: a run may narrow the network to none */
        { "network", dispatch_request_network, offsetof(Profile, request.network_none) },
        { "dataset", json_doc_dispatch_object, 0, 0, dataset_fields },
        {}
};

/* the document */

static int dispatch_version(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) != PROFILE_FORMAT_VERSION)
                return json_doc_fail_got(jd, p, v, "expected format version %d", PROFILE_FORMAT_VERSION);
        return 0;
}

/* char *: one line of 1 to 200 characters */
static int dispatch_description(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const char *s;
        size_t n = 0;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
                if (*c < 0x20 || *c == 0x7f || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
                        return json_doc_fail_got(jd, p, v, "expected one line without control characters");
                if ((*c & 0xc0) != 0x80) /* not a UTF-8 continuation byte */
                        n++;
        }
        if (n < 1 || n > PROFILE_DESCRIPTION_MAX)
                return json_doc_fail(jd, p, "expected 1 to %d characters, got %zu", PROFILE_DESCRIPTION_MAX, n);
        return json_doc_dispatch_string(jd, p, v, field, NULL);
}

/* The sections take the whole Profile (offset 0). */
static const JsonDocField profile_fields[] = {
        /* first: profile_from_json() checks it before anything else */
        { "version", dispatch_version, 0, JSON_DOC_MANDATORY },
        { "description", dispatch_description, offsetof(Profile, description), JSON_DOC_MANDATORY },
        { "files", dispatch_files, 0 },
        { "process", json_doc_dispatch_object, 0, 0, process_fields },
        { "network", json_doc_dispatch_object, 0, JSON_DOC_MANDATORY, network_fields },
        { "resources", json_doc_dispatch_object, 0, JSON_DOC_MANDATORY, resources_fields },
        /* after resources: aggregate and request are checked against it */
        { "aggregate", json_doc_dispatch_object, 0, 0, aggregate_fields },
        { "lifetime", json_doc_dispatch_object, 0, 0, lifetime_fields },
        { "credentials", json_doc_dispatch_object, 0, 0, credentials_fields },
        { "environment", json_doc_dispatch_object, 0, 0, environment_fields },
        { "export", export_policy_dispatch, offsetof(Profile, export) },
        /* after network, lifetime and credentials: checked against them */
        { "pool", json_doc_dispatch_object, 0, 0, pool_fields },
        { "request", json_doc_dispatch_object, 0, 0, request_fields },
        {}
};

/* The gVisor tier's runs carry runsc beside the command: a ceiling below what runsc needs could start no
 * run (profile.h). The lowest a request may ask for counts too. */
static int check_isolation_resources(JsonDoc *jd, Profile *prof) {
        const JsonPath *res = JSON_KEY(NULL, "resources"), *req = JSON_KEY(NULL, "request");

        if (prof->isolation != ISOLATION_GVISOR)
                return 0;
        if (prof->memory_max < PROFILE_GVISOR_MEMORY_MIN)
                return json_doc_fail(jd, JSON_KEY(res, "memory"), "expected at least 128M with process.isolation "
                                     "\"gvisor\" (runsc's own memory)");
        if (prof->tasks_max < PROFILE_GVISOR_TASKS_MIN)
                return json_doc_fail(jd, JSON_KEY(res, "tasks"), "expected at least %d with process.isolation "
                                     "\"gvisor\" (runsc's own processes and threads)", PROFILE_GVISOR_TASKS_MIN);
        if (prof->request.memory.allowed && prof->request.memory.min < PROFILE_GVISOR_MEMORY_MIN)
                return json_doc_fail(jd, JSON_KEY(JSON_KEY(req, "memory"), "min"),
                                     "expected at least 128M with process.isolation \"gvisor\"");
        if (prof->request.tasks.allowed && prof->request.tasks.min < PROFILE_GVISOR_TASKS_MIN)
                return json_doc_fail(jd, JSON_KEY(JSON_KEY(req, "tasks"), "min"),
                                     "expected at least %d with process.isolation \"gvisor\"", PROFILE_GVISOR_TASKS_MIN);
        return 0;
}

static int profile_from_json(JsonDoc *jd, json_object *root, Profile *prof) {
        int r;

        if (!json_object_is_type(root, json_type_object))
                return json_doc_fail_got(jd, NULL, root, "expected a JSON object");
        /* The version first: a document of another version is reported as that, not as unknown keys. */
        r = json_doc_dispatch_field(jd, NULL, root, &profile_fields[0], prof);
        if (r < 0)
                return r;
        r = json_doc_dispatch(jd, NULL, root, profile_fields, prof);
        if (r < 0)
                return r;
        return check_isolation_resources(jd, prof);
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
        p->environment_allow = strv_new("*");
        p->environment_deny = strv_copy((char **) environment_deny_default);
        if (!p->syscall_allow[0] || !p->environment_allow || !p->environment_deny)
                return -ENOMEM;

        p->workspace = true;
        p->write_execute_memory = true;
        p->disk_max = 1ULL << 30;
        export_policy_init(&p->export);

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
