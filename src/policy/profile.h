/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* A sandbox profile: the ceiling of what a run may get. Built in for now; declarative profile files
 * replace this table later without changing the compiler's interface. */
typedef struct Profile {
        const char *name;
        const char *description;
        uint64_t memory_max;   /* bytes, RAM incl. tmpfs pages of HOME and the private workspace */
        uint64_t tasks_max;
        usec_t runtime_max;
        unsigned cpu_quota_percent; /* 100 = one CPU; 0 = no quota */
        uint64_t home_size;    /* tmpfs size of HOME (holds the private workspace) */
        bool network;          /* false: own empty network namespace */
} Profile;

const Profile *profile_find(const char *name);
/* NULL-terminated list of built-in profiles. */
const Profile *const *profile_list(void);
bool profile_name_is_valid(const char *name);

#define PROFILE_DEFAULT "offline"
