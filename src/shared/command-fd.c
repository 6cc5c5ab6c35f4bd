/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "command-fd.h"
#include "fileio.h"
#include "macro.h"
#include "util.h"

int command_fd_new(char **argv, char **env, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        char **lists[2] = { argv, env };
        int r;

        fd = memfd_create("sbx-command", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                STRV_FOREACH(s, lists[k]) {
                        r = loop_write(fd, *s, strlen(*s) + 1);
                        if (r < 0)
                                return r;
                }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void command_fd_free(char **argv, char **env) {
        /* every string points into one buffer: the first one's */
        if (argv && argv[0])
                free(argv[0]);
        else if (env && env[0])
                free(env[0]);
        free(argv);
        free(env);
}

/* The next n strings from *p (up to end) into a new NULL-terminated array. */
static int split(char **p, const char *end, uint32_t n, char ***ret) {
        _cleanup_free_ char **l = calloc((size_t) n + 1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                char *z = memchr(*p, 0, (size_t) (end - *p));

                if (!z)
                        return -EBADMSG;
                l[i] = *p;
                *p = z + 1;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int command_fd_read(int fd, uint32_t argc, uint32_t envc, char ***ret_argv, char ***ret_env) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ char **argv = NULL, **env = NULL;
        size_t size = 0;
        char *p;
        int r;

        if (argc == 0)
                return -EBADMSG;
        /* the writer's offset is the file's end: read it from the start */
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        r = read_fd_full(fd, COMMAND_FD_MAX, &buf, &size);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        p = buf;
        r = split(&p, buf + size, argc, &argv);
        if (r >= 0)
                r = split(&p, buf + size, envc, &env);
        if (r < 0)
                return r;
        if (p != buf + size) /* more than announced */
                return -EBADMSG;
        TAKE_PTR(buf);
        *ret_argv = TAKE_PTR(argv);
        *ret_env = TAKE_PTR(env);
        return 0;
}
