/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a base image adds to a run's plan (docs/images.md). */
#include <errno.h>
#include <stdlib.h>

#include "policy.h"

int policy_image_validate(const Profile *p, const RunRequest *req, char **ret_error) {
        ImageRef ref;
        int r;

        if (!req->image)
                return 0;
        r = image_ref_merge(p->image, req->image, &ref, ret_error);
        /* two pinned digests that differ: a mismatch, which sbxd reports as one when it resolves the
         * image (policy_image_validate() only refuses what is a bad request) */
        if (r == -EBADMSG) {
                if (ret_error)
                        *ret_error = mfree(*ret_error);
                return 0;
        }
        return r;
}

int policy_image_compile(const Profile *p, const RunRequest *req, const char *exec_path, RunPlan *plan,
                         PropTable *t, char **ret_error) {
        int r;

        if (!p->base_image)
                return 0;
        /* sbxd looks the image up in the store and checks it: without that there is nothing to run on, and
         * never the host's OS instead */
        if (!req->run_image)
                return error_setf(ret_error, -EINVAL, "image: no image was prepared for this run");
        r = image_compile_props(t, req->run_image, exec_path);
        if (r >= 0 && !plan->image_unit)
                r = image_unit_name(req->run_image->digest, &plan->image_unit);
        return r;
}

int policy_image_wrap(const RunRequest *req, const char *exec_path, RunPlan *plan) {
        int r;

        if (!req->run_image)
                return 0;
        r = image_wrap_argv(&plan->exec_argv, exec_path);
        if (r >= 0 && plan->pre_argv)
                r = image_wrap_argv(&plan->pre_argv, exec_path);
        if (r >= 0 && plan->post_argv)
                r = image_wrap_argv(&plan->post_argv, exec_path);
        if (r >= 0 && plan->figures_argv)
                r = image_wrap_argv(&plan->figures_argv, exec_path);
        return r;
}
