/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Active content in files that leave a sandbox: pattern scans over a byte stream, not parsers.
 * A scanner is fed the file in chunks of any size (a pattern split between two chunks is found) and
 * keeps a few dozen bytes of state, so a whole file is scanned in constant memory. No I/O. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ActiveFinding {
        ACTIVE_NONE,
        ACTIVE_SCRIPT_HTML,    /* <script, an on...= attribute in a tag, javascript: */
        ACTIVE_JAVASCRIPT_PDF, /* /JavaScript /JS /OpenAction /AA /Launch /EmbeddedFile(s) */
        ACTIVE_MACROS,         /* vbaProject.bin in a zip, _VBA_PROJECT or Macros in OLE2 */
        _ACTIVE_FINDING_MAX,
        _ACTIVE_FINDING_INVALID = -EINVAL,
} ActiveFinding;

/* "active content: script in HTML", ...; NULL for ACTIVE_NONE. */
const char *active_finding_to_string(ActiveFinding f);

typedef enum ActiveScanKind {
        ACTIVE_SCAN_NONE,
        ACTIVE_SCAN_HTML, /* HTML, XHTML, SVG */
        ACTIVE_SCAN_PDF,
        ACTIVE_SCAN_ZIP,  /* zip and OOXML: the member names, which a zip stores uncompressed */
        ACTIVE_SCAN_OLE,  /* OLE2 compound files (old Office formats) */
        _ACTIVE_SCAN_MAX,
        _ACTIVE_SCAN_INVALID = -EINVAL,
} ActiveScanKind;

/* Which scan a file gets, from its MIME type and its name (a file named *.html or *.svg is scanned as
 * HTML whatever its type, as a browser would render it by its name). name may be NULL. */
ActiveScanKind active_scan_kind(const char *type, const char *name);
/* A type that says so by itself: *.macroEnabled* (OOXML with macros). */
bool active_type_has_macros(const char *type);

#define ACTIVE_PATTERN_MAX 32

typedef struct ActiveMatcher {
        uint8_t pattern[ACTIVE_PATTERN_MAX];
        uint8_t fail[ACTIVE_PATTERN_MAX];
        uint8_t len, pos;
        bool fold_case; /* ASCII letters compared without case */
} ActiveMatcher;

/* Set when a PDF has compressed object streams (/ObjStm), whose contents this scan does not see. */
#define ACTIVE_NOTE_PDF_OBJECT_STREAMS (1u << 0)

typedef struct ActiveScanner {
        ActiveScanKind kind;
        ActiveFinding found;
        unsigned notes;        /* ACTIVE_NOTE_* */
        ActiveMatcher m[2];
        size_t n_matchers;
        /* HTML: inside a tag, and the state of the on...= attribute recogniser */
        bool in_tag;
        uint8_t attr;
        /* PDF: the name being read (after '/'), with #xx escapes decoded */
        bool in_name, name_overflow;
        uint8_t name_len, hex_state, hex_first;
        char name[24];
} ActiveScanner;

void active_scanner_init(ActiveScanner *s, ActiveScanKind kind);
void active_scanner_feed(ActiveScanner *s, const void *data, size_t size);
/* Ends the stream (a PDF name at the very end counts) and returns what was found. */
ActiveFinding active_scanner_finish(ActiveScanner *s);

/* The same over one buffer. */
ActiveFinding active_scan_buffer(ActiveScanKind kind, const void *data, size_t size, unsigned *ret_notes);
