/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The record's credentials section (record.h has its types and its public functions): what record.c
 * uses to write and read it. */

#include <json-c/json.h>

#include "record.h"

RunCredentials *run_credentials_free(RunCredentials *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunCredentials *, run_credentials_free);

/* Fills o (the record's "credentials" object). */
int run_credentials_to_json(const RunCredentials *c, json_object *o);
/* Reads o and cleanup.credentials_gone from the record's cleanup object. */
int run_credentials_from_json(json_object *o, json_object *cleanup, RunCredentials **ret, char **ret_error);
