/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The policy of sbx-export (man/sbx-export.8.md), pure: which types may leave, what happens to active
 * content and archives, and the mode a delivered file gets. No I/O. */

#include <stdbool.h>
#include <sys/types.h>

#include "active.h"

typedef enum ExportVerdict {
        EXPORT_VERDICT_EXPORT,
        EXPORT_VERDICT_HOLD,
        EXPORT_VERDICT_REFUSE,
        _EXPORT_VERDICT_MAX,
        _EXPORT_VERDICT_INVALID = -EINVAL,
} ExportVerdict;

typedef enum ExportActiveMode {
        EXPORT_ACTIVE_REJECT,
        EXPORT_ACTIVE_APPROVE,
        EXPORT_ACTIVE_ALLOW,
        _EXPORT_ACTIVE_MAX,
        _EXPORT_ACTIVE_INVALID = -EINVAL,
} ExportActiveMode;

typedef enum ExportArchiveMode {
        EXPORT_ARCHIVES_NORMALIZE,
        EXPORT_ARCHIVES_REJECT,
        _EXPORT_ARCHIVES_MAX,
        _EXPORT_ARCHIVES_INVALID = -EINVAL,
} ExportArchiveMode;

ExportActiveMode export_active_mode_from_string(const char *s);
ExportArchiveMode export_archive_mode_from_string(const char *s);

typedef struct ExportPolicy {
        char **allow;   /* type globs; NULL: export_default_allow */
        char **approve; /* type globs; may be NULL */
        ExportActiveMode active;
        ExportArchiveMode archives;
        bool keep_exec;
        bool have_dest; /* without a destination every passing item is held */
} ExportPolicy;

/* The allow list without --allow-type, NULL-terminated. */
extern const char * const export_default_allow[];

/* "type/subtype", "type/ *" (without the space) or "* / *": the only globs there are. */
bool export_type_glob_is_valid(const char *glob);
/* Case-insensitive, as MIME types are. An invalid glob matches nothing. */
bool export_type_glob_match(const char *glob, const char *type);

/* What the review found out about one staged file. */
typedef struct ExportFacts {
        const char *type;     /* libmagic's MIME type */
        bool is_archive;      /* a zip, tar or gzip-compressed tar */
        ActiveFinding active; /* ACTIVE_NONE if none */
} ExportFacts;

/* The verdict on one file, in this order: an archive with archives=reject is refused; active content
 * is refused (reject) or held (approve) whatever the type, or noted (allow); a type no allow glob
 * matches is held if an approve glob matches it, else refused; without a destination the rest is
 * held. *ret_reason (for HOLD and REFUSE, and for EXPORT with active content allowed: the note) is a
 * heap string or NULL. Returns the verdict, -EINVAL for a bad policy, or -ENOMEM. */
int export_decide(const ExportPolicy *p, const ExportFacts *f, char **ret_reason);

/* The mode a delivered file gets from its source mode: 0644, or 0755 with keep_exec when any x bit
 * was set. ret_dropped: the EXPORT_DROPPED_* bits of what was dropped. */
enum {
        EXPORT_DROPPED_SETUID = 1 << 0,
        EXPORT_DROPPED_SETGID = 1 << 1,
        EXPORT_DROPPED_STICKY = 1 << 2,
        EXPORT_DROPPED_EXEC = 1 << 3,
};
mode_t export_file_mode(mode_t source_mode, bool keep_exec, unsigned *ret_dropped);
/* The note of one EXPORT_DROPPED_* bit ("setuid dropped", ...). */
const char *export_dropped_to_string(unsigned bit);
