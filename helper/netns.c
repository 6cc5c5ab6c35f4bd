/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "netns.h"

static int mkdir_parents(const char *path) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        return 0;
}

static int loopback_up(void) {
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = {};

        if (fd < 0)
                return -errno;
        strncpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name) - 1);
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags |= IFF_UP;
        return ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

int netns_create(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        int status, r;
        pid_t pid;

        r = mkdir_parents(path);
        if (r < 0)
                return r;
        /* a leftover of a run that was not cleaned up is not reused */
        fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
        if (fd < 0)
                return -errno;
        fd = safe_close(fd);

        /* The child makes the namespace, so that this process stays in the host's. */
        pid = fork();
        if (pid < 0)
                r = -errno;
        else if (pid == 0) {
                if (unshare(CLONE_NEWNET) < 0 || loopback_up() < 0 ||
                    mount("/proc/self/ns/net", path, NULL, MS_BIND, NULL) < 0)
                        _exit(1);
                _exit(0);
        } else if (waitpid(pid, &status, 0) < 0)
                r = -errno;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                r = -EIO;
        if (r < 0)
                (void) unlink(path);
        return r;
}

int netns_remove(const char *path) {
        _cleanup_free_ char *pidfile = NULL;

        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                return -errno;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        /* pasta's pid file beside it (it does not remove it itself) */
        if (asprintf(&pidfile, "%s.pid", path) < 0)
                return -ENOMEM;
        if (unlink(pidfile) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}


int bpffs_ensure(const char *path) {
        struct statfs sfs;

        if (statfs(path, &sfs) < 0)
                return -errno;
        if (sfs.f_type == BPF_FS_MAGIC)
                return 0;
        if (mount("bpf", path, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0)
                return -errno;
        return 1;
}
