/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "log.h"

static int max_level = LOG_INFO;
static const char *log_prefix;
static bool to_journal;

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
        vfprintf(stderr, format, ap);
        va_end(ap);
        if (level == LOG_DEBUG && !to_journal)
                fprintf(stderr, " (%s:%d %s)", file, line, func);
        fputc('\n', stderr);

        errno = saved;
        return error > 0 ? -error : error;
}
