/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json_doc_dispatch(): a table of keys in, a filled struct or the first error as one line out. Documents
 * are written with single quotes for readability and turned into JSON by json() before parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "json-doc.h"
#include "unit-test.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

typedef struct Inner {
        uint64_t size;
        bool flag;
} Inner;

typedef struct Thing {
        char *name;
        bool on;
        uint64_t size;
        usec_t time;
        uint64_t count;
        unsigned cpu;
        int color;
        Inner inner;
        bool extra;
} Thing;

static const unsigned cpu_max = 400;

static const JsonDocField inner_fields[] = {
        { "size", json_doc_dispatch_size, offsetof(Inner, size), JSON_DOC_MANDATORY },
        { "flag", json_doc_dispatch_bool, offsetof(Inner, flag) },
        {}
};

/* "extra" is required when "on" is true. */
static int extra_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *base, const void *arg) {
        const Thing *t = base;

        assert_null(v);
        return t->on ? json_doc_fail(jd, p, "missing required key (\"on\" needs it)") : 0;
}

static const JsonDocField thing_fields[] = {
        { "name", json_doc_dispatch_string, offsetof(Thing, name), JSON_DOC_MANDATORY },
        { "on", json_doc_dispatch_bool, offsetof(Thing, on) },
        { "size", json_doc_dispatch_size, offsetof(Thing, size), 0, &(const JsonDocMin) { 1024, "1K" } },
        { "time", json_doc_dispatch_duration, offsetof(Thing, time) },
        { "count", json_doc_dispatch_uint64, offsetof(Thing, count) },
        { "cpu", json_doc_dispatch_cpu_percent, offsetof(Thing, cpu), 0, &cpu_max },
        { "color", json_doc_dispatch_choice, offsetof(Thing, color), 0,
          &(const JsonDocChoice) { STRV("red", "green"), "red or green" } },
        { "inner", json_doc_dispatch_object, offsetof(Thing, inner), 0, inner_fields },
        { "extra", json_doc_dispatch_bool, offsetof(Thing, extra), 0, NULL, extra_missing },
        {}
};

static json_object *parse(const char *doc) {
        _cleanup_free_ char *t = strdup(doc);
        JsonDoc jd = { .file = "t.json" };
        json_object *o = NULL;

        assert_non_null(t);
        for (char *c = t; *c; c++)
                if (*c == '\'')
                        *c = '"';
        assert_int_equal(json_doc_parse(&jd, t, strlen(t), &o), 0);
        assert_null(jd.error);
        return o;
}

/* r and the message of decoding doc with the table, into *t. */
static int dispatch(const char *doc, const JsonDocField *table, void *base, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = parse(doc);
        JsonDoc jd = { .file = "t.json" };
        int r;

        r = json_doc_dispatch(&jd, NULL, o, table, base);
        *ret_error = jd.error;
        return r;
}

static void test_dispatch(void **state) {
        Thing t = { .color = -1 };
        char *error = NULL;

        assert_int_equal(dispatch("{'color': 'green', 'inner': {'flag': true, 'size': '2K'}, 'name': 'n', 'on': true, "
                                  "'size': '1M', 'time': '90s', 'count': 7, 'cpu': '150%', 'extra': false}",
                                  thing_fields, &t, &error),
                         0);
        assert_null(error);
        assert_string_equal(t.name, "n");
        assert_true(t.on);
        assert_int_equal(t.size, 1024 * 1024);
        assert_int_equal(t.time, 90 * USEC_PER_SEC);
        assert_int_equal(t.count, 7);
        assert_int_equal(t.cpu, 150);
        assert_int_equal(t.color, 1);
        assert_int_equal(t.inner.size, 2048);
        assert_true(t.inner.flag);
        assert_false(t.extra);
        free(t.name);

        /* Absent keys leave their fields alone; a string replaces the one there. */
        t = (Thing) { .name = strdup("old"), .size = 5, .color = -1 };
        assert_non_null(t.name);
        assert_int_equal(dispatch("{'name': 'new'}", thing_fields, &t, &error), 0);
        assert_null(error);
        assert_string_equal(t.name, "new");
        assert_int_equal(t.size, 5);
        assert_int_equal(t.color, -1);
        free(t.name);
}

typedef struct ErrorCase {
        const char *doc;
        const char *error;
} ErrorCase;

static void test_errors(void **state) {
        static const ErrorCase table[] = {
                { "[]", "t.json: expected an object, got []" },
                { "{'name': 'n', 'bogus': 1}", "t.json: bogus: unknown key" },
                { "{'name': 'n', 'a b': 1}", "t.json: \"a b\": unknown key" },
                /* unknown keys before any value, in the document's order */
                { "{'on': 1, 'zz': 1, 'yy': 1}", "t.json: zz: unknown key" },
                { "{}", "t.json: name: missing required key" },
                { "{'name': 1}", "t.json: name: expected a string, got 1" },
                { "{'name': null}", "t.json: name: expected a string, got null" },
                { "{'name': 'n', 'on': 'yes'}", "t.json: on: expected a boolean, got \"yes\"" },
                { "{'name': 'n', 'size': 1000}", "t.json: size: expected at least 1K, got 1000" },
                { "{'name': 'n', 'size': 'big'}", "t.json: size: expected a size like \"2G\", got \"big\"" },
                { "{'name': 'n', 'time': true}", "t.json: time: expected a duration like \"1h\", got true" },
                { "{'name': 'n', 'count': -1}", "t.json: count: expected an integer >= 0, got -1" },
                { "{'name': 'n', 'cpu': '500%'}", "t.json: cpu: expected a CPU share like \"200%\", got \"500%\"" },
                { "{'name': 'n', 'color': 'blue'}", "t.json: color: expected red or green, got \"blue\"" },
                /* nested: the path names the key inside */
                { "{'name': 'n', 'inner': 3}", "t.json: inner: expected an object, got 3" },
                { "{'name': 'n', 'inner': {}}", "t.json: inner.size: missing required key" },
                { "{'name': 'n', 'inner': {'size': 1, 'x': 2}}", "t.json: inner.x: unknown key" },
                { "{'name': 'n', 'inner': {'size': 1, 'flag': 0}}", "t.json: inner.flag: expected a boolean, got 0" },
                /* the table's order, not the document's: the first error in it is the one reported */
                { "{'count': 'x', 'on': 1, 'name': 'n'}", "t.json: on: expected a boolean, got 1" },
                { "{'inner': {}, 'name': 2}", "t.json: name: expected a string, got 2" },
                { "{'inner': {}, 'color': 'x', 'name': 'n'}", "t.json: color: expected red or green, got \"x\"" },
                /* a key required by another one */
                { "{'name': 'n', 'on': true}", "t.json: extra: missing required key (\"on\" needs it)" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                Thing t = {};
                char *error = NULL;
                int r;

                r = dispatch(table[i].doc, thing_fields, &t, &error);
                check_row(failures, r == -EINVAL, "row %zu: r=%d", i, r);
                check_row(failures, error && streq(error, table[i].error),
                          "row %zu:\n    document: %s\n    expected: %s\n    got:      %s", i, table[i].doc,
                          table[i].error, strna(error));
                free(error);
                free(t.name);
        }
        assert_int_equal(failures, 0);
}

/* Records the order in which rows are called. */
typedef struct Trace {
        char calls[64];
} Trace;

static int trace(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        Trace *t = field;

        strcat(t->calls, v ? p->key : "-");
        strcat(t->calls, arg ? arg : "");
        return 0;
}

static int trace_missing(JsonDoc *jd, const JsonPath *p, json_object *v, void *base, const void *arg) {
        Trace *t = base;

        strcat(t->calls, "!");
        strcat(t->calls, p->key);
        return 0;
}

static void test_order(void **state) {
        static const JsonDocField fields[] = {
                { "a", trace },
                { "b", trace, 0, 0, "+" },
                { "c", trace, 0, 0, NULL, trace_missing },
                { "d", trace, 0, 0, NULL, trace_missing },
                { "e", trace },
                {}
        };
        Trace t = {};
        char *error = NULL;

        assert_int_equal(dispatch("{'d': 1, 'b': null, 'a': 1}", fields, &t, &error), 0);
        assert_null(error);
        /* every row in the table's order; "b" is null (v NULL); "c" is absent; "e" absent without missing() */
        assert_string_equal(t.calls, "a-+!cd");
}

static void test_check_fields(void **state) {
        _cleanup_(json_object_putp) json_object *o = parse("{'name': 'n', 'nope': 1}");
        JsonDoc jd = { .file = "t.json" };
        Thing t = {};

        assert_int_equal(json_doc_check_fields(&jd, JSON_KEY(NULL, "sec"), o, inner_fields), -EINVAL);
        assert_string_equal(jd.error, "t.json: sec.name: unknown key");
        jd.error = mfree(jd.error);
        assert_int_equal(json_doc_check_fields(&jd, NULL, o, thing_fields), -EINVAL);
        assert_string_equal(jd.error, "t.json: nope: unknown key");
        jd.error = mfree(jd.error);

        /* one row, without the check of the other keys */
        assert_int_equal(json_doc_dispatch_field(&jd, NULL, o, &thing_fields[0], &t), 0);
        assert_null(jd.error);
        assert_string_equal(t.name, "n");
        free(t.name);
        assert_int_equal(json_doc_dispatch_field(&jd, JSON_INDEX(JSON_KEY(NULL, "l"), 2), o, &inner_fields[0], &t),
                         -EINVAL);
        assert_string_equal(jd.error, "t.json: l[2].size: missing required key");
        /* The first error is kept. */
        assert_int_equal(json_doc_dispatch_field(&jd, NULL, o, &thing_fields[1], &t), 0);
        assert_int_equal(json_doc_missing(&jd, NULL), -EINVAL);
        assert_string_equal(jd.error, "t.json: l[2].size: missing required key");
        free(jd.error);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dispatch),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_order),
                cmocka_unit_test(test_check_fields),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
