/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The record's export section (docs/export.md): what the review of a run's ~/out delivered, held and
 * refused, read from the reviewer's report (sbx-export(8)), whose item format it shares. Pure
 * (json-c only). */

#include <json-c/json.h>

#include "record.h"

RunExport *run_export_free(RunExport *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunExport *, run_export_free);

/* Fills o (the record's "export" object). */
int run_export_to_json(const RunExport *e, json_object *o);
/* Reads o (the record's "export" object). */
int run_export_from_json(json_object *o, RunExport **ret, char **ret_error);
