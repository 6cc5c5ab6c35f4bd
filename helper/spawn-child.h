/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The command's process, from the helper (or a sandbox's supervisor) to the command's execve().
 *
 * A fork() copies the helper's page tables, and then each page either side writes, and the child maps
 * again each page of code it runs: on the path of every run and exec. Where it is safe, the child is
 * started as posix_spawn() starts one instead: clone(CLONE_VM | CLONE_VFORK) on a stack of its own, the
 * helper's memory shared and the helper suspended until the child has called execve() or has ended. The
 * child then must not change what the helper uses: it gets its environment as one finished array
 * (spawn_environ()), writes nothing but its own stack and its file descriptors (its own table), and
 * blocks on nothing the helper would have to answer. The one such thing is the profile's syscall rules:
 * a call they catch waits for the helper's answer, and the helper waits for the child. So memory is
 * shared only where no rule names a call the child makes once the rules are in force (sbxd says so:
 * seccomp_rules_catch_child_calls(), the helper's --spawn-shared), or where there are no rules. */

#include <stdbool.h>
#include <sys/types.h>

/* The environment of a command: the helper's own without NOTIFY_SOCKET and SBX_PROFILE_DIGEST (neither is
 * the command's), then each of extra ("NAME=VALUE", as sbxd checked them) in order, replacing an entry of
 * the same name. The array is new (free() it), its strings are the helper's and extra's. NULL on ENOMEM. */
char **spawn_environ(char **extra);

/* What spawn_child() needs, done before it is needed, by a process that waits for its command (a
 * sandbox's spare supervisor, a pooled run's helper). Notes which signals have a handler or are ignored
 * (the child resets those: the helper sets no handler after this but SIGCHLD's, which is always reset),
 * sets up the child's stack where memory will be shared, and takes in the pages this process will touch
 * again: its own copies of the pages it writes (each copy-on-write since a fork()) and its mappings of
 * the code it runs (which a new or forked process faults in as it goes). So the page faults come here,
 * while nothing waits, not on the command's path. Costs the copies of the process's written pages (a
 * few hundred KiB). */
void spawn_prepare(bool share_memory);

/* Starts fn(userdata) in a new process, which must end in execve() or _exit() and never return; with
 * share_memory as described above, else by fork(). Signals are blocked in the child until fn unblocks
 * them; each signal with a handler or ignored (at spawn_prepare(), or a handler for SIGCHLD set since) is
 * reset to its default first. Returns its pid, or a negative errno. */
pid_t spawn_child(bool share_memory, void (*fn)(void *userdata), void *userdata);
