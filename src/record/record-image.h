/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The record's image section (docs/images.md): the base image a run ran on, by name and digest. Pure
 * (json-c only). */

#include <json-c/json.h>

#include "record-types.h"

RunRecordImage *run_record_image_free(RunRecordImage *i);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunRecordImage *, run_record_image_free);

/* Gives r an image section (copies). */
int run_record_image_init(RunRecord *r, const char *name, const char *digest_hex, bool verity);
/* Fills o (the record's "image" object). */
int run_record_image_to_json(const RunRecordImage *i, json_object *o);
/* Reads o (the record's "image" value; null: no image). -EBADMSG with a message if malformed. */
int run_record_image_from_json(json_object *o, RunRecordImage **ret, char **ret_error);
