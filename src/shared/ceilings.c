/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ceilings.h"
#include "fileio.h"
#include "macro.h"

#define CGROUP_ROOT_CONTROLLERS "/sys/fs/cgroup/cgroup.controllers"

static const struct {
        Ceiling ceiling;
        const char *name, *controller;
} ceilings[] = {
        { CEILING_MEMORY, "memory", "memory" },
        { CEILING_TASKS, "tasks", "pids" },
        { CEILING_CPU, "cpu", "cpu" },
};

const char *ceiling_to_string(Ceiling c) {
        for (size_t i = 0; i < ELEMENTSOF(ceilings); i++)
                if (ceilings[i].ceiling == c)
                        return ceilings[i].name;
        return NULL;
}

int ceiling_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(ceilings); i++)
                if (streq(s, ceilings[i].name))
                        return (int) ceilings[i].ceiling;
        return -EINVAL;
}

char *ceilings_to_list(unsigned mask, const char *sep, char buf[static CEILINGS_LIST_MAX]) {
        size_t o = 0;

        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(ceilings); i++)
                if (mask & ceilings[i].ceiling)
                        o += (size_t) snprintf(buf + o, CEILINGS_LIST_MAX - o, "%s%s", o > 0 ? sep : "", ceilings[i].name);
        return buf;
}

int ceilings_from_list(const char *s, unsigned *ret) {
        unsigned mask = 0;

        for (const char *p = s; *p;) {
                size_t k = strcspn(p, ",");
                size_t i;

                for (i = 0; i < ELEMENTSOF(ceilings); i++)
                        if (strlen(ceilings[i].name) == k && strneq(p, ceilings[i].name, k))
                                break;
                if (i == ELEMENTSOF(ceilings))
                        return -EINVAL;
                mask |= ceilings[i].ceiling;
                p += k;
                if (*p == ',' && *++p == 0)
                        return -EINVAL;
        }
        if (mask == 0)
                return -EINVAL;
        *ret = mask;
        return 0;
}

/* word is one of the space-separated words of list */
static bool has_word(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || strchr(" \t\n", p[-1])) && (p[n] == 0 || strchr(" \t\n", p[n])))
                        return true;
        return false;
}

int ceilings_without_controller(unsigned mask, const char *controllers, unsigned *ret) {
        _cleanup_free_ char *buf = NULL;
        unsigned missing = 0;
        int r;

        if (!controllers) {
                r = read_file_at(AT_FDCWD, CGROUP_ROOT_CONTROLLERS, 4096, &buf, NULL);
                if (r < 0)
                        return r;
                controllers = buf;
        }
        for (size_t i = 0; i < ELEMENTSOF(ceilings); i++)
                if ((mask & ceilings[i].ceiling) && !has_word(controllers, ceilings[i].controller))
                        missing |= ceilings[i].ceiling;
        *ret = missing;
        return 0;
}

unsigned ceilings_unenforced(unsigned mask) {
        unsigned missing;

        if (!ceilings_may_go_unenforced())
                return 0;
        if (ceilings_without_controller(mask, NULL, &missing) < 0)
                return mask & _CEILINGS_ALL;
        return missing;
}
