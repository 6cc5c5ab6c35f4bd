/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run side of sbx's syscall rules, used by the exec helper: install the program that
 * seccomp_rules_compile() made (in the pre-exec child, with a listener), hand the listener to the
 * parent, and there answer every notification with EPERM and count it per syscall.
 *
 * The listener must never reach the command: whoever holds it decides what the caught calls return. */

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Decodes a program from seccomp_rules_compile()'s hex. -EINVAL: not hex, not whole instructions, empty
 * or longer than the kernel takes (BPF_MAXINSNS). */
int seccomp_program_from_hex(const char *hex, struct sock_fprog *ret);
void seccomp_program_done(struct sock_fprog *prog);

/* Installs the program on the calling thread with a listener and returns the listener fd (O_CLOEXEC).
 * The caller must have no_new_privs set (or CAP_SYS_ADMIN). */
int seccomp_install_with_listener(const struct sock_fprog *prog);

/* The hand-over over an AF_UNIX socket: the child sends the listener, or instead the negative errno
 * of why there is none; the parent gets the fd, or that errno, or -EPIPE if the child ended first. */
int seccomp_listener_send(int sock, int listener_or_error);
int seccomp_listener_recv(int sock, int *ret_listener);

typedef struct SeccompDenial {
        int nr;
        uint64_t count;
} SeccompDenial;

typedef struct SeccompDenials {
        SeccompDenial *entries;
        size_t n;
} SeccompDenials;

void seccomp_denials_done(SeccompDenials *d);
int seccomp_denials_add(SeccompDenials *d, int nr);
uint64_t seccomp_denials_get(const SeccompDenials *d, int nr);
/* "ioctl:2,io_uring_setup:1" (names of the native architecture, a number where there is none), "" if
 * none, in the order first seen. */
int seccomp_denials_format(const SeccompDenials *d, char **ret);

/* Receives the next notification. Returns 1 with *ret filled, 0 if there was none to take (its caller
 * died in the meantime, or a signal interrupted us), or a negative errno. Call when the listener is
 * readable: otherwise it blocks. */
int seccomp_notify_next(int listener, struct seccomp_notif *ret);
/* Answers a notification: the call fails with EPERM. Returns 1, or 0 if the caller is gone (killed while
 * it waited: ENOENT), or a negative errno. */
int seccomp_notify_deny(int listener, const struct seccomp_notif *n);
/* next + deny + count: 1 if a call was denied (and counted; also when its caller died before the
 * answer), 0 if there was nothing to take, or a negative errno. */
int seccomp_notify_handle(int listener, SeccompDenials *d);
