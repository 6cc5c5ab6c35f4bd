/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* A free loop device backed by fd (read-only when asked), released when its last user goes
 * (LO_FLAGS_AUTOCLEAR: its last mount, or the device-mapper device over it). Returns the loop device's
 * open fd, its path in ret_dev; -errno. */
int loop_attach(int fd, bool read_only, char ret_dev[static 32]);
