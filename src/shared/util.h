/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static inline bool dot_or_dot_dot(const char *name) {
        return name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0));
}

/* Stores a one-line message (printf-style) in *ret_error, if ret_error is not NULL, and returns r:
 * "return error_setf(ret_error, -EINVAL, \"...\", ...);" */
_printf_(3, 4) int error_setf(char **ret_error, int r, const char *fmt, ...);

#define RUN_ID_LEN 32 /* hex chars: 128 random bits */

/* The slice every run's unit lies below: sbx-NAME-RUN.service in sbx-NAME.slice in it (policy.h); grant.c
 * reads a run's id back from a cgroup path under it. */
#define SBX_SLICE_PARENT "sbx.slice"

typedef uint64_t usec_t;
#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

/* A fresh random run id (RUN_ID_LEN lower-case hex chars + NUL). */
int run_id_new(char ret[static RUN_ID_LEN + 1]);
bool run_id_is_valid(const char *s);
/* s is exactly len characters of [0-9a-f] (run ids, tenant ids). */
bool lower_hex_is_valid(const char *s, size_t len);
/* Lower-case hex of 'size' bytes into 'ret' (2*size+1 bytes). */
void hex_encode(const uint8_t *data, size_t size, char *ret);
/* The value of one hex digit (either case), or -EINVAL. */
int hex_digit_value(char c);

usec_t now_realtime(void);
static inline usec_t timespec_to_usec(const struct timespec *ts) {
        return ts->tv_sec < 0 ? 0 : (usec_t) ts->tv_sec * USEC_PER_SEC + (usec_t) ts->tv_nsec / 1000;
}
usec_t now_monotonic(void);
/* RFC 3339 UTC with microseconds: 2026-11-29T10:30:00.123456Z (27 chars + NUL). */
#define TIMESTAMP_MAX 64
char *format_timestamp(char buf[static TIMESTAMP_MAX], usec_t t);
int parse_timestamp(const char *s, usec_t *ret);

/* "2G" "512M" "100K" "4096" -> bytes (1024-based, whole numbers only); refuses overflow (-ERANGE),
 * fractions, trailing junk and signs (-EINVAL). */
int parse_size(const char *s, uint64_t *ret);
/* "90s" "5min" "2h" "1500ms" "30" (seconds) -> usec. */
int parse_duration(const char *s, usec_t *ret);
char *format_bytes(char *buf, size_t l, uint64_t bytes);
/* A terminal open for writing: given to a command as its stdin, a way to the caller's terminal that
 * no output limit relays. */
bool fd_is_writable_tty(int fd);

bool path_is_absolute_normalized(const char *p);

/* systemd's range of dynamic users (DynamicUser=), where every run's user comes from. */
static inline bool uid_is_dynamic(uint32_t uid) {
        return uid >= 61184 && uid <= 65519;
}

/* An argument of a unit's plain Exec command that systemd passes on as it is: each "$" doubled (systemd
 * expands $VAR and ${VAR} there and reads "$$" as "$"). */
int exec_arg_escape(const char *s, char **ret);

/* Text from outside (a caller's key, value or path) made fit for a one-line message or a log line: a
 * backslash doubled, newline, tab and carriage return as \n \t \r, other control characters (C0 and DEL)
 * as \xNN; cut after max bytes of s (at a UTF-8 character's start) with "..." appended (max 0: never
 * cut). -ENOMEM. */
int line_escape(const char *s, size_t max, char **ret);

/* Whether a mount point in MOUNTINFO (the text of /proc/<pid>/mountinfo) contains NEEDLE (its octal
 * escapes undone first); false for a NULL or empty needle. */
bool mountinfo_has_mount_point_with(const char *mountinfo, const char *needle);

/* A NULL-terminated copy of the NULL-terminated list of strings given; NULL on ENOMEM. */
char **strv_new_internal(const char *first, ...) _sentinel_;
#define strv_new(...) strv_new_internal(__VA_ARGS__, NULL)
/* A heap copy of a NULL-terminated list (NULL: an empty list); NULL on ENOMEM. */
char **strv_copy(char * const *l);
/* Appends s to *l (which may be NULL), taking it: freed with the list from then on (not on -ENOMEM). */
int strv_push_take(char ***l, char *s);
/* Appends the formatted string to *l (which may be NULL). */
_printf_(2, 3) int strv_push_printf(char ***l, const char *fmt, ...);

/* An enum's names: a table of n names indexed by its values. The name of value i (NULL out of range),
 * and the value named s (-EINVAL, the enum's _INVALID, for NULL or a name not in the table). */
const char *name_table_to_string(const char *const *table, size_t n, int i);
int name_table_from_string(const char *const *table, size_t n, const char *s);
/* Defines PREFIX_to_string() and PREFIX_from_string() of an enum TYPE from its name table (TYPE's
 * _MAX names, the rest of the table ignored), or only the first. */
#define DEFINE_NAME_TABLE_TO_STRING(prefix, type, table, max)                           \
        const char *prefix##_to_string(type i) {                                         \
                return name_table_to_string(table, max, (int) i);                        \
        }
#define DEFINE_NAME_TABLE_LOOKUP(prefix, type, table, max)                              \
        DEFINE_NAME_TABLE_TO_STRING(prefix, type, table, max)                            \
        type prefix##_from_string(const char *s) {                                       \
                return (type) name_table_from_string(table, max, s);                     \
        }
