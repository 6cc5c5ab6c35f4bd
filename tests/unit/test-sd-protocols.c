/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-protocols: $NOTIFY_SOCKET's addresses, notifications and the barrier against a socket of the
 * test's own (as PID 1 would receive them), and the journal's native datagram byte by byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "macro.h"
#include "sd-protocols.h"
#include "unit-test.h"
#include "util.h"

static void test_notify_address(void **state) {
        struct sockaddr_un sa;
        socklen_t len;
        char longname[sizeof(sa.sun_path) + 2];

        assert_int_equal(notify_address("/run/systemd/notify", &sa, &len), 0);
        assert_string_equal(sa.sun_path, "/run/systemd/notify");
        assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + strlen("/run/systemd/notify") + 1);

        assert_int_equal(notify_address("@sbx/test", &sa, &len), 0);
        assert_int_equal(sa.sun_path[0], 0);
        assert_memory_equal(sa.sun_path + 1, "sbx/test", 8);
        assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 9);

        memset(longname, 'a', sizeof(longname) - 1);
        longname[0] = '/';
        longname[sizeof(longname) - 1] = 0;
        const char *bad[] = { NULL, "", "/", "@", "run/notify", "vsock:2:1234", longname };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(notify_address(bad[i], &sa, &len), -EINVAL);
}

/* A datagram socket bound where NOTIFY_SOCKET says, with the credentials the kernel attaches. */
static int listen_notify(char path[static 64]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, one = 1;

        snprintf(path, 64, "/tmp/test-notify.%d", (int) getpid());
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        strcpy(sa.sun_path, path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
        assert_int_equal(setenv("NOTIFY_SOCKET", path, 1), 0);
        return fd;
}

/* Receives one notification: its text into buf, its passed fd (or -1), and the sender's pid. */
static void recv_notify(int fd, char *buf, size_t size, int *ret_fd, pid_t *ret_pid) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
        } control = {};
        struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

        assert_true(n >= 0);
        buf[n] = 0;
        *ret_fd = -1;
        *ret_pid = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                        struct ucred u;

                        memcpy(&u, CMSG_DATA(c), sizeof(u));
                        *ret_pid = u.pid;
                }
        }
}

static void test_notify_send(void **state) {
        char path[64], buf[256];
        int fd, passed;
        pid_t pid;

        assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
        assert_int_equal(notify_send("READY=1"), 0);
        assert_int_equal(notify_barrier(USEC_PER_SEC), 0);

        fd = listen_notify(path);
        assert_int_equal(notify_send("READY=1"), 1);
        recv_notify(fd, buf, sizeof(buf), &passed, &pid);
        assert_string_equal(buf, "READY=1");
        assert_int_equal(passed, -1);
        assert_int_equal(pid, getpid()); /* what PID 1 checks against NotifyAccess=main */

        assert_true(notify_sendf("STATUS=finished exit_status=%d", 7) > 0);
        recv_notify(fd, buf, sizeof(buf), &passed, &pid);
        assert_string_equal(buf, "STATUS=finished exit_status=7");

        /* nobody there any more: an error, not a silent success */
        close(fd);
        assert_int_equal(unlink(path), 0);
        assert_true(notify_send("READY=1") < 0);
        assert_int_equal(setenv("NOTIFY_SOCKET", "vsock:2:1", 1), 0);
        assert_int_equal(notify_send("READY=1"), -EINVAL);
        assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
}

static void test_notify_barrier(void **state) {
        char path[64], buf[256];
        int fd, passed, status;
        pid_t child, pid;

        /* handled: a "manager" (the child) receives BARRIER=1 and closes the pipe's end it was given */
        fd = listen_notify(path);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                reset_crash_signals();
                recv_notify(fd, buf, sizeof(buf), &passed, &pid);
                _exit(streq(buf, "BARRIER=1") && passed >= 0 ? 0 : 1);
        }
        assert_int_equal(notify_barrier(5 * USEC_PER_SEC), 1);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        /* not handled: the message (and the pipe's end in it) stays queued, the wait times out */
        usec_t t0 = now_monotonic();
        assert_int_equal(notify_barrier(100 * USEC_PER_MSEC), -ETIMEDOUT);
        assert_true(now_monotonic() - t0 >= 100 * USEC_PER_MSEC);
        close(fd);
        (void) unlink(path);
        assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
}

static void test_journal_serialize(void **state) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        uint64_t le = htole64(3);
        char want[64];
        size_t n = 0;

        const struct iovec plain[] = {
                { (char *) "MESSAGE=hello world", 19 },
                { (char *) "PRIORITY=6", 10 },
                { (char *) "SBX_RUN=", 8 },
        };
        assert_int_equal(journal_serialize(plain, ELEMENTSOF(plain), &buf, &size), 0);
        assert_int_equal(size, 19 + 1 + 10 + 1 + 8 + 1);
        assert_memory_equal(buf, "MESSAGE=hello world\nPRIORITY=6\nSBX_RUN=\n", size);
        buf = mfree(buf);

        /* a value with a newline: KEY, newline, 64-bit little-endian length, the value, newline */
        const struct iovec multi[] = { { (char *) "SBX_ERROR=a\nb", 13 }, { (char *) "PRIORITY=3", 10 } };
        assert_int_equal(journal_serialize(multi, ELEMENTSOF(multi), &buf, &size), 0);
        memcpy(want + n, "SBX_ERROR\n", 10), n += 10;
        memcpy(want + n, &le, 8), n += 8;
        memcpy(want + n, "a\nb\nPRIORITY=3\n", 15), n += 15;
        assert_int_equal(size, n);
        assert_memory_equal(buf, want, n);
        buf = mfree(buf);

        /* what journald would drop or misread is refused (the caller logs a plain line instead) */
        const char *bad[] = { "MESSAGE", "message=x", "_PID=1", "1ABC=x", "=x", "MES SAGE=x" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                const struct iovec one = { (char *) bad[i], strlen(bad[i]) };

                assert_int_equal(journal_serialize(&one, 1, &buf, &size), -EINVAL);
                assert_null(buf);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_notify_address),
                cmocka_unit_test(test_notify_send),
                cmocka_unit_test(test_notify_barrier),
                cmocka_unit_test(test_journal_serialize),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
