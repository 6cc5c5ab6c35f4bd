/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock's system calls (landlock.h). Raw syscall(): glibc has no wrappers. The constants a header
 * older than the running kernel lacks are defined here; the kernel's ABI says which of them it takes. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "macro.h"
#include "util.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6. An older kernel takes the larger struct as long as the
 * fields it does not know are 0. */
typedef struct LandlockRulesetAttr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net; /* always 0: not handled */
        uint64_t scoped;
} LandlockRulesetAttr;

/* ABI 1's rights: everything one can do to a file or below a directory */
#define LANDLOCK_FS_RIGHTS_V1                                                                                       \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |                \
         LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |             \
         LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                 \
         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |              \
         LANDLOCK_ACCESS_FS_MAKE_SYM)
/* the rights that apply to a file itself (a rule on a file may grant only these) */
#define LANDLOCK_FS_RIGHTS_FILE                                                                                     \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |                \
         LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LANDLOCK_FS_RIGHTS_READ                                                                                     \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

int landlock_abi(void) {
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

        if (abi < 0)
                return negative_errno();
        return abi > 0 ? (int) abi : -EOPNOTSUPP;
}

uint64_t landlock_fs_rights(int abi) {
        uint64_t r = 0;

        if (abi >= 1)
                r |= LANDLOCK_FS_RIGHTS_V1;
        if (abi >= 2)
                r |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                r |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return r;
}

uint64_t landlock_scopes(int abi) {
        return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

/* One rule below path. 0 when added, 1 when skipped (not there, or not reachable), else -errno. */
static int add_path_rule(int ruleset, const char *path, uint64_t rights, bool required) {
        struct landlock_path_beneath_attr rule = {};
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
        struct stat st;

        if (fd < 0) {
                if (!required && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
                        return 1;
                return negative_errno();
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                rights &= LANDLOCK_FS_RIGHTS_FILE;
        rule.allowed_access = rights;
        rule.parent_fd = fd;
        if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
                return negative_errno();
        return 0;
}

int landlock_ruleset_make(int abi, char *const *ro, char *const *rw, const char *required, bool scoped,
                          char **ret_error) {
        LandlockRulesetAttr attr = {
                .handled_access_fs = landlock_fs_rights(abi),
                .scoped = scoped ? landlock_scopes(abi) : 0,
        };
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (attr.handled_access_fs == 0)
                return error_setf(ret_error, -EINVAL, "Landlock ABI %d is not one sbx knows", abi);
        fd = (int) syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0) {
                r = negative_errno();
                return error_setf(ret_error, r, "cannot create a Landlock ruleset (ABI %d): %s", abi, strerror(-r));
        }
        for (size_t pass = 0; pass < 2; pass++)
                for (char *const *p = pass == 0 ? ro : rw; p && *p; p++) {
                        uint64_t rights = pass == 0 ? attr.handled_access_fs & LANDLOCK_FS_RIGHTS_READ :
                                                      attr.handled_access_fs;

                        r = add_path_rule(fd, *p, rights, streq_ptr(*p, required));
                        if (r < 0)
                                return error_setf(ret_error, r, "cannot add the Landlock rule for %s (%s): %s", *p,
                                                  pass == 0 ? "read" : "read-write", strerror(-r));
                }
        return TAKE_FD(fd);
}

int landlock_enforce(int ruleset_fd) {
        if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) < 0)
                return negative_errno();
        return 0;
}
