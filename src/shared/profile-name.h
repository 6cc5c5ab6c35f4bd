/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A profile's name and a cache's name: checked on their own (profile-name.c), by the profile parser and
 * by what names a profile without parsing one (grants, the exec helper's cache removal, cache-prune.c). */

#include <stdbool.h>

#define PROFILE_NAME_MAX 32          /* [a-z][a-z0-9_]{0,31} */

bool profile_name_is_valid(const char *name);
/* A cache's name (lifetime.caches[].name): 1 to 32 of a-z, 0-9 and _. */
bool cache_name_is_valid(const char *name);
