/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A profile's argument-level syscall rules (profile.h) as a seccomp program for the native architecture.
 *
 * Compiling is pure: libseccomp builds the program and exports it, nothing is loaded into the kernel and
 * the kernel is not probed (sbxd runs under a syscall filter that forbids seccomp()). The exec helper
 * installs the program right before the command starts (seccomp-notify.h). */

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

/* Builds the program: every call is allowed, except
 *   - a call matching a rule makes a user notification (SECCOMP_RET_USER_NOTIF); the exec helper answers
 *     it with EPERM and counts it;
 *   - seccomp() makes a user notification too: the command must not install a filter with a listener
 *     of its own, which would take over these notifications (the newest filter wins a tie) and could
 *     let the calls through;
 *   - calls of another architecture (i386 through int 0x80, x32) fail with EPERM: the rules are
 *     written for the native one only;
 *   - socket() and socketpair() of AF_UNIX SOCK_DGRAM (with any of SOCK_CLOEXEC, SOCK_NONBLOCK) fail
 *     with EACCES in the kernel, without a notification (not counted): the command cannot address
 *     systemd's notify socket, whose refusals of messages not from the main PID systemd logs without a
 *     rate limit.
 * A rule with arg32 compares the low 32 bits of the argument whatever its upper half holds (the kernel
 * truncates e.g. ioctl's request number to 32 bits; libseccomp's own 32-bit comparisons still compare
 * the upper half with 0). Comparisons are unsigned.
 * Returns the program (the raw struct sock_filter array) as lower-case hex in *ret_hex. On failure
 * returns a negative errno; -EINVAL comes with a one-line message naming the rule in *ret_error. */
int seccomp_rules_compile(const SyscallRule *rules, size_t n, char **ret_hex, char **ret_error);

/* Whether a rule names a call the exec helper's child makes once the program is in force and before the
 * command runs, or when it cannot run: execve() (execvp()'s), write() and writev() (the line saying why
 * it cannot), exit() and exit_group(). Such a call waits for the helper's answer, so that the child may
 * then not share the helper's memory, which suspends the helper until the child's execve()
 * (helper/spawn-child.h: sbxd passes --spawn-shared only where this is false). */
bool seccomp_rules_catch_child_calls(const SyscallRule *rules, size_t n);

/* The name of a syscall number of the native architecture; -ENOENT if there is none. */
int seccomp_syscall_name(int nr, char **ret);
