/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-exec's command line as one table: each row is a long option, whether it takes a value, the
 * function that checks and stores the value, and where in ExecOptions it goes. The combinations that
 * are allowed are checked once, after the last option. */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache-prune.h"
#include "ceilings.h"
#include "macro.h"
#include "options.h"
#include "util.h"

int exec_parse_u64(const char *s, uint64_t *ret) {
        char *end;

        errno = 0;
        *ret = strtoull(s, &end, 10);
        return errno == 0 && end != s && *end == 0 ? 0 : -EINVAL;
}

typedef struct ExecOption ExecOption;

/* How a row stores its value: field points into ExecOptions (at the row's offset). */
typedef int (*ExecOptionParse)(const char *value, void *field, const ExecOption *row);
typedef bool (*ExecOptionCheck)(const char *value);

struct ExecOption {
        const char *name;
        int has_arg;
        ExecOptionParse parse;
        size_t offset;
        ExecOptionCheck check;          /* option_string(), option_list(): the value must pass it */
        const char *const *values;      /* option_one_of(): the accepted values */
};

static int option_flag(const char *value, void *field, const ExecOption *row) {
        *(bool *) field = true;
        return 0;
}

static int option_u64(const char *value, void *field, const ExecOption *row) {
        return exec_parse_u64(value, field);
}

static int option_u64_nonzero(const char *value, void *field, const ExecOption *row) {
        if (exec_parse_u64(value, field) < 0 || *(uint64_t *) field == 0)
                return -EINVAL;
        return 0;
}

/* One of the row's values, kept as given (it points into argv). */
static int option_one_of(const char *value, void *field, const ExecOption *row) {
        if (!strv_contains((char *const *) row->values, value))
                return -EINVAL;
        *(const char **) field = value;
        return 0;
}

/* Kept as given (it points into argv), once it passes the row's check if any. */
static int option_string(const char *value, void *field, const ExecOption *row) {
        if (row->check && !row->check(value))
                return -EINVAL;
        *(const char **) field = value;
        return 0;
}

/* A repeated option: each value that passes the row's check (if any) is added to the list. */
static int option_list(const char *value, void *field, const ExecOption *row) {
        _cleanup_free_ char *copy = NULL;

        if (row->check && !row->check(value))
                return -EINVAL;
        copy = strdup(value);
        if (!copy || strv_push_take(field, copy) < 0)
                return -ENOMEM;
        TAKE_PTR(copy);
        return 0;
}

static bool profile_digest_is_valid(const char *s) {
        return strneq(s, "sha256:", 7);
}

static bool cache_link_is_valid(const char *s) {
        return strchr(s, ':') && !strstr(s, "..") && s[0] == '/';
}

static bool expect_dir_is_valid(const char *s) {
        return s[0] == '/' && strchr(s, ':');
}

static bool cache_image_is_valid(const char *s) {
        const char *colon = strrchr(s, ':');
        _cleanup_free_ char *dir = colon ? strndup(s, (size_t) (colon - s)) : NULL;
        uint64_t size;

        return dir && cache_dir_is_valid(dir) && exec_parse_u64(colon + 1, &size) >= 0 && size > 0;
}

static bool landlock_path_is_valid(const char *s) {
        return s[0] == '/' && !strstr(s, "/..");
}

/* SBX_SPACE_DIR/RUN, one component */
static bool space_op_is_valid(const char *s) {
        const char *p = strchr(s, ':');

        return (strneq(s, "create:", 7) || strneq(s, "remove:", 7)) && p &&
               strneq(p + 1, SBX_SPACE_DIR "/", strlen(SBX_SPACE_DIR) + 1) &&
               !isempty(p + 1 + strlen(SBX_SPACE_DIR) + 1) && !strchr(p + 1 + strlen(SBX_SPACE_DIR) + 1, '/') &&
               !strstr(s, "..");
}

static bool netns_op_is_valid(const char *s) {
        return (strneq(s, "create:/", 8) || strneq(s, "remove:/", 8) || strneq(s, "serve:/", 7)) &&
               strneq(strchr(s, ':') + 1, SBX_NETNS_DIR "/", strlen(SBX_NETNS_DIR) + 1) && !strstr(s, "/..");
}

static int option_workspace(const char *value, void *field, const ExecOption *row) {
        if (!streq(value, "private") && !streq(value, "bound"))
                return -EINVAL;
        *(bool *) field = streq(value, "private");
        return 0;
}

/* N or N:cut; field: the ExecOptions */
static int option_output(const char *value, void *field, const ExecOption *row) {
        ExecOptions *o = field;
        _cleanup_free_ char *n = strndup(value, strcspn(value, ":"));
        const char *action = value + strcspn(value, ":");

        if (!n || exec_parse_u64(n, &o->output_max) < 0 || (*action && !streq(action, ":cut")))
                return -EINVAL;
        o->output_cut = *action != 0;
        return 0;
}

/* field: the ExecOptions */
static int option_owner(const char *value, void *field, const ExecOption *row) {
        ExecOptions *o = field;
        unsigned u, g;
        uint64_t dev, ino;
        int n = 0;

        /* UID:GID, or UID:GID:DEV:INO of the directory sbxd checked */
        if (sscanf(value, "%u:%u:%" SCNu64 ":%" SCNu64 "%n", &u, &g, &dev, &ino, &n) == 4 && value[n] == 0) {
                o->owner_dev = (dev_t) dev;
                o->owner_ino = (ino_t) ino;
        } else if (n = 0, sscanf(value, "%u:%u%n", &u, &g, &n) != 2 || value[n] != 0)
                return -EINVAL;
        o->owner_uid = (uid_t) u;
        o->owner_gid = (gid_t) g;
        return 0;
}

static int option_mode(const char *value, void *field, const ExecOption *row) {
        char *end;
        unsigned long m;

        errno = 0;
        m = strtoul(value, &end, 8);
        if (errno != 0 || end == value || *end != 0 || m > 07777)
                return -EINVAL;
        *(mode_t *) field = (mode_t) m;
        return 0;
}

static int option_unenforced(const char *value, void *field, const ExecOption *row) {
        /* only a testbed build goes without a ceiling: any other refuses the run */
        if (!ceilings_may_go_unenforced()) {
                fprintf(stderr, "sbx-exec: --unenforced-ceilings: this build enforces every ceiling\n");
                return -EINVAL;
        }
        if (ceilings_from_list(value, field) < 0)
                return -EINVAL;
        return 0;
}

static int option_landlock(const char *value, void *field, const ExecOption *row) {
        LandlockMode m = landlock_mode_from_string(value);

        if (m < 0)
                return -EINVAL;
        *(LandlockMode *) field = m;
        return 0;
}

/* gvisor:none or gvisor:host: the gVisor tier and runsc's network mode */
static int option_isolation(const char *value, void *field, const ExecOption *row) {
        if (!streq(value, "gvisor:none") && !streq(value, "gvisor:host"))
                return -EINVAL;
        *(const char **) field = value + strlen("gvisor:");
        return 0;
}

static bool syscall_entry_is_valid(const char *s) {
        return !isempty(s) && strspn(s, "@abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(s);
}

#define FIELD(f) offsetof(ExecOptions, f)

static const char *const network_modes[] = { "none", "egress", NULL };
static const char *const handover_modes[] = { "in", "out", NULL };
static const char *const figures_dirs[] = { SBX_FIGURES_DIR, NULL };
static const char *const bpffs_dirs[] = { "/sys/fs/bpf", NULL };

static const ExecOption exec_options[] = {
        { "expect-memory-max", required_argument, option_u64, FIELD(expect_memory_max) },
        { "expect-tasks-max", required_argument, option_u64, FIELD(expect_tasks_max) },
        { "expect-network", required_argument, option_one_of, FIELD(expect_network), .values = network_modes },
        { "expect-swap-max", required_argument, option_u64, FIELD(expect_swap_max) },
        { "expect-profile-digest", required_argument, option_string, FIELD(expect_profile_digest),
          .check = profile_digest_is_valid },
        { "cache", required_argument, option_list, FIELD(caches), .check = cache_link_is_valid },
        { "expect-dir", required_argument, option_list, FIELD(expect_dirs), .check = expect_dir_is_valid },
        { "expect-denied", required_argument, option_list, FIELD(expect_denied) },
        { "expect-cpu-quota", required_argument, option_u64, FIELD(expect_cpu_percent) },
        { "unenforced-ceilings", required_argument, option_unenforced, FIELD(unenforced) },
        { "expect-egress", no_argument, option_flag, FIELD(expect_egress) },
        { "expect-netns-not", required_argument, option_u64, FIELD(expect_netns_not) },
        { "expect-disk-max", required_argument, option_u64_nonzero, FIELD(expect_disk_max) },
        { "space", required_argument, option_string, FIELD(space_op), .check = space_op_is_valid },
        { "space-size", required_argument, option_u64_nonzero, FIELD(space_size) },
        { "remove-caches", no_argument, option_flag, FIELD(remove_caches) },
        { "export-out", no_argument, option_flag, FIELD(export_out) },
        { "cache-image", required_argument, option_list, FIELD(cache_images), .check = cache_image_is_valid },
        { "netns", required_argument, option_string, FIELD(netns_op), .check = netns_op_is_valid },
        { "serve", no_argument, option_flag, FIELD(serve) },
        { "pool", no_argument, option_flag, FIELD(pool) },
        { "bpffs", required_argument, option_one_of, FIELD(bpffs), .values = bpffs_dirs },
        { "figures", required_argument, option_one_of, FIELD(figures), .values = figures_dirs },
        { "workspace", required_argument, option_workspace, FIELD(workspace_private) },
        { "handover", required_argument, option_one_of, FIELD(handover), .values = handover_modes },
        { "owner", required_argument, option_owner, 0 },
        { "workspace-mode", required_argument, option_mode, FIELD(workspace_mode) },
        /* decoded in main(), so that a bad one is refused */
        { "seccomp-filter", required_argument, option_string, FIELD(seccomp_filter) },
        { "spawn-shared", no_argument, option_flag, FIELD(spawn_shared) },
        { "output-max", required_argument, option_output, 0 },
        { "landlock", required_argument, option_landlock, FIELD(landlock) },
        { "landlock-ro", required_argument, option_list, FIELD(landlock_ro), .check = landlock_path_is_valid },
        { "landlock-rw", required_argument, option_list, FIELD(landlock_rw), .check = landlock_path_is_valid },
        { "isolation", required_argument, option_isolation, FIELD(gvisor_network) },
        { "gvisor-allow", required_argument, option_list, FIELD(gvisor_allow), .check = syscall_entry_is_valid },
        { "gvisor-deny", required_argument, option_list, FIELD(gvisor_deny), .check = syscall_entry_is_valid },
};

#define OPTION_BASE 0x100

/* The modes exclude each other and decide what follows the options. Returns the index of the first
 * argument after them, or -EINVAL. */
static int check_combination(const ExecOptions *o, int argc, char *argv[]) {
        if (o->netns_op && strneq(o->netns_op, "serve:", 6)) /* the bridge's command line follows */
                return optind < argc ? optind : -EINVAL;
        if (o->serve && o->pool)
                return -EINVAL;
        if (o->space_op && (o->netns_op || o->bpffs || o->figures || o->serve || o->pool || o->handover ||
                            (strneq(o->space_op, "create:", 7)) != (o->space_size > 0)))
                return -EINVAL;
        if (o->cache_images && !o->space_op)
                return -EINVAL;
        if ((o->landlock_ro || o->landlock_rw) && o->landlock < 0)
                return -EINVAL;
        /* gVisor's: one command, never under Landlock (runsc cannot mount under it), with its syscall lists */
        if (o->gvisor_network && (o->serve || o->landlock >= 0 || !o->gvisor_allow))
                return -EINVAL;
        if (!o->gvisor_network && (o->gvisor_allow || o->gvisor_deny))
                return -EINVAL;
        if (o->remove_caches) { /* the caches follow, nothing else */
                if (o->netns_op || o->bpffs || o->figures || o->serve || o->pool || o->space_op || o->handover ||
                    optind >= argc)
                        return -EINVAL;
                for (int i = optind; i < argc; i++)
                        if (!cache_dir_is_valid(argv[i]))
                                return -EINVAL;
                return optind;
        }
        if (o->handover) /* the workspace follows */
                return optind < argc ? optind : -EINVAL;
        /* nothing else: a run's command comes on stdin (sandbox-proto.h) */
        return optind == argc ? optind : -EINVAL;
}

int exec_options_parse(ExecOptions *o, int argc, char *argv[]) {
        struct option options[ELEMENTSOF(exec_options) + 1] = {};
        int c, r;

        for (size_t i = 0; i < ELEMENTSOF(exec_options); i++)
                options[i] = (struct option) { exec_options[i].name, exec_options[i].has_arg, NULL,
                                               OPTION_BASE + (int) i };

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0) {
                const ExecOption *e;

                if (c < OPTION_BASE || c >= OPTION_BASE + (int) ELEMENTSOF(exec_options))
                        return -EINVAL;
                e = &exec_options[c - OPTION_BASE];
                r = e->parse(optarg, (uint8_t *) o + e->offset, e);
                if (r < 0)
                        return r;
        }
        return check_combination(o, argc, argv);
}
