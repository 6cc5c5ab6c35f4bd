/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "name.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_sequence(const uint8_t *s, size_t n) {
        uint32_t cp;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

bool export_utf8_is_valid(const char *s, size_t n) {
        const uint8_t *p = (const uint8_t *) s;

        for (size_t i = 0; i < n;) {
                size_t k = utf8_sequence(p + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

static bool has_control(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((uint8_t) s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

bool export_name_is_valid(const char *name) {
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        return n > 0 && n <= EXPORT_NAME_MAX && !streq(name, ".") && !streq(name, "..") &&
               !strchr(name, '/') && !has_control(name, n) && export_utf8_is_valid(name, n);
}

char *export_name_escape(const char *s) {
        const uint8_t *p = (const uint8_t *) s;
        size_t n = strlen(s), k;
        char *ret, *o;

        ret = o = malloc(n * 4 + 1);
        if (!ret)
                return NULL;
        for (size_t i = 0; i < n; i += k) {
                k = utf8_sequence(p + i, n - i);
                if (k == 0 || (k == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\'))) {
                        o += sprintf(o, "\\x%02x", p[i]);
                        k = 1;
                } else {
                        memcpy(o, p + i, k);
                        o += k;
                }
        }
        *o = 0;
        return ret;
}

int export_entry_path_normalize(const char *entry, char **ret, const char **ret_reason) {
        _cleanup_free_ char *out = NULL;
        size_t n, o = 0;

        if (!entry)
                return *ret_reason = "name", -EINVAL;
        n = strlen(entry);
        if (n == 0 || n > EXPORT_ENTRY_PATH_MAX || has_control(entry, n) || strchr(entry, '\\') ||
            !export_utf8_is_valid(entry, n))
                return *ret_reason = "name", -EINVAL;
        if (entry[0] == '/')
                return *ret_reason = "absolute path", -EINVAL;

        out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        for (const char *p = entry; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return *ret_reason = "climbs out (..)", -EINVAL;
                if (len > EXPORT_NAME_MAX)
                        return *ret_reason = "name", -EINVAL;
                if (len > 0 && !(len == 1 && p[0] == '.')) {
                        if (o > 0)
                                out[o++] = '/';
                        memcpy(out + o, p, len);
                        o += len;
                }
                p += len;
                p += strspn(p, "/");
        }
        if (o == 0)
                return *ret_reason = "name", -EINVAL;
        out[o] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}
