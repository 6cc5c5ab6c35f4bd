/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>

#include "profile.h"

static const Profile profile_offline = {
        .name = "offline",
        .description = "No network, read-only OS, private writable workspace",
        .memory_max = 2ULL << 30,
        .tasks_max = 512,
        .runtime_max = 3600 * USEC_PER_SEC,
        .cpu_quota_percent = 200,
        .home_size = 1ULL << 30,
        .network = false,
};

static const Profile *const profiles[] = {
        &profile_offline,
        NULL,
};

const Profile *const *profile_list(void) {
        return profiles;
}

const Profile *profile_find(const char *name) {
        if (!name)
                return NULL;
        for (const Profile *const *p = profiles; *p; p++)
                if (streq((*p)->name, name))
                        return *p;
        return NULL;
}

bool profile_name_is_valid(const char *name) {
        size_t n;

        if (isempty(name))
                return false;
        n = strlen(name);
        if (n > 32 || !islower((unsigned char) name[0]))
                return false;
        for (const char *c = name; *c; c++)
                if (!(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '_'))
                        return false;
        return true;
}
