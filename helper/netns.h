/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's network namespace, made and removed by its network unit (sbx-net@RUN.service) as root in the
 * host's mount namespace: a new namespace with lo up, kept alive by a bind mount at PATH, where pasta
 * and the run's unit (NetworkNamespacePath=) find it. */

int netns_create(const char *path);
int netns_remove(const char *path);
