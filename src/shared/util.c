/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int run_id_new(char ret[static RUN_ID_LEN + 1]) {
        uint8_t b[RUN_ID_LEN / 2];
        size_t got = 0;

        while (got < sizeof(b)) {
                ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                got += (size_t) k;
        }
        hex_encode(b, sizeof(b), ret);
        return 0;
}

bool lower_hex_is_valid(const char *s, size_t len) {
        if (!s || strlen(s) != len)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

bool run_id_is_valid(const char *s) {
        return lower_hex_is_valid(s, RUN_ID_LEN);
}

static usec_t now(clockid_t c) {
        struct timespec ts;

        (void) clock_gettime(c, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

usec_t now_realtime(void) {
        return now(CLOCK_REALTIME);
}

usec_t now_monotonic(void) {
        return now(CLOCK_MONOTONIC);
}

/* The proleptic Gregorian calendar by arithmetic (days since 1970-01-01 and back, for years 0000 to 9999),
 * rather than gmtime_r() and timegm(): glibc's first call of either reads the time zone (TZ, or
 * /etc/localtime), which a UTC timestamp never needs, on every sbxctl start. */
#define TIMESTAMP_SEC_MAX UINT64_C(253402300799) /* 9999-12-31T23:59:59Z */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
        int64_t era;
        unsigned yoe, doy;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = (unsigned) (y - era * 400);
        doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        return era * 146097 + (int64_t) (yoe * 365 + yoe / 4 - yoe / 100 + doy) - 719468;
}

static void civil_from_days(int64_t z, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d) {
        int64_t era;
        unsigned doe, yoe, doy, mp;

        z += 719468;
        era = (z >= 0 ? z : z - 146096) / 146097;
        doe = (unsigned) (z - era * 146097);
        yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        mp = (5 * doy + 2) / 153;
        *ret_d = doy - (153 * mp + 2) / 5 + 1;
        *ret_m = mp < 10 ? mp + 3 : mp - 9;
        *ret_y = (int64_t) yoe + era * 400 + (*ret_m <= 2);
}

char *format_timestamp(char buf[static TIMESTAMP_MAX], usec_t t) {
        uint64_t sec = t / USEC_PER_SEC;
        unsigned m, d, s;
        int64_t y;

        if (sec > TIMESTAMP_SEC_MAX)
                return NULL;
        civil_from_days((int64_t) (sec / 86400), &y, &m, &d);
        s = (unsigned) (sec % 86400);
        snprintf(buf, TIMESTAMP_MAX, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ", (unsigned) y % 10000, m % 100, d % 100,
                 s / 3600, s / 60 % 60, s % 60, (unsigned) (t % USEC_PER_SEC));
        return buf;
}

int parse_timestamp(const char *s, usec_t *ret) {
        static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
        char check[TIMESTAMP_MAX];
        unsigned y, mo, d, h, mi, sec, us;
        int64_t days;
        usec_t t;

        /* Exactly the shape format_timestamp() writes: no signs, blanks or missing digits. */
        if (!s || strlen(s) != strlen(shape))
                return -EINVAL;
        for (size_t i = 0; shape[i]; i++)
                if (shape[i] == 'd' ? !isdigit((unsigned char) s[i]) : s[i] != shape[i])
                        return -EINVAL;
        if (sscanf(s, "%4u-%2u-%2uT%2u:%2u:%2u.%6uZ", &y, &mo, &d, &h, &mi, &sec, &us) != 7)
                return -EINVAL;
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
                return -EINVAL;
        days = days_from_civil(y, mo, d);
        if (days < 0)
                return -EINVAL;
        t = ((usec_t) days * 86400 + h * 3600 + mi * 60 + sec) * USEC_PER_SEC + us;
        /* Day 31 of a 30-day month, Feb 29 of a common year: the round trip refuses those. */
        if (!format_timestamp(check, t) || !streq(check, s))
                return -EINVAL;
        *ret = t;
        return 0;
}

typedef struct UnitSuffix {
        const char *suffix;
        uint64_t factor;
} UnitSuffix;

static int parse_unit_number(const char *s, const UnitSuffix *units, size_t n_units, uint64_t *ret) {
        uint64_t v = 0;
        const char *p = s;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        for (; isdigit((unsigned char) *p); p++) {
                if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        for (size_t i = 0; i < n_units; i++)
                if (streq(p, units[i].suffix)) {
                        if (units[i].factor != 0 && v > UINT64_MAX / units[i].factor)
                                return -ERANGE;
                        *ret = v * units[i].factor;
                        return 0;
                }
        return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret) {
        static const UnitSuffix units[] = {
                { "", 1 }, { "B", 1 }, { "K", 1ULL << 10 }, { "M", 1ULL << 20 }, { "G", 1ULL << 30 },
                { "T", 1ULL << 40 },
        };
        return parse_unit_number(s, units, ELEMENTSOF(units), ret);
}

int parse_duration(const char *s, usec_t *ret) {
        static const UnitSuffix units[] = {
                { "", USEC_PER_SEC }, { "s", USEC_PER_SEC }, { "ms", USEC_PER_MSEC },
                { "min", 60 * USEC_PER_SEC }, { "m", 60 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC },
        };
        return parse_unit_number(s, units, ELEMENTSOF(units), ret);
}

bool fd_is_writable_tty(int fd) {
        int fl = fcntl(fd, F_GETFL);

        return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && isatty(fd);
}

char *format_bytes(char *buf, size_t l, uint64_t bytes) {
        static const char suffixes[] = "BKMGT";
        double v = (double) bytes;
        unsigned i = 0;

        while (v >= 1024 && i < sizeof(suffixes) - 2) {
                v /= 1024;
                i++;
        }
        if (i == 0)
                snprintf(buf, l, "%" PRIu64 "B", bytes);
        else
                snprintf(buf, l, "%.1f%c", v, suffixes[i]);
        return buf;
}

bool path_is_absolute_normalized(const char *p) {
        if (!p || p[0] != '/')
                return false;
        /* no "//", no "/./", no "/../", no trailing slash (except "/") */
        for (const char *s = p; *s; s++) {
                if (*s != '/')
                        continue;
                if (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || s[2] == 0)) ||
                    (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == 0)))
                        return false;
                if (s[1] == 0 && s != p)
                        return false;
        }
        return true;
}

bool mountinfo_has_mount_point_with(const char *mountinfo, const char *needle) {
        if (!mountinfo || !needle || !*needle)
                return false;
        for (const char *line = mountinfo; *line;) {
                size_t len = strcspn(line, "\n");
                const char *p = line, *end = line + len;
                char point[4096];
                size_t k = 0;

                /* "ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS ...": the fifth field */
                for (int field = 0; field < 4 && p < end; field++) {
                        p = memchr(p, ' ', (size_t) (end - p));
                        p = p ? p + 1 : end;
                }
                while (p < end && *p != ' ' && k + 1 < sizeof(point)) {
                        if (p[0] == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                            p[3] >= '0' && p[3] <= '7') {
                                point[k++] = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                                p += 4;
                        } else
                                point[k++] = *p++;
                }
                point[k] = 0;
                if (k > 0 && strstr(point, needle))
                        return true;
                line = end + (*end == '\n');
        }
        return false;
}

int exec_arg_escape(const char *s, char **ret) {
        size_t n = strlen(s) + 1;
        char *e, *d;

        for (const char *c = s; *c; c++)
                n += *c == '$';
        e = d = malloc(n);
        if (!e)
                return -ENOMEM;
        for (const char *c = s; *c; c++) {
                if (*c == '$')
                        *d++ = '$';
                *d++ = *c;
        }
        *d = 0;
        *ret = e;
        return 0;
}

int line_escape(const char *s, size_t max, char **ret) {
        _cleanup_free_ char *e = NULL;
        size_t n = 0, len = strlen(s);
        char *d;

        if (max > 0 && len > max) {
                len = max;
                while (len > 0 && ((unsigned char) s[len] & 0xc0) == 0x80)
                        len--;
        }
        /* at most 4 bytes ("\xNN") for each byte, and "..." */
        e = d = malloc(len * 4 + 4);
        if (!e)
                return -ENOMEM;
        for (const unsigned char *c = (const unsigned char *) s; n < len; c++, n++) {
                if (*c == '\\' || *c == '\n' || *c == '\t' || *c == '\r') {
                        *d++ = '\\';
                        *d++ = *c == '\n' ? 'n' : *c == '\t' ? 't' : *c == '\r' ? 'r' : '\\';
                } else if (*c < 0x20 || *c == 0x7f)
                        d += sprintf(d, "\\x%02x", *c);
                else
                        *d++ = (char) *c;
        }
        if (len < strlen(s))
                d = stpcpy(d, "...");
        *d = 0;
        *ret = TAKE_PTR(e);
        return 0;
}

int error_setf(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

char **strv_copy(char * const *l) {
        size_t n = strv_length(l);
        _cleanup_strv_free_ char **c = calloc(n + 1, sizeof(char *));

        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return NULL;
        return TAKE_PTR(c);
}

char **strv_new_internal(const char *first, ...) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0, i = 0;
        va_list ap;

        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *))
                n++;
        va_end(ap);
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return NULL;
        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *))
                if (!(l[i++] = strdup(s))) {
                        va_end(ap);
                        return NULL;
                }
        va_end(ap);
        return TAKE_PTR(l);
}

void hex_encode(const uint8_t *data, size_t size, char *ret) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < size; i++) {
                ret[2 * i] = digits[data[i] >> 4];
                ret[2 * i + 1] = digits[data[i] & 15];
        }
        ret[2 * size] = 0;
}

int hex_digit_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int strv_push_take(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **t = realloc(*l, (n + 2) * sizeof(char *));

        if (!t)
                return -ENOMEM;
        t[n] = s;
        t[n + 1] = NULL;
        *l = t;
        return 0;
}

const char *name_table_to_string(const char *const *table, size_t n, int i) {
        return i >= 0 && (size_t) i < n ? table[i] : NULL;
}

int name_table_from_string(const char *const *table, size_t n, const char *s) {
        for (size_t i = 0; s && i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}

int strv_push_printf(char ***l, const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        /* strv_push_take() fails only for want of memory */
        if (!s || strv_push_take(l, s) < 0) {
                free(s);
                return -ENOMEM;
        }
        return 0;
}
