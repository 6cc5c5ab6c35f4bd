/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export/active.c: the active-content scans, over one buffer and over the same bytes fed in pieces. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "active.h"
#include "macro.h"
#include "unit-test.h"

/* The finding over the whole buffer, checked to be the same when fed one byte at a time and in
 * chunks of 7 (patterns split across chunks). */
static ActiveFinding scan(ActiveScanKind kind, const char *data, size_t size) {
        ActiveFinding whole = active_scan_buffer(kind, data, size, NULL);
        ActiveScanner s;

        active_scanner_init(&s, kind);
        for (size_t i = 0; i < size; i++)
                active_scanner_feed(&s, data + i, 1);
        assert_int_equal(active_scanner_finish(&s), whole);
        active_scanner_init(&s, kind);
        for (size_t i = 0; i < size; i += 7)
                active_scanner_feed(&s, data + i, MIN((size_t) 7, size - i));
        assert_int_equal(active_scanner_finish(&s), whole);
        return whole;
}

#define SCAN(kind, lit) scan((kind), (lit), sizeof(lit) - 1)

typedef struct Row {
        const char *text;
        bool active;
} Row;

/* Each row's text found active (as 'finding') or not; returns the number of rows that are wrong. */
static int check_rows(ActiveScanKind kind, const Row *rows, size_t n, ActiveFinding finding) {
        int failures = 0;

        for (size_t i = 0; i < n; i++)
                check_row(failures,
                          scan(kind, rows[i].text, strlen(rows[i].text)) == (rows[i].active ? finding : ACTIVE_NONE),
                          "%s", rows[i].text);
        return failures;
}

static void test_html(void **state) {
        static const Row rows[] = {
                { "<html><body><p>hello</p></body></html>", false },
                { "<script>alert(1)</script>", true },
                { "<ScRiPt src=x>", true },
                { "<img src=x onerror=alert(1)>", true },
                { "<img src=x ONERROR = 'alert(1)'>", true },
                { "<svg/onload=alert(1)>", true },
                { "<img src=\"x\"onerror=alert(1)>", true },
                { "<a href=\"javascript:alert(1)\">x</a>", true },
                { "<a href=\"java\tscript:alert(1)\">x</a>", true },
                { "<a href=\"JAVA\nSCRIPT:x\">", true },
                { "<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"4\"/></svg>", false },
                { "the ones=5 in text, not a tag", false },
                { "<p class=one>on=3</p>", false },
                { "<input value=\"on\">", false },
                { "<div data-onclick=x>", false },
                { "a description of javascript without the colon", false },
        };

        assert_int_equal(check_rows(ACTIVE_SCAN_HTML, rows, ELEMENTSOF(rows), ACTIVE_SCRIPT_HTML), 0);
}

static void test_pdf(void **state) {
        static const Row rows[] = {
                { "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj", false },
                { "<< /S /JavaScript /JS (app.alert(1)) >>", true },
                { "<</JS(x)>>", true },
                { "<< /OpenAction 3 0 R >>", true },
                { "<< /AA << /O 4 0 R >> >>", true },
                { "<< /Launch /F (cmd.exe) >>", true },
                { "<< /Names << /EmbeddedFiles 5 0 R >> >>", true },
                { "<< /Type /EmbeddedFile >>", true },
                { "<< /S /J#61vaScript >>", true },
                { "<< /#4A#53 (x) >>", true },
                { "<< /J#53 (x) >>", true },
                { "/JS", true }, /* at the very end */
                { "<< /JSON /AAA /Launcher /JavaScripts >>", false },
                { "<< /Title (JavaScript and /JS in a string are still seen) >>", true },
                { "<< /J#5 >>", false },
                { "<< /Type /XRef >>", false },
        };
        unsigned notes = 0;

        assert_int_equal(check_rows(ACTIVE_SCAN_PDF, rows, ELEMENTSOF(rows), ACTIVE_JAVASCRIPT_PDF), 0);

        assert_int_equal(active_scan_buffer(ACTIVE_SCAN_PDF, "<< /Type /ObjStm /N 3 >>", 24, &notes), ACTIVE_NONE);
        assert_true(notes & ACTIVE_NOTE_PDF_OBJECT_STREAMS);
}

static void test_office(void **state) {
        static const char ole_vba[] = "\xd0\xcf\x11\xe0junk_\0V\0B\0A\0_\0P\0R\0O\0J\0E\0C\0T\0more";
        static const char ole_macros[] = "\xd0\xcf\x11\xe0M\0a\0c\0r\0o\0s\0";
        static const char ole_clean[] = "\xd0\xcf\x11\xe0W\0o\0r\0d\0D\0o\0c\0u\0m\0e\0n\0t\0 _VBA_PROJECT Macros";

        assert_int_equal(SCAN(ACTIVE_SCAN_OLE, ole_vba), ACTIVE_MACROS);
        assert_int_equal(SCAN(ACTIVE_SCAN_OLE, ole_macros), ACTIVE_MACROS);
        assert_int_equal(SCAN(ACTIVE_SCAN_OLE, ole_clean), ACTIVE_NONE);
        assert_int_equal(SCAN(ACTIVE_SCAN_ZIP, "PK\3\4....word/vbaProject.bin...."), ACTIVE_MACROS);
        assert_int_equal(SCAN(ACTIVE_SCAN_ZIP, "PK\3\4....xl/VBAPROJECT.BIN"), ACTIVE_MACROS);
        assert_int_equal(SCAN(ACTIVE_SCAN_ZIP, "PK\3\4....word/document.xml"), ACTIVE_NONE);
        assert_int_equal(SCAN(ACTIVE_SCAN_NONE, "<script>"), ACTIVE_NONE);

        assert_true(active_type_has_macros("application/vnd.ms-word.document.macroEnabled.12"));
        assert_false(active_type_has_macros("application/vnd.openxmlformats-officedocument.wordprocessingml.document"));
        assert_false(active_type_has_macros(NULL));
}

static void test_kind(void **state) {
        assert_int_equal(active_scan_kind("text/html", "a.txt"), ACTIVE_SCAN_HTML);
        assert_int_equal(active_scan_kind("application/xhtml+xml", NULL), ACTIVE_SCAN_HTML);
        assert_int_equal(active_scan_kind("image/svg+xml", NULL), ACTIVE_SCAN_HTML);
        assert_int_equal(active_scan_kind("text/plain", "dir/page.HTML"), ACTIVE_SCAN_HTML);
        assert_int_equal(active_scan_kind("text/plain", "x.svg"), ACTIVE_SCAN_HTML);
        assert_int_equal(active_scan_kind("text/plain", "x.txt"), ACTIVE_SCAN_NONE);
        assert_int_equal(active_scan_kind("application/pdf", NULL), ACTIVE_SCAN_PDF);
        assert_int_equal(active_scan_kind("application/zip", NULL), ACTIVE_SCAN_ZIP);
        assert_int_equal(active_scan_kind("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                          NULL), ACTIVE_SCAN_ZIP);
        assert_int_equal(active_scan_kind("application/vnd.ms-excel.sheet.macroEnabled.12", NULL), ACTIVE_SCAN_ZIP);
        assert_int_equal(active_scan_kind("application/CDFV2", NULL), ACTIVE_SCAN_OLE);
        assert_int_equal(active_scan_kind("application/msword", NULL), ACTIVE_SCAN_OLE);
        assert_int_equal(active_scan_kind(NULL, NULL), ACTIVE_SCAN_NONE);
        assert_string_equal(active_finding_to_string(ACTIVE_MACROS), "active content: macros");
        assert_null(active_finding_to_string(ACTIVE_NONE));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_html),
                cmocka_unit_test(test_pdf),
                cmocka_unit_test(test_office),
                cmocka_unit_test(test_kind),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
