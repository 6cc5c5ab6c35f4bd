/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "gvisor.h"
#include "json-doc.h"
#include "macro.h"
#include "syscall-groups.h"
#include "util.h"

#define GVISOR_BUNDLE GVISOR_DIR "/bundle"
#define GVISOR_PID_FILE GVISOR_DIR "/pid"
#define GVISOR_LOG GVISOR_DIR "/log"
#define GVISOR_STATE GVISOR_DIR "/state"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

void gvisor_done(Gvisor *g) {
        free(g->version);
        strv_free(g->argv);
        *g = (Gvisor) GVISOR_INIT;
}

/* "runsc version 0.0~20221219.0": the last word of the first line */
static int runsc_version(char **ret) {
        char *const argv[] = { (char *) GVISOR_RUNSC, (char *) "--version", NULL };
        posix_spawn_file_actions_t fa;
        char buf[256] = {}, *nl, *word;
        size_t n = 0;
        int fds[2], status, r;
        pid_t pid;
        ssize_t k;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        r = posix_spawn(&pid, GVISOR_RUNSC, &fa, NULL, argv, (char *[]) { NULL });
        posix_spawn_file_actions_destroy(&fa);
        (void) close(fds[1]);
        if (r != 0) {
                (void) close(fds[0]);
                return -r;
        }
        while (n < sizeof(buf) - 1 && (k = read(fds[0], buf + n, sizeof(buf) - 1 - n)) != 0) {
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        break;
                n += (size_t) k;
        }
        (void) close(fds[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EIO;
        nl = strchrnul(buf, '\n');
        *nl = 0;
        word = strrchr(buf, ' ');
        if (!strneq(buf, "runsc version ", 14) || !word || isempty(word + 1) ||
            strspn(word + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.~+-_") != strlen(word + 1))
                return -EBADMSG;
        *ret = strdup(word + 1);
        return *ret ? 0 : -ENOMEM;
}

int gvisor_environment(char **base, char **caller, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        int r = 0;

        if (!l)
                return -ENOMEM;
        STRV_FOREACH(e, base)
                if (!strneq(*e, "NOTIFY_SOCKET=", 14) && !strneq(*e, "SBX_PROFILE_DIGEST=", 19))
                        r = r ?: strv_push_printf(&l, "%s", *e);
        /* a caller's entry replaces the one of the same name */
        STRV_FOREACH(c, caller) {
                size_t k = strcspn(*c, "=") + 1;

                for (size_t i = 0; l[i]; i++)
                        if (strncmp(l[i], *c, k) == 0) {
                                free(l[i]);
                                memmove(l + i, l + i + 1, (strv_length(l + i + 1) + 1) * sizeof(char *));
                                break;
                        }
                r = r ?: strv_push_printf(&l, "%s", *c);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

static json_object *string_array(char *const *l) {
        json_object *a = json_object_new_array();

        STRV_FOREACH(s, (char **) l)
                if (!a || json_append_take(a, json_object_new_string(*s)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

/* The limits the command would inherit in the kernel tier (the unit's LimitCORE=, LimitSTACK=, ...) */
static json_object *rlimits(void) {
        static const struct {
                int resource;
                const char *name;
        } table[] = {
                { RLIMIT_CORE, "RLIMIT_CORE" },     { RLIMIT_STACK, "RLIMIT_STACK" },
                { RLIMIT_NOFILE, "RLIMIT_NOFILE" }, { RLIMIT_NPROC, "RLIMIT_NPROC" },
                { RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK" },
        };
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < ELEMENTSOF(table); i++) {
                struct rlimit rl;
                json_object *o;

                if (getrlimit(table[i].resource, &rl) < 0)
                        continue;
                o = json_object_new_object();
                if (!o || json_add_take(o, "type", json_object_new_string(table[i].name)) < 0 ||
                    json_add_take(o, "hard", json_object_new_uint64(rl.rlim_max)) < 0 ||
                    json_add_take(o, "soft", json_object_new_uint64(rl.rlim_cur)) < 0 || json_append_take(a, o) < 0) {
                        json_object_put(o);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

static json_object *process(char **argv, char **env, const char *cwd) {
        static const char *const sets[] = { "bounding", "effective", "permitted", "inheritable", "ambient" };
        json_object *o = json_object_new_object(), *user = json_object_new_object(), *caps = json_object_new_object();
        int r = o && user && caps ? 0 : -ENOMEM;

        /* uid 0 in gVisor is the run's dynamic user outside (runsc's user namespace maps only that one), with
         * no capability at all */
        r = r ?: json_add_take(user, "uid", json_object_new_int(0));
        r = r ?: json_add_take(user, "gid", json_object_new_int(0));
        for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                r = r ?: json_add_take(caps, sets[i], json_object_new_array());
        r = r ?: json_add_take(o, "user", TAKE_PTR(user));
        r = r ?: json_add_take(o, "capabilities", TAKE_PTR(caps));
        r = r ?: json_add_take(o, "args", string_array(argv));
        r = r ?: json_add_take(o, "env", string_array(env));
        r = r ?: json_add_take(o, "cwd", json_object_new_string(cwd));
        r = r ?: json_add_take(o, "noNewPrivileges", json_object_new_boolean(true));
        r = r ?: json_add_take(o, "rlimits", rlimits());
        json_object_put(user);
        json_object_put(caps);
        if (r < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *mount_entry(const char *dest, const char *type, const char *source, const char *options) {
        _cleanup_strv_free_ char **opts = NULL;
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        if (options) {
                opts = strv_new(options, "rw");
                r = r ?: (opts ? 0 : -ENOMEM);
        }
        r = r ?: json_add_take(o, "destination", json_object_new_string(dest));
        r = r ?: json_add_take(o, "type", json_object_new_string(type));
        r = r ?: json_add_take(o, "source", json_object_new_string(source));
        if (r == 0 && opts)
                r = json_add_take(o, "options", string_array(opts));
        if (r < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* gVisor's own /proc, /dev and /sys; the root is the unit's own view, through runsc's gofer; /tmp, which
 * gVisor would otherwise make a tmpfs of its own, is the run's (its space: the disk ceiling holds). */
static json_object *mounts(void) {
        json_object *a = json_object_new_array();
        int r = a ? 0 : -ENOMEM;

        r = r ?: json_append_take(a, mount_entry("/proc", "proc", "proc", NULL));
        r = r ?: json_append_take(a, mount_entry("/dev", "tmpfs", "tmpfs", NULL));
        r = r ?: json_append_take(a, mount_entry("/sys", "sysfs", "sysfs", NULL));
        r = r ?: json_append_take(a, mount_entry("/tmp", "bind", "/tmp", "rbind"));
        if (r < 0) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

/* The profile's process.syscalls with systemd's meaning (an allow-list always has @default), enforced by
 * gVisor on the command's calls: the same EPERM as the unit's filter gives in the kernel tier. */
static int seccomp_section(char **allow, char **deny, json_object **ret) {
        _cleanup_strv_free_ char **a = NULL, **d = NULL, **with_default = strv_copy(allow);
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *rule = json_object_new_object(),
                                                *names = json_object_new_array(), *rules = json_object_new_array();
        int r;

        if (!with_default || !o || !rule || !names || !rules)
                return -ENOMEM;
        r = strv_push_printf(&with_default, "@default");
        r = r ?: syscall_groups_expand(with_default, &a);
        r = r ?: syscall_groups_expand(deny, &d);
        if (r < 0)
                return r;
        STRV_FOREACH(n, a)
                if (!strv_contains(d, *n) && json_append_take(names, json_object_new_string(*n)) < 0)
                        return -ENOMEM;
        /* This runsc names x86-64's call 270 "pselect" and ignores "pselect6" (its log: "OCI seccomp:
         * ignoring syscall"): without the alias make -j's jobserver wait fails with EPERM */
        if (strv_contains(a, "pselect6") && !strv_contains(d, "pselect6") &&
            json_append_take(names, json_object_new_string("pselect")) < 0)
                return -ENOMEM;
        r = json_add_take(o, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
        r = r ?: json_add_take(o, "defaultErrnoRet", json_object_new_int(EPERM));
        r = r ?: json_add_take(o, "architectures", string_array((char *[]) { (char *) "SCMP_ARCH_X86_64", NULL }));
        r = r ?: json_add_take(rule, "names", TAKE_PTR(names));
        r = r ?: json_add_take(rule, "action", json_object_new_string("SCMP_ACT_ALLOW"));
        r = r ?: json_append_take(rules, TAKE_PTR(rule));
        r = r ?: json_add_take(o, "syscalls", TAKE_PTR(rules));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int bundle_write(char **allow, char **deny, char **argv, char **env, const char *cwd, char **ret_error) {
        _cleanup_(json_object_putp) json_object *spec = json_object_new_object(), *root = json_object_new_object(),
                                                *linux_ = json_object_new_object(), *ns = json_object_new_array(),
                                                *sc = NULL;
        _cleanup_close_ int fd = -EBADF;
        char hostname[256] = "sbx";
        const char *text;
        int r;

        if (!spec || !root || !linux_ || !ns)
                return -ENOMEM;
        r = seccomp_section(allow, deny, &sc);
        if (r == -ENOENT)
                return error_setf(ret_error, r, "process.syscalls names a group this systemd does not know");
        if (r < 0)
                return r;
        (void) gethostname(hostname, sizeof(hostname) - 1);
        /* Not read-only: the unit's ProtectSystem=strict already is, at the host's kernel; this runsc's
         * read-only remount would try to drop the nosuid flag NoNewPrivileges= locks, and fail. */
        r = json_add_take(root, "path", json_object_new_string("/"));
        r = r ?: json_add_take(root, "readonly", json_object_new_boolean(false));
        STRV_FOREACH(t, ((char *[]) { (char *) "pid", (char *) "ipc", (char *) "uts", (char *) "mount", NULL })) {
                json_object *n = json_object_new_object();

                if (!n || json_add_take(n, "type", json_object_new_string(*t)) < 0 || json_append_take(ns, n) < 0) {
                        json_object_put(n);
                        return -ENOMEM;
                }
        }
        r = r ?: json_add_take(linux_, "namespaces", TAKE_PTR(ns));
        r = r ?: json_add_take(linux_, "seccomp", TAKE_PTR(sc));
        r = r ?: json_add_take(spec, "ociVersion", json_object_new_string("1.0.2"));
        r = r ?: json_add_take(spec, "process", process(argv, env, cwd));
        r = r ?: json_add_take(spec, "root", TAKE_PTR(root));
        r = r ?: json_add_take(spec, "hostname", json_object_new_string(hostname));
        r = r ?: json_add_take(spec, "mounts", mounts());
        r = r ?: json_add_take(spec, "linux", TAKE_PTR(linux_));
        if (r < 0)
                return r;
        text = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                return -ENOMEM;
        if (mkdir(GVISOR_BUNDLE, 0700) < 0)
                return error_setf(ret_error, -errno, "cannot make gVisor's bundle %s: %m", GVISOR_BUNDLE);
        fd = open(GVISOR_BUNDLE "/config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        r = fd < 0 ? -errno : loop_write(fd, text, strlen(text));
        if (r < 0)
                return error_setf(ret_error, r, "cannot write gVisor's bundle %s: %s", GVISOR_BUNDLE, strerror(-r));
        return 0;
}

int gvisor_prepare(Gvisor *g, const char *network, char **allow, char **deny, char **argv, char **env, const char *cwd,
                   char **ret_error) {
        int r;

        if (access(GVISOR_RUNSC, X_OK) < 0)
                return error_setf(ret_error, -errno, "process.isolation \"gvisor\": %s cannot be run (%m): install "
                                  "gVisor's runsc (Debian: apt-get install runsc)", GVISOR_RUNSC);
        r = runsc_version(&g->version);
        if (r < 0)
                return error_setf(ret_error, r, "process.isolation \"gvisor\": %s --version failed: %s", GVISOR_RUNSC,
                                  strerror(-r));
        /* the run's space is new: nothing is there yet, and nothing the command can reach ever is */
        if (mkdir(GVISOR_DIR, 0700) < 0)
                return error_setf(ret_error, -errno, "cannot make %s: %m", GVISOR_DIR);
        r = bundle_write(allow, deny, argv, env, cwd, ret_error);
        if (r < 0)
                return r == -ENOMEM ? error_setf(ret_error, r, "cannot write gVisor's bundle: out of memory") : r;
        /* Unprivileged (--rootless: runsc's own user namespace maps the run's user to 0 and nothing else);
         * no cgroups of its own (the unit's is the ceiling); the ptrace platform (no KVM); the network the
         * policy chose (never gVisor's own stack); the profile's syscall lists in gVisor's filter. */
        g->argv = strv_new(GVISOR_RUNSC, "--rootless", "--ignore-cgroups", "--platform=ptrace",
                           streq(network, "host") ? "--network=host" : "--network=none", "--oci-seccomp",
                           "--root=" GVISOR_STATE, "--log=" GVISOR_LOG, "run", "--bundle=" GVISOR_BUNDLE,
                           "--pid-file=" GVISOR_PID_FILE, "sbx");
        return g->argv ? 0 : -ENOMEM;
}

int gvisor_find_command(const char *argv0, char **env) {
        const char *path = "/usr/local/bin:/usr/bin:/bin";

        if (isempty(argv0))
                return -ENOENT;
        if (strchr(argv0, '/'))
                return access(argv0, F_OK) < 0 ? -ENOENT : 0;
        STRV_FOREACH(e, env)
                if (strneq(*e, "PATH=", 5))
                        path = *e + 5;
        for (const char *p = path; p; ) {
                const char *end = strchrnul(p, ':');
                _cleanup_free_ char *f = NULL;

                if (asprintf(&f, "%.*s%s%s", (int) (end - p), p, end > p ? "/" : "", argv0) < 0)
                        return -ENOMEM;
                if (access(f, F_OK) == 0)
                        return 0;
                p = *end ? end + 1 : NULL;
        }
        return -ENOENT;
}

/* runsc logs one JSON object a line: {"msg": "...", "level": "error", ...} */
static char *last_error(const char *log) {
        _cleanup_free_ char *msg = NULL;
        const char *line = log;

        while (line && *line) {
                const char *end = strchrnul(line, '\n');
                _cleanup_free_ char *copy = strndup(line, (size_t) (end - line));
                json_object *o = copy ? json_tokener_parse(copy) : NULL, *v;

                if (o && json_object_object_get_ex(o, "msg", &v) && json_object_is_type(v, json_type_string)) {
                        free(msg);
                        msg = strdup(json_object_get_string(v));
                }
                json_object_put(o);
                line = *end ? end + 1 : NULL;
        }
        return TAKE_PTR(msg);
}

int gvisor_check_started(char **ret_error) {
        _cleanup_free_ char *log = NULL, *why = NULL;

        if (access(GVISOR_PID_FILE, F_OK) == 0)
                return 0;
        (void) read_file_at(AT_FDCWD, GVISOR_LOG, 64 * 1024, &log, NULL);
        why = log ? last_error(log) : NULL;
        return error_setf(ret_error, -ESRCH, "runsc could not start the command: %s", why ?: "it logged no reason");
}
