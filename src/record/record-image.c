/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "record-image.h"

RunRecordImage *run_record_image_free(RunRecordImage *i) {
        if (!i)
                return NULL;
        free(i->name);
        free(i);
        return NULL;
}

int run_record_image_init(RunRecord *r, const char *name, const char *digest_hex, bool verity) {
        _cleanup_(run_record_image_freep) RunRecordImage *i = calloc(1, sizeof(RunRecordImage));

        if (!i)
                return -ENOMEM;
        if (!image_name_is_valid(name) || !image_digest_is_valid(digest_hex))
                return -EINVAL;
        if (!(i->name = strdup(name)))
                return -ENOMEM;
        (void) snprintf(i->digest, sizeof(i->digest), "sha256:%s", digest_hex);
        i->verity = verity;
        run_record_image_free(r->image);
        r->image = TAKE_PTR(i);
        return 0;
}

int run_record_image_to_json(const RunRecordImage *i, json_object *o) {
        if (json_object_object_add(o, "name", json_object_new_string(i->name)) < 0 ||
            json_object_object_add(o, "digest", json_object_new_string(i->digest)) < 0 ||
            json_object_object_add(o, "verity", json_object_new_boolean(i->verity)) < 0)
                return -ENOMEM;
        return 0;
}

int run_record_image_from_json(json_object *o, RunRecordImage **ret, char **ret_error) {
        _cleanup_(run_record_image_freep) RunRecordImage *i = NULL;
        json_object *v;
        const char *s;

        if (!o) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "image: expected an object or null");
        i = calloc(1, sizeof(RunRecordImage));
        if (!i)
                return -ENOMEM;
        if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
            !image_name_is_valid(json_object_get_string(v)))
                return error_setf(ret_error, -EBADMSG, "image.name: expected an image name");
        if (!(i->name = strdup(json_object_get_string(v))))
                return -ENOMEM;
        if (!json_object_object_get_ex(o, "digest", &v) || !json_object_is_type(v, json_type_string) ||
            !strneq((s = json_object_get_string(v)), "sha256:", 7) || !image_digest_is_valid(s + 7))
                return error_setf(ret_error, -EBADMSG, "image.digest: expected sha256: and 64 lower-case hex digits");
        strcpy(i->digest, s);
        if (!json_object_object_get_ex(o, "verity", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "image.verity: expected a boolean");
        i->verity = json_object_get_boolean(v);
        *ret = TAKE_PTR(i);
        return 0;
}
