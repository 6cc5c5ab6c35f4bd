/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A syscall's number from its name, by libseccomp's table (seccomp_syscall_resolve_name()). libseccomp is
 * loaded on first use (dlopen), not linked: most programs that read profiles (sbxctl, sbx-mcp, the
 * generator) never resolve a name, and a program should not load a library it does not use. */

/* 0 and the number in *ret_nr (the native one; names of other architectures resolve to negative pseudo
 * numbers); -ENOENT: no syscall of that name; -ELIBACC: libseccomp cannot be loaded. Not thread-safe on first use (each program here resolves from one thread). */
int syscall_name_resolve(const char *name, int *ret_nr);
