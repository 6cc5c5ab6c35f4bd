/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "capture.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

int capture_check_duration(usec_t duration) {
        if (duration == 0)
                return -EINVAL;
        if (duration > CAPTURE_DURATION_MAX)
                return -ERANGE;
        return 0;
}

/* The times of the capture object: { key, offset, may be null } */
static const struct {
        const char *key;
        size_t offset;
        bool nullable;
} capture_times[] = {
        { "enabled_at", offsetof(RunCapture, enabled_at), false },
        { "until",      offsetof(RunCapture, until),      false },
        { "ended_at",   offsetof(RunCapture, ended_at),   true  },
        { "deleted_at", offsetof(RunCapture, deleted_at), true  },
};

#define CAPTURE_TIME(c, i) (*(usec_t *) ((uint8_t *) (c) + capture_times[i].offset))

int run_capture_to_json(const RunCapture *c, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        char buf[TIMESTAMP_MAX];

        if (!run_capture_enabled(c)) {
                *ret = NULL;
                return 0;
        }
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(capture_times); i++) {
                usec_t t = CAPTURE_TIME((RunCapture *) c, i);
                json_object *v = NULL;

                if (t > 0) {
                        if (!format_timestamp(buf, t))
                                return -ERANGE;
                        if (!(v = json_object_new_string(buf)))
                                return -ENOMEM;
                }
                if (json_object_object_add(o, capture_times[i].key, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }
        if (json_object_object_add(o, "by_tenant", json_object_new_string(c->by_tenant)) < 0 ||
            json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

int run_capture_from_json(json_object *x, RunCapture *ret, char **ret_error) {
        RunCapture c = {};
        json_object *v;

        if (!x) {
                *ret = c;
                return 0;
        }
        if (!json_object_is_type(x, json_type_object))
                return error_setf(ret_error, -EBADMSG, "capture: expected an object or null");
        for (size_t i = 0; i < ELEMENTSOF(capture_times); i++) {
                const char *key = capture_times[i].key;

                if (!json_object_object_get_ex(x, key, &v))
                        return error_setf(ret_error, -EBADMSG, "capture.%s: missing", key);
                if (!v && capture_times[i].nullable)
                        continue;
                if (!v || !json_object_is_type(v, json_type_string) ||
                    parse_timestamp(json_object_get_string(v), &CAPTURE_TIME(&c, i)) < 0 ||
                    CAPTURE_TIME(&c, i) == 0)
                        return error_setf(ret_error, -EBADMSG, "capture.%s: expected an RFC 3339 UTC timestamp%s",
                                          key, capture_times[i].nullable ? " or null" : "");
        }
        if (c.until < c.enabled_at)
                return error_setf(ret_error, -EBADMSG, "capture.until: before capture.enabled_at");
        if (!json_object_object_get_ex(x, "by_tenant", &v) || !json_object_is_type(v, json_type_string) ||
            !lower_hex_is_valid(json_object_get_string(v), CAPTURE_TENANT_LEN))
                return error_setf(ret_error, -EBADMSG, "capture.by_tenant: expected a tenant id");
        strcpy(c.by_tenant, json_object_get_string(v));
        if (!json_object_object_get_ex(x, "bytes", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0)
                return error_setf(ret_error, -EBADMSG, "capture.bytes: expected a non-negative integer");
        c.bytes = json_object_get_uint64(v);
        *ret = c;
        return 0;
}
