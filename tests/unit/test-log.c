/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log: when stderr is a journal stream, one message is one line ("<N>text"), whatever it contains;
 * elsewhere text is kept as it is, and a journal event is a plain line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "macro.h"
#include "unit-test.h"

/* Runs fn with stderr sent to a file that $JOURNAL_STREAM names (so log_open() takes it for the
 * journal when journal is true); returns what fn wrote. */
static char *capture(bool journal, void (*fn)(void)) {
        char path[] = "/tmp/test-log.XXXXXX", env[64];
        static char buf[4096];
        int fd, saved;
        struct stat st;
        ssize_t n;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(fstat(fd, &st), 0);
        snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        if (journal)
                assert_int_equal(setenv("JOURNAL_STREAM", env, 1), 0);
        else
                assert_int_equal(unsetenv("JOURNAL_STREAM"), 0);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(saved >= 0);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);
        log_open();
        fn();
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        n = pread(fd, buf, sizeof(buf) - 1, 0);
        close(fd);
        assert_true(n >= 0);
        buf[n] = 0;
        unsetenv("JOURNAL_STREAM");
        log_open();
        return buf;
}

static void log_injection(void) {
        log_error("request: unknown key '%s'", "x\n<0>forged emergency\rline");
}

static void test_journal_line_is_one_line(void **state) {
        assert_string_equal(capture(true, log_injection), "<3>request: unknown key 'x <0>forged emergency line'\n");
}

static void test_terminal_keeps_text(void **state) {
        log_set_prefix("sbxtest");
        assert_string_equal(capture(false, log_injection), "sbxtest: request: unknown key 'x\n<0>forged emergency\rline'\n");
        log_set_prefix(NULL);
}

static void event(void) {
        log_event(LOG_NOTICE, "d73fcca357cf4d3090b10e1c85b68dec",
                  LOG_FIELDS({ "SBX_ERROR", "a\nb" }, { "SBX_SKIPPED", NULL }), "refused: %s", "a\n<0>b");
}

static void test_event_plain(void **state) {
        /* not a journal stream (a terminal, a test): the event is a plain line, with the prefix */
        log_set_prefix("sbxtest");
        assert_string_equal(capture(false, event), "sbxtest: refused: a\n<0>b\n");
        log_set_prefix(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_journal_line_is_one_line),
                cmocka_unit_test(test_terminal_keeps_text),
                cmocka_unit_test(test_event_plain),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
