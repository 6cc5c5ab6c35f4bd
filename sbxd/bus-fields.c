/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Decoding a method call's a{sv} (a run's request, an Exec's options) by a table of rows (bus-fields.h). */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "bus-fields.h"
#include "macro.h"
#include "policy.h"
#include "tty-proto.h"
#include "util.h"

/* A caller's string in a message (and with it in the journal, sbxd logs every refusal): one line, cut */
#define QUOTE_MAX 64

int bus_field_string(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        char **dst = field, *copy;
        const char *s, *contents = NULL;

        /* a string sd-bus cannot read is not UTF-8 or holds a NUL, which no D-Bus string may */
        if (sd_bus_message_peek_type(msg, NULL, &contents) < 0)
                contents = NULL;
        if (sd_bus_message_read(msg, "v", "s", &s) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: %s", f->name,
                                         streq_ptr(contents, "s") ? "not a valid string (a D-Bus string is UTF-8)" :
                                                                    "expected a string");
        if (f->valid && !f->valid(s)) {
                _cleanup_free_ char *q = NULL;

                if (line_escape(s, QUOTE_MAX, &q) < 0)
                        return -ENOMEM;
                return sd_bus_error_setf(error, ERR_INVALID, "%s: '%s' is not %s", f->name, q, f->expected);
        }
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static int read_positive(sd_bus_message *msg, const BusField *f, uint64_t *ret, sd_bus_error *error) {
        uint64_t u;

        if (sd_bus_message_read(msg, "v", "t", &u) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected an unsigned 64-bit integer", f->name);
        if (u == 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: must be greater than 0", f->name);
        if (f->max > 0 && u > f->max)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: %" PRIu64 " is too large (at most %" PRIu64 ")",
                                         f->name, u, f->max);
        *ret = u;
        return 0;
}

int bus_field_u64_positive(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        return read_positive(msg, f, field, error);
}

int bus_field_unsigned(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        uint64_t u;
        int r;

        assert(f->max > 0 && f->max <= UINT_MAX);
        r = read_positive(msg, f, &u, error);
        if (r < 0)
                return r;
        *(unsigned *) field = (unsigned) u;
        return 0;
}

int bus_field_bool(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        int b;

        if (sd_bus_message_read(msg, "v", "b", &b) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected a boolean", f->name);
        *(bool *) field = b;
        return 0;
}

static int read_window_size(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        uint16_t v;

        if (sd_bus_message_read(msg, "v", "q", &v) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "tty.%s: expected an unsigned 16-bit integer", f->name);
        if (v == 0 || v > TTY_SIZE_MAX)
                return sd_bus_error_setf(error, ERR_INVALID, "tty.%s: %u is out of range (1-%u)", f->name, v,
                                         TTY_SIZE_MAX);
        *(unsigned *) field = v;
        return 0;
}

static const BusField terminal_fields[] = {
        { "rows", read_window_size,  offsetof(RunTerminal, rows) },
        { "cols", read_window_size,  offsetof(RunTerminal, cols) },
        { "term", bus_field_string,  offsetof(RunTerminal, term), .valid = run_request_term_is_valid,
          .expected = "a valid terminal name" },
        {}
};

int bus_field_terminal(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        RunTerminal *t = field;
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(msg, &type, &contents);
        if (r < 0)
                return r;
        if (type == SD_BUS_TYPE_VARIANT && streq_ptr(contents, "b"))
                return bus_field_bool(msg, f, &t->on, error);
        if (type != SD_BUS_TYPE_VARIANT || !streq_ptr(contents, "a{sv}"))
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected a boolean or a{sv} of rows, cols and term",
                                         f->name);
        r = sd_bus_message_enter_container(msg, 'v', "a{sv}");
        if (r < 0)
                return r;
        r = bus_read_fields(msg, terminal_fields, 0, t, f->name, error);
        if (r < 0)
                return r;
        t->on = true;
        return sd_bus_message_exit_container(msg);
}

int bus_read_fields(sd_bus_message *msg, const BusField *table, unsigned skip, void *base, const char *what,
                    sd_bus_error *error) {
        uint64_t seen = 0;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                const BusField *f;
                const char *key;
                size_t i;

                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                for (i = 0, f = table; f->name; f++, i++)
                        if (streq(f->name, key) && !(f->flags & skip))
                                break;
                assert(i < BUS_FIELDS_MAX);
                if (!f->name) {
                        _cleanup_free_ char *q = NULL;

                        if (line_escape(key, QUOTE_MAX, &q) < 0)
                                return -ENOMEM;
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: unknown key '%s'", what, q);
                }
                if (seen & (UINT64_C(1) << i))
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: key '%s' given twice", what, key);
                seen |= UINT64_C(1) << i;
                r = f->read(msg, f, (uint8_t *) base + f->offset, error);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

int bus_field_byte_strings(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error) {
        _cleanup_strv_free_ char **l = NULL;
        char ***dst = field;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(msg, 'v', "aay");
        if (r < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected an array of byte arrays", f->name);
        r = sd_bus_message_enter_container(msg, 'a', "ay");
        if (r < 0)
                return r;
        for (;;) {
                const void *p;
                size_t size;
                char **nl;

                r = sd_bus_message_read_array(msg, 'y', &p, &size);
                if (r < 0)
                        return r;
                if (r == 0) /* the end of the outer array */
                        break;
                if (size > 0 && memchr(p, 0, size))
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: entry %zu contains a NUL byte", f->name, n);
                nl = realloc(l, (n + 2) * sizeof(char *));
                if (!nl)
                        return -ENOMEM;
                l = nl;
                l[n] = strndup(size > 0 ? p : "", size);
                if (!l[n])
                        return -ENOMEM;
                l[++n] = NULL;
        }
        r = sd_bus_message_exit_container(msg);
        if (r >= 0)
                r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        strv_free(*dst);
        *dst = TAKE_PTR(l);
        return 0;
}

int bus_take_command(char ***argv, char ***argv_bytes, sd_bus_error *error) {
        if (!*argv_bytes)
                return 0;
        if (strv_length(*argv) > 0)
                return sd_bus_error_setf(error, ERR_INVALID, "argv_bytes: given with a command line in argv too");
        strv_free(*argv);
        *argv = TAKE_PTR(*argv_bytes);
        return 0;
}
