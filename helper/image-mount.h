/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A base image's mount for runs (docs/images.md), the start and stop of sbx-image@DIGEST.service:
 * "--image-mount=DIGEST" mounts store entry DIGEST read-only through dm-verity at
 * SBX_IMAGE_MOUNTS_DIR/DIGEST (two read-only loop devices and a dm-verity device set up here, with the
 * root hash and the dm-verity data the store recorded at import); "--image-umount=DIGEST" unmounts it
 * (the loop and dm-verity devices go with the mount). Returns an exit status; a message on stderr says what failed. */
int image_mount_main(const char *arg);
