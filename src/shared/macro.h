/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _public_ __attribute__((visibility("default")))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _sentinel_ __attribute__((sentinel))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
static inline bool streq_ptr(const char *a, const char *b) {
        return a && b ? strcmp(a, b) == 0 : a == b;
}
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Take ownership of a pointer/fd out of a cleanup-managed variable. */
#define TAKE_PTR(p)                        \
        ({                                 \
                typeof(p) _ptr_ = (p);     \
                (p) = NULL;                \
                _ptr_;                     \
        })
#define TAKE_FD(fd)                        \
        ({                                 \
                int _fd_ = (fd);           \
                (fd) = -EBADF;             \
                _fd_;                      \
        })

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                 \
        static inline void func##p(type *p) {                   \
                if (*p)                                         \
                        func(*p);                               \
        }

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline char **strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

static inline size_t strv_length(char * const *l) {
        size_t n = 0;
        if (l)
                while (l[n])
                        n++;
        return n;
}

#define STRV_FOREACH(s, l) for (char **s = (l); s && *s; s++)

static inline bool strv_contains(char * const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* errno as a negative value, never 0 (so a failure can never look like success). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
