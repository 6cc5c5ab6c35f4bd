/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* command: what execve() takes, the environment a profile lets a caller set; command-fd: the memfd a
 * command line travels in. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "command-fd.h"
#include "command.h"
#include "unit-test.h"

#define MIB (1024U * 1024U)
#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

static void assert_strings(char **got, char **want) {
        size_t i = 0;

        assert_non_null(got);
        for (; want[i]; i++) {
                assert_non_null(got[i]);
                assert_string_equal(got[i], want[i]);
        }
        assert_null(got[i]);
}

static void test_size_limit(void **state) {
        /* a quarter of the stack limit, at most 6 MiB, at least 128 KiB; less the reserve */
        assert_int_equal(command_size_limit(8 * MIB), 2 * MIB - COMMAND_RESERVE);
        assert_int_equal(command_size_limit(UINT64_MAX), 6 * MIB - COMMAND_RESERVE);
        assert_int_equal(command_size_limit(64 * MIB), 6 * MIB - COMMAND_RESERVE);
        assert_int_equal(command_size_limit(0), 128 * 1024 - COMMAND_RESERVE);
        assert_int_equal(command_size_limit(256 * 1024), 128 * 1024 - COMMAND_RESERVE);
        /* each string with its NUL and a pointer */
        assert_int_equal(command_size(ARGV("ab", ""), ARGV("X=1")), 3 + 8 + 1 + 8 + 4 + 8);
        assert_int_equal(command_size(NULL, NULL), 0);
}

static void test_check(void **state) {
        _cleanup_free_ char *e = NULL, *big = malloc(COMMAND_STRING_MAX + 1);
        size_t n = 2 * MIB / 16;
        _cleanup_free_ char **many = calloc(n + 1, sizeof(char *));

        assert_non_null(big);
        assert_non_null(many);
        assert_int_equal(command_check(ARGV("true"), NULL, 8 * MIB, NULL), 0);
        assert_int_equal(command_check(ARGV("printf", "%s", "\xff\xfe"), ARGV("V=\xff"), 8 * MIB, NULL), 0);
        assert_int_equal(command_check(NULL, NULL, 8 * MIB, &e), -EINVAL);
        assert_string_equal(e, "command: no command given");
        e = mfree(e);
        assert_int_equal(command_check(ARGV("", "x"), NULL, 8 * MIB, &e), -EINVAL);
        assert_string_equal(e, "command: the command name is empty");
        e = mfree(e);

        /* one string: at most 128 KiB with its NUL */
        memset(big, 'x', COMMAND_STRING_MAX - 1);
        big[COMMAND_STRING_MAX - 1] = 0;
        assert_int_equal(command_check(ARGV("echo", big), NULL, 8 * MIB, NULL), 0);
        big[COMMAND_STRING_MAX - 1] = 'x';
        big[COMMAND_STRING_MAX] = 0;
        assert_int_equal(command_check(ARGV("echo", big), NULL, 8 * MIB, &e), -E2BIG);
        assert_string_equal(e, "command: argument 1 is 131073 bytes long, more than execve() takes in one string "
                               "(MAX_ARG_STRLEN, 131072 bytes)");
        e = mfree(e);
        assert_int_equal(command_check(ARGV("env"), ARGV("A=1", big), 8 * MIB, &e), -E2BIG);
        assert_non_null(strstr(e, "command: environment entry 1 is 131073 bytes long"));
        e = mfree(e);

        /* all of them: "a" + NUL + a pointer = 10 bytes each; 2 MiB / 16 of them fit, the environment counts */
        for (size_t i = 0; i < n; i++)
                many[i] = "a";
        assert_int_equal(command_check(many, NULL, 8 * MIB, NULL), 0);
        assert_int_equal(command_check(many, ARGV("BIG=x"), 4 * MIB, &e), -E2BIG);
        assert_string_equal(e, "command: 131072 arguments and 1 environment entries take 1310734 bytes, more than "
                               "execve() takes here (ARG_MAX: 1040384 bytes, a quarter of the stack size limit, less "
                               "8192 for the run's own environment)");
}

static void test_names(void **state) {
        assert_true(environment_name_is_valid("CI", 2));
        assert_true(environment_name_is_valid("_x.y-z", 6));
        assert_true(environment_name_is_valid("PATH=/bin", 4));
        assert_false(environment_name_is_valid("", 0));
        assert_false(environment_name_is_valid("1X", 2));
        assert_false(environment_name_is_valid("A B", 3));
        assert_false(environment_name_is_valid("A=B", 3));
        assert_false(environment_name_is_valid("\xc3\xa9", 2));
}

static void test_environment(void **state) {
        char **allow = ARGV("*"), **deny = (char **) environment_deny_default;
        _cleanup_free_ char *e = NULL;

        assert_int_equal(environment_check(allow, deny, "p", NULL, NULL), 0);
        assert_int_equal(environment_check(allow, deny, "p", ARGV("CI=1", "PYTHONPATH=src", "LANG=", "V=\xff=x"),
                                           NULL), 0);
        for (size_t i = 0; environment_deny_default[i]; i++) {
                _cleanup_free_ char *entry = NULL, *msg = NULL;
                const char *g = environment_deny_default[i];

                assert_int_not_equal(asprintf(&entry, "%.*s%s=1", (int) strcspn(g, "*"), g,
                                              strchr(g, '*') ? "PRELOAD" : ""), -1);
                assert_int_equal(environment_check(allow, deny, "p", ARGV(entry), &msg), -EPERM);
        }
        assert_int_equal(environment_check(allow, deny, "coding", ARGV("CI=1", "LD_PRELOAD=/x.so"), &e), -EPERM);
        assert_string_equal(e, "environment: profile 'coding' does not let a run set 'LD_PRELOAD' "
                               "(environment.allow, environment.deny)");
        e = mfree(e);
        /* the profile's own lists: globs */
        assert_int_equal(environment_check(ARGV("CI_*", "LANG"), ARGV("CI_SECRET"), "p", ARGV("CI_X=1", "LANG=C"), NULL), 0);
        assert_int_equal(environment_check(ARGV("CI_*", "LANG"), ARGV("CI_SECRET"), "p", ARGV("CI_SECRET=1"), NULL),
                         -EPERM);
        assert_int_equal(environment_check(ARGV("CI_*", "LANG"), ARGV("CI_SECRET"), "p", ARGV("LC_ALL=C"), NULL),
                         -EPERM);
        /* an empty allow-list: none; an empty deny-list: LD_PRELOAD too */
        assert_int_equal(environment_check(ARGV(NULL), deny, "p", ARGV("CI=1"), NULL), -EPERM);
        assert_int_equal(environment_check(allow, ARGV(NULL), "p", ARGV("LD_PRELOAD=/x.so"), NULL), 0);
        /* malformed entries: named by position, never by value */
        assert_int_equal(environment_check(allow, deny, "p", ARGV("CI=1", "novalue"), &e), -EINVAL);
        assert_string_equal(e, "environment: entry 1 is not NAME=VALUE with a valid name (printable ASCII but '=', "
                               "not starting with a digit)");
        e = mfree(e);
        assert_int_equal(environment_check(allow, deny, "p", ARGV("=secret"), NULL), -EINVAL);
        assert_int_equal(environment_check(allow, deny, "p", ARGV("9A=1"), NULL), -EINVAL);
}

static void test_fd_round_trip(void **state) {
        char **argv = ARGV("printf", "%s\n", "\xff\xfe-latin1-\xe9", ""), **env = ARGV("CI=1", "V=\x01\xff");
        char **rargv = NULL, **renv = NULL;
        int fd = -EBADF;

        assert_int_equal(command_fd_new(argv, env, &fd), 0);
        /* sealed: nothing changes it on the way */
        assert_int_equal(write(fd, "x", 1), -1);
        assert_int_equal(command_fd_read(fd, 4, 2, &rargv, &renv), 0);
        assert_strings(rargv, argv);
        assert_strings(renv, env);
        command_fd_free(rargv, renv);
        /* the counts must match what it holds */
        assert_int_equal(command_fd_read(fd, 5, 2, &rargv, &renv), -EBADMSG);
        assert_int_equal(command_fd_read(fd, 4, 1, &rargv, &renv), -EBADMSG);
        assert_int_equal(command_fd_read(fd, 0, 0, &rargv, &renv), -EBADMSG);
        (void) close(fd);

        /* no environment */
        assert_int_equal(command_fd_new(ARGV("true"), NULL, &fd), 0);
        assert_int_equal(command_fd_read(fd, 1, 0, &rargv, &renv), 0);
        assert_strings(rargv, ARGV("true"));
        assert_null(renv[0]);
        command_fd_free(rargv, renv);
        (void) close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_size_limit),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_environment),
                cmocka_unit_test(test_fd_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
