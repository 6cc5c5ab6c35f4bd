/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "broker-conf.h"
#include "util.h"

void broker_conf_done(BrokerConf *c) {
        free(c->ca_file);
        *c = (BrokerConf) {};
}

static char *strip(char *s) {
        char *e;

        s += strspn(s, " \t\r");
        e = s + strlen(s);
        while (e > s && strchr(" \t\r", e[-1]))
                *--e = 0;
        return s;
}

int broker_conf_parse(const char *text, BrokerConf *ret, unsigned *ret_line, char **ret_error) {
        _cleanup_free_ char *copy = strdup(text);
        BrokerConf c = {};
        unsigned line = 0;
        char *p, *next;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        for (p = copy; p && r >= 0; p = next) {
                char *key, *value, *eq;

                next = strchr(p, '\n');
                if (next)
                        *next++ = 0;
                line++;
                key = strip(p);
                if (*key == 0 || *key == '#')
                        continue;
                eq = strchr(key, '=');
                if (!eq) {
                        r = error_setf(ret_error, -EINVAL, "expected key=value");
                        break;
                }
                *eq = 0;
                key = strip(key);
                value = strip(eq + 1);
                if (streq(key, "ca_file")) {
                        if (!path_is_absolute_normalized(value)) {
                                r = error_setf(ret_error, -EINVAL, "ca_file: '%s' is not an absolute path", value);
                                break;
                        }
                        free(c.ca_file);
                        if (!(c.ca_file = strdup(value)))
                                r = -ENOMEM;
                } else
                        r = error_setf(ret_error, -EINVAL, "unknown key '%s'", key);
        }
        if (r < 0) {
                broker_conf_done(&c);
                if (ret_line)
                        *ret_line = line;
                return r;
        }
        *ret = c;
        return 0;
}
