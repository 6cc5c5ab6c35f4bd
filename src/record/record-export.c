/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The export section of a run record (record-export.h). The reviewer's report and the record share the
 * item format: {"path", "entry"?, "id"?, "type"?, "reason"?, "notes"?, "size"?, "sha256"?, "mode"?}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-policy.h"
#include "record-export.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define TEXT_MAX 4096
#define NOTES_MAX 16

static void item_done(ExportItem *i) {
        free(i->path);
        free(i->entry);
        free(i->id);
        free(i->type);
        free(i->reason);
        strv_free(i->notes);
        *i = (ExportItem) {};
}

static void items_free(ExportItem *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                item_done(&l[i]);
        free(l);
}

RunExport *run_export_free(RunExport *e) {
        if (!e)
                return NULL;
        free(e->destination);
        free(e->error);
        items_free(e->exported, e->n_exported);
        items_free(e->held, e->n_held);
        items_free(e->refused, e->n_refused);
        free(e);
        return NULL;
}

int run_record_export_init(RunRecord *r, const char *destination) {
        RunExport *e = calloc(1, sizeof(RunExport));

        if (!e)
                return -ENOMEM;
        if (destination && !(e->destination = strdup(destination))) {
                free(e);
                return -ENOMEM;
        }
        run_export_free(r->export);
        r->export = e;
        return 0;
}

/* The length of the UTF-8 sequence at s (1 to 4), or 0 if there is none. */
static size_t utf8_len(const unsigned char *s) {
        size_t n;
        uint32_t c;

        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xe0) == 0xc0)
                n = 2, c = s[0] & 0x1f;
        else if ((s[0] & 0xf0) == 0xe0)
                n = 3, c = s[0] & 0x0f;
        else if ((s[0] & 0xf8) == 0xf0)
                n = 4, c = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        /* overlong, surrogates, beyond Unicode */
        if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
            c > 0x10ffff)
                return 0;
        return n;
}

/* A printable copy: control characters and bytes that are not UTF-8 become '?', cut at TEXT_MAX bytes. */
static char *text_printable(const char *s) {
        size_t n = strlen(s), o = 0;
        char *t = malloc(MIN(n, (size_t) TEXT_MAX) + 1);

        if (!t)
                return NULL;
        for (const unsigned char *c = (const unsigned char *) s; *c && o < TEXT_MAX;) {
                size_t k = utf8_len(c);

                if (k == 0 || (k == 1 && (*c < 0x20 || *c == 0x7f))) {
                        t[o++] = '?';
                        c++;
                        continue;
                }
                if (o + k > TEXT_MAX)
                        break;
                memcpy(t + o, c, k);
                o += k;
                c += k;
        }
        t[o] = 0;
        return t;
}

static int get_text(json_object *o, const char *key, bool required, char **ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !v) {
                *ret = NULL;
                return required ? -EBADMSG : 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        *ret = text_printable(json_object_get_string(v));
        return *ret ? 0 : -ENOMEM;
}

static int item_from_json(json_object *o, size_t notes_max, ExportItem *i) {
        json_object *v;
        int k;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        if ((k = get_text(o, "path", true, &i->path)) < 0 || (k = get_text(o, "entry", false, &i->entry)) < 0 ||
            (k = get_text(o, "id", false, &i->id)) < 0 || (k = get_text(o, "type", false, &i->type)) < 0 ||
            (k = get_text(o, "reason", false, &i->reason)) < 0)
                return k;
        if (i->id && !export_item_id_is_valid(i->id))
                return -EBADMSG;
        if (json_object_object_get_ex(o, "size", &v) && v) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                        return -EBADMSG;
                i->size = json_object_get_uint64(v);
        }
        if (json_object_object_get_ex(o, "sha256", &v) && v) {
                const char *h = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

                if (!h || strlen(h) != 64 || !lower_hex_is_valid(h, 64))
                        return -EBADMSG;
                memcpy(i->sha256, h, 65);
        }
        if (json_object_object_get_ex(o, "mode", &v) && v) {
                const char *m = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                char *end;
                unsigned long u;

                if (!m || strlen(m) != 4 || strspn(m, "01234567") != 4)
                        return -EBADMSG;
                u = strtoul(m, &end, 8);
                i->mode = (unsigned) u;
        }
        if (json_object_object_get_ex(o, "notes", &v) && v) {
                size_t n;

                if (!json_object_is_type(v, json_type_array) || (n = json_object_array_length(v)) > notes_max)
                        return -EBADMSG;
                i->notes = calloc(n + 1, sizeof(char *));
                if (!i->notes)
                        return -ENOMEM;
                for (size_t j = 0; j < n; j++) {
                        json_object *s = json_object_array_get_idx(v, j);

                        if (!json_object_is_type(s, json_type_string))
                                return -EBADMSG;
                        if (!(i->notes[j] = text_printable(json_object_get_string(s))))
                                return -ENOMEM;
                }
        }
        return 0;
}

static int items_from_json(json_object *o, const char *key, bool held, size_t notes_max, ExportItem **ret,
                           size_t *ret_n, char **ret_error) {
        json_object *a;
        ExportItem *l;
        size_t n;
        int k;

        if (!json_object_object_get_ex(o, key, &a) || !a) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (!json_object_is_type(a, json_type_array))
                return error_setf(ret_error, -EBADMSG, "export.%s: expected an array", key);
        n = MIN(json_object_array_length(a), (size_t) RECORD_EXPORT_ITEMS_MAX);
        l = calloc(MAX(n, 1u), sizeof(ExportItem));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                k = item_from_json(json_object_array_get_idx(a, i), notes_max, &l[i]);
                if (k == 0 && held && !l[i].id)
                        k = -EBADMSG;
                if (k < 0) {
                        items_free(l, i + 1);
                        return k == -ENOMEM ? k : error_setf(ret_error, k, "export.%s[%zu]: not a valid item", key, i);
                }
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

/* The lists (and source_missing, error) of o, the report or the record's section, into e. */
static int read_lists(json_object *o, bool record, RunExport *e, char **ret_error) {
        /* approval adds a note ("approved") to an item a report gave: an exported item of a record may have
         * one more than a report's, or the record would not read back */
        size_t exported_notes_max = record ? NOTES_MAX + 1 : NOTES_MAX;
        json_object *v;
        int k;

        if (!json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "export: expected an object");
        if ((k = items_from_json(o, "exported", false, exported_notes_max, &e->exported, &e->n_exported,
                                 ret_error)) < 0 ||
            (k = items_from_json(o, "held", true, NOTES_MAX, &e->held, &e->n_held, ret_error)) < 0 ||
            (k = items_from_json(o, "refused", false, NOTES_MAX, &e->refused, &e->n_refused, ret_error)) < 0)
                return k;
        e->exported_bytes = 0;
        for (size_t i = 0; i < e->n_exported; i++)
                e->exported_bytes += e->exported[i].size;
        e->source_missing = json_object_object_get_ex(o, "source_missing", &v) && json_object_get_boolean(v);
        free(e->error);
        e->error = NULL;
        if (json_object_object_get_ex(o, "error", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return error_setf(ret_error, -EBADMSG, "export.error: expected a string");
                if (!(e->error = text_printable(json_object_get_string(v))))
                        return -ENOMEM;
        }
        return 0;
}

int run_export_from_report(const char *json, RunExport **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(run_export_freep) RunExport *e = calloc(1, sizeof(RunExport));
        int k;

        if (!e)
                return -ENOMEM;
        o = json_tokener_parse(json);
        if (!o)
                return error_setf(ret_error, -EBADMSG, "the reviewer's report is not JSON");
        k = read_lists(o, false, e, ret_error);
        if (k < 0)
                return k;
        e->reviewed = !e->error;
        *ret = TAKE_PTR(e);
        return 0;
}

int run_record_export_read_report(RunRecord *r, const char *json, char **ret_error) {
        RunExport *e = NULL;
        int k;

        if (!r->export)
                return -EINVAL;
        k = run_export_from_report(json, &e, ret_error);
        if (k < 0)
                return k;
        e->destination = TAKE_PTR(r->export->destination);
        run_export_free(r->export);
        r->export = e;
        return 0;
}

static int item_copy(const ExportItem *from, ExportItem *to) {
        *to = (ExportItem) { .size = from->size, .mode = from->mode };
        memcpy(to->sha256, from->sha256, sizeof(to->sha256));
        if (!(to->path = strdup(from->path)) || (from->entry && !(to->entry = strdup(from->entry))) ||
            (from->id && !(to->id = strdup(from->id))) || (from->type && !(to->type = strdup(from->type))) ||
            (from->reason && !(to->reason = strdup(from->reason))) || (from->notes && !(to->notes = strv_copy(from->notes)))) {
                item_done(to);
                return -ENOMEM;
        }
        return 0;
}

/* Copies of the n items of from, at the end of *list (grown first; on failure *list keeps its items). */
static int items_append(ExportItem **list, size_t *n, const ExportItem *from, size_t n_from) {
        ExportItem *l;
        size_t k;

        if (n_from == 0)
                return 0;
        if (*n + n_from > RECORD_EXPORT_ITEMS_MAX)
                n_from = *n >= RECORD_EXPORT_ITEMS_MAX ? 0 : RECORD_EXPORT_ITEMS_MAX - *n;
        l = realloc(*list, MAX(*n + n_from, (size_t) 1) * sizeof(ExportItem));
        if (!l)
                return -ENOMEM;
        *list = l;
        for (k = 0; k < n_from; k++)
                if (item_copy(&from[k], &l[*n + k]) < 0) {
                        for (size_t i = *n; i < *n + k; i++)
                                item_done(&l[i]);
                        return -ENOMEM;
                }
        *n += n_from;
        return 0;
}

int run_export_append(RunExport *e, const RunExport *report) {
        size_t ne = e->n_exported, nh = e->n_held;
        char *dest = NULL, *error = NULL;
        int k;

        if ((report->destination && !(dest = strdup(report->destination))) ||
            (!e->error && report->error && !(error = strdup(report->error)))) {
                free(dest);
                return -ENOMEM;
        }
        if ((k = items_append(&e->exported, &e->n_exported, report->exported, report->n_exported)) < 0 ||
            (k = items_append(&e->held, &e->n_held, report->held, report->n_held)) < 0 ||
            (k = items_append(&e->refused, &e->n_refused, report->refused, report->n_refused)) < 0) {
                /* nothing of it: the section as it was */
                for (size_t i = ne; i < e->n_exported; i++)
                        item_done(&e->exported[i]);
                for (size_t i = nh; i < e->n_held; i++)
                        item_done(&e->held[i]);
                e->n_exported = ne;
                e->n_held = nh;
                free(dest);
                free(error);
                return k;
        }
        for (size_t i = ne; i < e->n_exported; i++)
                e->exported_bytes += e->exported[i].size;
        if (dest) {
                free(e->destination);
                e->destination = dest;
        }
        if (error)
                e->error = error;
        /* one review that did not finish makes the section uncertain */
        e->reviewed = e->reviewed && report->reviewed;
        return 0;
}

uint64_t run_export_next_held_id(const RunExport *e) {
        uint64_t n = 0, max = 0;

        if (!e)
                return 1;
        /* every id given is held still, or left held by approval (note "approved") or rejection (reason
         * "rejected"), which drop it */
        for (size_t i = 0; i < e->n_held; i++) {
                uint64_t v = strtoull(e->held[i].id + 1, NULL, 10);

                max = MAX(max, v);
                n++;
        }
        for (size_t i = 0; i < e->n_exported; i++)
                if (strv_contains(e->exported[i].notes, "approved"))
                        n++;
        for (size_t i = 0; i < e->n_refused; i++)
                if (streq_ptr(e->refused[i].reason, "rejected"))
                        n++;
        return MAX(n, max) + 1;
}

ExportItem *run_export_find_held(RunExport *e, const char *id) {
        for (size_t i = 0; e && id && i < e->n_held; i++)
                if (streq(e->held[i].id, id))
                        return &e->held[i];
        return NULL;
}

/* Takes held item h out of the held list and appends it to list (grown first: nothing fails after). */
static int item_move(RunExport *e, ExportItem *h, ExportItem **list, size_t *n) {
        ExportItem *l = realloc(*list, (*n + 1) * sizeof(ExportItem));
        size_t at = (size_t) (h - e->held);

        if (!l)
                return -ENOMEM;
        *list = l;
        l[(*n)++] = *h;
        memmove(&e->held[at], &e->held[at + 1], (e->n_held - at - 1) * sizeof(ExportItem));
        e->n_held--;
        return 0;
}

int run_export_approve(RunExport *e, const char *id) {
        ExportItem *h = run_export_find_held(e, id);
        char *note;
        int k;

        if (!h)
                return -ENOENT;
        if (!(note = strdup("approved")))
                return -ENOMEM;
        k = strv_push_take(&h->notes, note);
        if (k < 0) {
                free(note);
                return k;
        }
        k = item_move(e, h, &e->exported, &e->n_exported);
        if (k < 0)
                return k;
        h = &e->exported[e->n_exported - 1];
        h->reason = mfree(h->reason);
        h->id = mfree(h->id);
        e->exported_bytes += h->size;
        return 0;
}

int run_export_reject(RunExport *e, const char *id) {
        ExportItem *h = run_export_find_held(e, id);
        char *reason;
        int k;

        if (!h)
                return -ENOENT;
        if (!(reason = strdup("rejected")))
                return -ENOMEM;
        free(h->reason);
        h->reason = reason;
        k = item_move(e, h, &e->refused, &e->n_refused);
        if (k < 0)
                return k;
        h = &e->refused[e->n_refused - 1];
        h->id = mfree(h->id);
        return 0;
}

#define ADD(o, k, v)                                                       \
        do {                                                               \
                json_object *_v = (v);                                     \
                if (!_v || json_object_object_add((o), (k), _v) < 0) {     \
                        json_object_put(_v);                               \
                        return -ENOMEM;                                    \
                }                                                          \
        } while (0)

static int item_to_json(const ExportItem *i, json_object *a) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char mode[8];
        bool delivered;

        if (!o)
                return -ENOMEM;
        ADD(o, "path", json_object_new_string(i->path));
        if (i->entry)
                ADD(o, "entry", json_object_new_string(i->entry));
        if (i->id)
                ADD(o, "id", json_object_new_string(i->id));
        if (i->type)
                ADD(o, "type", json_object_new_string(i->type));
        /* what was delivered or is held always shows its size and mode; any other item shows those it has
         * (every field that is not its default is written: a record reads back to the same record) */
        delivered = !i->entry && (i->sha256[0] || !i->reason || i->id);
        if (delivered || i->size > 0)
                ADD(o, "size", json_object_new_uint64(i->size));
        if (i->sha256[0])
                ADD(o, "sha256", json_object_new_string(i->sha256));
        if (delivered || (i->mode & 07777) != 0) {
                snprintf(mode, sizeof(mode), "%04o", i->mode & 07777);
                ADD(o, "mode", json_object_new_string(mode));
        }
        if (i->reason)
                ADD(o, "reason", json_object_new_string(i->reason));
        if (i->notes) {
                json_object *n = json_object_new_array();

                ADD(o, "notes", n);
                STRV_FOREACH(s, i->notes)
                        if (json_object_array_add(n, json_object_new_string(*s)) < 0)
                                return -ENOMEM;
        }
        if (json_object_array_add(a, o) < 0)
                return -ENOMEM;
        o = NULL;
        return 0;
}

static int items_to_json(const ExportItem *l, size_t n, json_object *o, const char *key) {
        json_object *a = json_object_new_array();
        int k;

        ADD(o, key, a);
        for (size_t i = 0; i < n; i++)
                if ((k = item_to_json(&l[i], a)) < 0)
                        return k;
        return 0;
}

int run_export_to_json(const RunExport *e, json_object *o) {
        json_object *t;
        int k;

        if (e->destination)
                ADD(o, "destination", json_object_new_string(e->destination));
        else if (json_object_object_add(o, "destination", NULL) < 0) /* null (json_object_new_null() is NULL) */
                return -ENOMEM;
        ADD(o, "reviewed", json_object_new_boolean(e->reviewed));
        ADD(o, "source_missing", json_object_new_boolean(e->source_missing));
        if (e->error)
                ADD(o, "error", json_object_new_string(e->error));
        if ((k = items_to_json(e->exported, e->n_exported, o, "exported")) < 0 ||
            (k = items_to_json(e->held, e->n_held, o, "held")) < 0 ||
            (k = items_to_json(e->refused, e->n_refused, o, "refused")) < 0)
                return k;
        t = json_object_new_object();
        ADD(o, "totals", t);
        ADD(t, "exported_files", json_object_new_uint64(e->n_exported));
        ADD(t, "exported_bytes", json_object_new_uint64(e->exported_bytes));
        ADD(t, "held", json_object_new_uint64(e->n_held));
        ADD(t, "refused", json_object_new_uint64(e->n_refused));
        return 0;
}

int run_export_from_json(json_object *o, RunExport **ret, char **ret_error) {
        _cleanup_(run_export_freep) RunExport *e = calloc(1, sizeof(RunExport));
        json_object *v;
        int k;

        if (!e)
                return -ENOMEM;
        k = read_lists(o, true, e, ret_error);
        if (k < 0)
                return k;
        if (!json_object_object_get_ex(o, "reviewed", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "export.reviewed: expected a boolean");
        e->reviewed = json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "destination", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return error_setf(ret_error, -EBADMSG, "export.destination: expected a string");
                /* not the reviewer's text but the caller's directory as sbxd resolved it, which approval
                 * delivers into: kept byte for byte, as it was written */
                if (!(e->destination = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(e);
        return 0;
}
