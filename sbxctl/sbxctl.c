/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl: run commands in sbx sandboxes and inspect their records. See sbxctl(1). main() reads the options
 * and calls the verb from one table; each verb family is a file of its own (verbs.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "log.h"
#include "options.h"
#include "verbs.h"

static const Verb verbs[] = {
        { "run",     0, VERB_ANY, verb_run,     VERB_COMMAND },
        { "create",  0, 0,        verb_create,  .hint = " (commands go to exec)" },
        { "exec",    0, VERB_ANY, verb_exec,    VERB_COMMAND },
        { "rm",      1, VERB_ANY, verb_rm,      .usage = "expected one or more sandbox ids or names" },
        { "list",    0, 0,        verb_list },
        { "show",    1, 1,        verb_show,    .usage = "expected exactly one run id" },
        { "stop",    1, 1,        verb_stop,    .usage = "expected exactly one run id" },
        { "gc",      0, 0,        verb_gc },
        { "capture", 1, VERB_ANY, verb_capture, .usage = "no run given (usage: sbxctl capture RUN --until=DURATION)" },
        { "profile", 0, VERB_ANY, verb_profile },
        { "secret",  0, VERB_ANY, verb_secret },
        { "export",  0, VERB_ANY, verb_export },
        { "cache",   0, VERB_ANY, verb_cache },
        { "image",   0, VERB_ANY, verb_image },
        {}
};

/* The verb at argv[optind], its options read (they may come right after it: "sbxctl run -p x -- cmd"),
 * its words checked against its entry, and called. */
static int dispatch_verb(int argc, char *argv[]) {
        const char *name;
        const Verb *v;
        int r;

        if (optind >= argc)
                return refused("no command given (run, create, exec, rm, list, show, stop, profile, gc, capture, secret, export, cache, image); see --help");
        name = argv[optind++];
        v = verb_find(verbs, name);
        if (v) {
                r = parse_argv(argc, argv);
                if (r <= 0)
                        return -r;
        }
        argv += optind;
        argc -= optind;
        if (argc > 0 && streq(argv[0], "--") && !(v && (v->flags & VERB_COMMAND)))
                argv++, argc--;
        if (arg_host && arg_machine)
                return refused("--host and --machine exclude each other (a container on another host: "
                               "-H HOST/MACHINE)");
        if (!v)
                return refused("unknown command '%s' (run, create, exec, rm, list, show, stop, profile, gc, capture, secret); see --help", name);
        r = verb_check_args(v, NULL, argc, argv);
        if (r != 0)
                return r;
        return v->run(argc, argv);
}

int main(int argc, char *argv[]) {
        int r;

        log_set_prefix("sbxctl");
        log_open();
        arg_argv = argv;
        arg_host_word = calloc((size_t) argc + 1, sizeof(bool));
        if (!arg_host_word)
                return failed("out of memory");

        r = parse_argv(argc, argv);
        if (r <= 0)
                return -r;
        return dispatch_verb(argc, argv);
}
