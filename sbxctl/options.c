/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl's options: --help, and the parser that sets the options' values (common.h) before the verb and
 * after its first word. */
#include <getopt.h>
#include <stdio.h>

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
               "     --output-max=SIZE  Pass at most SIZE bytes of its stdout+stderr\n\n"
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

int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_JSON, ARG_NO_LEGEND, ARG_MEMORY, ARG_TASKS, ARG_TIMEOUT, ARG_CPU, ARG_NETWORK,
               ARG_DATASET, ARG_IDLE_TIMEOUT, ARG_NAME, ARG_DETACH, ARG_OUTPUT_MAX, ARG_ALL, ARG_QUIET, ARG_UNTIL,
               ARG_CREDENTIAL, ARG_REPLACE, ARG_EXPORT, ARG_TO, ARG_CACHE_RO, ARG_IMAGE, ARG_ENV_FILE };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "profile", required_argument, NULL, 'p' },
                { "workspace", required_argument, NULL, 'w' },
                { "memory", required_argument, NULL, ARG_MEMORY },
                { "tasks", required_argument, NULL, ARG_TASKS },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "cpu", required_argument, NULL, ARG_CPU },
                { "network", required_argument, NULL, ARG_NETWORK },
                { "dataset", required_argument, NULL, ARG_DATASET },
                { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },
                { "name", required_argument, NULL, ARG_NAME },
                { "detach", no_argument, NULL, ARG_DETACH },
                { "output-max", required_argument, NULL, ARG_OUTPUT_MAX },
                { "until", required_argument, NULL, ARG_UNTIL },
                { "json", no_argument, NULL, ARG_JSON },
                { "quiet", no_argument, NULL, ARG_QUIET },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "all", no_argument, NULL, ARG_ALL },
                { "host", required_argument, NULL, 'H' },
                { "machine", required_argument, NULL, 'M' },
                { "credential", required_argument, NULL, ARG_CREDENTIAL },
                { "replace", no_argument, NULL, ARG_REPLACE },
                { "export", required_argument, NULL, ARG_EXPORT },
                { "to", required_argument, NULL, ARG_TO },
                { "cache-ro", required_argument, NULL, ARG_CACHE_RO },
                { "image", required_argument, NULL, ARG_IMAGE },
                { "setenv", required_argument, NULL, 'E' },
                { "env-file", required_argument, NULL, ARG_ENV_FILE },
                {}
        };
        int c, before = optind;

        /* '+': stop at the first non-option, so "run -- cmd -x" keeps -x for cmd */
        for (; (c = getopt_long(argc, argv, "+hp:w:E:H:M:", options, NULL)) >= 0; before = optind)
                switch (c) {
                case 'H':
                        if (parse_host(optarg, NULL, NULL, NULL) < 0)
                                return -refused("--host: '%s' is not [USER@]HOST[:PORT][/MACHINE]", optarg);
                        arg_host = optarg;
                        /* the words that said it (-H HOST, -HHOST, --host=HOST): not for sbxctl on HOST */
                        for (int i = before; i < optind; i++)
                                if (arg_argv && argv + i >= arg_argv)
                                        arg_host_word[argv + i - arg_argv] = true;
                        break;
                case 'M':
                        if (!machine_name_ok(optarg))
                                return -refused("--machine: '%s' is not a machine name", optarg);
                        arg_machine = optarg;
                        break;
                case 'h':
                        return help(), 0;
                case ARG_VERSION:
                        return printf("sbxctl %s%s\n", PACKAGE_VERSION, SBX_BUILD_KIND), 0;
                case 'p':
                        arg_profile = optarg;
                        break;
                case ARG_CREDENTIAL: {
                        const char *eq = strchr(optarg, '=');
                        _cleanup_free_ char *name = eq ? strndup(optarg, (size_t) (eq - optarg)) : strdup(optarg);
                        char ***l = eq ? &arg_credential_files : &arg_credentials;
                        size_t n = strv_length(*l);
                        char **t;

                        if (!name)
                                return -failed("out of memory");
                        if (!credential_name_is_valid(name))
                                return -refused("--credential: '%s' is not a credential name ([a-z][a-z0-9_-]{0,63})",
                                                name);
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
                        break;
                }
                case ARG_REPLACE:
                        arg_replace = true;
                        break;
                case ARG_EXPORT:
                        arg_export = optarg;
                        break;
                case ARG_TO:
                        arg_export_to = optarg;
                        break;
                case ARG_CACHE_RO: {
                        char *name;

                        if (!cache_name_is_valid(optarg))
                                return -refused("--cache-ro: '%s' is not a cache name (1 to 32 of a-z, 0-9, _)", optarg);
                        if (!(name = strdup(optarg)) || strv_push_take(&arg_caches_ro, name) < 0)
                                return -failed("out of memory");
                        break;
                }
                case ARG_IMAGE:
                        arg_image = optarg;
                        break;
                case 'E': {
                        int k = command_option_setenv(optarg);

                        if (k <= 0)
                                return k;
                        break;
                }
                case ARG_ENV_FILE: {
                        int k = command_option_env_file(optarg);

                        if (k <= 0)
                                return k;
                        break;
                }
                case 'w':
                        arg_workspace = optarg;
                        break;
                case ARG_MEMORY:
                        if (parse_size(optarg, &arg_memory) < 0 || arg_memory == 0)
                                return -refused("--memory: '%s' is not a size (e.g. 512M, 2G)", optarg);
                        break;
                case ARG_TASKS:
                        if (parse_size(optarg, &arg_tasks) < 0 || arg_tasks == 0)
                                return -refused("--tasks: '%s' is not a positive number", optarg);
                        break;
                case ARG_TIMEOUT:
                        if (parse_duration(optarg, &arg_timeout) < 0 || arg_timeout == 0)
                                return -refused("--timeout: '%s' is not a duration (e.g. 90s, 5min, 1h)", optarg);
                        break;
                case ARG_CPU: {
                        char *end;

                        errno = 0;
                        arg_cpu = strtoull(optarg, &end, 10);
                        if (errno != 0 || end == optarg || (*end != 0 && !streq(end, "%")) || arg_cpu == 0 ||
                            arg_cpu > 100000)
                                return -refused("--cpu: '%s' is not a percentage (e.g. 50%%, 200%%)", optarg);
                        break;
                }
                case ARG_NETWORK:
                        if (network_mode_from_string(optarg) < 0)
                                return -refused("--network: '%s' is not a network mode (none, public, allowlist)",
                                                optarg);
                        arg_network = optarg;
                        break;
                case ARG_DATASET:
                        arg_dataset = optarg;
                        break;
                case ARG_IDLE_TIMEOUT:
                        if (parse_duration(optarg, &arg_idle_timeout) < 0 || arg_idle_timeout == 0)
                                return -refused("--idle-timeout: '%s' is not a duration (e.g. 10min)", optarg);
                        break;
                case ARG_NAME:
                        if (!sandbox_name_is_valid(optarg) || run_id_is_valid(optarg))
                                return -refused("--name: '%s' is not a sandbox name (1-64 of A-Z a-z 0-9 _ . -)", optarg);
                        arg_name = optarg;
                        break;
                case ARG_DETACH:
                        arg_detach = true;
                        break;
                case ARG_OUTPUT_MAX:
                        if (parse_size(optarg, &arg_output_max) < 0 || arg_output_max == 0)
                                return -refused("--output-max: '%s' is not a size (e.g. 1M)", optarg);
                        break;
                case ARG_UNTIL:
                        if (parse_duration(optarg, &arg_until) < 0 || arg_until == 0)
                                return -refused("--until: '%s' is not a duration (e.g. 30min, 2h)", optarg);
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_QUIET:
                        arg_quiet = true;
                        break;
                case ARG_NO_LEGEND:
                        arg_legend = false;
                        break;
                case ARG_ALL:
                        arg_all = true;
                        break;
                case '?':
                        return -SBX_EXIT_REFUSED;
                default:
                        return -SBX_EXIT_FAILURE;
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
