/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
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
        /* the bridge's pid file beside it (netns_serve) */
        if (asprintf(&pidfile, "%s.pid", path) < 0)
                return -ENOMEM;
        if (unlink(pidfile) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int netns_serve(const char *path, char **argv, uint64_t timeout_usec) {
        _cleanup_free_ char *pidfile = NULL, *tmp = NULL;
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        int p[2], status, r;
        char c;
        pid_t pid;

        if (!argv || !argv[0])
                return -EINVAL;
        if (asprintf(&pidfile, "%s.pid", path) < 0 || asprintf(&tmp, "%s.pid.tmp", path) < 0)
                return -ENOMEM;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        rfd = p[0];
        wfd = p[1];
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* A mount namespace of its own, private all the way down, before the bridge makes its
                 * own: slirp4netns 1.2.0's --enable-sandbox makes only "/" private in the namespace it
                 * unshares, then detaches the old root, and the unmounts of every shared submount
                 * (/sys/fs/cgroup...) propagate back to the host's namespace. From here nothing does. */
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(126);
                /* fd 3 is the ready pipe, without O_CLOEXEC; nothing else is passed on */
                if (setsid() < 0 || dup2(wfd, 3) < 0)
                        _exit(127);
                if (rfd == 3 || wfd == 3) /* dup2 onto itself keeps O_CLOEXEC */
                        (void) fcntl(3, F_SETFD, 0);
                execv(argv[0], argv);
                _exit(127);
        }
        wfd = safe_close(wfd);

        struct pollfd pfd = { .fd = rfd, .events = POLLIN };
        r = poll(&pfd, 1, (int) (timeout_usec / 1000));
        if (r < 0)
                r = -errno;
        else if (r == 0)
                r = -ETIMEDOUT;
        else if (read(rfd, &c, 1) != 1)
                r = -ECHILD; /* it closed the pipe: it exited, or failed to configure the namespace */
        else
                r = 0;
        if (r == 0) {
                _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
                char buf[32];
                int n = snprintf(buf, sizeof(buf), "%d\n", (int) pid);

                if (fd < 0 || write(fd, buf, n) != n || rename(tmp, pidfile) < 0)
                        r = -errno ?: -EIO;
        }
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, &status, 0);
                (void) unlink(tmp);
        }
        return r;
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
