/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The property table rendered as StartTransientUnit's a(sv) entries (unit-bus.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include "unit-bus.h"
#include "util.h"

static int append_pairs(sd_bus_message *m, const Prop *p, bool with_flags) {
        int r;

        r = sd_bus_message_open_container(m, 'v', with_flags ? "a(ssbt)" : "a(ss)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', with_flags ? "(ssbt)" : "(ss)");
        if (r < 0)
                return r;
        for (char **s = p->strv; s && *s; s += 2) {
                /* a source of "-PATH" (as in a unit file) is bound only if it exists */
                if (with_flags)
                        r = sd_bus_message_append(m, "(ssbt)", s[0] + (s[0][0] == '-'), s[1], s[0][0] == '-',
                                                  (uint64_t) MS_REC);
                else
                        r = sd_bus_message_append(m, "(ss)", s[0], s[1]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static int append_list(sd_bus_message *m, const Prop *p, bool allow) {
        int r;

        r = sd_bus_message_open_container(m, 'v', "(bas)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "bas");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "b", (int) allow);
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, p->strv);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* "ADDRESS/PREFIX" strings -> a(iayu), as IPAddressDeny= takes them. */
static int append_addresses(sd_bus_message *m, const Prop *p) {
        int r;

        r = sd_bus_message_open_container(m, 'v', "a(iayu)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(iayu)");
        if (r < 0)
                return r;
        for (char **s = p->strv; s && *s; s++) {
                _cleanup_free_ char *a = strdup(*s);
                unsigned char buf[sizeof(struct in6_addr)];
                char *slash;
                int family;
                unsigned prefix;

                if (!a)
                        return -ENOMEM;
                slash = strchr(a, '/');
                if (!slash)
                        return -EINVAL;
                *slash = 0;
                family = strchr(a, ':') ? AF_INET6 : AF_INET;
                if (inet_pton(family, a, buf) != 1 || sscanf(slash + 1, "%u", &prefix) != 1)
                        return -EINVAL;
                r = sd_bus_message_open_container(m, 'r', "iayu");
                r = r < 0 ? r : sd_bus_message_append(m, "i", family);
                r = r < 0 ? r : sd_bus_message_append_array(m, 'y', buf, family == AF_INET6 ? 16 : 4);
                r = r < 0 ? r : sd_bus_message_append(m, "u", (uint32_t) prefix);
                r = r < 0 ? r : sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static int append_one(sd_bus_message *m, const Prop *p) {
        const PropDef *d = p->def;
        int r;

        r = sd_bus_message_append(m, "s", d->bus_name);
        if (r < 0)
                return r;

        switch (d->kind) {
        case PROP_BOOL:
                return sd_bus_message_append(m, "v", "b", (int) p->b);
        case PROP_STRING:
                return sd_bus_message_append(m, "v", "s", p->s);
        case PROP_U64:
        case PROP_BYTES:
        case PROP_USEC:
        case PROP_CPU_QUOTA:
        case PROP_CAPS:
        case PROP_NAMESPACES:
                return sd_bus_message_append(m, "v", "t", p->u);
        case PROP_MODE:
                return sd_bus_message_append(m, "v", "u", (uint32_t) p->u);
        case PROP_ERRNO:
                return sd_bus_message_append(m, "v", "i", (int32_t) p->i);
        case PROP_STRV:
        case PROP_ENVIRONMENT:
                r = sd_bus_message_open_container(m, 'v', "as");
                if (r < 0)
                        return r;
                r = sd_bus_message_append_strv(m, p->strv);
                if (r < 0)
                        return r;
                return sd_bus_message_close_container(m);
        case PROP_SYSCALL_ALLOW:
        case PROP_FAMILY_ALLOW:
                return append_list(m, p, true);
        case PROP_SYSCALL_DENY:
                return append_list(m, p, false);
        case PROP_BIND_PATHS:
                return append_pairs(m, p, true);
        case PROP_TMPFS:
                return append_pairs(m, p, false);
        case PROP_IP_ADDRESSES:
                return append_addresses(m, p);
        case _PROP_KIND_MAX:
        case _PROP_KIND_INVALID:
        default:
                return -EINVAL;
        }
}

int bus_append_prop_table(sd_bus_message *m, const PropTable *t) {
        int r;

        for (size_t i = 0; i < t->n; i++) {
                r = sd_bus_message_open_container(m, 'r', "sv");
                if (r < 0)
                        return r;
                r = append_one(m, &t->props[i]);
                if (r < 0)
                        return r;
                r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
        }
        return 0;
}
