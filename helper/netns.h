/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's network namespace, made and removed by its network unit (sbx-net@RUN.service) as root in the
 * host's mount namespace: a new namespace with lo up, kept alive by a bind mount at PATH, where pasta
 * and the run's unit (NetworkNamespacePath=) find it. */

int netns_create(const char *path);
int netns_remove(const char *path);


/* The BPF file system at path (sbxd pins its egress programs and maps there), mounted unless one is
 * there already: Debian 12's systemd (built without its BPF framework) does not mount /sys/fs/bpf,
 * and refuses a mount unit for it (an API file system). Run by sbx-bpffs.service, in the host's mount
 * namespace. Returns 1 if it mounted it. */
int bpffs_ensure(const char *path);
