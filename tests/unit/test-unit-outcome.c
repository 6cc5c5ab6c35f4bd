/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unit-outcome: a run's outcome from PID 1's journal entries about its unit (newest first). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "unit-outcome.h"
#include "unit-test.h"

#define SUCCESS "7ad2d189f7e94e70a38c781354912448"
#define FAILURE "d9b373ed55a64feb8242e02dbe79a49c"
#define EXIT "98e322203f7a4ed290d09fe03c09fe15"
#define OTHER "39f53479d3a045ac8e11786248231fbf" /* "Started ..." */

/* folds the entries as sbxd reads them; returns what unit_outcome_add() returned last */
static int fold(UnitOutcome *o, const UnitJournalEntry *e, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n && r == 0; i++)
                r = unit_outcome_add(o, &e[i]);
        return r;
}

/* finishes the outcome, checks it and frees it */
static void assert_outcome(UnitOutcome *o, const char *result, int code, int status, usec_t ended_at) {
        assert_int_equal(unit_outcome_finish(o), 0);
        assert_string_equal(o->result, result);
        assert_int_equal(o->code, code);
        assert_int_equal(o->status, status);
        assert_int_equal(o->ended_at, ended_at);
        unit_outcome_done(o);
}

static void test_exit_code(void **state) {
        const UnitJournalEntry e[] = {
                { .message_id = FAILURE, .unit_result = "exit-code", .realtime = 300 },
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "0", .command = "ExecStopPost", .realtime = 290 },
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "7", .command = "ExecStart", .realtime = 280 },
                { .message_id = OTHER, .realtime = 100 },
        };
        UnitOutcome o = {};

        assert_int_equal(fold(&o, e, ELEMENTSOF(e)), 1);
        assert_outcome(&o, "exit-code", CLD_EXITED, 7, 300);
}

static void test_signal_and_timeout(void **state) {
        const UnitJournalEntry e[] = {
                { .message_id = FAILURE, .unit_result = "timeout", .realtime = 50 },
                { .message_id = EXIT, .exit_code = "killed", .exit_status = "15", .command = "ExecStart", .realtime = 40 },
        };
        const UnitJournalEntry d[] = {
                { .message_id = FAILURE, .unit_result = "core-dump", .realtime = 50 },
                { .message_id = EXIT, .exit_code = "dumped", .exit_status = "11", .command = "ExecStart", .realtime = 40 },
        };
        UnitOutcome o = {};

        assert_int_equal(fold(&o, e, ELEMENTSOF(e)), 1);
        assert_outcome(&o, "timeout", CLD_KILLED, 15, 50);
        assert_int_equal(fold(&o, d, ELEMENTSOF(d)), 1);
        assert_outcome(&o, "core-dump", CLD_DUMPED, 11, 50);
}

static void test_success(void **state) {
        /* a successful main process's exit is logged at debug level: not in the journal */
        const UnitJournalEntry e[] = {
                { .message_id = SUCCESS, .realtime = 70 },
                { .message_id = OTHER, .realtime = 10 },
        };
        UnitOutcome o = {};

        assert_int_equal(fold(&o, e, ELEMENTSOF(e)), 0);
        assert_outcome(&o, "success", CLD_EXITED, 0, 70);
}

static void test_nothing_logged(void **state) {
        /* only the start (journald lost the end, or it is not written yet); and malformed entries */
        const UnitJournalEntry e[] = {
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "seven", .command = "ExecStart" },
                { .message_id = EXIT, .exit_code = "vanished", .exit_status = "7", .command = "ExecStart" },
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "300", .command = "ExecStart" },
                { .message_id = FAILURE, .unit_result = "" },
                { .message_id = FAILURE },
                { .message_id = NULL, .unit_result = "exit-code" },
                { .message_id = OTHER },
        };
        UnitOutcome o = {};

        assert_int_equal(fold(&o, e, ELEMENTSOF(e)), 0);
        assert_int_equal(o.code, 0);
        assert_int_equal(unit_outcome_finish(&o), -ENOENT);
        assert_null(o.result);
        unit_outcome_done(&o);
}

static void test_newest_wins(void **state) {
        /* entries newest first: an older result or exit (an earlier restart of the unit) does not count */
        const UnitJournalEntry e[] = {
                { .message_id = FAILURE, .unit_result = "exit-code", .realtime = 20 },
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "3", .command = "ExecStart", .realtime = 19 },
                { .message_id = SUCCESS, .realtime = 10 },
                { .message_id = EXIT, .exit_code = "exited", .exit_status = "9", .command = "ExecStart", .realtime = 9 },
        };
        UnitOutcome o = {};

        assert_int_equal(fold(&o, e, ELEMENTSOF(e)), 1);
        assert_outcome(&o, "exit-code", CLD_EXITED, 3, 20);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exit_code),
                cmocka_unit_test(test_signal_and_timeout),
                cmocka_unit_test(test_success),
                cmocka_unit_test(test_nothing_logged),
                cmocka_unit_test(test_newest_wins),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
