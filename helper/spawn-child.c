/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "macro.h"
#include "spawn-child.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* the child's stack when memory is shared: what it runs before execve() (execvp()'s path on the stack,
 * Landlock, the syscall program's hand-over, an error line) needs a few KiB */
#define SPAWN_STACK_SIZE (256 * 1024)
/* ... of which it uses the top few pages (taken in by spawn_prepare()) */
#define SPAWN_STACK_USED (16 * 1024)
/* spawn_prepare() takes in no mapping larger than this (a library's code and data are smaller) */
#define SPAWN_PREFAULT_MAX (8 * 1024 * 1024)

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

/* the shared-memory child's stack (set up once, kept for the process's life) */
static void *spawn_stack;
/* the signals whose disposition was not the default at spawn_prepare(), and SIGCHLD (supervise.c's) */
static sigset_t spawn_handled;
static bool spawn_prepared;

/* A mapping of /proc/self/maps this process will use again: taken in now. A private writable one gets
 * its own copy of each page (what a write after fork() would copy, one fault each); one that is only
 * read (code, constants) gets its page table entries (what a new process faults in page by page).
 * Special mappings ([vvar], [vdso]) and large ones are left alone. Best-effort: a kernel without
 * MADV_POPULATE_* (before 5.14) refuses, and the faults come as they did. */
static void prefault_mapping(const char *line) {
        uintptr_t start, end;
        char perms[5] = "";
        int path = 0;

        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %*s %n", &start, &end, perms, &path) < 3 ||
            perms[0] != 'r' || perms[3] != 'p' || end <= start || end - start > SPAWN_PREFAULT_MAX)
                return;
        if (path > 0 && line[path] == '[' && !strneq(line + path, "[heap]", 6) && !strneq(line + path, "[stack]", 7))
                return;
        if (spawn_stack && start < (uintptr_t) spawn_stack + SPAWN_STACK_SIZE && end > (uintptr_t) spawn_stack)
                return; /* the child's stack: its top only, below */
        (void) madvise((void *) start, end - start, perms[1] == 'w' ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

/* the signals to reset in the child, and its stack */
static void prepare_child(bool share_memory) {
        if (!spawn_prepared) {
                sigemptyset(&spawn_handled);
                sigaddset(&spawn_handled, SIGCHLD);
                for (int s = 1; s < _NSIG; s++) {
                        struct sigaction sa;

                        if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
                                sigaddset(&spawn_handled, s);
                }
                spawn_prepared = true;
        }
        if (share_memory && !spawn_stack) {
                /* with a page below it that faults */
                long page = sysconf(_SC_PAGESIZE);
                void *m = mmap(NULL, SPAWN_STACK_SIZE + page, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

                if (m != MAP_FAILED && mprotect(m, page, PROT_NONE) == 0)
                        spawn_stack = (char *) m + page;
                else if (m != MAP_FAILED)
                        (void) munmap(m, SPAWN_STACK_SIZE + page);
        }
}

void spawn_prepare(bool share_memory) {
        _cleanup_free_ char *maps = NULL;

        prepare_child(share_memory);
        if (spawn_stack) /* the pages the child writes before its execve() */
                (void) madvise((char *) spawn_stack + SPAWN_STACK_SIZE - SPAWN_STACK_USED, SPAWN_STACK_USED,
                               MADV_POPULATE_WRITE);
        if (read_file_at(AT_FDCWD, "/proc/self/maps", 1024 * 1024, &maps, NULL) < 0)
                return;
        for (char *line = maps, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = 0;
                prefault_mapping(line);
        }
}

typedef struct SpawnCall {
        void (*fn)(void *);
        void *userdata;
} SpawnCall;

static int spawn_main(void *p) {
        SpawnCall *c = p;

        /* the default disposition for each signal the helper handles or ignores (an ignored one would
         * stay ignored across execve()); the others have it already */
        for (int s = 1; s < _NSIG; s++)
                if (sigismember(&spawn_handled, s) == 1)
                        (void) signal(s, SIG_DFL);
        c->fn(c->userdata);
        _exit(SBX_EXIT_FAILURE);
}

pid_t spawn_child(bool share_memory, void (*fn)(void *userdata), void *userdata) {
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
        prepare_child(share_memory);
        if (share_memory && spawn_stack)
                pid = clone(spawn_main, (char *) spawn_stack + SPAWN_STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD,
                            &call);
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
