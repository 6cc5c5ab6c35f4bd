/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>
#include <search.h>
#include <strings.h>
#include <sys/stat.h>

#include "archive-normalize.h"
#include "fileio.h"
#include "log.h"
#include "name.h"
#include "verdict.h"

#define COPY_BUFFER_SIZE (128 * 1024)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive *, archive_read_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive_entry *, archive_entry_free);

static void archive_write_freep(struct archive **a) {
        if (*a)
                archive_write_free(*a);
}

ArchiveKind archive_kind_from_type(const char *type) {
        if (!type)
                return _ARCHIVE_KIND_INVALID;
        if (strcasecmp(type, "application/zip") == 0)
                return ARCHIVE_KIND_ZIP;
        if (strcasecmp(type, "application/x-tar") == 0)
                return ARCHIVE_KIND_TAR;
        if (strcasecmp(type, "application/gzip") == 0 || strcasecmp(type, "application/x-gzip") == 0)
                return ARCHIVE_KIND_GZIP;
        return _ARCHIVE_KIND_INVALID;
}

void archive_result_done(ArchiveResult *r) {
        for (size_t i = 0; i < r->n_dropped; i++)
                free(r->dropped[i].entry);
        free(r->dropped);
        *r = (ArchiveResult) {};
}

/* The names seen so far, each a directory (given or implied by a deeper name) or a file. */
typedef struct Seen {
        char *name;
        bool dir, explicit_dir;
} Seen;

static int seen_compare(const void *a, const void *b) {
        return strcmp(((const Seen *) a)->name, ((const Seen *) b)->name);
}

static void seen_free(void *p) {
        Seen *s = p;
        free(s->name);
        free(s);
}

typedef struct Names {
        void *root;
} Names;

static void names_done(Names *n) {
        tdestroy(n->root, seen_free);
        n->root = NULL;
}

static Seen *names_find(Names *n, const char *name) {
        Seen key = { .name = (char *) name };
        Seen **f = tfind(&key, &n->root, seen_compare);
        return f ? *f : NULL;
}

static int names_add(Names *n, const char *name, bool dir, bool explicit_dir) {
        Seen *s = calloc(1, sizeof(Seen));

        if (!s || !(s->name = strdup(name))) {
                free(s);
                return -ENOMEM;
        }
        s->dir = dir;
        s->explicit_dir = explicit_dir;
        if (!tsearch(s, &n->root, seen_compare)) {
                seen_free(s);
                return -ENOMEM;
        }
        return 0;
}

/* Whether NAME may join the archive: not there yet as a file or a given directory, no parent a file,
 * not a file where a directory is implied. Records it and its parents. 0: added, 1: a duplicate. */
static int names_claim(Names *n, const char *name, bool dir) {
        _cleanup_free_ char *p = strdup(name);
        Seen *s;
        int r;

        if (!p)
                return -ENOMEM;
        for (char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = 0;
                s = names_find(n, p);
                if (s && !s->dir)
                        return 1;
                *slash = '/';
        }
        s = names_find(n, name);
        if (s) {
                if (!dir || !s->dir || s->explicit_dir)
                        return 1;
                s->explicit_dir = true;
                return 0;
        }
        for (char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = 0;
                if (!names_find(n, p) && (r = names_add(n, p, true, false)) < 0)
                        return r;
                *slash = '/';
        }
        return names_add(n, name, dir, dir);
}

static int result_drop(ArchiveResult *res, const char *entry, const char *reason) {
        ArchiveDropped *d = reallocarray(res->dropped, res->n_dropped + 1, sizeof(ArchiveDropped));

        if (!d)
                return -ENOMEM;
        res->dropped = d;
        d[res->n_dropped].entry = export_name_escape(entry ?: "");
        if (!d[res->n_dropped].entry)
                return -ENOMEM;
        d[res->n_dropped++].reason = reason;
        return 0;
}

static const char *entry_type_reason(struct archive_entry *e) {
        if (archive_entry_hardlink(e))
                return "archive entry: hard link";
        switch (archive_entry_filetype(e)) {
        case AE_IFREG:
        case AE_IFDIR:
                return NULL;
        case AE_IFLNK:
                return "archive entry: symlink";
        case AE_IFCHR:
        case AE_IFBLK:
                return "archive entry: device";
        case AE_IFIFO:
                return "archive entry: fifo";
        case AE_IFSOCK:
                return "archive entry: socket";
        default:
                return "archive entry: unknown type";
        }
}

static const char *name_reason(const char *why) {
        if (streq(why, "absolute path"))
                return "archive entry: absolute path";
        if (streq(why, "climbs out (..)"))
                return "archive entry: climbs out (..)";
        return "archive entry: name";
}

/* Copies the member's data into scratch_fd (truncated first), at most 'budget' bytes. */
static int member_read(struct archive *a, int scratch_fd, uint64_t budget, uint64_t *ret_size) {
        static char buf[COPY_BUFFER_SIZE]; /* one member at a time, no threads */
        uint64_t size = 0;
        la_ssize_t n;
        int r;

        if (ftruncate(scratch_fd, 0) < 0 || lseek(scratch_fd, 0, SEEK_SET) < 0)
                return negative_errno();
        while ((n = archive_read_data(a, buf, COPY_BUFFER_SIZE)) > 0) {
                size += n;
                if (size > budget)
                        return -EFBIG;
                r = loop_write(scratch_fd, buf, n);
                if (r < 0)
                        return r;
        }
        if (n < 0)
                return -EBADMSG;
        *ret_size = size;
        return 0;
}

static int member_write(struct archive *w, int scratch_fd, uint64_t size) {
        static char buf[COPY_BUFFER_SIZE]; /* one member at a time, no threads */

        if (lseek(scratch_fd, 0, SEEK_SET) < 0)
                return negative_errno();
        while (size > 0) {
                ssize_t n = read(scratch_fd, buf, MIN(size, (uint64_t) COPY_BUFFER_SIZE));
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -EIO;
                if (archive_write_data(w, buf, n) != n)
                        return -EIO;
                size -= n;
        }
        return 0;
}

static int reader_new(ArchiveKind kind, int fd, struct archive **ret) {
        _cleanup_(archive_read_freep) struct archive *a = archive_read_new();

        if (!a)
                return -ENOMEM;
        switch (kind) {
        case ARCHIVE_KIND_ZIP:
                /* the central directory, as unzip and most extractors read it, not the local headers */
                archive_read_support_format_zip_seekable(a);
                break;
        case ARCHIVE_KIND_GZIP:
                archive_read_support_filter_gzip(a);
                archive_read_support_format_raw(a);
                __attribute__((fallthrough));
        case ARCHIVE_KIND_TAR:
                archive_read_support_format_tar(a);
                break;
        case _ARCHIVE_KIND_MAX:
        case _ARCHIVE_KIND_INVALID:
                return -EINVAL;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        if (archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK)
                return -EBADMSG;
        *ret = TAKE_PTR(a);
        return 0;
}

static int writer_new(ArchiveKind kind, int fd, struct archive **ret) {
        _cleanup_(archive_write_freep) struct archive *w = archive_write_new();
        int r;

        if (!w)
                return -ENOMEM;
        if (kind == ARCHIVE_KIND_ZIP)
                r = archive_write_set_format_zip(w);
        else
                r = archive_write_set_format_pax_restricted(w);
        if (r == ARCHIVE_OK && kind == ARCHIVE_KIND_GZIP)
                r = archive_write_add_filter_gzip(w);
        if (r == ARCHIVE_OK && kind != ARCHIVE_KIND_ZIP)
                r = archive_write_set_bytes_in_last_block(w, 1);
        if (r != ARCHIVE_OK || archive_write_open_fd(w, fd) != ARCHIVE_OK)
                return -EIO;
        *ret = TAKE_PTR(w);
        return 0;
}

/* An unnamed file in dir: O_TMPFILE, or where the file system has none (overlayfs), a new name unlinked at
 * once. */
static int open_scratch(int dir_fd) {
        int fd = openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

        if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
                return fd >= 0 ? fd : negative_errno();
        for (int attempt = 0; attempt < 64; attempt++) {
                char name[32];
                uint64_t u;

                if (getrandom(&u, sizeof(u), 0) != sizeof(u))
                        return -EIO;
                snprintf(name, sizeof(name), ".scratch-%016" PRIx64, u);
                fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0 && errno == EEXIST)
                        continue;
                if (fd < 0)
                        return negative_errno();
                (void) unlinkat(dir_fd, name, 0);
                return fd;
        }
        return -EEXIST;
}

/* A zip of no member: its end-of-central-directory record alone (22 bytes, all zero past the signature
 * but for the length of a comment that takes the rest of the file). libarchive's reader of the central
 * directory does not recognise it, though zip tools, and libarchive's own writer, make such files. 1 if
 * the file is one, 0 if not. */
static int zip_is_empty(int fd) {
        static const uint8_t signature[4] = { 'P', 'K', 5, 6 };
        uint8_t eocd[22];
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size < (off_t) sizeof(eocd) || st.st_size > (off_t) sizeof(eocd) + UINT16_MAX)
                return 0;
        n = pread(fd, eocd, sizeof(eocd), 0);
        if (n < 0)
                return negative_errno();
        if (n != (ssize_t) sizeof(eocd) || memcmp(eocd, signature, sizeof(signature)) != 0)
                return 0;
        for (size_t i = 4; i < 20; i++)
                if (eocd[i] != 0)
                        return 0;
        return eocd[20] + (eocd[21] << 8) == st.st_size - (off_t) sizeof(eocd);
}

/* Ends the normalised archive: with no member written, an empty archive of the same kind. */
static int writer_finish(ArchiveKind kind, int out_fd, struct archive **w) {
        int r;

        if (!*w) {
                r = writer_new(kind, out_fd, w);
                if (r < 0)
                        return r;
        }
        return archive_write_close(*w) == ARCHIVE_OK ? 0 : -EIO;
}

int archive_normalize(int in_fd, ArchiveKind kind, int out_fd, int scratch_dir_fd, const ArchiveLimits *limits,
                      ArchiveResult *ret) {
        _cleanup_(archive_read_freep) struct archive *a = NULL;
        _cleanup_(archive_write_freep) struct archive *w = NULL;
        _cleanup_(names_done) Names names = {};
        _cleanup_close_ int scratch_fd = -EBADF;
        _cleanup_(archive_result_done) ArchiveResult res = {};
        struct archive_entry *e;
        int r, ar;

        if (kind == ARCHIVE_KIND_ZIP) {
                r = zip_is_empty(in_fd);
                if (r < 0)
                        return r;
                if (r > 0) { /* normal once its comment, if any, is dropped */
                        r = writer_finish(kind, out_fd, &w);
                        if (r < 0)
                                return r;
                        *ret = (ArchiveResult) {};
                        return 0;
                }
        }
        r = reader_new(kind, in_fd, &a);
        if (r < 0)
                return r;
        scratch_fd = open_scratch(scratch_dir_fd);
        if (scratch_fd < 0)
                return scratch_fd;

        while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN) {
                _cleanup_(archive_entry_freep) struct archive_entry *out = NULL;
                _cleanup_free_ char *name = NULL;
                const char *raw = archive_entry_pathname(e), *why;
                bool dir = archive_entry_filetype(e) == AE_IFDIR;
                uint64_t size = 0;

                if (kind == ARCHIVE_KIND_GZIP && archive_format(a) == ARCHIVE_FORMAT_RAW)
                        return 1;
                if (!w) {
                        r = writer_new(kind, out_fd, &w);
                        if (r < 0)
                                return r;
                }
                if (++res.n_entries > limits->max_entries)
                        return -E2BIG;


                why = entry_type_reason(e);
                if (!why && export_entry_path_normalize(raw, &name, &why) < 0)
                        why = why ? name_reason(why) : NULL;
                if (!why && !name)
                        return -ENOMEM;

                if (!why) {
                        r = names_claim(&names, name, dir);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                why = "archive entry: duplicate";
                }
                if (why) {
                        r = result_drop(&res, raw, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!dir) {
                        r = member_read(a, scratch_fd, limits->max_bytes - res.bytes, &size);
                        if (r < 0)
                                return r;
                        res.bytes += size;
                }

                out = archive_entry_new();
                if (!out)
                        return -ENOMEM;

                archive_entry_set_pathname(out, name);
                archive_entry_set_filetype(out, dir ? AE_IFDIR : AE_IFREG);
                archive_entry_set_perm(out, dir ? 0755 : export_file_mode(archive_entry_perm(e), limits->keep_exec, NULL));
                archive_entry_set_size(out, size);
                if (archive_entry_mtime_is_set(e))
                        archive_entry_set_mtime(out, archive_entry_mtime(e), 0);
                if (archive_write_header(w, out) != ARCHIVE_OK)
                        return -EIO;

                if (!dir) {
                        r = member_write(w, scratch_fd, size);
                        if (r < 0)
                                return r;
                }
        }
        if (ar != ARCHIVE_EOF)
                return -EBADMSG;

        r = writer_finish(kind, out_fd, &w);
        if (r < 0)
                return r;
        *ret = res;
        res = (ArchiveResult) {};
        return 0;
}
