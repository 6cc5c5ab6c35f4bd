/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-export: reviews what a run leaves in its output folder and delivers what passes (man sbx-export(8)).
 *
 * Runs as root in a one-shot unit. The source tree belongs to a hostile workload that may still be
 * changing it, so it is walked by file descriptor only (openat2() beneath the parent's fd, never
 * following a symlink or crossing a mount), each regular file copied once into a private staging
 * folder, and only that copy is reviewed (type, digest, active content, archives) and delivered into
 * the caller's folder with O_EXCL, owned by the caller. Files that need a person's look are held in
 * the staging folder, under ids of their own. */

#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <magic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "active.h"
#include "archive-normalize.h"
#include "fileio.h"
#include "log.h"
#include "name.h"
#include "report.h"
#include "sha256.h"
#include "util.h"
#include "verdict.h"

#define DEPTH_MAX 32
#define HELD_ID_MAX UINT64_C(999999) /* "h" and at most 6 digits */
#define COPY_BUFFER_SIZE (128 * 1024)
/* the one buffer every copy and scan reads through (one file at a time, no threads) */
static uint8_t copy_buffer[COPY_BUFFER_SIZE];

#define RESOLVE_FLAGS (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

static bool arg_review;
static bool arg_check;      /* --check: the destination and the staging, nothing else */
static const char *arg_approve;
static const char *arg_source_root;
static const char *arg_source;
static const char *arg_staging;
static const char *arg_report;
static const char *arg_dest;
static dev_t arg_dest_dev;
static ino_t arg_dest_ino;
static bool arg_have_dest_id;
static uid_t arg_uid = (uid_t) -1;
static gid_t arg_gid = (gid_t) -1;
static uint64_t arg_max_files = 10000;
static uint64_t arg_max_bytes = UINT64_C(1) << 30;
static uint64_t arg_max_file_bytes = UINT64_C(256) << 20;
static uint64_t arg_first_held_id = 1; /* --first-held-id: h1 by default */
static ExportPolicy arg_policy = { .active = EXPORT_ACTIVE_REJECT, .archives = EXPORT_ARCHIVES_NORMALIZE };

static void free_args(void) {
        strv_free(arg_policy.allow);
        strv_free(arg_policy.approve);
}

static void magic_closep(magic_t *m) {
        if (*m)
                magic_close(*m);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* One review. */
typedef struct Export {
        int source_fd;  /* O_PATH of the source folder */
        int staging_fd;
        int stage_fd;   /* STAGING/stage: the copies */
        int held_fd;    /* STAGING/held */
        int dest_fd;    /* -EBADF without --dest */
        magic_t magic;
        uint64_t n_entries, n_bytes, n_staged, n_held;
        Report report;
} Export;

static int openat2_beneath(int dir_fd, const char *name, uint64_t flags, mode_t mode) {
        struct open_how how = { .flags = flags, .mode = mode, .resolve = RESOLVE_FLAGS };
        long fd = syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));

        return fd < 0 ? negative_errno() : (int) fd;
}

/* The inode behind an O_PATH fd, opened for real through /proc/self/fd: the same inode, and for a
 * FIFO or device (which never get here) no open side effect. */
static int reopen_fd(int path_fd, int flags) {
        char p[64];
        int fd;

        snprintf(p, sizeof(p), "/proc/self/fd/%d", path_fd);
        fd = open(p, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

static char *path_join(const char *rel, const char *name) {
        char *p;

        if (isempty(rel))
                return strdup(name);
        return asprintf(&p, "%s/%s", rel, name) < 0 ? NULL : p;
}

static int refuse(Export *e, const char *path, const char *reason) {
        int r = report_add_refused(&e->report, path, NULL, reason);
        return r < 0 ? log_oom() : 0;
}

static int refuse_errno(Export *e, const char *path, const char *what, int error) {
        char reason[128];

        snprintf(reason, sizeof(reason), "%s: %s", what, strerror(-error));
        return refuse(e, path, reason);
}

/* A DIR over dfd, a descriptor of a folder open for reading (or a negative errno, passed on), which
 * it takes over. */
static int dir_from_fd(int dfd, DIR **ret) {
        DIR *d;

        if (dfd < 0)
                return dfd;
        d = fdopendir(dfd);
        if (!d) {
                int r = negative_errno();
                safe_close(dfd);
                return r;
        }
        *ret = d;
        return 0;
}

static int copy_fd(int in_fd, int out_fd, uint64_t max, uint64_t *ret_size) {
        uint8_t *buf = copy_buffer;
        uint64_t size = 0;
        int r;

        for (;;) {
                ssize_t n = read(in_fd, buf, COPY_BUFFER_SIZE);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += n;
                if (size > max)
                        return -EFBIG;
                r = loop_write(out_fd, buf, n);
                if (r < 0)
                        return r;
        }
        *ret_size = size;
        return 0;
}

/* ---- delivery */

static int dest_chown_chmod(int fd, mode_t mode) {
        if (fchmod(fd, mode) < 0)
                return negative_errno();
        if (fchown(fd, arg_uid, arg_gid) < 0)
                return negative_errno();
        return 0;
}

/* Opens (making it if need be, owned by the caller) the folder at REL beneath the destination. */
static int dest_open_dir(Export *e, const char *rel, bool must_be_new) {
        _cleanup_free_ char *p = strdup(rel);
        _cleanup_close_ int cur = -EBADF;
        char *s, *comp;

        if (!p)
                return -ENOMEM;
        cur = fcntl(e->dest_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        for (comp = p; comp; comp = s) {
                _cleanup_close_ int fd = -EBADF;
                bool made;

                s = strchr(comp, '/');
                if (s)
                        *s++ = 0;
                made = mkdirat(cur, comp, 0700) >= 0;
                if (!made && errno != EEXIST)
                        return negative_errno();
                if (!made && must_be_new && !s)
                        return -EEXIST;
                fd = openat2_beneath(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
                if (fd < 0)
                        return fd;
                if (made) {
                        int r = dest_chown_chmod(fd, 0755);
                        if (r < 0)
                                return r;
                }
                safe_close(cur);
                cur = TAKE_FD(fd);
        }
        return TAKE_FD(cur);
}

/* A new file at REL beneath the destination with the bytes of src_fd; -EEXIST if the name is taken. */
static int dest_deliver_file(Export *e, int src_fd, const char *rel, mode_t mode) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *parent = strdup(rel);
        const char *base;
        char *slash;
        uint64_t size;
        int r;

        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash) {
                *slash = 0;
                base = slash + 1;
                dir_fd = dest_open_dir(e, parent, false);
                if (dir_fd < 0)
                        return dir_fd;
        } else {
                base = rel;
                dir_fd = fcntl(e->dest_fd, F_DUPFD_CLOEXEC, 3);
                if (dir_fd < 0)
                        return negative_errno();
        }
        fd = openat2_beneath(dir_fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return fd;
        if (lseek(src_fd, 0, SEEK_SET) < 0)
                r = negative_errno();
        else
                r = copy_fd(src_fd, fd, UINT64_MAX, &size);
        if (r >= 0)
                r = dest_chown_chmod(fd, mode);
        if (r < 0)
                (void) unlinkat(dir_fd, base, 0);
        return r;
}

/* ---- review of one staged copy */

typedef struct Staged {
        int fd;
        char *name; /* in STAGING/stage */
} Staged;

static void staged_done(Staged *s) {
        s->fd = safe_close(s->fd);
        s->name = mfree(s->name);
}

static int stage_new(Export *e, Staged *ret) {
        _cleanup_free_ char *name = NULL;
        int fd;

        if (asprintf(&name, "%" PRIu64, ++e->n_staged) < 0)
                return -ENOMEM;
        fd = openat(e->stage_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        *ret = (Staged) { .fd = fd, .name = TAKE_PTR(name) };
        return 0;
}

static void stage_remove(Export *e, Staged *s) {
        if (s->name)
                (void) unlinkat(e->stage_fd, s->name, 0);
        staged_done(s);
}

static int file_type(Export *e, int fd, char **ret) {
        _cleanup_close_ int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        struct stat st;
        const char *t;

        if (dup_fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size == 0) {
                /* libmagic says application/x-empty of an empty descriptor */
                *ret = strdup("inode/x-empty");
                return *ret ? 0 : -ENOMEM;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        t = magic_descriptor(e->magic, dup_fd);
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        *ret = strdup(t ?: "application/octet-stream");
        return *ret ? 0 : -ENOMEM;
}

/* sha256, size and active content of the staged copy, in one streaming pass. */
static int file_digest_scan(int fd, ActiveScanKind kind, char sha_hex[static SHA256_DIGEST_SIZE * 2 + 1],
                            uint64_t *ret_size, ActiveFinding *ret_found, unsigned *ret_notes) {
        uint8_t *buf = copy_buffer, digest[SHA256_DIGEST_SIZE];
        ActiveScanner scan;
        uint64_t size = 0;
        Sha256 ctx;
        ssize_t n;

        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        active_scanner_init(&scan, kind);
        sha256_init(&ctx);
        while ((n = read(fd, buf, COPY_BUFFER_SIZE)) > 0) {
                sha256_update(&ctx, buf, n);
                active_scanner_feed(&scan, buf, n);
                size += n;
        }
        sha256_final(&ctx, digest);
        if (n < 0)
                return negative_errno();
        hex_encode(digest, sizeof(digest), sha_hex);
        *ret_size = size;
        *ret_found = active_scanner_finish(&scan);
        *ret_notes = scan.notes;
        return 0;
}

static int note_add(json_object *notes, const char *s) {
        json_object *v = json_object_new_string(s);

        if (!v || json_object_array_add(notes, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* Rewrites an archive in the staged copy *s. Returns 0 with *s the normalised copy (and is_archive
 * set), 0 with *s untouched for a gzip file that is not a tar, or > 0 when the file was refused. */
static int review_archive(Export *e, const char *path, ArchiveKind kind, Staged *s, json_object *notes,
                          bool *ret_is_archive) {
        _cleanup_(archive_result_done) ArchiveResult res = {};
        _cleanup_(staged_done) Staged out = { .fd = -EBADF };
        ArchiveLimits limits = { .max_entries = arg_max_files, .max_bytes = arg_max_bytes,
                                 .keep_exec = arg_policy.keep_exec };
        char note[80];
        int r;

        *ret_is_archive = false;
        r = stage_new(e, &out);
        if (r < 0)
                return log_error_errno(r, "Failed to make a staging file: %m");
        r = archive_normalize(s->fd, kind, out.fd, e->stage_fd, &limits, &res);
        if (r == 1) {
                stage_remove(e, &out);
                return 0;
        }
        if (r < 0) {
                stage_remove(e, &out);
                switch (r) {
                case -E2BIG:
                        return refuse(e, path, "archive: over the file count cap") ?: 1;
                case -EFBIG:
                        return refuse(e, path, "archive: over the total size cap") ?: 1;
                case -EBADMSG:
                        return refuse(e, path, "archive: unreadable") ?: 1;
                case -ENOMEM:
                        return log_oom();
                default:
                        return refuse_errno(e, path, "archive: not normalised", r) ?: 1;
                }
        }
        *ret_is_archive = true;
        if (arg_policy.archives == EXPORT_ARCHIVES_NORMALIZE)
                for (size_t i = 0; i < res.n_dropped; i++)
                        if (report_add_refused(&e->report, path, res.dropped[i].entry, res.dropped[i].reason) < 0)
                                return log_oom();
        snprintf(note, sizeof(note), "archive normalised: %zu entries removed", res.n_dropped);
        if (note_add(notes, note) < 0)
                return log_oom();
        stage_remove(e, s);
        *s = out;
        out = (Staged) { .fd = -EBADF };
        return 0;
}

static int hold(Export *e, Staged *s, const char *path, uint64_t size, const char *sha, const char *type,
                mode_t mode, const char *reason, json_object *notes) {
        char id[32];
        int r;

        if (fchmod(s->fd, 0600) < 0)
                return log_error_errno(negative_errno(), "Failed to set the mode of a held file: %m");
        for (;;) {
                if (arg_first_held_id + e->n_held > HELD_ID_MAX)
                        return refuse(e, path, "held: no id left");
                snprintf(id, sizeof(id), "h%" PRIu64, arg_first_held_id + e->n_held++);
                if (renameat2(e->stage_fd, s->name, e->held_fd, id, RENAME_NOREPLACE) >= 0)
                        break;
                if (errno != EEXIST)
                        return log_error_errno(negative_errno(), "Failed to hold %s: %m", path);
        }
        s->name = mfree(s->name);
        r = report_add_held(&e->report, id, path, size, sha, type, mode, reason, notes);
        return r < 0 ? log_oom() : 0;
}

/* The staged copy of the file at PATH (its source mode SOURCE_MODE): reviewed, then delivered, held or
 * refused. Consumes the staged copy. */
static int review_file(Export *e, const char *path, mode_t source_mode, Staged *s) {
        _cleanup_(json_object_putp) json_object *notes = json_object_new_array();
        _cleanup_free_ char *type = NULL, *reason = NULL;
        char sha[SHA256_DIGEST_SIZE * 2 + 1];
        ExportFacts facts = {};
        ArchiveKind kind;
        unsigned dropped, scan_notes;
        uint64_t size;
        mode_t mode;
        int r, v;

        if (!notes)
                return log_oom();
        mode = export_file_mode(source_mode, arg_policy.keep_exec, &dropped);
        for (unsigned bit = 1; bit <= EXPORT_DROPPED_EXEC; bit <<= 1)
                if ((dropped & bit) && note_add(notes, export_dropped_to_string(bit)) < 0)
                        return log_oom();

        r = file_type(e, s->fd, &type);
        if (r < 0)
                return log_error_errno(r, "Failed to determine the type of %s: %m", path);

        kind = archive_kind_from_type(type);
        if (kind >= 0) {
                r = review_archive(e, path, kind, s, notes, &facts.is_archive);
                if (r != 0)
                        return r < 0 ? r : 0;
        }

        r = file_digest_scan(s->fd, active_scan_kind(type, path), sha, &size, &facts.active, &scan_notes);
        if (r < 0)
                return refuse_errno(e, path, "unreadable", r);
        if (size > arg_max_file_bytes)
                return refuse(e, path, "too large");
        if (facts.active == ACTIVE_NONE && active_type_has_macros(type))
                facts.active = ACTIVE_MACROS;
        if ((scan_notes & ACTIVE_NOTE_PDF_OBJECT_STREAMS) &&
            note_add(notes, "PDF object streams are compressed: not scanned") < 0)
                return log_oom();

        facts.type = type;
        v = export_decide(&arg_policy, &facts, &reason);
        if (v < 0)
                return log_oom();
        switch ((ExportVerdict) v) {
        case EXPORT_VERDICT_REFUSE:
                return refuse(e, path, reason);
        case EXPORT_VERDICT_HOLD:
                return hold(e, s, path, size, sha, type, mode, reason, notes);
        case EXPORT_VERDICT_EXPORT:
                if (reason && note_add(notes, reason) < 0)
                        return log_oom();
                r = dest_deliver_file(e, s->fd, path, mode);
                if (r == -EEXIST)
                        return refuse(e, path, "exists in the destination");
                if (r < 0)
                        return refuse_errno(e, path, "not delivered", r);
                r = report_add_exported(&e->report, path, size, sha, type, mode, notes);
                return r < 0 ? log_oom() : 0;
        case _EXPORT_VERDICT_MAX:
        case _EXPORT_VERDICT_INVALID:
                break;
        }
        return -EINVAL;
}

/* ---- the walk */

/* Copies the regular file behind path_fd into the staging folder, within the caps. > 0: refused. */
static int stage_file(Export *e, int path_fd, const char *path, const struct stat *st, Staged *ret) {
        _cleanup_(staged_done) Staged s = { .fd = -EBADF };
        _cleanup_close_ int fd = -EBADF;
        uint64_t left = arg_max_bytes - MIN(e->n_bytes, arg_max_bytes), size = 0;
        struct stat st2;
        int r;

        if (st->st_nlink > 1)
                return refuse(e, path, "hard link") ?: 1;
        if ((uint64_t) st->st_size > arg_max_file_bytes)
                return refuse(e, path, "too large") ?: 1;
        if ((uint64_t) st->st_size > left)
                return refuse(e, path, "over the total size cap") ?: 1;

        fd = reopen_fd(path_fd, O_RDONLY);
        if (fd < 0)
                return refuse_errno(e, path, "unreadable", fd) ?: 1;
        if (fstat(fd, &st2) < 0)
                return refuse_errno(e, path, "unreadable", negative_errno()) ?: 1;
        if (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino || !S_ISREG(st2.st_mode))
                return refuse(e, path, "unreadable: changed while read") ?: 1;

        r = stage_new(e, &s);
        if (r < 0)
                return log_error_errno(r, "Failed to make a staging file: %m");
        r = copy_fd(fd, s.fd, MIN(arg_max_file_bytes, left), &size);
        if (r == -EFBIG) {
                /* it grew while it was read: which cap it went over */
                stage_remove(e, &s);
                e->n_bytes += MIN(arg_max_file_bytes, left);
                return refuse(e, path, left < arg_max_file_bytes ? "over the total size cap" : "too large") ?: 1;
        }
        if (r < 0) {
                stage_remove(e, &s);
                return refuse_errno(e, path, "unreadable", r) ?: 1;
        }
        e->n_bytes += size;
        /* a link made while it was read counts too */
        if (fstat(fd, &st2) < 0 || st2.st_nlink > 1) {
                stage_remove(e, &s);
                return refuse(e, path, "hard link") ?: 1;
        }
        *ret = s;
        s = (Staged) { .fd = -EBADF };
        return 0;
}

static int walk_entry(Export *e, int dir_fd, const char *rel, const char *name, unsigned depth);

static int name_compare(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* Lists the folder behind the O_PATH fd dir_fd (REL in the source) and reviews its entries in name order. */
static int walk_dir(Export *e, int dir_fd, const char *rel, unsigned depth) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        size_t n = 0, allocated = 0, cap;
        uint64_t unlisted = 0;
        struct dirent *de;
        int r;

        r = dir_from_fd(reopen_fd(dir_fd, O_RDONLY | O_DIRECTORY), &d);
        if (r < 0)
                return isempty(rel) ? r : refuse_errno(e, rel, "unreadable", r);
        /* names past those that could pass the count cap and the refusals listed one by one are counted,
         * not kept: they are refused anyway, and the report names no more of them */
        cap = arg_max_files - MIN(e->n_entries, arg_max_files) + 1 + REPORT_REFUSED_LISTED_MAX;
        errno = 0;
        while ((de = readdir(d))) {
                if (dot_or_dot_dot(de->d_name))
                        continue;
                if (n >= cap) {
                        unlisted++;
                        continue;
                }
                if (n + 2 > allocated) {
                        char **l = reallocarray(names, allocated = MAX(allocated * 2, 16), sizeof(char *));
                        if (!l)
                                return log_oom();
                        names = l;
                }
                names[n] = strdup(de->d_name);
                if (!names[n])
                        return log_oom();
                names[++n] = NULL;
        }
        if (errno != 0) {
                r = negative_errno();
                return isempty(rel) ? r : refuse_errno(e, rel, "unreadable", r);
        }
        if (n > 0)
                qsort(names, n, sizeof(char *), name_compare);

        if (n == 0 && !isempty(rel) && e->dest_fd >= 0) {
                /* an empty folder is exported as one */
                _cleanup_close_ int new_fd = dest_open_dir(e, rel, true);
                if (new_fd == -EEXIST)
                        return refuse(e, rel, "exists in the destination");
                if (new_fd < 0)
                        return refuse_errno(e, rel, "not delivered", new_fd);
                r = report_add_exported(&e->report, rel, 0, NULL, "inode/directory", 0755, NULL);
                return r < 0 ? log_oom() : 0;
        }
        for (size_t i = 0; i < n; i++) {
                r = walk_entry(e, dir_fd, rel, names[i], depth);
                if (r < 0)
                        return r;
        }
        /* names past the count cap that were not even kept */
        e->n_entries += unlisted;
        for (uint64_t i = 0; i < unlisted; i++) {
                r = refuse(e, isempty(rel) ? "." : rel, "over the file count cap");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int walk_entry(Export *e, int dir_fd, const char *rel, const char *name, unsigned depth) {
        _cleanup_free_ char *path = NULL, *shown = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (!export_name_is_valid(name)) {
                shown = export_name_escape(name);
                path = shown ? path_join(rel, shown) : NULL;
                if (!path)
                        return log_oom();
                if (++e->n_entries > arg_max_files)
                        return refuse(e, path, "over the file count cap");
                return refuse(e, path, "name");
        }
        path = path_join(rel, name);
        if (!path)
                return log_oom();
        if (++e->n_entries > arg_max_files)
                return refuse(e, path, "over the file count cap");

        fd = openat2_beneath(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
        if (fd < 0)
                return refuse_errno(e, path, "unreadable", fd);
        if (fstat(fd, &st) < 0)
                return refuse_errno(e, path, "unreadable", negative_errno());

        switch (st.st_mode & S_IFMT) {
        case S_IFDIR:
                if (depth + 1 > DEPTH_MAX)
                        return refuse(e, path, "too deep");
                return walk_dir(e, fd, path, depth + 1);
        case S_IFREG: {
                _cleanup_(staged_done) Staged s = { .fd = -EBADF };
                int r = stage_file(e, fd, path, &st, &s);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = review_file(e, path, st.st_mode, &s);
                stage_remove(e, &s);
                return r;
        }
        case S_IFLNK:
                return refuse(e, path, "symlink");
        case S_IFCHR:
        case S_IFBLK:
                return refuse(e, path, "device");
        case S_IFIFO:
                return refuse(e, path, "fifo");
        case S_IFSOCK:
                return refuse(e, path, "socket");
        default:
                return refuse(e, path, "unreadable: unknown file type");
        }
}

/* ---- setup */

/* Empties STAGING/stage, left over from a review that did not finish: only plain files are there. */
static int stage_clear(int stage_fd) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r = openat(stage_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        r = dir_from_fd(r < 0 ? negative_errno() : r, &d);

        if (r < 0)
                return r;
        while ((de = readdir(d)))
                if (!dot_or_dot_dot(de->d_name))
                        (void) unlinkat(stage_fd, de->d_name, 0);
        return 0;
}

static int open_private_dir(int parent_fd, const char *name) {
        int fd;

        if (mkdirat(parent_fd, name, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, 0700) < 0) {
                safe_close(fd);
                return negative_errno();
        }
        return fd;
}

static int open_staging(Export *e) {
        int r;

        e->staging_fd = open(arg_staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (e->staging_fd < 0)
                return report_set_error(&e->report, "cannot open the staging folder: %m") ?: -EIO;
        e->stage_fd = open_private_dir(e->staging_fd, "stage");
        if (e->stage_fd < 0)
                return report_set_error(&e->report, "cannot make the staging folder: %s", strerror(-e->stage_fd)) ?: -EIO;
        r = stage_clear(e->stage_fd);
        if (r < 0)
                return report_set_error(&e->report, "cannot empty the staging folder: %s", strerror(-r)) ?: -EIO;
        e->held_fd = open_private_dir(e->staging_fd, "held");
        if (e->held_fd < 0)
                return report_set_error(&e->report, "cannot make the folder of held files: %s", strerror(-e->held_fd)) ?: -EIO;
        return 0;
}

static int open_dest(int *ret) {
        _cleanup_close_ int fd = open(arg_dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != arg_dest_dev || st.st_ino != arg_dest_ino)
                return -ESTALE;
        *ret = TAKE_FD(fd);
        return 0;
}

/* --check: what the review needs is there (the unit's start: a run whose export could not be delivered
 * does not start). */
static int run_check(void) {
        _cleanup_close_ int fd = -EBADF, sfd = -EBADF;

        if (arg_dest && open_dest(&fd) < 0)
                return log_error_errno(-ESTALE, "The destination %s is not the directory that was checked.", arg_dest), 1;
        sfd = open(arg_staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
                return log_error_errno(-errno, "Cannot open the staging directory %s: %m", arg_staging), 1;
        return 0;
}

static void export_done(Export *e) {
        safe_close(e->source_fd);
        safe_close(e->staging_fd);
        safe_close(e->stage_fd);
        safe_close(e->held_fd);
        safe_close(e->dest_fd);
        if (e->magic)
                magic_close(e->magic);
        report_done(&e->report);
}

static int load_magic(magic_t *ret) {
        _cleanup_(magic_closep) magic_t m = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR | MAGIC_NO_CHECK_COMPRESS);

        if (!m)
                return -ENOMEM;
        if (magic_load(m, NULL) < 0)
                return -ENOENT;
        *ret = TAKE_PTR(m);
        return 0;
}

static void drop_dumpable(void) {
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) setrlimit(RLIMIT_CORE, &(struct rlimit) {});
}

static int review(Export *e) {
        _cleanup_close_ int root_fd = -EBADF;
        int r;

        root_fd = open(arg_source_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root_fd < 0)
                return report_set_error(&e->report, "cannot open the source root: %m") ?: -EIO;
        e->source_fd = openat2_beneath(root_fd, arg_source, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
        if (e->source_fd == -ENOENT) {
                e->report.source_missing = true;
                return 0;
        }
        if (e->source_fd == -ELOOP || e->source_fd == -ENOTDIR)
                return report_set_error(&e->report, "the source is a symlink or not a directory") ?: -EIO;
        if (e->source_fd < 0)
                return report_set_error(&e->report, "cannot open the source: %s", strerror(-e->source_fd)) ?: -EIO;

        r = open_staging(e);
        if (r < 0)
                return r;
        if (arg_dest && open_dest(&e->dest_fd) < 0)
                return report_set_error(&e->report, "the destination is not the directory that was checked") ?: -EIO;
        r = load_magic(&e->magic);
        if (r < 0)
                return report_set_error(&e->report, "cannot load the file type database: %s",
                                        e->magic ? magic_error(e->magic) : strerror(-r)) ?: -EIO;
        drop_dumpable();

        r = walk_dir(e, e->source_fd, "", 0);
        if (r < 0 && !e->report.error)
                (void) report_set_error(&e->report, "the review did not finish: %s", strerror(-r));
        (void) stage_clear(e->stage_fd);
        (void) unlinkat(e->staging_fd, "stage", AT_REMOVEDIR);
        return r < 0 ? r : 0;
}

static int finish(Report *report, int r) {
        _cleanup_free_ char *text = NULL;
        int k;

        if (r < 0 && !report->error)
                (void) report_set_error(report, "%s", strerror(-r));
        k = report_format(report, &text);
        if (k < 0)
                return log_oom(), 1;
        k = report_write(arg_report, text);
        if (k < 0)
                return log_error_errno(k, "Failed to write the report %s: %m", arg_report), 1;
        if (report->error)
                log_error("%s", report->error);
        return report->error ? 1 : 0;
}

static int run_review(void) {
        _cleanup_(export_done) Export e = { .source_fd = -EBADF, .staging_fd = -EBADF, .stage_fd = -EBADF,
                                            .held_fd = -EBADF, .dest_fd = -EBADF };
        int r;

        r = report_init(&e.report, arg_source);
        if (r < 0)
                return log_oom(), 1;
        r = review(&e);
        return finish(&e.report, r);
}

/* ---- --approve */

static json_object *json_get(json_object *o, const char *key, json_type type) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

static int approve_update_report(json_object *report, json_object *held, size_t idx, json_object *item) {
        json_object *exported = json_get(report, "exported", json_type_array), *totals = json_get(report, "totals", json_type_object);
        _cleanup_(json_object_putp) json_object *out = json_object_new_object();
        json_object *notes, *v;

        if (!exported || !totals)
                return -EBADMSG;
        if (!out)
                return -ENOMEM;
        json_object_object_foreach(item, k, val)
                if (!streq(k, "id") && !streq(k, "reason") && json_object_object_add(out, k, json_object_get(val)) < 0)
                        return -ENOMEM;
        notes = json_get(out, "notes", json_type_array);
        if (!notes) {
                notes = json_object_new_array();
                if (!notes || json_object_object_add(out, "notes", notes) < 0)
                        return -ENOMEM;
        }
        if (note_add(notes, "approved") < 0 || json_object_array_add(exported, json_object_get(out)) < 0)
                return -ENOMEM;
        if (json_object_array_del_idx(held, idx, 1) < 0)
                return -EINVAL;
        v = json_get(totals, "exported_files", json_type_int);
        if (v)
                json_object_set_int64(v, json_object_get_int64(v) + 1);
        v = json_get(totals, "exported_bytes", json_type_int);
        if (v)
                json_object_set_int64(v, json_object_get_int64(v) + json_object_get_int64(json_get(out, "size", json_type_int)));
        v = json_get(totals, "held", json_type_int);
        if (v)
                json_object_set_int64(v, json_object_get_int64(v) - 1);
        return 0;
}

static bool held_id_is_valid(const char *id) {
        return id[0] == 'h' && id[1] && strspn(id + 1, "0123456789") == strlen(id + 1) && strlen(id) < 24;
}

static int run_approve(void) {
        _cleanup_(export_done) Export e = { .source_fd = -EBADF, .staging_fd = -EBADF, .stage_fd = -EBADF,
                                            .held_fd = -EBADF, .dest_fd = -EBADF };
        _cleanup_(json_object_putp) json_object *report = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        json_object *held, *item = NULL;
        const char *path, *out;
        size_t idx = 0;
        unsigned long mode;
        int r;

        r = read_file_at(AT_FDCWD, arg_report, 64 << 20, &text, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read the report %s: %m", arg_report), 1;
        report = json_tokener_parse(text);
        held = report ? json_get(report, "held", json_type_array) : NULL;
        if (!held)
                return log_error("The report %s cannot be read.", arg_report), 1;
        for (idx = 0; idx < json_object_array_length(held); idx++) {
                json_object *id = json_get(json_object_array_get_idx(held, idx), "id", json_type_string);
                if (id && streq(json_object_get_string(id), arg_approve)) {
                        item = json_object_array_get_idx(held, idx);
                        break;
                }
        }
        if (!item)
                return log_error("No held file has the id %s.", arg_approve), 1;
        path = json_object_get_string(json_get(item, "path", json_type_string));
        mode = strtoul(json_object_get_string(json_get(item, "mode", json_type_string)) ?: "0644", NULL, 8);
        if (isempty(path))
                return log_error("The held file %s has no path in the report.", arg_approve), 1;

        e.staging_fd = open(arg_staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (e.staging_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open the staging folder: %m"), 1;
        e.held_fd = openat(e.staging_fd, "held", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (e.held_fd >= 0)
                fd = openat(e.held_fd, arg_approve, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Failed to open the held file %s: %m", arg_approve), 1;
        if (open_dest(&e.dest_fd) < 0)
                return log_error("The destination is not the directory that was checked."), 1;
        drop_dumpable();

        r = dest_deliver_file(&e, fd, path, mode & 0755);
        if (r == -EEXIST)
                return log_error("%s exists in the destination.", path), 1;
        if (r < 0)
                return log_error_errno(r, "Failed to deliver %s: %m", path), 1;
        (void) unlinkat(e.held_fd, arg_approve, 0);

        r = approve_update_report(report, held, idx, item);
        if (r < 0)
                return log_error_errno(r, "Failed to update the report: %m"), 1;
        out = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        free(text);
        text = NULL;
        if (!out || asprintf(&text, "%s\n", out) < 0)
                return log_oom(), 1;
        r = report_write(arg_report, text);
        if (r < 0)
                return log_error_errno(r, "Failed to write the report %s: %m", arg_report), 1;
        return 0;
}

/* ---- command line */

static void help(void) {
        printf("sbx-export --review --source-root=DIR --source=REL --staging=DIR --report=FILE\n"
               "           [--dest=DIR --dest-id=DEV:INO --owner=UID:GID]\n"
               "           [--max-files=N] [--max-bytes=N] [--max-file-bytes=N]\n"
               "           [--allow-type=GLOB ...] [--approve-type=GLOB ...]\n"
               "           [--active=reject|approve|allow] [--archives=normalize|reject] [--keep-exec]\n"
               "           [--first-held-id=N]\n"
               "sbx-export --approve=ID --staging=DIR --dest=DIR --dest-id=DEV:INO --owner=UID:GID --report=FILE\n\n"
               "Reviews the files a run leaves and delivers those that pass.\n");
}

static int parse_pair(const char *s, uint64_t *ret_a, uint64_t *ret_b) {
        char *end;
        unsigned long long a, b;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        a = strtoull(s, &end, 10);
        if (errno != 0 || *end != ':' || !isdigit((unsigned char) end[1]))
                return -EINVAL;
        b = strtoull(end + 1, &end, 10);
        if (errno != 0 || *end != 0)
                return -EINVAL;
        *ret_a = a;
        *ret_b = b;
        return 0;
}

static int add_glob(char ***l, const char *option, const char *glob) {
        size_t n = strv_length(*l);
        char **nl;

        if (!export_type_glob_is_valid(glob))
                return log_error_errno(-EINVAL, "--%s: not a type glob (type/subtype, type/* or */*): %s", option, glob);
        nl = reallocarray(*l, n + 2, sizeof(char *));
        if (!nl)
                return log_oom();
        *l = nl;
        nl[n] = strdup(glob);
        nl[n + 1] = NULL;
        return nl[n] ? 0 : log_oom();
}

/* One row an option: its long form, whether it takes a value, the function that checks and stores the
 * value in field, and what a bad value is not (for the message). A function returns < 0 on a bad
 * value (said once, here), 0 to go on, OPTION_STOP when the program has done all it was asked
 * (--help, --version). */
typedef struct ExportOption ExportOption;
typedef int (*ExportOptionParse)(const ExportOption *o, const char *value);

struct ExportOption {
        const char *name;
        int has_arg;
        ExportOptionParse parse;
        void *field;
        const char *invalid;    /* "--NAME: INVALID: VALUE" */
        bool (*check)(const char *value);
};

#define OPTION_STOP 1

static int option_invalid(const ExportOption *o, const char *value) {
        return log_error_errno(-EINVAL, "--%s: %s: %s", o->name, o->invalid, value);
}

static int option_help(const ExportOption *o, const char *value) {
        help();
        return OPTION_STOP;
}

static int option_version(const ExportOption *o, const char *value) {
        printf("sbx-export %s\n", PACKAGE_VERSION);
        return OPTION_STOP;
}

static int option_flag(const ExportOption *o, const char *value) {
        *(bool *) o->field = true;
        return 0;
}

static int option_check(const ExportOption *o, const char *value) {
        arg_review = arg_check = true;
        return 0;
}

/* kept as given (it points into argv), once it passes the row's check if any */
static int option_string(const ExportOption *o, const char *value) {
        if (o->check && !o->check(value))
                return option_invalid(o, value);
        *(const char **) o->field = value;
        return 0;
}

static bool relative_path_is_valid(const char *s) {
        return !isempty(s) && s[0] != '/';
}

static bool file_name_is_valid(const char *s) {
        return !isempty(s) && s[strlen(s) - 1] != '/';
}

static int option_dest_id(const ExportOption *o, const char *value) {
        uint64_t a, b;

        if (parse_pair(value, &a, &b) < 0)
                return option_invalid(o, value);
        arg_dest_dev = a;
        arg_dest_ino = b;
        arg_have_dest_id = true;
        return 0;
}

static int option_owner(const ExportOption *o, const char *value) {
        uint64_t a, b;

        if (parse_pair(value, &a, &b) < 0 || a >= UINT32_MAX || b >= UINT32_MAX)
                return option_invalid(o, value);
        arg_uid = a;
        arg_gid = b;
        return 0;
}

static int option_size(const ExportOption *o, const char *value) {
        if (parse_size(value, o->field) < 0)
                return option_invalid(o, value);
        return 0;
}

static int option_glob(const ExportOption *o, const char *value) {
        return add_glob(o->field, o->name, value);
}

static int option_active(const ExportOption *o, const char *value) {
        arg_policy.active = export_active_mode_from_string(value);
        if (arg_policy.active < 0)
                return option_invalid(o, value);
        return 0;
}

static int option_archives(const ExportOption *o, const char *value) {
        arg_policy.archives = export_archive_mode_from_string(value);
        if (arg_policy.archives < 0)
                return option_invalid(o, value);
        return 0;
}

static int option_first_held_id(const ExportOption *o, const char *value) {
        char *end;

        errno = 0;
        arg_first_held_id = isdigit((unsigned char) value[0]) ? strtoull(value, &end, 10) : 0;
        if (errno != 0 || arg_first_held_id == 0 || arg_first_held_id > HELD_ID_MAX || *end != 0)
                return log_error_errno(-EINVAL, "--first-held-id: not a number from 1 to %" PRIu64 ": %s",
                                       HELD_ID_MAX, value);
        return 0;
}

/* --help comes first: it is also -h */
static const ExportOption export_options[] = {
        { "help", no_argument, option_help },
        { "version", no_argument, option_version },
        { "review", no_argument, option_flag, &arg_review },
        { "check", no_argument, option_check },
        { "approve", required_argument, option_string, &arg_approve, "not the id of a held file", held_id_is_valid },
        { "source-root", required_argument, option_string, &arg_source_root },
        { "source", required_argument, option_string, &arg_source, "not a relative path", relative_path_is_valid },
        { "staging", required_argument, option_string, &arg_staging },
        { "report", required_argument, option_string, &arg_report, "not a file name", file_name_is_valid },
        { "dest", required_argument, option_string, &arg_dest },
        { "dest-id", required_argument, option_dest_id, NULL, "not DEV:INO" },
        { "owner", required_argument, option_owner, NULL, "not UID:GID" },
        { "max-files", required_argument, option_size, &arg_max_files, "not a number" },
        { "max-bytes", required_argument, option_size, &arg_max_bytes, "not a number" },
        { "max-file-bytes", required_argument, option_size, &arg_max_file_bytes, "not a number" },
        { "allow-type", required_argument, option_glob, &arg_policy.allow },
        { "approve-type", required_argument, option_glob, &arg_policy.approve },
        { "active", required_argument, option_active, NULL, "not reject, approve or allow" },
        { "archives", required_argument, option_archives, NULL, "not normalize or reject" },
        { "keep-exec", no_argument, option_flag, &arg_policy.keep_exec },
        { "first-held-id", required_argument, option_first_held_id },
};

#define OPTION_BASE 0x100

/* What the options ask for must go together. */
static int check_options(void) {
        if (arg_review == !!arg_approve)
                return log_error_errno(-EINVAL, "Either --review, --check or --approve=ID is needed.");
        if (!arg_staging)
                return log_error_errno(-EINVAL, "--staging is needed.");
        if (!arg_report)
                return log_error_errno(-EINVAL, "--report is needed.");
        if (arg_review && !arg_source_root)
                return log_error_errno(-EINVAL, "--source-root is needed.");
        if (arg_review && !arg_source)
                return log_error_errno(-EINVAL, "--source is needed.");
        if ((arg_dest || arg_approve) && !arg_dest)
                return log_error_errno(-EINVAL, "--dest is needed.");
        if ((arg_dest || arg_have_dest_id) && !arg_have_dest_id)
                return log_error_errno(-EINVAL, "--dest-id is needed with --dest.");
        if (arg_have_dest_id && !arg_dest)
                return log_error_errno(-EINVAL, "--dest is needed with --dest-id.");
        if (arg_dest && arg_uid == (uid_t) -1)
                return log_error_errno(-EINVAL, "--owner is needed with --dest.");
        if (arg_max_files == 0)
                return log_error_errno(-EINVAL, "--max-files: must be at least 1.");
        return 0;
}

/* Returns 1 to go on, 0 when done (--help, --version), or < 0. */
static int parse_argv(int argc, char *argv[]) {
        struct option options[ELEMENTSOF(export_options) + 1] = {};
        int c, r;

        for (size_t i = 0; i < ELEMENTSOF(export_options); i++)
                options[i] = (struct option) { export_options[i].name, export_options[i].has_arg, NULL,
                                               i == 0 ? 'h' : OPTION_BASE + (int) i };

        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                const ExportOption *o;

                if (c == '?') {
                        if (optopt >= OPTION_BASE)
                                return log_error_errno(-EINVAL, "%s: needs a value", argv[optind - 1]);
                        return log_error_errno(-EINVAL, "Unknown option: %s", argv[optind - 1]);
                }
                if (c == 'h')
                        o = &export_options[0];
                else if (c >= OPTION_BASE && c < OPTION_BASE + (int) ELEMENTSOF(export_options))
                        o = &export_options[c - OPTION_BASE];
                else
                        return -EINVAL;
                r = o->parse(o, optarg);
                if (r < 0)
                        return r;
                if (r == OPTION_STOP)
                        return 0;
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);

        r = check_options();
        if (r < 0)
                return r;
        arg_policy.have_dest = arg_dest;
        return 1;
}

int main(int argc, char *argv[]) {
        int r;

        umask(0077);
        log_set_prefix("sbx-export");
        log_open();

        r = parse_argv(argc, argv);
        if (r <= 0) {
                free_args();
                return r < 0 ? 2 : 0;
        }
        r = arg_check ? run_check() : arg_approve ? run_approve() : run_review();
        free_args();
        return r;
}
