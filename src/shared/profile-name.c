/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A profile's name (profile-name.h). On its own, so that what only checks names (the exec helper's cache
 * removal, cache-prune.c) does not link the profile parser and its digests. */
#include <ctype.h>
#include <string.h>

#include "profile-name.h"
#include "util.h"

bool profile_name_is_valid(const char *name) {
        size_t n;

        if (isempty(name))
                return false;
        n = strlen(name);
        if (n > PROFILE_NAME_MAX || !islower((unsigned char) name[0]))
                return false;
        for (const char *c = name; *c; c++)
                if (!(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '_'))
                        return false;
        return true;
}

bool cache_name_is_valid(const char *name) {
        size_t n;

        if (isempty(name))
                return false;
        n = strlen(name);
        return n <= 32 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}
