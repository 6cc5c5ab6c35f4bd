/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The record's export section (docs/export.md): what the review of a run's ~/out delivered, held and
 * refused, read from the reviewer's report (sbx-export(8)), whose item format it shares. Pure
 * (json-c only). */

#include <json-c/json.h>

#include "record-types.h"

RunExport *run_export_free(RunExport *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunExport *, run_export_free);

/* Fills o (the record's "export" object). */
int run_export_to_json(const RunExport *e, json_object *o);
/* Reads o (the record's "export" object). */
int run_export_from_json(json_object *o, RunExport **ret, char **ret_error);

int run_record_export_init(RunRecord *r, const char *destination);
/* The reviewer's report (its JSON text) into r->export: its lists replace the section's. */
int run_record_export_read_report(RunRecord *r, const char *json, char **ret_error);
/* The reviewer's report alone, in the section's shape (reviewed unless it has an error; no destination). */
int run_export_from_report(const char *json, RunExport **ret, char **ret_error);
/* A live sandbox's export: copies of report's lists appended to e's (up to RECORD_EXPORT_ITEMS_MAX each),
 * its destination made e's, e no longer reviewed if report is not (its error kept, the first one). On
 * failure e is unchanged. */
int run_export_append(RunExport *e, const RunExport *report);
/* The number of the next held item's id of a section that reviews are appended to (1 for NULL): past every
 * id given, held still or approved or rejected since. */
uint64_t run_export_next_held_id(const RunExport *e);
/* A held item by id, or NULL. */
ExportItem *run_export_find_held(RunExport *e, const char *id);
/* Moves a held item to exported (note "approved") or to refused (reason "rejected"). */
int run_export_approve(RunExport *e, const char *id);
int run_export_reject(RunExport *e, const char *id);
