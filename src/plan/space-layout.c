/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a run's space is and what it holds (policy.h). On their own, so that the exec helper, which
 * makes the space, links these and not the policy compiler with its digests. */
#include <stdio.h>

#include "policy.h"

int policy_space_path(const char *run_id, char **ret) {
        return asprintf(ret, SBX_SPACE_DIR "/%s", run_id) < 0 ? -ENOMEM : 0;
}

int policy_space_unit_name(const char *run_id, char **ret) {
        return asprintf(ret, "sbx-space@%s.service", run_id) < 0 ? -ENOMEM : 0;
}

const PolicySpaceDir policy_space_dirs[] = {
        { SBX_HOME, "home", 0777 }, /* the run's dynamic user is allocated after the space is made */
        { "/tmp", "tmp", 01777 },
        { "/var/tmp", "var-tmp", 01777 },
        { "/dev/shm", "shm", 01777 }, /* PrivateDevices= would bind the host's /dev/shm */
        {},
};

int policy_export_unit_name(const char *run_id, char **ret) {
        return asprintf(ret, "sbx-export@%s.service", run_id) < 0 ? -ENOMEM : 0;
}

int policy_export_dir(const char *run_id, char **ret) {
        return asprintf(ret, SBX_EXPORTS_DIR "/%s", run_id) < 0 ? -ENOMEM : 0;
}
