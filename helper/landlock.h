/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Landlock: a second file-system wall around the command (docs/security.md, "Landlock"). The run's
 * mounts already make the OS read-only; the ruleset the policy computes (policy_landlock_options())
 * says the same once more in the kernel's own terms, so that a mount misconfiguration alone does not
 * open a file to writing. The helper builds the ruleset once, before the command comes; the command's
 * child enforces it on itself right before execve(). */

/* The ABI the kernel offers (1, 2, ...), or -EOPNOTSUPP (built in but not enabled at boot) / -ENOSYS
 * (not built) / another negative errno. */
int landlock_abi(void);

/* The file-system rights an ABI knows (all of which the ruleset handles): 1 the base rights, 2 +REFER,
 * 3 +TRUNCATE, 5 +IOCTL_DEV. Network rights (ABI 4) are never handled: egress is sbx's BPF programs'. */
uint64_t landlock_fs_rights(int abi);
/* The scopes an ABI knows (6: abstract unix sockets, signals); 0 before. */
uint64_t landlock_scopes(int abi);

/* A ruleset at abi: read and execute below each of ro, everything below each of rw (files: the rights
 * that apply to files), with scopes when scoped. A path that does not exist, or that the run cannot
 * reach, is skipped, except required (HOME). Returns the ruleset's fd (close-on-exec), or a negative
 * errno with a message in *ret_error. */
int landlock_ruleset_make(int abi, char *const *ro, char *const *rw, const char *required, bool scoped,
                          char **ret_error);

/* In the command's child, after no_new_privs: the ruleset holds for it and everything it starts. */
int landlock_enforce(int ruleset_fd);
