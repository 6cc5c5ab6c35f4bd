/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line and environment of run and exec (-E/--setenv, --env-file): checked here as sbxd
 * checks them (command.h), sent as bytes (the requests' argv_bytes and environment, docs/dbus.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "command.h"
#include "command-line.h"
#include "exit-codes.h"
#include "fileio.h"
#include "common.h"
#include "util.h"

static char **arg_setenv = NULL;   /* -E NAME=VALUE or NAME, in order */
static char **arg_env_files = NULL;/* --env-file FILE, in order */

int command_option_setenv(const char *spec) {
        char *c = strdup(spec);

        if (!c || strv_push_take(&arg_setenv, c) < 0)
                return -failed("out of memory");
        return 1;
}

int command_option_env_file(const char *path) {
        char *c = strdup(path);

        if (!c || strv_push_take(&arg_env_files, c) < 0)
                return -failed("out of memory");
        return 1;
}

bool command_env_given(void) {
        return arg_setenv || arg_env_files;
}

/* One entry: "NAME=VALUE" as it is, or "NAME" with sbxctl's own value. 0, or the exit status. */
static int add_entry(char ***env, const char *what, const char *entry) {
        const char *eq = strchr(entry, '=');
        size_t n = eq ? (size_t) (eq - entry) : strlen(entry);
        char *c;

        if (!environment_name_is_valid(entry, n))
                return refused("%s: '%.*s' is not a variable name (printable ASCII but '=', not starting with a "
                               "digit)", what, (int) MIN(n, (size_t) 64), entry);
        if (eq)
                c = strdup(entry);
        else {
                const char *v = getenv(entry);

                if (!v)
                        return refused("%s: %s is not set here (give NAME=VALUE)", what, entry);
                if (asprintf(&c, "%s=%s", entry, v) < 0)
                        c = NULL;
        }
        if (!c || strv_push_take(env, c) < 0)
                return failed("out of memory");
        return 0;
}

/* --env-file: one NAME=VALUE (or NAME) a line, as it is: no quotes, no expansion; empty lines and lines
 * starting with '#' are skipped. */
static int read_env_file(char ***env, const char *path) {
        _cleanup_free_ char *text = NULL, *what = NULL;
        size_t size = 0, line = 0;
        int r;

        r = read_file_at(AT_FDCWD, path, COMMAND_ARG_MAX_CEILING, &text, &size);
        if (r < 0)
                return refused("--env-file: '%s': %s", path, r == -EFBIG ? "too large" : strerror(-r));
        if (memchr(text, 0, size))
                return refused("--env-file: '%s' contains a NUL byte", path);
        for (char *p = text, *nl; p < text + size; p = nl + 1) {
                nl = strchrnul(p, '\n');
                *nl = 0;
                line++;
                if (*p == 0 || *p == '#')
                        continue;
                free(what);
                if (asprintf(&what, "--env-file: %s:%zu", path, line) < 0)
                        return failed("out of memory");
                r = add_entry(env, what, p);
                if (r != 0)
                        return r;
        }
        return 0;
}

int command_prepare(char **cmd, char ***ret_env) {
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *error = NULL;
        struct rlimit rl;
        int r;

        /* the files first, then -E: a later entry of a name wins */
        STRV_FOREACH(f, arg_env_files) {
                r = read_env_file(&env, *f);
                if (r != 0)
                        return r;
        }
        STRV_FOREACH(e, arg_setenv) {
                r = add_entry(&env, "--setenv", *e);
                if (r != 0)
                        return r;
        }
        /* what execve() takes here (the run's own limit is sbxd's to check as well) */
        if (getrlimit(RLIMIT_STACK, &rl) < 0)
                rl.rlim_cur = COMMAND_STACK_DEFAULT;
        r = command_check(cmd, env, rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_cur, &error);
        if (r < 0)
                return error ? refused("%s", error) : failed("%s", strerror(-r));
        *ret_env = TAKE_PTR(env);
        return 0;
}
