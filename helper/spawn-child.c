/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exit-codes.h"
#include "macro.h"
#include "spawn-child.h"

/* the child's stack when memory is shared: what it runs before execve() (execvp()'s path on the stack,
 * Landlock, the syscall program's hand-over, an error line) needs a few KiB */
#define SPAWN_STACK_SIZE (256 * 1024)

/* a: "NAME=VALUE"; whether b sets the same NAME */
static bool same_name(const char *a, const char *b) {
        return strncmp(a, b, strcspn(a, "=") + 1) == 0;
}

char **spawn_environ(char **extra) {
        size_t n = 0, k = 0;
        char **e;

        for (char **p = environ; p && *p; p++)
                n++;
        for (char **p = extra; p && *p; p++)
                n++;
        e = calloc(n + 1, sizeof(char *));
        if (!e)
                return NULL;
        for (char **p = environ; p && *p; p++)
                if (!strneq(*p, "NOTIFY_SOCKET=", 14) && !strneq(*p, "SBX_PROFILE_DIGEST=", 19))
                        e[k++] = *p;
        for (char **p = extra; p && *p; p++) {
                size_t i;

                if (!strchr(*p, '='))
                        continue; /* sbxd sends NAME=VALUE only */
                for (i = 0; i < k && !same_name(*p, e[i]); i++)
                        ;
                e[i] = *p;
                if (i == k)
                        k++;
        }
        e[k] = NULL;
        return e;
}

typedef struct SpawnCall {
        void (*fn)(void *);
        void *userdata;
} SpawnCall;

static int spawn_main(void *p) {
        SpawnCall *c = p;

        c->fn(c->userdata);
        _exit(SBX_EXIT_FAILURE);
}

pid_t spawn_child(bool share_memory, void (*fn)(void *userdata), void *userdata) {
        static void *stack = NULL;
        SpawnCall call = { .fn = fn, .userdata = userdata };
        char **saved_environ = environ;
        sigset_t all, old;
        pid_t pid;
        int e;

        /* no handler of ours may run in the child, on memory it shares or on a copy: the child resets
         * them all, then unblocks */
        sigfillset(&all);
        if (sigprocmask(SIG_SETMASK, &all, &old) < 0)
                return -errno;
        if (share_memory && !stack) {
                /* kept for the process's life, with a page below it that faults */
                long page = sysconf(_SC_PAGESIZE);
                void *m = mmap(NULL, SPAWN_STACK_SIZE + page, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

                if (m != MAP_FAILED && mprotect(m, page, PROT_NONE) == 0)
                        stack = (char *) m + page;
                else if (m != MAP_FAILED)
                        (void) munmap(m, SPAWN_STACK_SIZE + page);
        }
        if (share_memory && stack)
                pid = clone(spawn_main, (char *) stack + SPAWN_STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD, &call);
        else {
                pid = fork();
                if (pid == 0)
                        spawn_main(&call);
        }
        e = errno;
        /* the child may have pointed environ at the command's before its execve() */
        environ = saved_environ;
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        return pid < 0 ? -e : pid;
}
