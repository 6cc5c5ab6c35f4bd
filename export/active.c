/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <strings.h>

#include "active.h"
#include "macro.h"
#include "util.h"

const char *active_finding_to_string(ActiveFinding f) {
        switch (f) {
        case ACTIVE_SCRIPT_HTML:
                return "active content: script in HTML";
        case ACTIVE_JAVASCRIPT_PDF:
                return "active content: JavaScript in PDF";
        case ACTIVE_MACROS:
                return "active content: macros";
        case ACTIVE_NONE:
        case _ACTIVE_FINDING_MAX:
        case _ACTIVE_FINDING_INVALID:
                break;
        }
        return NULL;
}

static bool type_in(const char *type, const char * const *list) {
        for (size_t i = 0; list[i]; i++)
                if (strcasecmp(type, list[i]) == 0)
                        return true;
        return false;
}

static bool contains_nocase(const char *s, const char *needle) {
        return s && strcasestr(s, needle);
}

bool active_type_has_macros(const char *type) {
        return contains_nocase(type, "macroenabled");
}

static bool name_has_suffix(const char *name, const char * const *suffixes) {
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        for (size_t i = 0; suffixes[i]; i++) {
                size_t k = strlen(suffixes[i]);
                if (n >= k && strcasecmp(name + n - k, suffixes[i]) == 0)
                        return true;
        }
        return false;
}

ActiveScanKind active_scan_kind(const char *type, const char *name) {
        static const char * const html[] = { "text/html", "application/xhtml+xml", "image/svg+xml", NULL };
        static const char * const html_names[] = { ".html", ".htm", ".xhtml", ".xht", ".shtml", ".svg", NULL };
        static const char * const ole[] = { "application/msword", "application/vnd.ms-excel",
                                             "application/vnd.ms-powerpoint", "application/x-ole-storage",
                                             "application/CDFV2", NULL };
        const char *t = strempty(type);

        if (type_in(t, html) || name_has_suffix(name, html_names))
                return ACTIVE_SCAN_HTML;
        if (strcasecmp(t, "application/pdf") == 0)
                return ACTIVE_SCAN_PDF;
        if (type_in(t, ole))
                return ACTIVE_SCAN_OLE;
        if (strcasecmp(t, "application/zip") == 0 || contains_nocase(t, "openxmlformats") ||
            active_type_has_macros(t))
                return ACTIVE_SCAN_ZIP;
        return ACTIVE_SCAN_NONE;
}

static uint8_t fold(const ActiveMatcher *m, uint8_t c) {
        return m->fold_case && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Knuth-Morris-Pratt over a stream: fail[i] is the length of the longest proper border of
 * pattern[0..i]. */
static void matcher_init(ActiveMatcher *m, const void *pattern, size_t len, bool fold_case) {
        *m = (ActiveMatcher) { .len = len, .fold_case = fold_case };
        memcpy(m->pattern, pattern, len);
        for (size_t i = 0; i < len; i++)
                m->pattern[i] = fold(m, m->pattern[i]);
        for (size_t i = 1, k = 0; i < len; i++) {
                while (k > 0 && m->pattern[i] != m->pattern[k])
                        k = m->fail[k - 1];
                if (m->pattern[i] == m->pattern[k])
                        k++;
                m->fail[i] = k;
        }
}

static bool matcher_feed(ActiveMatcher *m, uint8_t c) {
        c = fold(m, c);
        while (m->pos > 0 && m->pattern[m->pos] != c)
                m->pos = m->fail[m->pos - 1];
        if (m->pattern[m->pos] == c)
                m->pos++;
        if (m->pos == m->len) {
                m->pos = m->fail[m->len - 1];
                return true;
        }
        return false;
}

void active_scanner_init(ActiveScanner *s, ActiveScanKind kind) {
        *s = (ActiveScanner) { .kind = kind };
        switch (kind) {
        case ACTIVE_SCAN_HTML:
                matcher_init(&s->m[0], "<script", 7, true);
                matcher_init(&s->m[1], "javascript:", 11, true);
                s->n_matchers = 2;
                break;
        case ACTIVE_SCAN_ZIP:
                matcher_init(&s->m[0], "vbaproject.bin", 14, true);
                s->n_matchers = 1;
                break;
        case ACTIVE_SCAN_OLE:
                /* stream names in an OLE2 directory are UTF-16LE */
                matcher_init(&s->m[0], "_\0V\0B\0A\0_\0P\0R\0O\0J\0E\0C\0T\0", 24, false);
                matcher_init(&s->m[1], "M\0a\0c\0r\0o\0s\0", 12, false);
                s->n_matchers = 2;
                break;
        case ACTIVE_SCAN_PDF:
        case ACTIVE_SCAN_NONE:
        case _ACTIVE_SCAN_MAX:
        case _ACTIVE_SCAN_INVALID:
                break;
        }
}

static bool is_space(uint8_t c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_letter(uint8_t c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* An on...= attribute inside a tag: after a separator (space, '/', a quote) "on", one or more letters,
 * optional spaces, '='. attr: 0 nothing, 1 after a separator, 2 "o", 3 "on", 4 "on" and letters,
 * 5 spaces after the name. */
static bool html_attr_feed(ActiveScanner *s, uint8_t c) {
        bool sep = is_space(c) || c == '/' || c == '"' || c == '\'';

        if (c == '<' || c == '>') {
                s->in_tag = c == '<';
                s->attr = 0;
                return false;
        }
        if (!s->in_tag)
                return false;
        c = c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
        switch (s->attr) {
        case 4:
                if (c == '=')
                        return true;
                s->attr = is_letter(c) ? 4 : is_space(c) ? 5 : sep ? 1 : 0;
                return false;
        case 5:
                if (c == '=')
                        return true;
                __attribute__((fallthrough));
        case 1:
                s->attr = c == 'o' ? 2 : sep ? 1 : 0;
                return false;
        case 2:
                s->attr = c == 'n' ? 3 : sep ? 1 : 0;
                return false;
        case 3:
                s->attr = is_letter(c) ? 4 : sep ? 1 : 0;
                return false;
        default:
                s->attr = sep ? 1 : 0;
                return false;
        }
}

static void html_feed(ActiveScanner *s, uint8_t c) {
        if (matcher_feed(&s->m[0], c) || html_attr_feed(s, c))
                s->found = ACTIVE_SCRIPT_HTML;
        /* browsers drop tabs and newlines inside a URL: "java\tscript:" runs */
        else if (c != '\t' && c != '\n' && c != '\r' && matcher_feed(&s->m[1], c))
                s->found = ACTIVE_SCRIPT_HTML;
}

static bool pdf_is_delimiter(uint8_t c) {
        return is_space(c) || c == 0 || strchr("()<>[]{}/%", c);
}

static void pdf_name_end(ActiveScanner *s) {
        static const char * const active[] = { "JavaScript", "JS", "OpenAction", "AA", "Launch",
                                               "EmbeddedFile", "EmbeddedFiles", NULL };

        if (s->hex_state > 0 && s->name_len < sizeof(s->name)) /* a '#' without two hex digits: as written */
                s->name[s->name_len++] = '#';
        if (s->hex_state > 1 && s->name_len < sizeof(s->name))
                s->name[s->name_len++] = s->hex_first;
        s->in_name = false;
        s->hex_state = 0;
        if (s->name_overflow || s->name_len >= sizeof(s->name))
                return;
        s->name[s->name_len] = 0;
        for (size_t i = 0; active[i]; i++)
                if (streq(s->name, active[i]))
                        s->found = ACTIVE_JAVASCRIPT_PDF;
        if (streq(s->name, "ObjStm"))
                s->notes |= ACTIVE_NOTE_PDF_OBJECT_STREAMS;
}

static void pdf_name_add(ActiveScanner *s, uint8_t c) {
        if ((size_t) s->name_len + 1 >= sizeof(s->name))
                s->name_overflow = true;
        else
                s->name[s->name_len++] = c;
}

static void pdf_feed(ActiveScanner *s, uint8_t c) {
        if (s->in_name) {
                if (s->hex_state > 0 && !pdf_is_delimiter(c) && hex_digit_value(c) >= 0) {
                        if (s->hex_state == 1) {
                                s->hex_first = c;
                                s->hex_state = 2;
                        } else {
                                pdf_name_add(s, hex_digit_value(s->hex_first) << 4 | hex_digit_value(c));
                                s->hex_state = 0;
                        }
                        return;
                }
                if (s->hex_state > 0) { /* not an escape after all: keep what was written */
                        uint8_t first = s->hex_first, state = s->hex_state;
                        s->hex_state = 0;
                        pdf_name_add(s, '#');
                        if (state > 1)
                                pdf_name_add(s, first);
                }
                if (pdf_is_delimiter(c))
                        pdf_name_end(s);
                else if (c == '#')
                        s->hex_state = 1;
                else {
                        pdf_name_add(s, c);
                        return;
                }
                if (s->in_name)
                        return;
        }
        if (c == '/') {
                s->in_name = true;
                s->name_overflow = false;
                s->name_len = 0;
                s->hex_state = 0;
        }
}

void active_scanner_feed(ActiveScanner *s, const void *data, size_t size) {
        const uint8_t *p = data;

        for (size_t i = 0; i < size && s->found == ACTIVE_NONE; i++)
                switch (s->kind) {
                case ACTIVE_SCAN_HTML:
                        html_feed(s, p[i]);
                        break;
                case ACTIVE_SCAN_PDF:
                        pdf_feed(s, p[i]);
                        break;
                case ACTIVE_SCAN_ZIP:
                        if (matcher_feed(&s->m[0], p[i]))
                                s->found = ACTIVE_MACROS;
                        break;
                case ACTIVE_SCAN_OLE:
                        /* | and not ||: both matchers see every byte, each keeps its own state */
                        if (matcher_feed(&s->m[0], p[i]) | matcher_feed(&s->m[1], p[i]))
                                s->found = ACTIVE_MACROS;
                        break;
                case ACTIVE_SCAN_NONE:
                case _ACTIVE_SCAN_MAX:
                case _ACTIVE_SCAN_INVALID:
                        return;
                }
}

ActiveFinding active_scanner_finish(ActiveScanner *s) {
        if (s->kind == ACTIVE_SCAN_PDF && s->in_name && s->found == ACTIVE_NONE)
                pdf_name_end(s);
        return s->found;
}

ActiveFinding active_scan_buffer(ActiveScanKind kind, const void *data, size_t size, unsigned *ret_notes) {
        ActiveScanner s;
        ActiveFinding f;

        active_scanner_init(&s, kind);
        active_scanner_feed(&s, data, size);
        f = active_scanner_finish(&s);
        if (ret_notes)
                *ret_notes = s.notes;
        return f;
}
