/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "log.h"
#include "sd-protocols.h"

static int max_level = LOG_INFO;
static const char *log_prefix;
static bool to_journal;  /* stderr is a journal stream: events go to the journal's native socket */

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

void log_set_prefix(const char *prefix) {
        log_prefix = prefix;
}

void log_open(void) {
        /* $JOURNAL_STREAM is "dev:ino" of the stream systemd connected us to. */
        const char *e = getenv("JOURNAL_STREAM");
        struct stat st;
        unsigned long long dev, ino;

        to_journal = false;
        if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0)
                to_journal = (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;

        e = getenv("SBX_LOG_LEVEL");
        if (e && streq(e, "debug"))
                max_level = LOG_DEBUG;
}

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...) {
        va_list ap;
        int saved = errno;

        if (level > max_level)
                return error > 0 ? -error : error;

        if (error != 0)
                errno = error < 0 ? -error : error;

        if (to_journal)
                fprintf(stderr, "<%d>", level);
        else if (log_prefix)
                fprintf(stderr, "%s: ", log_prefix);
        va_start(ap, format);
        if (to_journal) {
                /* One message, one journal line: a newline in a value from outside (a request, a file
                 * name) must not start a line of its own, with a "<N>" priority of its choosing. */
                _cleanup_free_ char *msg = NULL;

                if (vasprintf(&msg, format, ap) >= 0) {
                        for (char *c = msg; *c; c++)
                                if (*c == '\n' || *c == '\r')
                                        *c = ' ';
                        fputs(msg, stderr);
                }
        } else
                vfprintf(stderr, format, ap);
        va_end(ap);
        if (level == LOG_DEBUG && !to_journal)
                fprintf(stderr, " (%s:%d %s)", file, line, func);
        fputc('\n', stderr);

        errno = saved;
        return error > 0 ? -error : error;
}

#define EVENT_FIELDS_MAX 24

int log_event_internal(int level, const char *file, int line, const char *func, const char *message_id,
                       const LogField *fields, const char *format, ...) {
        _cleanup_free_ char *msg = NULL;
        _cleanup_strv_free_ char **kv = NULL;
        struct iovec iov[EVENT_FIELDS_MAX];
        size_t n = 0, nkv = 0;
        va_list ap;
        int saved = errno, r;

        if (level > max_level)
                return 0;

        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0) {
                errno = saved;
                return 0;
        }

        if (to_journal) {
                kv = calloc(EVENT_FIELDS_MAX + 1, sizeof(char *));
                if (!kv)
                        goto plain;
#define KV(...)                                                                         \
                do {                                                                    \
                        if (nkv >= EVENT_FIELDS_MAX || asprintf(&kv[nkv], __VA_ARGS__) < 0) { \
                                kv[nkv] = NULL;                                         \
                                goto plain;                                             \
                        }                                                               \
                        nkv++;                                                          \
                } while (0)
                KV("MESSAGE=%s", msg);
                KV("MESSAGE_ID=%s", message_id);
                KV("PRIORITY=%d", level);
                KV("CODE_FILE=%s", file);
                KV("CODE_LINE=%d", line);
                KV("CODE_FUNC=%s", func);
                KV("SYSLOG_IDENTIFIER=%s", log_prefix ?: program_invocation_short_name);
                for (const LogField *f = fields; f && f->key; f++)
                        if (f->value)
                                KV("%s=%s", f->key, f->value);
#undef KV
                for (n = 0; n < nkv; n++)
                        iov[n] = (struct iovec) { .iov_base = kv[n], .iov_len = strlen(kv[n]) };
                if (journal_sendv(iov, n) >= 0) {
                        errno = saved;
                        return 0;
                }
        }
plain:
        errno = saved;
        log_internal(level, 0, file, line, func, "%s", msg);
        return 0;
}
