/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

#include "utf8.h"

int utf8_sequence(const unsigned char *s, size_t n) {
        unsigned char c = s[0];
        size_t len;
        unsigned lo = 0x80, hi = 0xBF;

        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF)
                len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
                len = 3;
                lo = c == 0xE0 ? 0xA0 : 0x80;     /* no overlong forms */
                hi = c == 0xED ? 0x9F : 0xBF;     /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
                len = 4;
                lo = c == 0xF0 ? 0x90 : 0x80;
                hi = c == 0xF4 ? 0x8F : 0xBF;     /* nothing above U+10FFFF */
        } else
                return 0;
        for (size_t i = 1; i < len; i++) {
                if (i >= n)
                        return -1;
                if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF))
                        return 0;
        }
        return (int) len;
}

static bool valid(const char *s, size_t n, bool nonchars) {
        for (size_t i = 0; i < n;) {
                const unsigned char *p = (const unsigned char *) s + i;
                int l = utf8_sequence(p, n - i);
                uint32_t c;

                if (l <= 0)
                        return false;
                i += (size_t) l;
                if (nonchars)
                        continue;
                /* the code point (the sequence is valid: its lead byte says how many bits it holds) */
                c = l == 1 ? p[0] : p[0] & (0x7F >> l);
                for (int k = 1; k < l; k++)
                        c = (c << 6) | (p[k] & 0x3F);
                if ((c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE)
                        return false;
        }
        return true;
}

bool utf8_valid(const char *s, size_t n) {
        return valid(s, n, true);
}

bool utf8_valid_dbus(const char *s, size_t n) {
        return valid(s, n, false);
}
