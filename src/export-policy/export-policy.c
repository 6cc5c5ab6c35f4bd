/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A profile's export policy (export-policy.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-policy.h"

static const char *const active_names[] = { "reject", "approve", "allow", NULL };
static const char *const archives_names[] = { "normalize", "reject", NULL };

DEFINE_NAME_TABLE_TO_STRING(export_active, ExportActive, active_names, _EXPORT_ACTIVE_MAX);
DEFINE_NAME_TABLE_TO_STRING(export_archives, ExportArchives, archives_names, _EXPORT_ARCHIVES_MAX);

void export_policy_init(ExportPolicy *e) {
        *e = (ExportPolicy) {
                .active = EXPORT_ACTIVE_REJECT,
                .archives = EXPORT_ARCHIVES_NORMALIZE,
                .max_files = EXPORT_MAX_FILES_DEFAULT,
                .max_bytes = EXPORT_MAX_BYTES_DEFAULT,
                .max_file_bytes = EXPORT_MAX_FILE_BYTES_DEFAULT,
        };
}

void export_policy_done(ExportPolicy *e) {
        e->allow_types = strv_free(e->allow_types);
        e->approve_types = strv_free(e->approve_types);
}

static bool type_part_is_valid(const char *s, size_t n, bool star) {
        if (n == 0 || n > 64)
                return false;
        if (star && n == 1 && s[0] == '*')
                return true;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || strchr(".+-_", s[i])))
                        return false;
        return true;
}

bool export_type_pattern_is_valid(const char *s) {
        const char *slash;

        if (!s || !(slash = strchr(s, '/')))
                return false;
        if (streq(s, "*/*"))
                return true;
        return type_part_is_valid(s, (size_t) (slash - s), false) && type_part_is_valid(slash + 1, strlen(slash + 1), true);
}

bool export_type_matches(const char *pattern, const char *type) {
        const char *ps, *ts;

        if (!pattern || !type)
                return false;
        if (streq(pattern, "*/*"))
                return true;
        ps = strchr(pattern, '/');
        ts = strchr(type, '/');
        if (!ps || !ts || ps - pattern != ts - type || strncmp(pattern, type, (size_t) (ps - pattern)) != 0)
                return false;
        return streq(ps + 1, "*") || streq(ps + 1, ts + 1);
}

bool export_item_id_is_valid(const char *s) {
        size_t n;

        if (!s || s[0] != 'h')
                return false;
        n = strlen(s + 1);
        if (n < 1 || n > 6 || s[1] == '0')
                return false;
        return strspn(s + 1, "0123456789") == n;
}

bool export_source_path_is_valid(const char *s) {
        size_t n;

        if (!s || (n = strlen(s)) == 0 || n > 1024 || s[0] == '/')
                return false;
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return false;
        for (const char *c = s;;) {
                size_t k = strcspn(c, "/");

                if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!c[k])
                        return true;
                c += k + 1;
        }
}

/* char **: export.allow_types, export.approve_types */
static int dispatch_types(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_strv_free_ char **l = NULL;
        char ***dst = field;
        int r;

        r = json_doc_get_string_array(jd, p, v, &l);
        if (r < 0)
                return r;
        if (strv_length(l) > EXPORT_TYPES_MAX)
                return json_doc_fail(jd, p, "expected at most %u types, got %zu", EXPORT_TYPES_MAX, strv_length(l));
        for (size_t i = 0; l[i]; i++)
                if (!export_type_pattern_is_valid(l[i]))
                        return json_doc_fail_got(jd, JSON_INDEX(p, i), json_object_array_get_idx(v, i),
                                                 "expected a MIME type pattern (type/subtype, type/* or */*)");
        r = json_doc_check_unique(jd, &(const JsonNamedList) { p, l }, 1);
        if (r < 0)
                return r;
        strv_free(*dst);
        *dst = TAKE_PTR(l);
        return 0;
}

static const JsonDocChoice active_choice = { active_names, "one of reject, approve, allow" };
static const JsonDocChoice archives_choice = { archives_names, "one of normalize, reject" };
static const JsonDocMin one_file = { 1, "1" };
static const JsonDocMin one_byte = { 1, "1" };

static int dispatch_max_files(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        uint64_t *n = field;
        int r;

        r = json_doc_dispatch_uint64(jd, p, v, n, &one_file);
        if (r >= 0 && *n > EXPORT_MAX_FILES_MAX)
                return json_doc_fail_got(jd, p, v, "expected at most %u", EXPORT_MAX_FILES_MAX);
        return r;
}

static const JsonDocField export_fields[] = {
        { "allow_types", dispatch_types, offsetof(ExportPolicy, allow_types) },
        { "approve_types", dispatch_types, offsetof(ExportPolicy, approve_types) },
        { "active_content", json_doc_dispatch_choice, offsetof(ExportPolicy, active), 0, &active_choice },
        { "archives", json_doc_dispatch_choice, offsetof(ExportPolicy, archives), 0, &archives_choice },
        { "keep_exec", json_doc_dispatch_bool, offsetof(ExportPolicy, keep_exec) },
        { "max_files", dispatch_max_files, offsetof(ExportPolicy, max_files) },
        { "max_bytes", json_doc_dispatch_size, offsetof(ExportPolicy, max_bytes), 0, &one_byte },
        { "max_file_bytes", json_doc_dispatch_size, offsetof(ExportPolicy, max_file_bytes), 0, &one_byte },
        {}
};

int export_policy_dispatch(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        ExportPolicy *e = field;
        int r;

        r = json_doc_dispatch(jd, p, v, export_fields, e);
        if (r < 0)
                return r;
        if (e->max_file_bytes > e->max_bytes)
                return json_doc_fail(jd, JSON_KEY(p, "max_file_bytes"), "expected at most max_bytes (%" PRIu64 ")",
                                     e->max_bytes);
        STRV_FOREACH(t, e->approve_types)
                if (strv_contains(e->allow_types, *t))
                        return json_doc_fail(jd, JSON_KEY(p, "approve_types"), "'%s' is also in allow_types", *t);
        e->enabled = true;
        return 0;
}

int export_policy_append_argv(const ExportPolicy *e, char ***argv) {
        int r;

        r = strv_push_printf(argv, "--max-files=%" PRIu64, e->max_files);
        r = r ?: strv_push_printf(argv, "--max-bytes=%" PRIu64, e->max_bytes);
        r = r ?: strv_push_printf(argv, "--max-file-bytes=%" PRIu64, e->max_file_bytes);
        r = r ?: strv_push_printf(argv, "--active=%s", export_active_to_string(e->active));
        r = r ?: strv_push_printf(argv, "--archives=%s", export_archives_to_string(e->archives));
        if (r == 0 && e->keep_exec)
                r = strv_push_printf(argv, "--keep-exec");
        STRV_FOREACH(t, e->allow_types)
                if (r == 0)
                        r = strv_push_printf(argv, "--allow-type=%s", *t);
        STRV_FOREACH(t, e->approve_types)
                if (r == 0)
                        r = strv_push_printf(argv, "--approve-type=%s", *t);
        return r;
}
