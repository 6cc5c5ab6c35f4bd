/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "syscall-groups.h"
#include "util.h"

#include "syscall-groups-table.h"

static const SyscallGroup *group_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(syscall_groups_table); i++)
                if (streq(syscall_groups_table[i].name, name))
                        return &syscall_groups_table[i];
        return NULL;
}

/* depth: systemd's groups nest two levels; a table that loops is refused, not followed */
static int expand_one(const char *entry, char ***l, unsigned depth) {
        const SyscallGroup *g;
        int r;

        if (entry[0] != '@') {
                char *c;

                if (strv_contains(*l, entry))
                        return 0;
                c = strdup(entry);
                if (!c)
                        return -ENOMEM;
                r = strv_push_take(l, c);
                if (r < 0)
                        free(c);
                return r;
        }
        g = group_find(entry);
        if (!g || depth > 8)
                return -ENOENT;
        for (const char *const *m = g->members; *m; m++) {
                r = expand_one(*m, l, depth + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int syscall_groups_expand(char *const *entries, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        int r;

        if (!l)
                return -ENOMEM;
        STRV_FOREACH(e, (char **) entries) {
                r = expand_one(*e, &l, 0);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}
