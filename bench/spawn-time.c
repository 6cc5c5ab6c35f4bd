/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/spawn-time.c - the clock of the shell benches (bench/lib.sh's T and took): runs one command and
 * writes how long it took.
 *
 *   spawn-time FILE COMMAND [ARG...]
 *
 * Starts COMMAND (looked up in PATH) with posix_spawnp(), which shares this small process's memory until
 * the command's execve() instead of copying it, waits for it, and writes the milliseconds from just
 * before the start to its reaping into FILE (one line, replaced). The command inherits the environment
 * and the descriptors (stdin, stdout, stderr). Exits with the command's status (128 + the signal that
 * ended it), 127 when it cannot be started, 125 for a usage error or one of its own.
 *
 * Why: a sample taken around a command that bash starts counts bash's fork() too, a copy of the shell's
 * page tables and then of each page either side writes; where page faults are expensive (natively on
 * these machines /bin/true took 4.9 ms started by bash, 2.1 ms started by posix_spawn()), that is the
 * same few milliseconds on both sides of every ratio, which pulls a ratio of a short command to a long
 * one towards 1. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
        long long t0, t1;
        char line[64];
        pid_t pid;
        int status, e, fd, n;

        if (argc < 3) {
                fprintf(stderr, "usage: spawn-time FILE COMMAND [ARG...]\n");
                return 125;
        }
        t0 = now_ns();
        e = posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ);
        if (e != 0) {
                fprintf(stderr, "spawn-time: %s: %s\n", argv[2], strerror(e));
                return 127;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        fprintf(stderr, "spawn-time: waitpid: %s\n", strerror(errno));
                        return 125;
                }
        t1 = now_ns();

        n = snprintf(line, sizeof(line), "%lld.%03lld\n", (t1 - t0) / 1000000, (t1 - t0) / 1000 % 1000);
        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, line, (size_t) n) != n || close(fd) < 0) {
                fprintf(stderr, "spawn-time: cannot write %s: %s\n", argv[1], strerror(errno));
                return 125;
        }
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WEXITSTATUS(status);
}
