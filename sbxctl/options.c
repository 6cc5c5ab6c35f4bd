/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl's options: --help, and the parser that sets the options' values (common.h) before the verb and
 * after its first word, from one table of the options. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command-line.h"
#include "common.h"
#include "options.h"
#include "policy.h"
#include "profile-load.h"

static int help(void) {
        printf("Usage: sbxctl [OPTIONS] COMMAND ...\n\n"
               "Run commands in sbx sandboxes (transient systemd units) and inspect their records.\n\n"
               "Commands:\n"
               "  run [OPTIONS] -- CMD [ARGS...]  Run CMD in a sandbox; exit with its status\n"
               "  create [OPTIONS]                Start a long-lived sandbox; print its id\n"
               "  exec [OPTIONS] SANDBOX -- CMD   Run CMD in a sandbox; exit with its status\n"
               "  rm SANDBOX...                   Remove sandboxes (their commands are stopped)\n"
               "  list [--all]                    List runs and sandboxes (newest last)\n"
               "  show [--json] RUN               Show the record of a run\n"
               "  stop RUN                        Stop a running run\n"
               "  gc                              Stop overdue runs, check cleanups, prune old records\n"
               "  capture RUN --until=DURATION    Copy a running run's output to a root-only file (admin)\n"
               "  profile list                    List profiles (and invalid profile files)\n"
               "  profile show [NAME|FILE]        Show a profile's effective policy and unit properties\n"
               "  profile check FILE...           Validate profile files\n"
               "  profile reload                  Regenerate slices and drop-ins (systemd daemon-reload)\n"
               "  secret add [--replace] NAME     Store a secret (read from stdin), encrypted at rest\n"
               "  secret list                     List your secrets (names only)\n"
               "  secret rm NAME...               Remove secrets\n"
               "  export SANDBOX PATH --to=DIR    Review PATH (in a sandbox's HOME) into DIR now\n"
               "  export approve RUN [ITEM...]    Deliver what a run's export review held\n"
               "  export reject RUN [ITEM...]     Discard what a run's export review held\n"
               "  cache list                      List your named caches (size, last use, expiry)\n"
               "  cache rm PROFILE/CACHE...       Remove caches of yours\n"
               "  cache prune                     Remove your caches past their retention\n"
               "  image import NAME FILE|DIR      Import a base image (squashfs/erofs, or a tree)\n"
               "  image list                      List the base images\n"
               "  image rm NAME[@sha256:DIGEST]   Remove an image (every version, or one)\n\n"
               "Run options:\n"
               "  -p --profile=NAME     Profile (default: %s)\n"
               "  -w --workspace=DIR    Bind DIR read-write as the working directory\n"
               "     --dataset=DIR      Bind DIR read-only as ~/dataset (if the profile allows)\n"
               "     --network=MODE     Narrow the network (none), if the profile allows\n"
               "     --memory=SIZE      Memory ceiling, at most the profile's (e.g. 512M)\n"
               "     --tasks=N          Process/thread ceiling, at most the profile's\n"
               "     --cpu=PERCENT      CPU quota, at most the profile's (e.g. 50%%; 100%% = one CPU)\n"
               "     --timeout=DURATION Wall-time ceiling, at most the profile's (e.g. 90s, 5min)\n"
               "     --credential=NAME  Give the run your secret NAME as a file in\n"
               "                        $CREDENTIALS_DIRECTORY (if the profile allows NAME)\n"
               "     --credential=NAME=@FILE  The same with FILE's content as the value\n"
               "     --cache-ro=NAME    Take the profile's cache NAME read-only (repeatable)\n"
               "     --export=DIR       Review the run's ~/out when it ends; deliver what passes\n"
               "                        into DIR (if the profile exports through review)\n"
               "     --image=NAME[@sha256:DIGEST]  Pin the digest of the profile's base image\n"
               "     --wait-cleanup     Return once the run's cleanup is done too, not as soon as\n"
               "                        its command has ended (run)\n"
               "  -E --setenv=NAME[=VALUE]  Set NAME in the command's environment (repeatable;\n"
               "                        without a value: sbxctl's own), if the profile allows NAME\n"
               "     --env-file=FILE    Set the NAME=VALUE lines of FILE (before -E; also exec)\n"
               "  A profile decides which of these a run may set, and within what bounds.\n\n"
               "Sandbox options (create; also the run options above):\n"
               "     --name=NAME        A name to use instead of the id (unique among yours)\n"
               "     --idle-timeout=DURATION  Remove it after this long without a command\n"
               "     --detach           Print the id and return; it stays until rm, its idle\n"
               "                        timeout or its wall-time ceiling (without --detach\n"
               "                        sbxctl waits, and Ctrl-C removes it)\n"
               "Exec options:\n"
               "     --timeout=DURATION Kill the command after this long (exit status 124)\n"
               "     --output-max=SIZE  Pass at most SIZE bytes of its stdout+stderr\n"
               "  -t --tty              A terminal for the command (also run; the default when\n"
               "                        stdin and stdout are terminals)\n"
               "  -T --no-tty           No terminal: stdin, stdout and stderr as they are (also run)\n\n"
               "Machine options:\n"
               "  -H --host=[USER@]HOST[:PORT][/MACHINE]\n"
               "                        The sbxd of HOST (or of a container there), over ssh;\n"
               "                        run and exec run sbxctl on HOST through ssh\n"
               "  -M --machine=MACHINE  The sbxd of a local container (systemd-machined)\n\n"
               "Other options:\n"
               "     --until=DURATION   How long to capture, and keep the copy (capture)\n"
               "     --to=DIR           Where a sandbox's export goes (export SANDBOX PATH), or\n"
               "                        approved items go (export approve; default: the run's\n"
               "                        --export directory)\n"
               "     --json             JSON output (list, show, gc, capture; run: the limit lines as JSON)\n"
               "     --quiet            No end-of-run lines on stderr (run: limits, egress)\n"
               "     --no-legend        No header line (list)\n"
               "     --all              Every user's runs (list; root or polkit's\n"
               "                        org.sbx.manage-all-runs)\n"
               "  -h --help             Show this help\n"
               "     --version          Show the version\n\n"
               "Exit status of run: the command's status; 128+N if it was killed by signal N;\n"
               "124 wall-time limit; 125 request refused; 123 sbx could not run it;\n"
               "122 stopped at the profile's output limit;\n"
               "126/127 command not executable/not found; 130/143 cancelled by SIGINT/SIGTERM;\n"
               "137 out of memory; 255 with -H or -M: the machine could not be reached.\n"
               "See sbxctl(1).\n",
               PROFILE_DEFAULT);
        return 0;
}

/* ---- the options that need more than a value stored ---- */

static int option_help(const char *arg, char **argv, int first) {
        return help(), 0;
}

static int option_version(const char *arg, char **argv, int first) {
        return printf("sbxctl %s%s\n", PACKAGE_VERSION, SBX_BUILD_KIND), 0;
}

static int option_host(const char *arg, char **argv, int first) {
        if (parse_host(arg, NULL, NULL, NULL) < 0)
                return -refused("--host: '%s' is not [USER@]HOST[:PORT][/MACHINE]", arg);
        arg_host = arg;
        /* the words that said it (-H HOST, -HHOST, --host=HOST): not for sbxctl on HOST */
        for (int i = first; i < optind; i++)
                if (arg_argv && argv + i >= arg_argv)
                        arg_host_word[argv + i - arg_argv] = true;
        return 1;
}

static int option_tty(const char *arg, char **argv, int first) {
        arg_tty = 1;
        return 1;
}

static int option_no_tty(const char *arg, char **argv, int first) {
        arg_tty = 0;
        return 1;
}

static int option_machine(const char *arg, char **argv, int first) {
        if (!machine_name_ok(arg))
                return -refused("--machine: '%s' is not a machine name", arg);
        arg_machine = arg;
        return 1;
}

static int option_credential(const char *arg, char **argv, int first) {
        const char *eq = strchr(arg, '=');
        _cleanup_free_ char *name = eq ? strndup(arg, (size_t) (eq - arg)) : strdup(arg);
        char ***l = eq ? &arg_credential_files : &arg_credentials;
        size_t n = strv_length(*l);
        char **t;

        if (!name)
                return -failed("out of memory");
        if (!credential_name_is_valid(name))
                return -refused("--credential: '%s' is not a credential name ([a-z][a-z0-9_-]{0,63})", name);
        /* (not the argument itself: it may be a value given by mistake) */
        if (eq && (eq[1] != '@' || eq[2] == 0))
                return -refused("--credential: expected %s or %s=@FILE", name, name);
        if (eq && strv_length(arg_credential_files) / 2 >= SBX_CREDENTIAL_FDS_MAX)
                return -refused("--credential: at most %u given as =@FILE", SBX_CREDENTIAL_FDS_MAX);
        t = realloc(*l, (n + 3) * sizeof(char *));
        if (!t)
                return -failed("out of memory");
        *l = t;
        t[n] = TAKE_PTR(name);
        t[n + 1] = eq ? strdup(eq + 2) : NULL;
        t[n + 2] = NULL;
        if (eq && !t[n + 1])
                return -failed("out of memory");
        return 1;
}

static int option_cache_ro(const char *arg, char **argv, int first) {
        char *name;

        if (!cache_name_is_valid(arg))
                return -refused("--cache-ro: '%s' is not a cache name (1 to 32 of a-z, 0-9, _)", arg);
        if (!(name = strdup(arg)) || strv_push_take(&arg_caches_ro, name) < 0)
                return -failed("out of memory");
        return 1;
}

static int option_setenv(const char *arg, char **argv, int first) {
        return command_option_setenv(arg);
}

static int option_env_file(const char *arg, char **argv, int first) {
        return command_option_env_file(arg);
}

static int option_cpu(const char *arg, char **argv, int first) {
        char *end;

        errno = 0;
        arg_cpu = strtoull(arg, &end, 10);
        if (errno != 0 || end == arg || (*end != 0 && !streq(end, "%")) || arg_cpu == 0 || arg_cpu > 100000)
                return -refused("--cpu: '%s' is not a percentage (e.g. 50%%, 200%%)", arg);
        return 1;
}

static int option_network(const char *arg, char **argv, int first) {
        if (network_mode_from_string(arg) < 0)
                return -refused("--network: '%s' is not a network mode (none, public, allowlist)", arg);
        arg_network = arg;
        return 1;
}

static int option_name(const char *arg, char **argv, int first) {
        if (!sandbox_name_is_valid(arg) || run_id_is_valid(arg))
                return -refused("--name: '%s' is not a sandbox name (1-64 of A-Z a-z 0-9 _ . -)", arg);
        arg_name = arg;
        return 1;
}

/* ---- the table ---- */

typedef enum OptionKind {
        OPTION_TRUE,            /* no argument: *value (bool) becomes true */
        OPTION_FALSE,           /* no argument: *value (bool) becomes false */
        OPTION_STRING,          /* *value (const char *) is the argument */
        OPTION_SIZE,            /* *value (uint64_t) is the argument, a size above 0 (parse_size()) */
        OPTION_DURATION,        /* *value (usec_t) is the argument, a duration above 0 */
        OPTION_CALL,            /* call() reads the argument, if any (has_arg) */
} OptionKind;

typedef struct Option {
        const char *name;
        char short_name;        /* 0: none */
        OptionKind kind;
        void *value;
        const char *expected;   /* SIZE, DURATION: what the argument is not when it is refused */
        int (*call)(const char *arg, char **argv, int first);   /* 1 to go on, else minus the exit status */
        bool has_arg;           /* CALL: takes an argument */
} Option;

/* In the order getopt_long() is given them (it names ambiguous abbreviations in this order). */
static const Option options[] = {
        { "help",         'h', OPTION_CALL,     .call = option_help },
        { "version",      0,   OPTION_CALL,     .call = option_version },
        { "profile",      'p', OPTION_STRING,   &arg_profile },
        { "workspace",    'w', OPTION_STRING,   &arg_workspace },
        { "memory",       0,   OPTION_SIZE,     &arg_memory, "a size (e.g. 512M, 2G)" },
        { "tasks",        0,   OPTION_SIZE,     &arg_tasks, "a positive number" },
        { "timeout",      0,   OPTION_DURATION, &arg_timeout, "a duration (e.g. 90s, 5min, 1h)" },
        { "cpu",          0,   OPTION_CALL,     .call = option_cpu, .has_arg = true },
        { "network",      0,   OPTION_CALL,     .call = option_network, .has_arg = true },
        { "dataset",      0,   OPTION_STRING,   &arg_dataset },
        { "idle-timeout", 0,   OPTION_DURATION, &arg_idle_timeout, "a duration (e.g. 10min)" },
        { "name",         0,   OPTION_CALL,     .call = option_name, .has_arg = true },
        { "detach",       0,   OPTION_TRUE,     &arg_detach },
        { "wait-cleanup", 0,   OPTION_TRUE,     &arg_wait_cleanup },
        { "output-max",   0,   OPTION_SIZE,     &arg_output_max, "a size (e.g. 1M)" },
        { "until",        0,   OPTION_DURATION, &arg_until, "a duration (e.g. 30min, 2h)" },
        { "json",         0,   OPTION_TRUE,     &arg_json },
        { "quiet",        0,   OPTION_TRUE,     &arg_quiet },
        { "no-legend",    0,   OPTION_FALSE,    &arg_legend },
        { "all",          0,   OPTION_TRUE,     &arg_all },
        { "host",         'H', OPTION_CALL,     .call = option_host, .has_arg = true },
        { "machine",      'M', OPTION_CALL,     .call = option_machine, .has_arg = true },
        { "credential",   0,   OPTION_CALL,     .call = option_credential, .has_arg = true },
        { "replace",      0,   OPTION_TRUE,     &arg_replace },
        { "export",       0,   OPTION_STRING,   &arg_export },
        { "to",           0,   OPTION_STRING,   &arg_export_to },
        { "cache-ro",     0,   OPTION_CALL,     .call = option_cache_ro, .has_arg = true },
        { "image",        0,   OPTION_STRING,   &arg_image },
        { "setenv",       'E', OPTION_CALL,     .call = option_setenv, .has_arg = true },
        { "env-file",     0,   OPTION_CALL,     .call = option_env_file, .has_arg = true },
        { "tty",          't', OPTION_CALL,     .call = option_tty },
        { "no-tty",       'T', OPTION_CALL,     .call = option_no_tty },
};

#define OPTION_VAL_BASE 0x100   /* getopt_long()'s value of options[i]: its short name, or OPTION_VAL_BASE + i */

static bool option_has_arg(const Option *o) {
        return o->kind == OPTION_CALL ? o->has_arg : o->kind != OPTION_TRUE && o->kind != OPTION_FALSE;
}

/* getopt_long()'s tables, made from options[] once */
static void option_tables(struct option *longopts, char *shortopts) {
        /* '+': stop at the first non-option, so "run -- cmd -x" keeps -x for cmd */
        *shortopts++ = '+';
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                const Option *o = &options[i];

                longopts[i] = (struct option) { o->name, option_has_arg(o) ? required_argument : no_argument, NULL,
                                                o->short_name ?: OPTION_VAL_BASE + (int) i };
                if (o->short_name) {
                        *shortopts++ = o->short_name;
                        if (option_has_arg(o))
                                *shortopts++ = ':';
                }
        }
        longopts[ELEMENTSOF(options)] = (struct option) {};
        *shortopts = 0;
}

static const Option *option_by_val(int c) {
        if (c >= OPTION_VAL_BASE && c < OPTION_VAL_BASE + (int) ELEMENTSOF(options))
                return &options[c - OPTION_VAL_BASE];
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (options[i].short_name && options[i].short_name == c)
                        return &options[i];
        return NULL;
}

/* One option and its argument: 1 to go on, else minus the exit status. */
static int option_apply(const Option *o, const char *arg, char **argv, int first) {
        switch (o->kind) {
        case OPTION_TRUE:
        case OPTION_FALSE:
                *(bool *) o->value = o->kind == OPTION_TRUE;
                return 1;
        case OPTION_STRING:
                *(const char **) o->value = arg;
                return 1;
        case OPTION_SIZE:
                if (parse_size(arg, o->value) < 0 || *(uint64_t *) o->value == 0)
                        return -refused("--%s: '%s' is not %s", o->name, arg, o->expected);
                return 1;
        case OPTION_DURATION:
                if (parse_duration(arg, o->value) < 0 || *(usec_t *) o->value == 0)
                        return -refused("--%s: '%s' is not %s", o->name, arg, o->expected);
                return 1;
        case OPTION_CALL:
                return o->call(arg, argv, first);
        }
        return -SBX_EXIT_FAILURE;
}

int parse_argv(int argc, char *argv[]) {
        static struct option longopts[ELEMENTSOF(options) + 1];
        static char shortopts[1 + 2 * ELEMENTSOF(options) + 1];
        int c, before = optind;

        if (!longopts[0].name)
                option_tables(longopts, shortopts);
        for (; (c = getopt_long(argc, argv, shortopts, longopts, NULL)) >= 0; before = optind) {
                const Option *o = option_by_val(c);
                int r;

                if (c == '?')
                        return -SBX_EXIT_REFUSED;
                if (!o)
                        return -SBX_EXIT_FAILURE;
                r = option_apply(o, optarg, argv, before);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/* Options may also follow a command's first argument: "exec SB --timeout 5s -- cmd", "capture RUN --until
 * 1h". As parse_argv(), and -H and -M still exclude each other. */
int parse_argv_after_first(int argc, char *argv[]) {
        int r;

        optind = 1;
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        if (arg_host && arg_machine)
                return -refused("--host and --machine exclude each other (a container on another host: "
                                "-H HOST/MACHINE)");
        return 1;
}
