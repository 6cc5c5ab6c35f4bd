/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A profile's export policy (the "export" section, docs/export.md): what a run may hand out of the
 * sandbox through review, and the reviewer's options it compiles to (sbx-export(8)). Pure. */

#include <stdbool.h>
#include <stdint.h>

#include "json-doc.h"

typedef enum ExportActive {
        EXPORT_ACTIVE_REJECT,   /* documents with active content are refused */
        EXPORT_ACTIVE_APPROVE,  /* held until the caller approves them */
        EXPORT_ACTIVE_ALLOW,    /* exported, flagged in the record */
        _EXPORT_ACTIVE_MAX,
} ExportActive;

typedef enum ExportArchives {
        EXPORT_ARCHIVES_NORMALIZE, /* rewritten with only relative regular files and directories */
        EXPORT_ARCHIVES_REJECT,
        _EXPORT_ARCHIVES_MAX,
} ExportArchives;

#define EXPORT_MAX_FILES_DEFAULT 10000U
#define EXPORT_MAX_FILES_MAX 100000U
#define EXPORT_MAX_BYTES_DEFAULT (UINT64_C(1) << 30)
#define EXPORT_MAX_FILE_BYTES_DEFAULT (UINT64_C(256) << 20)
#define EXPORT_TYPES_MAX 64U

typedef struct ExportPolicy {
        bool enabled;            /* the profile has an "export" section: runs may use --export */
        char **allow_types;      /* MIME type patterns exported; NULL: the reviewer's default list */
        char **approve_types;    /* held for approval (when not allowed) */
        ExportActive active;
        ExportArchives archives;
        bool keep_exec;
        uint64_t max_files;
        uint64_t max_bytes;
        uint64_t max_file_bytes;
} ExportPolicy;

void export_policy_done(ExportPolicy *e);
/* The defaults of a profile without the section (enabled false). */
void export_policy_init(ExportPolicy *e);

/* "type/subtype", "type/STAR" or "STAR/STAR" (STAR: an asterisk), lower case, [a-z0-9.+-_] in each part. */
bool export_type_pattern_is_valid(const char *s);
bool export_type_matches(const char *pattern, const char *type);

/* The profile's "export" object into *e (enabled set). */
int export_policy_dispatch(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);

/* The reviewer's policy options ("--max-files=N", "--allow-type=T", ...), appended to *argv. */
int export_policy_append_argv(const ExportPolicy *e, char ***argv);

const char *export_active_to_string(ExportActive a);
const char *export_archives_to_string(ExportArchives a);

/* A held item's id: "h" and 1 to 6 digits (sbx-export(8)). */
bool export_item_id_is_valid(const char *s);
/* A path in a run's HOME to export from a live sandbox: relative, no "." or ".." component, no empty
 * component, no control character, at most 1024 bytes. */
bool export_source_path_is_valid(const char *s);
