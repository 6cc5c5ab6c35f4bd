/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

#include "command.h"
#include "macro.h"
#include "util.h"

const char *const environment_deny_default[] = {
        "LD_*",     "SBX_*",         "GCONV_PATH", "GETCONF_DIR", "HOSTALIASES",      "LOCALDOMAIN",
        "LOCPATH",  "MALLOC_TRACE",  "NIS_PATH",   "NLSPATH",     "RESOLV_HOST_CONF", "RES_OPTIONS",
        "TZDIR",    "NOTIFY_SOCKET", NULL,
};

uint64_t command_size_limit(uint64_t stack_limit) {
        uint64_t l = MIN((uint64_t) COMMAND_ARG_MAX_CEILING, stack_limit / 4);

        l = MAX(l, (uint64_t) COMMAND_ARG_MAX_MIN);
        return l > COMMAND_RESERVE ? l - COMMAND_RESERVE : 0;
}

uint64_t command_size(char **argv, char **env) {
        uint64_t n = 0;

        STRV_FOREACH(a, argv)
                n += strlen(*a) + 1 + sizeof(void *);
        STRV_FOREACH(e, env)
                n += strlen(*e) + 1 + sizeof(void *);
        return n;
}

static int check_strings(const char *what, char **l, char **ret_error) {
        size_t i = 0;

        STRV_FOREACH(a, l) {
                size_t len = strlen(*a) + 1;

                if (len > COMMAND_STRING_MAX)
                        return error_setf(ret_error, -E2BIG, "command: %s %zu is %zu bytes long, more than execve() "
                                          "takes in one string (MAX_ARG_STRLEN, %u bytes)", what, i, len,
                                          COMMAND_STRING_MAX);
                i++;
        }
        return 0;
}

int command_check(char **argv, char **env, uint64_t stack_limit, char **ret_error) {
        uint64_t size, limit;
        int r;

        if (strv_length(argv) == 0)
                return error_setf(ret_error, -EINVAL, "command: no command given");
        if (isempty(argv[0]))
                return error_setf(ret_error, -EINVAL, "command: the command name is empty");
        r = check_strings("argument", argv, ret_error);
        if (r >= 0)
                r = check_strings("environment entry", env, ret_error);
        if (r < 0)
                return r;
        size = command_size(argv, env);
        limit = command_size_limit(stack_limit);
        if (size > limit)
                return error_setf(ret_error, -E2BIG, "command: %zu arguments and %zu environment entries take %" PRIu64
                                  " bytes, more than execve() takes here (ARG_MAX: %" PRIu64 " bytes, a quarter of "
                                  "the stack size limit, less %u for the run's own environment)",
                                  strv_length(argv), strv_length(env), size, limit, COMMAND_RESERVE);
        return 0;
}

bool environment_name_is_valid(const char *name, size_t len) {
        if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
                return false;
        for (size_t i = 0; i < len; i++)
                if (name[i] <= ' ' || name[i] > '~' || name[i] == '=')
                        return false;
        return true;
}

static bool name_matches(char **patterns, const char *name) {
        STRV_FOREACH(g, patterns)
                if (fnmatch(*g, name, 0) == 0)
                        return true;
        return false;
}

int environment_check(char **allow, char **deny, const char *profile, char **env, char **ret_error) {
        STRV_FOREACH(e, env) {
                _cleanup_free_ char *name = NULL;
                const char *eq = strchr(*e, '=');

                if (!eq || !environment_name_is_valid(*e, (size_t) (eq - *e)))
                        return error_setf(ret_error, -EINVAL, "environment: entry %zu is not NAME=VALUE with a "
                                          "valid name (printable ASCII but '=', not starting with a digit)",
                                          (size_t) (e - env));
                name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                if (!name_matches(allow, name) || name_matches(deny, name))
                        return error_setf(ret_error, -EPERM, "environment: profile '%s' does not let a run set "
                                          "'%s' (environment.allow, environment.deny)", profile, name);
        }
        return 0;
}
