/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Decoding the a{sv} of a method call (Run's and CreateSandbox's request, Exec's options) by a table of
 * { key, reader, offset } rows: one row per key, and unknown keys, keys given twice and values of the
 * wrong type reported in one place, as named errors (org.sbx.Error.InvalidRequest) of one line each.
 * The tables are the documentation of the requests (docs/dbus.md lists the same keys). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct BusField BusField;

/* Reads the variant at the message's position into 'field' (base + offset). Errors: a named error in
 * 'error' (and its negative errno), or a negative errno of the message. */
typedef int (*BusFieldReader)(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);

struct BusField {
        const char *name;
        BusFieldReader read;
        size_t offset;
        unsigned flags;     /* rows whose flags are in bus_read_fields()'s 'skip' are unknown keys there */
        uint64_t max;       /* bus_field_u64_positive(), bus_field_unsigned(): the largest value allowed */
        bool (*valid)(const char *s); /* bus_field_string(): what a valid value is, NULL: any */
        const char *expected;         /* ... and how the message describes it */
};

#define BUS_FIELDS_MAX 64

/* Reads an a{sv} by the table (ended by a row whose name is NULL). 'what' names the argument in the
 * message for unknown keys ("request", "exec options"). */
int bus_read_fields(sd_bus_message *msg, const BusField *table, unsigned skip, void *base, const char *what,
                    sd_bus_error *error);

/* s -> char * (owned: the previous value is freed) */
int bus_field_string(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* t > 0 (and <= max when max is set) -> uint64_t */
int bus_field_u64_positive(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* t > 0, <= max (required) -> unsigned */
int bus_field_unsigned(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* b -> bool */
int bus_field_bool(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* "tty": b, or a{sv} of "rows" q, "cols" q, "term" s (each optional; the object means true) -> RunTerminal
 * (policy.h; term owned) */
int bus_field_terminal(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* aay -> char ** (owned): byte strings, each without NUL (a command line's arguments, environment entries) */
int bus_field_byte_strings(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* The command line of Run and Exec: the positional "as" (already read into *argv), or the request's byte
 * form (argv_bytes, taken from *argv_bytes), never both. */
int bus_take_command(char ***argv, char ***argv_bytes, sd_bus_error *error);
