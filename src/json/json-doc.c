/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "json-doc.h"

#define QUOTE_MAX 64 /* bytes of a string value quoted back in a message */

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

/* ---- messages ---- */

static bool utf8_is_continuation(char c) {
        return ((unsigned char) c & 0xC0) == 0x80;
}

/* A string as a JSON string literal, cut after QUOTE_MAX bytes, with every control character (and NUL)
 * escaped, so that a message always stays on one line. */
static void write_quoted(FILE *f, const char *s, size_t len) {
        const unsigned char *c = (const unsigned char *) s, *end = c + len;

        fputc('"', f);
        for (size_t n = 0; c < end; c++, n++) {
                if (n >= QUOTE_MAX && !utf8_is_continuation((char) *c)) {
                        fputs("...", f);
                        break;
                }
                if (*c == '"' || *c == '\\')
                        fprintf(f, "\\%c", *c);
                else if (*c == '\n')
                        fputs("\\n", f);
                else if (*c == '\t')
                        fputs("\\t", f);
                else if (*c < 0x20 || *c == 0x7f)
                        fprintf(f, "\\u%04x", *c);
                else if (*c == 0xc2 && c + 1 < end && c[1] >= 0x80 && c[1] <= 0x9f) /* C1 control characters */
                        fprintf(f, "\\u%04x", *++c);
                else
                        fputc(*c, f);
        }
        fputc('"', f);
}

static void write_json_path(FILE *f, const JsonPath *p) {
        if (!p)
                return;
        write_json_path(f, p->parent);
        if (!p->key) {
                fprintf(f, "[%zu]", p->index);
                return;
        }
        if (p->parent)
                fputc('.', f);
        /* Keys of the format are identifiers; an unknown key may be anything. */
        if (*p->key &&
            strspn(p->key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(p->key))
                fputs(p->key, f);
        else
                write_quoted(f, p->key, strlen(p->key));
}

/* The value found, for "..., got X". */
static void write_value(FILE *f, json_object *v) {
        switch (json_object_get_type(v)) {
        case json_type_null:
                fputs("null", f);
                break;
        case json_type_boolean:
                fputs(json_object_get_boolean(v) ? "true" : "false", f);
                break;
        case json_type_int:
                if (json_object_get_int64(v) < 0)
                        fprintf(f, "%" PRId64, json_object_get_int64(v));
                else
                        fprintf(f, "%" PRIu64, json_object_get_uint64(v));
                break;
        case json_type_double:
                /* json-c keeps the number's text as written */
                fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), f);
                break;
        case json_type_string:
                write_quoted(f, json_object_get_string(v), (size_t) json_object_get_string_len(v));
                break;
        case json_type_array:
                fputs(json_object_array_length(v) == 0 ? "[]" : "an array", f);
                break;
        case json_type_object:
                fputs(json_object_object_length(v) == 0 ? "{}" : "an object", f);
                break;
        }
}

/* Closes an open_memstream() stream: its buffer is then complete. */
static int memstream_finish(FILE **f) {
        int r = fflush(*f);

        r = fclose(*f) < 0 || r < 0 ? -ENOMEM : 0;
        *f = NULL;
        return r;
}

_printf_(5, 0) static int json_doc_vfail(JsonDoc *jd, const JsonPath *p, bool has_value, json_object *value,
                                         const char *fmt, va_list ap) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        size_t size;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%s: ", jd->file);
        if (p) {
                write_json_path(f, p);
                fputs(": ", f);
        }
        vfprintf(f, fmt, ap);
        if (has_value) {
                fputs(", got ", f);
                write_value(f, value);
        }
        r = memstream_finish(&f);
        if (r < 0)
                return r;
        if (!jd->error)
                jd->error = TAKE_PTR(buf);
        return -EINVAL;
}

/* "FILE: key.path: what". Returns -EINVAL (or -ENOMEM). */
int json_doc_fail(JsonDoc *jd, const JsonPath *p, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = json_doc_vfail(jd, p, false, NULL, fmt, ap);
        va_end(ap);
        return r;
}

/* "FILE: key.path: what was expected, got VALUE". */
int json_doc_fail_got(JsonDoc *jd, const JsonPath *p, json_object *v, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = json_doc_vfail(jd, p, true, v, fmt, ap);
        va_end(ap);
        return r;
}

int json_path_to_string(const JsonPath *p, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        size_t size;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        write_json_path(f, p);
        r = memstream_finish(&f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* A syntax error at a byte offset: "FILE:LINE:COLUMN: what", the column counted in characters. */
static int json_doc_fail_at(JsonDoc *jd, const char *text, size_t offset, const char *what) {
        unsigned line = 1, column = 1;
        char *m;

        for (size_t i = 0; i < offset; i++)
                if (text[i] == '\n') {
                        line++;
                        column = 1;
                } else if (!utf8_is_continuation(text[i]))
                        column++;
        if (asprintf(&m, "%s:%u:%u: %s", jd->file, line, column, what) < 0)
                return -ENOMEM;
        if (jd->error)
                free(m);
        else
                jd->error = m;
        return -EINVAL;
}

/* ---- JSON values ---- */

static bool json_is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int json_doc_parse(JsonDoc *jd, const char *text, size_t size, json_object **ret) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        enum json_tokener_error e;
        const char *nul;
        size_t end;

        if (size > INT32_MAX)
                return json_doc_fail_at(jd, text, 0, "document too large");
        nul = size > 0 ? memchr(text, 0, size) : NULL;
        if (nul)
                return json_doc_fail_at(jd, text, (size_t) (nul - text), "NUL character");

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        /* STRICT: no trailing commas, comments or unquoted names. Trailing characters are checked below,
         * to report them as such. json-c has no flag to refuse duplicate names in an object: it keeps the
         * last value silently, and the parsed object cannot tell. */
        json_tokener_set_flags(tok,
                               JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, size > 0 ? text : "", (int) size);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        if (e == json_tokener_continue) {
                /* Either cut short, or a bare number the tokener cannot know has ended: the terminating
                 * NUL tells. */
                o = json_tokener_parse_ex(tok, "", 1);
                e = json_tokener_get_error(tok);
                end = size;
        }
        if (e != json_tokener_success)
                return json_doc_fail_at(jd, text, MIN(end, size), json_tokener_error_desc(e));
        for (size_t i = end; i < size; i++)
                if (!json_is_space(text[i]))
                        return json_doc_fail_at(jd, text, i, "trailing characters after the JSON document");

        *ret = TAKE_PTR(o); /* NULL for the document "null" */
        return 0;
}

/* Whether the object has the key: *ret is then its value (NULL for null). */
bool json_doc_get(json_object *o, const char *key, json_object **ret) {
        return json_object_object_get_ex(o, key, ret);
}

int json_doc_missing(JsonDoc *jd, const JsonPath *p) {
        return json_doc_fail(jd, p, "missing required key");
}

const char *json_doc_string(json_object *v) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return NULL;
        s = json_object_get_string(v);
        return strlen(s) == (size_t) json_object_get_string_len(v) ? s : NULL;
}

int json_doc_get_string(JsonDoc *jd, const JsonPath *p, json_object *v, const char **ret) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return json_doc_fail_got(jd, p, v, "expected a string");
        s = json_doc_string(v);
        if (!s)
                return json_doc_fail_got(jd, p, v, "expected a string without NUL characters");
        *ret = s;
        return 0;
}

int json_doc_get_bool(JsonDoc *jd, const JsonPath *p, json_object *v, bool *ret) {
        if (!json_object_is_type(v, json_type_boolean))
                return json_doc_fail_got(jd, p, v, "expected a boolean");
        *ret = json_object_get_boolean(v);
        return 0;
}

/* A JSON integer >= 0. json-c saturates integers beyond 64 bits to UINT64_MAX instead of failing, so
 * that value is refused too. */
bool json_doc_to_uint(json_object *v, uint64_t *ret) {
        uint64_t u;

        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return false;
        u = json_object_get_uint64(v);
        if (u == UINT64_MAX)
                return false;
        *ret = u;
        return true;
}

/* One of 'choices' (NULL-terminated); 'expected' describes them. */
int json_doc_get_choice(JsonDoc *jd, const JsonPath *p, json_object *v, const char *const *choices,
                        const char *expected, unsigned *ret) {
        const char *s = json_doc_string(v);

        for (unsigned i = 0; s && choices[i]; i++)
                if (streq(s, choices[i])) {
                        *ret = i;
                        return 0;
                }
        return json_doc_fail_got(jd, p, v, "expected %s", expected);
}

int json_doc_get_array(JsonDoc *jd, const JsonPath *p, json_object *v, size_t *ret_n) {
        if (!json_object_is_type(v, json_type_array))
                return json_doc_fail_got(jd, p, v, "expected an array");
        *ret_n = json_object_array_length(v);
        return 0;
}

/* An array of strings, copied. */
int json_doc_get_string_array(JsonDoc *jd, const JsonPath *p, json_object *v, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        int r;

        r = json_doc_get_array(jd, p, v, &n);
        if (r < 0)
                return r;
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *s;

                r = json_doc_get_string(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i), &s);
                if (r < 0)
                        return r;
                l[i] = strdup(s);
                if (!l[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* Every item of the lists at most once in all of them: the second one found is the error. */
int json_doc_check_unique(JsonDoc *jd, const JsonNamedList *lists, size_t n) {
        for (size_t a = 0; a < n; a++)
                for (size_t i = 0; lists[a].items && lists[a].items[i]; i++)
                        for (size_t b = 0; b <= a; b++)
                                for (size_t j = 0; lists[b].items && lists[b].items[j] && (b < a || j < i); j++) {
                                        _cleanup_free_ char *other = NULL;
                                        int r;

                                        if (!streq(lists[a].items[i], lists[b].items[j]))
                                                continue;
                                        r = json_path_to_string(JSON_INDEX(lists[b].path, j), &other);
                                        if (r < 0)
                                                return r;
                                        return json_doc_fail(jd, JSON_INDEX(lists[a].path, i), "'%s' is also in %s",
                                                             lists[a].items[i], other);
                                }
        return 0;
}

/* ---- sizes, durations, percentages ---- */

int json_doc_get_size(JsonDoc *jd, const JsonPath *p, json_object *v, uint64_t *ret) {
        const char *s = json_doc_string(v);

        if (s ? parse_size(s, ret) >= 0 : json_doc_to_uint(v, ret))
                return 0;
        return json_doc_fail_got(jd, p, v, "expected a size like \"2G\"");
}

/* parse_duration() plus the suffixes "us" and "d" of the format. */
static int duration_from_string(const char *s, usec_t *ret) {
        static const struct {
                const char *suffix;
                usec_t factor;
        } extra[] = {
                { "us", 1 },
                { "d", 24 * 3600 * USEC_PER_SEC },
        };
        size_t n = strspn(s, "0123456789");

        for (size_t i = 0; i < ELEMENTSOF(extra); i++)
                if (n > 0 && streq(s + n, extra[i].suffix)) {
                        _cleanup_free_ char *digits = strndup(s, n);
                        uint64_t v;
                        int r;

                        if (!digits)
                                return -ENOMEM;
                        r = parse_size(digits, &v); /* digits only: a plain number */
                        if (r < 0)
                                return r;
                        if (v > UINT64_MAX / extra[i].factor)
                                return -ERANGE;
                        *ret = v * extra[i].factor;
                        return 0;
                }
        return parse_duration(s, ret);
}

int json_doc_get_duration(JsonDoc *jd, const JsonPath *p, json_object *v, usec_t *ret) {
        const char *s = json_doc_string(v);
        uint64_t u;

        if (s) {
                int r = duration_from_string(s, ret);

                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        return 0;
        } else if (json_doc_to_uint(v, &u) && u <= UINT64_MAX / USEC_PER_SEC) {
                *ret = u * USEC_PER_SEC;
                return 0;
        }
        return json_doc_fail_got(jd, p, v, "expected a duration like \"1h\"");
}

int json_doc_get_cpu_percent(JsonDoc *jd, const JsonPath *p, json_object *v, unsigned max, unsigned *ret) {
        const char *s = json_doc_string(v);

        if (s) {
                size_t n = strspn(s, "0123456789");

                if (n > 0 && n <= 9 && streq(s + n, "%")) {
                        unsigned long u = strtoul(s, NULL, 10);

                        if (u <= max) {
                                *ret = (unsigned) u;
                                return 0;
                        }
                }
        }
        return json_doc_fail_got(jd, p, v, "expected a CPU share like \"200%%\"");
}

/* ---- objects decoded by a table ---- */

int json_doc_check_fields(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *table) {
        if (!json_object_is_type(o, json_type_object))
                return json_doc_fail_got(jd, p, o, "expected an object");
        json_object_object_foreach(o, k, v) {
                const JsonDocField *f = table;

                while (f->name && !streq(f->name, k))
                        f++;
                if (!f->name)
                        return json_doc_fail(jd, JSON_KEY(p, k), "unknown key");
        }
        return 0;
}

int json_doc_dispatch_field(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *f, void *base) {
        const JsonPath *kp = JSON_KEY(p, f->name);
        void *field = (uint8_t *) base + f->offset;
        json_object *v;

        if (json_doc_get(o, f->name, &v))
                return f->fn(jd, kp, v, field, f->arg);
        if (f->flags & JSON_DOC_MANDATORY)
                return json_doc_missing(jd, kp);
        if (f->missing)
                return f->missing(jd, kp, NULL, base, f->arg);
        return 0;
}

int json_doc_dispatch(JsonDoc *jd, const JsonPath *p, json_object *o, const JsonDocField *table, void *base) {
        int r;

        r = json_doc_check_fields(jd, p, o, table);
        if (r < 0)
                return r;
        for (const JsonDocField *f = table; f->name; f++) {
                r = json_doc_dispatch_field(jd, p, o, f, base);
                if (r < 0)
                        return r;
        }
        return 0;
}

int json_doc_dispatch_string(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        char **s = field;
        const char *t;
        int r;

        r = json_doc_get_string(jd, p, v, &t);
        if (r < 0)
                return r;
        free(*s);
        *s = strdup(t);
        return *s ? 0 : -ENOMEM;
}

int json_doc_dispatch_bool(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return json_doc_get_bool(jd, p, v, field);
}

/* The number has been stored in *field already. */
static int check_min(JsonDoc *jd, const JsonPath *p, json_object *v, const uint64_t *field, const JsonDocMin *min) {
        if (min && *field < min->value)
                return json_doc_fail_got(jd, p, v, "expected at least %s", min->text);
        return 0;
}

int json_doc_dispatch_size(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        int r;

        r = json_doc_get_size(jd, p, v, field);
        return r < 0 ? r : check_min(jd, p, v, field, arg);
}

int json_doc_dispatch_duration(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        int r;

        r = json_doc_get_duration(jd, p, v, field);
        return r < 0 ? r : check_min(jd, p, v, field, arg);
}

int json_doc_dispatch_uint64(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        if (!json_doc_to_uint(v, field))
                return json_doc_fail_got(jd, p, v, "expected an integer >= 0");
        return check_min(jd, p, v, field, arg);
}

int json_doc_dispatch_cpu_percent(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return json_doc_get_cpu_percent(jd, p, v, *(const unsigned *) arg, field);
}

int json_doc_dispatch_choice(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        const JsonDocChoice *c = arg;
        unsigned u;
        int r;

        r = json_doc_get_choice(jd, p, v, c->choices, c->expected, &u);
        if (r < 0)
                return r;
        *(int *) field = (int) u;
        return 0;
}

int json_doc_dispatch_object(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        return json_doc_dispatch(jd, p, v, arg, field);
}

int json_add_take(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_append_take(json_object *a, json_object *v) {
        if (!v || json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}
