/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-conf.h"
#include "fileio.h"
#include "macro.h"

/* parse_duration()'s units, and "d" (days) */
static int parse_retention(const char *s, usec_t *ret) {
        size_t n = strlen(s);
        _cleanup_free_ char *num = NULL;
        usec_t v;
        int r;

        if (n > 1 && s[n - 1] == 'd') {
                num = strndup(s, n - 1);
                if (!num)
                        return -ENOMEM;
                r = parse_duration(num, &v);
                if (r < 0)
                        return r;
                if (v > UINT64_MAX / (24 * 3600))
                        return -ERANGE;
                *ret = v * 24 * 3600;
                return 0;
        }
        return parse_duration(s, ret);
}

int daemon_conf_parse(const char *text, DaemonConf *ret, char **ret_error) {
        DaemonConf c = *ret;
        unsigned line = 0;

        for (const char *p = text; p && *p;) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *l = strndup(p, len);
                char *key, *value, *eq, *end;
                int r;

                if (!l)
                        return -ENOMEM;
                line++;
                p += len + (p[len] == '\n');
                key = l + strspn(l, " \t");
                for (end = key + strlen(key); end > key && strchr(" \t\r", end[-1]); end--)
                        ;
                *end = 0;
                if (*key == 0 || *key == '#')
                        continue;
                eq = strchr(key, '=');
                if (!eq)
                        return error_setf(ret_error, -EINVAL, "line %u: expected KEY=VALUE", line);
                *eq = 0;
                value = eq + 1;
                value += strspn(value, " \t");
                for (end = eq; end > key && strchr(" \t", end[-1]); end--)
                        ;
                *end = 0;
                if (streq(key, "RecordRetentionSec") || streq(key, "CacheRetentionSec")) {
                        r = parse_retention(value, streq(key, "RecordRetentionSec") ? &c.record_retention
                                                                                     : &c.cache_retention);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return error_setf(ret_error, -EINVAL,
                                                  "line %u: %s: '%s' is not a duration (e.g. 30d, 12h, 0)", line,
                                                  key, value);
                } else if (streq(key, "CacheMaxSize")) {
                        r = parse_size(value, &c.cache_max_size);
                        if (r < 0)
                                return error_setf(ret_error, -EINVAL,
                                                  "line %u: CacheMaxSize: '%s' is not a size (e.g. 10G, 512M, 0)", line,
                                                  value);
                } else
                        return error_setf(ret_error, -EINVAL, "line %u: unknown key '%s'", line, key);
        }
        *ret = c;
        return 0;
}

int daemon_conf_load(const char *path, DaemonConf *ret, char **ret_error) {
        _cleanup_free_ char *text = NULL, *why = NULL;
        DaemonConf c = DAEMON_CONF_DEFAULTS;
        int r;

        r = read_file_at(AT_FDCWD, path, 64 * 1024, &text, NULL);
        if (r == -ENOENT) {
                *ret = c;
                return 0;
        }
        if (r < 0)
                return error_setf(ret_error, r, "%s: %s", path, strerror(-r));
        r = daemon_conf_parse(text, &c, &why);
        if (r < 0)
                return why ? error_setf(ret_error, r, "%s: %s", path, why) : r;
        *ret = c;
        return 0;
}
