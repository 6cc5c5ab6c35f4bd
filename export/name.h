/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Names in a tree leaving a sandbox, and member names in its archives: what passes, how a refused one
 * is shown in the report. Pure. */

#include <stdbool.h>
#include <stddef.h>

#define EXPORT_NAME_MAX 255
#define EXPORT_ENTRY_PATH_MAX 4096

/* Valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) of 1..n bytes. */
bool export_utf8_is_valid(const char *s, size_t n);
/* A directory entry's name that may leave: 1..255 bytes of valid UTF-8 without control characters
 * (< 0x20, 0x7f), not "." or "..", no '/'. */
bool export_name_is_valid(const char *name);
/* A printable copy of any byte string for the report: each byte that is a control character, a
 * backslash or not part of valid UTF-8 becomes \xNN. NULL on ENOMEM. */
char *export_name_escape(const char *s);

/* The normalised form of an archive member's name: "./a//b/" -> "a/b". Returns 0 and the heap copy,
 * or -EINVAL with *ret_reason one of "absolute path", "climbs out (..)", "name" (empty, a control
 * character, a backslash, invalid UTF-8, a component over 255 bytes or a path over 4096), or
 * -ENOMEM. */
int export_entry_path_normalize(const char *entry, char **ret, const char **ret_reason);
