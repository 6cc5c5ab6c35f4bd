/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "profile-image.h"

int profile_dispatch_base(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        static const char *const bases[] = { "host", "image", NULL };
        Profile *prof = field;
        unsigned u;
        int r;

        r = json_doc_get_choice(jd, p, v, bases, "\"host\" or \"image\"", &u);
        if (r < 0)
                return r;
        prof->base_image = u == 1;
        return 0;
}

int profile_dispatch_image(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg) {
        _cleanup_free_ char *why = NULL;
        Profile *prof = field;
        const char *s;
        ImageRef ref;
        int r;

        r = json_doc_get_string(jd, p, v, &s);
        if (r < 0)
                return r;
        if (!prof->base_image)
                return json_doc_fail(jd, p, "only with files.base \"image\"");
        if (image_ref_parse(s, &ref, &why) < 0)
                return json_doc_fail_got(jd, p, v, "expected NAME or NAME@sha256:DIGEST (NAME: 1-64 of a-z 0-9 . _ -, "
                                         "starting with a letter or digit; DIGEST: 64 lower-case hex digits)");
        free(prof->image);
        prof->image = strdup(s);
        return prof->image ? 0 : -ENOMEM;
}

int profile_check_image(JsonDoc *jd, const JsonPath *p, const Profile *prof) {
        if (!prof->base_image)
                return 0;
        if (!prof->image)
                return json_doc_fail(jd, JSON_KEY(p, "image"), "files.base \"image\" needs the image's name");
        /* a read-only image has no mount point for a host path that it does not have itself */
        if (strv_length(prof->read_only) > 0)
                return json_doc_fail(jd, JSON_KEY(p, "read_only"), "host paths cannot be bound into a base image");
        if (strv_length(prof->read_write) > 0)
                return json_doc_fail(jd, JSON_KEY(p, "read_write"), "host paths cannot be bound into a base image");
        return 0;
}
