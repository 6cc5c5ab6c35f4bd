/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/profile-compile: what sbxd does per run before it calls systemd, side by side: reading the
 * profile from the search path, parsing it, compiling profile + request into the property table and the
 * exec helper's command line, rendering the table (text and digest), and compiling the seccomp rules
 * with libseccomp. Prints the median time of each step per shipped profile; target for the whole per-run
 * compile: under 1 ms.
 *
 *   build/bench/profile-compile [PROFILES_DIR] [ITERATIONS]     (default: the source tree's profiles/)
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "egress-policy.h"
#include "fileio.h"
#include "policy.h"
#include "profile-load.h"
#include "seccomp-filter.h"

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

int main(int argc, char *argv[]) {
        const char *dir = argc > 1 ? argv[1] : SBX_SOURCE_ROOT "/profiles";
        size_t iters = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
        _cleanup_strv_free_ char **dirs = NULL, **names = NULL, **paths = NULL;
        _cleanup_free_ uint64_t *t_load = NULL, *t_compile = NULL, *t_seccomp = NULL, *t_egress = NULL,
                                  *t_total = NULL;
        char *d[] = { (char *) dir, NULL };
        bool over = false;
        int r;

        if (iters < 10)
                iters = 10;
        r = profile_enumerate(d, &names, &paths, NULL);
        if (r < 0 || !names[0]) {
                fprintf(stderr, "profile-compile: no profiles in %s\n", dir);
                return 1;
        }
        t_load = calloc(iters, sizeof(uint64_t));
        t_compile = calloc(iters, sizeof(uint64_t));
        t_seccomp = calloc(iters, sizeof(uint64_t));
        t_egress = calloc(iters, sizeof(uint64_t));
        t_total = calloc(iters, sizeof(uint64_t));
        if (!t_load || !t_compile || !t_seccomp || !t_egress || !t_total)
                return 1;
        dirs = calloc(2, sizeof(char *));
        if (!dirs || !(dirs[0] = strdup(dir)))
                return 1;

        printf("%-10s %12s %12s %12s %12s %12s   (median of %zu, microseconds)\n", "profile", "load+parse",
               "compile", "seccomp", "egress", "per run", iters);
        for (size_t k = 0; names[k]; k++) {
                for (size_t i = 0; i < iters; i++) {
                        _cleanup_(profile_freep) Profile *p = NULL;
                        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
                        _cleanup_free_ char *err = NULL, *hex = NULL, *text = NULL;
                        _cleanup_(egress_table_freep) EgressTable *table = NULL;
                        RunRequest req = { .argv = (char *[]) { (char *) "/bin/true", NULL },
                                           .network = (char *) "none", .cache_owner = (char *) "0123456789abcdef",
                                           .run_id = (char *) "0123456789abcdef0123456789abcdef",
                                           .netns_path = (char *) SBX_NETNS_DIR "/0123456789abcdef0123456789abcdef" };
                        uint64_t a, b, c, e, f;

                        a = now_ns();
                        r = profile_load(dirs, names[k], &p, &err);
                        if (r < 0) {
                                fprintf(stderr, "profile-compile: %s\n", err ?: strerror(-r));
                                return 1;
                        }
                        b = now_ns();
                        req.network = NULL; /* the profile's own network mode */
                        r = policy_compile(p, &req, "/usr/libexec/sbx/sbx-exec", &plan, &err);
                        if (r >= 0)
                                r = prop_table_render_text(plan->props, &text);
                        if (r < 0) {
                                fprintf(stderr, "profile-compile: %s: %s\n", names[k], err ?: strerror(-r));
                                return 1;
                        }
                        c = now_ns();
                        r = seccomp_rules_compile(plan->rules, plan->n_rules, &hex, &err);
                        if (r < 0) {
                                fprintf(stderr, "profile-compile: %s: %s\n", names[k], err ?: strerror(-r));
                                return 1;
                        }
                        e = now_ns();
                        /* the run's egress map entries (what sbxd writes once the unit's cgroup exists) */
                        r = egress_compile(p, plan->network, &table, &err);
                        if (r < 0) {
                                fprintf(stderr, "profile-compile: %s: %s\n", names[k], err ?: strerror(-r));
                                return 1;
                        }
                        f = now_ns();
                        t_load[i] = b - a;
                        t_compile[i] = c - b;
                        t_seccomp[i] = e - c;
                        t_egress[i] = f - e;
                        t_total[i] = f - a;
                }
                double total = median_us(t_total, iters);
                printf("%-10s %12.1f %12.1f %12.1f %12.1f %12.1f\n", names[k], median_us(t_load, iters),
                       median_us(t_compile, iters), median_us(t_seccomp, iters), median_us(t_egress, iters), total);
                if (total >= 1000.0)
                        over = true;
        }
        printf("target: per-run compile under 1000 us: %s\n", over ? "MISSED" : "met");
        return 0;
}
