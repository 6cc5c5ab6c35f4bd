/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fileio: atomic writes, bounded reads, mkdir -p; each test gets its own mkdtemp() directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "fileio.h"
#include "macro.h"
#include "unit-test.h"

typedef struct Fixture {
        char path[64];
        int dir_fd;
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(Fixture));

        if (!f)
                return -1;
        strcpy(f->path, "/tmp/test-fileio.XXXXXX");
        if (!mkdtemp(f->path)) {
                free(f);
                return -1;
        }
        f->dir_fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->dir_fd < 0) {
                (void) rmdir(f->path);
                free(f);
                return -1;
        }
        *state = f;
        return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_DP || flag == FTW_D)
                return rmdir(path) < 0 ? -1 : 0;
        return unlink(path) < 0 ? -1 : 0;
}

static int chmod_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_D)
                (void) chmod(path, 0700);
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        int r;

        safe_close(f->dir_fd);
        (void) nftw(f->path, chmod_one, 16, FTW_PHYS);
        r = nftw(f->path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(f);
        return r < 0 ? -1 : 0;
}

static int not_dot(const struct dirent *de) {
        return !streq(de->d_name, ".") && !streq(de->d_name, "..");
}

/* The names in the directory, sorted, joined by ' ' ("" when empty). */
static char *list_dir(int dir_fd) {
        struct dirent **names = NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *out;
        int n;

        n = scandirat(dir_fd, ".", &names, not_dot, alphasort);
        assert_true(n >= 0);
        out = open_memstream(&buf, &size);
        assert_non_null(out);
        for (int i = 0; i < n; i++) {
                fprintf(out, "%s%s", i > 0 ? " " : "", names[i]->d_name);
                free(names[i]);
        }
        free(names);
        assert_int_equal(fclose(out), 0);
        return buf;
}

static void assert_dir_listing(int dir_fd, const char *expected) {
        char *l = list_dir(dir_fd);

        assert_string_equal(l, expected);
        free(l);
}

static char *slurp(int dir_fd, const char *name, size_t *ret_size) {
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        char *buf;

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        buf = malloc((size_t) st.st_size + 1);
        assert_non_null(buf);
        assert_int_equal(read(fd, buf, (size_t) st.st_size), st.st_size);
        buf[st.st_size] = 0;
        close(fd);
        *ret_size = (size_t) st.st_size;
        return buf;
}

static mode_t file_mode(int dir_fd, const char *name) {
        struct stat st;

        assert_int_equal(fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mode;
}

static void make_file(int dir_fd, const char *name, size_t size) {
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        char *buf = malloc(size ?: 1);

        assert_true(fd >= 0);
        assert_non_null(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = (char) ('a' + i % 26);
        assert_int_equal(write(fd, buf, size), (ssize_t) size);
        close(fd);
        free(buf);
}

/* ---- write_file_atomic_at ---- */

static void test_write_atomic(void **state) {
        Fixture *f = *state;
        static const char data[] = "{\"version\": 1}\n";
        size_t size;
        char *c;

        assert_int_equal(write_file_atomic_at(f->dir_fd, "rec.json", data, strlen(data), 0640), 0);
        c = slurp(f->dir_fd, "rec.json", &size);
        assert_int_equal(size, strlen(data));
        assert_string_equal(c, data);
        free(c);
        assert_true(S_ISREG(file_mode(f->dir_fd, "rec.json")));
        assert_int_equal(file_mode(f->dir_fd, "rec.json") & 07777, 0640);
        /* No temporary file left behind. */
        assert_dir_listing(f->dir_fd, "rec.json");
}

static void test_write_atomic_replace(void **state) {
        Fixture *f = *state;
        size_t size;
        char *c;

        assert_int_equal(write_file_atomic_at(f->dir_fd, "key", "first version, longer", 21, 0644), 0);
        assert_int_equal(write_file_atomic_at(f->dir_fd, "key", "second", 6, 0600), 0);
        c = slurp(f->dir_fd, "key", &size);
        assert_int_equal(size, 6);
        assert_string_equal(c, "second");
        free(c);
        assert_int_equal(file_mode(f->dir_fd, "key") & 07777, 0600);
        assert_dir_listing(f->dir_fd, "key");
}

static void test_write_atomic_binary_and_empty(void **state) {
        Fixture *f = *state;
        static const char bin[] = { 0, 1, 2, 0, (char) 0xff };
        size_t size;
        char *c;

        assert_int_equal(write_file_atomic_at(f->dir_fd, "bin", bin, sizeof(bin), 0600), 0);
        c = slurp(f->dir_fd, "bin", &size);
        assert_int_equal(size, sizeof(bin));
        assert_memory_equal(c, bin, sizeof(bin));
        free(c);

        assert_int_equal(write_file_atomic_at(f->dir_fd, "empty", "", 0, 0600), 0);
        c = slurp(f->dir_fd, "empty", &size);
        assert_int_equal(size, 0);
        free(c);
        assert_dir_listing(f->dir_fd, "bin empty");
}

/* The mode is the one asked for, whatever the umask. */
static void test_write_atomic_mode_ignores_umask(void **state) {
        Fixture *f = *state;
        mode_t old = umask(0077);

        assert_int_equal(write_file_atomic_at(f->dir_fd, "a", "x", 1, 0644), 0);
        assert_int_equal(write_file_atomic_at(f->dir_fd, "b", "x", 1, 0400), 0);
        umask(old);
        assert_int_equal(file_mode(f->dir_fd, "a") & 07777, 0644);
        assert_int_equal(file_mode(f->dir_fd, "b") & 07777, 0400);
}

static void test_write_atomic_bad_name(void **state) {
        Fixture *f = *state;
        static const char *const bad[] = { "", "a/b", "/abs", "sub/", "../escape" };
        unsigned failures = 0;

        assert_int_equal(mkdirat(f->dir_fd, "sub", 0755), 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = write_file_atomic_at(f->dir_fd, bad[i], "x", 1, 0600);

                check_row(failures, r == -EINVAL, "'%s' -> %d", bad[i], r);
        }
        assert_int_equal(write_file_atomic_at(f->dir_fd, NULL, "x", 1, 0600), -EINVAL);
        assert_int_equal(failures, 0);
        assert_dir_listing(f->dir_fd, "sub");
}

/* Runs fn(dir_fd) in a child process; as root the child first becomes nobody, so that permission
 * checks apply. Returns what fn returned. */
static int run_unprivileged(int (*fn)(int), int dir_fd) {
        int pipefd[2], r = 0, status;
        pid_t pid;

        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int k;

                reset_crash_signals();
                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                       setresuid(65534, 65534, 65534) < 0))
                        _exit(2);
                k = fn(dir_fd);
                if (write(pipefd[1], &k, sizeof(k)) != sizeof(k))
                        _exit(3);
                _exit(0);
        }
        close(pipefd[1]);
        assert_int_equal(read(pipefd[0], &r, sizeof(r)), sizeof(r));
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return r;
}

static int write_into(int dir_fd) {
        return write_file_atomic_at(dir_fd, "rec.json", "{}", 2, 0640);
}

/* A directory we may not write to: refused with the errno, nothing created. */
static void test_write_atomic_readonly_dir(void **state) {
        Fixture *f = *state;

        make_file(f->dir_fd, "old", 3);
        assert_int_equal(fchmod(f->dir_fd, 0555), 0);
        assert_int_equal(run_unprivileged(write_into, f->dir_fd), -EACCES);
        assert_dir_listing(f->dir_fd, "old");
}

/* A failure after the temporary file exists (here: the rename, as the target is a non-empty
 * directory) removes the temporary file and leaves the target alone. */
static void test_write_atomic_rename_fails(void **state) {
        Fixture *f = *state;
        int r;

        assert_int_equal(mkdirat(f->dir_fd, "rec.json", 0755), 0);
        assert_int_equal(mkdirat(f->dir_fd, "rec.json/inner", 0755), 0);
        r = write_file_atomic_at(f->dir_fd, "rec.json", "{}", 2, 0640);
        assert_true(r < 0);
        assert_int_equal(r, -EISDIR);
        assert_dir_listing(f->dir_fd, "rec.json");
        assert_true(S_ISDIR(file_mode(f->dir_fd, "rec.json")));
}

static void test_write_atomic_bad_fd(void **state) {
        assert_int_equal(write_file_atomic_at(-EBADF, "x", "x", 1, 0600), -EBADF);
}

/* Like every *at() function, AT_FDCWD means the working directory. */
static void test_write_atomic_at_fdcwd(void **state) {
        Fixture *f = *state;
        int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;
        size_t size;
        char *c;

        assert_true(cwd >= 0);
        assert_int_equal(fchdir(f->dir_fd), 0);
        r = write_file_atomic_at(AT_FDCWD, "cwd-file", "hello", 5, 0644);
        assert_int_equal(fchdir(cwd), 0);
        close(cwd);
        assert_int_equal(r, 0);
        c = slurp(f->dir_fd, "cwd-file", &size);
        assert_string_equal(c, "hello");
        free(c);
        assert_dir_listing(f->dir_fd, "cwd-file");
}

/* ---- read_file_at ---- */

static void test_read_file(void **state) {
        Fixture *f = *state;
        char *c = NULL;
        size_t size = 42;

        /* 64K as the record store uses; small limits are covered by test_read_file_max_size */
        make_file(f->dir_fd, "f", 26);
        assert_int_equal(read_file_at(f->dir_fd, "f", 64 * 1024, &c, &size), 0);
        assert_int_equal(size, 26);
        assert_string_equal(c, "abcdefghijklmnopqrstuvwxyz");
        free(c);

        /* ret_size is optional */
        c = NULL;
        assert_int_equal(read_file_at(f->dir_fd, "f", 64 * 1024, &c, NULL), 0);
        assert_string_equal(c, "abcdefghijklmnopqrstuvwxyz");
        free(c);
}

static void test_read_file_empty(void **state) {
        Fixture *f = *state;
        char *c = NULL;
        size_t size = 42;

        make_file(f->dir_fd, "empty", 0);
        assert_int_equal(read_file_at(f->dir_fd, "empty", 64 * 1024, &c, &size), 0);
        assert_non_null(c);
        assert_int_equal(size, 0);
        assert_string_equal(c, "");
        free(c);
}

/* Bigger than the first buffer: the growth path. */
static void test_read_file_large(void **state) {
        Fixture *f = *state;
        size_t size = 0, n = 300001;
        char *c = NULL;

        make_file(f->dir_fd, "big", n);
        assert_int_equal(read_file_at(f->dir_fd, "big", 1024 * 1024, &c, &size), 0);
        assert_int_equal(size, n);
        assert_int_equal(strlen(c), n);
        for (size_t i = 0; i < n; i++)
                if (c[i] != (char) ('a' + i % 26))
                        fail_msg("byte %zu differs", i);
        free(c);
}

static void test_read_file_errors(void **state) {
        Fixture *f = *state;
        char *c = (char *) "untouched";
        size_t size = 42;

        assert_int_equal(read_file_at(f->dir_fd, "missing", 4096, &c, &size), -ENOENT);
        assert_int_equal(symlinkat("target", f->dir_fd, "link"), 0);
        make_file(f->dir_fd, "target", 5);
        assert_int_equal(read_file_at(f->dir_fd, "link", 4096, &c, &size), -ELOOP);
        assert_string_equal(c, "untouched");
        assert_int_equal(size, 42);
}

/* max_size is the largest accepted file: one byte more is -EFBIG, anything up to it is read. */
static void test_read_file_max_size(void **state) {
        static const struct {
                size_t file_size;
                size_t max_size;
                int r;
        } table[] = {
                { 0, 0, 0 },
                { 1, 0, -EFBIG },
                { 10, 100, 0 },
                { 99, 100, 0 },
                { 100, 100, 0 },
                { 101, 100, -EFBIG },
                { 5000, 100, -EFBIG },
                { 32, 32, 0 },
                { 700, 64 * 1024, 0 },
                { 62 * 1024, 64 * 1024, 0 },
                { 64 * 1024 - 1, 64 * 1024, 0 },
                { 64 * 1024, 64 * 1024, 0 },
                { 64 * 1024 + 1, 64 * 1024, -EFBIG },
                { 6000, 8000, 0 },
                { 8192, 8192, 0 },
                { 8193, 8192, -EFBIG },
                { 9000, 10000, 0 },
                { 10000, 10000, 0 },
                { 10001, 10000, -EFBIG },
        };
        Fixture *f = *state;
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char *c = NULL;
                size_t size = 42;
                int r;

                make_file(f->dir_fd, "f", table[i].file_size);
                r = read_file_at(f->dir_fd, "f", table[i].max_size, &c, &size);
                check_row(failures, r == table[i].r && (r < 0 || size == table[i].file_size),
                          "file of %zu bytes, max_size %zu -> %d, expected %d", table[i].file_size,
                          table[i].max_size, r, table[i].r);
                if (r >= 0)
                        free(c);
        }
        assert_int_equal(failures, 0);
}

/* ---- mkdir_p ---- */

static void test_mkdir_p(void **state) {
        Fixture *f = *state;
        char p[256];
        mode_t old = umask(022);

        snprintf(p, sizeof(p), "%s/a/b/c", f->path);
        assert_int_equal(mkdir_p(p, 0750), 0);
        umask(old);
        assert_true(S_ISDIR(file_mode(f->dir_fd, "a")));
        assert_true(S_ISDIR(file_mode(f->dir_fd, "a/b")));
        assert_true(S_ISDIR(file_mode(f->dir_fd, "a/b/c")));
        assert_int_equal(file_mode(f->dir_fd, "a") & 07777, 0750);
        assert_int_equal(file_mode(f->dir_fd, "a/b/c") & 07777, 0750);

        /* Again: nothing to do, still success. */
        assert_int_equal(mkdir_p(p, 0750), 0);
        /* A trailing slash. */
        snprintf(p, sizeof(p), "%s/x/y/", f->path);
        assert_int_equal(mkdir_p(p, 0755), 0);
        assert_true(S_ISDIR(file_mode(f->dir_fd, "x/y")));
        assert_dir_listing(f->dir_fd, "a x");
}

static void test_mkdir_p_through_file(void **state) {
        Fixture *f = *state;
        char p[256];

        make_file(f->dir_fd, "file", 1);
        snprintf(p, sizeof(p), "%s/file/sub", f->path);
        assert_int_equal(mkdir_p(p, 0755), -ENOTDIR);
}

/* The last component exists but is not a directory: the caller asked for a directory and did not
 * get one. */
static void test_mkdir_p_last_is_file(void **state) {
        Fixture *f = *state;
        char p[256];

        make_file(f->dir_fd, "file", 1);
        snprintf(p, sizeof(p), "%s/file", f->path);
        assert_int_equal(mkdir_p(p, 0755), -ENOTDIR);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_write_atomic),
                T(test_write_atomic_replace),
                T(test_write_atomic_binary_and_empty),
                T(test_write_atomic_mode_ignores_umask),
                T(test_write_atomic_bad_name),
                T(test_write_atomic_readonly_dir),
                T(test_write_atomic_rename_fails),
                T(test_write_atomic_bad_fd),
                T(test_write_atomic_at_fdcwd),
                T(test_read_file),
                T(test_read_file_empty),
                T(test_read_file_large),
                T(test_read_file_errors),
                T(test_read_file_max_size),
                T(test_mkdir_p),
                T(test_mkdir_p_through_file),
                T(test_mkdir_p_last_is_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
