/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "command.h"
#include "egress-policy.h"
#include "grant.h"
#include "policy.h"

RunRequest *run_request_free(RunRequest *r) {
        if (!r)
                return NULL;
        free(r->profile);
        free(r->workspace);
        free(r->dataset);
        strv_free(r->argv);
        strv_free(r->argv_bytes);
        strv_free(r->env);
        free(r->sandbox_name);
        free(r->network);
        free(r->term);
        free(r->tty.term);
        free(r->run_id);
        free(r->netns_path);
        free(r->cache_owner);
        strv_free(r->busy_caches);
        strv_free(r->caches_ro);
        strv_free(r->credentials);
        for (size_t i = 0; i < strv_length(r->credential_fd_names); i++)
                if (r->credential_fds[i] >= 0)
                        (void) close(r->credential_fds[i]);
        strv_free(r->credential_fd_names);
        free(r->credential_fds);
        strv_free(r->host_addresses);
        free(r->export_dir);
        free(r->image);
        run_image_free(r->run_image);
        free(r);
        return NULL;
}

RunPlan *run_plan_free(RunPlan *p) {
        if (!p)
                return NULL;
        prop_table_free(p->props);
        free(p->rules);
        strv_free(p->exec_argv);
        strv_free(p->pre_argv);
        strv_free(p->post_argv);
        strv_free(p->figures_argv);
        free(p->image_unit);
        prop_table_free(p->net_props);
        strv_free(p->net_exec_argv);
        strv_free(p->net_pre_argv);
        strv_free(p->net_post_argv);
        prop_table_free(p->space_props);
        strv_free(p->space_exec_argv);
        strv_free(p->space_post_argv);
        prop_table_free(p->export_props);
        strv_free(p->export_stop_argv);
        free(p);
        return NULL;
}

bool run_request_term_is_valid(const char *t) {
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


/* A copy of PATH for a message: control characters become '?', so that a refusal stays one line. */
static char *path_for_message(const char *path) {
        char *c = strdup(path);

        if (c)
                for (char *i = c; *i; i++)
                        if ((unsigned char) *i < 0x20 || *i == 0x7f)
                                *i = '?';
        return c;
}

static int check_host_dir(const char *what, const char *path, char **ret_error) {
        if (!path_is_absolute_normalized(path) || strpbrk(path, ":\"\\ \t\n%$")) {
                _cleanup_free_ char *shown = path_for_message(path);

                if (!shown)
                        return -ENOMEM;
                if (!path_is_absolute_normalized(path))
                        return error_setf(ret_error, -EINVAL, "%s: '%s' is not a normalized absolute path", what,
                                          shown);
                /* ':' separates bind mount fields, '%' starts a specifier in unit files; systemd 252 writes
                 * '$' of an Exec command's argument into the transient unit file in a way it cannot read back
                 * (the hand-over's argument after a daemon-reload) */
                return error_setf(ret_error, -EINVAL,
                                  "%s: '%s' contains a character sbx does not accept (: \" \\ %% $ or white space)",
                                  what, shown);
        }
        for (size_t i = 0; i < ELEMENTSOF(forbidden_workspaces); i++) {
                const char *f = forbidden_workspaces[i];
                size_t l = strlen(f);

                if (streq(path, f) ||
                    (!streq(f, "/") && !streq(f, "/home") && !streq(f, "/var") && strneq(path, f, l) && path[l] == '/'))
                        return error_setf(ret_error, -EPERM, "%s: '%s' is a system directory", what, path);
        }
        return 0;
}

bool policy_path_is_below(const char *path, const char *prefix) {
        size_t l = strlen(prefix);

        if (streq(prefix, "/"))
                return true;
        return strneq(path, prefix, l) && (path[l] == '/' || path[l] == 0);
}

int policy_export_check_dest(const Profile *p, const RunRequest *req, char **ret_error) {
        int r;

        if (!p->export.enabled)
                return error_setf(ret_error, -EPERM, "export: profile '%s' does not export through review", p->name);
        r = check_host_dir("export", req->export_dir, ret_error);
        if (r < 0)
                return r;
        /* the workspace is the run's while it runs, the dataset is read-only for it */
        for (size_t i = 0; i < 2; i++) {
                const char *o = i == 0 ? req->workspace : req->dataset;

                if (o && (policy_path_is_below(req->export_dir, o) || policy_path_is_below(o, req->export_dir)))
                        return error_setf(ret_error, -EINVAL, "export: '%s' overlaps the %s '%s'", req->export_dir,
                                          i == 0 ? "workspace" : "dataset", o);
        }
        return 0;
}

static void format_size(char buf[static 32], uint64_t v) {
        static const char suffix[] = "KMGT";

        for (int i = 4; i >= 1; i--) {
                uint64_t unit = 1ULL << (10 * i);
                if (v >= unit && v % unit == 0) {
                        snprintf(buf, 32, "%" PRIu64 "%c", v / unit, suffix[i - 1]);
                        return;
                }
        }
        snprintf(buf, 32, "%" PRIu64, v);
}

static void format_usec(char buf[static 32], usec_t u) {
        if (u % USEC_PER_SEC == 0)
                snprintf(buf, 32, "%" PRIu64 "s", u / USEC_PER_SEC);
        else
                snprintf(buf, 32, "%" PRIu64 ".%06" PRIu64 "s", u / USEC_PER_SEC, u % USEC_PER_SEC);
}

typedef enum BoundKind { BOUND_PLAIN, BOUND_SIZE, BOUND_USEC, BOUND_PERCENT } BoundKind;

static void format_bound(char buf[static 32], BoundKind k, uint64_t v) {
        switch (k) {
        case BOUND_SIZE:
                format_size(buf, v);
                break;
        case BOUND_USEC:
                format_usec(buf, v);
                break;
        case BOUND_PERCENT:
                snprintf(buf, 32, "%" PRIu64 "%%", v);
                break;
        case BOUND_PLAIN:
        default:
                snprintf(buf, 32, "%" PRIu64, v);
        }
}

/* A request may only tighten the profile, and only set what the profile lets callers set. */
static int pick_bound(const Profile *p, const char *what, BoundKind kind, uint64_t asked, uint64_t ceiling,
                      const RequestBound *b, uint64_t *ret, char **ret_error) {
        char x[32], y[32];

        if (asked == 0) {
                *ret = ceiling;
                return 0;
        }
        if (!b->allowed)
                return error_setf(ret_error, -EPERM, "%s: profile '%s' does not let a run set it", what, p->name);
        format_bound(x, kind, asked);
        if (ceiling != 0 && asked > ceiling) {
                format_bound(y, kind, ceiling);
                return error_setf(ret_error, -EPERM, "%s: %s is above the limit of profile '%s' (%s)", what, x, p->name, y);
        }
        if (asked < b->min) {
                format_bound(y, kind, b->min);
                return error_setf(ret_error, -EINVAL, "%s: %s is below the lowest profile '%s' accepts (%s)", what, x,
                              p->name, y);
        }
        *ret = asked;
        return 0;
}

bool run_request_has_credentials(const RunRequest *req) {
        return strv_length(req->credentials) + strv_length(req->credential_fd_names) > 0;
}

/* Each name at most once over both lists, each one the profile allows. */
static int check_credentials(const Profile *p, const RunRequest *req, char **ret_error) {
        size_t n = strv_length(req->credentials) + strv_length(req->credential_fd_names), i = 0;
        _cleanup_free_ char **all = NULL;

        if (n > SBX_CREDENTIALS_MAX)
                return error_setf(ret_error, -E2BIG, "credentials: %zu given, at most %u allowed", n,
                                  SBX_CREDENTIALS_MAX);
        all = calloc(n + 1, sizeof(char *));
        if (!all)
                return -ENOMEM;
        STRV_FOREACH(c, req->credentials)
                all[i++] = *c;
        STRV_FOREACH(c, req->credential_fd_names)
                all[i++] = *c;
        for (i = 0; i < n; i++) {
                if (!credential_name_is_valid(all[i]))
                        return error_setf(ret_error, -EINVAL, "credentials: '%s' is not a credential name "
                                          "([a-z][a-z0-9_-]{0,63})", all[i]);
                if (!strv_contains(p->credential_files, all[i]))
                        return error_setf(ret_error, -EPERM, "credentials: profile '%s' does not let a run receive "
                                          "credential '%s' (credentials.files)", p->name, all[i]);
                for (size_t j = 0; j < i; j++)
                        if (streq(all[j], all[i]))
                                return error_setf(ret_error, -EINVAL, "credentials: '%s' is given twice", all[i]);
        }
        return 0;
}

int run_request_validate(const Profile *p, const RunRequest *req, char **ret_error) {
        size_t n = strv_length(req->argv);
        uint64_t v;
        int r;

        if (req->profile && !streq(req->profile, p->name))
                return error_setf(ret_error, -EINVAL, "profile: the request names '%s', the profile is '%s'", req->profile,
                              p->name);
        if (req->sandbox && req->pool)
                return -EINVAL;
        r = policy_image_validate(p, req, ret_error);
        if (r < 0)
                return r;
        if (req->sandbox || req->pool) {
                if (n > 0)
                        return error_setf(ret_error, -EINVAL, "command: a sandbox is created without one");
                if (strv_length(req->env) > 0)
                        return error_setf(ret_error, -EINVAL,
                                          "environment: a sandbox's commands are given theirs with exec");
        } else {
                r = command_check(req->argv, req->env, req->stack_limit ?: COMMAND_STACK_DEFAULT, ret_error);
                if (r >= 0)
                        r = environment_check(p->environment_allow, p->environment_deny, p->name, req->env,
                                              ret_error);
                if (r < 0)
                        return r;
        }

        if (req->workspace) {
                if (!p->workspace)
                        return error_setf(ret_error, -EPERM, "workspace: profile '%s' does not let a run bind a workspace",
                                      p->name);
                r = check_host_dir("workspace", req->workspace, ret_error);
                if (r < 0)
                        return r;
        }
        if (req->dataset) {
                bool ok = false;

                if (!p->request.dataset_under)
                        return error_setf(ret_error, -EPERM, "dataset: profile '%s' does not let a run bind a dataset",
                                      p->name);
                r = check_host_dir("dataset", req->dataset, ret_error);
                if (r < 0)
                        return r;
                STRV_FOREACH(u, p->request.dataset_under)
                        if (policy_path_is_below(req->dataset, *u))
                                ok = true;
                if (!ok)
                        return error_setf(ret_error, -EPERM, "dataset: '%s' is not below a directory profile '%s' allows",
                                      req->dataset, p->name);
                if (req->workspace && (policy_path_is_below(req->dataset, req->workspace) ||
                                       policy_path_is_below(req->workspace, req->dataset)))
                        return error_setf(ret_error, -EINVAL, "dataset: '%s' overlaps the workspace '%s'", req->dataset,
                                      req->workspace);
        }

        STRV_FOREACH(c, req->caches_ro) {
                bool known = false;

                for (size_t k = 0; k < p->n_caches; k++)
                        if (streq(p->caches[k].name, *c))
                                known = true;
                if (!known)
                        return error_setf(ret_error, -EINVAL, "cache-ro: profile '%s' has no cache '%s'", p->name, *c);
                for (char **o = req->caches_ro; o < c; o++)
                        if (streq(*o, *c))
                                return error_setf(ret_error, -EINVAL, "cache-ro: '%s' is given twice", *c);
        }

        if (req->export_dir) {
                if (!p->export.enabled)
                        return error_setf(ret_error, -EPERM, "export: profile '%s' does not export through review",
                                          p->name);
                if (req->sandbox || req->pool)
                        return error_setf(ret_error, -EINVAL,
                                          "export: a sandbox exports with 'sbxctl export', not at its end");
                r = policy_export_check_dest(p, req, ret_error);
                if (r < 0)
                        return r;
        }

        if (req->network) {
                NetworkMode m = network_mode_from_string(req->network);

                if (m < 0)
                        return error_setf(ret_error, -EINVAL, "network: '%s' is not a network mode", req->network);
                if (m != p->network && !(m == NETWORK_NONE && p->request.network_none))
                        return error_setf(ret_error, -EPERM, "network: profile '%s' does not let a run choose '%s'",
                                      p->name, req->network);
        }
        r = pick_bound(p, "memory", BOUND_SIZE, req->memory_max, p->memory_max, &p->request.memory, &v, ret_error);
        r = r < 0 ? r : pick_bound(p, "tasks", BOUND_PLAIN, req->tasks_max, p->tasks_max, &p->request.tasks, &v, ret_error);
        r = r < 0 ? r : pick_bound(p, "timeout", BOUND_USEC, req->runtime_max, p->runtime_max, &p->request.runtime, &v,
                                   ret_error);
        r = r < 0 ? r : pick_bound(p, "cpu", BOUND_PERCENT, req->cpu_quota_percent, p->cpu_quota_percent,
                                   &p->request.cpu, &v, ret_error);
        if (r < 0)
                return r;

        if (req->term && !run_request_term_is_valid(req->term))
                return error_setf(ret_error, -EINVAL, "term: '%s' is not a valid terminal name", req->term);
        if (req->tty.on && req->sandbox)
                return error_setf(ret_error, -EINVAL, "tty: a sandbox's commands ask for a terminal each (Exec)");
        /* runsc would need a terminal of the host's to hand on: none is ever exposed to a run */
        if (req->tty.on && p->isolation == ISOLATION_GVISOR)
                return error_setf(ret_error, -ENOTTY, "tty: profile %s runs its command under process.isolation "
                                  "\"gvisor\", which gets no terminal; run it without one", p->name);

        r = check_credentials(p, req, ret_error);
        if (r < 0)
                return r;
        if ((run_request_has_credentials(req) || p->n_grants > 0) && req->pool)
                return -EINVAL; /* the profile parser refuses a pool with grants; sbxd never pools credentials */
        return 0;
}

static const SyscallRule baseline_rules[] = {
        { .syscall = (char *) "ioctl", .nr = __NR_ioctl, .has_arg = true, .arg = 1, .cmp = SYSCALL_CMP_EQ,
          .value = TIOCSTI, .arg32 = true, .value_name = (char *) "TIOCSTI" },
        { .syscall = (char *) "ioctl", .nr = __NR_ioctl, .has_arg = true, .arg = 1, .cmp = SYSCALL_CMP_EQ,
          .value = TIOCLINUX, .arg32 = true, .value_name = (char *) "TIOCLINUX" },
        { .syscall = (char *) "io_uring_setup", .nr = __NR_io_uring_setup },
};

const SyscallRule *policy_baseline_rules(size_t *ret_n) {
        *ret_n = ELEMENTSOF(baseline_rules);
        return baseline_rules;
}

NetworkMode policy_run_network(const Profile *p, const RunRequest *req) {
        NetworkMode m = req->network ? network_mode_from_string(req->network) : p->network;

        return m < 0 ? p->network : m;
}

int policy_netns_path(const char *run_id, char **ret) {
        return asprintf(ret, SBX_NETNS_DIR "/%s", run_id) < 0 ? -ENOMEM : 0;
}

int policy_net_unit_name(const char *run_id, char **ret) {
        return asprintf(ret, "sbx-net@%s.service", run_id) < 0 ? -ENOMEM : 0;
}

/* The network unit of a run: a namespace made for it, and slirp4netns (a user-mode TCP/IP stack, libslirp)
 * connecting it to the host's network. It maps nothing into the namespace: no inbound ports (no API
 * socket to add any), no path to the host's loopback through its gateway (--disable-host-loopback), no
 * DNS forwarder (--disable-dns: DNS goes to sbx's resolver); its sockets to the outside are ordinary
 * sockets of the host, opened for connections the run's own sockets made, which sbx's BPF programs have
 * judged already. It enters the namespace as root and then confines itself (--enable-sandbox: an empty
 * mount namespace, every capability dropped; --enable-seccomp). The helper starts it and waits for its
 * ready byte, so the unit is active only once the namespace is connected (Type=forking, PIDFile=).
 * pasta (passt) was used before: Debian 12's (2023-03) resets bulk TCP transfers at host speeds
 * (bench/bridge-bulk.sh). */
static int compile_net_unit(const RunRequest *req, const char *exec_path, RunPlan *plan) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        _cleanup_free_ char *pidfile = NULL, *create = NULL, *remove = NULL, *serve = NULL;
        int r;

        if (!t)
                return -ENOMEM;
        if (asprintf(&pidfile, "%s.pid", req->netns_path) < 0 ||
            asprintf(&create, "--netns=create:%s", req->netns_path) < 0 ||
            asprintf(&remove, "--netns=remove:%s", req->netns_path) < 0 ||
            asprintf(&serve, "--netns=serve:%s", req->netns_path) < 0)
                return -ENOMEM;
        /* No mount namespace for this unit (ProtectSystem=, PrivateTmp=... would make one): the
         * namespace's bind mount must be made in the host's, where the run's unit and the bridge find
         * it, and a "+" command still gets the unit's mount namespace. */
        r = prop_table_add_string(t, "Type", "forking");
        r = r ?: prop_table_add_string(t, "PIDFile", pidfile);
        r = r ?: prop_table_add_bool(t, "NoNewPrivileges", true);
        r = r ?: prop_table_add_bool(t, "LockPersonality", true);
        r = r ?: prop_table_add_bool(t, "RestrictRealtime", true);
        r = r ?: prop_table_add_string(t, "KillMode", "control-group");
        r = r ?: prop_table_add_u64(t, "TimeoutStopSec", 5 * USEC_PER_SEC);
        if (r < 0)
                return r;
        plan->net_exec_argv = strv_new(exec_path, serve, "--", SBX_SLIRP4NETNS_PATH, "--configure",
                                       "--mtu=65520", "--disable-host-loopback", "--disable-dns",
                                       "--enable-ipv6", "--enable-sandbox", "--enable-seccomp",
                                       "--ready-fd=3", "--netns-type=path", req->netns_path, "tap0");
        plan->net_pre_argv = strv_new(exec_path, create);
        plan->net_post_argv = strv_new(exec_path, remove);
        if (!plan->net_exec_argv || !plan->net_pre_argv || !plan->net_post_argv)
                return -ENOMEM;
        plan->net_props = TAKE_PTR(t);
        return 0;
}

int policy_unit_name(const char *profile, const char *run_id, char **ret) {
        return asprintf(ret, "sbx-%s-%s.service", profile, run_id) < 0 ? -ENOMEM : 0;
}

int policy_slice_name(const char *profile, char **ret) {
        return asprintf(ret, "sbx-%s.slice", profile) < 0 ? -ENOMEM : 0;
}

int policy_dropin_dir_name(const char *profile, char **ret) {
        return asprintf(ret, "sbx-%s-.service.d", profile) < 0 ? -ENOMEM : 0;
}

int policy_cgroup_path(const char *profile, const char *run_id, char **ret) {
        return asprintf(ret, "/sys/fs/cgroup/" SBX_SLICE_PARENT "/sbx-%s.slice/sbx-%s-%s.service", profile, profile,
                        run_id) < 0 ? -ENOMEM : 0;
}

static uint64_t page_size(void) {
        long l = sysconf(_SC_PAGESIZE);
        return l > 0 ? (uint64_t) l : 4096;
}

uint64_t policy_disk_max(const Profile *p) {
        return p->disk_max - p->disk_max % page_size();
}

/* The run's space unit sbx-space@RUN.service: without a mount namespace of its own (the tmpfs is mounted
 * in the host's, where systemd finds the sources of the run's bind mounts), it mounts one tmpfs of the
 * profile's disk size at SBX_SPACE_DIR/RUN and makes one directory in it for each place the run can
 * write (policy_space_dirs); it unmounts and removes it when stopped, which it is once the run's unit,
 * the only one that needs it, is gone. */
static bool cache_busy(const RunRequest *req, const char *name) {
        return strv_contains(req->busy_caches, name);
}

/* The run's caches of their own (not busy: another run has those, this one an ephemeral copy), each an
 * ext4 of its max_size that the space unit mounts on the cache's state directory (helper/cache.h):
 * "--cache-image=OWNER/PROFILE/CACHE:SIZE", for making the space and for removing it. */
static int cache_image_options(const Profile *p, const RunRequest *req, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        for (size_t i = 0; req->cache_owner && i < p->n_caches; i++) {
                char *o;

                if (cache_busy(req, p->caches[i].name))
                        continue;
                if (asprintf(&o, "--cache-image=%s/%s/%s:%" PRIu64, req->cache_owner, p->name, p->caches[i].name,
                             p->caches[i].max_size) < 0)
                        return -ENOMEM;
                r = strv_push_take(&l, o);
                if (r < 0) {
                        free(o);
                        return r;
                }
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int compile_space_unit(const Profile *p, const RunRequest *req, const char *exec_path, uint64_t disk,
                              RunPlan *plan) {
        _cleanup_strv_free_ char **images = NULL;
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        _cleanup_free_ char *path = NULL, *create = NULL, *remove = NULL, *size = NULL;
        int r;

        if (!t)
                return -ENOMEM;
        r = policy_space_path(req->run_id, &path);
        if (r < 0)
                return r;
        if (asprintf(&create, "--space=create:%s", path) < 0 || asprintf(&remove, "--space=remove:%s", path) < 0 ||
            asprintf(&size, "--space-size=%" PRIu64, disk) < 0)
                return -ENOMEM;
        r = prop_table_add_string(t, "Type", "oneshot");
        r = r ?: prop_table_add_bool(t, "RemainAfterExit", true);
        r = r ?: prop_table_add_bool(t, "NoNewPrivileges", true);
        r = r ?: prop_table_add_u64(t, "CapabilityBoundingSet", UINT64_C(1) << 21 /* CAP_SYS_ADMIN: mount */);
        r = r ?: prop_table_add_u64(t, "TimeoutStartSec", 30 * USEC_PER_SEC);
        r = r ?: prop_table_add_u64(t, "TimeoutStopSec", 30 * USEC_PER_SEC);
        if (r < 0)
                return r;
        plan->space_exec_argv = strv_new(exec_path, create, size);
        /* also after a failed start: what was made of the space goes */
        plan->space_post_argv = strv_new(exec_path, remove);
        if (!plan->space_exec_argv || !plan->space_post_argv)
                return -ENOMEM;
        r = cache_image_options(p, req, &images);
        if (r < 0)
                return r;
        STRV_FOREACH(o, images) {
                char *a = strdup(*o), *b = strdup(*o);

                if (!a || !b || strv_push_take(&plan->space_exec_argv, a) < 0) {
                        free(a);
                        free(b);
                        return -ENOMEM;
                }
                if (strv_push_take(&plan->space_post_argv, b) < 0) {
                        free(b);
                        return -ENOMEM;
                }
        }
        plan->space_props = TAKE_PTR(t);
        return 0;
}

int policy_export_argv(const Profile *p, const RunRequest *req, const char *rel, const char *report,
                       uint64_t first_held_id, char ***ret) {
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *dir = NULL, *root = NULL;
        char *a[8] = {};
        int r;

        if (!req->run_id || !req->export_dir || !rel || !report)
                return -EINVAL;
        r = policy_export_dir(req->run_id, &dir);
        if (r < 0)
                return r;
        if (asprintf(&root, SBX_SPACE_DIR "/%s/home", req->run_id) < 0)
                return -ENOMEM;
        argv = strv_new(SBX_EXPORT_PATH, "--review");
        if (!argv)
                return -ENOMEM;
        if (asprintf(&a[0], "--source-root=%s", root) < 0 || asprintf(&a[1], "--source=%s", rel) < 0 ||
            asprintf(&a[2], "--staging=%s", dir) < 0 || asprintf(&a[3], "--report=%s", report) < 0 ||
            asprintf(&a[4], "--dest=%s", req->export_dir) < 0 ||
            asprintf(&a[5], "--dest-id=%" PRIu64 ":%" PRIu64, (uint64_t) req->export_dev, (uint64_t) req->export_ino) < 0 ||
            asprintf(&a[6], "--owner=%u:%u", (unsigned) req->export_uid, (unsigned) req->export_gid) < 0 ||
            (first_held_id > 0 && asprintf(&a[7], "--first-held-id=%" PRIu64, first_held_id) < 0))
                r = -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(a); i++) {
                if (r == 0 && a[i])
                        r = strv_push_take(&argv, a[i]);
                else
                        free(a[i]);
                a[i] = NULL;
        }
        if (r == 0)
                r = export_policy_append_argv(&p->export, &argv);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(argv);
        return 0;
}

int policy_export_unit_props(const RunRequest *req, bool at_stop, PropTable **ret) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        _cleanup_free_ char *dir = NULL;
        int r;

        if (!t)
                return -ENOMEM;
        if (!req->run_id || !req->export_dir)
                return -EINVAL;
        r = policy_export_dir(req->run_id, &dir);
        if (r < 0)
                return r;
        r = prop_table_add_string(t, "Type", "oneshot");
        /* a run's: active while the run runs (its start only checks), the review its stop */
        if (at_stop)
                r = r ?: prop_table_add_bool(t, "RemainAfterExit", true);
        r = r ?: prop_table_add_bool(t, "NoNewPrivileges", true);
        /* CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER */
        r = r ?: prop_table_add_u64(t, "CapabilityBoundingSet", UINT64_C(0xf));
        r = r ?: prop_table_add_string(t, "ProtectSystem", "strict");
        r = r ?: prop_table_add_strv(t, "ReadWritePaths", (char *[]) { dir, req->export_dir, NULL });
        r = r ?: prop_table_add_bool(t, "PrivateNetwork", true);
        r = r ?: prop_table_add_bool(t, "PrivateDevices", true);
        /* no PrivateTmp=: the destination may be below /tmp or /var/tmp */
        r = r ?: prop_table_add_bool(t, "ProtectKernelTunables", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelModules", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelLogs", true);
        r = r ?: prop_table_add_bool(t, "ProtectControlGroups", true);
        r = r ?: prop_table_add_bool(t, "RestrictRealtime", true);
        r = r ?: prop_table_add_bool(t, "LockPersonality", true);
        r = r ?: prop_table_add_bool(t, "MemoryDenyWriteExecute", true);
        r = r ?: prop_table_add_strv(t, "SystemCallArchitectures", (char *[]) { (char *) "native", NULL });
        r = r ?: prop_table_add_strv(t, "SystemCallFilter", (char *[]) { (char *) "@system-service", NULL });
        r = r ?: prop_table_add_strv(t, "RestrictAddressFamilies", (char *[]) { (char *) "AF_UNIX", NULL });
        r = r ?: prop_table_add_u64(t, "MemoryMax", UINT64_C(512) << 20);
        r = r ?: prop_table_add_u64(t, "TimeoutStartSec", (at_stop ? 30 : EXPORT_REVIEW_TIMEOUT_SEC) * USEC_PER_SEC);
        if (at_stop)
                r = r ?: prop_table_add_u64(t, "TimeoutStopSec", EXPORT_REVIEW_TIMEOUT_SEC * USEC_PER_SEC);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

/* The run's export unit (RunPlan.export_props): the review is its stop. */
static int compile_export_unit(const Profile *p, const RunRequest *req, RunPlan *plan) {
        _cleanup_free_ char *dir = NULL, *report = NULL;
        int r;

        r = policy_export_dir(req->run_id, &dir);
        if (r < 0)
                return r;
        if (asprintf(&report, "%s/report.json", dir) < 0)
                return -ENOMEM;
        r = policy_export_argv(p, req, "out", report, 0, &plan->export_stop_argv);
        if (r < 0)
                return r;
        return policy_export_unit_props(req, true, &plan->export_props);
}

ExportLivePlan *export_live_plan_free(ExportLivePlan *x) {
        if (!x)
                return NULL;
        free(x->unit);
        free(x->report);
        prop_table_free(x->props);
        strv_free(x->argv);
        free(x);
        return NULL;
}

int policy_compile_live_export(const Profile *p, const RunRequest *req, const char *rel, const char *tag,
                               uint64_t first_held_id, ExportLivePlan **ret, char **ret_error) {
        _cleanup_(export_live_plan_freep) ExportLivePlan *x = calloc(1, sizeof(ExportLivePlan));
        _cleanup_free_ char *dir = NULL;
        int r;

        if (!x)
                return -ENOMEM;
        if (!req->run_id || !req->export_dir || !tag || !run_id_is_valid(req->run_id) || strlen(tag) == 0 ||
            strspn(tag, "0123456789abcdef") != strlen(tag) || first_held_id == 0)
                return -EINVAL;
        if (!export_source_path_is_valid(rel))
                return error_setf(ret_error, -EINVAL,
                                  "path: '%s' is not a relative path in the sandbox's HOME (no '.', '..' or empty "
                                  "component, at most 1024 bytes)", rel);
        r = policy_export_check_dest(p, req, ret_error);
        if (r < 0)
                return r;
        r = policy_export_dir(req->run_id, &dir);
        if (r < 0)
                return r;
        if (asprintf(&x->unit, "sbx-export@%s-%s.service", req->run_id, tag) < 0 ||
            asprintf(&x->report, "%s/report-%s.json", dir, tag) < 0)
                return -ENOMEM;
        r = policy_export_argv(p, req, rel, x->report, first_held_id, &x->argv);
        if (r < 0)
                return r;
        r = policy_export_unit_props(req, false, &x->props);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(x);
        return 0;
}

static int add_same_place(PropTable *t, const char *name, char **paths) {
        int r = 0;

        STRV_FOREACH(i, paths) {
                r = prop_table_extend_strv(t, name, (char *[]) { *i, *i, NULL });
                if (r < 0)
                        return r;
        }
        return r;
}

/* What every unit denies, whatever the profile allows. io_uring performs socket and file operations the
 * filters never see (it bypasses RestrictAddressFamilies=). The kernel's keyrings are not namespaced: a
 * key added to the user keyring (@u, per uid) outlives the run, and a later run given the same dynamic
 * uid would read it. */
const char *const policy_fixed_denied_syscalls[] = { "io_uring_setup", "io_uring_enter", "io_uring_register",
                                                     "add_key", "keyctl", "request_key", NULL };

static const char *const landlock_syscalls[] = { "landlock_create_ruleset", "landlock_add_rule",
                                                 "landlock_restrict_self", NULL };

/* What the gVisor tier's units add to the allow-list, for runsc alone: the gofer binds and pivots into the
 * container's root and the sandbox chroots (mount, umount2, pivot_root, chroot, each in namespaces runsc
 * makes); its platform traces its own stub processes (ptrace). docs/security.md, "Isolation tiers". */
static const char *const gvisor_syscalls[] = { "mount", "umount2", "pivot_root", "chroot", "ptrace", NULL };
/* The namespace types runsc makes (the net type even without a network: the gofer gets one) */
#define GVISOR_NAMESPACES                                                                                   \
        ((uint64_t) (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET))

static int strv_add_missing(char ***l, const char *const *names) {
        for (const char *const *n = names; *n; n++)
                if (!strv_contains(*l, *n)) {
                        char *c = strdup(*n);
                        int r;

                        if (!c)
                                return -ENOMEM;
                        r = strv_push_take(l, c);
                        if (r < 0) {
                                free(c);
                                return r;
                        }
                }
        return 0;
}

/* The unit's SystemCallFilter= lists: the profile's, what the helper needs, and what sbx always denies
 * (policy_fixed_denied_syscalls). */
static int fixed_syscall_lists(const Profile *p, char ***ret_allow, char ***ret_deny) {
        _cleanup_strv_free_ char **deny = NULL, **allow = NULL;
        int r;

        /* an empty SystemCallFilter= would reset the filter: no allow-list at all */
        if (strv_length(p->syscall_allow) == 0)
                return -EINVAL;
        allow = strv_copy(p->syscall_allow);
        deny = strv_copy(p->syscall_deny);
        if (!allow || !deny)
                return -ENOMEM;
        /* seccomp() is outside @system-service, but the exec helper needs it to install sbx's own filter
         * (with a listener, for counting) right before exec; that filter then catches every seccomp()
         * call of the command. The helper applies the Landlock ruleset in the command's child (systemd
         * 252 has them in no group); they only ever restrict the caller further. */
        r = strv_add_missing(&allow, (const char *const[]) { "seccomp", NULL });
        r = r ?: strv_add_missing(&allow, landlock_syscalls);
        if (r == 0 && p->isolation == ISOLATION_GVISOR)
                r = strv_add_missing(&allow, gvisor_syscalls);
        r = r ?: strv_add_missing(&deny, policy_fixed_denied_syscalls);
        if (r < 0)
                return r;
        *ret_allow = TAKE_PTR(allow);
        *ret_deny = TAKE_PTR(deny);
        return 0;
}

int policy_compile_fixed(const Profile *p, PropTable **ret) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        _cleanup_strv_free_ char **deny = NULL, **allow = NULL;
        bool gvisor = p->isolation == ISOLATION_GVISOR;
        int r;

        if (!t)
                return -ENOMEM;
        r = fixed_syscall_lists(p, &allow, &deny);
        if (r < 0)
                return r;

        /* Identity and privileges */
        r = prop_table_add_bool(t, "DynamicUser", true);
        r = r ?: prop_table_add_bool(t, "NoNewPrivileges", true);
        r = r ?: prop_table_add_u64(t, "CapabilityBoundingSet", 0);
        r = r ?: prop_table_add_u64(t, "AmbientCapabilities", 0);
        r = r ?: prop_table_add_bool(t, "RestrictSUIDSGID", true);
        /* File system view: the host's OS read-only, no /run. HOME, /tmp, /var/tmp and /dev/shm are the run's
         * space, bound per run (policy_compile()). */
        r = r ?: prop_table_add_string(t, "ProtectSystem", "strict");
        r = r ?: prop_table_add_string(t, "ProtectHome", "tmpfs");
        r = r ?: prop_table_add_bool(t, "PrivateDevices", true);
        r = r ?: prop_table_add_bool(t, "PrivateIPC", true);
        r = r ?: prop_table_add_string(t, "ProtectProc", "invisible");
        /* /sys/fs/cgroup would show every other run's unit (its run id) and processes, whatever the
         * tenant: it is an empty read-only tmpfs, and each run gets its own cgroup bound back read-only
         * (policy_compile(), the unit name is per run). Not ProtectControlGroups=: systemd 252 keeps
         * one mount per path, and its read-only bind of /sys/fs/cgroup would win over the tmpfs. */
        r = r ?: prop_table_add_strv(t, "TemporaryFileSystem",
                                     (char *[]) { (char *) "/run", (char *) "ro,mode=0755,nosuid,nodev,noexec",
                                                  (char *) "/sys/fs/cgroup", (char *) "ro,mode=0755,nosuid,nodev,noexec",
                                                  NULL });
        /* The exec helper reports resource figures through the notify socket (main PID only). */
        r = r ?: prop_table_add_strv(t, "BindReadOnlyPaths",
                                     (char *[]) { (char *) "/run/systemd/notify", (char *) "/run/systemd/notify", NULL });
        if (r == 0)
                r = add_same_place(t, "BindReadOnlyPaths", p->read_only);
        if (r == 0 && strv_length(p->read_write) > 0)
                r = prop_table_add_strv(t, "ReadWritePaths", p->read_write);
        /* "-": a hidden path that does not exist is nothing to hide */
        STRV_FOREACH(h, p->hidden) {
                _cleanup_free_ char *opt = NULL;

                if (r < 0)
                        break;
                if (asprintf(&opt, "-%s", *h) < 0)
                        return -ENOMEM;
                r = prop_table_extend_strv(t, "InaccessiblePaths", (char *[]) { opt, NULL });
        }
        /* the run's user: sbx's own nsswitch.conf, passwd and group (policy-identity.c) */
        r = r ?: policy_identity_compile(p, t);
        /* Kernel */
        r = r ?: prop_table_add_bool(t, "ProtectKernelTunables", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelModules", true);
        r = r ?: prop_table_add_bool(t, "ProtectKernelLogs", true);
        r = r ?: prop_table_add_bool(t, "ProtectClock", true);
        r = r ?: prop_table_add_bool(t, "ProtectHostname", true);
        /* the gVisor tier: the namespaces runsc makes, in this profile's units only (the profile refuses
         * namespaces of its own and write_execute_memory false with it) */
        r = r ?: prop_table_add_u64(t, "RestrictNamespaces", gvisor ? GVISOR_NAMESPACES : p->namespaces);
        r = r ?: prop_table_add_bool(t, "RestrictRealtime", true);
        r = r ?: prop_table_add_bool(t, "LockPersonality", true);
        if (r == 0 && !p->write_execute_memory)
                r = prop_table_add_bool(t, "MemoryDenyWriteExecute", true);
        r = r ?: prop_table_add_strv(t, "SystemCallArchitectures", (char *[]) { (char *) "native", NULL });
        r = r ?: prop_table_add_strv(t, "SystemCallFilter", allow);
        r = r ?: prop_table_add_strv(t, "SystemCallFilter~", deny);
        r = r ?: prop_table_add_errno(t, "SystemCallErrorNumber", EPERM);
        /* Network. Mode none: a namespace with only lo. The others: a namespace of the run's own
         * (NetworkNamespacePath=, per run) where sbx's BPF programs judge every destination; systemd's
         * own address filter holds the static part of the policy too (defense in depth). AF_NETLINK
         * shows only the run's own namespace. */
        if (r == 0 && p->network == NETWORK_NONE)
                r = prop_table_add_bool(t, "PrivateNetwork", true);
        if (r == 0 && p->network != NETWORK_NONE) {
                _cleanup_strv_free_ char **ip_allow = NULL, **ip_deny = NULL;

                r = egress_ip_address_lists(p, p->network, &ip_allow, &ip_deny);
                if (r == 0 && strv_length(ip_deny) > 0)
                        r = prop_table_add_strv(t, "IPAddressDeny", ip_deny);
                if (r == 0 && strv_length(ip_allow) > 0)
                        r = prop_table_add_strv(t, "IPAddressAllow", ip_allow);
        }
        r = r ?: prop_table_add_strv(t, "RestrictAddressFamilies",
                                     (char *[]) { (char *) "AF_UNIX", (char *) "AF_INET", (char *) "AF_INET6",
                                                  (char *) "AF_NETLINK", NULL });
        r = r ?: prop_table_add_u64(t, "UMask", 0022);
        /* Resources that no request changes */
        r = r ?: prop_table_add_u64(t, "LimitCORE", 0);
        r = r ?: prop_table_add_u64(t, "MemorySwapMax", p->swap_max - p->swap_max % page_size());
        /* Lifecycle: everything in the cgroup ends with the run */
        r = r ?: prop_table_add_string(t, "KillMode", "control-group");
        r = r ?: prop_table_add_bool(t, "SendSIGKILL", true);
        r = r ?: prop_table_add_u64(t, "TimeoutStopSec", 5 * USEC_PER_SEC);
        r = r ?: prop_table_add_string(t, "OOMPolicy", "stop");
        /* the exec helper's reports: only the main process may send them (Type= is per run: a pooled
         * unit is of another type) */
        r = r ?: prop_table_add_string(t, "NotifyAccess", "main");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int policy_compile_slice(const Profile *p, PropTable **ret) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        int r = 0;

        if (!t)
                return -ENOMEM;
        if (p->slice_memory_max > 0)
                r = prop_table_add_u64(t, "MemoryMax", p->slice_memory_max);
        if (r == 0 && p->slice_tasks_max > 0)
                r = prop_table_add_u64(t, "TasksMax", p->slice_tasks_max);
        if (r == 0 && p->slice_cpu_quota_percent > 0)
                r = prop_table_add_u64(t, "CPUQuota", (uint64_t) p->slice_cpu_quota_percent * 10000);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int run_plan_add_exec_option(RunPlan *plan, const char *option) {
        size_t n = strv_length(plan->exec_argv), pos = n;
        char **l, *c;

        for (size_t i = 1; i < n; i++)
                if (streq(plan->exec_argv[i], "--")) {
                        pos = i;
                        break;
                }
        if (pos == n)
                return -EINVAL;
        c = strdup(option);
        if (!c)
                return -ENOMEM;
        l = realloc(plan->exec_argv, (n + 2) * sizeof(char *));
        if (!l) {
                free(c);
                return -ENOMEM;
        }
        memmove(l + pos + 1, l + pos, (n - pos + 1) * sizeof(char *));
        l[pos] = c;
        plan->exec_argv = l;
        return 0;
}

/* sbx-exec --handover=in|out --owner=... [--workspace-mode=MODE] -- DIR */
static int handover_argv(const char *exec_path, const char *mode, const char *owner, const char *dir_mode,
                         const char *dir, char ***ret) {
        char **l = dir_mode ? strv_new(exec_path, mode, owner, dir_mode, "--", dir) :
                              strv_new(exec_path, mode, owner, "--", dir);

        if (!l)
                return -ENOMEM;
        *ret = l;
        return 0;
}

/* A cache's state directory, relative to /var/lib/private. */
static int cache_state_dir(const Profile *p, const RunRequest *req, const ProfileCache *c, char **ret) {
        return asprintf(ret, "sbx-cache/%s/%s/%s", req->cache_owner, p->name, c->name) < 0 ? -ENOMEM : 0;
}

static int add_caches(const Profile *p, const RunRequest *req, PropTable *t, char ***ret_options) {
        _cleanup_strv_free_ char **opts = NULL;
        size_t n_opts = 0;
        int r;

        if (!req->cache_owner)
                return 0;
        for (size_t i = 0; i < p->n_caches; i++) {
                const ProfileCache *c = &p->caches[i];
                _cleanup_free_ char *state = NULL, *opt = NULL;
                char **l;
                bool busy;

                busy = cache_busy(req, c->name);
                if (busy && strv_contains(req->caches_ro, c->name))
                        return -EBUSY; /* what it would read is being written */
                if (busy)
                        continue; /* another run of this caller has it: this run's copy is ephemeral */
                /* systemd creates the state directory (below /var/lib/private for a DynamicUser unit) and
                 * hands it to the run's user; the exec helper links it into HOME. */
                if (cache_state_dir(p, req, c, &state) < 0 ||
                    asprintf(&opt, "--cache=/var/lib/private/%s:%s", state, c->path) < 0)
                        return -ENOMEM;
                r = prop_table_extend_strv(t, "StateDirectory", (char *[]) { state, NULL });
                if (r < 0)
                        return r;
                /* read-only: the run can use what an earlier run fetched, and cannot change it */
                if (strv_contains(req->caches_ro, c->name)) {
                        _cleanup_free_ char *path = NULL;

                        if (asprintf(&path, "/var/lib/private/%s", state) < 0)
                                return -ENOMEM;
                        r = prop_table_extend_strv(t, "ReadOnlyPaths", (char *[]) { path, NULL });
                        if (r < 0)
                                return r;
                }
                l = realloc(opts, (n_opts + 2) * sizeof(char *));
                if (!l)
                        return -ENOMEM;
                opts = l;
                opts[n_opts++] = TAKE_PTR(opt);
                opts[n_opts] = NULL;
        }
        *ret_options = TAKE_PTR(opts);
        return 0;
}

/* What the command's device nodes are written through (PrivateDevices= makes the rest of /dev). */
static const char *const landlock_dev_rw[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts",
                                               "/dev/ptmx", NULL };

int policy_landlock_options(const Profile *p, const RunRequest *req, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = strv_push_printf(&l, "--landlock=%s", landlock_mode_to_string(p->landlock));
        /* the OS (the host's or the image's), as its mounts show it: read-only */
        r = r ?: strv_push_printf(&l, "--landlock-ro=%s", "/");
        /* the run's space: HOME (with the workspace and out/ in it), /tmp, /var/tmp, /dev/shm */
        for (const PolicySpaceDir *d = policy_space_dirs; r == 0 && d->path; d++)
                r = strv_push_printf(&l, "--landlock-rw=%s", d->path);
        for (const char *const *d = landlock_dev_rw; r == 0 && *d; d++)
                r = strv_push_printf(&l, "--landlock-rw=%s", *d);
        STRV_FOREACH(w, p->read_write)
                r = r ?: strv_push_printf(&l, "--landlock-rw=%s", *w);
        if (r < 0)
                return r;
        /* the caches HOME links to, as add_caches() gives them; a read-only one is read-only here too */
        for (size_t i = 0; req->cache_owner && i < p->n_caches; i++) {
                const ProfileCache *c = &p->caches[i];
                _cleanup_free_ char *state = NULL;

                if (cache_busy(req, c->name) || strv_contains(req->caches_ro, c->name))
                        continue;
                r = cache_state_dir(p, req, c, &state);
                r = r ?: strv_push_printf(&l, "--landlock-rw=/var/lib/private/%s", state);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* What policy_compile()'s steps share: the request and its profile, the ceilings picked for the run, the
 * plan they fill in, and the exec helper options one step leaves for a later one. */
typedef struct PolicyCompile {
        const Profile *p;
        const RunRequest *req;
        const char *exec_path;
        char **ret_error;
        RunPlan *plan;
        NetworkMode net;
        uint64_t memory, tasks, cpu, disk;
        usec_t runtime;
        char **cache_opts;    /* the exec helper's "--cache=" options, as add_caches() gives them */
} PolicyCompile;

static void policy_compile_done(PolicyCompile *c) {
        strv_free(c->cache_opts);
}

/* The request checked, and the run's ceilings: the profile's, or the lower ones the request asks for. */
static int compile_ceilings(PolicyCompile *c) {
        const Profile *p = c->p;
        const RunRequest *req = c->req;
        int r;

        r = run_request_validate(p, req, c->ret_error);
        if (r < 0)
                return r;
        /* validated above: these cannot fail */
        (void) pick_bound(p, "memory", BOUND_SIZE, req->memory_max, p->memory_max, &p->request.memory, &c->memory,
                          NULL);
        (void) pick_bound(p, "tasks", BOUND_PLAIN, req->tasks_max, p->tasks_max, &p->request.tasks, &c->tasks, NULL);
        (void) pick_bound(p, "timeout", BOUND_USEC, req->runtime_max, p->runtime_max, &p->request.runtime,
                          &c->runtime, NULL);
        (void) pick_bound(p, "cpu", BOUND_PERCENT, req->cpu_quota_percent, p->cpu_quota_percent, &p->request.cpu,
                          &c->cpu, NULL);
        c->net = policy_run_network(p, req);
        /* runsc of the gVisor tier runs one command and ends with it (this build has no "runsc exec" for an
         * unprivileged caller): a sandbox, which takes commands one after another, cannot be of it */
        if (p->isolation == ISOLATION_GVISOR && req->sandbox)
                return error_setf(c->ret_error, -EINVAL, "profile %s: process.isolation \"gvisor\" runs one command "
                                  "per run; sandboxes (create, exec) need a profile of isolation \"kernel\"", p->name);
        /* A run of a network mode other than "none" gets its own network namespace, made and connected
         * for it (sbxd names it): without one there is nothing to enforce the policy in. */
        if (c->net != NETWORK_NONE && (!req->run_id || !req->netns_path))
                return error_setf(c->ret_error, -EINVAL, "network: no network namespace was prepared for this run");
        if (c->memory < (4ULL << 20))
                return error_setf(c->ret_error, -EINVAL,
                                  "memory: %" PRIu64 " bytes is too little to start anything (at least 4M)", c->memory);
        if (c->tasks < 2)
                return error_setf(c->ret_error, -EINVAL, "tasks: at least 2 are needed (the helper and the command)");
        /* whole pages, as tmpfs counts them: what the helper finds is what it was told to expect */
        c->disk = policy_disk_max(p);
        if (c->disk == 0)
                return error_setf(c->ret_error, -EINVAL, "disk: %" PRIu64 " bytes is less than one page", p->disk_max);
        /* the kernel rounds memory.max down to whole pages; so does sbx, so that what the helper finds in
         * the kernel is what it was told to expect (rounding down only tightens) */
        c->memory -= c->memory % page_size();
        return 0;
}

/* The run's ceilings for its record, and the command line that reads its figures when it ended. */
static int compile_limits(PolicyCompile *c) {
        const Profile *p = c->p;
        RunPlan *plan = c->plan;

        plan->profile = p;
        plan->network = c->net;
        plan->disk_max = c->disk;
        /* a request may lower a ceiling, never raise it: up to the profile's, where it lets callers set it */
        plan->limits = (RunLimits) {
                .known = true,
                .memory = c->memory,
                .tasks = c->tasks,
                .cpu_percent = c->cpu,
                .wall_time = c->runtime,
                .output = p->output_max,
                .memory_raise = p->request.memory.allowed && p->memory_max > c->memory ? p->memory_max : 0,
                .tasks_raise = p->request.tasks.allowed && p->tasks_max > c->tasks ? p->tasks_max : 0,
                .cpu_percent_raise = p->request.cpu.allowed && p->cpu_quota_percent > c->cpu ? p->cpu_quota_percent : 0,
                .wall_time_raise = p->request.runtime.allowed && p->runtime_max > c->runtime ? p->runtime_max : 0,
                .unenforced = c->req->unenforced_ceilings &
                              (CEILING_MEMORY | CEILING_TASKS | (c->cpu > 0 ? CEILING_CPU : 0)),
        };
        plan->figures_argv = strv_new(c->exec_path, "--figures=" SBX_FIGURES_DIR);
        return plan->figures_argv ? 0 : -ENOMEM;
}

/* The seccomp rules: sbx's own argument-level ones, then the profile's. None in the gVisor tier: the
 * command's calls never reach a filter on runsc, and this one, which denies seccomp() (the listener's
 * guard), would stop runsc's own filters (the profile refuses syscall_rules with it). */
static int compile_syscall_rules(PolicyCompile *c) {
        const SyscallRule *base;
        size_t n_base;

        if (c->p->isolation == ISOLATION_GVISOR)
                return 0;

        base = policy_baseline_rules(&n_base);
        c->plan->rules = calloc(n_base + c->p->n_rules, sizeof(SyscallRule));
        if (!c->plan->rules)
                return -ENOMEM;
        memcpy(c->plan->rules, base, n_base * sizeof(SyscallRule));
        if (c->p->n_rules > 0)
                memcpy(c->plan->rules + n_base, c->p->rules, c->p->n_rules * sizeof(SyscallRule));
        c->plan->n_rules = n_base + c->p->n_rules;
        return 0;
}

/* The unit's properties: first the profile's fixed part (the drop-in's), then the broker's socket. */
static int compile_unit_fixed(PolicyCompile *c) {
        int r;

        r = policy_compile_fixed(c->p, &c->plan->props);
        if (r < 0)
                return r;
        /* A run with grants reaches the broker through its socket, whose directory is bound in (a socket
         * made anew after a restart of the broker's is the one the run reaches): "-", the broker not
         * installed is a run without one, whose requests fail with a clear error (sbx-fetch(1)). Who
         * asks is told by the caller's cgroup, never by the path (docs/credentials.md). */
        if (c->p->n_grants > 0)
                return prop_table_extend_strv(c->plan->props, "BindReadOnlyPaths",
                                              (char *[]) { (char *) "-" SBX_BROKER_DIR, (char *) SBX_BROKER_DIR, NULL });
        return 0;
}

/* What this run adds to the profile's fixed part: its network, the directories it binds, its caches. */
static int compile_unit_places(PolicyCompile *c) {
        const RunRequest *req = c->req;
        PropTable *t = c->plan->props;
        int r = 0;

        if (c->net == NETWORK_NONE && c->p->network != NETWORK_NONE)
                r = prop_table_add_bool(t, "PrivateNetwork", true);
        if (r == 0 && c->net != NETWORK_NONE)
                r = prop_table_add_string(t, "NetworkNamespacePath", req->netns_path);
        /* The host's own addresses may be public ones, and the run's traffic leaves from the host: they
         * would reach its services. They change at run time, so they are per run, not in the drop-in
         * (the egress table denies them too). */
        if (r == 0 && c->net != NETWORK_NONE && strv_length(req->host_addresses) > 0)
                r = prop_table_extend_strv(t, "IPAddressDeny", req->host_addresses);
        if (r == 0 && req->workspace)
                r = prop_table_extend_strv(t, "BindPaths", (char *[]) { req->workspace, (char *) SBX_WORKSPACE, NULL });
        if (r == 0 && req->dataset)
                r = prop_table_extend_strv(t, "BindReadOnlyPaths",
                                           (char *[]) { req->dataset, (char *) SBX_DATASET, NULL });
        if (r == 0)
                r = add_caches(c->p, req, t, &c->cache_opts);
        if (r == -EBUSY)
                return error_setf(c->ret_error, -EBUSY, "cache-ro: a cache this run would read is in use by another run "
                                  "of the same caller and profile (or being removed)");
        return r;
}

/* The command's environment, its ceilings and how the unit starts. */
static int compile_unit_service(PolicyCompile *c) {
        const RunRequest *req = c->req;
        PropTable *t = c->plan->props;
        _cleanup_free_ char *term_env = NULL;
        /* USER and LOGNAME: the name the command's uid has inside (policy-identity.c), never the dynamic
         * user's, which carries the run id. In the gVisor tier the command is uid 0 of gVisor's kernel
         * (the run's user outside): root. */
        bool gvisor = c->p->isolation == ISOLATION_GVISOR;
        char *env[8] = { (char *) "HOME=" SBX_HOME, (char *) "PATH=/usr/local/bin:/usr/bin:/bin",
                         (char *) "LANG=C.UTF-8", gvisor ? (char *) "USER=root" : (char *) "USER=" SBX_USER_NAME,
                         gvisor ? (char *) "LOGNAME=root" : (char *) "LOGNAME=" SBX_USER_NAME, NULL, NULL, NULL };
        size_t n_env = 5;
        int r;

        if (req->term) {
                if (asprintf(&term_env, "TERM=%s", req->term) < 0)
                        return -ENOMEM;
                env[n_env++] = term_env;
        }
        if (c->p->n_grants > 0)
                env[n_env++] = (char *) "SBX_BROKER=" SBX_BROKER_SOCKET;
        r = prop_table_add_strv(t, "Environment", env);
        r = r ?: prop_table_add_u64(t, "MemoryMax", c->memory);
        r = r ?: prop_table_add_u64(t, "TasksMax", c->tasks);
        if (r == 0 && c->cpu > 0)
                r = prop_table_add_u64(t, "CPUQuota", c->cpu * 10000);
        r = r ?: prop_table_add_u64(t, "RuntimeMaxSec", c->runtime);
        /* A pooled unit is started before its run is asked for: it reports READY=1 when it gets its
         * command, so that RuntimeMaxSec= counts from there; until then TimeoutStartSec= bounds how long
         * it may wait (docs/pool.md). */
        r = r ?: prop_table_add_string(t, "Type", req->pool ? "notify" : "exec");
        if (r == 0 && req->pool)
                r = prop_table_add_u64(t, "TimeoutStartSec", POLICY_POOL_WAIT_MAX_USEC);
        return r;
}

/* A run on a base image: its root and the host's exec helper in it (policy-image.c). */
static int compile_unit_image(PolicyCompile *c) {
        return policy_image_compile(c->p, c->req, c->exec_path, c->plan, c->plan->props, c->ret_error);
}

/* The digest names the policy: what was added so far, the same for the same profile and request. */
static int compile_digest(PolicyCompile *c) {
        return prop_table_digest(c->plan->props, c->plan->digest);
}

/* What is named after the run, left out of the digest: its cgroup, its space and export units, and the
 * binds of its space (and of its devpts instance). */
static int compile_run_units(PolicyCompile *c) {
        const RunRequest *req = c->req;
        PropTable *t = c->plan->props;
        _cleanup_free_ char *pts = NULL;
        int r;

        /* The run's own cgroup, the only one it sees (the helper reads its limits and figures there). Named
         * after the run, it is left out of the digest, which names the policy: the same for the same
         * profile and request, whichever run and unit (a pooled one included, docs/pool.md). */
        if (req->run_id) {
                _cleanup_free_ char *cg = NULL;

                r = policy_cgroup_path(c->p->name, req->run_id, &cg);
                if (r == 0)
                        r = prop_table_extend_strv(t, "BindReadOnlyPaths", (char *[]) { cg, cg, NULL });
                if (r < 0)
                        return r;
                /* The run's space: one tmpfs for every place it can write outside its workspace, so that
                 * one cap holds for all of them together. Bind mounts, as systemd 252 keeps one mount per
                 * path and a bind wins over the PrivateTmp= that DynamicUser= implies (a tmpfs does not). */
                r = compile_space_unit(c->p, req, c->exec_path, c->disk, c->plan);
                if (r < 0)
                        return r;
                if (req->export_dir) {
                        r = compile_export_unit(c->p, req, c->plan);
                        if (r < 0)
                                return r;
                }
                for (const PolicySpaceDir *d = policy_space_dirs; d->path; d++) {
                        _cleanup_free_ char *src = NULL;

                        if (asprintf(&src, SBX_SPACE_DIR "/%s/%s", req->run_id, d->name) < 0)
                                return -ENOMEM;
                        r = prop_table_extend_strv(t, "BindPaths", (char *[]) { src, (char *) d->path, NULL });
                        if (r < 0)
                                return r;
                }
                /* over the host's instance that PrivateDevices= binds */
                if (asprintf(&pts, SBX_SPACE_DIR "/%s/" SBX_SPACE_PTS, req->run_id) < 0)
                        return -ENOMEM;
                r = prop_table_extend_strv(t, "BindPaths", (char *[]) { pts, (char *) "/dev/pts", NULL });
                if (r < 0)
                        return r;
        }

        if (req->export_dir && !c->plan->export_props)
                return error_setf(c->ret_error, -EINVAL, "export: the run has no id to export under");
        return 0;
}

/* The exec helper's command line begins with what it re-checks inside the unit, refusing to run the
 * command otherwise (fail closed: systemd ignores some settings silently when the kernel lacks a
 * feature). */
static int compile_helper_expectations(PolicyCompile *c) {
        const Profile *p = c->p;
        const RunRequest *req = c->req;
        char ***argv = &c->plan->exec_argv;
        int r;

        r = strv_push_printf(argv, "%s", c->exec_path);
        r = r ?: strv_push_printf(argv, "--expect-memory-max=%" PRIu64, c->memory);
        r = r ?: strv_push_printf(argv, "--expect-swap-max=%" PRIu64, p->swap_max - p->swap_max % page_size());
        r = r ?: strv_push_printf(argv, "--expect-tasks-max=%" PRIu64, c->tasks);
        r = r ?: strv_push_printf(argv, "--expect-network=%s", c->net == NETWORK_NONE ? "none" : "egress");
        r = r ?: strv_push_printf(argv, "--expect-profile-digest=%s", p->digest);
        r = r ?: strv_push_printf(argv, "--expect-disk-max=%" PRIu64, c->disk);
        if (r == 0 && p->output_max > 0)
                r = strv_push_printf(argv, "--output-max=%" PRIu64 "%s", p->output_max,
                                     p->output_action == OUTPUT_ACTION_CUT ? ":cut" : "");
        if (r == 0 && c->cpu > 0)
                r = strv_push_printf(argv, "--expect-cpu-quota=%" PRIu64, c->cpu);
        if (r == 0 && c->net != NETWORK_NONE && req->host_netns_ino != 0)
                r = strv_push_printf(argv, "--expect-netns-not=%" PRIu64, req->host_netns_ino);
        return r ?: strv_push_printf(argv, "--expect-egress");
}

/* The gVisor tier (helper/gvisor.h): runsc's network mode, and the profile's syscall lists, which the helper
 * has runsc apply to the command inside gVisor (the unit's filter only ever sees runsc's own calls). No
 * Landlock: runsc cannot run under it. Never gVisor's own network stack: it would send raw frames no
 * cgroup program judges; "host" makes every socket of the command a socket of the unit's, in the run's
 * namespace, judged like any other (docs/egress.md). */
static int compile_gvisor_options(PolicyCompile *c) {
        const Profile *p = c->p;
        char ***argv = &c->plan->exec_argv;
        _cleanup_strv_free_ char **deny = strv_copy(p->syscall_deny);
        int r;

        if (!deny || strv_add_missing(&deny, policy_fixed_denied_syscalls) < 0)
                return -ENOMEM;
        r = strv_push_printf(argv, "--isolation=gvisor:%s", c->net == NETWORK_NONE ? "none" : "host");
        STRV_FOREACH(a, p->syscall_allow)
                r = r ?: strv_push_printf(argv, "--gvisor-allow=%s", *a);
        STRV_FOREACH(d, deny)
                r = r ?: strv_push_printf(argv, "--gvisor-deny=%s", *d);
        return r;
}

/* Then the caches it links into HOME, the host's addresses it checks are denied, the ceilings it may
 * find without a controller, and the command's second file-system wall (Landlock). */
static int compile_helper_options(PolicyCompile *c) {
        const RunRequest *req = c->req;
        char ***argv = &c->plan->exec_argv;
        _cleanup_strv_free_ char **ll = NULL;
        int r = 0;

        STRV_FOREACH(o, c->cache_opts)
                r = r ?: strv_push_printf(argv, "%s", *o);
        if (c->net != NETWORK_NONE)
                STRV_FOREACH(h, req->host_addresses)
                        r = r ?: strv_push_printf(argv, "--expect-denied=%.*s", (int) strcspn(*h, "/"), *h);
        /* A testbed build's ceilings that this host has no controller for: the helper lets their files be
         * missing (and only then), the record says so (src/shared/ceilings.h) */
        if (r == 0 && c->plan->limits.unenforced != 0) {
                char list[CEILINGS_LIST_MAX];

                r = strv_push_printf(argv, "--unenforced-ceilings=%s",
                                     ceilings_to_list(c->plan->limits.unenforced, ",", list));
        }
        if (c->p->isolation == ISOLATION_GVISOR)
                return r ?: compile_gvisor_options(c);
        /* the same view of the file system in Landlock's terms (helper/landlock.h) */
        r = r ?: policy_landlock_options(c->p, req, &ll);
        STRV_FOREACH(o, ll)
                r = r ?: strv_push_printf(argv, "%s", *o);
        return r;
}

/* Last, the directories bound and the kind of run (export, sandbox, pool), and "--": the command comes
 * on the unit's stdin (sandbox-proto.h), never as a property. */
static int compile_helper_run(PolicyCompile *c) {
        const RunRequest *req = c->req;
        char ***argv = &c->plan->exec_argv;
        int r;

        r = strv_push_printf(argv, "%s", req->workspace ? "--workspace=bound" : "--workspace=private");
        /* The bind mounts are made by path, after sbxd checked the directories: the helper compares what
         * it finds bound with what was checked (a parent swapped for a symlink in between would bind
         * another directory). */
        if (r == 0 && req->workspace && req->workspace_ino != 0)
                r = strv_push_printf(argv, "--expect-dir=" SBX_WORKSPACE ":%" PRIu64 ":%" PRIu64,
                                     (uint64_t) req->workspace_dev, (uint64_t) req->workspace_ino);
        if (r == 0 && req->dataset && req->dataset_ino != 0)
                r = strv_push_printf(argv, "--expect-dir=" SBX_DATASET ":%" PRIu64 ":%" PRIu64,
                                     (uint64_t) req->dataset_dev, (uint64_t) req->dataset_ino);
        if (r == 0 && req->export_dir)
                r = strv_push_printf(argv, "--export-out");
        if (r == 0 && req->sandbox)
                r = strv_push_printf(argv, "--serve");
        if (r == 0 && req->pool)
                r = strv_push_printf(argv, "--pool");
        return r ?: strv_push_printf(argv, "--");
}

/* A bound workspace is handed to the run's user before it starts and back after it ended. */
static int compile_handover(PolicyCompile *c) {
        const RunRequest *req = c->req;
        char owner[128], dir_mode[32];
        bool checked = req->workspace_ino != 0;
        int r;

        if (!req->workspace)
                return 0;
        if (checked) { /* the hand-over checks it walks the directory sbxd checked */
                snprintf(owner, sizeof(owner), "--owner=%u:%u:%" PRIu64 ":%" PRIu64, (unsigned) req->workspace_uid,
                         (unsigned) req->workspace_gid, (uint64_t) req->workspace_dev, (uint64_t) req->workspace_ino);
                /* 0700 while the run owns it, this mode again afterwards */
                snprintf(dir_mode, sizeof(dir_mode), "--workspace-mode=%04o", (unsigned) (req->workspace_mode & 07777));
        } else
                snprintf(owner, sizeof(owner), "--owner=%u:%u", (unsigned) req->workspace_uid,
                         (unsigned) req->workspace_gid);
        r = handover_argv(c->exec_path, "--handover=in", owner, checked ? dir_mode : NULL, req->workspace,
                          &c->plan->pre_argv);
        if (r < 0)
                return r;
        return handover_argv(c->exec_path, "--handover=out", owner, checked ? dir_mode : NULL, req->workspace,
                             &c->plan->post_argv);
}

/* A run on a base image: the exec helper's command lines as they run inside it (policy-image.c). */
static int compile_image_argv(PolicyCompile *c) {
        return policy_image_wrap(c->req, c->exec_path, c->plan);
}

/* Modes other than none: the run's network unit. */
static int compile_network_unit(PolicyCompile *c) {
        if (c->net == NETWORK_NONE)
                return 0;
        return compile_net_unit(c->req, c->exec_path, c->plan);
}

/* policy_compile()'s steps, in order: each adds its part of the plan. The order is the order of the
 * unit's properties and of the exec helper's options; the digest covers what comes before it. */
static int (*const policy_compile_steps[])(PolicyCompile *c) = {
        compile_ceilings,
        compile_limits,
        compile_syscall_rules,
        compile_unit_fixed,
        compile_unit_places,
        compile_unit_service,
        compile_unit_image,
        compile_digest,
        compile_run_units,
        compile_helper_expectations,
        compile_helper_options,
        compile_helper_run,
        compile_handover,
        compile_image_argv,
        compile_network_unit,
};

int policy_compile(const Profile *p, const RunRequest *req, const char *exec_path, RunPlan **ret, char **ret_error) {
        _cleanup_(run_plan_freep) RunPlan *plan = calloc(1, sizeof(RunPlan));
        _cleanup_(policy_compile_done) PolicyCompile c = { .p = p, .req = req, .exec_path = exec_path,
                                                           .ret_error = ret_error, .plan = plan };
        int r;

        if (!plan)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(policy_compile_steps); i++) {
                r = policy_compile_steps[i](&c);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(plan);
        return 0;
}

/* ---- the warm pool ----------------------------------------------------------------------------------- */

/* What a claim applies to a pooled unit, and what makes a unit a pooled one: left out of the comparison. */
static const char *const pool_claim_props[] = { "MemoryMax", "TasksMax", "CPUQuota", "Type", "TimeoutStartSec", NULL };
static const char *const pool_claim_options[] = { "--expect-memory-max=", "--expect-tasks-max=",
                                                  "--expect-cpu-quota=", "--unenforced-ceilings=", "--pool", NULL };

static bool pool_line_skipped(const char *line) {
        size_t k = strcspn(line, "=");

        STRV_FOREACH(n, (char **) pool_claim_props)
                if (strlen(*n) == k && strneq(line, *n, k))
                        return true;
        return false;
}

static bool pool_option_skipped(const char *o) {
        STRV_FOREACH(n, (char **) pool_claim_options) {
                size_t k = strlen(*n);

                if (streq(o, *n) || ((*n)[k - 1] == '=' && strneq(o, *n, k)))
                        return true;
        }
        return false;
}

/* The next line of text at *p that is compared, or NULL at the end; its length in *ret_len. */
static const char *pool_next_line(const char **p, size_t *ret_len) {
        while (**p) {
                const char *l = *p;
                size_t k = strcspn(l, "\n");

                *p = l[k] ? l + k + 1 : l + k;
                if (!pool_line_skipped(l)) {
                        *ret_len = k;
                        return l;
                }
        }
        return NULL;
}

/* The next helper option before "--" that is compared, or NULL. */
static const char *pool_next_option(char **argv, size_t *i) {
        for (; argv[*i] && !streq(argv[*i], "--"); (*i)++)
                if (!pool_option_skipped(argv[*i]))
                        return argv[(*i)++];
        return NULL;
}

int policy_pool_match(const RunPlan *member, const RunPlan *run, char **ret_why) {
        _cleanup_free_ char *a = NULL, *b = NULL;
        const char *pa, *pb, *la, *lb;
        size_t na = 0, nb = 0, ia = 1, ib = 1;
        int r;

        if (!member || !run || !member->exec_argv || !run->exec_argv)
                return -EINVAL;
        if (run->pre_argv || run->post_argv)
                return error_setf(ret_why, 0, "the run binds a workspace");
        if (run->export_props)
                return error_setf(ret_why, 0, "the run exports through review");
        if (run->net_props || run->network != NETWORK_NONE)
                return error_setf(ret_why, 0, "the run has a network of its own");
        if (!streq_ptr(member->profile->digest, run->profile->digest))
                return error_setf(ret_why, 0, "the profile changed since the pooled unit started");
        r = prop_table_render_text(member->props, &a);
        if (r >= 0)
                r = prop_table_render_text(run->props, &b);
        if (r < 0)
                return r;
        for (pa = a, pb = b;;) {
                la = pool_next_line(&pa, &na);
                lb = pool_next_line(&pb, &nb);
                if (!la && !lb)
                        break;
                if (!la || !lb || na != nb || memcmp(la, lb, na) != 0)
                        return error_setf(ret_why, 0, "unit property '%.*s' differs", (int) strcspn(lb ?: la, "="),
                                          lb ?: la);
        }
        for (;;) {
                const char *oa = pool_next_option(member->exec_argv, &ia), *ob = pool_next_option(run->exec_argv, &ib);

                if (!oa && !ob)
                        break;
                if (!oa || !ob || !streq(oa, ob))
                        return error_setf(ret_why, 0, "helper option '%.*s' differs", (int) strcspn(ob ?: oa, "="),
                                          ob ?: oa);
        }
        return 1;
}

int policy_pool_limits(const RunPlan *run, PoolLimits *ret) {
        const Prop *mem = prop_table_get(run->props, "MemoryMax"), *tasks = prop_table_get(run->props, "TasksMax"),
                   *cpu = prop_table_get(run->props, "CPUQuota");

        if (!mem || !tasks)
                return -EINVAL;
        *ret = (PoolLimits) {
                .memory_max = mem->u,
                .tasks_max = tasks->u,
                .cpu_quota_per_sec_usec = cpu ? cpu->u : UINT64_MAX,
        };
        return 0;
}
