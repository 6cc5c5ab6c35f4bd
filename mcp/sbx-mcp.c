/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-mcp: the Model Context Protocol server over stdio (man/sbx-mcp.1.md). main() and the options' table:
 * the command line is the user's configuration, which no tool call can change. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp-server.h"
#include "profile-name.h"
#include "profile.h"
#include "util.h"

static McpConfig config = { .output_cap = MCP_OUTPUT_CAP_DEFAULT };

/* 1 to go on, 0 to end with success (--help, --version), -EINVAL after saying what was wrong */
typedef int (*OptionFn)(const char *name, const char *arg);

static int opt_help(const char *name, const char *arg);

static int opt_version(const char *name, const char *arg) {
        puts("sbx-mcp " PACKAGE_VERSION);
        return 0;
}

static int invalid(const char *name, const char *arg, const char *expected) {
        fprintf(stderr, "sbx-mcp: --%s: '%s' is not %s\n", name, arg, expected);
        return -EINVAL;
}

static int opt_profile(const char *name, const char *arg) {
        char *p;

        if (!profile_name_is_valid(arg))
                return invalid(name, arg, "a profile name");
        if (strv_contains(config.profiles, arg))
                return 1;
        p = strdup(arg);
        if (!p || strv_push_take(&config.profiles, p) < 0)
                return free(p), -ENOMEM;
        return 1;
}

/* A directory that exists, kept as its absolute path without symlinks (sbxd takes nothing else) */
static int resolve_dir(const char *name, const char *arg, char **ret) {
        struct stat st;

        if (stat(arg, &st) < 0 || !S_ISDIR(st.st_mode))
                return invalid(name, arg, "a directory");
        *ret = realpath(arg, NULL);
        return *ret ? 1 : invalid(name, arg, "a directory that can be resolved");
}

static int opt_workspace(const char *name, const char *arg) {
        char *p;
        int r;

        r = resolve_dir(name, arg, &p);
        if (r <= 0)
                return r;
        if (strv_contains(config.workspaces, p))
                return free(p), 1;
        if (strv_push_take(&config.workspaces, p) < 0)
                return free(p), -ENOMEM;
        return 1;
}

static int opt_export_dir(const char *name, const char *arg) {
        free(config.export_dir);
        return resolve_dir(name, arg, &config.export_dir);
}

static int opt_size(const char *name, const char *arg, uint64_t *v) {
        if (parse_size(arg, v) < 0 || *v == 0)
                return invalid(name, arg, "a size (e.g. 512M, 2G)");
        return 1;
}

static int opt_memory_max(const char *name, const char *arg) {
        return opt_size(name, arg, &config.memory_max);
}

static int opt_output_cap(const char *name, const char *arg) {
        return opt_size(name, arg, &config.output_cap);
}

static int opt_tasks_max(const char *name, const char *arg) {
        char *end;

        errno = 0;
        config.tasks_max = strtoull(arg, &end, 10);
        if (errno != 0 || end == arg || *end || config.tasks_max == 0 || arg[0] == '-')
                return invalid(name, arg, "a positive number");
        return 1;
}

static int opt_timeout_max(const char *name, const char *arg) {
        if (parse_duration(arg, &config.timeout_max) < 0 || config.timeout_max == 0)
                return invalid(name, arg, "a duration (e.g. 90s, 5min, 1h)");
        return 1;
}

static int opt_keep(const char *name, const char *arg) {
        config.keep_sandboxes = true;
        return 1;
}

typedef struct Option {
        const char *name;
        char short_name;
        const char *arg;        /* what it takes, for --help; NULL: nothing */
        OptionFn fn;
        const char *help;
} Option;

static const Option options[] = {
        { "profile",        0,   "NAME",     opt_profile,     "a profile tools may use (repeatable; the first is the default)" },
        { "workspace",      0,   "DIR",      opt_workspace,   "a workspace a call may name (repeatable; the first is the default)" },
        { "export-dir",     0,   "DIR",      opt_export_dir,  "where the export tool delivers" },
        { "memory-max",     0,   "SIZE",     opt_memory_max,  "the highest memory ceiling a call may ask for" },
        { "tasks-max",      0,   "N",        opt_tasks_max,   "the highest tasks ceiling a call may ask for" },
        { "timeout-max",    0,   "DURATION", opt_timeout_max, "the highest timeout a call may ask for" },
        { "output-cap",     0,   "SIZE",     opt_output_cap,  "bytes of stdout and of stderr kept per call (64K)" },
        { "keep-sandboxes", 0,   NULL,       opt_keep,        "sandboxes this server makes outlive it" },
        { "help",           'h', NULL,       opt_help,        "show this help" },
        { "version",        0,   NULL,       opt_version,     "show the version" },
};

static int opt_help(const char *name, const char *arg) {
        printf("sbx-mcp [OPTIONS]\n\n"
               "The sbx sandbox as a Model Context Protocol server on stdin and stdout.\n\n");
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                char left[64];

                snprintf(left, sizeof(left), "%c%c%c --%s%s%s", options[i].short_name ? '-' : ' ',
                         options[i].short_name ?: ' ', options[i].short_name ? ',' : ' ', options[i].name,
                         options[i].arg ? " " : "", strempty(options[i].arg));
                printf("  %-30s %s\n", left, options[i].help);
        }
        printf("\nSee sbx-mcp(1) and docs/mcp.md.\n");
        return 0;
}

/* 1 to serve, 0 to end with success, < 0 to fail */
static int parse_argv(int argc, char *argv[]) {
        struct option longopts[ELEMENTSOF(options) + 1] = {};
        int c;

        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                longopts[i] = (struct option) { options[i].name, options[i].arg ? required_argument : no_argument, NULL,
                                                options[i].short_name ?: 0x100 + (int) i };
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0) {
                const Option *o = NULL;
                int r;

                if (c == '?')
                        return -EINVAL;
                for (size_t i = 0; i < ELEMENTSOF(options) && !o; i++)
                        if (c == (options[i].short_name ?: 0x100 + (int) i))
                                o = &options[i];
                if (!o)
                        return -EINVAL;
                r = o->fn(o->name, optarg);
                if (r <= 0)
                        return r;
        }
        if (optind < argc) {
                fprintf(stderr, "sbx-mcp: unexpected argument '%s' (the server takes only options)\n", argv[optind]);
                return -EINVAL;
        }
        /* none given: sbxd's own default */
        if (!config.profiles)
                return opt_profile("profile", PROFILE_DEFAULT);
        return 1;
}

int main(int argc, char *argv[]) {
        int r;

        r = parse_argv(argc, argv);
        if (r == -ENOMEM)
                fputs("sbx-mcp: out of memory\n", stderr);
        if (r > 0) {
                r = mcp_server_run(&config);
                if (r < 0)
                        fprintf(stderr, "sbx-mcp: %s\n", strerror(-r));
        }
        strv_free(config.profiles);
        strv_free(config.workspaces);
        free(config.export_dir);
        return r < 0 ? 1 : 0;
}
