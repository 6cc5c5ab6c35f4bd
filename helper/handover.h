/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* Workspace ownership hand-over. The run's dynamic user must be able to write the caller's workspace,
 * and the caller must own what the run leaves there. Before the run (ExecStartPre=+) everything in the
 * tree owned by the caller moves to the run's user; after it (ExecStopPost=+) everything owned by the
 * run's user moves back. Only entries owned by 'from_uid' are touched, symlinks are never followed and
 * the walk stays on one file system, so the tree cannot steer it at anything the caller does not own.
 * root_mode, unless (mode_t) -1, becomes the mode of the root first (on the directory walked, before
 * the walk, so a failed walk leaves it set): 0700 on the way in, so that no other user (other tenants'
 * runs see the host's tree read-only) can enter the workspace while the run owns it, and the mode sbxd
 * found on the way out. */
int handover_tree(const char *root, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid, mode_t root_mode,
                  unsigned long *ret_changed);
