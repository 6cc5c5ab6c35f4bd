/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handover.h"
#include "macro.h"

typedef struct Handover {
        uid_t from_uid, to_uid;
        gid_t from_gid, to_gid;
        dev_t dev;
        unsigned long changed;
} Handover;

#define HANDOVER_MAX_DEPTH 256

/* Everything is done relative to directory fds opened with O_NOFOLLOW, never through path strings:
 * the caller may rename and replace directories of the tree while we walk it (it keeps write access to
 * directories it made world-writable), and a path looked up again could lead anywhere. */
static int chown_entry(const Handover *h, int dir_fd, const char *name, const struct stat *st) {
        gid_t gid = st->st_gid == h->from_gid ? h->to_gid : (gid_t) -1;

        if (fchownat(dir_fd, name, h->to_uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        return 0;
}

static int walk(Handover *h, int dir_fd, unsigned depth) {
        _cleanup_close_ int fd = -EBADF;
        DIR *d;
        int r = 0;

        if (depth > HANDOVER_MAX_DEPTH)
                return -ELOOP;
        fd = dup(dir_fd);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);

        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone meanwhile */

                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = -EBADF;
                        struct stat sst;

                        sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0)
                                continue; /* replaced by a symlink or file meanwhile: not ours to walk */
                        if (fstat(sub, &sst) < 0)
                                continue;
                        if (sst.st_dev != h->dev)
                                continue; /* another file system mounted below: stay out */
                        r = walk(h, sub, depth + 1);
                        if (r < 0)
                                break;
                        /* chown the directory through its own fd: it is the one we walked */
                        if (sst.st_uid == h->from_uid) {
                                gid_t gid = sst.st_gid == h->from_gid ? h->to_gid : (gid_t) -1;
                                if (fchown(sub, h->to_uid, gid) < 0)
                                        r = negative_errno();
                                else
                                        h->changed++;
                        }
                        continue;
                }
                if (st.st_uid != h->from_uid)
                        continue;
                /* non-directories: relative to the fd of the directory we hold, without following */
                r = chown_entry(h, dirfd(d), de->d_name, &st);
                if (r >= 0)
                        h->changed++;
        }
        closedir(d);
        return r;
}

int handover_tree(const char *root, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid, mode_t root_mode,
                  unsigned long *ret_changed) {
        _cleanup_close_ int fd = -EBADF;
        Handover h = {
                .from_uid = from_uid, .from_gid = from_gid, .to_uid = to_uid, .to_gid = to_gid,
        };
        struct stat st;
        int r;

        fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        h.dev = st.st_dev;

        if (root_mode != (mode_t) -1 && fchmod(fd, root_mode & 07777) < 0)
                return negative_errno();
        r = walk(&h, fd, 0);
        if (r < 0)
                return r;
        if (st.st_uid == from_uid) {
                if (fchown(fd, to_uid, st.st_gid == from_gid ? to_gid : (gid_t) -1) < 0)
                        return negative_errno();
                h.changed++;
        }
        if (ret_changed)
                *ret_changed = h.changed;
        return 0;
}
