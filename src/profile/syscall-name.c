/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "syscall-name.h"

/* libseccomp's seccomp.h: __NR_SCMP_ERROR, what seccomp_syscall_resolve_name() returns for an unknown name */
#define SCMP_NAME_ERROR (-1)

typedef int (*ResolveName)(const char *name);

int syscall_name_resolve(const char *name, int *ret_nr) {
        static ResolveName resolve = NULL;
        static bool failed = false;
        int nr;

        if (!resolve) {
                void *dl;

                if (failed)
                        return -ELIBACC;
                /* kept for the process's life: the handle is never closed */
                dl = dlopen(SBX_LIBSECCOMP_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
                resolve = dl ? (ResolveName) dlsym(dl, "seccomp_syscall_resolve_name") : NULL;
                if (!resolve) {
                        failed = true;
                        return -ELIBACC;
                }
        }
        nr = resolve(name);
        if (nr == SCMP_NAME_ERROR)
                return -ENOENT;
        *ret_nr = nr;
        return 0;
}
