/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* UTF-8 as RFC 3629 has it (no overlong forms, no surrogates, nothing above U+10FFFF): what a D-Bus string
 * and a JSON text must be. */

#include <stdbool.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence at s (n bytes left, n > 0): 1-4, 0 if there is none, -1 if it is
 * the start of a valid sequence cut short by the end. */
int utf8_sequence(const unsigned char *s, size_t n);
/* n bytes at s are valid UTF-8 */
bool utf8_valid(const char *s, size_t n);
/* The same, and no noncharacter (U+FDD0-U+FDEF, U+nFFFE, U+nFFFF): a string sd-bus takes (its
 * utf8_is_valid() refuses them, though the D-Bus specification allows them since its version 0.21). */
bool utf8_valid_dbus(const char *s, size_t n);
