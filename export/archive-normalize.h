/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Archives leaving a sandbox are not passed on as they are but rewritten (libarchive): a new archive of
 * the same kind with only the regular files and directories whose names are safe to extract. Runs
 * only on the private staged copy. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ArchiveKind {
        ARCHIVE_KIND_ZIP,
        ARCHIVE_KIND_TAR,
        ARCHIVE_KIND_GZIP, /* a tar if it is one; a plain gzip file is not an archive */
        _ARCHIVE_KIND_MAX,
        _ARCHIVE_KIND_INVALID = -EINVAL,
} ArchiveKind;

/* From a MIME type: application/zip, application/x-tar, application/gzip, application/x-gzip. */
ArchiveKind archive_kind_from_type(const char *type);

typedef struct ArchiveDropped {
        char *entry;        /* the member's name as written, escaped (export_name_escape()) */
        const char *reason; /* "archive entry: symlink", ... (static) */
} ArchiveDropped;

typedef struct ArchiveResult {
        ArchiveDropped *dropped;
        size_t n_dropped;
        uint64_t n_entries; /* members read */
        uint64_t bytes;     /* bytes of the members kept, expanded */
} ArchiveResult;

void archive_result_done(ArchiveResult *r);

typedef struct ArchiveLimits {
        uint64_t max_entries;
        uint64_t max_bytes; /* expanded */
        bool keep_exec;
} ArchiveLimits;

/* Reads the archive in in_fd (from its start) and writes the normalised one to out_fd; scratch_dir_fd
 * holds a temporary file for one member at a time. Returns 0 when written, 1 when a gzip file is not
 * a tar (nothing written), -E2BIG over max_entries, -EFBIG over max_bytes, -EBADMSG when the archive
 * cannot be read, other negative errno for failures of our own. */
int archive_normalize(int in_fd, ArchiveKind kind, int out_fd, int scratch_dir_fd, const ArchiveLimits *limits,
                      ArchiveResult *ret);
