/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>

#include "fileio.h"
#include "macro.h"
#include "report.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

int report_init(Report *r, const char *source) {
        *r = (Report) {
                .exported = json_object_new_array(),
                .held = json_object_new_array(),
                .refused = json_object_new_array(),
                .source = strdup(source),
        };
        if (!r->exported || !r->held || !r->refused || !r->source) {
                report_done(r);
                return -ENOMEM;
        }
        return 0;
}

void report_done(Report *r) {
        json_object_put(r->exported);
        json_object_put(r->held);
        json_object_put(r->refused);
        free(r->source);
        free(r->error);
        *r = (Report) {};
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int add_string(json_object *o, const char *key, const char *s) {
        return s ? add(o, key, json_object_new_string(s)) : 0;
}

static int append(json_object *array, json_object *o) {
        if (json_object_array_add(array, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

static json_object *item_new(const char *path, uint64_t size, const char *sha256, const char *type, mode_t mode) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char m[8];

        snprintf(m, sizeof(m), "%04o", (unsigned) (mode & 07777));
        if (!o || add_string(o, "path", path) < 0 || add(o, "size", json_object_new_uint64(size)) < 0 ||
            add_string(o, "sha256", sha256) < 0 || add_string(o, "type", type) < 0 || add_string(o, "mode", m) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static int add_notes(json_object *o, json_object *notes) {
        if (!notes || json_object_array_length(notes) == 0)
                return 0;
        return add(o, "notes", json_object_get(notes));
}

int report_add_exported(Report *r, const char *path, uint64_t size, const char *sha256, const char *type,
                        mode_t mode, json_object *notes) {
        json_object *o = item_new(path, size, sha256, type, mode);

        if (!o || add_notes(o, notes) < 0 || append(r->exported, o) < 0)
                return -ENOMEM;
        if (sha256)
                r->exported_files++;
        r->exported_bytes += size;
        return 0;
}

int report_add_held(Report *r, const char *id, const char *path, uint64_t size, const char *sha256,
                    const char *type, mode_t mode, const char *reason, json_object *notes) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || add_string(o, "id", id) < 0)
                return -ENOMEM;
        {
                _cleanup_(json_object_putp) json_object *item = item_new(path, size, sha256, type, mode);
                if (!item)
                        return -ENOMEM;
                json_object_object_foreach(item, k, v)
                        if (add(o, k, json_object_get(v)) < 0)
                                return -ENOMEM;
        }
        if (add_string(o, "reason", reason) < 0 || add_notes(o, notes) < 0 || append(r->held, TAKE_PTR(o)) < 0)
                return -ENOMEM;
        r->n_held++;
        return 0;
}

int report_add_refused(Report *r, const char *path, const char *entry, const char *reason) {
        _cleanup_(json_object_putp) json_object *o = NULL;

        r->n_refused++;
        if (r->n_refused > REPORT_REFUSED_LISTED_MAX)
                return 0;
        o = json_object_new_object();
        if (!o || add_string(o, "path", path) < 0 || add_string(o, "entry", entry) < 0 ||
            add_string(o, "reason", reason) < 0 || append(r->refused, TAKE_PTR(o)) < 0)
                return -ENOMEM;
        return 0;
}

int report_set_error(Report *r, const char *fmt, ...) {
        va_list ap;
        char *s;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        free(r->error);
        r->error = s;
        return 0;
}

int report_format(const Report *r, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *totals = json_object_new_object(),
                                                *refused = NULL;
        const char *s;

        if (!o || !totals)
                return -ENOMEM;
        refused = json_object_get(r->refused);
        if (r->n_refused > REPORT_REFUSED_LISTED_MAX) {
                /* a copy with the summary entry, so that the report stays as it was */
                json_object *copy = NULL, *more = json_object_new_object();
                char reason[64];

                snprintf(reason, sizeof(reason), "…and %llu more",
                         (unsigned long long) (r->n_refused - REPORT_REFUSED_LISTED_MAX));
                if (!more || json_object_deep_copy(r->refused, &copy, NULL) < 0 ||
                    add_string(more, "path", "…") < 0 || add_string(more, "reason", reason) < 0 ||
                    append(copy, more) < 0) {
                        json_object_put(more);
                        json_object_put(copy);
                        return -ENOMEM;
                }
                json_object_put(refused);
                refused = copy;
        }
        if (add(o, "version", json_object_new_int(1)) < 0 || add_string(o, "source", r->source) < 0 ||
            add(o, "source_missing", json_object_new_boolean(r->source_missing)) < 0 ||
            add(o, "exported", json_object_get(r->exported)) < 0 || add(o, "held", json_object_get(r->held)) < 0 ||
            add(o, "refused", TAKE_PTR(refused)) < 0 ||
            add(totals, "exported_files", json_object_new_uint64(r->exported_files)) < 0 ||
            add(totals, "exported_bytes", json_object_new_uint64(r->exported_bytes)) < 0 ||
            add(totals, "held", json_object_new_uint64(r->n_held)) < 0 ||
            add(totals, "refused", json_object_new_uint64(r->n_refused)) < 0 ||
            add(o, "totals", TAKE_PTR(totals)) < 0 || add_string(o, "error", r->error) < 0)
                return -ENOMEM;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s || asprintf(ret, "%s\n", s) < 0)
                return -ENOMEM;
        return 0;
}

int report_write(const char *path, const char *text) {
        _cleanup_free_ char *d = strdup(path), *b = strdup(path);
        _cleanup_close_ int dfd = -EBADF;

        if (!d || !b)
                return -ENOMEM;
        dfd = open(dirname(d), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        return write_file_atomic_at(dfd, basename(b), text, strlen(text), 0600);
}
