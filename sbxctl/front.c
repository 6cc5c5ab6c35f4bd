/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl: the program a person or an agent starts (sbxctl(1)). It maps libc and json-c alone: a run or an
 * exec on this machine without a terminal goes from here to sbxd's own socket (run-direct.c), which is the
 * path of nearly every run and command an agent makes, and is started in a third of the time a program
 * linking libsystemd's chain of libraries takes. Everything else (every other verb, -H, -M, a terminal,
 * the system bus) is sbxctl-bus's, in SBX_LIBEXECDIR: the same command line is passed to it unchanged,
 * once its options were read here without a word said (a wrong option is said here, as sbxctl-bus would
 * say it). */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "front.h"
#include "log.h"
#include "options.h"

const char *sbxctl_bus_path(void) {
        static char path[PATH_MAX];
        ssize_t n;
        char *slash;

        if (path[0])
                return path;
        n = readlink("/proc/self/exe", path, sizeof path - sizeof "sbxctl-bus");
        if (n > 0) {
                path[n] = 0;
                slash = strrchr(path, '/');
                if (slash) {
                        strcpy(slash + 1, "sbxctl-bus");
                        if (access(path, X_OK) == 0)
                                return path;
                }
        }
        strcpy(path, SBXCTL_BUS_PATH);
        return path;
}

int main(int argc, char *argv[]) {
        _cleanup_strv_free_ char **orig = NULL;
        int r;

        log_set_prefix("sbxctl");
        log_open();
        /* getopt may not reorder them ('+'), but the words go on as they came, whatever it did */
        orig = strv_copy(argv);
        arg_argv = argv;
        arg_host_word = calloc((size_t) argc + 1, sizeof(bool));
        if (!orig || !arg_host_word)
                return failed("out of memory");

        r = parse_argv(argc, argv);
        if (r <= 0)
                return -r;
        if (optind < argc && (streq(argv[optind], "run") || streq(argv[optind], "exec"))) {
                bool run = streq(argv[optind++], "run");

                /* the verb's options may come right after it, as sbxctl-bus reads them */
                r = parse_argv(argc, argv);
                if (r <= 0)
                        return -r;
                r = (run ? run_direct : exec_direct)(argc - optind, argv + optind, orig);
                if (r != RUN_DIRECT_ELSEWHERE)
                        return r;
        }
        fflush(stdout);
        execv(sbxctl_bus_path(), orig);
        return failed("cannot run %s: %m", sbxctl_bus_path());
}
