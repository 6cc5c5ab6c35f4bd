/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helper's supervisor (helper/supervise.c) taking the seccomp listener from the child it forked: the
 * child hands it over, or ends before it could, or sends why it could not; whatever went wrong, the child
 * is ended and reaped, and the error says how it ended. No root needed: the child sets no_new_privs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "seccomp-notify.h"
#include "supervise.h"
#include "unit-test.h"

/* one instruction, struct sock_filter's bytes in hex as sbxd passes a program: SECCOMP_RET_ALLOW
 * (code BPF_RET | BPF_K, k 0x7fff0000) */
#define ALLOW_ALL_HEX "060000000000ff7f"

typedef enum ChildDoes {
        CHILD_SEALS,        /* installs the program and hands over the listener, as sbx-exec's child does */
        CHILD_EXITS,        /* _exit(7) before anything */
        CHILD_KILLED,       /* SIGKILL before anything (the memory ceiling's OOM kill, say) */
        CHILD_SENDS_ERROR,  /* says it could not (-EACCES), then waits to be ended */
} ChildDoes;

/* Forks a child that does what it is told, then supervisor_start(); *ret_pid is the child's pid. */
static int start_child(Supervisor *s, ChildDoes what, pid_t *ret_pid, char **ret_error) {
        char *error = NULL;
        pid_t pid;

        assert_int_equal(supervisor_prepare(s, ALLOW_ALL_HEX, 0, false, &error), 0);
        assert_null(error);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                reset_crash_signals();
                switch (what) {
                case CHILD_SEALS:
                        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || supervisor_child_seal(s) < 0)
                                _exit(1);
                        _exit(0);
                case CHILD_EXITS:
                        _exit(7);
                case CHILD_KILLED:
                        (void) kill(getpid(), SIGKILL);
                        _exit(1);
                case CHILD_SENDS_ERROR:
                        (void) seccomp_listener_send(s->sock[1], -EACCES);
                        for (;;)
                                pause();
                }
                _exit(1);
        }
        *ret_pid = pid;
        return supervisor_start(s, pid, ret_error);
}

/* the child is gone and reaped: nothing left to wait for */
static void assert_reaped(pid_t pid) {
        assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
}

static void test_listener_handed_over(void **state) {
        Supervisor s = SUPERVISOR_INIT;
        char *error = NULL;
        int status;
        pid_t pid;

        assert_int_equal(start_child(&s, CHILD_SEALS, &pid, &error), 0);
        assert_null(error);
        assert_true(s.listener >= 0);
        /* the parent reaps its child itself when it was handed the listener */
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        supervisor_done(&s);
}

/* The child did not hand over the listener: supervisor_start() fails with r and a message that has text in
 * it, takes no listener, and leaves no child behind. */
static void assert_start_fails(ChildDoes what, int r, const char *text) {
        Supervisor s = SUPERVISOR_INIT;
        char *error = NULL;
        pid_t pid;

        assert_int_equal(start_child(&s, what, &pid, &error), r);
        assert_non_null(error);
        if (!strstr(error, text))
                fail_msg("'%s' not in '%s'", text, error);
        assert_int_equal(s.listener, -EBADF);
        assert_reaped(pid);
        free(error);
        supervisor_done(&s);
}

static void test_child_exits_first(void **state) {
        assert_start_fails(CHILD_EXITS, -EPIPE, "the child ended before it handed over the listener (exit status 7)");
}

static void test_child_killed_first(void **state) {
        assert_start_fails(CHILD_KILLED, -EPIPE, "the child ended before it handed over the listener (killed by SIGKILL)");
}

/* it would have waited for ever: ended and reaped, never left to go on to the command */
static void test_child_sends_error(void **state) {
        assert_start_fails(CHILD_SENDS_ERROR, -EACCES, "the seccomp filter cannot be installed: Permission denied");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_listener_handed_over),
                cmocka_unit_test(test_child_exits_first),
                cmocka_unit_test(test_child_killed_first),
                cmocka_unit_test(test_child_sends_error),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
