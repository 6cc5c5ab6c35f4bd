/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's network namespace, made and removed by its network unit (sbx-net@RUN.service) as root in the
 * host's mount namespace: a new namespace with lo up, kept alive by a bind mount at PATH, where
 * slirp4netns and the run's unit (NetworkNamespacePath=) find it. */

int netns_create(const char *path);
int netns_remove(const char *path);

/* The network unit's main process (Type=forking): starts argv (slirp4netns) in a session of its own with
 * fd 3 the write end of a pipe (its --ready-fd=3), waits up to timeout_usec for its "network configured"
 * byte, writes its pid to PATH.pid (the unit's PIDFile=) and returns. A bridge that exits or stays
 * silent is ended and the start fails: a run never starts with a namespace that is not connected. The
 * bridge gets a private mount namespace first (its own sandbox would otherwise unmount the host's
 * shared mounts). */
int netns_serve(const char *path, char **argv, uint64_t timeout_usec);


/* The BPF file system at path (sbxd pins its egress programs and maps there), mounted unless one is
 * there already: Debian 12's systemd (built without its BPF framework) does not mount /sys/fs/bpf,
 * and refuses a mount unit for it (an API file system). Run by sbx-bpffs.service, in the host's mount
 * namespace. Returns 1 if it mounted it. */
int bpffs_ensure(const char *path);
