/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The report of one review (man/sbx-export.8.md, REPORT): what was exported, held and refused. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Refusals listed one by one; past this, one summary entry counts the rest. */
#define REPORT_REFUSED_LISTED_MAX 1000

typedef struct Report {
        json_object *exported, *held, *refused; /* arrays */
        uint64_t exported_files, exported_bytes, n_held, n_refused;
        char *source;
        bool source_missing;
        char *error;
} Report;

int report_init(Report *r, const char *source);
void report_done(Report *r);

/* Each returns 0 or -ENOMEM. notes may be NULL. sha256 NULL: a directory. */
int report_add_exported(Report *r, const char *path, uint64_t size, const char *sha256, const char *type,
                        mode_t mode, json_object *notes);
int report_add_held(Report *r, const char *id, const char *path, uint64_t size, const char *sha256,
                    const char *type, mode_t mode, const char *reason, json_object *notes);
/* entry: an archive member, or NULL. */
int report_add_refused(Report *r, const char *path, const char *entry, const char *reason);
int report_set_error(Report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The report as one line of JSON (plus a newline), heap-allocated. */
int report_format(const Report *r, char **ret);
/* Writes text atomically to the file at path, 0600. */
int report_write(const char *path, const char *text);
