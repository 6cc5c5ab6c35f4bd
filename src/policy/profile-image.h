/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The profile's base: files.base ("host" or "image") and files.image (docs/images.md). */

#include "json-doc.h"
#include "profile.h"

/* files.base: "host" or "image" (field: the Profile) */
int profile_dispatch_base(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* files.image: "NAME" or "NAME@sha256:HEX", only with files.base "image" (field: the Profile) */
int profile_dispatch_image(JsonDoc *jd, const JsonPath *p, json_object *v, void *field, const void *arg);
/* After the files section: base "image" needs files.image, and no host paths bound into the image. p: the
 * files section's path. */
int profile_check_image(JsonDoc *jd, const JsonPath *p, const Profile *prof);
