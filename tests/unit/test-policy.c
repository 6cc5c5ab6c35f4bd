/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy + profile: run-request validation and compilation into a property table and the exec helper's
 * command line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy.h"
#include "profile.h"
#include "unit-test.h"

#define EXEC_PATH "/usr/libexec/sbx/sbx-exec"

#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

static RunPlan *compile_ok(const RunRequest *req) {
        RunPlan *plan = NULL;
        char *error = NULL;
        int r;

        r = policy_compile(req, EXEC_PATH, &plan, &error);
        if (r < 0)
                fail_msg("policy_compile() failed: %d %s", r, strna(error));
        assert_null(error);
        assert_non_null(plan);
        return plan;
}

static const Prop *get(const RunPlan *plan, const char *name) {
        const Prop *p = prop_table_get(plan->props, name);

        if (!p)
                fail_msg("property %s missing", name);
        return p;
}

static void assert_strv_equal(char **a, char **b) {
        size_t i;

        assert_non_null(a);
        for (i = 0; a[i] && b[i]; i++)
                assert_string_equal(a[i], b[i]);
        assert_null(a[i]);
        assert_null(b[i]);
}

/* ---- profiles ---- */

static void test_profiles(void **state) {
        const Profile *const *l = profile_list();
        const Profile *p;

        assert_non_null(l);
        assert_non_null(l[0]);
        assert_string_equal(l[0]->name, PROFILE_DEFAULT);

        p = profile_find("offline");
        assert_non_null(p);
        assert_ptr_equal(p, l[0]);
        assert_int_equal(p->memory_max, 2ULL << 30);
        assert_int_equal(p->tasks_max, 512);
        assert_int_equal(p->runtime_max, 3600 * USEC_PER_SEC);
        assert_false(p->network);

        assert_null(profile_find("Offline"));
        assert_null(profile_find("online"));
        assert_null(profile_find(""));
        assert_null(profile_find(NULL));
}

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

/* ---- compilation ---- */

static void test_compile_default(void **state) {
        RunRequest req = { .argv = ARGV((char *) "make", (char *) "-j4") };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);
        const Profile *profile = profile_find(PROFILE_DEFAULT);
        char digest[72];
        const Prop *p;

        assert_ptr_equal(plan->profile, profile);

        /* booleans that must be on */
        static const char *const on[] = {
                "DynamicUser", "NoNewPrivileges", "RestrictSUIDSGID", "PrivateTmp", "PrivateDevices", "PrivateIPC",
                "PrivateNetwork", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
                "ProtectControlGroups", "ProtectClock", "ProtectHostname", "RestrictRealtime", "LockPersonality",
                "SendSIGKILL",
        };
        for (size_t i = 0; i < ELEMENTSOF(on); i++) {
                p = get(plan, on[i]);
                if (!p->b)
                        fail_msg("%s is not yes", on[i]);
        }

        assert_string_equal(get(plan, "Type")->s, "exec");
        assert_string_equal(get(plan, "ProtectSystem")->s, "strict");
        assert_string_equal(get(plan, "ProtectHome")->s, "tmpfs");
        assert_string_equal(get(plan, "ProtectProc")->s, "invisible");
        assert_string_equal(get(plan, "KillMode")->s, "control-group");
        assert_string_equal(get(plan, "OOMPolicy")->s, "stop");
        assert_string_equal(get(plan, "NotifyAccess")->s, "main");
        assert_string_equal(get(plan, "CollectMode")->s, "inactive-or-failed");

        /* no capabilities at all, every namespace type restricted */
        assert_int_equal(get(plan, "CapabilityBoundingSet")->u, 0);
        assert_int_equal(get(plan, "AmbientCapabilities")->u, 0);
        assert_int_equal(get(plan, "RestrictNamespaces")->u, 0);
        assert_int_equal(get(plan, "SystemCallErrorNumber")->i, EPERM);
        assert_strv_equal(get(plan, "SystemCallFilter")->strv, ARGV((char *) "@system-service"));
        assert_strv_equal(get(plan, "SystemCallArchitectures")->strv, ARGV((char *) "native"));

        /* resources: the profile's ceiling */
        assert_int_equal(get(plan, "MemoryMax")->u, profile->memory_max);
        assert_int_equal(get(plan, "MemorySwapMax")->u, 0);
        assert_int_equal(get(plan, "TasksMax")->u, profile->tasks_max);
        assert_int_equal(get(plan, "RuntimeMaxSec")->u, profile->runtime_max);
        assert_int_equal(get(plan, "CPUQuota")->u, (uint64_t) profile->cpu_quota_percent * 10000);
        assert_int_equal(get(plan, "LimitCORE")->u, 0);
        assert_int_equal(get(plan, "UMask")->u, 0022);

        /* a clean environment: exactly these three */
        assert_strv_equal(get(plan, "Environment")->strv,
                          ARGV((char *) "HOME=/home/sbx", (char *) "PATH=/usr/local/bin:/usr/bin:/bin",
                               (char *) "LANG=C.UTF-8"));

        /* HOME is a tmpfs of the profile's size; no host directory is bound read-write */
        assert_strv_equal(get(plan, "TemporaryFileSystem")->strv,
                          ARGV((char *) "/run", (char *) "ro,mode=0755,nosuid,nodev,noexec", (char *) "/home/sbx",
                               (char *) "mode=0777,nosuid,nodev,size=1073741824"));
        assert_null(prop_table_get(plan->props, "BindPaths"));

        /* the digest names exactly this table */
        assert_int_equal(prop_table_digest(plan->props, digest), 0);
        assert_string_equal(plan->digest, digest);
}

/* Every property at most once: a second assignment would silently win or merge in systemd. */
static void test_compile_no_duplicates(void **state) {
        RunRequest req = { .argv = ARGV((char *) "true"), .workspace = (char *) "/home/user/project",
                           .term = (char *) "xterm" };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

        for (size_t i = 0; i < plan->props->n; i++)
                for (size_t j = i + 1; j < plan->props->n; j++)
                        if (plan->props->props[i].def == plan->props->props[j].def)
                                fail_msg("%s appears twice", plan->props->props[i].def->name);
}

static void test_compile_workspace(void **state) {
        RunRequest req = { .argv = ARGV((char *) "make"), .workspace = (char *) "/home/user/project" };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

        assert_strv_equal(get(plan, "BindPaths")->strv,
                          ARGV((char *) "/home/user/project", (char *) "/home/sbx/workspace"));
        assert_string_equal(plan->exec_argv[4], "--workspace=bound");
}

static void test_compile_term(void **state) {
        RunRequest req = { .argv = ARGV((char *) "vi"), .term = (char *) "xterm-256color" };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

        assert_strv_equal(get(plan, "Environment")->strv,
                          ARGV((char *) "HOME=/home/sbx", (char *) "PATH=/usr/local/bin:/usr/bin:/bin",
                               (char *) "LANG=C.UTF-8", (char *) "TERM=xterm-256color"));
}

static void test_exec_argv(void **state) {
        /* The command is passed on unchanged, including things that look like options. */
        char *cmd[] = { (char *) "sh", (char *) "-c", (char *) "echo \"$1\"", (char *) "--", (char *) "",
                        (char *) "--expect-network=host", (char *) "two words", NULL };
        RunRequest req = { .argv = cmd };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

        assert_strv_equal(plan->exec_argv,
                          ARGV((char *) EXEC_PATH, (char *) "--expect-memory-max=2147483648",
                               (char *) "--expect-tasks-max=512", (char *) "--expect-network=none",
                               (char *) "--workspace=private", (char *) "--", (char *) "sh", (char *) "-c",
                               (char *) "echo \"$1\"", (char *) "--", (char *) "", (char *) "--expect-network=host",
                               (char *) "two words"));
        /* copies, not the request's strings */
        assert_ptr_not_equal(plan->exec_argv[6], cmd[0]);
}

/* A request may tighten the profile's limits; they then show in the table and in the helper's
 * expectations. */
static void test_compile_tighten(void **state) {
        RunRequest req = { .argv = ARGV((char *) "true"), .memory_max = 512ULL << 20, .tasks_max = 16,
                           .runtime_max = 90 * USEC_PER_SEC };
        _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);
        _cleanup_free_ char *text = NULL;

        assert_int_equal(get(plan, "MemoryMax")->u, 512ULL << 20);
        assert_int_equal(get(plan, "TasksMax")->u, 16);
        assert_int_equal(get(plan, "RuntimeMaxSec")->u, 90 * USEC_PER_SEC);
        assert_string_equal(plan->exec_argv[1], "--expect-memory-max=536870912");
        assert_string_equal(plan->exec_argv[2], "--expect-tasks-max=16");

        assert_int_equal(prop_table_render_text(plan->props, &text), 0);
        assert_non_null(strstr(text, "\nMemoryMax=536870912\n"));
        assert_non_null(strstr(text, "\nTasksMax=16\n"));
        assert_non_null(strstr(text, "\nRuntimeMaxSec=90s\n"));
}

/* The ceiling itself and the smallest accepted values. */
static void test_compile_limits_at_edges(void **state) {
        static const struct {
                uint64_t memory, tasks;
                usec_t runtime;
        } table[] = {
                { 2ULL << 30, 512, 3600 * USEC_PER_SEC },
                { 4ULL << 20, 2, 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                RunRequest req = { .argv = ARGV((char *) "true"), .memory_max = table[i].memory,
                                   .tasks_max = table[i].tasks, .runtime_max = table[i].runtime };
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

                assert_int_equal(get(plan, "MemoryMax")->u, table[i].memory);
                assert_int_equal(get(plan, "TasksMax")->u, table[i].tasks);
                assert_int_equal(get(plan, "RuntimeMaxSec")->u, table[i].runtime);
        }
}

static void test_digest(void **state) {
        RunRequest a = { .argv = ARGV((char *) "true") }, b = { .argv = ARGV((char *) "other", (char *) "cmd") },
                   ws = { .argv = ARGV((char *) "true"), .workspace = (char *) "/home/user/p" },
                   mem = { .argv = ARGV((char *) "true"), .memory_max = 1ULL << 30 };
        _cleanup_(run_plan_freep) RunPlan *pa = compile_ok(&a), *pb = compile_ok(&b), *pws = compile_ok(&ws),
                                          *pmem = compile_ok(&mem);

        assert_int_equal(strlen(pa->digest), 71);
        assert_memory_equal(pa->digest, "sha256:", 7);
        /* The command is not part of the policy. */
        assert_string_equal(pa->digest, pb->digest);
        assert_string_not_equal(pa->digest, pws->digest);
        assert_string_not_equal(pa->digest, pmem->digest);
        assert_string_not_equal(pws->digest, pmem->digest);
}

/* ---- refusals ---- */

typedef struct Refusal {
        const char *what;
        RunRequest req;
        int r;
        const char *message;
} Refusal;

static unsigned check_refusals(const Refusal *table, size_t n) {
        unsigned failures = 0;

        for (size_t i = 0; i < n; i++) {
                RunPlan *plan = (RunPlan *) 0x1;
                _cleanup_free_ char *e1 = NULL, *e2 = NULL;
                int r1, r2;

                r1 = run_request_validate(&table[i].req, &e1);
                r2 = policy_compile(&table[i].req, EXEC_PATH, &plan, &e2);
                if (table[i].r == 0) /* policy_compile only: validation must pass */
                        check_row(failures, r1 == 0 && !e1, "%s: validate -> %d '%s'", table[i].what, r1, strna(e1));
                else
                        check_row(failures, r1 == table[i].r && streq_ptr(e1, table[i].message),
                                  "%s: validate -> %d '%s', expected %d '%s'", table[i].what, r1, strna(e1),
                                  table[i].r, table[i].message);
                check_row(failures, r2 == (table[i].r ?: -EPERM) && streq_ptr(e2, table[i].message),
                          "%s: compile -> %d '%s', expected %d '%s'", table[i].what, r2, strna(e2),
                          table[i].r ?: -EPERM, table[i].message);
                check_row(failures, plan == (RunPlan *) 0x1, "%s: *ret set on failure", table[i].what);
                /* without ret_error, same result */
                r1 = run_request_validate(&table[i].req, NULL);
                check_row(failures, r1 == table[i].r, "%s: validate(NULL) -> %d", table[i].what, r1);
        }
        return failures;
}

static void test_refuse_profile_and_command(void **state) {
        static char *one[] = { (char *) "true", NULL };
        static char *empty_name[] = { (char *) "", (char *) "x", NULL };
        static char *none[] = { NULL };
        const Refusal table[] = {
                { "unknown profile", { .profile = (char *) "nosuch", .argv = one }, -ENOENT,
                  "profile: no profile named 'nosuch'" },
                { "upper-case profile", { .profile = (char *) "Offline", .argv = one }, -EINVAL,
                  "profile: 'Offline' is not a valid profile name" },
                { "empty profile", { .profile = (char *) "", .argv = one }, -EINVAL,
                  "profile: '' is not a valid profile name" },
                { "path as profile", { .profile = (char *) "../offline", .argv = one }, -EINVAL,
                  "profile: '../offline' is not a valid profile name" },
                { "no argv", { .argv = NULL }, -EINVAL, "command: no command given" },
                { "empty argv", { .argv = none }, -EINVAL, "command: no command given" },
                { "empty argv[0]", { .argv = empty_name }, -EINVAL, "command: the command name is empty" },
        };

        assert_int_equal(check_refusals(table, ELEMENTSOF(table)), 0);
}

static void test_refuse_workspace(void **state) {
        static char *one[] = { (char *) "true", NULL };
#define NOT_NORMALIZED(w) { "workspace " w, { .workspace = (char *) w, .argv = one }, -EINVAL, \
                            "workspace: '" w "' is not a normalized absolute path" }
#define BAD_CHAR(w) { "workspace " w, { .workspace = (char *) w, .argv = one }, -EINVAL, \
                      "workspace: '" w "' contains a character sbx does not accept (: \" \\ or white space)" }
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
                BAD_CHAR("/home/user/a\"b"),
                BAD_CHAR("/home/user/a\\b"),
                BAD_CHAR("/home/user/a\tb"),
                BAD_CHAR("/home/user/a\nb"),
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

        assert_int_equal(check_refusals(table, ELEMENTSOF(table)), 0);
}

/* Directories that only share a prefix with a system directory, or that live below /home, /var or /tmp,
 * are fine. */
static void test_workspace_accepted(void **state) {
        static const char *const ok[] = {
                "/home/user", "/home/user/project", "/tmp/work", "/var/tmp/build", "/srv/data", "/opt/src",
                "/etcetera", "/usr2", "/homes/x", "/rooted", "/devel/x", "/library",
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                RunRequest req = { .argv = ARGV((char *) "true"), .workspace = (char *) ok[i] };
                _cleanup_free_ char *e = NULL;
                int r = run_request_validate(&req, &e);

                check_row(failures, r == 0 && !e, "'%s' -> %d '%s'", ok[i], r, strna(e));
        }
        assert_int_equal(failures, 0);
}

static void test_refuse_term(void **state) {
        static char *one[] = { (char *) "true", NULL };
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

        assert_int_equal(check_refusals(table, ELEMENTSOF(table)), 0);
        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                RunRequest req = { .argv = ARGV((char *) "true"), .term = (char *) ok[i] };
                int r = run_request_validate(&req, NULL);

                check_row(failures, r == 0, "'%s' -> %d", ok[i], r);
        }
        assert_int_equal(failures, 0);
}

/* A request may not loosen the profile: above the ceiling is refused naming the limit. */
static void test_refuse_loosening(void **state) {
        static char *one[] = { (char *) "true", NULL };
        /* r == 0 in this table means "validation passes, compilation refuses with -EPERM" */
        const Refusal table[] = {
                { "memory above", { .argv = one, .memory_max = 3ULL << 30 }, 0,
                  "memory: 3221225472 is above the limit of profile 'offline' (2147483648)" },
                { "memory one byte above", { .argv = one, .memory_max = (2ULL << 30) + 1 }, 0,
                  "memory: 2147483649 is above the limit of profile 'offline' (2147483648)" },
                { "memory infinity", { .argv = one, .memory_max = UINT64_MAX }, 0,
                  "memory: 18446744073709551615 is above the limit of profile 'offline' (2147483648)" },
                { "tasks above", { .argv = one, .tasks_max = 513 }, 0,
                  "tasks: 513 is above the limit of profile 'offline' (512)" },
                { "timeout above", { .argv = one, .runtime_max = 7200 * USEC_PER_SEC }, 0,
                  "timeout: 7200s is above the limit of profile 'offline' (3600s)" },
        };

        assert_int_equal(check_refusals(table, ELEMENTSOF(table)), 0);
}

static void test_refuse_too_little(void **state) {
        char *one[] = { (char *) "true", NULL };
        RunRequest mem = { .argv = one, .memory_max = (4ULL << 20) - 1 }, tasks = { .argv = one, .tasks_max = 1 };
        _cleanup_free_ char *e1 = NULL, *e2 = NULL;
        RunPlan *plan = NULL;

        assert_int_equal(policy_compile(&mem, EXEC_PATH, &plan, &e1), -EINVAL);
        assert_string_equal(e1, "memory: 4194303 bytes is too little to start anything (at least 4M)");
        assert_int_equal(policy_compile(&tasks, EXEC_PATH, &plan, &e2), -EINVAL);
        assert_string_equal(e2, "tasks: at least 2 are needed (the helper and the command)");
        assert_null(plan);
}

static void test_refuse_too_many_args(void **state) {
        char **argv = calloc(SBX_ARGV_MAX_ARGS + 2, sizeof(char *));
        _cleanup_free_ char *e = NULL;
        RunRequest req = { .argv = argv };

        assert_non_null(argv);
        for (size_t i = 0; i < SBX_ARGV_MAX_ARGS; i++)
                argv[i] = (char *) "a";
        /* exactly the limit: fine, and passed on whole */
        {
                _cleanup_(run_plan_freep) RunPlan *plan = compile_ok(&req);

                assert_int_equal(strv_length(plan->exec_argv), 6 + SBX_ARGV_MAX_ARGS);
        }
        argv[SBX_ARGV_MAX_ARGS] = (char *) "a";
        assert_int_equal(run_request_validate(&req, &e), -E2BIG);
        assert_string_equal(e, "command: 4097 arguments, at most 4096 allowed");
        free(argv);
}

static void test_refuse_too_long_args(void **state) {
        /* "cat" + NUL = 4 bytes; the second argument fills up to the limit (its NUL counted). */
        size_t fill = SBX_ARGV_MAX_BYTES - 4 - 1;
        char *big = malloc(fill + 2);
        _cleanup_free_ char *e = NULL;
        RunRequest req = { .argv = ARGV((char *) "cat", big) };

        assert_non_null(big);
        memset(big, 'x', fill + 1);
        big[fill] = 0;
        assert_int_equal(run_request_validate(&req, NULL), 0);

        big[fill] = 'x';
        big[fill + 1] = 0;
        assert_int_equal(run_request_validate(&req, &e), -E2BIG);
        assert_string_equal(e, "command: 262145 bytes of arguments, at most 262144 allowed");
        free(big);
}

static void test_free_null(void **state) {
        assert_null(run_request_free(NULL));
        assert_null(run_plan_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_profiles),
                cmocka_unit_test(test_profile_name_is_valid),
                cmocka_unit_test(test_compile_default),
                cmocka_unit_test(test_compile_no_duplicates),
                cmocka_unit_test(test_compile_workspace),
                cmocka_unit_test(test_compile_term),
                cmocka_unit_test(test_exec_argv),
                cmocka_unit_test(test_compile_tighten),
                cmocka_unit_test(test_compile_limits_at_edges),
                cmocka_unit_test(test_digest),
                cmocka_unit_test(test_refuse_profile_and_command),
                cmocka_unit_test(test_refuse_workspace),
                cmocka_unit_test(test_workspace_accepted),
                cmocka_unit_test(test_refuse_term),
                cmocka_unit_test(test_refuse_loosening),
                cmocka_unit_test(test_refuse_too_little),
                cmocka_unit_test(test_refuse_too_many_args),
                cmocka_unit_test(test_refuse_too_long_args),
                cmocka_unit_test(test_free_null),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
