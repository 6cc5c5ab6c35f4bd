/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading a JSON document that must follow a fixed format, with the first error as one line that names
 * the file and the place: "FILE:LINE:COLUMN: what" for a syntax error, "FILE: key.path[2].key: what
 * was expected, got VALUE" for everything else. Pure (json-c only).
 *
 * Every json_doc_fail*() and json_doc_get_*() that finds an error keeps the message in the JsonDoc (the
 * first one wins) and returns -EINVAL; -ENOMEM when even that fails. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "util.h"

typedef struct JsonDoc {
        const char *file; /* for messages: the path, or "<input>" */
        char *error;      /* the first error, owned: take it or free it */
} JsonDoc;

/* Where a value sits in the document: a chain of nodes on the caller's stack, NULL being the whole
 * document. JSON_KEY(p, "files") is member "files" of p, JSON_INDEX(p, 2) element 2 of the array p. */
typedef struct JsonPath JsonPath;
struct JsonPath {
        const JsonPath *parent;
        const char *key; /* NULL: element 'index' of an array */
        size_t index;
};
#define JSON_KEY(p, k) (&(const JsonPath) { .parent = (p), .key = (k) })
#define JSON_INDEX(p, i) (&(const JsonPath) { .parent = (p), .index = (i) })

/* "key.path[2].key" (empty for the document itself). */
int json_path_to_string(const JsonPath *p, char **ret);

/* Parses one JSON document of exactly 'size' bytes (no NUL needed at the end, none allowed inside):
 * strict JSON, valid UTF-8, nothing but white space after it. *ret is NULL for the document "null".
 * A name twice in one object is not detected: json-c keeps the last value, and has no flag to refuse
 * it. */
int json_doc_parse(JsonDoc *jd, const char *text, size_t size, json_object **ret);

/* "FILE: key.path: what" (or "FILE: what" for p == NULL). */
int json_doc_fail(JsonDoc *jd, const JsonPath *p, const char *fmt, ...) _printf_(3, 4);
/* "FILE: key.path: what, got VALUE": strings quoted (cut when long, control characters escaped),
 * numbers as written, arrays and objects as "an array"/"an object" ("[]"/"{}" when empty). */
int json_doc_fail_got(JsonDoc *jd, const JsonPath *p, json_object *v, const char *fmt, ...) _printf_(4, 5);
/* "FILE: key.path: missing required key" */
int json_doc_missing(JsonDoc *jd, const JsonPath *p);

/* Whether the object has the key; *ret is then its value, NULL for null. */
bool json_doc_get(json_object *o, const char *key, json_object **ret);

/* Building documents: v (taken, NULL counts as out of memory) into object o under key, or at the end of
 * array a. 0 or -ENOMEM; v is released on failure. */
int json_add_take(json_object *o, const char *key, json_object *v);
int json_append_take(json_object *a, json_object *v);

/* v's string, or NULL when v is not a string or holds a NUL character. No message. */
const char *json_doc_string(json_object *v);
/* A string without NUL characters; points into v. */
int json_doc_get_string(JsonDoc *jd, const JsonPath *p, json_object *v, const char **ret);
int json_doc_get_bool(JsonDoc *jd, const JsonPath *p, json_object *v, bool *ret);
/* Exactly one of 'choices' (NULL-terminated): its index. 'expected' describes them for the message. */
int json_doc_get_choice(JsonDoc *jd, const JsonPath *p, json_object *v, const char *const *choices,
                        const char *expected, unsigned *ret);
int json_doc_get_array(JsonDoc *jd, const JsonPath *p, json_object *v, size_t *ret_n);
/* An array of strings, copied into a NULL-terminated list (empty, not NULL, for []). */
int json_doc_get_string_array(JsonDoc *jd, const JsonPath *p, json_object *v, char ***ret);
/* A JSON integer >= 0, without a message: callers say what they expected. */
bool json_doc_to_uint(json_object *v, uint64_t *ret);

/* A string like "2G" (see parse_size(): no suffix or B, K, M, G, T) or an integer (bytes). */
int json_doc_get_size(JsonDoc *jd, const JsonPath *p, json_object *v, uint64_t *ret);
/* A string like "90s", "1h", "1d" (us ms s min m h d, m being min; none: seconds) or an integer (seconds). */
int json_doc_get_duration(JsonDoc *jd, const JsonPath *p, json_object *v, usec_t *ret);
/* A CPU share: a string "N%" (100% = one CPU) with N <= max. */
int json_doc_get_cpu_percent(JsonDoc *jd, const JsonPath *p, json_object *v, unsigned max, unsigned *ret);

typedef struct JsonNamedList {
        const JsonPath *path; /* where the list is in the document */
        char **items;         /* validated already: quoted as they are in the message */
} JsonNamedList;

/* No item twice in all the lists together: the later one is the error, "'ITEM' is also in PATH[i]". */
int json_doc_check_unique(JsonDoc *jd, const JsonNamedList *lists, size_t n);

/* ---- objects decoded by a table ---- */

/* Converts v, the value of a key (NULL for null), into *field. p is the key's path, for messages; arg is
 * the table row's. */
typedef int (*JsonDocDispatchFn)(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);

enum {
        JSON_DOC_MANDATORY = 1 << 0, /* absent: "missing required key" */
};

/* One key of an object. A table of them, ended by {}, is the object's format: every key known, each
 * decoded in the table's order, so that the first error found is the one reported. */
typedef struct JsonDocField {
        const char *name;
        JsonDocDispatchFn fn;      /* the value into the field */
        size_t offset;             /* of the field in the struct decoded into; a key that fills several
                                    * fields or is checked against other keys takes the whole struct (0) */
        unsigned flags;            /* JSON_DOC_* */
        const void *arg;           /* for fn and missing */
        JsonDocDispatchFn missing; /* when the key is absent, for a key that other keys make required:
                                    * called with v NULL and the whole struct (base) as field; NULL:
                                    * absent is fine */
} JsonDocField;

/* o is an object ("expected an object, got VALUE") without a key outside the table ("KEY: unknown key",
 * the first one in the document's order). */
int json_doc_check_fields(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *table);
/* One row: fn with the key's value, or when the key is absent, the message of JSON_DOC_MANDATORY or the
 * row's missing(). p is the object's path, base the struct. */
int json_doc_dispatch_field(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *f, void *base);
/* json_doc_check_fields(), then json_doc_dispatch_field() for each row, in the table's order, into the
 * struct at base. */
int json_doc_dispatch(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *table, void *base);

/* The arg of the number dispatchers below: NULL, or the least value accepted. */
typedef struct JsonDocMin {
        uint64_t value;
        const char *text; /* the value as written in the format: "expected at least TEXT, got VALUE" */
} JsonDocMin;

/* The arg of json_doc_dispatch_choice(). */
typedef struct JsonDocChoice {
        const char *const *choices; /* NULL-terminated */
        const char *expected;       /* for the message: "one of a, b, c" */
} JsonDocChoice;

/* Stock dispatchers. The field's type is given first. */
/* char *: a copy of the string (the old value freed). */
int json_doc_dispatch_string(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* bool */
int json_doc_dispatch_bool(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* uint64_t: json_doc_get_size(); arg: NULL or a JsonDocMin */
int json_doc_dispatch_size(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* usec_t: json_doc_get_duration(); arg: NULL or a JsonDocMin */
int json_doc_dispatch_duration(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* uint64_t: an integer >= 0; arg: NULL or a JsonDocMin */
int json_doc_dispatch_uint64(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* unsigned: json_doc_get_cpu_percent(); arg: a const unsigned *, the highest percentage */
int json_doc_dispatch_cpu_percent(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* int (an enum): the index of the choice; arg: a JsonDocChoice */
int json_doc_dispatch_choice(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* A nested object; arg: its table (a const JsonDocField *), decoded into the struct at the field. */
int json_doc_dispatch_object(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
