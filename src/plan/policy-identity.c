/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run's user has a name (docs/sandboxes.md, "The run's user"). A run on the host's OS sees sbx's own
 * /etc/nsswitch.conf, /etc/passwd and /etc/group (nss/): root and nobody from the files, the run's own
 * uid and gid as "sbx" from the sbx NSS module, and no one else: not the host's users, not another
 * run's dynamic user (whose name carries its run id). A run on a base image keeps the image's /etc. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"

/* in the identity directory, bound read-only over the same name in /etc */
const char *const policy_identity_files[] = { "nsswitch.conf", "passwd", "group", NULL };

/* Host files that name the host's users next to /etc/passwd and /etc/group: the backups the shadow tools
 * keep and the subordinate id ranges. World-readable on most systems; hidden when present. */
const char *const policy_identity_hidden[] = { "/etc/passwd-", "/etc/group-", "/etc/subuid", "/etc/subgid", NULL };

static bool identity_path_hidden(const Profile *p, const char *path) {
        STRV_FOREACH(h, p->hidden)
                if (policy_path_is_below(path, *h))
                        return true;
        return false;
}

int policy_identity_compile(const Profile *p, PropTable *t) {
        int r;

        if (p->base_image)
                return 0;
        for (const char *const *f = policy_identity_files; *f; f++) {
                _cleanup_free_ char *src = NULL, *dst = NULL;

                if (asprintf(&src, SBX_IDENTITY_DIR "/%s", *f) < 0 || asprintf(&dst, "/etc/%s", *f) < 0)
                        return -ENOMEM;
                /* a path the profile hides stays hidden */
                if (identity_path_hidden(p, dst))
                        continue;
                /* no "-": without its identity files a run would see the host's users, so it does not start */
                r = prop_table_extend_strv(t, "BindReadOnlyPaths", (char *[]) { src, dst, NULL });
                if (r < 0)
                        return r;
        }
        for (const char *const *h = policy_identity_hidden; *h; h++) {
                _cleanup_free_ char *opt = NULL;

                if (identity_path_hidden(p, *h))
                        continue;
                /* "-": a file the host does not have is nothing to hide */
                if (asprintf(&opt, "-%s", *h) < 0)
                        return -ENOMEM;
                r = prop_table_extend_strv(t, "InaccessiblePaths", (char *[]) { opt, NULL });
                if (r < 0)
                        return r;
        }
        return 0;
}
