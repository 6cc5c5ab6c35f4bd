/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handover.h"
#include "macro.h"

static uid_t h_from_uid, h_to_uid;
static gid_t h_from_gid, h_to_gid;
static unsigned long h_changed;
static int h_error;
static dev_t h_root_dev;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        gid_t gid;

        if (type == FTW_NS || type == FTW_DNR)
                return FTW_CONTINUE; /* unreadable: not ours to move */
        if (ftw->level == 0)
                h_root_dev = st->st_dev;
        /* Stay on the workspace's file system: do not descend into directories mounted below it.
         * (Only directories are compared: overlayfs reports other devices for non-directories.) */
        if (type == FTW_D && st->st_dev != h_root_dev)
                return FTW_SKIP_SUBTREE;
        if (st->st_uid != h_from_uid)
                return FTW_CONTINUE;
        gid = st->st_gid == h_from_gid ? h_to_gid : (gid_t) -1;
        if (fchownat(AT_FDCWD, path, h_to_uid, gid, AT_SYMLINK_NOFOLLOW) < 0) {
                h_error = negative_errno();
                return FTW_STOP;
        }
        h_changed++;
        return FTW_CONTINUE;
}

int handover_tree(const char *root, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
                  unsigned long *ret_changed) {
        h_from_uid = from_uid;
        h_from_gid = from_gid;
        h_to_uid = to_uid;
        h_to_gid = to_gid;
        h_changed = 0;
        h_error = 0;

        /* FTW_PHYS: never follow symlinks. */
        if (nftw(root, visit, 64, FTW_PHYS | FTW_ACTIONRETVAL) < 0)
                return negative_errno();
        if (h_error < 0)
                return h_error;
        if (ret_changed)
                *ret_changed = h_changed;
        return 0;
}
