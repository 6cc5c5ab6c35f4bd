/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export/archive-normalize.c: an archive leaving a run is rewritten with only its safe members; an
 * empty zip (its end record alone, which libarchive's zip reader does not recognise) is normal already. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "archive-normalize.h"
#include "macro.h"

static char scratch_dir[] = "/tmp/sbx-test-archive-XXXXXX";
static int scratch_fd = -EBADF;
static const ArchiveLimits limits = { .max_entries = 16, .max_bytes = 1 << 20 };

static int setup(void **state) {
        if (!mkdtemp(scratch_dir))
                return -1;
        scratch_fd = open(scratch_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return scratch_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        safe_close(scratch_fd);
        return rmdir(scratch_dir);
}

static int memfd_with(const void *data, size_t size) {
        int fd = memfd_create("test", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t) size);
        return fd;
}

static off_t size_of(int fd) {
        struct stat st;

        assert_int_equal(fstat(fd, &st), 0);
        return st.st_size;
}

/* normalises in_fd as a zip; the result's size in *ret_size */
static int normalize_zip(int in_fd, ArchiveResult *res, off_t *ret_size) {
        _cleanup_close_ int out = memfd_create("out", MFD_CLOEXEC);
        int r;

        assert_true(out >= 0);
        r = archive_normalize(in_fd, ARCHIVE_KIND_ZIP, out, scratch_fd, &limits, res);
        *ret_size = size_of(out);
        return r;
}

static void test_empty_zip(void **state) {
        uint8_t eocd[22 + 5] = { 'P', 'K', 5, 6 };
        ArchiveResult res = {};
        off_t size;

        /* the end record alone: as `zip` and Python's zipfile write a zip of no member */
        _cleanup_close_ int plain = memfd_with(eocd, 22);
        assert_int_equal(normalize_zip(plain, &res, &size), 0);
        assert_int_equal(res.n_entries, 0);
        assert_int_equal(res.n_dropped, 0);
        assert_int_equal(size, 22);
        archive_result_done(&res);

        /* with a comment: kept out of what leaves */
        eocd[20] = 5;
        memcpy(eocd + 22, "hello", 5);
        _cleanup_close_ int commented = memfd_with(eocd, sizeof(eocd));
        assert_int_equal(normalize_zip(commented, &res, &size), 0);
        assert_int_equal(res.n_entries, 0);
        assert_int_equal(size, 22);
        archive_result_done(&res);

        /* a comment's length that is not the rest of the file: not that, and unreadable */
        eocd[20] = 4;
        _cleanup_close_ int wrong_length = memfd_with(eocd, sizeof(eocd));
        assert_int_equal(normalize_zip(wrong_length, &res, &size), -EBADMSG);

        /* an end record that counts a member it does not have */
        eocd[20] = 0;
        eocd[8] = eocd[10] = 1;
        _cleanup_close_ int counts_one = memfd_with(eocd, 22);
        assert_int_equal(normalize_zip(counts_one, &res, &size), -EBADMSG);
}

/* a zip written by libarchive: a.txt (5 bytes) if with_file, and a symlink */
static int zip_with_members(bool with_file) {
        int fd = memfd_create("zip", MFD_CLOEXEC);
        struct archive *w = archive_write_new();
        struct archive_entry *e = archive_entry_new();

        assert_true(fd >= 0 && w && e);
        assert_int_equal(archive_write_set_format_zip(w), ARCHIVE_OK);
        assert_int_equal(archive_write_open_fd(w, fd), ARCHIVE_OK);
        if (with_file) {
                archive_entry_set_pathname(e, "a.txt");
                archive_entry_set_filetype(e, AE_IFREG);
                archive_entry_set_perm(e, 0644);
                archive_entry_set_size(e, 5);
                assert_int_equal(archive_write_header(w, e), ARCHIVE_OK);
                assert_int_equal(archive_write_data(w, "hello", 5), 5);
                archive_entry_clear(e);
        }
        archive_entry_set_pathname(e, "link");
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, "/etc/shadow");
        assert_int_equal(archive_write_header(w, e), ARCHIVE_OK);
        assert_int_equal(archive_write_close(w), ARCHIVE_OK);
        archive_entry_free(e);
        archive_write_free(w);
        return fd;
}

static void test_zip_members(void **state) {
        _cleanup_close_ int in = zip_with_members(true), out = memfd_create("out", MFD_CLOEXEC);
        ArchiveResult res = {}, again = {};
        off_t size;

        assert_true(out >= 0);
        assert_int_equal(archive_normalize(in, ARCHIVE_KIND_ZIP, out, scratch_fd, &limits, &res), 0);
        assert_int_equal(res.n_entries, 2);
        assert_int_equal(res.n_dropped, 1);
        assert_string_equal(res.dropped[0].entry, "link");
        assert_int_equal(res.bytes, 5);

        /* what came out is normal: the same member, nothing dropped */
        assert_int_equal(normalize_zip(out, &again, &size), 0);
        assert_int_equal(again.n_entries, 1);
        assert_int_equal(again.n_dropped, 0);
        assert_int_equal(again.bytes, 5);
        archive_result_done(&res);
        archive_result_done(&again);

        /* over the size cap: the whole archive is refused, not cut */
        const ArchiveLimits small = { .max_entries = 16, .max_bytes = 4 };
        _cleanup_close_ int out2 = memfd_create("out2", MFD_CLOEXEC);
        assert_true(out2 >= 0);
        assert_int_equal(archive_normalize(in, ARCHIVE_KIND_ZIP, out2, scratch_fd, &small, &res), -EFBIG);
}

/* every member dropped: the zip of no member written reads back as one, normal */
static void test_zip_all_dropped(void **state) {
        _cleanup_close_ int in = zip_with_members(false), out = memfd_create("out", MFD_CLOEXEC);
        ArchiveResult res = {}, again = {};
        off_t size;

        assert_true(out >= 0);
        assert_int_equal(archive_normalize(in, ARCHIVE_KIND_ZIP, out, scratch_fd, &limits, &res), 0);
        assert_int_equal(res.n_entries, 1);
        assert_int_equal(res.n_dropped, 1);
        assert_int_equal(normalize_zip(out, &again, &size), 0);
        assert_int_equal(again.n_entries, 0);
        assert_int_equal(again.n_dropped, 0);
        assert_int_equal(size, 22);
        archive_result_done(&res);
        archive_result_done(&again);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty_zip),
                cmocka_unit_test(test_zip_members),
                cmocka_unit_test(test_zip_all_dropped),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
