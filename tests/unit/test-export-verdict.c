/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export/verdict.c: type globs, the verdict from type, active content and policy, delivered modes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "unit-test.h"
#include "macro.h"
#include "verdict.h"

static void test_glob(void **state) {
        static const struct {
                const char *glob, *type;
                bool valid, match;
        } rows[] = {
                { "text/plain", "text/plain", true, true },
                { "text/plain", "TEXT/Plain", true, true },
                { "text/*", "text/html", true, true },
                { "text/*", "texts/html", true, false },
                { "text/*", "application/json", true, false },
                { "*/*", "application/x-executable", true, true },
                { "*/*", "garbage", true, false },
                { "text/plain", "text/plainx", true, false },
                { "text/plai", "text/plain", true, false },
                { "*/plain", "text/plain", false, false },
                { "text/pl*", "text/plain", false, false },
                { "text", "text", false, false },
                { "text/", "text/", false, false },
                { "/plain", "/plain", false, false },
                { "text/plain/x", "text/plain/x", false, false },
                { "te xt/plain", "te xt/plain", false, false },
                { "", "", false, false },
                { "*", "text/plain", false, false },
                { "application/vnd.ms-excel", "application/vnd.ms-excel", true, true },
        };
        int failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                check_row(failures, export_type_glob_is_valid(rows[i].glob) == rows[i].valid, "glob %s", rows[i].glob);
                check_row(failures, export_type_glob_match(rows[i].glob, rows[i].type) == rows[i].match, "%s ~ %s",
                          rows[i].glob, rows[i].type);
        }
        assert_false(export_type_glob_match(NULL, "text/plain"));
        assert_false(export_type_glob_match("text/plain", NULL));
        assert_int_equal(failures, 0);
}

static void check(const ExportPolicy *p, const char *type, bool archive, ActiveFinding active,
                  ExportVerdict want, const char *want_reason) {
        ExportFacts f = { .type = type, .is_archive = archive, .active = active };
        char *reason = NULL;

        assert_int_equal(export_decide(p, &f, &reason), want);
        if (want_reason)
                assert_string_equal(reason, want_reason);
        else
                assert_null(reason);
        free(reason);
}

static void test_default_policy(void **state) {
        ExportPolicy p = { .have_dest = true };

        check(&p, "text/plain", false, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);
        check(&p, "inode/x-empty", false, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);
        check(&p, "application/zip", true, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);
        check(&p, "application/x-pie-executable", false, ACTIVE_NONE, EXPORT_VERDICT_REFUSE,
              "type application/x-pie-executable is not allowed");
        check(&p, "text/html", false, ACTIVE_NONE, EXPORT_VERDICT_REFUSE, "type text/html is not allowed");
        check(&p, "text/html", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_REFUSE, "active content: script in HTML");
        check(&p, "application/pdf", false, ACTIVE_JAVASCRIPT_PDF, EXPORT_VERDICT_REFUSE,
              "active content: JavaScript in PDF");
        check(&p, "application/zip", true, ACTIVE_MACROS, EXPORT_VERDICT_REFUSE, "active content: macros");
        /* every default type is allowed */
        for (size_t i = 0; export_default_allow[i]; i++)
                check(&p, export_default_allow[i], false, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);
}

static void test_policy_options(void **state) {
        char *allow[] = { (char *) "text/*", NULL }, *approve[] = { (char *) "image/*", NULL };
        ExportPolicy p = { .allow = allow, .approve = approve, .have_dest = true };

        check(&p, "text/html", false, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);
        check(&p, "application/pdf", false, ACTIVE_NONE, EXPORT_VERDICT_REFUSE, "type application/pdf is not allowed");
        check(&p, "image/png", false, ACTIVE_NONE, EXPORT_VERDICT_HOLD, "type image/png needs approval");

        /* active content: approve holds whatever the type, allow notes it but the type still counts */
        p.active = EXPORT_ACTIVE_APPROVE;
        check(&p, "text/html", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_HOLD, "active content: script in HTML");
        check(&p, "application/x-bad", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_HOLD, "active content: script in HTML");
        p.active = EXPORT_ACTIVE_ALLOW;
        check(&p, "text/html", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_EXPORT, "active content: script in HTML");
        check(&p, "image/svg+xml", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_HOLD, "type image/svg+xml needs approval");
        check(&p, "application/x-bad", false, ACTIVE_SCRIPT_HTML, EXPORT_VERDICT_REFUSE,
              "type application/x-bad is not allowed");

        /* archives=reject comes first */
        p = (ExportPolicy) { .archives = EXPORT_ARCHIVES_REJECT, .have_dest = true };
        check(&p, "application/zip", true, ACTIVE_NONE, EXPORT_VERDICT_REFUSE, "archive");
        check(&p, "application/gzip", false, ACTIVE_NONE, EXPORT_VERDICT_EXPORT, NULL);

        /* no destination: what would pass is held */
        p = (ExportPolicy) {};
        check(&p, "text/plain", false, ACTIVE_NONE, EXPORT_VERDICT_HOLD, "no destination");
        check(&p, "text/html", false, ACTIVE_NONE, EXPORT_VERDICT_REFUSE, "type text/html is not allowed");

        p.active = _EXPORT_ACTIVE_INVALID;
        check(&p, "text/plain", false, ACTIVE_MACROS, _EXPORT_VERDICT_INVALID, NULL);
}

static void test_modes(void **state) {
        unsigned d;

        assert_int_equal(export_file_mode(0644, false, &d), 0644);
        assert_int_equal(d, 0);
        assert_int_equal(export_file_mode(0600, false, &d), 0644);
        assert_int_equal(export_file_mode(0755, false, &d), 0644);
        assert_int_equal(d, EXPORT_DROPPED_EXEC);
        assert_int_equal(export_file_mode(0100, true, &d), 0755);
        assert_int_equal(d, 0);
        assert_int_equal(export_file_mode(S_ISUID | S_ISGID | S_ISVTX | 0755, true, &d), 0755);
        assert_int_equal(d, EXPORT_DROPPED_SETUID | EXPORT_DROPPED_SETGID | EXPORT_DROPPED_STICKY);
        assert_int_equal(export_file_mode(S_ISUID | 0744, false, &d), 0644);
        assert_int_equal(d, EXPORT_DROPPED_SETUID | EXPORT_DROPPED_EXEC);
        assert_string_equal(export_dropped_to_string(EXPORT_DROPPED_SETUID), "setuid dropped");
        assert_string_equal(export_dropped_to_string(EXPORT_DROPPED_SETGID), "setgid dropped");
        assert_string_equal(export_dropped_to_string(EXPORT_DROPPED_EXEC), "exec bits dropped");
        assert_null(export_dropped_to_string(0));
}

static void test_mode_names(void **state) {
        assert_int_equal(export_active_mode_from_string("reject"), EXPORT_ACTIVE_REJECT);
        assert_int_equal(export_active_mode_from_string("approve"), EXPORT_ACTIVE_APPROVE);
        assert_int_equal(export_active_mode_from_string("allow"), EXPORT_ACTIVE_ALLOW);
        assert_int_equal(export_active_mode_from_string("Allow"), _EXPORT_ACTIVE_INVALID);
        assert_int_equal(export_active_mode_from_string(NULL), _EXPORT_ACTIVE_INVALID);
        assert_int_equal(export_archive_mode_from_string("normalize"), EXPORT_ARCHIVES_NORMALIZE);
        assert_int_equal(export_archive_mode_from_string("reject"), EXPORT_ARCHIVES_REJECT);
        assert_int_equal(export_archive_mode_from_string("normalise"), _EXPORT_ARCHIVES_INVALID);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_glob),
                cmocka_unit_test(test_default_policy),
                cmocka_unit_test(test_policy_options),
                cmocka_unit_test(test_modes),
                cmocka_unit_test(test_mode_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
