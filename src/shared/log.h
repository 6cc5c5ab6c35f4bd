/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>

#include "macro.h"

/* Logging: to stderr, with a "<N>" syslog prefix when stderr is the journal (sd-daemon convention).
 * Functions that log an error return the negative errno they were given, so callers can write
 *         return log_error_errno(r, "Failed to ...: %m");
 * "%m" expands to strerror(-r). */

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_prefix(const char *prefix); /* e.g. "sbxctl" -> "sbxctl: message" (tty/CLI style) */
void log_open(void);                      /* detects whether stderr is connected to the journal */

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...)
        _printf_(6, 7);

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)

/* A journal event: MESSAGE_ID= (see message-ids.h) plus the given fields, each a KEY and a value (NULL
 * values are left out), ended by LOG_FIELDS_END. Written as a structured journal entry when stderr is
 * the journal, else (or if that fails) as a plain log line. Returns 0. */
typedef struct LogField {
        const char *key;   /* upper case, e.g. "SBX_RUN_ID" */
        const char *value;
} LogField;
#define LOG_FIELDS_END ((LogField) {})

int log_event_internal(int level, const char *file, int line, const char *func, const char *message_id,
                       const LogField *fields, const char *format, ...) _printf_(7, 8);

#define log_event(level, message_id, fields, ...) \
        log_event_internal((level), __FILE__, __LINE__, __func__, (message_id), (fields), __VA_ARGS__)
#define LOG_FIELDS(...) ((const LogField[]) { __VA_ARGS__, LOG_FIELDS_END })

#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")
