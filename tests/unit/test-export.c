/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reviewed export, the pure parts: the profile's export section, the run's export unit and reviewer
 * command, and the record's export section read from a reviewer's report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export-policy.h"
#include "policy.h"
#include "profile.h"
#include "record-export.h"
#include "record.h"
#include "unit-test.h"

#define EXEC_PATH "/usr/libexec/sbx/sbx-exec"
#define RUN_ID "0123456789abcdef0123456789abcdef"
#define HASH "5e708231b4e4cfcad1b5ae3c5fea982ec8f52d110e5ffba0a9cf71c8fd56af5d"

static char *json(const char *s) {
        char *t = strdup(s);

        assert_non_null(t);
        for (char *c = t; *c; c++)
                if (*c == '\'')
                        *c = '"';
        return t;
}

static int parse(const char *doc, Profile **ret, char **ret_error) {
        _cleanup_free_ char *j = json(doc);

        return profile_parse(j, strlen(j), "x", "x.json", ret, ret_error);
}

#define DOC(extra)                                                                                                     \
        "{'version': 1, 'description': 'd', 'network': {'mode': 'none'}, 'resources': {'memory': '2G', 'tasks': 512, " \
        "'wall_time': '1h', 'disk': '1G'}, 'files': {'workspace': 'writable'}" extra "}"

static Profile *parse_ok(const char *doc) {
        Profile *p = NULL;
        _cleanup_free_ char *error = NULL;

        if (parse(doc, &p, &error) < 0)
                fail_msg("%s: %s", doc, strna(error));
        return p;
}

static void parse_fails(const char *doc, const char *expected) {
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ char *error = NULL;

        assert_int_equal(parse(doc, &p, &error), -EINVAL);
        if (!streq_ptr(error, expected))
                fail_msg("got '%s', expected '%s'", strna(error), expected);
}

static void test_types(void **state) {
        assert_true(export_type_pattern_is_valid("text/plain"));
        assert_true(export_type_pattern_is_valid("text/*"));
        assert_true(export_type_pattern_is_valid("*/*"));
        assert_true(export_type_pattern_is_valid("image/svg+xml"));
        assert_true(export_type_pattern_is_valid("application/vnd.ms-excel"));
        assert_false(export_type_pattern_is_valid("*/plain"));
        assert_false(export_type_pattern_is_valid("text"));
        assert_false(export_type_pattern_is_valid("text/"));
        assert_false(export_type_pattern_is_valid("/plain"));
        assert_false(export_type_pattern_is_valid("Text/Plain"));
        assert_false(export_type_pattern_is_valid("text/pl ain"));
        assert_false(export_type_pattern_is_valid("text/pl*"));
        assert_false(export_type_pattern_is_valid(NULL));

        assert_true(export_type_matches("text/*", "text/html"));
        assert_true(export_type_matches("*/*", "application/x-executable"));
        assert_true(export_type_matches("text/plain", "text/plain"));
        assert_false(export_type_matches("text/plain", "text/plainx"));
        assert_false(export_type_matches("text/*", "texts/plain"));
        assert_false(export_type_matches("text/*", "application/text"));
        assert_false(export_type_matches("image/png", "image/pn"));

        assert_true(export_item_id_is_valid("h1"));
        assert_true(export_item_id_is_valid("h999999"));
        assert_false(export_item_id_is_valid("h0"));
        assert_false(export_item_id_is_valid("h01"));
        assert_false(export_item_id_is_valid("h1234567"));
        assert_false(export_item_id_is_valid("h"));
        assert_false(export_item_id_is_valid("x1"));
        assert_false(export_item_id_is_valid("h1/../x"));

        assert_true(export_source_path_is_valid("out"));
        assert_true(export_source_path_is_valid("a/b.txt"));
        assert_true(export_source_path_is_valid("..a/.b"));
        assert_false(export_source_path_is_valid("/etc"));
        assert_false(export_source_path_is_valid("a/../b"));
        assert_false(export_source_path_is_valid(".."));
        assert_false(export_source_path_is_valid("a/./b"));
        assert_false(export_source_path_is_valid("a//b"));
        assert_false(export_source_path_is_valid("a/"));
        assert_false(export_source_path_is_valid("a\nb"));
        assert_false(export_source_path_is_valid(""));
}

static void test_profile(void **state) {
        _cleanup_(profile_freep) Profile *none = parse_ok(DOC(""));
        _cleanup_(profile_freep) Profile *p = NULL;

        /* no section: no export, the defaults kept */
        assert_false(none->export.enabled);
        assert_int_equal(none->export.max_files, EXPORT_MAX_FILES_DEFAULT);

        p = parse_ok(DOC(", 'export': {}"));
        assert_true(p->export.enabled);
        assert_null(p->export.allow_types);
        assert_int_equal(p->export.active, EXPORT_ACTIVE_REJECT);
        assert_int_equal(p->export.archives, EXPORT_ARCHIVES_NORMALIZE);
        assert_int_equal(p->export.max_bytes, EXPORT_MAX_BYTES_DEFAULT);
        assert_int_equal(p->export.max_file_bytes, EXPORT_MAX_FILE_BYTES_DEFAULT);
        p = profile_free(p);

        p = parse_ok(DOC(", 'export': {'allow_types': ['text/*', 'image/png'], 'approve_types': ['text/html'], "
                         "'active_content': 'approve', 'archives': 'reject', 'keep_exec': true, 'max_files': 5, "
                         "'max_bytes': '2M', 'max_file_bytes': '1M'}"));
        assert_string_equal(p->export.allow_types[1], "image/png");
        assert_string_equal(p->export.approve_types[0], "text/html");
        assert_int_equal(p->export.active, EXPORT_ACTIVE_APPROVE);
        assert_int_equal(p->export.archives, EXPORT_ARCHIVES_REJECT);
        assert_true(p->export.keep_exec);
        assert_int_equal(p->export.max_files, 5);
        assert_int_equal(p->export.max_bytes, 2 << 20);

        parse_fails(DOC(", 'export': {'allow_types': ['text']}"),
                    "x.json: export.allow_types[0]: expected a MIME type pattern (type/subtype, type/* or */*), got \"text\"");
        parse_fails(DOC(", 'export': {'allow_types': ['text/plain', 'text/plain']}"),
                    "x.json: export.allow_types[1]: 'text/plain' is also in export.allow_types[0]");
        parse_fails(DOC(", 'export': {'active_content': 'maybe'}"),
                    "x.json: export.active_content: expected one of reject, approve, allow, got \"maybe\"");
        parse_fails(DOC(", 'export': {'max_files': 0}"), "x.json: export.max_files: expected at least 1, got 0");
        parse_fails(DOC(", 'export': {'max_files': 100001}"), "x.json: export.max_files: expected at most 100000, got 100001");
        parse_fails(DOC(", 'export': {'max_bytes': '1M', 'max_file_bytes': '2M'}"),
                    "x.json: export.max_file_bytes: expected at most max_bytes (1048576)");
        parse_fails(DOC(", 'export': {'allow_types': ['text/csv'], 'approve_types': ['text/csv']}"),
                    "x.json: export.approve_types: 'text/csv' is also in allow_types");
        parse_fails(DOC(", 'export': {'frob': 1}"), "x.json: export.frob: unknown key");
}

static bool strv_has(char **l, const char *s) {
        return strv_contains(l, s);
}

static void test_compile(void **state) {
        _cleanup_(profile_freep) Profile *p = parse_ok(DOC(", 'export': {'allow_types': ['text/plain'], "
                                                           "'active_content': 'approve'}"));
        _cleanup_(profile_freep) Profile *none = parse_ok(DOC(""));
        RunRequest req = { .argv = (char *[]) { (char *) "true", NULL }, .run_id = (char *) RUN_ID,
                           .export_dir = (char *) "/home/u/out", .export_uid = 1000, .export_gid = 1001,
                           .export_dev = 2049, .export_ino = 77 };
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_free_ char *error = NULL;
        const Prop *rw;

        assert_int_equal(policy_compile(p, &req, EXEC_PATH, &plan, &error), 0);
        assert_non_null(plan->export_props);
        assert_string_equal(prop_table_get(plan->export_props, "Type")->s, "oneshot");
        assert_int_equal(prop_table_get(plan->export_props, "CapabilityBoundingSet")->u, 0xf);
        assert_string_equal(prop_table_get(plan->export_props, "ProtectSystem")->s, "strict");
        assert_true(prop_table_get(plan->export_props, "PrivateNetwork")->b);
        rw = prop_table_get(plan->export_props, "ReadWritePaths");
        assert_non_null(rw);
        assert_string_equal(rw->strv[0], SBX_EXPORTS_DIR "/" RUN_ID);
        assert_string_equal(rw->strv[1], "/home/u/out");
        assert_null(rw->strv[2]);
        /* the reviewer's command: the run's out, the caller's directory, the profile's policy */
        assert_string_equal(plan->export_stop_argv[0], SBX_EXPORT_PATH);
        assert_string_equal(plan->export_stop_argv[1], "--review");
        assert_true(strv_has(plan->export_stop_argv, "--source-root=" SBX_SPACE_DIR "/" RUN_ID "/home"));
        assert_true(strv_has(plan->export_stop_argv, "--source=out"));
        assert_true(strv_has(plan->export_stop_argv, "--staging=" SBX_EXPORTS_DIR "/" RUN_ID));
        assert_true(strv_has(plan->export_stop_argv, "--report=" SBX_EXPORTS_DIR "/" RUN_ID "/report.json"));
        assert_true(strv_has(plan->export_stop_argv, "--dest=/home/u/out"));
        assert_true(strv_has(plan->export_stop_argv, "--dest-id=2049:77"));
        assert_true(strv_has(plan->export_stop_argv, "--owner=1000:1001"));
        assert_true(strv_has(plan->export_stop_argv, "--allow-type=text/plain"));
        assert_true(strv_has(plan->export_stop_argv, "--active=approve"));
        assert_true(strv_has(plan->export_stop_argv, "--archives=normalize"));
        assert_true(strv_has(plan->export_stop_argv, "--max-files=10000"));
        assert_false(strv_has(plan->export_stop_argv, "--keep-exec"));
        /* the run makes its ~/out */
        assert_true(strv_has(plan->exec_argv, "--export-out"));

        /* a run that exports never takes a pooled unit */
        {
                RunRequest preq = { .run_id = (char *) RUN_ID, .pool = true };
                _cleanup_(run_plan_freep) RunPlan *member = NULL;
                _cleanup_free_ char *why = NULL;

                assert_int_equal(policy_compile(p, &preq, EXEC_PATH, &member, NULL), 0);
                assert_int_equal(policy_pool_match(member, plan, &why), 0);
                assert_string_equal(why, "the run exports through review");
        }

        /* refused: a profile without the section, a system directory, overlaps, a sandbox */
        {
                RunPlan *x = NULL;
                char *e = NULL;

                assert_int_equal(policy_compile(none, &req, EXEC_PATH, &x, &e), -EPERM);
                assert_string_equal(e, "export: profile 'x' does not export through review");
                e = mfree(e);
                req.export_dir = (char *) "/etc/x";
                assert_int_equal(policy_compile(p, &req, EXEC_PATH, &x, &e), -EPERM);
                assert_string_equal(e, "export: '/etc/x' is a system directory");
                e = mfree(e);
                req.export_dir = (char *) "/home/u/w/out";
                req.workspace = (char *) "/home/u/w";
                assert_int_equal(policy_compile(p, &req, EXEC_PATH, &x, &e), -EINVAL);
                assert_string_equal(e, "export: '/home/u/w/out' overlaps the workspace '/home/u/w'");
                e = mfree(e);
                req.workspace = NULL;
                req.export_dir = (char *) "/home/u/a$b";
                assert_int_equal(policy_compile(p, &req, EXEC_PATH, &x, &e), -EINVAL);
                e = mfree(e);
                req.export_dir = (char *) "/home/u/out";
                req.run_id = NULL;
                assert_int_equal(policy_compile(p, &req, EXEC_PATH, &x, &e), -EINVAL);
                assert_string_equal(e, "export: the run has no id to export under");
                e = mfree(e);
                assert_null(x);
        }
}

#define REPORT                                                                                                          \
        "{'version':1,'source':'out','source_missing':false,"                                                          \
        "'exported':[{'path':'a/b.txt','size':12,'sha256':'" HASH "','type':'text/plain','mode':'0644',"            \
        "'notes':['exec bits dropped']}],"                                                                             \
        "'held':[{'id':'h1','path':'page.html','size':80,'sha256':'" HASH "','type':'text/html','mode':'0644',"     \
        "'reason':'active content: script in HTML'},"                                                                  \
        "{'id':'h2','path':'x.html','size':8,'sha256':'" HASH "','type':'text/html','mode':'0644','reason':'r'}],"  \
        "'refused':[{'path':'link','reason':'symlink'},{'path':'b.zip','entry':'../evil','reason':'archive entry: "   \
        "climbs out (..)'},{'path':'bad\\u0001name\\u00ff','reason':'name'}],"                                          \
        "'totals':{'exported_files':1,'exported_bytes':12,'held':2,'refused':3}}"

static void test_record(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = run_record_new(), *back = NULL;
        _cleanup_free_ char *report = json(REPORT), *text = NULL, *error = NULL, *text2 = NULL;

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, "fedcba9876543210fedcba9876543210");
        r->unit = strdup("sbx-x-" RUN_ID ".service");
        r->profile = strdup("x");
        r->policy_digest = strdup("sha256:" HASH);
        r->started_at = 1;
        r->exit_code = -1;
        r->stop_reason = _STOP_REASON_INVALID;
        assert_int_equal(run_record_export_init(r, "/home/u/out"), 0);
        assert_int_equal(run_record_export_read_report(r, report, &error), 0);
        assert_true(r->export->reviewed);
        assert_string_equal(r->export->destination, "/home/u/out");
        assert_int_equal(r->export->n_exported, 1);
        assert_int_equal(r->export->exported_bytes, 12);
        assert_int_equal(r->export->exported[0].mode, 0644);
        assert_string_equal(r->export->exported[0].notes[0], "exec bits dropped");
        assert_int_equal(r->export->n_held, 2);
        assert_int_equal(r->export->n_refused, 3);
        assert_string_equal(r->export->refused[1].entry, "../evil");
        /* a control character and a byte that is not UTF-8 (json-c's \u00ff is UTF-8: kept) */
        assert_string_equal(r->export->refused[2].path, "bad?name\xc3\xbf");

        assert_int_equal(run_export_approve(r->export, "h1"), 0);
        assert_int_equal(run_export_reject(r->export, "h2"), 0);
        assert_int_equal(run_export_approve(r->export, "h2"), -ENOENT);
        assert_int_equal(r->export->n_held, 0);
        assert_int_equal(r->export->n_exported, 2);
        assert_string_equal(r->export->exported[1].path, "page.html");
        assert_null(r->export->exported[1].id);
        assert_null(r->export->exported[1].reason);
        assert_string_equal(r->export->exported[1].notes[0], "approved");
        assert_int_equal(r->export->exported_bytes, 92);
        assert_string_equal(r->export->refused[3].path, "x.html");
        assert_string_equal(r->export->refused[3].reason, "rejected");

        /* the record keeps it all */
        assert_int_equal(run_record_to_json(r, &text), 0);
        if (run_record_from_json(text, &back, &error) < 0) fail_msg("%s", strna(error));
        assert_non_null(back->export);
        assert_int_equal(run_record_to_json(back, &text2), 0);
        assert_string_equal(text, text2);
        assert_non_null(strstr(text, "\"exported_files\": 2"));

        /* a report that is not one: an error, nothing certain */
        {
                _cleanup_(run_record_freep) RunRecord *q = run_record_new();
                _cleanup_free_ char *e = NULL, *bad = json("{'exported':[{'size':1}]}");

                assert_int_equal(run_record_export_init(q, "/d"), 0);
                assert_int_equal(run_record_export_read_report(q, bad, &e), -EBADMSG);
                assert_string_equal(e, "export.exported[0]: not a valid item");
                e = mfree(e);
                assert_int_equal(run_record_export_read_report(q, "nope", &e), -EBADMSG);
                e = mfree(e);
                bad = mfree(bad);
                bad = json("{'held':[{'path':'a','reason':'r'}]}"); /* held without an id */
                assert_int_equal(run_record_export_read_report(q, bad, &e), -EBADMSG);
                e = mfree(e);
                bad = mfree(bad);
                bad = json("{'exported':[],'error':'the destination is not the directory that was checked'}");
                assert_int_equal(run_record_export_read_report(q, bad, &e), 0);
                assert_false(q->export->reviewed);
                assert_string_equal(q->export->error, "the destination is not the directory that was checked");
                assert_string_equal(q->export->destination, "/d");
        }

        /* a section without a destination (a sandbox's before its first export) writes it as null, and
         * reads back the same */
        r->export->destination = mfree(r->export->destination);
        text = mfree(text);
        text2 = mfree(text2);
        back = run_record_free(back);
        assert_int_equal(run_record_to_json(r, &text), 0);
        assert_non_null(strstr(text, "\"destination\": null"));
        if (run_record_from_json(text, &back, &error) < 0)
                fail_msg("%s", strna(error));
        assert_null(back->export->destination);
        assert_int_equal(run_record_to_json(back, &text2), 0);
        assert_string_equal(text, text2);
}

/* A live sandbox's export: the unit shares the run's export unit's sandboxing, reviews at its start, and
 * numbers held items from where the sandbox's earlier exports left off. */
static void test_compile_live(void **state) {
        _cleanup_(profile_freep) Profile *p = parse_ok(DOC(", 'export': {'allow_types': ['text/plain'], "
                                                           "'active_content': 'approve'}"));
        _cleanup_(profile_freep) Profile *none = parse_ok(DOC(""));
        RunRequest req = { .run_id = (char *) RUN_ID, .export_dir = (char *) "/home/u/dest", .export_uid = 1000,
                           .export_gid = 1001, .export_dev = 2049, .export_ino = 78, .workspace = (char *) "/home/u/w" };
        RunRequest runreq = { .argv = (char *[]) { (char *) "true", NULL }, .run_id = (char *) RUN_ID,
                              .export_dir = (char *) "/home/u/dest", .export_dev = 2049, .export_ino = 78 };
        _cleanup_(export_live_plan_freep) ExportLivePlan *x = NULL;
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_free_ char *error = NULL;
        ExportLivePlan *bad = NULL;

        assert_int_equal(policy_compile_live_export(p, &req, "work/out", "0a1b2c3d", 4, &x, &error), 0);
        assert_string_equal(x->unit, "sbx-export@" RUN_ID "-0a1b2c3d.service");
        assert_string_equal(x->report, SBX_EXPORTS_DIR "/" RUN_ID "/report-0a1b2c3d.json");
        assert_string_equal(x->argv[0], SBX_EXPORT_PATH);
        assert_string_equal(x->argv[1], "--review");
        assert_true(strv_has(x->argv, "--source-root=" SBX_SPACE_DIR "/" RUN_ID "/home"));
        assert_true(strv_has(x->argv, "--source=work/out"));
        assert_true(strv_has(x->argv, "--staging=" SBX_EXPORTS_DIR "/" RUN_ID));
        assert_true(strv_has(x->argv, "--report=" SBX_EXPORTS_DIR "/" RUN_ID "/report-0a1b2c3d.json"));
        assert_true(strv_has(x->argv, "--dest=/home/u/dest"));
        assert_true(strv_has(x->argv, "--dest-id=2049:78"));
        assert_true(strv_has(x->argv, "--owner=1000:1001"));
        assert_true(strv_has(x->argv, "--first-held-id=4"));
        assert_true(strv_has(x->argv, "--active=approve"));

        /* the same sandboxing as the run's export unit; the review is the start, not the stop */
        assert_int_equal(policy_compile(p, &runreq, EXEC_PATH, &plan, &error), 0);
        assert_false(strv_has(plan->export_stop_argv, "--first-held-id=1"));
        for (size_t i = 0; i < plan->export_props->n; i++) {
                const Prop *a = &plan->export_props->props[i], *b = prop_table_get(x->props, a->def->name);
                const char *n = a->def->name;

                if (streq(n, "RemainAfterExit") || streq(n, "TimeoutStopSec")) {
                        assert_null(b);
                        continue;
                }
                if (!b)
                        fail_msg("%s is not a property of the live export's unit", n);
                if (streq(n, "TimeoutStartSec")) {
                        assert_int_equal(a->u, 30 * USEC_PER_SEC);
                        assert_int_equal(b->u, EXPORT_REVIEW_TIMEOUT_SEC * USEC_PER_SEC);
                } else if (a->strv) {
                        assert_int_equal(strv_length(a->strv), strv_length(b->strv));
                        for (size_t k = 0; a->strv[k]; k++)
                                assert_string_equal(a->strv[k], b->strv[k]);
                } else {
                        assert_int_equal(a->b, b->b);
                        assert_int_equal(a->u, b->u);
                        assert_string_equal(strempty(a->s), strempty(b->s));
                }
        }
        assert_int_equal(x->props->n, plan->export_props->n - 2);
        assert_int_equal(prop_table_get(plan->export_props, "TimeoutStopSec")->u, EXPORT_REVIEW_TIMEOUT_SEC * USEC_PER_SEC);

        /* refused: a path that climbs or is absolute, a profile without export, a destination in the workspace */
        for (const char *const *path = (const char *const[]) { "../x", "/etc", "a/../b", "", "a//b", "./a", NULL };
             *path; path++) {
                char *e = NULL;

                assert_int_equal(policy_compile_live_export(p, &req, *path, "0a", 1, &bad, &e), -EINVAL);
                assert_non_null(strstr(e, "is not a relative path in the sandbox's HOME"));
                free(e);
        }
        error = mfree(error);
        assert_int_equal(policy_compile_live_export(none, &req, "out", "0a", 1, &bad, &error), -EPERM);
        assert_string_equal(error, "export: profile 'x' does not export through review");
        error = mfree(error);
        req.export_dir = (char *) "/home/u/w/sub";
        assert_int_equal(policy_compile_live_export(p, &req, "out", "0a", 1, &bad, &error), -EINVAL);
        assert_string_equal(error, "export: '/home/u/w/sub' overlaps the workspace '/home/u/w'");
        error = mfree(error);
        /* the dataset is checked also without a workspace */
        req.workspace = NULL;
        req.dataset = (char *) "/srv/data";
        req.export_dir = (char *) "/srv/data/x";
        assert_int_equal(policy_compile_live_export(p, &req, "out", "0a", 1, &bad, &error), -EINVAL);
        assert_string_equal(error, "export: '/srv/data/x' overlaps the dataset '/srv/data'");
        req.export_dir = (char *) "/home/u/dest";
        assert_int_equal(policy_compile_live_export(p, &req, "out", "0A", 1, &bad, NULL), -EINVAL);
        assert_int_equal(policy_compile_live_export(p, &req, "out", "0a", 0, &bad, NULL), -EINVAL);
        assert_null(bad);
}

#define REPORT2                                                                                                         \
        "{'version':1,'source':'out','source_missing':false,"                                                          \
        "'exported':[{'path':'c.txt','size':3,'sha256':'" HASH "','type':'text/plain','mode':'0644'}],"              \
        "'held':[{'id':'h4','path':'p.html','size':9,'sha256':'" HASH "','type':'text/html','mode':'0644',"          \
        "'reason':'active content: script in HTML'}],"                                                                 \
        "'refused':[{'path':'l','reason':'symlink'}],"                                                                 \
        "'totals':{'exported_files':1,'exported_bytes':3,'held':1,'refused':1}}"

/* A sandbox's section: every live export's report appended, held ids never given twice. */
static void test_record_append(void **state) {
        _cleanup_(run_export_freep) RunExport *e = calloc(1, sizeof(RunExport)), *a = NULL, *b = NULL, *c = NULL;
        _cleanup_free_ char *r1 = json(REPORT), *r2 = json(REPORT2), *error = NULL;
        _cleanup_free_ char *failed = json("{'exported':[{'path':'d.txt','size':1}],'error':'the destination is not the "
                                           "directory that was checked'}");

        assert_non_null(e);
        e->reviewed = true;
        assert_int_equal(run_export_next_held_id(NULL), 1);
        assert_int_equal(run_export_next_held_id(e), 1);
        assert_int_equal(run_export_from_report(r1, &a, &error), 0);
        assert_true(a->reviewed);
        assert_null(a->destination);
        a->destination = strdup("/home/u/one");
        assert_int_equal(run_export_append(e, a), 0);
        assert_string_equal(e->destination, "/home/u/one");
        assert_int_equal(e->n_exported, 1);
        assert_int_equal(e->n_held, 2);
        assert_int_equal(e->n_refused, 3);
        assert_int_equal(e->exported_bytes, 12);
        assert_int_equal(run_export_next_held_id(e), 3);
        /* approval and rejection take the id off an item; it is not given again */
        assert_int_equal(run_export_approve(e, "h1"), 0);
        assert_int_equal(run_export_reject(e, "h2"), 0);
        assert_int_equal(run_export_next_held_id(e), 3);

        /* the second export (its reviewer told to start at h3; this one started at h4) */
        assert_int_equal(run_export_from_report(r2, &b, &error), 0);
        b->destination = strdup("/home/u/two");
        assert_int_equal(run_export_append(e, b), 0);
        assert_true(e->reviewed);
        assert_string_equal(e->destination, "/home/u/two");
        assert_int_equal(e->n_exported, 3);
        assert_string_equal(e->exported[2].path, "c.txt");
        assert_int_equal(e->exported_bytes, 12 + 80 + 3);
        assert_int_equal(e->n_held, 1);
        assert_string_equal(e->held[0].id, "h4");
        assert_non_null(run_export_find_held(e, "h4"));
        assert_int_equal(e->n_refused, 5);
        assert_string_equal(e->refused[4].path, "l");
        assert_int_equal(run_export_next_held_id(e), 5);
        /* the appended copies are the section's own */
        b = run_export_free(b);
        assert_string_equal(e->held[0].path, "p.html");
        assert_string_equal(e->held[0].reason, "active content: script in HTML");

        /* a review that did not finish: its items are listed, the section is no longer certain */
        assert_int_equal(run_export_from_report(failed, &c, &error), 0);
        assert_false(c->reviewed);
        assert_int_equal(run_export_append(e, c), 0);
        assert_false(e->reviewed);
        assert_string_equal(e->error, "the destination is not the directory that was checked");
        assert_int_equal(e->n_exported, 4);
        assert_string_equal(e->destination, "/home/u/two"); /* c has none */
        assert_int_equal(run_export_from_report("nope", &c, &error), -EBADMSG);
}

/* Approval adds a note: a held item with as many notes as a report may give still reads back from the
 * record once approved. */
static void test_record_approve_full_notes(void **state) {
        _cleanup_(run_record_freep) RunRecord *r = run_record_new(), *back = NULL;
        _cleanup_free_ char *report = json("{'held':[{'id':'h1','path':'p.html','reason':'r','notes':['1','2','3','4',"
                                           "'5','6','7','8','9','10','11','12','13','14','15','16']}]}");
        _cleanup_free_ char *too_many = json("{'exported':[{'path':'a','notes':['1','2','3','4','5','6','7','8','9',"
                                             "'10','11','12','13','14','15','16','17']}]}");
        _cleanup_free_ char *text = NULL, *error = NULL;

        assert_non_null(r);
        strcpy(r->run_id, RUN_ID);
        strcpy(r->tenant, "fedcba9876543210fedcba9876543210");
        r->profile = strdup("x");
        r->started_at = 1;
        assert_int_equal(run_record_export_init(r, "/home/u/out"), 0);
        assert_int_equal(run_record_export_read_report(r, report, &error), 0);
        assert_int_equal(run_export_approve(r->export, "h1"), 0);
        assert_int_equal(strv_length(r->export->exported[0].notes), 17);
        assert_int_equal(run_record_to_json(r, &text), 0);
        if (run_record_from_json(text, &back, &error) < 0)
                fail_msg("%s", strna(error));
        assert_int_equal(strv_length(back->export->exported[0].notes), 17);
        assert_string_equal(back->export->exported[0].notes[16], "approved");
        assert_int_equal(run_export_next_held_id(back->export), 2);

        /* a report still may not give more than 16 */
        assert_int_equal(run_record_export_read_report(r, too_many, &error), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_profile),
                cmocka_unit_test(test_compile),
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_compile_live),
                cmocka_unit_test(test_record_append),
                cmocka_unit_test(test_record_approve_full_notes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
