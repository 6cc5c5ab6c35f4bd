/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl profile list, show, check and reload: the profile files of this machine, and their effect. */
#include <inttypes.h>
#include <stdio.h>

#include "common.h"
#include "policy.h"
#include "profile-load.h"
#include "verbs.h"

static int load_profile_arg(const char *arg, Profile **ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (strchr(arg, '/'))
                r = profile_load_file(arg, ret, &err);
        else {
                r = profile_search_path(&dirs);
                if (r < 0)
                        return failed("out of memory");
                r = profile_load(dirs, arg, ret, &err);
        }
        if (r < 0)
                return r == -ENOENT || r == -ERFKILL || r == -EINVAL ? refused("%s", err ?: strerror(-r))
                                                                   : failed("%s", err ?: strerror(-r));
        return 0;
}

/* max NULL: the profile sets no ceiling. */
static void print_bound(const char *what, const RequestBound *b, const char *min, const char *max) {
        if (b->allowed)
                printf(" %s (%s..%s)", what, min, max ?: "unlimited");
}

static void fmt_size(char buf[static 32], uint64_t v) {
        static const char suffix[] = "KMGT";

        if (v == 0) {
                snprintf(buf, 32, "0");
                return;
        }
        for (int i = 4; i >= 1; i--)
                if (v >= (1ULL << (10 * i)) && v % (1ULL << (10 * i)) == 0) {
                        snprintf(buf, 32, "%" PRIu64 "%c", v >> (10 * i), suffix[i - 1]);
                        return;
                }
        snprintf(buf, 32, "%" PRIu64, v);
}

static void fmt_usec(char buf[static 32], usec_t u) {
        if (u == 0)
                snprintf(buf, 32, "0");
        else if (u % (3600 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "h", u / (3600 * USEC_PER_SEC));
        else if (u % (60 * USEC_PER_SEC) == 0)
                snprintf(buf, 32, "%" PRIu64 "min", u / (60 * USEC_PER_SEC));
        else if (u % USEC_PER_SEC == 0)
                snprintf(buf, 32, "%" PRIu64 "s", u / USEC_PER_SEC);
        else if (u % USEC_PER_MSEC == 0)
                snprintf(buf, 32, "%" PRIu64 "ms", u / USEC_PER_MSEC);
        else
                snprintf(buf, 32, "%" PRIu64 "us", u);
}

static void print_rule(const SyscallRule *r, const char *origin) {
        printf("  %s", r->syscall);
        if (r->has_arg) {
                printf(" arg%u%s %s ", r->arg, r->arg32 ? " (32 bits)" : "", syscall_cmp_to_string(r->cmp));
                if (r->value_name)
                        printf("%s", r->value_name);
                else
                        printf("%" PRIu64, r->value);
                if (r->cmp == SYSCALL_CMP_MASKED_EQ)
                        printf(" mask 0x%" PRIx64, r->mask);
        }
        printf(" -> EPERM (%s)\n", origin);
}

/* What a profile allows and sets, in words: its network, ceilings, caches, what a run may ask for, and its
 * syscall rules. */
static void print_profile_policy(const Profile *p) {
        char a[32], b[32], c[32], d[32], e[32], f[32];
        const SyscallRule *base;
        size_t n_base;

        printf("profile %s: %s\n", p->name, p->description);
        printf("  file:       %s\n  digest:     %s\n", strna(p->path), p->digest);
        printf("  isolation:  %s\n", p->isolation == ISOLATION_GVISOR
                                             ? "gvisor (the command runs in runsc, gVisor's kernel; sandboxes refused)"
                                             : "kernel (the host's, behind seccomp and Landlock)");
        printf("  network:    %s", network_mode_to_string(p->network));
        for (size_t i = 0; i < p->n_destinations; i++) {
                const NetDestination *dst = &p->destinations[i];

                printf("%s%s", i == 0 ? " (" : ", ", dst->host ?: dst->address);
                for (size_t k = 0; k < dst->n_ports; k++) {
                        printf("%s%u", k == 0 ? ":" : ",", dst->ports[k].lo);
                        if (dst->ports[k].hi != dst->ports[k].lo)
                                printf("-%u", dst->ports[k].hi);
                }
                if (dst->protocol != NET_PROTOCOL_ANY)
                        printf("/%s", net_protocol_to_string(dst->protocol));
                if (dst->private)
                        printf(" private");
                if (i + 1 == p->n_destinations)
                        printf(")");
        }
        printf("\n");
        if (p->network == NETWORK_ALLOWLIST)
                printf("              (not enforceable per destination yet: runs are refused unless narrowed "
                       "to none)\n");
        printf("  workspace:  %s\n", p->workspace ? "a caller may bind one (writable)" : "none");
        fmt_size(a, p->memory_max);
        fmt_size(b, p->swap_max);
        fmt_usec(c, p->runtime_max);
        fmt_size(d, p->disk_max);
        fmt_size(e, p->output_max);
        snprintf(f, sizeof(f), "%u%%", p->cpu_quota_percent);
        printf("  per run:    memory %s, swap %s, cpu %s, tasks %" PRIu64 ", wall time %s, disk %s, output %s%s\n", a,
               b, p->cpu_quota_percent ? f : "unlimited", p->tasks_max, c, d, p->output_max ? e : "unlimited",
               !p->output_max ? "" : p->output_action == OUTPUT_ACTION_CUT ? " (then cut)" : " (then stopped)");
        /* 0: the slice sets no limit */
        fmt_size(a, p->slice_memory_max);
        snprintf(b, sizeof(b), "%" PRIu64, p->slice_tasks_max);
        snprintf(c, sizeof(c), "%u%%", p->slice_cpu_quota_percent);
        printf("  all runs:   memory %s, tasks %s, cpu %s\n", p->slice_memory_max ? a : "unlimited",
               p->slice_tasks_max ? b : "unlimited", p->slice_cpu_quota_percent ? c : "unlimited");
        printf("  caches:    ");
        for (size_t i = 0; i < p->n_caches; i++)
                printf(" %s=~/%s", p->caches[i].name, p->caches[i].path);
        printf("%s\n", p->n_caches ? "" : " none (everything is ephemeral)");
        printf("  a run may set:");
        fmt_size(a, p->request.memory.min);
        fmt_size(b, p->memory_max);
        print_bound("--memory", &p->request.memory, a, b);
        snprintf(a, sizeof(a), "%" PRIu64, p->request.tasks.min);
        snprintf(b, sizeof(b), "%" PRIu64, p->tasks_max);
        print_bound("--tasks", &p->request.tasks, a, b);
        fmt_usec(a, p->request.runtime.min);
        fmt_usec(b, p->runtime_max);
        print_bound("--timeout", &p->request.runtime, a, b);
        snprintf(a, sizeof(a), "%" PRIu64 "%%", p->request.cpu.min);
        snprintf(b, sizeof(b), "%u%%", p->cpu_quota_percent);
        print_bound("--cpu", &p->request.cpu, a, p->cpu_quota_percent ? b : NULL);
        if (p->request.network_none)
                printf(" --network=none");
        STRV_FOREACH(u, p->request.dataset_under)
                printf("%s%s", u == p->request.dataset_under ? " --dataset=<below " : ", ", *u);
        if (p->request.dataset_under)
                printf(">");
        /* -E: the names allowed, but those denied */
        printf(" -E");
        STRV_FOREACH(g, p->environment_allow)
                printf("%s%s", g == p->environment_allow ? " " : ",", *g);
        if (!p->environment_allow || !p->environment_allow[0])
                printf(" (none)");
        STRV_FOREACH(g, p->environment_deny)
                printf("%s%s", g == p->environment_deny ? " but " : ",", *g);
        if (p->isolation == ISOLATION_GVISOR) {
                printf("\n  syscall lists: applied inside gVisor too (EPERM); no argument-level rules\n");
                return;
        }
        printf("\n  syscall rules (seccomp, counted in the record):\n");
        base = policy_baseline_rules(&n_base);
        for (size_t i = 0; i < n_base; i++)
                print_rule(&base[i], "sbx");
        for (size_t i = 0; i < p->n_rules; i++)
                print_rule(&p->rules[i], "profile");
}

static int show_profile(const Profile *p) {
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_(prop_table_freep) PropTable *fixed = NULL, *slice = NULL;
        _cleanup_free_ char *err = NULL, *t_fixed = NULL, *t_run = NULL, *t_slice = NULL, *dropin = NULL,
                            *slice_name = NULL;
        /* a run's properties as sbxd would compile them, with RUN for its id */
        RunRequest req = { .argv = (char *[]) { (char *) "CMD", NULL }, .run_id = (char *) "RUN",
                           .netns_path = (char *) SBX_NETNS_DIR "/RUN" };
        PropTable rest;
        int r;

        r = policy_compile_fixed(p, &fixed);
        r = r < 0 ? r : policy_compile_slice(p, &slice);
        if (r < 0)
                return failed("cannot compile profile %s: %s", p->name, strerror(-r));
        r = policy_compile(p, &req, SBX_EXEC_PATH, &plan, &err);
        if (r < 0 && r != -EOPNOTSUPP)
                return failed("cannot compile profile %s: %s", p->name, err ?: strerror(-r));
        if (!arg_legend) { /* just a run's properties, one per line (used by bench/) */
                if (!plan)
                        return failed("%s", err);
                r = prop_table_render_text(plan->props, &t_run);
                if (r < 0)
                        return failed("cannot render the properties: %s", strerror(-r));
                fputs(t_run, stdout);
                return 0;
        }

        print_profile_policy(p);

        r = policy_dropin_dir_name(p->name, &dropin);
        r = r < 0 ? r : policy_slice_name(p->name, &slice_name);
        r = r < 0 ? r : prop_table_render_text(fixed, &t_fixed);
        r = r < 0 ? r : prop_table_render_text(slice, &t_slice);
        if (r < 0)
                return failed("cannot render the properties: %s", strerror(-r));
        printf("\n# %s: the fixed hardening, in every run's transient unit and in the drop-in\n"
               "# %s/50-sbx-profile.conf\n[Service]\n%sEnvironment=SBX_PROFILE_DIGEST=%s\n", dropin, dropin, t_fixed,
               p->digest);
        if (plan) {
                rest = (PropTable) { .props = plan->props->props + fixed->n, .n = plan->props->n - fixed->n };
                r = prop_table_render_text(&rest, &t_run);
                if (r < 0)
                        return failed("cannot render the properties: %s", strerror(-r));
                printf("\n# added per run (transient unit, defaults shown)\n%s", t_run);
        } else
                printf("\n# runs: %s\n", err);
        printf("\n# %s: all runs together\n[Slice]\n%s", slice_name, t_slice);
        return 0;
}

static int profile_list(int argc, char **argv) {
        _cleanup_strv_free_ char **dirs = NULL, **names = NULL, **paths = NULL, **ignored = NULL;
        int r, ret = 0;

        r = profile_search_path(&dirs);
        r = r < 0 ? r : profile_enumerate(dirs, &names, &paths, &ignored);
        if (r < 0)
                return failed("cannot list profiles: %s", strerror(-r));
        if (arg_legend)
                printf("%-12s %-9s %-7s %s\n", "NAME", "NETWORK", "STATE", "DESCRIPTION / FILE");
        for (size_t i = 0; names[i]; i++) {
                _cleanup_(profile_freep) Profile *p = NULL;
                _cleanup_free_ char *err = NULL;

                r = profile_load_file(paths[i], &p, &err);
                if (r < 0) {
                        printf("%-12s %-9s %-7s %s\n", names[i], "-", "invalid", paths[i]);
                        fprintf(stderr, "sbxctl: %s\n", err ?: strerror(-r));
                        ret = SBX_EXIT_FAILURE;
                        continue;
                }
                printf("%-12s %-9s %-7s %s\n", p->name, network_mode_to_string(p->network), "ok",
                       p->description);
        }
        STRV_FOREACH(f, ignored)
                fprintf(stderr, "sbxctl: ignoring %s: not a valid profile name\n", *f);
        return ret;
}

static int profile_show(int argc, char **argv) {
        _cleanup_(profile_freep) Profile *p = NULL;
        int r;

        r = load_profile_arg(argc > 0 ? argv[0] : PROFILE_DEFAULT, &p);
        if (r != 0)
                return r;
        return show_profile(p);
}

static int profile_check(int argc, char **argv) {
        int r, ret = 0;

        for (char **f = argv; *f; f++) {
                _cleanup_(profile_freep) Profile *p = NULL;
                _cleanup_free_ char *err = NULL;

                r = profile_load_file(*f, &p, &err);
                if (r < 0) {
                        fprintf(stderr, "%s\n", err ?: strerror(-r));
                        ret = SBX_EXIT_REFUSED;
                } else if (arg_legend)
                        printf("%s: ok (profile %s, %s)\n", *f, p->name, p->digest);
        }
        return ret;
}

static int profile_reload(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = connect_systemd_bus(&bus);
        if (r != 0)
                return r;
        /* systemd re-runs its generators, sbx-generator among them, and reloads the units */
        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "Reload", &error, NULL, NULL);
        if (r < 0 && connection_failed(bus, &error))
                return connection_failure(r);
        if (r < 0)
                return failed("systemd daemon-reload failed%s: %s", arg_host || arg_machine ? bus_owner() : "",
                              error.message ?: strerror(-r));
        return 0;
}

static const Verb profile_verbs[] = {
        { "list",   0, VERB_ANY, profile_list },
        { "show",   0, 1,        profile_show,   .usage = "expected at most one profile" },
        { "check",  1, VERB_ANY, profile_check,  .usage = "expected one or more profile files" },
        { "reload", 0, 0,        profile_reload },
        {}
};

int verb_profile(int argc, char **argv) {
        /* list, show and check read profile files: those of this machine. reload asks systemd over the bus. */
        if ((arg_host || arg_machine) && !(argc > 0 && streq(argv[0], "reload")))
                return refused("profile %s reads the profile files of this machine, not those%s; run sbxctl there",
                               argc > 0 ? argv[0] : "list", bus_owner());
        if (argc == 0)
                return profile_list(0, argv);
        return verb_dispatch(profile_verbs, "profile", "list, show, check, reload", argv[0], argc - 1, argv + 1);
}
