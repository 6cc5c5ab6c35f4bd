/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy: run-request validation against a profile, and compilation into a property table, the exec
 * helper's command line and the argument-level syscall rules. The profiles are built here in C, shaped
 * like the shipped ones; the last tests load the shipped files from the source tree. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "command.h"
#include "egress-policy.h"
#include "policy.h"
#include "profile-load.h"
#include "profile.h"
#include "unit-test.h"

#define EXEC_PATH "/usr/libexec/sbx/sbx-exec"
#define TENANT "fedcba9876543210fedcba9876543210"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST_OFFLINE "sha256:" HEX64
#define DIGEST_CODING "sha256:c0d1456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* A run of network mode public or allowlist: its id and network namespace, as sbxd sets them */
#define RUN_ID "0123456789abcdef0123456789abcdef"
#define NETNS SBX_NETNS_DIR "/" RUN_ID
#define NETNS_REQ .run_id = (char *) RUN_ID, .netns_path = (char *) NETNS
#define HOST_NETNS_INO UINT64_C(4026531840)
#define NO_NETNS "network: no network namespace was prepared for this run"

#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })
/* what every run on the host's OS gets for its user's name (policy-identity.c) */
#define IDENTITY_BINDS                                                                                              \
        SBX_IDENTITY_DIR "/nsswitch.conf", "/etc/nsswitch.conf", SBX_IDENTITY_DIR "/passwd", "/etc/passwd",         \
                SBX_IDENTITY_DIR "/group", "/etc/group"
#define IDENTITY_BINDS_TEXT                                                                                         \
        " " SBX_IDENTITY_DIR "/nsswitch.conf:/etc/nsswitch.conf:rbind " SBX_IDENTITY_DIR "/passwd:/etc/passwd:rbind " \
        SBX_IDENTITY_DIR "/group:/etc/group:rbind"
#define IDENTITY_HIDDEN "-/etc/passwd-", "-/etc/group-", "-/etc/subuid", "-/etc/subgid"
#define IDENTITY_HIDDEN_TEXT " -/etc/passwd- -/etc/group- -/etc/subuid -/etc/subgid"
#define IDENTITY_ENV "USER=sbx", "LOGNAME=sbx"
/* The helper's Landlock options of every run (policy_landlock_options()): the OS read-only, the run's
 * space and the device nodes writable; then the profile's read_write paths and the caches' directories. */
#define LANDLOCK_OPTS                                                                                               \
        "--landlock=required", "--landlock-ro=/", "--landlock-rw=/home/sbx", "--landlock-rw=/tmp",                  \
                "--landlock-rw=/var/tmp", "--landlock-rw=/dev/shm", "--landlock-rw=/dev/null",                      \
                "--landlock-rw=/dev/zero", "--landlock-rw=/dev/full", "--landlock-rw=/dev/tty",                     \
                "--landlock-rw=/dev/pts", "--landlock-rw=/dev/ptmx"

/* ---- helpers ---- */

static char *xstrdup(const char *s) {
        char *c = strdup(s);

        assert_non_null(c);
        return c;
}

/* A heap copy of a NULL-terminated list (NULL: an empty list), as the parser makes them. */
static char **xstrv_copy(char *const *l) {
        size_t n = strv_length(l);
        char **c = calloc(n + 1, sizeof(char *));

        assert_non_null(c);
        for (size_t i = 0; i < n; i++)
                c[i] = xstrdup(l[i]);
        return c;
}

/* A heap copy of a followed by b. */
static char **strv_concat(char *const *a, char *const *b) {
        size_t n = strv_length(a), m = strv_length(b);
        char **c = calloc(n + m + 1, sizeof(char *));

        assert_non_null(c);
        for (size_t i = 0; i < n; i++)
                c[i] = xstrdup(a[i]);
        for (size_t i = 0; i < m; i++)
                c[n + i] = xstrdup(b[i]);
        return c;
}

static ssize_t strv_index(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (streq(l[i], s))
                        return (ssize_t) i;
        return -1;
}

static bool strv_equal(char *const *a, char *const *b) {
        size_t i;

        for (i = 0; a[i] && b[i]; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return !a[i] && !b[i];
}

static void strv_print(const char *what, char *const *l) {
        print_error("%s:", what);
        for (size_t i = 0; l[i]; i++)
                print_error(" '%s'", l[i]);
        print_error("\n");
}

#define assert_strv_equal(a, b)                                                          \
        do {                                                                             \
                char *const *_a = (a), *const *_b = (b);                                 \
                                                                                         \
                assert_non_null(_a);                                                     \
                if (!strv_equal(_a, _b)) {                                               \
                        strv_print("actual  ", _a);                                      \
                        strv_print("expected", _b);                                      \
                        fail_msg("lists differ: %s", #a);                                \
                }                                                                        \
        } while (0)

/* ---- profiles built by hand, allocated the way the parser allocates them (profile_free() frees) ---- */

static void profile_set_name(Profile *p, const char *name) {
        free(p->name);
        p->name = xstrdup(name);
}

/* Like profiles/offline.json. */
static Profile *profile_offline(void) {
        Profile *p = calloc(1, sizeof(Profile));

        assert_non_null(p);
        p->name = xstrdup("offline");
        p->description = xstrdup("No network; the host's OS read-only; a private writable workspace");
        strcpy(p->digest, DIGEST_OFFLINE);
        p->workspace = true;
        p->syscall_allow = xstrv_copy(ARGV("@system-service"));
        p->syscall_deny = xstrv_copy(NULL);
        p->environment_allow = xstrv_copy(ARGV("*"));
        p->environment_deny = xstrv_copy((char **) environment_deny_default);
        p->namespaces = 0;
        p->write_execute_memory = true;
        p->network = NETWORK_NONE;
        p->memory_max = 2ULL << 30;
        p->swap_max = 0;
        p->cpu_quota_percent = 200;
        p->tasks_max = 512;
        p->runtime_max = 3600 * USEC_PER_SEC;
        p->disk_max = 1ULL << 30;
        p->output_max = 0;
        p->request.memory = (RequestBound) { .allowed = true, .min = 16ULL << 20 };
        p->request.tasks = (RequestBound) { .allowed = true, .min = 4 };
        p->request.runtime = (RequestBound) { .allowed = true, .min = USEC_PER_SEC };
        p->request.cpu = (RequestBound) { .allowed = true, .min = 10 };
        return p;
}

static void profile_add_cache(Profile *p, const char *name, const char *path) {
        ProfileCache *c = realloc(p->caches, (p->n_caches + 1) * sizeof(ProfileCache));

        assert_non_null(c);
        p->caches = c;
        p->caches[p->n_caches++] = (ProfileCache) { .name = xstrdup(name), .path = xstrdup(path) };
}

/* Like profiles/coding.json: allowlist network, caches, an aggregate. */
static Profile *profile_coding(bool network_none) {
        Profile *p = profile_offline();

        profile_set_name(p, "coding");
        strcpy(p->digest, DIGEST_CODING);
        p->network = NETWORK_ALLOWLIST;
        p->destinations = calloc(1, sizeof(NetDestination));
        assert_non_null(p->destinations);
        p->destinations[0].host = xstrdup("pypi.org");
        p->destinations[0].ports = calloc(1, sizeof(PortRange));
        assert_non_null(p->destinations[0].ports);
        p->destinations[0].ports[0] = (PortRange) { 443, 443 };
        p->destinations[0].n_ports = 1;
        p->n_destinations = 1;
        p->memory_max = 4ULL << 30;
        p->tasks_max = 1024;
        p->runtime_max = 7200 * USEC_PER_SEC;
        p->disk_max = 4ULL << 30;
        p->slice_memory_max = 8ULL << 30;
        p->slice_tasks_max = 4096;
        profile_add_cache(p, "pip", ".cache/pip");
        profile_add_cache(p, "npm", ".npm");
        p->request.network_none = network_none;
        return p;
}

/* Like profiles/browser.json: the public internet, no workspace, an output limit, fewer options. */
static Profile *profile_browser(bool network_none) {
        Profile *p = profile_offline();

        profile_set_name(p, "browser");
        memcpy(p->digest + 7, "b0", 2);
        p->hidden = xstrv_copy(ARGV("/srv", "/mnt", "/var/lib"));
        p->workspace = false;
        p->network = NETWORK_PUBLIC;
        p->memory_max = 4ULL << 30;
        p->tasks_max = 1024;
        p->disk_max = 2ULL << 30;
        p->output_max = 64ULL << 20;
        p->slice_memory_max = 8ULL << 30;
        p->request.memory = (RequestBound) { .allowed = true, .min = 64ULL << 20 };
        p->request.tasks = (RequestBound) {};
        p->request.cpu = (RequestBound) {};
        p->request.network_none = network_none;
        return p;
}

/* Like profiles/data.json: one dataset below a list of directories. */
static Profile *profile_data(void) {
        Profile *p = profile_offline();

        profile_set_name(p, "data");
        memcpy(p->digest + 7, "da7a", 4);
        p->memory_max = 8ULL << 30;
        p->tasks_max = 256;
        p->runtime_max = 4 * 3600 * USEC_PER_SEC;
        p->disk_max = 2ULL << 30;
        p->request.dataset_under = xstrv_copy(ARGV("/home", "/srv", "/mnt", "/media", "/var/tmp", "/tmp"));
        return p;
}

/* ---- compilation helpers ---- */

static RunPlan *compile_ok(const Profile *p, const RunRequest *req) {
        RunPlan *plan = NULL;
        char *error = NULL;
        int r;

        assert_int_equal(strlen(p->digest), 71); /* "sha256:" and 64 hex digits, as the parser makes it */

        r = policy_compile(p, req, EXEC_PATH, &plan, &error);
        if (r < 0)
                fail_msg("policy_compile(%s) failed: %d %s", p->name, r, strna(error));
        assert_null(error);
        assert_non_null(plan);
        return plan;
}

static void compile_fails(const Profile *p, const RunRequest *req, int expected_r, const char *expected_message) {
        RunPlan *plan = (RunPlan *) 0x1;
        _cleanup_free_ char *error = NULL;
        int r;

        r = policy_compile(p, req, EXEC_PATH, &plan, &error);
        if (r != expected_r || !streq_ptr(error, expected_message))
                fail_msg("policy_compile(%s) -> %d '%s', expected %d '%s'", p->name, r, strna(error), expected_r,
                         expected_message);
        assert_ptr_equal(plan, (RunPlan *) 0x1);
}

static const Prop *get_prop(const PropTable *t, const char *name);
static const Prop *get(const RunPlan *plan, const char *name) {
        return get_prop(plan->props, name);
}

static const Prop *get_prop(const PropTable *t, const char *name) {
        const Prop *p = prop_table_get(t, name);

        if (!p)
                fail_msg("property %s missing", name);
        return p;
}

static char *render(const PropTable *t) {
        char *text = NULL;

        assert_int_equal(prop_table_render_text(t, &text), 0);
        assert_non_null(text);
        return text;
}

static PropTable *fixed_ok(const Profile *p) {
        PropTable *t = NULL;

        assert_int_equal(policy_compile_fixed(p, &t), 0);
        assert_non_null(t);
        return t;
}

/* The static address lists of the profile's own mode, as the egress compiler makes them. */
static void egress_lists(const Profile *p, char ***ret_allow, char ***ret_deny) {
        assert_int_equal(egress_ip_address_lists(p, p->network, ret_allow, ret_deny), 0);
        assert_non_null(*ret_allow);
        assert_non_null(*ret_deny);
}

/* Fails if an option of the command line starts with the prefix. */
static void assert_no_option(char *const *argv, const char *prefix) {
        for (size_t i = 0; argv[i]; i++)
                if (strneq(argv[i], prefix, strlen(prefix)))
                        fail_msg("unexpected option %s", argv[i]);
}

/* A plan of network mode none: no namespace of its own to join, no network unit. */
static void assert_no_net_unit(const RunPlan *plan) {
        assert_int_equal(plan->network, NETWORK_NONE);
        assert_null(plan->net_props);
        assert_null(plan->net_exec_argv);
        assert_null(plan->net_pre_argv);
        assert_null(plan->net_post_argv);
        assert_null(prop_table_get(plan->props, "NetworkNamespacePath"));
        assert_true(get(plan, "PrivateNetwork")->b);
}

/* Fails unless the text has the line exactly once. */
static void assert_has_line(const char *text, const char *line) {
        size_t l = strlen(line), n = 0;

        for (const char *s = text; *s; ) {
                const char *e = strchrnul(s, '\n');

                if ((size_t) (e - s) == l && strneq(s, line, l))
                        n++;
                s = *e ? e + 1 : e;
        }
        if (n != 1)
                fail_msg("line '%s' found %zu times in:\n%s", line, n, text);
}

/* Every line of the fixed rendering is in the plan's, except BindReadOnlyPaths=, which a run extends (its
 * own cgroup, a dataset): there the fixed value must start the plan's. */
static void assert_fixed_lines_in(const char *plan_text, const char *fixed_text) {
        for (const char *s = fixed_text; *s; ) {
                const char *e = strchrnul(s, '\n');
                _cleanup_free_ char *line = strndup(s, e - s);

                assert_non_null(line);
                if (!strneq(line, "BindReadOnlyPaths=", 18))
                        assert_has_line(plan_text, line);
                else {
                        const char *b = strstr(plan_text, "\nBindReadOnlyPaths=");

                        assert_non_null(b);
                        assert_true(strneq(b + 1, line, strlen(line)));
                }
                s = *e ? e + 1 : e;
        }
}

/* Fails if a line starts with "KEY=". */
static void assert_no_key(const char *text, const char *key) {
        size_t l = strlen(key);

        for (const char *s = text; *s; ) {
                const char *e = strchrnul(s, '\n');

                if (strneq(s, key, l) && s[l] == '=')
                        fail_msg("unexpected %s in:\n%s", key, text);
                s = *e ? e + 1 : e;
        }
}

/* Every key at most once in the text rendering, except SystemCallFilter= which systemd reads as the
 * allow-list followed by the "~" deny-list. */
static void assert_keys_unique(const char *text) {
        const char *keys[128];
        size_t n = 0, n_filter = 0;

        for (const char *s = text; *s; ) {
                const char *e = strchrnul(s, '\n'), *eq = memchr(s, '=', e - s);

                if (!eq)
                        fail_msg("line without '=': %.*s", (int) (e - s), s);
                if ((size_t) (eq - s) == strlen("SystemCallFilter") && strneq(s, "SystemCallFilter", eq - s))
                        n_filter++;
                else {
                        for (size_t i = 0; i < n; i++)
                                if (strlen(keys[i]) == (size_t) (eq - s) && strneq(keys[i], s, eq - s))
                                        fail_msg("%.*s appears twice in:\n%s", (int) (eq - s), s, text);
                        assert_true(n < ELEMENTSOF(keys));
                        keys[n] = strndupa(s, eq - s);
                        n++;
                }
                s = *e ? e + 1 : e;
        }
        assert_true(n_filter <= 2);
}

/* The same, on the table: no property (by definition) twice. */
static void assert_props_unique(const PropTable *t) {
        for (size_t i = 0; i < t->n; i++)
                for (size_t j = i + 1; j < t->n; j++)
                        if (t->props[i].def == t->props[j].def)
                                fail_msg("%s appears twice", t->props[i].def->name);
}

/* ---- profile names ---- */

static void test_profile_name_is_valid(void **state) {
        static const struct {
                const char *name;
                bool ok;
        } table[] = {
                { "offline", true },
                { "a", true },
                { "a1", true },
                { "build_cache", true },
                { "abcdefghijklmnopqrstuvwxyz012345", true },   /* 32 */
                { "abcdefghijklmnopqrstuvwxyz0123456", false }, /* 33 */
                { "", false },
                { "1a", false },
                { "_a", false },
                { "Offline", false },
                { "off-line", false },
                { "off.line", false },
                { "../etc", false },
                { "a b", false },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, profile_name_is_valid(table[i].name) == table[i].ok, "'%s'", table[i].name);
        assert_int_equal(failures, 0);
        assert_false(profile_name_is_valid(NULL));
}

static void test_unit_names(void **state) {
        _cleanup_free_ char *unit = NULL, *slice = NULL, *dropin = NULL, *netns = NULL, *net_unit = NULL;

        assert_int_equal(policy_unit_name("coding", "0123456789abcdef0123456789abcdef", &unit), 0);
        assert_string_equal(unit, "sbx-coding-0123456789abcdef0123456789abcdef.service");
        assert_int_equal(policy_slice_name("coding", &slice), 0);
        assert_string_equal(slice, "sbx-coding.slice");
        assert_int_equal(policy_dropin_dir_name("coding", &dropin), 0);
        assert_string_equal(dropin, "sbx-coding-.service.d");
        /* a run's network namespace and network unit */
        assert_int_equal(policy_netns_path(RUN_ID, &netns), 0);
        assert_string_equal(netns, "/run/sbx/netns/" RUN_ID);
        assert_string_equal(netns, NETNS);
        assert_int_equal(policy_net_unit_name(RUN_ID, &net_unit), 0);
        assert_string_equal(net_unit, "sbx-net@" RUN_ID ".service");
}

/* ---- compilation ---- */

static void test_compile_default(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("make", "-j4") };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
        _cleanup_free_ char *text = NULL;
        char digest[72];

        assert_ptr_equal(plan->profile, p);

        /* booleans that must be on */
        static const char *const on[] = {
                "DynamicUser", "NoNewPrivileges", "RestrictSUIDSGID", "PrivateDevices", "PrivateIPC",
                "PrivateNetwork", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
                "ProtectClock", "ProtectHostname", "RestrictRealtime", "LockPersonality", "SendSIGKILL",
        };
        for (size_t i = 0; i < ELEMENTSOF(on); i++)
                if (!get(plan, on[i])->b)
                        fail_msg("%s is not yes", on[i]);

        assert_string_equal(get(plan, "Type")->s, "exec");
        assert_string_equal(get(plan, "ProtectSystem")->s, "strict");
        assert_string_equal(get(plan, "ProtectHome")->s, "tmpfs");
        assert_string_equal(get(plan, "ProtectProc")->s, "invisible");
        assert_string_equal(get(plan, "KillMode")->s, "control-group");
        assert_string_equal(get(plan, "OOMPolicy")->s, "stop");
        assert_string_equal(get(plan, "NotifyAccess")->s, "main");

        /* no capabilities at all, every namespace type restricted */
        assert_int_equal(get(plan, "CapabilityBoundingSet")->u, 0);
        assert_int_equal(get(plan, "AmbientCapabilities")->u, 0);
        assert_int_equal(get(plan, "RestrictNamespaces")->u, 0);
        assert_int_equal(get(plan, "SystemCallErrorNumber")->i, EPERM);
        /* seccomp(): for the helper to install sbx's own filter (which then denies it to the command) */
        /* landlock_*(): for the helper to apply the command's Landlock ruleset */
        assert_strv_equal(get(plan, "SystemCallFilter")->strv,
                          ARGV("@system-service", "seccomp", "landlock_create_ruleset", "landlock_add_rule",
                               "landlock_restrict_self"));
        /* io_uring always denied: it bypasses the other filters; the keyrings: not namespaced */
        assert_strv_equal(get(plan, "SystemCallFilter~")->strv,
                          ARGV("io_uring_setup", "io_uring_enter", "io_uring_register", "add_key", "keyctl",
                               "request_key"));
        assert_strv_equal(get(plan, "SystemCallArchitectures")->strv, ARGV("native"));
        assert_strv_equal(get(plan, "RestrictAddressFamilies")->strv,
                          ARGV("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"));

        /* resources: the profile's ceiling */
        assert_int_equal(get(plan, "MemoryMax")->u, p->memory_max);
        assert_int_equal(get(plan, "MemorySwapMax")->u, 0);
        assert_int_equal(get(plan, "TasksMax")->u, p->tasks_max);
        assert_int_equal(get(plan, "RuntimeMaxSec")->u, p->runtime_max);
        assert_int_equal(get(plan, "CPUQuota")->u, (uint64_t) p->cpu_quota_percent * 10000);
        assert_int_equal(get(plan, "LimitCORE")->u, 0);
        assert_int_equal(get(plan, "UMask")->u, 0022);
        assert_int_equal(get(plan, "TimeoutStopSec")->u, 5 * USEC_PER_SEC);

        /* a clean environment: exactly these, USER and LOGNAME the name the run's uid has inside */
        assert_strv_equal(get(plan, "Environment")->strv,
                          ARGV("HOME=/home/sbx", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", IDENTITY_ENV));

        /* /run and /sys/fs/cgroup are empty and read-only; HOME, /tmp, /var/tmp and /dev/shm are the run's
         * space (bound per run, test_space) */
        assert_strv_equal(get(plan, "TemporaryFileSystem")->strv,
                          ARGV("/run", "ro,mode=0755,nosuid,nodev,noexec",
                               "/sys/fs/cgroup", "ro,mode=0755,nosuid,nodev,noexec"));
        /* not ProtectControlGroups=: systemd would keep its read-only bind of /sys/fs/cgroup, not the tmpfs */
        assert_null(prop_table_get(plan->props, "ProtectControlGroups"));
        /* only the notify socket comes from the host, and sbx's identity files; no host directory is bound
         * read-write; the host's other files that name its users are hidden */
        assert_strv_equal(get(plan, "BindReadOnlyPaths")->strv,
                          ARGV("/run/systemd/notify", "/run/systemd/notify", IDENTITY_BINDS));
        assert_strv_equal(get(plan, "InaccessiblePaths")->strv, ARGV(IDENTITY_HIDDEN));
        static const char *const absent[] = {
                "BindPaths", "StateDirectory", "IPAddressDeny", "MemoryDenyWriteExecute",
                "ReadWritePaths", "PrivateTmp", "IPAddressAllow", "NetworkNamespacePath", "PIDFile",
        };
        for (size_t i = 0; i < ELEMENTSOF(absent); i++)
                if (prop_table_get(plan->props, absent[i]))
                        fail_msg("%s is set", absent[i]);
        assert_null(plan->pre_argv);
        assert_null(plan->post_argv);
        /* network mode none: no network unit */
        assert_no_net_unit(plan);

        text = render(plan->props);
        assert_has_line(text, "RestrictNamespaces=yes");
        assert_has_line(text, "PrivateNetwork=yes");
        assert_has_line(text, "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK");
        assert_has_line(text, "CPUQuota=200%");
        assert_has_line(text, "RuntimeMaxSec=3600s");
        assert_has_line(text, "SystemCallFilter=~io_uring_setup io_uring_enter io_uring_register add_key keyctl request_key");

        /* the digest names exactly this table */
        assert_int_equal(prop_table_digest(plan->props, digest), 0);
        assert_string_equal(plan->digest, digest);
}

/* Every property at most once: a second assignment would silently win or merge in systemd. Lists sbx
 * extends (BindReadOnlyPaths, InaccessiblePaths, StateDirectory) are merged into one entry. */
static void test_compile_no_duplicates(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline(), *coding = profile_coding(true),
                                         *browser = profile_browser(true), *data = profile_data();
        RunRequest plain = { .argv = ARGV("true"), .workspace = "/home/user/project", .term = "xterm" },
                   cached = { .argv = ARGV("true"), .workspace = "/home/user/project", .network = "none",
                              .cache_owner = TENANT, .term = "xterm" },
                   narrowed = { .argv = ARGV("true"), .network = "none" },
                   dataset = { .argv = ARGV("true"), .workspace = "/home/user/out", .dataset = "/srv/data",
                               .cache_owner = TENANT },
                   egress = { .argv = ARGV("true"), .workspace = "/home/user/project", .cache_owner = TENANT, NETNS_REQ,
                              .host_netns_ino = HOST_NETNS_INO,
                              .host_addresses = ARGV("198.51.100.7/32", "2001:db8::7/128") },
                   public = { .argv = ARGV("true"), NETNS_REQ, .host_netns_ino = HOST_NETNS_INO,
                              .host_addresses = ARGV("198.51.100.7/32", "2001:db8::7/128") };
        struct {
                const Profile *p;
                const RunRequest *req;
        } cases[] = {
                { offline, &plain }, { coding, &cached }, { browser, &narrowed }, { data, &dataset },
                { coding, &egress }, { browser, &public },
        };

        /* the data profile with everything that adds to lists */
        data->read_only = xstrv_copy(ARGV("/opt/tools", "/usr/share/dict"));
        data->read_write = xstrv_copy(ARGV("/var/cache/shared"));
        data->hidden = xstrv_copy(ARGV("/mnt", "/media"));
        profile_add_cache(data, "pip", ".cache/pip");
        profile_add_cache(data, "models", ".cache/models");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(cases[i].p, cases[i].req);
                _cleanup_free_ char *text = render(plan->props);

                assert_props_unique(plan->props);
                assert_keys_unique(text);
                if (plan->net_props) {
                        _cleanup_free_ char *net = render(plan->net_props);

                        assert_props_unique(plan->net_props);
                        assert_keys_unique(net);
                }
        }

        /* and the merged lists hold everything */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(data, &dataset);

                assert_strv_equal(get(plan, "BindReadOnlyPaths")->strv,
                                  ARGV("/run/systemd/notify", "/run/systemd/notify", "/opt/tools", "/opt/tools",
                                       "/usr/share/dict", "/usr/share/dict", IDENTITY_BINDS, "/srv/data",
                                       "/home/sbx/dataset"));
                assert_strv_equal(get(plan, "BindPaths")->strv, ARGV("/home/user/out", "/home/sbx/workspace"));
                assert_strv_equal(get(plan, "StateDirectory")->strv,
                                  ARGV("sbx-cache/" TENANT "/data/pip", "sbx-cache/" TENANT "/data/models"));
        }
}

/* /sys/fs/cgroup is an empty tmpfs in every run; its own cgroup alone comes back, read-only, where the
 * host has it (tools read /proc/self/cgroup, then /sys/fs/cgroup/PATH/memory.max) */
static void test_compile_own_cgroup(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true"), .run_id = (char *) RUN_ID };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
        _cleanup_free_ char *cg = NULL;

        assert_int_equal(policy_cgroup_path("offline", RUN_ID, &cg), 0);
        assert_string_equal(cg, "/sys/fs/cgroup/sbx.slice/sbx-offline.slice/sbx-offline-" RUN_ID ".service");
        assert_strv_equal(get(plan, "BindReadOnlyPaths")->strv,
                          ARGV("/run/systemd/notify", "/run/systemd/notify", IDENTITY_BINDS, cg, cg));
        assert_true(strv_contains(get(plan, "TemporaryFileSystem")->strv, "/sys/fs/cgroup"));
        assert_null(prop_table_get(plan->props, "ProtectControlGroups"));
}

/* One space for HOME, /tmp, /var/tmp and /dev/shm: its unit, the binds, the helper's expectation. */
static void test_space(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true"), .run_id = (char *) RUN_ID },
                   other = { .argv = ARGV("true"), .run_id = (char *) "fedcba9876543210fedcba9876543210" },
                   ws = { .argv = ARGV("make"), .workspace = "/home/user/p", .run_id = (char *) RUN_ID },
                   none = { .argv = ARGV("true") };
        _cleanup_(run_plan_freep) RunPlan *plan = NULL, *plan2 = NULL, *wplan = NULL, *nplan = NULL;
        _cleanup_free_ char *path = NULL, *unit = NULL, *error = NULL;
        RunPlan *bad = (RunPlan *) 0x1;

        assert_int_equal(policy_space_path(RUN_ID, &path), 0);
        assert_string_equal(path, "/run/sbx/space/" RUN_ID);
        assert_int_equal(policy_space_unit_name(RUN_ID, &unit), 0);
        assert_string_equal(unit, "sbx-space@" RUN_ID ".service");

        /* not a page multiple: rounded down, as tmpfs would round up */
        p->disk_max = (1ULL << 30) + 123;
        plan = compile_ok(p, &req);
        assert_int_equal(plan->disk_max, 1ULL << 30);
        assert_int_equal(policy_disk_max(p), 1ULL << 30);
        assert_strv_equal(get(plan, "BindPaths")->strv,
                          ARGV("/run/sbx/space/" RUN_ID "/home", "/home/sbx",
                               "/run/sbx/space/" RUN_ID "/tmp", "/tmp",
                               "/run/sbx/space/" RUN_ID "/var-tmp", "/var/tmp",
                               "/run/sbx/space/" RUN_ID "/shm", "/dev/shm",
                               /* the run's own devpts instance, over the host's */
                               "/run/sbx/space/" RUN_ID "/pts", "/dev/pts"));
        /* none of them is a tmpfs of the unit's own any more (systemd 252 would drop /tmp's for PrivateTmp=) */
        STRV_FOREACH(x, ARGV("/home/sbx", "/tmp", "/var/tmp", "/dev/shm"))
                assert_false(strv_contains(get(plan, "TemporaryFileSystem")->strv, *x));
        assert_true(strv_index(plan->exec_argv, "--expect-disk-max=1073741824") > 0);
        assert_true(strv_index(plan->exec_argv, "--expect-disk-max=1073741824") < strv_index(plan->exec_argv, "--"));

        /* the space unit: a oneshot that stays active while the run needs it */
        assert_non_null(plan->space_props);
        assert_string_equal(prop_table_get(plan->space_props, "Type")->s, "oneshot");
        assert_true(prop_table_get(plan->space_props, "RemainAfterExit")->b);
        assert_null(prop_table_get(plan->space_props, "ProtectSystem")); /* the host's mount namespace */
        assert_null(prop_table_get(plan->space_props, "PrivateTmp"));
        assert_strv_equal(plan->space_exec_argv,
                          ARGV(EXEC_PATH, "--space=create:/run/sbx/space/" RUN_ID, "--space-size=1073741824"));
        assert_strv_equal(plan->space_post_argv, ARGV(EXEC_PATH, "--space=remove:/run/sbx/space/" RUN_ID));

        /* named after the run: outside the digest, which names the policy */
        plan2 = compile_ok(p, &other);
        assert_string_equal(plan->digest, plan2->digest);

        /* the workspace is bound below HOME, on top of the space */
        wplan = compile_ok(p, &ws);
        assert_strv_equal(get(wplan, "BindPaths")->strv,
                          ARGV("/home/user/p", "/home/sbx/workspace",
                               "/run/sbx/space/" RUN_ID "/home", "/home/sbx",
                               "/run/sbx/space/" RUN_ID "/tmp", "/tmp",
                               "/run/sbx/space/" RUN_ID "/var-tmp", "/var/tmp",
                               "/run/sbx/space/" RUN_ID "/shm", "/dev/shm",
                               "/run/sbx/space/" RUN_ID "/pts", "/dev/pts"));

        /* no run (a plan to show): no space, and the helper would refuse the run */
        nplan = compile_ok(p, &none);
        assert_null(nplan->space_props);
        assert_null(prop_table_get(nplan->props, "BindPaths"));
        assert_true(strv_index(nplan->exec_argv, "--expect-disk-max=1073741824") > 0);

        /* less than a page */
        p->disk_max = 100;
        assert_int_equal(policy_compile(p, &req, EXEC_PATH, &bad, &error), -EINVAL);
        assert_string_equal(error, "disk: 100 bytes is less than one page");
        assert_ptr_equal(bad, (RunPlan *) 0x1);
}

static void test_compile_workspace(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline(), *browser = profile_browser(false);
        RunRequest req = { .argv = ARGV("make"), .workspace = "/home/user/project", .workspace_uid = 1000,
                           .workspace_gid = 100 };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
        ssize_t ws, dd;

        assert_strv_equal(get(plan, "BindPaths")->strv, ARGV("/home/user/project", "/home/sbx/workspace"));
        ws = strv_index(plan->exec_argv, "--workspace=bound");
        dd = strv_index(plan->exec_argv, "--");
        assert_true(ws > 0);
        assert_true(dd == ws + 1);
        assert_false(strv_contains(plan->exec_argv, "--workspace=private"));

        /* the privileged hand-over of the directory before and after the run */
        assert_strv_equal(plan->pre_argv,
                          ARGV(EXEC_PATH, "--handover=in", "--owner=1000:100", "--", "/home/user/project"));
        assert_strv_equal(plan->post_argv,
                          ARGV(EXEC_PATH, "--handover=out", "--owner=1000:100", "--", "/home/user/project"));

        /* a profile without a workspace refuses one */
        compile_fails(browser, &req, -EPERM, "workspace: profile 'browser' does not let a run bind a workspace");
}

/* The kernel rounds memory.max down to pages: sbx asks for, and expects, the rounded value. */
static void test_memory_page_rounding(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true"), .memory_max = (64ULL << 20) + 1000 };
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);
        uint64_t want = ((64ULL << 20) + 1000) / page * page;
        char opt[64];

        plan = compile_ok(p, &req);
        assert_int_equal(get(plan, "MemoryMax")->u, want);
        snprintf(opt, sizeof(opt), "--expect-memory-max=%" PRIu64, want);
        assert_true(strv_contains(plan->exec_argv, opt));
}

/* What sbxd checked (device and inode) travels to the helper, which compares it with what got bound. */
static void test_compile_expect_dirs(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_data();
        RunRequest req = { .argv = ARGV("make"), .workspace = "/srv/ws", .workspace_uid = 1000, .workspace_gid = 100,
                           .workspace_dev = 2049, .workspace_ino = 77, .workspace_mode = 02755, .dataset = "/srv/ds",
                           .dataset_dev = 2050, .dataset_ino = 88 };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
        ssize_t a, b, dd;

        a = strv_index(plan->exec_argv, "--expect-dir=/home/sbx/workspace:2049:77");
        b = strv_index(plan->exec_argv, "--expect-dir=/home/sbx/dataset:2050:88");
        dd = strv_index(plan->exec_argv, "--");
        assert_true(a > 0 && b > 0 && a < dd && b < dd);
        /* and its mode: the hand-over closes the directory to others for the run and gives this one back */
        assert_strv_equal(plan->pre_argv, ARGV(EXEC_PATH, "--handover=in", "--owner=1000:100:2049:77",
                                               "--workspace-mode=2755", "--", "/srv/ws"));
        assert_strv_equal(plan->post_argv, ARGV(EXEC_PATH, "--handover=out", "--owner=1000:100:2049:77",
                                                "--workspace-mode=2755", "--", "/srv/ws"));
}

static void test_compile_term(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("vi"), .term = "xterm-256color" };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

        assert_strv_equal(get(plan, "Environment")->strv,
                          ARGV("HOME=/home/sbx", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", IDENTITY_ENV,
                               "TERM=xterm-256color"));
}

static void test_credentials(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest none = { .argv = ARGV("true") };
        RunRequest stored = { .argv = ARGV("true"), .credentials = ARGV("tok") };
        RunRequest both = { .argv = ARGV("true"), .credentials = ARGV("tok"), .credential_fd_names = ARGV("pypi") };
        RunRequest other = { .argv = ARGV("true"), .credentials = ARGV("gh") };
        RunRequest twice = { .argv = ARGV("true"), .credentials = ARGV("tok"), .credential_fd_names = ARGV("tok") };
        RunRequest bad = { .argv = ARGV("true"), .credential_fd_names = ARGV("../x") };
        RunRequest many = { .argv = ARGV("true"),
                            .credentials = ARGV("tok", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10",
                                                "a11", "a12", "a13", "a14", "a15", "a16") };
        RunPlan *plan;
        char *text;

        p->credential_files = xstrv_copy(ARGV("tok", "pypi"));
        assert_false(run_request_has_credentials(&none));
        assert_true(run_request_has_credentials(&both));
        /* credentials never become unit properties of the table (sbxd adds LoadCredentialEncrypted=) */
        plan = compile_ok(p, &both);
        text = render(plan->props);
        assert_null(strstr(text, "Credential"));
        assert_null(strstr(text, "tok"));
        free(text);
        run_plan_free(plan);
        plan = compile_ok(p, &stored);
        run_plan_free(plan);
        compile_fails(p, &other, -EPERM,
                      "credentials: profile 'offline' does not let a run receive credential 'gh' (credentials.files)");
        compile_fails(p, &twice, -EINVAL, "credentials: 'tok' is given twice");
        compile_fails(p, &bad, -EINVAL, "credentials: '../x' is not a credential name ([a-z][a-z0-9_-]{0,63})");
        compile_fails(p, &many, -E2BIG, "credentials: 17 given, at most 16 allowed");
}

static void test_broker_grants(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        _cleanup_(profile_freep) Profile *q = profile_offline();
        RunRequest req = { .argv = ARGV("true"), .term = "xterm" };
        _cleanup_(run_plan_freep) RunPlan *with = NULL, *without = NULL;
        const Prop *binds;

        p->grants = calloc(1, sizeof(Grant));
        assert_non_null(p->grants);
        p->n_grants = 1;
        p->grants[0] = (Grant) { .name = xstrdup("repo-read"), .credential = xstrdup("gh"),
                                 .methods = 1u << GRANT_METHOD_GET, .header = xstrdup("Authorization"),
                                 .value_prefix = xstrdup("Bearer "), .max_body = 1 << 20 };
        assert_int_equal(grant_url_prefix_parse("https://git.example/api/", &p->grants[0].url_prefix, NULL), 0);
        with = compile_ok(p, &req);
        without = compile_ok(q, &req);
        /* the broker's socket, optional ("-": the broker not listening is a run without one), and its path */
        assert_strv_equal(get(with, "Environment")->strv,
                          ARGV("HOME=/home/sbx", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", IDENTITY_ENV,
                               "TERM=xterm", "SBX_BROKER=/run/sbx/broker/socket"));
        binds = get(with, "BindReadOnlyPaths");
        assert_true(strv_index(binds->strv, "-/run/sbx/broker") >= 0);
        assert_int_equal(strv_index(binds->strv, "-/run/sbx/broker") % 2, 0);
        assert_string_equal(binds->strv[strv_index(binds->strv, "-/run/sbx/broker") + 1], "/run/sbx/broker");
        assert_true(strv_index(get(without, "BindReadOnlyPaths")->strv, "-/run/sbx/broker") < 0);
        assert_true(strv_index(get(without, "Environment")->strv, "SBX_BROKER=/run/sbx/broker/socket") < 0);
        /* a pooled unit never has grants (the parser refuses a pool there) */
        req.pool = true;
        req.argv = NULL;
        req.term = NULL;
        compile_fails(p, &req, -EINVAL, NULL);
}

static void test_exec_argv(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        /* The command never is part of the helper's command line (a unit property): it comes on the
         * unit's stdin. */
        char *cmd[] = { "sh", "-c", "echo \"$1\"", "--", "", "--expect-network=public", "two words", NULL };
        RunRequest req = { .argv = cmd, .env = ARGV("CI=1") };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

        assert_strv_equal(plan->exec_argv,
                          ARGV(EXEC_PATH, "--expect-memory-max=2147483648", "--expect-swap-max=0",
                               "--expect-tasks-max=512", "--expect-network=none",
                               "--expect-profile-digest=" DIGEST_OFFLINE, "--expect-disk-max=1073741824", "--expect-cpu-quota=200", "--expect-egress",
                               LANDLOCK_OPTS, "--workspace=private", "--"));
}

/* A profile with an output limit and swap; a request that tightens. */
static void test_exec_argv_public(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_browser(true);
        RunRequest req = { .argv = ARGV("curl", "https://example.org/"), .memory_max = 1ULL << 30, NETNS_REQ },
                   host = { .argv = ARGV("curl", "https://example.org/"), .memory_max = 1ULL << 30, NETNS_REQ,
                            .host_netns_ino = HOST_NETNS_INO,
                            .host_addresses = ARGV("198.51.100.7/32", "2001:db8::7/128") };
        _cleanup_(run_plan_freep) RunPlan *plan = NULL, *hplan = NULL;
        _cleanup_free_ char *digest = NULL;

        p->swap_max = 256ULL << 20;
        plan = compile_ok(p, &req);
        assert_int_equal(asprintf(&digest, "--expect-profile-digest=%s", p->digest), (int) strlen(p->digest) + 24);
        assert_strv_equal(plan->exec_argv,
                          ARGV(EXEC_PATH, "--expect-memory-max=1073741824", "--expect-swap-max=268435456",
                               "--expect-tasks-max=1024", "--expect-network=egress", digest,
                               "--expect-disk-max=2147483648", "--output-max=67108864", "--expect-cpu-quota=200", "--expect-egress",
                               LANDLOCK_OPTS, "--workspace=private", "--"));

        /* the host's namespace and addresses (sbxd's): the helper checks it is not in the one, and that
         * the others are denied */
        hplan = compile_ok(p, &host);
        assert_strv_equal(hplan->exec_argv,
                          ARGV(EXEC_PATH, "--expect-memory-max=1073741824", "--expect-swap-max=268435456",
                               "--expect-tasks-max=1024", "--expect-network=egress", digest,
                               "--expect-disk-max=2147483648", "--output-max=67108864", "--expect-cpu-quota=200", "--expect-netns-not=4026531840",
                               "--expect-egress", "--expect-denied=198.51.100.7", "--expect-denied=2001:db8::7",
                               LANDLOCK_OPTS, "--workspace=private", "--"));

        /* "cut" instead of ending the run */
        p->output_action = OUTPUT_ACTION_CUT;
        run_plan_free(plan);
        plan = compile_ok(p, &req);
        assert_true(strv_contains(plan->exec_argv, "--output-max=67108864:cut"));
}

static void test_run_plan_add_exec_option(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("sh", "-c", "x", "--", "y") };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req), *bare = NULL;
        size_t n = strv_length(plan->exec_argv);

        assert_int_equal(run_plan_add_exec_option(plan, "--seccomp-filter=00ff"), 0);
        assert_int_equal(run_plan_add_exec_option(plan, "--second"), 0);
        assert_int_equal(strv_length(plan->exec_argv), n + 2);
        assert_strv_equal(plan->exec_argv,
                          ARGV(EXEC_PATH, "--expect-memory-max=2147483648", "--expect-swap-max=0",
                               "--expect-tasks-max=512", "--expect-network=none",
                               "--expect-profile-digest=" DIGEST_OFFLINE, "--expect-disk-max=1073741824", "--expect-cpu-quota=200", "--expect-egress",
                               LANDLOCK_OPTS, "--workspace=private", "--seccomp-filter=00ff", "--second", "--"));

        /* a command line without the separator is refused, and left alone */
        bare = calloc(1, sizeof(RunPlan));
        assert_non_null(bare);
        bare->exec_argv = xstrv_copy(ARGV(EXEC_PATH, "--workspace=private", "true"));
        assert_int_equal(run_plan_add_exec_option(bare, "--x"), -EINVAL);
        assert_strv_equal(bare->exec_argv, ARGV(EXEC_PATH, "--workspace=private", "true"));
}

/* A request may tighten the profile's limits; they then show in the table and in the helper's
 * expectations. */
static void test_compile_tighten(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true"), .memory_max = 512ULL << 20, .tasks_max = 16,
                           .runtime_max = 90 * USEC_PER_SEC, .cpu_quota_percent = 50 };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
        _cleanup_free_ char *text = NULL;

        assert_int_equal(get(plan, "MemoryMax")->u, 512ULL << 20);
        assert_int_equal(get(plan, "TasksMax")->u, 16);
        assert_int_equal(get(plan, "RuntimeMaxSec")->u, 90 * USEC_PER_SEC);
        assert_int_equal(get(plan, "CPUQuota")->u, 500000);
        assert_true(strv_contains(plan->exec_argv, "--expect-memory-max=536870912"));
        assert_true(strv_contains(plan->exec_argv, "--expect-tasks-max=16"));

        text = render(plan->props);
        assert_has_line(text, "MemoryMax=536870912");
        assert_has_line(text, "TasksMax=16");
        assert_has_line(text, "RuntimeMaxSec=90s");
        assert_has_line(text, "CPUQuota=50%");
}

/* A profile without a CPU quota gets none, unless the run asks for one. */
static void test_compile_no_cpu_quota(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true") }, quota = { .argv = ARGV("true"), .cpu_quota_percent = 800 };

        p->cpu_quota_percent = 0;
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

                assert_null(prop_table_get(plan->props, "CPUQuota"));
        }
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &quota);

                assert_int_equal(get(plan, "CPUQuota")->u, 8000000);
        }
}

/* The ceiling itself and the smallest accepted values. */
static void test_compile_limits_at_edges(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline(), *lowest = profile_offline();
        static const struct {
                bool lowest;
                uint64_t memory, tasks;
                usec_t runtime;
                unsigned cpu;
        } table[] = {
                { false, 2ULL << 30, 512, 3600 * USEC_PER_SEC, 200 },
                { false, 16ULL << 20, 4, USEC_PER_SEC, 10 },
                /* a profile whose minimums are 0: what the compiler itself accepts at least */
                { true, 4ULL << 20, 2, 1, 1 },
        };

        lowest->request.memory.min = lowest->request.tasks.min = lowest->request.runtime.min = 0;
        lowest->request.cpu.min = 0;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                RunRequest req = { .argv = ARGV("true"), .memory_max = table[i].memory, .tasks_max = table[i].tasks,
                                   .runtime_max = table[i].runtime, .cpu_quota_percent = table[i].cpu };
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(table[i].lowest ? lowest : p, &req);

                assert_int_equal(get(plan, "MemoryMax")->u, table[i].memory);
                assert_int_equal(get(plan, "TasksMax")->u, table[i].tasks);
                assert_int_equal(get(plan, "RuntimeMaxSec")->u, table[i].runtime);
                assert_int_equal(get(plan, "CPUQuota")->u, (uint64_t) table[i].cpu * 10000);
        }
}

static void test_digest(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline(), *browser = profile_browser(true);
        RunRequest a = { .argv = ARGV("true") }, b = { .argv = ARGV("other", "cmd") },
                   ws = { .argv = ARGV("true"), .workspace = "/home/user/p" },
                   mem = { .argv = ARGV("true"), .memory_max = 1ULL << 30 },
                   none = { .argv = ARGV("true"), .network = "none" },
                   pub = { .argv = ARGV("true"), NETNS_REQ },
                   other_run = { .argv = ARGV("true"), .run_id = "fedcba9876543210fedcba9876543210",
                                 .netns_path = SBX_NETNS_DIR "/fedcba9876543210fedcba9876543210" };
        _cleanup_(run_plan_freep) RunPlan *pa = compile_ok(p, &a), *pb = compile_ok(p, &b), *pws = compile_ok(p, &ws),
                                          *pmem = compile_ok(p, &mem), *ppub = compile_ok(browser, &pub),
                                          *pnone = compile_ok(browser, &none), *pother = compile_ok(browser, &other_run);

        assert_int_equal(strlen(pa->digest), 71);
        assert_memory_equal(pa->digest, "sha256:", 7);
        /* The command is not part of the policy. */
        assert_string_equal(pa->digest, pb->digest);
        assert_string_not_equal(pa->digest, pws->digest);
        assert_string_not_equal(pa->digest, pmem->digest);
        assert_string_not_equal(pws->digest, pmem->digest);
        assert_string_not_equal(ppub->digest, pnone->digest);
        assert_string_not_equal(pa->digest, ppub->digest);
        /* the run's network namespace is part of its properties */
        assert_string_not_equal(ppub->digest, pother->digest);
}

/* ---- network ---- */

/* An allowlist runs in a network namespace of its own (sbxd's), where the egress programs judge every
 * destination; systemd's address filter holds the static part of the list. */
static void test_network_allowlist(void **state) {
        _cleanup_(profile_freep) Profile *with_none = profile_coding(true), *without = profile_coding(false);
        RunRequest req = { .argv = ARGV("true"), NETNS_REQ },
                   allowlist = { .argv = ARGV("true"), .network = "allowlist", NETNS_REQ },
                   none = { .argv = ARGV("true"), .network = "none", NETNS_REQ },
                   pub = { .argv = ARGV("true"), .network = "public", NETNS_REQ };
        _cleanup_strv_free_ char **allow = NULL, **deny = NULL;
        _cleanup_free_ char *e = NULL;

        egress_lists(without, &allow, &deny);
        /* a destination with a host name: every always-denied range, and the own loopback allowed */
        assert_strv_equal(allow, ARGV("127.0.0.0/8", "::1/128"));
        assert_true(strv_contains(deny, "10.0.0.0/8"));
        assert_false(strv_contains(deny, "0.0.0.0/0"));

        const Profile *profiles[] = { with_none, without };
        const RunRequest *reqs[] = { &req, &allowlist };
        for (size_t i = 0; i < ELEMENTSOF(profiles); i++)
                for (size_t k = 0; k < ELEMENTSOF(reqs); k++) {
                        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(profiles[i], reqs[k]);
                        _cleanup_free_ char *text = render(plan->props);

                        assert_int_equal(plan->network, NETWORK_ALLOWLIST);
                        assert_string_equal(get(plan, "NetworkNamespacePath")->s, NETNS);
                        assert_has_line(text, "NetworkNamespacePath=" NETNS);
                        assert_null(prop_table_get(plan->props, "PrivateNetwork"));
                        assert_no_key(text, "PrivateNetwork");
                        assert_strv_equal(get(plan, "IPAddressDeny")->strv, deny);
                        assert_strv_equal(get(plan, "IPAddressAllow")->strv, allow);
                        assert_has_line(text, "IPAddressAllow=127.0.0.0/8 ::1/128");
                        assert_strv_equal(get(plan, "RestrictAddressFamilies")->strv,
                                          ARGV("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"));
                        assert_true(strv_contains(plan->exec_argv, "--expect-network=egress"));
                        assert_false(strv_contains(plan->exec_argv, "--expect-network=none"));
                        assert_true(strv_contains(plan->exec_argv, "--expect-egress"));
                        /* no host namespace given: nothing to compare with */
                        assert_no_option(plan->exec_argv, "--expect-netns-not");
                        assert_no_option(plan->exec_argv, "--expect-denied");
                        assert_non_null(plan->net_props);
                        assert_non_null(plan->net_exec_argv);
                        assert_non_null(plan->net_pre_argv);
                        assert_non_null(plan->net_post_argv);
                }
        /* nothing left to refuse in validation */
        assert_int_equal(run_request_validate(without, &req, &e), 0);
        assert_null(e);
        assert_int_equal(run_request_validate(with_none, &req, NULL), 0);

        /* narrowing: only to none, only if the profile says so */
        compile_fails(without, &none, -EPERM, "network: profile 'coding' does not let a run choose 'none'");
        compile_fails(with_none, &pub, -EPERM, "network: profile 'coding' does not let a run choose 'public'");
}

/* A run narrowed to none is offline whatever else the request carries: PrivateNetwork=yes per run, no
 * namespace to join, no network unit, none of the host's addresses, the fixed address lists unchanged. */
static void test_network_narrowed_none(void **state) {
        _cleanup_(profile_freep) Profile *coding = profile_coding(true), *browser = profile_browser(true);
        RunRequest none = { .argv = ARGV("true"), .network = "none", NETNS_REQ, .host_netns_ino = HOST_NETNS_INO,
                            .host_addresses = ARGV("198.51.100.7/32", "2001:db8::7/128") },
                   mode = { .argv = ARGV("true") };
        const Profile *profiles[] = { coding, browser };

        assert_int_equal(policy_run_network(coding, &none), NETWORK_NONE);
        assert_int_equal(policy_run_network(coding, &mode), NETWORK_ALLOWLIST);
        assert_int_equal(policy_run_network(browser, &none), NETWORK_NONE);
        assert_int_equal(policy_run_network(browser, &mode), NETWORK_PUBLIC);

        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                _cleanup_(prop_table_freep) PropTable *fixed = fixed_ok(profiles[i]);
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(profiles[i], &none);
                _cleanup_free_ char *text = render(plan->props);
                _cleanup_strv_free_ char **allow = NULL, **deny = NULL;

                /* per run: the fixed part has no PrivateNetwork for these modes */
                assert_null(prop_table_get(fixed, "PrivateNetwork"));
                assert_no_net_unit(plan);
                assert_has_line(text, "PrivateNetwork=yes");
                assert_no_key(text, "NetworkNamespacePath");
                /* the drop-in's lists, without the host's addresses */
                egress_lists(profiles[i], &allow, &deny);
                assert_strv_equal(get(plan, "IPAddressDeny")->strv, deny);
                assert_strv_equal(get(plan, "IPAddressAllow")->strv, allow);
                assert_true(strv_contains(plan->exec_argv, "--expect-network=none"));
                assert_true(strv_contains(plan->exec_argv, "--expect-egress"));
                assert_no_option(plan->exec_argv, "--expect-netns-not");
                assert_no_option(plan->exec_argv, "--expect-denied");
        }
}

/* A sandbox: the same unit as a run's, with no command; the helper serves (--serve, nothing after
 * "--"). A sandbox with a command, or a run without one, is refused. */
/* The warm pool: a pooled unit's plan, and which runs it can serve. */
static void pool_match(const RunPlan *member, const RunPlan *run, int expected, const char *why) {
        _cleanup_free_ char *w = NULL;

        assert_int_equal(policy_pool_match(member, run, &w), expected);
        if (!streq_ptr(w, why))
                fail_msg("policy_pool_match: '%s', expected '%s'", strna(w), strna(why));
}

static void test_pool_plan(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline(), *edited = profile_offline();
        RunRequest pool = { .pool = true }, run = { .argv = ARGV("true", "x") },
                   lower = { .argv = ARGV("true"), .memory_max = 512ULL << 20, .tasks_max = 16, .cpu_quota_percent = 50 },
                   wall = { .argv = ARGV("true"), .runtime_max = 90 * USEC_PER_SEC },
                   ws = { .argv = ARGV("true"), .workspace = (char *) "/srv/ws" },
                   term = { .argv = ARGV("true"), .term = (char *) "xterm" },
                   both = { .pool = true, .sandbox = true };
        _cleanup_(run_plan_freep) RunPlan *m = compile_ok(p, &pool), *r = compile_ok(p, &run), *l = compile_ok(p, &lower),
                                          *w = compile_ok(p, &wall), *b = compile_ok(p, &ws), *t = compile_ok(p, &term),
                                          *e = NULL;
        _cleanup_free_ char *error = NULL;
        size_t n = strv_length(m->exec_argv);
        PoolLimits lim;
        RunPlan *bad = NULL;

        /* the helper waits for its command; the unit says READY=1 when it has it */
        assert_string_equal(m->exec_argv[n - 1], "--");
        assert_string_equal(m->exec_argv[n - 2], "--pool");
        assert_string_equal(get(m, "Type")->s, "notify");
        assert_int_equal(get(m, "TimeoutStartSec")->u, POLICY_POOL_WAIT_MAX_USEC);
        assert_string_equal(get(r, "Type")->s, "exec");
        assert_null(prop_table_get(r->props, "TimeoutStartSec"));
        assert_false(strv_contains(r->exec_argv, "--pool"));

        /* the same profile: any command; lower ceilings are applied at the claim */
        pool_match(m, r, 1, NULL);
        pool_match(m, l, 1, NULL);
        assert_int_equal(policy_pool_limits(l, &lim), 0);
        assert_int_equal(lim.memory_max, 512ULL << 20);
        assert_int_equal(lim.tasks_max, 16);
        assert_int_equal(lim.cpu_quota_per_sec_usec, 500000);
        /* what a claim cannot change: a start of its own */
        pool_match(m, w, 0, "unit property 'RuntimeMaxSec' differs");
        pool_match(m, b, 0, "the run binds a workspace");
        pool_match(m, t, 0, "unit property 'Environment' differs");
        /* a helper option of the run the pooled helper does not have */
        assert_int_equal(run_plan_add_exec_option(r, "--seccomp-filter=00"), 0);
        pool_match(m, r, 0, "helper option '--seccomp-filter' differs");
        assert_int_equal(run_plan_add_exec_option(m, "--seccomp-filter=00"), 0);
        pool_match(m, r, 1, NULL);
        assert_int_equal(run_plan_add_exec_option(m, "--output-max=5"), 0);
        pool_match(m, r, 0, "helper option '--output-max' differs");
        /* the profile file changed since the pooled unit started */
        memcpy(edited->digest + 7, "ed17", 4);
        e = compile_ok(edited, &run);
        pool_match(m, e, 0, "the profile changed since the pooled unit started");

        /* the run's own cgroup is bound (named after it), and left out of the policy digest */
        {
                RunRequest r1 = { .argv = ARGV("true"), .run_id = (char *) "0123456789abcdef0123456789abcdef" },
                           r2 = { .argv = ARGV("true"), .run_id = (char *) "fedcba9876543210fedcba9876543210" };
                _cleanup_(run_plan_freep) RunPlan *p1 = compile_ok(p, &r1), *p2 = compile_ok(p, &r2);
                _cleanup_free_ char *t1 = render(p1->props), *t2 = render(p2->props);

                assert_non_null(strstr(t1, "/sys/fs/cgroup/sbx.slice/sbx-offline.slice/"
                                           "sbx-offline-0123456789abcdef0123456789abcdef.service"));
                assert_string_not_equal(t1, t2);
                assert_string_equal(p1->digest, p2->digest);
                assert_string_equal(p1->digest, r->digest);
        }

        /* a pooled unit has no command, and is not a sandbox */
        pool.argv = ARGV("true");
        assert_int_equal(policy_compile(p, &pool, EXEC_PATH, &bad, &error), -EINVAL);
        assert_string_equal(error, "command: a sandbox is created without one");
        assert_int_equal(policy_compile(p, &both, EXEC_PATH, &bad, NULL), -EINVAL);
        assert_null(bad);
}

/* A testbed build on a host without some cgroup controllers (sbxd sets the request's unenforced_ceilings,
 * src/shared/ceilings.h): the helper is told which of the run's ceilings may have no file, the record's
 * limits say which went unenforced, and a pooled unit still serves the profile's runs. */
static void test_compile_unenforced(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest plain = { .argv = ARGV("true") }, all = { .argv = ARGV("true"), .unenforced_ceilings = _CEILINGS_ALL },
                   tasks = { .argv = ARGV("true"), .unenforced_ceilings = CEILING_TASKS },
                   pool = { .pool = true, .unenforced_ceilings = _CEILINGS_ALL };
        _cleanup_(run_plan_freep) RunPlan *a = compile_ok(p, &plain), *b = compile_ok(p, &all), *c = compile_ok(p, &tasks),
                                          *m = compile_ok(p, &pool), *d = NULL;

        assert_int_equal(a->limits.unenforced, 0);
        STRV_FOREACH(o, a->exec_argv)
                assert_false(strneq(*o, "--unenforced-ceilings", 21));
        assert_int_equal(b->limits.unenforced, _CEILINGS_ALL);
        assert_true(strv_index(b->exec_argv, "--unenforced-ceilings=memory,tasks,cpu") > 0);
        assert_true(strv_index(b->exec_argv, "--unenforced-ceilings=memory,tasks,cpu") < strv_index(b->exec_argv, "--"));
        assert_int_equal(c->limits.unenforced, CEILING_TASKS);
        assert_true(strv_contains(c->exec_argv, "--unenforced-ceilings=tasks"));
        /* the ceilings are what they would be: only their enforcement is said to be missing */
        assert_int_equal(get(b, "MemoryMax")->u, get(a, "MemoryMax")->u);
        assert_true(strv_contains(b->exec_argv, "--expect-memory-max=2147483648"));
        /* no quota, nothing to leave unenforced of the CPU */
        p->cpu_quota_percent = 0;
        d = compile_ok(p, &all);
        assert_int_equal(d->limits.unenforced, CEILING_MEMORY | CEILING_TASKS);
        assert_true(strv_contains(d->exec_argv, "--unenforced-ceilings=memory,tasks"));
        /* a pooled unit: what the claim sets, like the ceilings themselves */
        pool_match(m, b, 1, NULL);
        pool_match(m, a, 1, NULL);
}

static void test_sandbox_plan(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest sb = { .sandbox = true };
        RunRequest run = { .argv = ARGV("true") };
        _cleanup_(run_plan_freep) RunPlan *splan = compile_ok(p, &sb), *rplan = compile_ok(p, &run);
        size_t n = strv_length(splan->exec_argv);
        char *error = NULL;
        RunPlan *bad = NULL;

        assert_true(n >= 3);
        assert_string_equal(splan->exec_argv[n - 1], "--");
        assert_string_equal(splan->exec_argv[n - 2], "--serve");
        assert_false(strv_contains(rplan->exec_argv, "--serve"));
        /* the unit is the run's: the same properties */
        _cleanup_free_ char *a = render(splan->props), *b = render(rplan->props);
        assert_string_equal(a, b);
        /* --seccomp-filter= and the like still go before "--" */
        assert_int_equal(run_plan_add_exec_option(splan, "--seccomp-filter=00"), 0);
        n = strv_length(splan->exec_argv);
        assert_string_equal(splan->exec_argv[n - 1], "--");
        assert_string_equal(splan->exec_argv[n - 2], "--seccomp-filter=00");
        assert_string_equal(splan->exec_argv[n - 3], "--serve");

        sb.argv = ARGV("true");
        assert_int_equal(policy_compile(p, &sb, EXEC_PATH, &bad, &error), -EINVAL);
        assert_string_equal(error, "command: a sandbox is created without one");
        free(error);
        error = NULL;
        run.argv = NULL;
        assert_int_equal(policy_compile(p, &run, EXEC_PATH, &bad, &error), -EINVAL);
        assert_string_equal(error, "command: no command given");
        free(error);
        assert_null(bad);
}

/* The gVisor tier: runsc's namespaces and syscalls in this profile's units only, no Landlock, the helper
 * told the tier, runsc's network mode and the profile's syscall lists; a sandbox is refused. */
static void test_gvisor_plan(void **state) {
        _cleanup_(profile_freep) Profile *kernel = profile_offline(), *gv = profile_offline();
        RunRequest run = { .argv = ARGV("true") }, sb = { .sandbox = true },
                   tty = { .argv = ARGV("bash", "-i"), .tty = { .on = true, .rows = 24, .cols = 80 } };
        _cleanup_(run_plan_freep) RunPlan *kplan = NULL, *gplan = NULL, *tplan = NULL;
        const Prop *ns, *filter;

        profile_set_name(gv, "untrusted");
        gv->isolation = ISOLATION_GVISOR;
        kplan = compile_ok(kernel, &run);
        gplan = compile_ok(gv, &run);

        ns = get(gplan, "RestrictNamespaces");
        assert_int_equal(ns->u, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET);
        assert_int_equal(get(kplan, "RestrictNamespaces")->u, 0);
        filter = get(gplan, "SystemCallFilter");
        STRV_FOREACH(n, ARGV("mount", "umount2", "pivot_root", "chroot", "ptrace"))
                if (!strv_contains(filter->strv, *n))
                        fail_msg("%s missing from the gVisor tier's SystemCallFilter=", *n);
        STRV_FOREACH(n, ARGV("mount", "umount2", "pivot_root", "chroot", "ptrace"))
                if (strv_contains(get(kplan, "SystemCallFilter")->strv, *n))
                        fail_msg("%s in the kernel tier's SystemCallFilter=", *n);
        /* the deny-list is the same in both */
        assert_strv_equal(get(gplan, "SystemCallFilter~")->strv, get(kplan, "SystemCallFilter~")->strv);
        assert_true(strv_contains(get(gplan, "SystemCallFilter~")->strv, "io_uring_setup"));
        /* no Landlock: runsc cannot run under it; the helper runs runsc instead */
        assert_no_option(gplan->exec_argv, "--landlock");
        assert_true(strv_contains(gplan->exec_argv, "--isolation=gvisor:none"));
        assert_true(strv_contains(gplan->exec_argv, "--gvisor-allow=@system-service"));
        assert_true(strv_contains(gplan->exec_argv, "--gvisor-deny=keyctl"));
        assert_no_option(kplan->exec_argv, "--isolation");
        assert_no_option(kplan->exec_argv, "--gvisor-");
        compile_fails(gv, &sb, -EINVAL, "profile untrusted: process.isolation \"gvisor\" runs one command per run; "
                                        "sandboxes (create, exec) need a profile of isolation \"kernel\"");
        /* a terminal: refused under the gVisor tier (-ENOTTY: org.sbx.Error.NoTerminal), the kernel tier's
         * plan the same as without one (the terminal is the helper's, from the command's message) */
        compile_fails(gv, &tty, -ENOTTY, "tty: profile untrusted runs its command under process.isolation "
                                         "\"gvisor\", which gets no terminal; run it without one");
        tplan = compile_ok(kernel, &tty);
        assert_string_equal(tplan->digest, kplan->digest);
}

/* The run's network unit: the namespace made (privileged ExecStartPre=), slirp4netns connecting it with
 * nothing mapped in, started by the helper, which waits for it to be ready (ExecStart=), removed
 * (privileged ExecStopPost=). */
static void test_network_unit(void **state) {
        _cleanup_(profile_freep) Profile *coding = profile_coding(false), *browser = profile_browser(true);
        RunRequest req = { .argv = ARGV("true"), NETNS_REQ, .host_netns_ino = HOST_NETNS_INO,
                           .host_addresses = ARGV("198.51.100.7/32") };
        const Profile *profiles[] = { coding, browser };

        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(profiles[i], &req);
                _cleanup_free_ char *text = NULL;

                assert_int_equal(plan->network, profiles[i]->network);
                assert_non_null(plan->net_props);
                text = render(plan->net_props);
                assert_string_equal(text,
                                    "Type=forking\n"
                                    "PIDFile=" NETNS ".pid\n"
                                    "NoNewPrivileges=yes\n"
                                    "LockPersonality=yes\n"
                                    "RestrictRealtime=yes\n"
                                    "KillMode=control-group\n"
                                    "TimeoutStopSec=5s\n");
                assert_string_equal(get(plan, "NetworkNamespacePath")->s, NETNS);
                assert_strv_equal(plan->net_exec_argv,
                                  ARGV(EXEC_PATH, "--netns=serve:" NETNS, "--", SBX_SLIRP4NETNS_PATH, "--configure",
                                       "--mtu=65520", "--disable-host-loopback", "--disable-dns", "--enable-ipv6",
                                       "--enable-sandbox", "--enable-seccomp", "--ready-fd=3", "--netns-type=path",
                                       NETNS, "tap0"));
                assert_strv_equal(plan->net_pre_argv, ARGV(EXEC_PATH, "--netns=create:" NETNS));
                assert_strv_equal(plan->net_post_argv, ARGV(EXEC_PATH, "--netns=remove:" NETNS));

                /* nothing mapped into the namespace: no way to the host's loopback through the gateway,
                 * no DNS forwarder, no API socket (which could add inbound ports) */
                assert_true(strv_contains(plan->net_exec_argv, "--disable-host-loopback"));
                assert_true(strv_contains(plan->net_exec_argv, "--disable-dns"));
                for (char **a = plan->net_exec_argv; *a; a++)
                        if (strneq(*a, "--api-socket", 12) || streq(*a, "-a"))
                                fail_msg("slirp4netns: an API socket is given: %s", *a);
        }
}

/* --expect-netns-not: the helper refuses to run in the host's network namespace. Only when sbxd knows
 * it, and only for a run with a namespace of its own. */
static void test_network_netns_not(void **state) {
        _cleanup_(profile_freep) Profile *coding = profile_coding(true), *browser = profile_browser(true),
                                         *offline = profile_offline();
        RunRequest with = { .argv = ARGV("true"), NETNS_REQ, .host_netns_ino = HOST_NETNS_INO },
                   without = { .argv = ARGV("true"), NETNS_REQ },
                   none = { .argv = ARGV("true"), .network = "none", NETNS_REQ, .host_netns_ino = HOST_NETNS_INO },
                   offline_with = { .argv = ARGV("true"), .host_netns_ino = HOST_NETNS_INO };
        const Profile *profiles[] = { coding, browser };

        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                _cleanup_(run_plan_freep) RunPlan *a = compile_ok(profiles[i], &with), *b = compile_ok(profiles[i], &without),
                                                  *c = compile_ok(profiles[i], &none);
                ssize_t n = strv_index(a->exec_argv, "--expect-netns-not=4026531840");

                /* after the CPU quota, right before --expect-egress */
                assert_true(n > 0);
                assert_int_equal(strv_index(a->exec_argv, "--expect-cpu-quota=200") + 1, n);
                assert_int_equal(strv_index(a->exec_argv, "--expect-egress"), n + 1);
                /* the same command line without it */
                assert_int_equal(strv_length(a->exec_argv), strv_length(b->exec_argv) + 1);
                assert_no_option(b->exec_argv, "--expect-netns-not");
                for (size_t j = 0; b->exec_argv[j]; j++)
                        assert_string_equal(b->exec_argv[j], a->exec_argv[j < (size_t) n ? j : j + 1]);
                assert_no_option(c->exec_argv, "--expect-netns-not");
        }
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(offline, &offline_with);

                assert_no_option(plan->exec_argv, "--expect-netns-not");
        }
}

static void test_network_modes(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline();
        RunRequest none = { .argv = ARGV("true"), .network = "none" },
                   pub = { .argv = ARGV("true"), .network = "public" },
                   bogus = { .argv = ARGV("true"), .network = "bogus" },
                   empty = { .argv = ARGV("true"), .network = "" },
                   upper = { .argv = ARGV("true"), .network = "NONE" };

        /* asking for the profile's own mode is not narrowing: fine without request.network */
        assert_false(offline->request.network_none);
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(offline, &none);

                assert_true(get(plan, "PrivateNetwork")->b);
                assert_true(strv_contains(plan->exec_argv, "--expect-network=none"));
        }
        compile_fails(offline, &pub, -EPERM, "network: profile 'offline' does not let a run choose 'public'");
        compile_fails(offline, &bogus, -EINVAL, "network: 'bogus' is not a network mode");
        compile_fails(offline, &empty, -EINVAL, "network: '' is not a network mode");
        compile_fails(offline, &upper, -EINVAL, "network: 'NONE' is not a network mode");
}

static void test_network_public(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_browser(true), *strict = profile_browser(false);
        RunRequest req = { .argv = ARGV("true"), NETNS_REQ }, none = { .argv = ARGV("true"), .network = "none" };
        static const char *const denied[] = {
                "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
                "0.0.0.0/8", "224.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
        };
        /* documentation ranges stand in for public addresses in tests */
        static const char *const allowed[] = {
                "198.51.100.0/24", "192.0.2.0/24", "203.0.113.0/24", "2001:db8::/32",
        };
        _cleanup_strv_free_ char **allow = NULL, **deny = NULL;

        egress_lists(p, &allow, &deny);
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
                _cleanup_free_ char *text = render(plan->props);
                const Prop *d = get(plan, "IPAddressDeny");

                for (size_t i = 0; i < ELEMENTSOF(denied); i++)
                        if (!strv_contains(d->strv, denied[i]))
                                fail_msg("%s is not denied", denied[i]);
                for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                        if (strv_contains(d->strv, allowed[i]))
                                fail_msg("%s is denied", allowed[i]);
                /* the egress compiler's static lists, exactly; the own loopback allowed (the run's namespace) */
                assert_strv_equal(d->strv, deny);
                assert_strv_equal(get(plan, "IPAddressAllow")->strv, ARGV("127.0.0.0/8", "::1/128"));
                assert_null(prop_table_get(plan->props, "PrivateNetwork"));
                assert_no_key(text, "PrivateNetwork");
                assert_non_null(strstr(text, "\nIPAddressDeny=0.0.0.0/8 10.0.0.0/8 "));
                assert_has_line(text, "NetworkNamespacePath=" NETNS);
                assert_int_equal(plan->network, NETWORK_PUBLIC);
                assert_non_null(plan->net_props);
                assert_true(strv_contains(plan->exec_argv, "--expect-network=egress"));
                assert_false(strv_contains(plan->exec_argv, "--expect-network=public"));
                assert_false(strv_contains(plan->exec_argv, "--expect-network=none"));
        }

        /* narrowed to none: its own network namespace, with only lo */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &none);
                _cleanup_free_ char *text = render(plan->props);

                assert_true(get(plan, "PrivateNetwork")->b);
                assert_has_line(text, "PrivateNetwork=yes");
                assert_true(strv_contains(plan->exec_argv, "--expect-network=none"));
                assert_no_net_unit(plan);
        }
        compile_fails(strict, &none, -EPERM, "network: profile 'browser' does not let a run choose 'none'");
}

/* The fixed table (the drop-in every run of the profile gets): mode none is offline on its own; the
 * others hold the egress compiler's static address lists (the namespace is per run). */
static void test_network_fixed(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline(), *coding = profile_coding(true),
                                         *browser = profile_browser(true), *addresses = profile_coding(false);
        _cleanup_(prop_table_freep) PropTable *f_offline = fixed_ok(offline), *f_coding = fixed_ok(coding),
                                              *f_browser = fixed_ok(browser), *f_addresses = NULL;
        _cleanup_strv_free_ char **c_allow = NULL, **c_deny = NULL, **b_allow = NULL, **b_deny = NULL;
        const Prop *pn;

        pn = prop_table_get(f_offline, "PrivateNetwork");
        assert_non_null(pn);
        assert_true(pn->b);
        assert_null(prop_table_get(f_offline, "IPAddressDeny"));
        assert_null(prop_table_get(f_offline, "IPAddressAllow"));

        egress_lists(coding, &c_allow, &c_deny);
        assert_null(prop_table_get(f_coding, "PrivateNetwork"));
        assert_non_null(prop_table_get(f_coding, "IPAddressDeny"));
        assert_strv_equal(prop_table_get(f_coding, "IPAddressDeny")->strv, c_deny);
        assert_strv_equal(prop_table_get(f_coding, "IPAddressAllow")->strv, c_allow);

        egress_lists(browser, &b_allow, &b_deny);
        assert_null(prop_table_get(f_browser, "PrivateNetwork"));
        assert_non_null(prop_table_get(f_browser, "IPAddressDeny"));
        assert_strv_equal(prop_table_get(f_browser, "IPAddressDeny")->strv, b_deny);
        assert_strv_equal(prop_table_get(f_browser, "IPAddressAllow")->strv, b_allow);

        /* an allowlist of addresses only: everything denied but the own loopback and the destinations */
        free(addresses->destinations[0].host);
        addresses->destinations[0].host = NULL;
        addresses->destinations[0].address = xstrdup("192.0.2.0/24");
        f_addresses = fixed_ok(addresses);
        assert_null(prop_table_get(f_addresses, "PrivateNetwork"));
        assert_strv_equal(prop_table_get(f_addresses, "IPAddressDeny")->strv, ARGV("0.0.0.0/0", "::/0"));
        assert_strv_equal(prop_table_get(f_addresses, "IPAddressAllow")->strv,
                          ARGV("127.0.0.0/8", "::1/128", "192.0.2.0/24"));

        /* the per-run parts are not in the drop-in */
        PropTable *all[] = { f_offline, f_coding, f_browser, f_addresses };
        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                assert_null(prop_table_get(all[i], "NetworkNamespacePath"));
                assert_null(prop_table_get(all[i], "PIDFile"));
                assert_strv_equal(prop_table_get(all[i], "RestrictAddressFamilies")->strv,
                                  ARGV("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"));
        }
}

/* ---- the fixed part and the per-run part ---- */

static void test_fixed_prefix_of_plan(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline(), *coding = profile_coding(true),
                                         *browser = profile_browser(true), *data = profile_data();
        RunRequest plain = { .argv = ARGV("true") },
                   full = { .argv = ARGV("true"), .workspace = "/home/user/p", .memory_max = 64ULL << 20,
                            .tasks_max = 8, .runtime_max = 10 * USEC_PER_SEC, .cpu_quota_percent = 20,
                            .term = "xterm" },
                   cached = { .argv = ARGV("true"), .network = "none", .cache_owner = TENANT, .workspace = "/srv/w" },
                   narrowed = { .argv = ARGV("true"), .network = "none", .memory_max = 1ULL << 30 },
                   dataset = { .argv = ARGV("true"), .dataset = "/srv/d", .workspace = "/srv/w" },
                   egress = { .argv = ARGV("true"), NETNS_REQ, .host_netns_ino = HOST_NETNS_INO },
                   hosts = { .argv = ARGV("true"), NETNS_REQ, .host_addresses = ARGV("198.51.100.7/32") };
        struct {
                const Profile *p;
                const RunRequest *req;
                bool extends_fixed; /* the request adds to a list the fixed part has */
        } cases[] = {
                { offline, &plain, false },  { offline, &full, false },   { coding, &cached, false },
                /* a run with its id binds its own cgroup back: BindReadOnlyPaths grows */
                { browser, &narrowed, false }, { browser, &egress, true }, { data, &dataset, true },
                { coding, &egress, true }, { coding, &hosts, true }, { browser, &hosts, true },
        };
        static const char *const per_run[] = {
                "MemoryMax", "TasksMax", "CPUQuota", "RuntimeMaxSec", "Environment", "BindPaths", "StateDirectory",
                "NetworkNamespacePath",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(prop_table_freep) PropTable *fixed = fixed_ok(cases[i].p);
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(cases[i].p, cases[i].req);
                _cleanup_free_ char *ft = render(fixed), *pt = render(plan->props);

                for (size_t k = 0; k < ELEMENTSOF(per_run); k++)
                        if (prop_table_get(fixed, per_run[k]))
                                fail_msg("%s is in the fixed table of %s", per_run[k], cases[i].p->name);
                /* the same properties, in the same order, first */
                assert_true(plan->props->n > fixed->n);
                for (size_t k = 0; k < fixed->n; k++)
                        if (plan->props->props[k].def != fixed->props[k].def)
                                fail_msg("case %zu: property %zu is %s in the plan, %s in the fixed table", i, k,
                                         plan->props->props[k].def->name, fixed->props[k].def->name);
                /* with the same values: the fixed rendering starts the plan's */
                if (!cases[i].extends_fixed && !strneq(pt, ft, strlen(ft)))
                        fail_msg("case %zu: the plan does not start with the fixed table:\n%s\n---\n%s", i, ft, pt);
        }

        /* a dataset extends the fixed BindReadOnlyPaths: every other fixed line is unchanged */
        {
                _cleanup_(prop_table_freep) PropTable *fixed = fixed_ok(data);
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(data, &dataset);
                _cleanup_free_ char *ft = render(fixed), *pt = render(plan->props);

                assert_fixed_lines_in(pt, ft);
                assert_has_line(pt, "BindReadOnlyPaths=/run/systemd/notify:/run/systemd/notify:rbind" IDENTITY_BINDS_TEXT
                                    " /srv/d:/home/sbx/dataset:rbind");
        }
}

/* The run's user (policy-identity.c): sbx's identity files over /etc for a run on the host's OS, the host's
 * other files that name its users hidden; a path the profile hides stays hidden; a base image keeps its
 * own /etc. */
static void assert_no_identity(const PropTable *t) {
        const Prop *b = prop_table_get(t, "BindReadOnlyPaths"), *h = prop_table_get(t, "InaccessiblePaths");

        STRV_FOREACH(i, b ? b->strv : NULL)
                assert_false(strneq(*i, "/etc/", 5) || strneq(*i, SBX_IDENTITY_DIR, strlen(SBX_IDENTITY_DIR)));
        for (const char *const *f = policy_identity_hidden; *f; f++) {
                _cleanup_free_ char *opt = NULL;

                assert_true(asprintf(&opt, "-%s", *f) > 0);
                assert_true(strv_index(h ? h->strv : NULL, opt) < 0);
        }
}

static void test_identity(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();

        /* the host's OS: the three files, read-only, from the identity directory */
        {
                _cleanup_(prop_table_freep) PropTable *t = fixed_ok(p);

                assert_strv_equal(get_prop(t, "BindReadOnlyPaths")->strv,
                                  ARGV("/run/systemd/notify", "/run/systemd/notify", IDENTITY_BINDS));
                assert_strv_equal(get_prop(t, "InaccessiblePaths")->strv, ARGV(IDENTITY_HIDDEN));
        }
        /* a profile that hides /etc/passwd keeps it hidden (not bound over); /etc/passwd- is another file */
        {
                _cleanup_(prop_table_freep) PropTable *t = NULL;

                p->hidden = xstrv_copy(ARGV("/etc/passwd"));
                t = fixed_ok(p);
                assert_strv_equal(get_prop(t, "BindReadOnlyPaths")->strv,
                                  ARGV("/run/systemd/notify", "/run/systemd/notify", SBX_IDENTITY_DIR "/nsswitch.conf",
                                       "/etc/nsswitch.conf", SBX_IDENTITY_DIR "/group", "/etc/group"));
                assert_strv_equal(get_prop(t, "InaccessiblePaths")->strv, ARGV("-/etc/passwd", IDENTITY_HIDDEN));
                strv_free(p->hidden);
        }
        /* hiding /etc, or everything, hides them all: nothing is bound over, nothing added */
        char *const *const hide_all[] = { ARGV("/etc"), ARGV("/"), ARGV("/srv", "/etc") };
        for (size_t i = 0; i < ELEMENTSOF(hide_all); i++) {
                _cleanup_(prop_table_freep) PropTable *t = NULL;

                p->hidden = xstrv_copy(hide_all[i]);
                t = fixed_ok(p);
                assert_no_identity(t);
                assert_int_equal(strv_length(get_prop(t, "InaccessiblePaths")->strv), strv_length(p->hidden));
                strv_free(p->hidden);
        }
        p->hidden = NULL;
        /* a base image: the image's own /etc, nothing of sbx's */
        {
                _cleanup_(prop_table_freep) PropTable *t = NULL;

                p->base_image = true;
                t = fixed_ok(p);
                assert_no_identity(t);
                assert_null(prop_table_get(t, "InaccessiblePaths"));
                p->base_image = false;
        }
        /* the function itself: the same for a table of its own; a base image adds nothing */
        {
                _cleanup_(prop_table_freep) PropTable *t = prop_table_new();

                assert_non_null(t);
                assert_int_equal(policy_identity_compile(p, t), 0);
                assert_strv_equal(get_prop(t, "BindReadOnlyPaths")->strv, ARGV(IDENTITY_BINDS));
                p->base_image = true;
                prop_table_free(t);
                t = prop_table_new();
                assert_non_null(t);
                assert_int_equal(policy_identity_compile(p, t), 0);
                assert_null(prop_table_get(t, "BindReadOnlyPaths"));
                assert_null(prop_table_get(t, "InaccessiblePaths"));
                p->base_image = false;
        }
        /* USER and LOGNAME name the run's user, whatever the request's environment */
        {
                RunRequest req = { .argv = ARGV("true") };
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);
                char **env = get(plan, "Environment")->strv;

                assert_true(strv_contains(env, "USER=" SBX_USER_NAME));
                assert_true(strv_contains(env, "LOGNAME=" SBX_USER_NAME));
                assert_string_equal(SBX_USER_NAME, "sbx");
        }
        /* the gVisor tier: the command is uid 0 of gVisor's kernel, whose name is root */
        {
                RunRequest req = { .argv = ARGV("true") };
                _cleanup_(run_plan_freep) RunPlan *plan = NULL;
                char **env;

                p->isolation = ISOLATION_GVISOR;
                plan = compile_ok(p, &req);
                env = get(plan, "Environment")->strv;
                assert_true(strv_contains(env, "USER=root"));
                assert_true(strv_contains(env, "LOGNAME=root"));
                assert_false(strv_contains(env, "USER=" SBX_USER_NAME));
                p->isolation = ISOLATION_KERNEL;
        }
}

static void test_fixed_files_and_kernel(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        _cleanup_(prop_table_freep) PropTable *t = NULL;
        _cleanup_free_ char *text = NULL;

        p->read_only = xstrv_copy(ARGV("/opt/tools", "/srv/reference"));
        p->read_write = xstrv_copy(ARGV("/var/cache/shared", "/srv/scratch"));
        p->hidden = xstrv_copy(ARGV("/mnt", "/opt/secret"));
        p->write_execute_memory = false;
        p->namespaces = CLONE_NEWNET | CLONE_NEWUSER;
        p->swap_max = 512ULL << 20;
        p->disk_max = 256ULL << 20;
        strv_free(p->syscall_deny);
        p->syscall_deny = xstrv_copy(ARGV("@obsolete", "ptrace"));
        t = fixed_ok(p);
        text = render(t);

        assert_has_line(text, "InaccessiblePaths=-/mnt -/opt/secret" IDENTITY_HIDDEN_TEXT);
        assert_has_line(text, "BindReadOnlyPaths=/run/systemd/notify:/run/systemd/notify:rbind "
                              "/opt/tools:/opt/tools:rbind /srv/reference:/srv/reference:rbind" IDENTITY_BINDS_TEXT);
        assert_has_line(text, "ReadWritePaths=/var/cache/shared /srv/scratch");
        assert_has_line(text, "MemoryDenyWriteExecute=yes");
        assert_has_line(text, "RestrictNamespaces=net user");
        assert_has_line(text, "TemporaryFileSystem=/run:ro,mode=0755,nosuid,nodev,noexec "
                              "/sys/fs/cgroup:ro,mode=0755,nosuid,nodev,noexec");
        assert_has_line(text, "MemorySwapMax=536870912");
        assert_has_line(text, "SystemCallFilter=@system-service seccomp landlock_create_ruleset landlock_add_rule "
                              "landlock_restrict_self");
        assert_has_line(text, "SystemCallFilter=~@obsolete ptrace io_uring_setup io_uring_enter io_uring_register "
                              "add_key keyctl request_key");
        assert_has_line(text, "SystemCallErrorNumber=EPERM");
        assert_keys_unique(text);

        /* every namespace type, in the table's order */
        p->namespaces = CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUSER |
                        CLONE_NEWUTS;
        t = prop_table_free(t);
        text = mfree(text);
        t = fixed_ok(p);
        text = render(t);
        assert_has_line(text, "RestrictNamespaces=cgroup ipc net mnt pid user uts");

        /* write+execute memory allowed: no MemoryDenyWriteExecute at all (not "no") */
        p->write_execute_memory = true;
        p->namespaces = 0;
        t = prop_table_free(t);
        text = mfree(text);
        t = fixed_ok(p);
        text = render(t);
        assert_no_key(text, "MemoryDenyWriteExecute");
        assert_has_line(text, "RestrictNamespaces=yes");

        /* and the swap figure goes to the helper too */
        {
                RunRequest req = { .argv = ARGV("true") };
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

                assert_int_equal(get(plan, "MemorySwapMax")->u, 512ULL << 20);
                assert_true(strv_contains(plan->exec_argv, "--expect-swap-max=536870912"));
        }
}

/* ---- caches ---- */

#define CACHE_OPT(name, path) "--cache=/var/lib/private/sbx-cache/" TENANT "/coding/" name ":" path
#define CACHE_LL(name) "--landlock-rw=/var/lib/private/sbx-cache/" TENANT "/coding/" name

/* A cache is a state directory systemd creates for the run's user (StateDirectory=); the exec helper
 * links it into HOME (--cache=STATEDIR:PATH). */
static void test_caches(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_coding(true);
        RunRequest req = { .argv = ARGV("pip", "install", "x"), .network = "none", .cache_owner = TENANT,
                           .workspace = "/home/user/p" },
                   busy = { .argv = ARGV("true"), .network = "none", .cache_owner = TENANT,
                            .busy_caches = ARGV("pip", "nosuch") },
                   all_busy = { .argv = ARGV("true"), .network = "none", .cache_owner = TENANT,
                                .busy_caches = ARGV("npm", "pip") },
                   anonymous = { .argv = ARGV("true"), .network = "none" };

        p->output_max = 1ULL << 20;
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

                assert_strv_equal(get(plan, "StateDirectory")->strv,
                                  ARGV("sbx-cache/" TENANT "/coding/pip", "sbx-cache/" TENANT "/coding/npm"));
                /* the workspace is the only bind: caches are not bound, they are linked */
                assert_strv_equal(get(plan, "BindPaths")->strv, ARGV("/home/user/p", "/home/sbx/workspace"));
                assert_strv_equal(plan->exec_argv,
                                  ARGV(EXEC_PATH, "--expect-memory-max=4294967296", "--expect-swap-max=0",
                                       "--expect-tasks-max=1024", "--expect-network=none",
                                       "--expect-profile-digest=" DIGEST_CODING, "--expect-disk-max=4294967296",
                                       "--output-max=1048576",
                                       "--expect-cpu-quota=200", "--expect-egress", CACHE_OPT("pip", ".cache/pip"),
                                       CACHE_OPT("npm", ".npm"), LANDLOCK_OPTS, CACHE_LL("pip"), CACHE_LL("npm"),
                                       "--workspace=bound", "--"));
                /* and an option added later still goes before the separator */
                assert_int_equal(run_plan_add_exec_option(plan, "--seccomp-filter=00"), 0);
                assert_int_equal(strv_index(plan->exec_argv, "--seccomp-filter=00") + 1,
                                 strv_index(plan->exec_argv, "--"));
        }
        /* a cache another run of the caller holds: this run's copy is ephemeral */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &busy);

                assert_strv_equal(get(plan, "StateDirectory")->strv, ARGV("sbx-cache/" TENANT "/coding/npm"));
                assert_true(strv_contains(plan->exec_argv, CACHE_OPT("npm", ".npm")));
                assert_false(strv_contains(plan->exec_argv, CACHE_OPT("pip", ".cache/pip")));
                assert_null(prop_table_get(plan->props, "BindPaths"));
        }
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &all_busy);

                assert_null(prop_table_get(plan->props, "StateDirectory"));
                assert_null(prop_table_get(plan->props, "BindPaths"));
                for (size_t i = 0; plan->exec_argv[i]; i++)
                        assert_false(strneq(plan->exec_argv[i], "--cache=", 8));
        }
        /* no cache owner: no caches */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &anonymous);

                assert_null(prop_table_get(plan->props, "StateDirectory"));
                assert_null(prop_table_get(plan->props, "BindPaths"));
                for (size_t i = 0; plan->exec_argv[i]; i++)
                        assert_false(strneq(plan->exec_argv[i], "--cache=", 8));
        }
}

/* The Landlock ruleset follows the file view: files.landlock, the profile's read_write paths, the caches the
 * run may write (not a read-only one, not a busy one: that copy is in HOME). */
static void test_landlock_options(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_coding(true);
        RunRequest req = { .argv = ARGV("true"), .network = "none", .cache_owner = TENANT,
                           .caches_ro = ARGV("npm") },
                   busy = { .argv = ARGV("true"), .network = "none", .cache_owner = TENANT,
                            .busy_caches = ARGV("pip") };

        strv_free(p->read_write);
        p->read_write = xstrv_copy(ARGV("/var/cache/shared", "/srv/scratch"));
        p->landlock = LANDLOCK_MODE_BEST_EFFORT;
        {
                _cleanup_strv_free_ char **l = NULL;

                assert_int_equal(policy_landlock_options(p, &req, &l), 0);
                assert_strv_equal(l, ARGV("--landlock=best-effort", "--landlock-ro=/", "--landlock-rw=/home/sbx",
                                          "--landlock-rw=/tmp", "--landlock-rw=/var/tmp", "--landlock-rw=/dev/shm",
                                          "--landlock-rw=/dev/null", "--landlock-rw=/dev/zero",
                                          "--landlock-rw=/dev/full", "--landlock-rw=/dev/tty",
                                          "--landlock-rw=/dev/pts", "--landlock-rw=/dev/ptmx",
                                          "--landlock-rw=/var/cache/shared", "--landlock-rw=/srv/scratch",
                                          CACHE_LL("pip")));
        }
        {
                _cleanup_strv_free_ char **l = NULL;
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &busy);

                assert_int_equal(policy_landlock_options(p, &busy, &l), 0);
                assert_false(strv_contains(l, CACHE_LL("pip")));
                assert_true(strv_contains(l, CACHE_LL("npm")));
                /* all of them are the helper's, before the command's separator */
                STRV_FOREACH(o, l)
                        assert_true(strv_index(plan->exec_argv, *o) > 0 &&
                                    strv_index(plan->exec_argv, *o) < strv_index(plan->exec_argv, "--"));
        }
        p->landlock = LANDLOCK_MODE_REQUIRED;
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &busy);

                assert_true(strv_contains(plan->exec_argv, "--landlock=required"));
                assert_false(strv_contains(plan->exec_argv, "--landlock=best-effort"));
        }
}

/* The host's own addresses (sbxd's) are denied to every run with a network: public and allowlist alike,
 * per run on top of the drop-in's list, and the helper checks they are. */
static void test_network_host_addresses(void **state) {
        _cleanup_(profile_freep) Profile *coding = profile_coding(true), *browser = profile_browser(true),
                                         *offline = profile_offline();
        char **hosts = ARGV("198.51.100.7/32", "2001:db8::7/128");
        RunRequest req = { .argv = ARGV("pip", "install", "x"), .cache_owner = TENANT, .workspace = "/home/user/p",
                           NETNS_REQ, .host_netns_ino = HOST_NETNS_INO, .host_addresses = hosts },
                   offline_req = { .argv = ARGV("true"), .host_addresses = hosts };
        const Profile *profiles[] = { coding, browser };

        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                _cleanup_(run_plan_freep) RunPlan *plan = NULL;
                _cleanup_strv_free_ char **allow = NULL, **deny = NULL, **want = NULL;
                _cleanup_free_ char *text = NULL;

                if (profiles[i] == browser)
                        req.workspace = NULL, req.cache_owner = NULL; /* it offers neither */
                plan = compile_ok(profiles[i], &req);
                text = render(plan->props);
                egress_lists(profiles[i], &allow, &deny);
                want = strv_concat(deny, hosts);
                assert_strv_equal(get(plan, "IPAddressDeny")->strv, want);
                assert_strv_equal(get(plan, "IPAddressAllow")->strv, allow);
                assert_non_null(strstr(text, " 198.51.100.7/32 2001:db8::7/128\nIPAddressAllow=127.0.0.0/8 ::1/128\n"));
                assert_true(strv_contains(plan->exec_argv, "--expect-denied=198.51.100.7"));
                assert_true(strv_contains(plan->exec_argv, "--expect-denied=2001:db8::7"));
        }

        /* the whole command line of the allowlist: the denied addresses after the caches */
        req.workspace = "/home/user/p";
        req.cache_owner = TENANT;
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(coding, &req);

                assert_strv_equal(plan->exec_argv,
                                  ARGV(EXEC_PATH, "--expect-memory-max=4294967296", "--expect-swap-max=0",
                                       "--expect-tasks-max=1024", "--expect-network=egress",
                                       "--expect-profile-digest=" DIGEST_CODING, "--expect-disk-max=4294967296",
                                       "--expect-cpu-quota=200", "--expect-netns-not=4026531840", "--expect-egress",
                                       CACHE_OPT("pip", ".cache/pip"), CACHE_OPT("npm", ".npm"),
                                       "--expect-denied=198.51.100.7", "--expect-denied=2001:db8::7",
                                       LANDLOCK_OPTS, CACHE_LL("pip"), CACHE_LL("npm"), "--workspace=bound", "--"));
        }
        /* mode none: no address filter at all */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(offline, &offline_req);

                assert_null(prop_table_get(plan->props, "IPAddressDeny"));
                assert_null(prop_table_get(plan->props, "IPAddressAllow"));
                assert_no_option(plan->exec_argv, "--expect-denied");
        }
}

/* ---- datasets ---- */

static void test_dataset(void **state) {
        _cleanup_(profile_freep) Profile *data = profile_data();
        static const char *const ok[] = {
                "/srv/datasets/imagenet", "/srv", "/home/user/data", "/var/tmp/d", "/tmp/d", "/media/usb",
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                RunRequest req = { .argv = ARGV("true"), .dataset = (char *) ok[i] };
                _cleanup_(run_plan_freep) RunPlan *plan = NULL;
                _cleanup_free_ char *e = NULL;
                int r = policy_compile(data, &req, EXEC_PATH, &plan, &e);

                check_row(failures, r == 0 && !e, "'%s' -> %d '%s'", ok[i], r, strna(e));
                if (r < 0)
                        continue;
                const Prop *b = prop_table_get(plan->props, "BindReadOnlyPaths");
                size_t n = b ? strv_length(b->strv) : 0;
                check_row(failures, n >= 2 && streq(b->strv[n - 2], ok[i]) && streq(b->strv[n - 1], SBX_DATASET),
                          "'%s': not bound", ok[i]);
        }
        assert_int_equal(failures, 0);

        /* next to a workspace that does not overlap it (a shared prefix is no overlap) */
        {
                RunRequest req = { .argv = ARGV("true"), .dataset = "/srv/a", .workspace = "/srv/ab" };
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(data, &req);

                assert_strv_equal(get(plan, "BindPaths")->strv, ARGV("/srv/ab", "/home/sbx/workspace"));
                assert_strv_equal(get(plan, "BindReadOnlyPaths")->strv,
                                  ARGV("/run/systemd/notify", "/run/systemd/notify", IDENTITY_BINDS, "/srv/a",
                                       "/home/sbx/dataset"));
        }
}

/* ---- refusals ---- */

typedef struct Refusal {
        const char *what;
        RunRequest req;
        int r;
        const char *message;
        bool compile_only; /* validation passes, only compilation refuses */
} Refusal;

static unsigned check_refusals(const Profile *p, const Refusal *table, size_t n) {
        unsigned failures = 0;

        for (size_t i = 0; i < n; i++) {
                RunPlan *plan = (RunPlan *) 0x1;
                _cleanup_free_ char *e1 = NULL, *e2 = NULL;
                int r1, r2;

                r1 = run_request_validate(p, &table[i].req, &e1);
                r2 = policy_compile(p, &table[i].req, EXEC_PATH, &plan, &e2);
                if (table[i].compile_only)
                        check_row(failures, r1 == 0 && !e1, "%s: validate -> %d '%s'", table[i].what, r1, strna(e1));
                else
                        check_row(failures, r1 == table[i].r && streq_ptr(e1, table[i].message),
                                  "%s: validate -> %d '%s', expected %d '%s'", table[i].what, r1, strna(e1),
                                  table[i].r, table[i].message);
                check_row(failures, r2 == table[i].r && streq_ptr(e2, table[i].message),
                          "%s: compile -> %d '%s', expected %d '%s'", table[i].what, r2, strna(e2), table[i].r,
                          table[i].message);
                check_row(failures, plan == (RunPlan *) 0x1, "%s: *ret set on failure", table[i].what);
                /* without ret_error, same result */
                r1 = run_request_validate(p, &table[i].req, NULL);
                check_row(failures, r1 == (table[i].compile_only ? 0 : table[i].r), "%s: validate(NULL) -> %d",
                          table[i].what, r1);
                plan = (RunPlan *) 0x1;
                r2 = policy_compile(p, &table[i].req, EXEC_PATH, &plan, NULL);
                check_row(failures, r2 == table[i].r && plan == (RunPlan *) 0x1, "%s: compile(NULL) -> %d",
                          table[i].what, r2);
        }
        return failures;
}

static void test_refuse_profile_and_command(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
        static char *empty_name[] = { "", "x", NULL };
        static char *none[] = { NULL };
        const Refusal table[] = {
                { "other profile", { .profile = "browser", .argv = one }, -EINVAL,
                  "profile: the request names 'browser', the profile is 'offline'" },
                { "upper-case profile", { .profile = "Offline", .argv = one }, -EINVAL,
                  "profile: the request names 'Offline', the profile is 'offline'" },
                { "no argv", { .argv = NULL }, -EINVAL, "command: no command given" },
                { "empty argv", { .argv = none }, -EINVAL, "command: no command given" },
                { "empty argv[0]", { .argv = empty_name }, -EINVAL, "command: the command name is empty" },
        };
        RunRequest named = { .profile = "offline", .argv = one };

        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
        assert_int_equal(run_request_validate(p, &named, NULL), 0);
}

static void test_refuse_workspace(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
#define NOT_NORMALIZED(w) { "workspace " w, { .workspace = (char *) w, .argv = one }, -EINVAL, \
                            "workspace: '" w "' is not a normalized absolute path" }
#define BAD_CHAR(w) { "workspace " w, { .workspace = (char *) w, .argv = one }, -EINVAL, \
                      "workspace: '" w "' contains a character sbx does not accept (: \" \\ % $ or white space)" }
#define SYSTEM_DIR(w) { "workspace " w, { .workspace = (char *) w, .argv = one }, -EPERM, \
                        "workspace: '" w "' is a system directory" }
        const Refusal table[] = {
                NOT_NORMALIZED(""),
                NOT_NORMALIZED("project"),
                NOT_NORMALIZED("./project"),
                NOT_NORMALIZED("/home/user/project/"),
                NOT_NORMALIZED("/home/user/../../etc"),
                NOT_NORMALIZED("/home/user/./project"),
                NOT_NORMALIZED("//home/user"),
                BAD_CHAR("/home/user/a b"),
                BAD_CHAR("/home/user/a:b"),
                BAD_CHAR("/home/user/$HOME"),
                BAD_CHAR("/home/user/a\"b"),
                BAD_CHAR("/home/user/a\\b"),
                /* a control character is shown as '?': the refusal stays one line */
                { "workspace with a newline", { .workspace = (char *) "/home/user/a\nExecStartPre=/bin/x", .argv = one },
                  -EINVAL, "workspace: '/home/user/a?ExecStartPre=/bin/x' contains a character sbx does not accept "
                           "(: \" \\ % $ or white space)" },
                { "workspace not normalized, with a tab", { .workspace = (char *) "/home/user//a\tb", .argv = one },
                  -EINVAL, "workspace: '/home/user//a?b' is not a normalized absolute path" },
                { "workspace /home/user/a\\tb", { .workspace = (char *) "/home/user/a\tb", .argv = one }, -EINVAL,
                  "workspace: '/home/user/a?b' contains a character sbx does not accept (: \" \\ % $ or white space)" },
                { "workspace /home/user/a\\nb", { .workspace = (char *) "/home/user/a\nb", .argv = one }, -EINVAL,
                  "workspace: '/home/user/a?b' contains a character sbx does not accept (: \" \\ % $ or white space)" },
                SYSTEM_DIR("/"),
                SYSTEM_DIR("/etc"),
                SYSTEM_DIR("/etc/ssh"),
                SYSTEM_DIR("/usr"),
                SYSTEM_DIR("/usr/lib"),
                SYSTEM_DIR("/usr/local/bin"),
                SYSTEM_DIR("/proc"),
                SYSTEM_DIR("/proc/1/root"),
                SYSTEM_DIR("/sys"),
                SYSTEM_DIR("/sys/fs/cgroup"),
                SYSTEM_DIR("/dev"),
                SYSTEM_DIR("/dev/shm"),
                SYSTEM_DIR("/run"),
                SYSTEM_DIR("/run/user/1000"),
                SYSTEM_DIR("/boot"),
                SYSTEM_DIR("/var"),
                SYSTEM_DIR("/bin"),
                SYSTEM_DIR("/sbin"),
                SYSTEM_DIR("/lib"),
                SYSTEM_DIR("/lib/modules"),
                SYSTEM_DIR("/lib64"),
                SYSTEM_DIR("/home"),
                SYSTEM_DIR("/root"),
                SYSTEM_DIR("/root/project"),
        };
#undef NOT_NORMALIZED
#undef BAD_CHAR
#undef SYSTEM_DIR

        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
}

/* Directories that only share a prefix with a system directory, or that live below /home, /var or /tmp,
 * are fine. */
static void test_workspace_accepted(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static const char *const ok[] = {
                "/home/user", "/home/user/project", "/tmp/work", "/var/tmp/build", "/srv/data", "/opt/src",
                "/etcetera", "/usr2", "/homes/x", "/rooted", "/devel/x", "/library",
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                RunRequest req = { .argv = ARGV("true"), .workspace = (char *) ok[i] };
                _cleanup_free_ char *e = NULL;
                int r = run_request_validate(p, &req, &e);

                check_row(failures, r == 0 && !e, "'%s' -> %d '%s'", ok[i], r, strna(e));
        }
        assert_int_equal(failures, 0);
}

static void test_refuse_term(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
#define BAD_TERM(t) { "term " t, { .term = (char *) t, .argv = one }, -EINVAL, \
                      "term: '" t "' is not a valid terminal name" }
        const Refusal table[] = {
                BAD_TERM(""),
                BAD_TERM("xterm;reboot"),
                BAD_TERM("xterm 256"),
                BAD_TERM("xterm\n"),
                BAD_TERM("$(id)"),
                BAD_TERM("../../x"),
                BAD_TERM("x=y"),
                BAD_TERM("12345678901234567890123456789012345678901234567890123456789012345"), /* 65 */
        };
#undef BAD_TERM
        static const char *const ok[] = {
                "xterm", "xterm-256color", "screen.xterm-256color", "rxvt-unicode+x", "vt100_x",
                "1234567890123456789012345678901234567890123456789012345678901234", /* 64 */
        };
        unsigned failures = 0;

        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                RunRequest req = { .argv = ARGV("true"), .term = (char *) ok[i] };
                int r = run_request_validate(p, &req, NULL);

                check_row(failures, r == 0, "'%s' -> %d", ok[i], r);
                check_row(failures, run_request_term_is_valid(ok[i]), "'%s' invalid", ok[i]);
        }
        assert_int_equal(failures, 0);
        assert_false(run_request_term_is_valid(""));
        assert_false(run_request_term_is_valid("a b"));
}

/* A request may not loosen the profile: above the ceiling is refused naming the limit, in the units a
 * profile is written in. */
static void test_refuse_loosening(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
        const Refusal table[] = {
                { "memory above", { .argv = one, .memory_max = 3ULL << 30 }, -EPERM,
                  "memory: 3G is above the limit of profile 'offline' (2G)" },
                { "memory one byte above", { .argv = one, .memory_max = (2ULL << 30) + 1 }, -EPERM,
                  "memory: 2147483649 is above the limit of profile 'offline' (2G)" },
                { "memory 1T", { .argv = one, .memory_max = 1ULL << 40 }, -EPERM,
                  "memory: 1T is above the limit of profile 'offline' (2G)" },
                { "memory 2049M", { .argv = one, .memory_max = 2049ULL << 20 }, -EPERM,
                  "memory: 2049M is above the limit of profile 'offline' (2G)" },
                { "memory infinity", { .argv = one, .memory_max = UINT64_MAX }, -EPERM,
                  "memory: 18446744073709551615 is above the limit of profile 'offline' (2G)" },
                { "tasks above", { .argv = one, .tasks_max = 513 }, -EPERM,
                  "tasks: 513 is above the limit of profile 'offline' (512)" },
                { "timeout above", { .argv = one, .runtime_max = 7200 * USEC_PER_SEC }, -EPERM,
                  "timeout: 7200s is above the limit of profile 'offline' (3600s)" },
                { "timeout 1us above", { .argv = one, .runtime_max = 3600 * USEC_PER_SEC + 1 }, -EPERM,
                  "timeout: 3600.000001s is above the limit of profile 'offline' (3600s)" },
                { "cpu above", { .argv = one, .cpu_quota_percent = 201 }, -EPERM,
                  "cpu: 201% is above the limit of profile 'offline' (200%)" },
        };

        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
}

static void test_refuse_below_min(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
        const Refusal table[] = {
                { "memory one byte below", { .argv = one, .memory_max = (16ULL << 20) - 1 }, -EINVAL,
                  "memory: 16777215 is below the lowest profile 'offline' accepts (16M)" },
                { "memory 15M", { .argv = one, .memory_max = 15ULL << 20 }, -EINVAL,
                  "memory: 15M is below the lowest profile 'offline' accepts (16M)" },
                { "memory 1023K", { .argv = one, .memory_max = 1023ULL << 10 }, -EINVAL,
                  "memory: 1023K is below the lowest profile 'offline' accepts (16M)" },
                { "memory 1", { .argv = one, .memory_max = 1 }, -EINVAL,
                  "memory: 1 is below the lowest profile 'offline' accepts (16M)" },
                { "tasks", { .argv = one, .tasks_max = 3 }, -EINVAL,
                  "tasks: 3 is below the lowest profile 'offline' accepts (4)" },
                { "timeout", { .argv = one, .runtime_max = USEC_PER_SEC - 1 }, -EINVAL,
                  "timeout: 0.999999s is below the lowest profile 'offline' accepts (1s)" },
                { "cpu", { .argv = one, .cpu_quota_percent = 9 }, -EINVAL,
                  "cpu: 9% is below the lowest profile 'offline' accepts (10%)" },
        };

        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
}

/* An option the profile does not list cannot be set at all, not even to the profile's own value. */
static void test_refuse_not_allowed(void **state) {
        _cleanup_(profile_freep) Profile *browser = profile_browser(true), *fixed = profile_offline();
        static char *one[] = { "true", NULL };
        const Refusal browser_table[] = {
                { "tasks", { .argv = one, .tasks_max = 16 }, -EPERM,
                  "tasks: profile 'browser' does not let a run set it" },
                { "tasks at the ceiling", { .argv = one, .tasks_max = 1024 }, -EPERM,
                  "tasks: profile 'browser' does not let a run set it" },
                { "cpu", { .argv = one, .cpu_quota_percent = 50 }, -EPERM,
                  "cpu: profile 'browser' does not let a run set it" },
                /* checked before the ceiling */
                { "cpu above", { .argv = one, .cpu_quota_percent = 1000 }, -EPERM,
                  "cpu: profile 'browser' does not let a run set it" },
                { "memory below its min", { .argv = one, .memory_max = 32ULL << 20 }, -EINVAL,
                  "memory: 32M is below the lowest profile 'browser' accepts (64M)" },
        };
        const Refusal fixed_table[] = {
                { "memory", { .argv = one, .memory_max = 1ULL << 30 }, -EPERM,
                  "memory: profile 'fixed' does not let a run set it" },
                { "memory at the ceiling", { .argv = one, .memory_max = 2ULL << 30 }, -EPERM,
                  "memory: profile 'fixed' does not let a run set it" },
                { "timeout", { .argv = one, .runtime_max = 60 * USEC_PER_SEC }, -EPERM,
                  "timeout: profile 'fixed' does not let a run set it" },
        };
        RunRequest ok = { .argv = one, .memory_max = 64ULL << 20, .runtime_max = USEC_PER_SEC };

        profile_set_name(fixed, "fixed");
        fixed->request.memory = (RequestBound) {};
        fixed->request.runtime = (RequestBound) {};
        assert_int_equal(check_refusals(browser, browser_table, ELEMENTSOF(browser_table)), 0);
        assert_int_equal(check_refusals(fixed, fixed_table, ELEMENTSOF(fixed_table)), 0);
        assert_int_equal(run_request_validate(browser, &ok, NULL), 0);
}

static void test_refuse_too_little(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        static char *one[] = { "true", NULL };
        const Refusal table[] = {
                { "memory", { .argv = one, .memory_max = (4ULL << 20) - 1 }, -EINVAL,
                  "memory: 4194303 bytes is too little to start anything (at least 4M)", true },
                { "tasks", { .argv = one, .tasks_max = 1 }, -EINVAL,
                  "tasks: at least 2 are needed (the helper and the command)", true },
        };

        p->request.memory.min = 0;
        p->request.tasks.min = 0;
        assert_int_equal(check_refusals(p, table, ELEMENTSOF(table)), 0);
}

static void test_refuse_dataset(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline(), *data = profile_data();
        static char *one[] = { "true", NULL };
        const Refusal offline_table[] = {
                { "not allowed", { .argv = one, .dataset = "/srv/d" }, -EPERM,
                  "dataset: profile 'offline' does not let a run bind a dataset" },
        };
        const Refusal data_table[] = {
                { "not below", { .argv = one, .dataset = "/opt/d" }, -EPERM,
                  "dataset: '/opt/d' is not below a directory profile 'data' allows" },
                { "prefix only", { .argv = one, .dataset = "/srvx/d" }, -EPERM,
                  "dataset: '/srvx/d' is not below a directory profile 'data' allows" },
                { "below /var but not /var/tmp", { .argv = one, .dataset = "/var/lib/x" }, -EPERM,
                  "dataset: '/var/lib/x' is not below a directory profile 'data' allows" },
                { "relative", { .argv = one, .dataset = "srv/d" }, -EINVAL,
                  "dataset: 'srv/d' is not a normalized absolute path" },
                { "trailing slash", { .argv = one, .dataset = "/srv/d/" }, -EINVAL,
                  "dataset: '/srv/d/' is not a normalized absolute path" },
                { "dot-dot", { .argv = one, .dataset = "/srv/../etc" }, -EINVAL,
                  "dataset: '/srv/../etc' is not a normalized absolute path" },
                { "space", { .argv = one, .dataset = "/srv/a b" }, -EINVAL,
                  "dataset: '/srv/a b' contains a character sbx does not accept (: \" \\ % $ or white space)" },
                { "colon", { .argv = one, .dataset = "/srv/a:b" }, -EINVAL,
                  "dataset: '/srv/a:b' contains a character sbx does not accept (: \" \\ % $ or white space)" },
                { "percent (a specifier in unit files)", { .argv = one, .dataset = "/srv/100%n" }, -EINVAL,
                  "dataset: '/srv/100%n' contains a character sbx does not accept (: \" \\ % $ or white space)" },
                { "system dir", { .argv = one, .dataset = "/home" }, -EPERM, "dataset: '/home' is a system directory" },
                { "same as workspace", { .argv = one, .dataset = "/srv/a", .workspace = "/srv/a" }, -EINVAL,
                  "dataset: '/srv/a' overlaps the workspace '/srv/a'" },
                { "below the workspace", { .argv = one, .dataset = "/srv/a/in", .workspace = "/srv/a" }, -EINVAL,
                  "dataset: '/srv/a/in' overlaps the workspace '/srv/a'" },
                { "above the workspace", { .argv = one, .dataset = "/srv/a", .workspace = "/srv/a/out" }, -EINVAL,
                  "dataset: '/srv/a' overlaps the workspace '/srv/a/out'" },
        };

        assert_int_equal(check_refusals(offline, offline_table, ELEMENTSOF(offline_table)), 0);
        assert_int_equal(check_refusals(data, data_table, ELEMENTSOF(data_table)), 0);
}

/* Public and allowlist runs need the namespace sbxd prepares (its path, and the run's id); validation
 * passes, compilation refuses. Mode none (the profile's, or a request's narrower one) needs none. */
static void test_refuse_no_netns(void **state) {
        _cleanup_(profile_freep) Profile *coding = profile_coding(true), *browser = profile_browser(true),
                                         *offline = profile_offline();
        static char *one[] = { "true", NULL };
        const Refusal table[] = {
                { "neither", { .argv = one }, -EINVAL, NO_NETNS, true },
                { "no run id", { .argv = one, .netns_path = (char *) NETNS }, -EINVAL, NO_NETNS, true },
                { "no path", { .argv = one, .run_id = (char *) RUN_ID }, -EINVAL, NO_NETNS, true },
                { "neither, with the host's", { .argv = one, .host_netns_ino = HOST_NETNS_INO,
                                                .host_addresses = ARGV("198.51.100.7/32") },
                  -EINVAL, NO_NETNS, true },
        };
        const Refusal coding_table[] = {
                { "neither", { .argv = one }, -EINVAL, NO_NETNS, true },
                { "neither, mode named", { .argv = one, .network = "allowlist" }, -EINVAL, NO_NETNS, true },
                { "no run id", { .argv = one, .netns_path = (char *) NETNS }, -EINVAL, NO_NETNS, true },
                { "no path", { .argv = one, .run_id = (char *) RUN_ID }, -EINVAL, NO_NETNS, true },
        };
        RunRequest none = { .argv = one, .network = "none" }, plain = { .argv = one };

        assert_int_equal(check_refusals(browser, table, ELEMENTSOF(table)), 0);
        assert_int_equal(check_refusals(coding, coding_table, ELEMENTSOF(coding_table)), 0);
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(coding, &none);

                assert_no_net_unit(plan);
        }
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(browser, &none);

                assert_no_net_unit(plan);
        }
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(offline, &plain);

                assert_no_net_unit(plan);
        }
}

/* Arguments: what execve() takes under the request's stack limit (command.h), nothing else. */
static void test_refuse_too_many_args(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        _cleanup_free_ char **argv = calloc(20002, sizeof(char *));
        _cleanup_free_ char *e = NULL;
        RunRequest req = { .argv = argv };

        assert_non_null(argv);
        /* 20001 arguments, once refused (4096 at most), are fine */
        for (size_t i = 0; i < 20001; i++)
                argv[i] = "a";
        assert_int_equal(run_request_validate(p, &req, NULL), 0);
        /* with a stack limit of 1M, ARG_MAX is 256K: 20001 * (2 + 8) bytes are 200010 */
        req.stack_limit = 1024 * 1024;
        assert_int_equal(run_request_validate(p, &req, NULL), 0);
        req.stack_limit = 512 * 1024; /* 128K: the kernel's least */
        assert_int_equal(run_request_validate(p, &req, &e), -E2BIG);
        assert_non_null(strstr(e, "command: 20001 arguments and 0 environment entries take 200010 bytes, more than "
                                  "execve() takes here (ARG_MAX: 122880 bytes"));
}

static void test_refuse_environment(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        _cleanup_free_ char *e = NULL;
        RunRequest req = { .argv = ARGV("env"), .env = ARGV("CI=1", "LANG=C.UTF-8", "V=\xff\xfe") };

        assert_int_equal(run_request_validate(p, &req, NULL), 0);
        req.env = ARGV("CI=1", "LD_PRELOAD=/tmp/x.so");
        assert_int_equal(run_request_validate(p, &req, &e), -EPERM);
        assert_string_equal(e, "environment: profile 'offline' does not let a run set 'LD_PRELOAD' "
                               "(environment.allow, environment.deny)");
        e = mfree(e);
        req.env = ARGV("=x");
        assert_int_equal(run_request_validate(p, &req, &e), -EINVAL);
        assert_non_null(strstr(e, "environment: entry 0 is not NAME=VALUE"));
        /* a sandbox's commands get theirs with each exec */
        e = mfree(e);
        req = (RunRequest) { .sandbox = true, .env = ARGV("CI=1") };
        assert_int_equal(run_request_validate(p, &req, &e), -EINVAL);
        assert_string_equal(e, "environment: a sandbox's commands are given theirs with exec");
}

/* ---- syscall rules, slice ---- */

static void test_rules(void **state) {
        _cleanup_(profile_freep) Profile *p = profile_offline();
        RunRequest req = { .argv = ARGV("true") };
        const SyscallRule *base;
        size_t n_base;

        base = policy_baseline_rules(&n_base);
        assert_int_equal(n_base, 3);
        assert_string_equal(base[0].syscall, "ioctl");
        assert_int_equal(base[0].nr, __NR_ioctl);
        assert_true(base[0].has_arg);
        assert_int_equal(base[0].arg, 1);
        assert_int_equal(base[0].cmp, SYSCALL_CMP_EQ);
        assert_int_equal(base[0].value, TIOCSTI);
        assert_true(base[0].arg32);
        assert_string_equal(base[0].value_name, "TIOCSTI");
        assert_string_equal(base[1].syscall, "ioctl");
        assert_int_equal(base[1].nr, __NR_ioctl);
        assert_true(base[1].has_arg);
        assert_int_equal(base[1].arg, 1);
        assert_int_equal(base[1].cmp, SYSCALL_CMP_EQ);
        assert_int_equal(base[1].value, TIOCLINUX);
        assert_true(base[1].arg32);
        assert_string_equal(base[1].value_name, "TIOCLINUX");
        assert_string_equal(base[2].syscall, "io_uring_setup");
        assert_int_equal(base[2].nr, __NR_io_uring_setup);
        assert_false(base[2].has_arg);

        /* a profile without rules: the baseline alone */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

                assert_int_equal(plan->n_rules, n_base);
                assert_memory_equal(plan->rules, base, n_base * sizeof(SyscallRule));
        }

        /* the profile's rules follow the baseline */
        p->rules = calloc(2, sizeof(SyscallRule));
        assert_non_null(p->rules);
        p->rules[0] = (SyscallRule) { .syscall = xstrdup("personality"), .nr = __NR_personality, .has_arg = true,
                                      .arg = 0, .cmp = SYSCALL_CMP_NE, .value = 0 };
        p->rules[1] = (SyscallRule) { .syscall = xstrdup("ioctl"), .nr = __NR_ioctl, .has_arg = true, .arg = 1,
                                      .cmp = SYSCALL_CMP_MASKED_EQ, .value = 0x5400, .mask = 0xff00, .arg32 = true };
        p->n_rules = 2;
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(p, &req);

                assert_int_equal(plan->n_rules, n_base + 2);
                assert_memory_equal(plan->rules, base, n_base * sizeof(SyscallRule));
                assert_memory_equal(plan->rules + n_base, p->rules, 2 * sizeof(SyscallRule));
                assert_string_equal(plan->rules[n_base].syscall, "personality");
                assert_int_equal(plan->rules[n_base + 1].mask, 0xff00);
        }
}

static void test_slice(void **state) {
        _cleanup_(profile_freep) Profile *offline = profile_offline(), *coding = profile_coding(true);
        _cleanup_(prop_table_freep) PropTable *t = NULL;
        _cleanup_free_ char *text = NULL;

        assert_int_equal(policy_compile_slice(offline, &t), 0);
        assert_non_null(t);
        assert_int_equal(t->n, 0);
        text = render(t);
        assert_string_equal(text, "");
        t = prop_table_free(t);
        text = mfree(text);

        assert_int_equal(policy_compile_slice(coding, &t), 0);
        text = render(t);
        assert_string_equal(text, "MemoryMax=8589934592\nTasksMax=4096\n");
        t = prop_table_free(t);
        text = mfree(text);

        coding->slice_cpu_quota_percent = 400;
        assert_int_equal(policy_compile_slice(coding, &t), 0);
        text = render(t);
        assert_string_equal(text, "MemoryMax=8589934592\nTasksMax=4096\nCPUQuota=400%\n");
        t = prop_table_free(t);
        text = mfree(text);

        coding->slice_memory_max = coding->slice_tasks_max = 0;
        assert_int_equal(policy_compile_slice(coding, &t), 0);
        text = render(t);
        assert_string_equal(text, "CPUQuota=400%\n");
}

/* ---- the shipped profiles ---- */

static void test_shipped_profiles(void **state) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *dir = NULL;
        _cleanup_strv_free_ char **names = NULL, **paths = NULL, **ignored = NULL;
        char *dirs[2] = {};

        if (isempty(root)) {
                print_message("SBX_SOURCE_ROOT is not set: cannot find the shipped profiles\n");
                skip();
        }
        assert_int_equal(asprintf(&dir, "%s/profiles", root), (int) strlen(root) + 9);
        dirs[0] = dir;

        assert_int_equal(profile_enumerate(dirs, &names, &paths, &ignored), 0);
        assert_strv_equal(names, ARGV("browser", "coding", "data", "offline", "untrusted"));
        assert_int_equal(strv_length(ignored), 0);

        for (size_t i = 0; names[i]; i++) {
                _cleanup_(profile_freep) Profile *p = NULL;
                _cleanup_(prop_table_freep) PropTable *fixed = NULL, *slice = NULL;
                _cleanup_free_ char *e = NULL, *ft = NULL, *st = NULL;
                RunRequest req = { .argv = ARGV("true"), NETNS_REQ }, none = { .argv = ARGV("true"), .network = "none" },
                           bare = { .argv = ARGV("true") };
                RunPlan *plan = NULL;
                int r;

                r = profile_load(dirs, names[i], &p, &e);
                if (r < 0)
                        fail_msg("profile_load(%s): %d %s", names[i], r, strna(e));
                assert_string_equal(p->name, names[i]);
                assert_string_equal(p->path, paths[i]);
                assert_int_equal(strlen(p->digest), 71);
                assert_memory_equal(p->digest, "sha256:", 7);

                /* every table renders (no value the renderers cannot name) */
                assert_int_equal(policy_compile_fixed(p, &fixed), 0);
                ft = render(fixed);
                assert_keys_unique(ft);
                assert_int_equal(policy_compile_slice(p, &slice), 0);
                st = render(slice);

                /* without the namespace sbxd prepares, only the offline profiles compile */
                if (p->network != NETWORK_NONE) {
                        _cleanup_free_ char *ne = NULL;

                        plan = (RunPlan *) 0x1;
                        assert_int_equal(policy_compile(p, &bare, EXEC_PATH, &plan, &ne), -EINVAL);
                        assert_string_equal(ne, NO_NETNS);
                        assert_ptr_equal(plan, (RunPlan *) 0x1);
                        plan = NULL;
                        /* narrowed to none they do (both offer it) */
                        r = policy_compile(p, &none, EXEC_PATH, &plan, &ne);
                        if (r < 0)
                                fail_msg("policy_compile(%s, none): %d %s", names[i], r, strna(ne));
                        assert_no_net_unit(plan);
                        plan = run_plan_free(plan);
                }

                r = policy_compile(p, &req, EXEC_PATH, &plan, &e);
                if (r < 0)
                        fail_msg("policy_compile(%s): %d %s", names[i], r, strna(e));
                {
                        _cleanup_(run_plan_freep) RunPlan *pl = plan;
                        _cleanup_free_ char *pt = render(pl->props);
                        _cleanup_free_ char *digest_opt = NULL;

                        assert_keys_unique(pt);
                        if (req.run_id) /* its own cgroup is bound back */
                                assert_fixed_lines_in(pt, ft);
                        else
                                assert_true(strneq(pt, ft, strlen(ft)));
                        assert_int_equal(asprintf(&digest_opt, "--expect-profile-digest=%s", p->digest), 24 + 71);
                        assert_true(strv_contains(pl->exec_argv, digest_opt));
                        if (streq(p->name, "browser") || streq(p->name, "coding")) {
                                assert_int_equal(p->network, streq(p->name, "browser") ? NETWORK_PUBLIC : NETWORK_ALLOWLIST);
                                assert_int_equal(pl->network, p->network);
                                assert_non_null(prop_table_get(pl->props, "IPAddressDeny"));
                                assert_strv_equal(get(pl, "IPAddressAllow")->strv, ARGV("127.0.0.0/8", "::1/128"));
                                assert_null(prop_table_get(pl->props, "PrivateNetwork"));
                                assert_string_equal(get(pl, "NetworkNamespacePath")->s, NETNS);
                                assert_non_null(pl->net_props);
                                assert_true(strv_contains(pl->exec_argv, "--expect-network=egress"));
                        } else {
                                assert_true(get(pl, "PrivateNetwork")->b);
                                assert_true(strv_contains(pl->exec_argv, "--expect-network=none"));
                                assert_no_net_unit(pl);
                        }
                        assert_true(strv_contains(pl->exec_argv, "--expect-egress"));
                        if (streq(p->name, "browser")) {
                                assert_true(strv_contains(pl->exec_argv, "--output-max=67108864"));
                                assert_string_equal(st, "MemoryMax=8589934592\n");
                        }
                        if (streq(p->name, "offline")) {
                                assert_int_equal(p->memory_max, 2ULL << 30);
                                assert_int_equal(p->tasks_max, 512);
                                assert_int_equal(p->runtime_max, 3600 * USEC_PER_SEC);
                                assert_true(p->workspace);
                                assert_null(p->request.dataset_under);
                                assert_string_equal(st, "");
                        }
                        if (streq(p->name, "coding")) {
                                assert_int_equal(p->n_caches, 4);
                                assert_string_equal(st, "MemoryMax=8589934592\nTasksMax=4096\n");
                        }
                }

                if (streq(p->name, "data")) {
                        RunRequest ds = { .argv = ARGV("true"), .dataset = "/srv/datasets/x",
                                          .workspace = "/home/user/out" };
                        _cleanup_(run_plan_freep) RunPlan *pl = compile_ok(p, &ds);
                        const Prop *b = get(pl, "BindReadOnlyPaths");
                        size_t n = strv_length(b->strv);

                        assert_true(n >= 2);
                        assert_string_equal(b->strv[n - 2], "/srv/datasets/x");
                        assert_string_equal(b->strv[n - 1], SBX_DATASET);
                } else {
                        RunRequest ds = { .argv = ARGV("true"), .dataset = "/srv/datasets/x" };
                        _cleanup_free_ char *de = NULL;

                        assert_int_equal(run_request_validate(p, &ds, &de), -EPERM);
                        assert_non_null(de);
                }
        }
}

static void test_free_null(void **state) {
        RunRequest *req = calloc(1, sizeof(RunRequest));

        assert_null(run_request_free(NULL));
        assert_null(run_plan_free(NULL));
        assert_null(profile_free(NULL));

        /* a request as sbxd fills it: every field owned */
        assert_non_null(req);
        req->profile = xstrdup("offline");
        req->workspace = xstrdup("/home/user/p");
        req->dataset = xstrdup("/srv/d");
        req->argv = xstrv_copy(ARGV("true"));
        req->network = xstrdup("none");
        req->term = xstrdup("xterm");
        req->cache_owner = xstrdup(TENANT);
        req->busy_caches = xstrv_copy(ARGV("pip"));
        req->host_addresses = xstrv_copy(ARGV("198.51.100.7/32"));
        req->run_id = xstrdup(RUN_ID);
        req->netns_path = xstrdup(NETNS);
        assert_null(run_request_free(req));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_profile_name_is_valid),
                cmocka_unit_test(test_unit_names),
                cmocka_unit_test(test_compile_default),
                cmocka_unit_test(test_compile_no_duplicates),
                cmocka_unit_test(test_compile_own_cgroup),
                cmocka_unit_test(test_space),
                cmocka_unit_test(test_compile_workspace),
                cmocka_unit_test(test_compile_expect_dirs),
                cmocka_unit_test(test_memory_page_rounding),
                cmocka_unit_test(test_compile_term),
                cmocka_unit_test(test_credentials),
                cmocka_unit_test(test_broker_grants),
                cmocka_unit_test(test_exec_argv),
                cmocka_unit_test(test_exec_argv_public),
                cmocka_unit_test(test_run_plan_add_exec_option),
                cmocka_unit_test(test_compile_tighten),
                cmocka_unit_test(test_compile_no_cpu_quota),
                cmocka_unit_test(test_compile_limits_at_edges),
                cmocka_unit_test(test_digest),
                cmocka_unit_test(test_network_allowlist),
                cmocka_unit_test(test_network_narrowed_none),
                cmocka_unit_test(test_network_unit),
                cmocka_unit_test(test_sandbox_plan),
                cmocka_unit_test(test_gvisor_plan),
                cmocka_unit_test(test_pool_plan),
                cmocka_unit_test(test_compile_unenforced),
                cmocka_unit_test(test_network_netns_not),
                cmocka_unit_test(test_network_modes),
                cmocka_unit_test(test_network_public),
                cmocka_unit_test(test_network_fixed),
                cmocka_unit_test(test_fixed_prefix_of_plan),
                cmocka_unit_test(test_identity),
                cmocka_unit_test(test_fixed_files_and_kernel),
                cmocka_unit_test(test_caches),
                cmocka_unit_test(test_landlock_options),
                cmocka_unit_test(test_network_host_addresses),
                cmocka_unit_test(test_dataset),
                cmocka_unit_test(test_refuse_profile_and_command),
                cmocka_unit_test(test_refuse_workspace),
                cmocka_unit_test(test_workspace_accepted),
                cmocka_unit_test(test_refuse_term),
                cmocka_unit_test(test_refuse_loosening),
                cmocka_unit_test(test_refuse_below_min),
                cmocka_unit_test(test_refuse_not_allowed),
                cmocka_unit_test(test_refuse_too_little),
                cmocka_unit_test(test_refuse_dataset),
                cmocka_unit_test(test_refuse_no_netns),
                cmocka_unit_test(test_refuse_too_many_args),
                cmocka_unit_test(test_refuse_environment),
                cmocka_unit_test(test_rules),
                cmocka_unit_test(test_slice),
                cmocka_unit_test(test_shipped_profiles),
                cmocka_unit_test(test_free_null),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
