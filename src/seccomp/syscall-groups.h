/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd's syscall groups ("@system-service", ...) as the build host's systemd lists them, expanded to
 * syscall names: for filters sbx applies itself with systemd's meaning of a profile's process.syscalls
 * (the gVisor tier's, helper/gvisor.h). Pure. */

typedef struct SyscallGroup {
        const char *name;                /* "@NAME" */
        const char *const *members;      /* names and "@groups", NULL-terminated */
} SyscallGroup;

/* The names the entries stand for, groups expanded (nested ones too), each once, in first-seen order.
 * A plain name is kept as it is. -ENOENT for a group systemd does not know, -ENOMEM. */
int syscall_groups_expand(char *const *entries, char ***ret);
