/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>

#include "proptable.h"
#include "sha256.h"

static const PropDef prop_defs[] = {
        { "Description",            "Description",            PROP_STRING },
        { "DynamicUser",            "DynamicUser",            PROP_BOOL },
        { "ProtectSystem",          "ProtectSystem",          PROP_STRING },
        { "ProtectHome",            "ProtectHome",            PROP_STRING },
        { "PrivateTmp",             "PrivateTmp",             PROP_BOOL },
        { "PrivateDevices",         "PrivateDevices",         PROP_BOOL },
        { "PrivateNetwork",         "PrivateNetwork",         PROP_BOOL },
        { "PrivateIPC",             "PrivateIPC",             PROP_BOOL },
        { "NoNewPrivileges",        "NoNewPrivileges",        PROP_BOOL },
        { "CapabilityBoundingSet",  "CapabilityBoundingSet",  PROP_CAPS },
        { "AmbientCapabilities",    "AmbientCapabilities",    PROP_CAPS },
        { "ProtectKernelTunables",  "ProtectKernelTunables",  PROP_BOOL },
        { "ProtectKernelModules",   "ProtectKernelModules",   PROP_BOOL },
        { "ProtectKernelLogs",      "ProtectKernelLogs",      PROP_BOOL },
        { "ProtectControlGroups",   "ProtectControlGroups",   PROP_BOOL },
        { "ProtectClock",           "ProtectClock",           PROP_BOOL },
        { "ProtectHostname",        "ProtectHostname",        PROP_BOOL },
        { "ProtectProc",            "ProtectProc",            PROP_STRING },
        { "RestrictNamespaces",     "RestrictNamespaces",     PROP_NAMESPACES },
        { "RestrictSUIDSGID",       "RestrictSUIDSGID",       PROP_BOOL },
        { "RestrictRealtime",       "RestrictRealtime",       PROP_BOOL },
        { "LockPersonality",        "LockPersonality",        PROP_BOOL },
        { "RemoveIPC",              "RemoveIPC",              PROP_BOOL },
        { "SystemCallArchitectures", "SystemCallArchitectures", PROP_STRV },
        { "SystemCallFilter",       "SystemCallFilter",       PROP_SYSCALL_ALLOW },
        { "SystemCallFilter~",      "SystemCallFilter",       PROP_SYSCALL_DENY },
        { "SystemCallErrorNumber",  "SystemCallErrorNumber",  PROP_ERRNO },
        { "RestrictAddressFamilies", "RestrictAddressFamilies", PROP_FAMILY_ALLOW },
        { "TemporaryFileSystem",    "TemporaryFileSystem",    PROP_TMPFS },
        { "BindPaths",              "BindPaths",              PROP_BIND_PATHS },
        { "BindReadOnlyPaths",      "BindReadOnlyPaths",      PROP_BIND_PATHS },
        { "InaccessiblePaths",      "InaccessiblePaths",      PROP_STRV },
        { "ReadWritePaths",         "ReadWritePaths",         PROP_STRV },
        { "ReadOnlyPaths",          "ReadOnlyPaths",          PROP_STRV },
        { "StateDirectory",         "StateDirectory",         PROP_STRV },
        { "MemoryDenyWriteExecute", "MemoryDenyWriteExecute", PROP_BOOL },
        { "IPAddressDeny",          "IPAddressDeny",          PROP_IP_ADDRESSES },
        { "IPAddressAllow",         "IPAddressAllow",         PROP_IP_ADDRESSES },
        /* a base image (docs/images.md): the run's root, the image's shared read-only mount, verified block
         * by block with dm-verity (sbx-image@DIGEST.service) */
        { "RootDirectory",          "RootDirectory",          PROP_STRING },
        { "NetworkNamespacePath",   "NetworkNamespacePath",   PROP_STRING },
        { "PIDFile",                "PIDFile",                PROP_STRING },
        { "IgnoreSIGPIPE",          "IgnoreSIGPIPE",          PROP_BOOL },
        { "Environment",            "Environment",            PROP_ENVIRONMENT },
        { "UMask",                  "UMask",                  PROP_MODE },
        { "LimitCORE",              "LimitCORE",              PROP_BYTES },
        { "MemoryMax",              "MemoryMax",              PROP_BYTES },
        { "MemorySwapMax",          "MemorySwapMax",          PROP_BYTES },
        { "TasksMax",               "TasksMax",               PROP_U64 },
        { "CPUQuota",               "CPUQuotaPerSecUSec",     PROP_CPU_QUOTA },
        { "RuntimeMaxSec",          "RuntimeMaxUSec",         PROP_USEC },
        { "TimeoutStopSec",         "TimeoutStopUSec",        PROP_USEC },
        { "TimeoutStartSec",        "TimeoutStartUSec",       PROP_USEC },
        { "KillMode",               "KillMode",               PROP_STRING },
        { "SendSIGKILL",            "SendSIGKILL",            PROP_BOOL },
        { "OOMPolicy",              "OOMPolicy",              PROP_STRING },
        { "NotifyAccess",           "NotifyAccess",           PROP_STRING },
        { "Type",                   "Type",                   PROP_STRING },
        { "RemainAfterExit",        "RemainAfterExit",        PROP_BOOL },
        { "CollectMode",            "CollectMode",            PROP_STRING },
};

const PropDef *prop_def_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(prop_defs); i++)
                if (streq(prop_defs[i].name, name))
                        return &prop_defs[i];
        return NULL;
}

PropTable *prop_table_new(void) {
        return calloc(1, sizeof(PropTable));
}

PropTable *prop_table_free(PropTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++) {
                free(t->props[i].s);
                strv_free(t->props[i].strv);
        }
        free(t->props);
        free(t);
        return NULL;
}

static Prop *prop_table_append(PropTable *t, const char *name, int want_kind) {
        const PropDef *d = prop_def_find(name);
        Prop *n;

        if (!d)
                return NULL;
        if (want_kind >= 0 && d->kind != (PropKind) want_kind)
                return NULL;
        n = realloc(t->props, (t->n + 1) * sizeof(Prop));
        if (!n)
                return NULL;
        t->props = n;
        n = &t->props[t->n++];
        *n = (Prop) { .def = d };
        return n;
}

int prop_table_add_bool(PropTable *t, const char *name, bool b) {
        Prop *p = prop_table_append(t, name, PROP_BOOL);
        if (!p)
                return -EINVAL;
        p->b = b;
        return 0;
}

int prop_table_add_string(PropTable *t, const char *name, const char *s) {
        Prop *p;
        char *c = strdup(s);

        if (!c)
                return -ENOMEM;
        p = prop_table_append(t, name, PROP_STRING);
        if (!p) {
                free(c);
                return -EINVAL;
        }
        p->s = c;
        return 0;
}

static bool kind_is_u64(PropKind k) {
        return k == PROP_U64 || k == PROP_MODE || k == PROP_BYTES || k == PROP_USEC || k == PROP_CPU_QUOTA || k == PROP_CAPS ||
               k == PROP_NAMESPACES;
}

int prop_table_add_u64(PropTable *t, const char *name, uint64_t u) {
        const PropDef *d = prop_def_find(name);
        Prop *p;

        if (!d || !kind_is_u64(d->kind))
                return -EINVAL;
        p = prop_table_append(t, name, -1);
        if (!p)
                return -ENOMEM;
        p->u = u;
        return 0;
}

int prop_table_add_errno(PropTable *t, const char *name, int e) {
        Prop *p = prop_table_append(t, name, PROP_ERRNO);
        if (!p)
                return -EINVAL;
        p->i = e;
        return 0;
}

static bool kind_is_strv(PropKind k) {
        return k == PROP_STRV || k == PROP_ENVIRONMENT || k == PROP_SYSCALL_ALLOW || k == PROP_SYSCALL_DENY ||
               k == PROP_FAMILY_ALLOW ||
               k == PROP_BIND_PATHS || k == PROP_TMPFS || k == PROP_IP_ADDRESSES;
}

int prop_table_add_strv(PropTable *t, const char *name, char * const *l) {
        const PropDef *d = prop_def_find(name);
        size_t n = strv_length(l);
        _cleanup_strv_free_ char **c = NULL;
        Prop *p;

        if (!d || !kind_is_strv(d->kind))
                return -EINVAL;
        if ((d->kind == PROP_BIND_PATHS || d->kind == PROP_TMPFS) && n % 2 != 0)
                return -EINVAL;
        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return -ENOMEM;
        p = prop_table_append(t, name, -1);
        if (!p)
                return -ENOMEM;
        p->strv = TAKE_PTR(c);
        return 0;
}

int prop_table_extend_strv(PropTable *t, const char *name, char * const *l) {
        size_t n = strv_length(l), have;
        char **c;

        for (size_t i = 0; i < t->n; i++) {
                Prop *p = &t->props[i];

                if (!streq(p->def->name, name))
                        continue;
                if (!kind_is_strv(p->def->kind) ||
                    ((p->def->kind == PROP_BIND_PATHS || p->def->kind == PROP_TMPFS) && n % 2 != 0))
                        return -EINVAL;
                have = strv_length(p->strv);
                c = realloc(p->strv, (have + n + 1) * sizeof(char *));
                if (!c)
                        return -ENOMEM;
                p->strv = c;
                for (size_t k = 0; k < n; k++) {
                        c[have + k] = strdup(l[k]);
                        c[have + k + 1] = NULL;
                        if (!c[have + k])
                                return -ENOMEM;
                }
                return 0;
        }
        return prop_table_add_strv(t, name, l);
}

const Prop *prop_table_get(const PropTable *t, const char *name) {
        for (size_t i = 0; i < t->n; i++)
                if (streq(t->props[i].def->name, name))
                        return &t->props[i];
        return NULL;
}

static void render_usec(FILE *f, uint64_t u) {
        if (u == UINT64_MAX)
                fputs("infinity", f);
        else if (u % 1000000 == 0)
                fprintf(f, "%" PRIu64 "s", u / 1000000);
        else if (u % 1000 == 0)
                fprintf(f, "%" PRIu64 "ms", u / 1000);
        else
                fprintf(f, "%" PRIu64 "us", u);
}

static const char *errno_name(int e) {
        switch (e) {
        case EPERM: return "EPERM";
        case EACCES: return "EACCES";
        case ENOSYS: return "ENOSYS";
        default: return NULL;
        }
}

static int render_one(FILE *f, const Prop *p) {
        const PropDef *d = p->def;

        if (d->kind == PROP_SYSCALL_DENY)
                fprintf(f, "%s=~", d->bus_name);
        else
                fprintf(f, "%s=", d->name);
        switch (d->kind) {
        case PROP_BOOL:
                fputs(p->b ? "yes" : "no", f);
                break;
        case PROP_STRING:
                fputs(p->s, f);
                break;
        case PROP_U64:
                if (p->u == UINT64_MAX)
                        fputs("infinity", f);
                else
                        fprintf(f, "%" PRIu64, p->u);
                break;
        case PROP_MODE:
                fprintf(f, "%04" PRIo64, p->u);
                break;
        case PROP_BYTES:
                if (p->u == UINT64_MAX)
                        fputs("infinity", f);
                else
                        fprintf(f, "%" PRIu64, p->u);
                break;
        case PROP_USEC:
                render_usec(f, p->u);
                break;
        case PROP_CPU_QUOTA:
                /* usec per sec -> percent; only whole percents are produced by the compiler */
                fprintf(f, "%" PRIu64 "%%", p->u / 10000);
                break;
        case PROP_CAPS:
                if (p->u != 0)
                        return -EOPNOTSUPP; /* only the empty set is used; a name table would go here */
                break;
        case PROP_NAMESPACES: {
                static const struct { uint64_t flag; const char *name; } ns[] = {
                        { CLONE_NEWCGROUP, "cgroup" }, { CLONE_NEWIPC, "ipc" }, { CLONE_NEWNET, "net" },
                        { CLONE_NEWNS, "mnt" },        { CLONE_NEWPID, "pid" }, { CLONE_NEWUSER, "user" },
                        { CLONE_NEWUTS, "uts" },
                };
                uint64_t left = p->u;
                bool first = true;

                if (p->u == 0) {
                        fputs("yes", f);
                        break;
                }
                for (size_t k = 0; k < ELEMENTSOF(ns); k++)
                        if (p->u & ns[k].flag) {
                                fprintf(f, "%s%s", first ? "" : " ", ns[k].name);
                                first = false;
                                left &= ~ns[k].flag;
                        }
                if (left != 0)
                        return -EOPNOTSUPP;
                break;
        }
        case PROP_ERRNO: {
                const char *n = errno_name(p->i);
                if (!n)
                        return -EOPNOTSUPP;
                fputs(n, f);
                break;
        }
        case PROP_STRV:
        case PROP_SYSCALL_ALLOW:
        case PROP_SYSCALL_DENY:
        case PROP_FAMILY_ALLOW:
        case PROP_IP_ADDRESSES:
                for (char **s = p->strv; s && *s; s++)
                        fprintf(f, "%s%s", s == p->strv ? "" : " ", *s);
                break;
        case PROP_ENVIRONMENT:
                for (char **s = p->strv; s && *s; s++) {
                        fputs(s == p->strv ? "\"" : " \"", f);
                        for (const char *c = *s; *c; c++) {
                                if (*c == '"' || *c == '\\')
                                        fputc('\\', f);
                                fputc(*c, f);
                        }
                        fputc('"', f);
                }
                break;
        case PROP_BIND_PATHS:
                for (char **s = p->strv; s && *s; s += 2)
                        fprintf(f, "%s%s:%s:rbind", s == p->strv ? "" : " ", s[0], s[1]);
                break;
        case PROP_TMPFS:
                for (char **s = p->strv; s && *s; s += 2)
                        fprintf(f, "%s%s:%s", s == p->strv ? "" : " ", s[0], s[1]);
                break;
        case _PROP_KIND_MAX:
        case _PROP_KIND_INVALID:
        default:
                return -EINVAL;
        }
        fputc('\n', f);
        return 0;
}

int prop_table_render_text(const PropTable *t, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < t->n && r >= 0; i++)
                r = render_one(f, &t->props[i]);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

int prop_table_digest(const PropTable *t, char ret[static 72]) {
        _cleanup_free_ char *text = NULL;
        uint8_t d[SHA256_DIGEST_SIZE];
        int r;

        r = prop_table_render_text(t, &text);
        if (r < 0)
                return r;
        sha256(text, strlen(text), d);
        memcpy(ret, "sha256:", 7);
        hex_encode(d, sizeof(d), ret + 7);
        return 0;
}
