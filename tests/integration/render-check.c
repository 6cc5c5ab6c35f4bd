/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* render-check: proves that the two renderings of one property table mean the same to systemd.
 *
 *   render-check [--keep] PROFILE...
 *
 * Each PROFILE is a profile file (a path with a '/') or a name on the profile search path. The profile
 * and a request running "/bin/sleep 60" are compiled into a run plan (policy_compile; a profile whose
 * own network mode cannot run is narrowed to "none" when it allows that, as a caller would). For the
 * N-th profile its property table then becomes
 *   (a) the unit file /run/systemd/system/sbx-render-text-N.service: [Service], prop_table_render_text(),
 *       ExecStart=/bin/sleep 60; systemd is reloaded and the unit started;
 *   (b) the transient unit sbx-render-bus-N.service: StartTransientUnit with bus_append_prop_table()
 *       and the same ExecStart;
 * and "systemctl show" of both is compared for every property the table contains (by D-Bus name,
 * PropDef.bus_name), and their ActiveState. Properties outside the table (ExecStart, Names,
 * InvocationID...) are not compared. A third unit file, sbx-render-base-N.service, has only the
 * ExecStart: table properties that show the same there are listed as notes (systemd's default equals
 * the table's value, so the comparison alone would not notice a setting both forms lost).
 * All units are stopped and removed afterwards (--keep leaves them for inspection).
 *
 * Exit status: 0 all the same; 1 differences (each listed on stdout); 2 something could not be checked
 * (message on stderr). Needs root and systemd as PID 1 (run it in the testbed). All profiles share one
 * daemon-reload and one "systemctl show": under emulation each costs seconds. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "fileio.h"
#include "macro.h"
#include "policy.h"
#include "profile-load.h"
#include "proptable.h"
#include "unit-bus.h"

#define UNIT_DIR "/run/systemd/system"
#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

static char *const sleep_argv[] = { (char *) "/bin/sleep", (char *) "60", NULL };

enum { TEXT, BUS, BASE, _KIND_MAX };
static const char *const kind_name[_KIND_MAX] = { "text", "bus", "base" };

typedef struct Check {
        Profile *profile;
        RunPlan *plan;
        char *text;                  /* the table as unit-file text */
        char *unit[_KIND_MAX];       /* sbx-render-{text,bus,base}-N.service */
        char **values[_KIND_MAX];    /* per name in the shared name list: what systemctl showed, or NULL */
        char *state[_KIND_MAX];      /* ActiveState */
        bool present[_KIND_MAX];     /* the unit exists: its file was written, or it was started over D-Bus */
        bool ok;                     /* all three units are present: compare them */
} Check;

static void check_done(Check *c, size_t n_names) {
        profile_free(c->profile);
        run_plan_free(c->plan);
        free(c->text);
        for (int k = 0; k < _KIND_MAX; k++) {
                free(c->unit[k]);
                free(c->state[k]);
                for (size_t i = 0; c->values[k] && i < n_names; i++)
                        free(c->values[k][i]);
                free(c->values[k]);
        }
}

static void msg_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}

/* Runs argv and returns its exit status (or a negative errno); its stdout into *ret_out if not NULL,
 * its stderr to /dev/null if quiet. */
static int spawn(char *const argv[], bool quiet, char **ret_out) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, allocated = 0;
        int pipefd[2], status;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(pipefd[0]);
                close(pipefd[1]);
                return r;
        }
        if (pid == 0) {
                if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                if (quiet) {
                        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
                                _exit(127);
                }
                execvp(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);
        for (;;) {
                ssize_t k;

                if (n + 4096 > allocated) {
                        char *b = realloc(buf, allocated + 65536);
                        if (!b) {
                                close(pipefd[0]);
                                (void) waitpid(pid, NULL, 0);
                                return -ENOMEM;
                        }
                        buf = b;
                        allocated += 65536;
                }
                k = read(pipefd[0], buf + n, allocated - n - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        close(pipefd[0]);
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        buf[n] = 0;
        if (ret_out)
                *ret_out = TAKE_PTR(buf);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* systemctl VERB UNIT...: the present units of the given kinds of every check */
static int systemctl_all(const char *verb, Check *checks, size_t n, const int *kinds, size_t n_kinds, bool quiet) {
        _cleanup_free_ char **argv = calloc(3 + n * n_kinds + 1, sizeof(char *));
        size_t a = 0;
        int r;

        if (!argv)
                return -ENOMEM;
        argv[a++] = (char *) "systemctl";
        argv[a++] = (char *) "--quiet";
        argv[a++] = (char *) verb;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < n_kinds; k++)
                        if (checks[i].present[kinds[k]])
                                argv[a++] = checks[i].unit[kinds[k]];
        r = spawn(argv, quiet, NULL);
        if (r != 0 && !quiet)
                fprintf(stderr, "render-check: systemctl %s: exit status %d\n", verb, r);
        return r;
}

/* "systemctl show --all -p NAME... UNIT..." for the units of kind k of every set-up check: fills
 * values[k] (one entry per name, NULL where not shown) and state[k]. systemctl prints one block per
 * unit, in the order given, blocks separated by an empty line. */
static int show_all(Check *checks, size_t n, char **names, size_t n_names, bool states_only) {
        _cleanup_free_ char **argv = calloc(4 + 2 * n_names + 2 + n * _KIND_MAX + 1, sizeof(char *));
        _cleanup_free_ char *out = NULL;
        size_t a = 0, block = 0;
        Check *c = NULL;
        int kind = 0, r;

        if (!argv)
                return -ENOMEM;
        argv[a++] = (char *) "systemctl";
        argv[a++] = (char *) "show";
        argv[a++] = (char *) "--all";
        argv[a++] = (char *) "-p";
        argv[a++] = (char *) "ActiveState";
        for (size_t i = 0; !states_only && i < n_names; i++) {
                argv[a++] = (char *) "-p";
                argv[a++] = names[i];
        }
        for (size_t i = 0; i < n; i++)
                for (int k = 0; k < _KIND_MAX; k++)
                        if (checks[i].ok)
                                argv[a++] = checks[i].unit[k];
        r = spawn(argv, false, &out);
        if (r != 0)
                return r < 0 ? r : -EIO;

        /* the unit of block number b */
        for (size_t i = 0; i < n; i++)
                if (checks[i].ok) {
                        c = &checks[i];
                        break;
                }
        for (char *line = out, *next; c && line && *line; line = next) {
                char *eq;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                if (*line == 0) { /* end of a block: the next unit */
                        block++;
                        c = NULL;
                        for (size_t i = 0, b = 0; i < n; i++) {
                                if (!checks[i].ok)
                                        continue;
                                if (b + _KIND_MAX > block) {
                                        c = &checks[i];
                                        kind = (int) (block - b);
                                        break;
                                }
                                b += _KIND_MAX;
                        }
                        continue;
                }
                eq = strchr(line, '=');
                if (!eq)
                        continue;
                *eq = 0;
                if (streq(line, "ActiveState")) {
                        free(c->state[kind]);
                        if (!(c->state[kind] = strdup(eq + 1)))
                                return -ENOMEM;
                        continue;
                }
                if (!c->values[kind] && !(c->values[kind] = calloc(n_names + 1, sizeof(char *))))
                        return -ENOMEM;
                for (size_t i = 0; i < n_names; i++)
                        if (streq(names[i], line) && !c->values[kind][i]) {
                                if (!(c->values[kind][i] = strdup(eq + 1)))
                                        return -ENOMEM;
                        }
        }
        return 0;
}

static int write_unit_file(const char *name, const char *profile, const char *text) {
        _cleanup_free_ char *content = NULL;
        _cleanup_close_ int dfd = -EBADF;

        if (asprintf(&content,
                     "# sbx render check: profile %s, %s\n"
                     "[Service]\n"
                     "%s"
                     "ExecStart=/bin/sleep 60\n",
                     profile, text ? "the run's property table rendered as unit-file text" : "no properties",
                     text ?: "") < 0)
                return -ENOMEM;
        dfd = open(UNIT_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        return write_file_atomic_at(dfd, name, content, strlen(content), 0644);
}

static int start_transient(sd_bus *bus, const char *name, const PropTable *t, sd_bus_error *error) {
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", name, "replace");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = bus_append_prop_table(m, t);
        /* Held by this connection: a unit that fails is not collected before it has been compared. */
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "AddRef", "b", 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "ExecStart", "a(sasb)", 1, sleep_argv[0], 2, sleep_argv[0],
                                          sleep_argv[1], 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        return sd_bus_call(bus, m, 120 * 1000000ULL, error, &reply);
}

/* Until no unit is "activating" any more (a Type=exec start is short), at most ~60 s. */
static void wait_settled(Check *checks, size_t n) {
        for (int tries = 0; tries < 120; tries++) {
                bool busy = false;

                if (show_all(checks, n, NULL, 0, true) < 0)
                        return;
                for (size_t i = 0; i < n; i++)
                        for (int k = TEXT; k <= BUS; k++)
                                busy = busy || (checks[i].ok && streq_ptr(checks[i].state[k], "activating"));
                if (!busy)
                        return;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 500 * 1000 * 1000 }, NULL);
        }
}

static int load(const char *arg, Profile **ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        if (strchr(arg, '/'))
                r = profile_load_file(arg, ret, &error);
        else {
                r = profile_search_path(&dirs);
                if (r >= 0)
                        r = profile_load(dirs, arg, ret, &error);
        }
        if (r < 0)
                fprintf(stderr, "render-check: %s\n", error ?: strerror(-r));
        return r;
}

/* Compiles the plan. A run of network mode public or allowlist joins the network namespace sbxd made
 * for it: here one the caller made, RENDER_NETNS (test-65 makes it with "ip netns add"). */
#define RENDER_NETNS "/run/netns/sbx-render"
static int compile(const Profile *p, RunPlan **ret) {
        _cleanup_free_ char *error = NULL;
        RunRequest req = {
                .profile = p->name,
                .argv = (char **) sleep_argv,
                .run_id = (char *) "00000000000000000000000000000000",
                .netns_path = (char *) RENDER_NETNS,
        };
        int r;

        r = policy_compile(p, &req, SBX_EXEC_PATH, ret, &error);
        if (r < 0)
                fprintf(stderr, "render-check: profile %s: %s\n", p->name, error ?: strerror(-r));
        return r;
}

/* Loads, compiles and renders the n-th profile; writes its two unit files. */
static int check_prepare(Check *c, const char *arg, size_t number) {
        int r;

        for (int k = 0; k < _KIND_MAX; k++)
                if (asprintf(&c->unit[k], "sbx-render-%s-%zu.service", kind_name[k], number) < 0)
                        return -ENOMEM;
        r = load(arg, &c->profile);
        if (r < 0)
                return r;
        r = compile(c->profile, &c->plan);
        if (r < 0)
                return r;
        r = prop_table_render_text(c->plan->props, &c->text);
        if (r < 0) {
                fprintf(stderr, "render-check: profile %s: cannot render the table as text: %s\n", c->profile->name,
                        strerror(-r));
                return r;
        }
        r = write_unit_file(c->unit[TEXT], c->profile->name, c->text);
        c->present[TEXT] = r >= 0;
        if (r >= 0)
                r = write_unit_file(c->unit[BASE], c->profile->name, NULL);
        c->present[BASE] = r >= 0;
        if (r < 0)
                fprintf(stderr, "render-check: cannot write the unit files of profile %s: %s\n", c->profile->name,
                        strerror(-r));
        return r;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Splits at spaces and sorts: the words of a value systemd keeps as a set and shows in hash order. */
static char **words_sorted(const char *s, size_t *ret_n) {
        _cleanup_free_ char *copy = strdup(s);
        char **l = NULL, *save = NULL;
        size_t n = 0;

        if (!copy)
                return NULL;
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                char **t = realloc(l, (n + 2) * sizeof(char *));
                if (!t || !(t[n] = strdup(w))) {
                        strv_free(t ?: l);
                        return NULL;
                }
                t[++n] = NULL;
                l = t;
        }
        if (!l && !(l = calloc(1, sizeof(char *))))
                return NULL;
        qsort(l, n, sizeof(char *), cmp_str);
        *ret_n = n;
        return l;
}

static bool same_set(const char *a, const char *b) {
        _cleanup_strv_free_ char **x = NULL, **y = NULL;
        size_t nx = 0, ny = 0;

        x = words_sorted(a, &nx);
        y = words_sorted(b, &ny);
        if (!x || !y || nx != ny)
                return false;
        for (size_t i = 0; i < nx; i++)
                if (!streq(x[i], y[i]))
                        return false;
        return true;
}

/* Kinds systemd stores as sets: their words are compared in any order. */
static bool kind_is_set(PropKind k) {
        return k == PROP_IP_ADDRESSES || k == PROP_SYSCALL_ALLOW || k == PROP_SYSCALL_DENY || k == PROP_FAMILY_ALLOW;
}

static const char *value(const Check *c, int kind, size_t i) {
        return c->values[kind] ? c->values[kind][i] : NULL;
}

/* Prints what differs for one profile; returns the number of differences. */
static size_t check_compare(const Check *c, char **names, size_t n_names) {
        size_t differences = 0, compared = 0;

        printf("profile %s: %s is %s, %s is %s\n", c->profile->name, c->unit[TEXT], strna(c->state[TEXT]),
               c->unit[BUS], strna(c->state[BUS]));
        if (!streq_ptr(c->state[TEXT], c->state[BUS])) {
                printf("DIFFERENT %s ActiveState: unit file: %s | D-Bus: %s\n", c->profile->name,
                       strna(c->state[TEXT]), strna(c->state[BUS]));
                differences++;
        }
        for (size_t i = 0; i < n_names; i++) {
                const char *a = value(c, TEXT, i), *b = value(c, BUS, i);
                const PropDef *def = NULL;

                for (size_t k = 0; k < c->plan->props->n && !def; k++)
                        if (streq(c->plan->props->props[k].def->bus_name, names[i]))
                                def = c->plan->props->props[k].def;
                if (!def)
                        continue; /* another profile's property */
                compared++;
                if (!a && !b)
                        printf("DIFFERENT %s %s: systemd shows no such property for either unit\n", c->profile->name,
                               names[i]);
                else if (!streq_ptr(a, b) && !(a && b && kind_is_set(def->kind) && same_set(a, b)))
                        printf("DIFFERENT %s %s:\n  unit file: %s\n  D-Bus:     %s\n", c->profile->name, names[i],
                               strna(a), strna(b));
                else {
                        if (streq_ptr(a, value(c, BASE, i)))
                                printf("note: %s %s=%s is also systemd's default\n", c->profile->name, names[i], a);
                        continue;
                }
                differences++;
        }
        if (differences > 0)
                printf("%zu difference(s) for profile %s between %s and %s\n", differences, c->profile->name,
                       c->unit[TEXT], c->unit[BUS]);
        else
                printf("same: all %zu properties of profile %s (%zu table entries)\n", compared, c->profile->name,
                       c->plan->props->n);
        return differences;
}

static void cleanup(Check *checks, size_t n, sd_bus **bus) {
        static const int running[] = { BUS, TEXT }, all[] = { TEXT, BUS, BASE };

        (void) systemctl_all("stop", checks, n, running, ELEMENTSOF(running), false);
        *bus = sd_bus_flush_close_unref(*bus); /* drops the references: the transient units are collected */
        (void) systemctl_all("reset-failed", checks, n, all, ELEMENTSOF(all), true);
        {
                _cleanup_close_ int dfd = open(UNIT_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                for (size_t i = 0; dfd >= 0 && i < n; i++) {
                        if (checks[i].present[TEXT])
                                (void) unlinkat(dfd, checks[i].unit[TEXT], 0);
                        if (checks[i].present[BASE])
                                (void) unlinkat(dfd, checks[i].unit[BASE], 0);
                }
        }
        (void) systemctl_all("daemon-reload", NULL, 0, NULL, 0, false);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "keep", no_argument, NULL, 'k' },
                {},
        };
        static const int text_only[] = { TEXT };
        _cleanup_free_ Check *checks = NULL;
        _cleanup_free_ char **names = NULL;
        sd_bus *bus = NULL;
        size_t n, n_names = 0, n_ok = 0, differences = 0;
        bool keep = false, incomplete = false;
        int r, c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'k':
                        keep = true;
                        break;
                default:
                        return 2;
                }
        if (optind >= argc) {
                fprintf(stderr, "Usage: render-check [--keep] PROFILE...\n");
                return 2;
        }
        if (geteuid() != 0) {
                fprintf(stderr, "render-check: needs root (it writes into " UNIT_DIR ")\n");
                return 2;
        }
        n = (size_t) (argc - optind);
        checks = calloc(n, sizeof(Check));
        if (!checks)
                return 2;

        for (size_t i = 0; i < n; i++) {
                Check *ck = &checks[i];

                if (check_prepare(ck, argv[optind + i], i + 1) < 0) {
                        incomplete = true;
                        continue;
                }
                ck->ok = true;
                n_ok++;
                /* the names to show: every table entry's D-Bus name, once over all profiles */
                for (size_t k = 0; k < ck->plan->props->n; k++) {
                        char *b = (char *) ck->plan->props->props[k].def->bus_name, **l;
                        bool seen = false;

                        for (size_t j = 0; j < n_names; j++)
                                seen = seen || streq(names[j], b);
                        if (seen)
                                continue;
                        l = realloc(names, (n_names + 2) * sizeof(char *));
                        if (!l)
                                return 2;
                        names = l;
                        names[n_names++] = b;
                        names[n_names] = NULL;
                }
        }

        if (n_ok > 0) {
                if (systemctl_all("daemon-reload", NULL, 0, NULL, 0, false) != 0)
                        incomplete = true;
                else if (systemctl_all("start", checks, n, text_only, 1, false) != 0)
                        printf("note: not every unit-file unit started\n");
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        fprintf(stderr, "render-check: cannot connect to the system bus: %s\n", strerror(-r));
                        incomplete = true;
                }
        }
        for (size_t i = 0; bus && i < n; i++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;

                if (!checks[i].ok)
                        continue;
                r = start_transient(bus, checks[i].unit[BUS], checks[i].plan->props, &error);
                if (r < 0) {
                        /* systemd refusing over D-Bus what it took as a unit file is itself a difference */
                        printf("DIFFERENT %s: StartTransientUnit refused the table: %s\n", checks[i].profile->name,
                               error.message ?: strerror(-r));
                        differences++;
                        checks[i].ok = false;
                } else
                        checks[i].present[BUS] = true;
                sd_bus_error_free(&error);
        }
        if (bus) {
                wait_settled(checks, n);
                r = show_all(checks, n, names, n_names, false);
                if (r < 0) {
                        fprintf(stderr, "render-check: systemctl show failed: %s\n", strerror(-r));
                        incomplete = true;
                } else
                        for (size_t i = 0; i < n; i++)
                                if (checks[i].ok)
                                        differences += check_compare(&checks[i], names, n_names);
        }

        if (keep)
                printf("kept the units sbx-render-*.service (the transient ones until this program exits)\n");
        else
                cleanup(checks, n, &bus);
        sd_bus_flush_close_unref(bus);
        for (size_t i = 0; i < n; i++)
                check_done(&checks[i], n_names);

        if (incomplete)
                return 2;
        if (differences > 0) {
                printf("%zu difference(s) in all\n", differences);
                return 1;
        }
        printf("same: %zu profile(s)\n", n_ok);
        return 0;
}
