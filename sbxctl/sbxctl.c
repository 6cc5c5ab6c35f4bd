/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl: run commands in sbx sandboxes and inspect their records. See sbxctl(1). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "log.h"
#include "options.h"
#include "verbs.h"

int main(int argc, char *argv[]) {
        const char *verb;
        int r;

        log_set_prefix("sbxctl");
        log_open();
        arg_argv = argv;
        arg_host_word = calloc((size_t) argc + 1, sizeof(bool));
        if (!arg_host_word)
                return failed("out of memory");

        /* Options may come before the verb or right after it: "sbxctl run -p x -- cmd". */
        r = parse_argv(argc, argv);
        if (r <= 0)
                return -r;
        if (optind >= argc)
                return refused("no command given (run, create, exec, rm, list, show, stop, profile, gc, capture, secret, export, cache, image); see --help");
        verb = argv[optind];
        optind++;
        if (streq(verb, "run") || streq(verb, "show") || streq(verb, "list") || streq(verb, "stop") ||
            streq(verb, "profile") || streq(verb, "create") || streq(verb, "exec") || streq(verb, "rm") ||
            streq(verb, "gc") || streq(verb, "capture") || streq(verb, "secret") || streq(verb, "export") ||
            streq(verb, "cache") || streq(verb, "image")) {
                r = parse_argv(argc, argv);
                if (r <= 0)
                        return -r;
        }
        argv += optind;
        argc -= optind;
        if (argc > 0 && streq(argv[0], "--") && !streq(verb, "run") && !streq(verb, "exec"))
                argv++, argc--;
        if (arg_host && arg_machine)
                return refused("--host and --machine exclude each other (a container on another host: "
                               "-H HOST/MACHINE)");

        if (streq(verb, "run")) {
                if (argc > 0 && streq(argv[0], "--"))
                        argv++, argc--;
                return verb_run(argv);
        }
        if (streq(verb, "create")) {
                if (argc > 0)
                        return refused("create: unexpected argument '%s' (commands go to exec)", argv[0]);
                return verb_create();
        }
        if (streq(verb, "exec")) {
                const char *sandbox;

                if (argc == 0 || streq(argv[0], "--"))
                        return refused("exec: no sandbox given (usage: sbxctl exec [OPTIONS] SANDBOX -- CMD [ARGS...])");
                sandbox = argv[0];
                r = parse_argv_after_first(argc, argv);
                if (r <= 0)
                        return -r;
                argv += optind;
                if (*argv && streq(*argv, "--"))
                        argv++;
                return verb_exec(sandbox, argv);
        }
        if (streq(verb, "rm"))
                return verb_rm(argv);
        if (streq(verb, "list")) {
                if (argc > 0)
                        return refused("list: unexpected argument '%s'", argv[0]);
                return verb_list();
        }
        if (streq(verb, "show") || streq(verb, "stop")) {
                if (argc != 1)
                        return refused("%s: expected exactly one run id", verb);
                return streq(verb, "show") ? verb_show(argv[0]) : verb_stop(argv[0]);
        }
        if (streq(verb, "capture")) {
                const char *id;

                if (argc == 0)
                        return refused("capture: no run given (usage: sbxctl capture RUN --until=DURATION)");
                id = argv[0];
                r = parse_argv_after_first(argc, argv);
                if (r <= 0)
                        return -r;
                if (optind < argc)
                        return refused("capture: unexpected argument '%s'", argv[optind]);
                return verb_capture(id);
        }
        if (streq(verb, "profile"))
                return verb_profile(argv);
        if (streq(verb, "secret"))
                return verb_secret(argc, argv);
        if (streq(verb, "export"))
                return verb_export(argc, argv);
        if (streq(verb, "cache"))
                return verb_cache(argc, argv);
        if (streq(verb, "image"))
                return verb_image(argc, argv);
        if (streq(verb, "gc")) {
                if (argc > 0)
                        return refused("gc: unexpected argument '%s'", argv[0]);
                return verb_gc();
        }
        return refused("unknown command '%s' (run, create, exec, rm, list, show, stop, profile, gc, capture, secret); see --help", verb);
}
