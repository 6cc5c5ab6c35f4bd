/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The record's credentials section (its types are in record-types.h): what fills it, and what record.c
 * uses to write and read it. */

#include <json-c/json.h>

#include "record-types.h"

RunCredentials *run_credentials_free(RunCredentials *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunCredentials *, run_credentials_free);

/* Fills o (the record's "credentials" object). */
int run_credentials_to_json(const RunCredentials *c, json_object *o);
/* Reads o and cleanup.credentials_gone from the record's cleanup object. */
int run_credentials_from_json(json_object *o, json_object *cleanup, RunCredentials **ret, char **ret_error);

/* Gives r a credentials section with these names (copied). */
int run_record_credentials_init(RunRecord *r, char *const *files, char *const *grants);
/* Adds one line of the broker's operations log. -EBADMSG: not such a line (nothing added); -ENOENT: no
 * credentials section; 0 when only counted (RECORD_BROKERED_MAX reached), 1 when listed. */
int run_record_add_brokered(RunRecord *r, const char *line);
