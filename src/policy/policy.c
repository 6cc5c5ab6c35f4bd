/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "policy.h"

RunRequest *run_request_free(RunRequest *r) {
        if (!r)
                return NULL;
        free(r->profile);
        free(r->workspace);
        strv_free(r->argv);
        free(r->term);
        free(r);
        return NULL;
}

RunPlan *run_plan_free(RunPlan *p) {
        if (!p)
                return NULL;
        prop_table_free(p->props);
        strv_free(p->exec_argv);
        strv_free(p->pre_argv);
        strv_free(p->post_argv);
        free(p);
        return NULL;
}

_printf_(3, 4) static int refuse(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

static bool term_is_valid(const char *t) {
        size_t n = strlen(t);

        if (n == 0 || n > 64)
                return false;
        for (const char *c = t; *c; c++)
                if (!(isalnum((unsigned char) *c) || strchr("._+-", *c)))
                        return false;
        return true;
}

static const char *const forbidden_workspaces[] = {
        "/", "/proc", "/sys", "/dev", "/run", "/boot", "/etc", "/usr", "/var", "/bin", "/sbin", "/lib",
        "/lib64", "/home", "/root",
};

int run_request_validate(const RunRequest *req, char **ret_error) {
        const char *pname = req->profile ?: PROFILE_DEFAULT;
        size_t n = strv_length(req->argv), bytes = 0;

        if (!profile_name_is_valid(pname))
                return refuse(ret_error, -EINVAL, "profile: '%s' is not a valid profile name", pname);
        if (!profile_find(pname))
                return refuse(ret_error, -ENOENT, "profile: no profile named '%s'", pname);

        if (n == 0)
                return refuse(ret_error, -EINVAL, "command: no command given");
        if (n > SBX_ARGV_MAX_ARGS)
                return refuse(ret_error, -E2BIG, "command: %zu arguments, at most %u allowed", n, SBX_ARGV_MAX_ARGS);
        if (isempty(req->argv[0]))
                return refuse(ret_error, -EINVAL, "command: the command name is empty");
        for (size_t i = 0; i < n; i++)
                bytes += strlen(req->argv[i]) + 1;
        if (bytes > SBX_ARGV_MAX_BYTES)
                return refuse(ret_error, -E2BIG, "command: %zu bytes of arguments, at most %u allowed", bytes,
                              SBX_ARGV_MAX_BYTES);

        if (req->workspace) {
                if (!path_is_absolute_normalized(req->workspace))
                        return refuse(ret_error, -EINVAL, "workspace: '%s' is not a normalized absolute path",
                                      req->workspace);
                if (strpbrk(req->workspace, ":\"\\ \t\n"))
                        return refuse(ret_error, -EINVAL,
                                      "workspace: '%s' contains a character sbx does not accept (: \" \\ or white space)",
                                      req->workspace);
                for (size_t i = 0; i < ELEMENTSOF(forbidden_workspaces); i++) {
                        const char *f = forbidden_workspaces[i];
                        size_t l = strlen(f);

                        if (streq(req->workspace, f) ||
                            (!streq(f, "/") && !streq(f, "/home") && !streq(f, "/var") &&
                             strneq(req->workspace, f, l) && req->workspace[l] == '/'))
                                return refuse(ret_error, -EPERM, "workspace: '%s' is a system directory",
                                              req->workspace);
                }
        }

        if (req->term && !term_is_valid(req->term))
                return refuse(ret_error, -EINVAL, "term: '%s' is not a valid terminal name", req->term);
        return 0;
}

/* A request may only tighten the profile's ceiling. */
static int pick_limit(const char *what, const char *pname, uint64_t asked, uint64_t ceiling, uint64_t *ret,
                      char **ret_error) {
        if (asked == 0) {
                *ret = ceiling;
                return 0;
        }
        if (asked > ceiling)
                return refuse(ret_error, -EPERM, "%s: %" PRIu64 " is above the limit of profile '%s' (%" PRIu64 ")",
                              what, asked, pname, ceiling);
        *ret = asked;
        return 0;
}

static int handover_argv(const char *exec_path, const char *mode, const char *owner, const char *dir, char ***ret) {
        const char *v[] = { exec_path, mode, owner, "--", dir };
        char **l = calloc(ELEMENTSOF(v) + 1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                if (!(l[i] = strdup(v[i]))) {
                        strv_free(l);
                        return -ENOMEM;
                }
        *ret = l;
        return 0;
}

int policy_compile(const RunRequest *req, const char *exec_path, RunPlan **ret, char **ret_error) {
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        const Profile *p;
        uint64_t memory = 0, tasks = 0, runtime;
        _cleanup_free_ char *tmpfs_opts = NULL, *a_mem = NULL, *a_tasks = NULL, *a_net = NULL;
        char *env[5] = { (char *) "HOME=" SBX_HOME, (char *) "PATH=/usr/local/bin:/usr/bin:/bin",
                         (char *) "LANG=C.UTF-8", NULL, NULL };
        _cleanup_free_ char *term_env = NULL;
        PropTable *t;
        size_t n_argv, i;
        int r;

        r = run_request_validate(req, ret_error);
        if (r < 0)
                return r;
        p = profile_find(req->profile ?: PROFILE_DEFAULT);

        r = pick_limit("memory", p->name, req->memory_max, p->memory_max, &memory, ret_error);
        if (r < 0)
                return r;
        r = pick_limit("tasks", p->name, req->tasks_max, p->tasks_max, &tasks, ret_error);
        if (r < 0)
                return r;
        if (req->runtime_max > p->runtime_max) {
                char frac[16] = "";

                if (req->runtime_max % USEC_PER_SEC != 0)
                        snprintf(frac, sizeof(frac), ".%06" PRIu64, req->runtime_max % USEC_PER_SEC);
                return refuse(ret_error, -EPERM, "timeout: %" PRIu64 "%ss is above the limit of profile '%s' (%" PRIu64 "s)",
                              req->runtime_max / USEC_PER_SEC, frac, p->name, p->runtime_max / USEC_PER_SEC);
        }
        runtime = req->runtime_max ?: p->runtime_max;
        if (memory < (4ULL << 20))
                return refuse(ret_error, -EINVAL, "memory: %" PRIu64 " bytes is too little to start anything (at least 4M)",
                              memory);
        if (tasks < 2)
                return refuse(ret_error, -EINVAL, "tasks: at least 2 are needed (the helper and the command)");

        plan = calloc(1, sizeof(RunPlan));
        if (!plan)
                return -ENOMEM;
        plan->profile = p;
        plan->props = t = prop_table_new();
        if (!t)
                return -ENOMEM;

        if (asprintf(&tmpfs_opts, "mode=0777,nosuid,nodev,size=%" PRIu64, p->home_size) < 0)
                return -ENOMEM;
        if (req->term) {
                if (asprintf(&term_env, "TERM=%s", req->term) < 0)
                        return -ENOMEM;
                env[3] = term_env;
        }

        /* Identity and privileges */
        r = prop_table_add_string(t, "Type", "exec");
        r = r ?: prop_table_add_bool(t, "DynamicUser", true);
        r = r ?: prop_table_add_bool(t, "NoNewPrivileges", true);
        r = r ?: prop_table_add_u64(t, "CapabilityBoundingSet", 0);
        r = r ?: prop_table_add_u64(t, "AmbientCapabilities", 0);
        r = r ?: prop_table_add_bool(t, "RestrictSUIDSGID", true);
        /* File system view */
        r = r ?: prop_table_add_string(t, "ProtectSystem", "strict");
        r = r ?: prop_table_add_string(t, "ProtectHome", "tmpfs");
        r = r ?: prop_table_add_bool(t, "PrivateTmp", true);
        r = r ?: prop_table_add_bool(t, "PrivateDevices", true);
        r = r ?: prop_table_add_bool(t, "PrivateIPC", true);
        r = r ?: prop_table_add_string(t, "ProtectProc", "invisible");
        r = r ?: prop_table_add_strv(t, "TemporaryFileSystem",
                                     (char *[]) { (char *) "/run", (char *) "ro,mode=0755,nosuid,nodev,noexec",
                                                  (char *) SBX_HOME, tmpfs_opts, NULL });
        /* The exec helper reports resource figures through the notify socket (main PID only). */
        r = r ?: prop_table_add_strv(t, "BindReadOnlyPaths",
                                     (char *[]) { (char *) "/run/systemd/notify", (char *) "/run/systemd/notify", NULL });
        if (r == 0 && req->workspace)
                r = prop_table_add_strv(t, "BindPaths",
                                        (char *[]) { req->workspace, (char *) SBX_WORKSPACE, NULL });
        /* Kernel */
        r = r ?: prop_table_add_bool(t, "ProtectKernelTunables", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelModules", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelLogs", true);
        r = r ?: prop_table_add_bool(t, "ProtectControlGroups", true);
        r = r ?: prop_table_add_bool(t, "ProtectClock", true);
        r = r ?: prop_table_add_bool(t, "ProtectHostname", true);
        r = r ?: prop_table_add_u64(t, "RestrictNamespaces", 0);
        r = r ?: prop_table_add_bool(t, "RestrictRealtime", true);
        r = r ?: prop_table_add_bool(t, "LockPersonality", true);
        r = r ?: prop_table_add_strv(t, "SystemCallArchitectures", (char *[]) { (char *) "native", NULL });
        r = r ?: prop_table_add_strv(t, "SystemCallFilter", (char *[]) { (char *) "@system-service", NULL });
        /* io_uring performs socket and file operations the filters never see (it bypasses
         * RestrictAddressFamilies=). */
        r = r ?: prop_table_add_strv(t, "SystemCallFilter~",
                                     (char *[]) { (char *) "io_uring_setup", (char *) "io_uring_enter",
                                                  (char *) "io_uring_register", NULL });
        r = r ?: prop_table_add_errno(t, "SystemCallErrorNumber", EPERM);
        /* Network */
        if (r == 0 && !p->network)
                r = prop_table_add_bool(t, "PrivateNetwork", true);
        r = r ?: prop_table_add_strv(t, "RestrictAddressFamilies",
                                     (char *[]) { (char *) "AF_UNIX", (char *) "AF_INET", (char *) "AF_INET6", NULL });
        /* Environment: clean, nothing inherited from the caller */
        r = r ?: prop_table_add_strv(t, "Environment", env);
        r = r ?: prop_table_add_u64(t, "UMask", 0022);
        /* Resources */
        r = r ?: prop_table_add_u64(t, "LimitCORE", 0);
        r = r ?: prop_table_add_u64(t, "MemoryMax", memory);
        r = r ?: prop_table_add_u64(t, "MemorySwapMax", 0);
        r = r ?: prop_table_add_u64(t, "TasksMax", tasks);
        if (r == 0 && p->cpu_quota_percent > 0)
                r = prop_table_add_u64(t, "CPUQuota", (uint64_t) p->cpu_quota_percent * 10000);
        r = r ?: prop_table_add_u64(t, "RuntimeMaxSec", runtime);
        /* Lifecycle: everything in the cgroup ends with the run */
        r = r ?: prop_table_add_string(t, "KillMode", "control-group");
        r = r ?: prop_table_add_bool(t, "SendSIGKILL", true);
        r = r ?: prop_table_add_u64(t, "TimeoutStopSec", 5 * USEC_PER_SEC);
        r = r ?: prop_table_add_string(t, "OOMPolicy", "stop");
        r = r ?: prop_table_add_string(t, "NotifyAccess", "main");
        r = r ?: prop_table_add_string(t, "CollectMode", "inactive-or-failed");
        if (r < 0)
                return r;

        r = prop_table_digest(t, plan->digest);
        if (r < 0)
                return r;

        /* The helper re-checks inside the unit what must hold, and refuses to run the command otherwise
         * (fail closed: systemd ignores some settings silently when the kernel lacks a feature). */
        if (asprintf(&a_mem, "--expect-memory-max=%" PRIu64, memory) < 0 ||
            asprintf(&a_tasks, "--expect-tasks-max=%" PRIu64, tasks) < 0 ||
            asprintf(&a_net, "--expect-network=%s", p->network ? "host" : "none") < 0)
                return -ENOMEM;

        n_argv = strv_length(req->argv);
        plan->exec_argv = calloc(n_argv + 8, sizeof(char *));
        if (!plan->exec_argv)
                return -ENOMEM;
        i = 0;
        if (!(plan->exec_argv[i++] = strdup(exec_path)))
                return -ENOMEM;
        plan->exec_argv[i++] = TAKE_PTR(a_mem);
        plan->exec_argv[i++] = TAKE_PTR(a_tasks);
        plan->exec_argv[i++] = TAKE_PTR(a_net);
        if (!(plan->exec_argv[i++] = strdup(req->workspace ? "--workspace=bound" : "--workspace=private")))
                return -ENOMEM;
        if (!(plan->exec_argv[i++] = strdup("--")))
                return -ENOMEM;
        for (size_t k = 0; k < n_argv; k++)
                if (!(plan->exec_argv[i++] = strdup(req->argv[k])))
                        return -ENOMEM;

        if (req->workspace) {
                char owner[64];

                snprintf(owner, sizeof(owner), "--owner=%u:%u", (unsigned) req->workspace_uid,
                         (unsigned) req->workspace_gid);
                r = handover_argv(exec_path, "--handover=in", owner, req->workspace, &plan->pre_argv);
                if (r >= 0)
                        r = handover_argv(exec_path, "--handover=out", owner, req->workspace, &plan->post_argv);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(plan);
        return 0;
}
