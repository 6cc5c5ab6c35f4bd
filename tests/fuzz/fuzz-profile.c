/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profile documents (src/profile/profile.c): whatever the bytes, profile_parse() gives a Profile or -EINVAL
 * with a one-line message (or -ENOMEM), and a profile it accepts compiles (policy.c) without a crash: its
 * fixed hardening, its slice and a plain run's plan, each rendered as unit text. */
#include <errno.h>

#include "fuzz.h"
#include "policy.h"
#include "profile.h"
#include "proptable.h"

static void render(const PropTable *t) {
        _cleanup_free_ char *text = NULL;
        char digest[72];

        fuzz_check(prop_table_render_text(t, &text) >= 0);
        fuzz_check(prop_table_digest(t, digest) >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(prop_table_freep) PropTable *fixed = NULL, *slice = NULL;
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_free_ char *error = NULL, *compile_error = NULL;
        char *argv[] = { (char *) "true", NULL };
        RunRequest req = {
                .argv = argv,
                .run_id = (char *) "0123456789abcdef0123456789abcdef",
                .netns_path = (char *) "/run/sbx/netns/0123456789abcdef0123456789abcdef",
        };
        int r;

        r = profile_parse((const char *) data, size, "fuzz", "fuzz.json", &p, &error);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                fuzz_check(r == -EINVAL);
                fuzz_check(!p);
                fuzz_check_one_line(error);
                return 0;
        }
        fuzz_check(r == 0 && p && !error);

        fuzz_check(policy_compile_fixed(p, &fixed) >= 0);
        render(fixed);
        fuzz_check(policy_compile_slice(p, &slice) >= 0);
        render(slice);

        req.profile = p->name;
        r = policy_compile(p, &req, "/usr/libexec/sbx/sbx-exec", &plan, &compile_error);
        if (r >= 0) {
                fuzz_check(plan && !compile_error);
                render(plan->props);
        } else if (r != -ENOMEM)
                fuzz_check_one_line(compile_error);
        return 0;
}
