/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>

#include "macro.h"
#include "verdict.h"

const char * const export_default_allow[] = {
        "text/plain", "text/csv", "text/markdown", "application/json", "application/pdf",
        "image/png", "image/jpeg", "image/gif", "image/webp", "application/zip", "application/x-tar",
        "application/gzip", "application/x-gzip", "inode/x-empty", NULL,
};

ExportActiveMode export_active_mode_from_string(const char *s) {
        static const char * const table[_EXPORT_ACTIVE_MAX] = {
                [EXPORT_ACTIVE_REJECT] = "reject",
                [EXPORT_ACTIVE_APPROVE] = "approve",
                [EXPORT_ACTIVE_ALLOW] = "allow",
        };
        for (size_t i = 0; s && i < ELEMENTSOF(table); i++)
                if (streq(s, table[i]))
                        return (ExportActiveMode) i;
        return _EXPORT_ACTIVE_INVALID;
}

ExportArchiveMode export_archive_mode_from_string(const char *s) {
        static const char * const table[_EXPORT_ARCHIVES_MAX] = {
                [EXPORT_ARCHIVES_NORMALIZE] = "normalize",
                [EXPORT_ARCHIVES_REJECT] = "reject",
        };
        for (size_t i = 0; s && i < ELEMENTSOF(table); i++)
                if (streq(s, table[i]))
                        return (ExportArchiveMode) i;
        return _EXPORT_ARCHIVES_INVALID;
}

/* A token of a MIME type: printable ASCII without spaces, '/' or '*'. */
static bool token_is_valid(const char *s, size_t n) {
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '/' || s[i] == '*')
                        return false;
        return true;
}

bool export_type_glob_is_valid(const char *glob) {
        const char *slash;

        if (!glob)
                return false;
        if (streq(glob, "*/*"))
                return true;
        slash = strchr(glob, '/');
        if (!slash || !token_is_valid(glob, slash - glob))
                return false;
        return streq(slash + 1, "*") || token_is_valid(slash + 1, strlen(slash + 1));
}

bool export_type_glob_match(const char *glob, const char *type) {
        const char *gs, *ts;

        if (!export_type_glob_is_valid(glob) || !type)
                return false;
        ts = strchr(type, '/');
        if (!ts || ts == type || !ts[1])
                return false;
        if (streq(glob, "*/*"))
                return true;
        gs = strchr(glob, '/');
        if ((size_t) (gs - glob) != (size_t) (ts - type) || strncasecmp(glob, type, gs - glob) != 0)
                return false;
        return streq(gs + 1, "*") || strcasecmp(gs + 1, ts + 1) == 0;
}

static bool globs_match(const char * const *globs, const char *type) {
        for (size_t i = 0; globs && globs[i]; i++)
                if (export_type_glob_match(globs[i], type))
                        return true;
        return false;
}

/* The verdict, and the reason made of the pieces a, b, c (NULL: none; a NULL: no reason). */
static int decided(ExportVerdict v, char **ret_reason, const char *a, const char *b, const char *c) {
        char *s = NULL;

        if (a && asprintf(&s, "%s%s%s", a, strempty(b), strempty(c)) < 0)
                return -ENOMEM;
        *ret_reason = s;
        return v;
}

int export_decide(const ExportPolicy *p, const ExportFacts *f, char **ret_reason) {
        const char * const *allow = p->allow ? (const char * const *) p->allow : export_default_allow;
        const char *note = NULL;

        if (f->is_archive && p->archives == EXPORT_ARCHIVES_REJECT)
                return decided(EXPORT_VERDICT_REFUSE, ret_reason, "archive", NULL, NULL);
        /* active content first: with --active=approve a person sees it whatever its type */
        if (f->active != ACTIVE_NONE) {
                const char *what = active_finding_to_string(f->active);

                switch (p->active) {
                case EXPORT_ACTIVE_REJECT:
                        return decided(EXPORT_VERDICT_REFUSE, ret_reason, what, NULL, NULL);
                case EXPORT_ACTIVE_APPROVE:
                        return decided(EXPORT_VERDICT_HOLD, ret_reason, what, NULL, NULL);
                case EXPORT_ACTIVE_ALLOW:
                        note = what;
                        break;
                case _EXPORT_ACTIVE_MAX:
                case _EXPORT_ACTIVE_INVALID:
                        return -EINVAL;
                }
        }
        if (!globs_match(allow, f->type)) {
                if (!globs_match((const char * const *) p->approve, f->type))
                        return decided(EXPORT_VERDICT_REFUSE, ret_reason, "type ", f->type, " is not allowed");
                return decided(EXPORT_VERDICT_HOLD, ret_reason, "type ", f->type, " needs approval");
        }
        if (!p->have_dest)
                return decided(EXPORT_VERDICT_HOLD, ret_reason, "no destination", NULL, NULL);
        return decided(EXPORT_VERDICT_EXPORT, ret_reason, note, NULL, NULL);
}

mode_t export_file_mode(mode_t source_mode, bool keep_exec, unsigned *ret_dropped) {
        unsigned dropped = 0;
        mode_t m = 0644;

        if (source_mode & S_ISUID)
                dropped |= EXPORT_DROPPED_SETUID;
        if (source_mode & S_ISGID)
                dropped |= EXPORT_DROPPED_SETGID;
        if (source_mode & S_ISVTX)
                dropped |= EXPORT_DROPPED_STICKY;
        if (source_mode & 0111) {
                if (keep_exec)
                        m = 0755;
                else
                        dropped |= EXPORT_DROPPED_EXEC;
        }
        if (ret_dropped)
                *ret_dropped = dropped;
        return m;
}

const char *export_dropped_to_string(unsigned bit) {
        switch (bit) {
        case EXPORT_DROPPED_SETUID:
                return "setuid dropped";
        case EXPORT_DROPPED_SETGID:
                return "setgid dropped";
        case EXPORT_DROPPED_STICKY:
                return "sticky bit dropped";
        case EXPORT_DROPPED_EXEC:
                return "exec bits dropped";
        default:
                return NULL;
        }
}
