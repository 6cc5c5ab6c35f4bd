/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The image store (docs/images.md): SBX_IMAGES_DIR/<digest>/ holds one read-only base image (image.raw,
 * a squashfs or erofs file system), its dm-verity data (image.verity) and its metadata (meta.json, with
 * its name). Import runs in a child process (the copy, mksquashfs for a directory, sha256, veritysetup),
 * never in sbxd's event loop; a run's start only reads the metadata and trusts dm-verity for the bytes. */

#include <systemd/sd-bus.h>

#include "run.h"
#include "policy.h"

#define POLKIT_ACTION_IMAGE "org.sbx.image"

/* A run on image hex starts: (re)starts its hold unit, which keeps the image mounted for a while after
 * (the run's own unit requires the mount unit while it runs). Asynchronous; a failure only costs a mount. */
void images_hold(Manager *m, const char *hex);

/* D-Bus: ImportImage(s name, h fd) -> s digest; ListImages() -> s json; RemoveImage(s ref) */
int images_method_import(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int images_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int images_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error);
