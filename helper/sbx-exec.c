/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-exec: the main process of every sbx unit.
 *
 * It runs as the unit's dynamic user, inside all of the unit's restrictions. Before the command runs it
 * re-checks what the policy promised and refuses to run the command when something is not in force
 * (fail closed: systemd silently skips some settings when the kernel lacks a feature). Then it runs the
 * command as its child, waits for it, ends whatever the command left behind in the cgroup, reads the
 * cgroup's resource figures, reports them to systemd (STATUS=, NotifyAccess=main) and exits with the
 * command's own status (re-raising its signal), so the unit's ExecMainStatus is the command's.
 * While it waits it may also enforce the profile's argument-level syscall rules and its output ceiling
 * (--seccomp-filter=, --output-max=; supervise.h). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "exit-codes.h"
#include "ceilings.h"
#include "fileio.h"
#include "cache.h"
#include "gvisor.h"
#include "handover.h"
#include "image-mount.h"
#include "landlock.h"
#include "netns.h"
#include "options.h"
#include "macro.h"
#include "policy.h"
#include "sandbox-proto.h"
#include "sd-protocols.h"
#include "serve.h"
#include "space.h"
#include "spawn-child.h"
#include "supervise.h"

static ExecOptions arg = EXEC_OPTIONS_INIT;
static int landlock_abi_found = 0;             /* the kernel's Landlock ABI; 0: none (best-effort) */
static int landlock_fd = -EBADF;               /* the ruleset, enforced in the command's child */
static int report_fd = -EBADF;                /* a run's control channel, kept for FINISHED (report()) */

/* Whether systemd is stopping the unit: a stop signal is pending (set_up() blocked them). */
static bool stop_pending(void) {
        sigset_t pending;

        if (sigpending(&pending) < 0)
                return false;
        return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1 ||
               sigismember(&pending, SIGHUP) == 1;
}

_printf_(1, 2) static int refuse(const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        /* The unit is being stopped (a stop, the wall time): whatever failed, failed for that; sbxd records
         * why it ended */
        if (stop_pending())
                return SBX_EXIT_FAILURE;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        /* sbxd records this as stop reason "refused" and sbxctl prints it. The barrier makes sure systemd has read it while
         * we are still the main process. */
        /* systemd drops a notification of 4 KiB or more whole: keep the reason well below that */
        if (msg && strlen(msg) > 1024)
                strcpy(msg + 1020, "...");
        (void) notify_sendf("STATUS=refused %s", strna(msg));
        (void) notify_barrier(5 * USEC_PER_SEC);
        return SBX_EXIT_FAILURE;
}

static int own_cgroup(char **ret) {
        _cleanup_free_ char *buf = NULL;
        char *p, *e;
        int r;

        r = read_file_at(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        /* the unified hierarchy's line is "0::/path" */
        p = strstr(buf, "0::");
        if (!p || (p != buf && p[-1] != '\n'))
                return -ENOMEDIUM;
        p += 3;
        e = strchrnul(p, '\n');
        *e = 0;
        if (asprintf(ret, "/sys/fs/cgroup%s", streq(p, "/") ? "" : p) < 0)
                return -ENOMEM;
        return 0;
}

/* The whole of a cgroup file. */
static int read_cgroup_file(const char *cg, const char *attr, char **ret) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", cg, attr) < 0)
                return -ENOMEM;
        return read_file_at(AT_FDCWD, path, 64 * 1024, ret, NULL);
}

/* Its first line. */
static int read_cgroup_attr(const char *cg, const char *attr, char **ret) {
        int r = read_cgroup_file(cg, attr, ret);

        if (r >= 0)
                (*ret)[strcspn(*ret, "\n")] = 0;
        return r;
}

static int read_cgroup_u64(const char *cg, const char *attr, uint64_t *ret) {
        _cleanup_free_ char *v = NULL;
        char *end;
        int r;

        r = read_cgroup_attr(cg, attr, &v);
        if (r < 0)
                return r;
        if (streq(v, "max")) {
                *ret = UINT64_MAX;
                return 0;
        }
        errno = 0;
        *ret = strtoull(v, &end, 10);
        if (errno != 0 || end == v || *end != 0)
                return -EBADMSG;
        return 0;
}

static int status_field(const char *key, char **ret) {
        _cleanup_free_ char *buf = NULL;
        char *p;
        int r;

        r = read_file_at(AT_FDCWD, "/proc/self/status", 64 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                size_t l = strlen(key);
                if (strneq(p, key, l) && p[l] == ':') {
                        p += l + 1;
                        p += strspn(p, " \t");
                        *ret = strndup(p, strcspn(p, "\n"));
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return -ENOENT;
}

static int only_loopback(void) {
        _cleanup_free_ char *buf = NULL;
        unsigned n = 0;
        int r;

        /* /proc/net/dev lists the interfaces of the reader's network namespace. */
        r = read_file_at(AT_FDCWD, "/proc/self/net/dev", 1024 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
                char *name;

                if (!colon || (nl && colon > nl))
                        continue; /* header lines */
                name = line + strspn(line, " ");
                if ((size_t) (colon - name) != 2 || !strneq(name, "lo", 2))
                        return 0;
                n++;
        }
        return n <= 1;
}

/* With IPAddressDeny= covering loopback, the kernel refuses a datagram to 127.0.0.1 with EPERM before it
 * leaves. Returns 0 when refused that way, else a negative errno: -EPROTO when it was sent. */
static int probe_ip_deny(const char *address) {
        _cleanup_close_ int fd = -EBADF;
        union {
                struct sockaddr sa;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
        } u = {};
        socklen_t len;

        if (inet_pton(AF_INET, address, &u.in.sin_addr) == 1) {
                u.in.sin_family = AF_INET;
                u.in.sin_port = htons(9); /* discard */
                len = sizeof(u.in);
        } else if (inet_pton(AF_INET6, address, &u.in6.sin6_addr) == 1) {
                u.in6.sin6_family = AF_INET6;
                u.in6.sin6_port = htons(9);
                len = sizeof(u.in6);
        } else
                return -EINVAL;
        fd = socket(u.sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, "", 0, 0, &u.sa, len) >= 0)
                return -EPROTO;
        return errno == EPERM ? 0 : -errno;
}

/* A UDP connect() sends nothing: 0 if allowed, else -errno. */
static int udp_connect4(const char *address, uint16_t port) {
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };

        if (fd < 0)
                return -errno;
        if (inet_pton(AF_INET, address, &in.sin_addr) != 1)
                return -EINVAL;
        return connect(fd, (struct sockaddr *) &in, sizeof(in)) < 0 ? -errno : 0;
}

/* sbx's egress programs judge every socket of the run, and deny everything to a run sbxd has not yet
 * registered. Returns 0, or refuse()'s exit status. sbxd registers the run once systemd has made its cgroup (the run's policy is keyed by
 * it), so the helper waits here for the policy to be in force: its own loopback allowed (what every
 * registered run has), the metadata address denied at once. Fail closed after a while. */
#define EGRESS_PROBE_ADDRESS "169.254.169.254"
#define EGRESS_PROBE_PORT 9
static int probe_egress(void) {
        usec_t deadline = now_monotonic() + 10 * USEC_PER_SEC, delay = 500;
        int r;

        for (;;) {
                r = udp_connect4("127.0.0.1", EGRESS_PROBE_PORT);
                if (r != -EPERM)
                        break;
                if (now_monotonic() > deadline)
                        return refuse("the run's egress policy was not put in place within 10s "
                                      "(every socket of the run is denied)");
                (void) usleep(delay);
                delay = MIN(delay * 2, 20 * USEC_PER_MSEC);
        }
        if (r < 0)
                return refuse("the run's own loopback is not reachable (%s)", strerror(-r));
        r = udp_connect4(EGRESS_PROBE_ADDRESS, EGRESS_PROBE_PORT);
        if (r != -EPERM)
                return refuse("sbx's egress programs are not in force (a connect() to " EGRESS_PROBE_ADDRESS
                              " was %s)", r == 0 ? "allowed" : strerror(-r));
        return 0;
}

/* Without swap accounting (no memory.swap.max) the ceiling still holds if there is no swap at all. */
static bool system_has_swap(void) {
        _cleanup_free_ char *buf = NULL;

        if (read_file_at(AT_FDCWD, "/proc/swaps", 64 * 1024, &buf, NULL) < 0)
                return true; /* cannot tell: assume the worst */
        return strchr(buf, '\n') && strchr(buf, '\n')[1] != 0;
}

/* A ceiling's file is missing from the run's cgroup: a refusal, but for a ceiling sbxd found no controller
 * for on this host and named in --unenforced-ceilings, which only a testbed build takes
 * (src/shared/ceilings.h); the run's record says so. */
static bool ceiling_goes_unenforced(Ceiling c, int r) {
        return r == -ENOENT && (arg.unenforced & c);
}

static int check_confinement(const char *cg) {
        _cleanup_free_ char *capbnd = NULL, *seccomp = NULL, *cpu_max = NULL;
        uint64_t v;
        int r;

        if (geteuid() == 0 || getuid() == 0)
                return refuse("running as root; the unit has no DynamicUser");
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
                return refuse("no_new_privs is not set");
        if (status_field("CapBnd", &capbnd) < 0 || strspn(capbnd, "0") != strlen(capbnd))
                return refuse("the capability bounding set is not empty (CapBnd: %s)", strna(capbnd));
        if (status_field("Seccomp", &seccomp) < 0 || !streq(seccomp, "2"))
                return refuse("no seccomp filter is installed (Seccomp: %s)", strna(seccomp));
        /* Probe the filter itself: every sbx policy denies io_uring with EPERM. Unfiltered,
         * io_uring_setup(0, NULL) fails with EINVAL instead. */
        if (syscall(SYS_io_uring_setup, 0, NULL) >= 0 || errno != EPERM)
                return refuse("the syscall filter is not the one promised (io_uring_setup is not denied: %m)");

        if (arg.expect_memory_max != UINT64_MAX &&
            !ceiling_goes_unenforced(CEILING_MEMORY, r = read_cgroup_u64(cg, "memory.max", &v))) {
                if (r < 0)
                        return refuse("MemoryMax cannot be enforced: %s/memory.max: %s (no memory controller?)", cg,
                                      strerror(-r));
                if (v != arg.expect_memory_max)
                        return refuse("MemoryMax is %" PRIu64 " in the kernel, expected %" PRIu64, v,
                                      arg.expect_memory_max);
                r = read_cgroup_u64(cg, "memory.swap.max", &v);
                if (r >= 0 && v != arg.expect_swap_max)
                        return refuse("MemorySwapMax is %" PRIu64 " in the kernel, expected %" PRIu64, v,
                                      arg.expect_swap_max);
                if (r < 0 && (arg.expect_swap_max != 0 || r != -ENOENT || system_has_swap()))
                        return refuse("MemorySwapMax cannot be enforced: %s/memory.swap.max: %s", cg, strerror(-r));
        }
        if (arg.expect_cpu_percent > 0 &&
            !ceiling_goes_unenforced(CEILING_CPU, r = read_cgroup_attr(cg, "cpu.max", &cpu_max))) {
                uint64_t quota, period;
                char tail;

                if (r < 0)
                        return refuse("CPUQuota cannot be enforced: %s/cpu.max: %s (no cpu controller?)", cg,
                                      strerror(-r));
                if (sscanf(cpu_max, "%" SCNu64 " %" SCNu64 "%c", &quota, &period, &tail) != 2 || period == 0 ||
                    quota * 100 / period != arg.expect_cpu_percent)
                        return refuse("CPUQuota is '%s' in the kernel, expected %" PRIu64 "%%", cpu_max,
                                      arg.expect_cpu_percent);
        }
        if (arg.expect_tasks_max != UINT64_MAX &&
            !ceiling_goes_unenforced(CEILING_TASKS, r = read_cgroup_u64(cg, "pids.max", &v))) {
                if (r < 0)
                        return refuse("TasksMax cannot be enforced: %s/pids.max: %s (no pids controller?)", cg,
                                      strerror(-r));
                if (v != arg.expect_tasks_max)
                        return refuse("TasksMax is %" PRIu64 " in the kernel, expected %" PRIu64, v,
                                      arg.expect_tasks_max);
        }
        if (streq_ptr(arg.expect_network, "none")) {
                r = only_loopback();
                if (r < 0)
                        return refuse("cannot list network interfaces: %s", strerror(-r));
                if (r == 0)
                        return refuse("the network namespace is not private (interfaces other than lo are visible)");
        } else if (streq_ptr(arg.expect_network, "egress")) {
                struct stat st;

                if (stat("/proc/self/ns/net", &st) < 0)
                        return refuse("cannot identify the network namespace: %m");
                if (arg.expect_netns_not != 0 && (uint64_t) st.st_ino == arg.expect_netns_not)
                        return refuse("the run is in the host's network namespace, not one of its own");
        }
        if (arg.expect_egress) {
                r = probe_egress();
                if (r != 0) /* refuse()'s exit status */
                        return r;
                /* the host's own addresses, which sbxd added to the deny-list for this run */
                STRV_FOREACH(a, arg.expect_denied) {
                        r = probe_ip_deny(*a);
                        if (r < 0)
                                return refuse("the host's own address %s is not denied (a datagram to it was not "
                                              "refused: %s)", *a, strerror(-r));
                }
        }
        /* One cap for everything the run can write outside its workspace: without its space, HOME, /tmp
         * and /var/tmp would be unbounded (/tmp and /var/tmp on the host's disk). */
        if (arg.expect_disk_max > 0) {
                _cleanup_free_ char *why = NULL;

                r = space_check(arg.expect_disk_max, &why);
                if (r < 0)
                        return refuse("the disk cap is not in force: %s", why ?: strerror(-r));
        }
        /* Landlock (helper/landlock.h): the ruleset is built later, once HOME holds what it links to. */
        if (arg.landlock >= 0) {
                r = landlock_abi();
                if (r < 0 && arg.landlock == LANDLOCK_MODE_REQUIRED)
                        return refuse("Landlock is not available in this kernel (%s) and the profile requires it "
                                      "(files.landlock \"required\")",
                                      r == -EOPNOTSUPP ? "not enabled at boot" : r == -ENOSYS ? "not built in" :
                                                                                             strerror(-r));
                landlock_abi_found = MAX(r, 0);
        }
        /* The generator's drop-in for the profile carries the profile's digest: without it the fixed
         * hardening that no transient property can weaken is missing, or stale. */
        if (arg.expect_profile_digest) {
                const char *d = getenv("SBX_PROFILE_DIGEST");

                if (!d)
                        return refuse("the profile's drop-in is missing (no SBX_PROFILE_DIGEST): the profile is "
                                      "invalid or systemd has not been reloaded since it was installed "
                                      "(run 'sbxctl profile reload')");
                if (!streq(d, arg.expect_profile_digest))
                        return refuse("the profile changed since the last daemon-reload (drop-in %s, profile %s); "
                                      "run 'sbxctl profile reload'", d, arg.expect_profile_digest);
        }
        return 0;
}

/* The workspace and the dataset are bound by path after sbxd checked them: what is bound must be the
 * directory it checked (same device and inode), or a parent swapped for a symlink in between took the
 * bind mount elsewhere. */
static int check_bound_dirs(void) {
        STRV_FOREACH(e, arg.expect_dirs) {
                _cleanup_free_ char *path = strdup(*e);
                uint64_t dev, ino;
                struct stat st;
                char *colon;
                int n = 0;

                if (!path)
                        return refuse("out of memory");
                colon = strchr(path, ':');
                *colon = 0;
                if (sscanf(colon + 1, "%" SCNu64 ":%" SCNu64 "%n", &dev, &ino, &n) != 2 || colon[1 + n] != 0)
                        return refuse("bad --expect-dir= argument '%s'", *e);
                if (stat(path, &st) < 0)
                        return refuse("%s is not bound: %m", path);
                if ((uint64_t) st.st_dev != dev || (uint64_t) st.st_ino != ino)
                        return refuse("%s is not the directory sbxd checked (device/inode %" PRIu64 ":%" PRIu64
                                      ", expected %" PRIu64 ":%" PRIu64 "): the path changed before it was bound",
                                      path, (uint64_t) st.st_dev, (uint64_t) st.st_ino, dev, ino);
        }
        return 0;
}

/* Named caches are state directories systemd made for this run's user; they appear in HOME as links,
 * created here as that user (directories systemd would create on the way to a mount point in HOME
 * would be root's, and tools could not add their own files beside the cache). */
static int link_caches(void) {
        STRV_FOREACH(c, arg.caches) {
                _cleanup_free_ char *target = strdup(*c), *link = NULL;
                char *colon, *slash;

                if (!target)
                        return refuse("out of memory");
                colon = strchr(target, ':');
                if (!colon)
                        return refuse("bad --cache= argument '%s'", *c);
                *colon = 0;
                if (asprintf(&link, SBX_HOME "/%s", colon + 1) < 0)
                        return refuse("out of memory");
                for (slash = strchr(link + strlen(SBX_HOME) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                        *slash = 0;
                        if (mkdir(link, 0755) < 0 && errno != EEXIST)
                                return refuse("cannot create %s for cache %s: %m", link, target);
                        *slash = '/';
                }
                if (symlink(target, link) < 0)
                        return refuse("cannot link cache %s as %s: %m", target, link);
        }
        return 0;
}

/* The command's side of spawn_child() (spawn-child.h: it may share our memory until its execve(), so it changes
 * nothing of ours but environ, which spawn_child() sets back). envp: its whole environment
 * (spawn_environ(): the caller's entries, sbxd checked them against the profile, bytes set as given). */
_noreturn_ static void child(char **argv, char **envp, Supervisor *sup) {
        sigset_t none;

        /* A clean start for the command: default handlers (spawn_child() reset ours), then nothing
         * blocked. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        environ = envp; /* execvp() looks up PATH in it, as the command will */
        if (supervisor_child_output(sup) < 0)
                _exit(SBX_EXIT_FAILURE);
        /* The file-system wall's second half (helper/landlock.h), built and checked before: it cannot fail
         * but for a kernel bug; if it does, the command does not run. */
        if (landlock_fd >= 0 && landlock_enforce(landlock_fd) < 0) {
                fprintf(stderr, "sbx: the Landlock ruleset cannot be enforced: %s\n", strerrordesc_np(errno) ?: "?");
                _exit(SBX_EXIT_FAILURE);
        }
        /* The last step before execve(): from here on the profile's syscall rules hold. If they cannot,
         * the command does not run (the parent refuses the run). What follows is execve(), and where it
         * fails write() and exit_group(): calls a rule must not catch where memory is shared (spawn-child.h). */
        if (supervisor_child_seal(sup) < 0)
                _exit(SBX_EXIT_FAILURE);

        execvp(argv[0], argv);
        if (errno == ENOENT) {
                fprintf(stderr, "sbx: %s: command not found\n", argv[0]);
                _exit(SBX_EXIT_NOT_FOUND);
        }
        fprintf(stderr, "sbx: %s: %s\n", argv[0], strerrordesc_np(errno) ?: "?");
        _exit(SBX_EXIT_CANNOT_EXEC);
}

typedef struct RunChild {
        char **argv, **envp;
        Supervisor *sup;
} RunChild;

static void run_child(void *userdata) {
        RunChild *c = userdata;

        child(c->argv, c->envp, c->sup);
}

/* Whether the command's child may share our memory until its execve() (spawn-child.h). */
static bool spawn_shared(void) {
        return !arg.seccomp_filter || arg.spawn_shared;
}

static void end_leftovers(const char *cg) {
        /* The command is gone; whatever it left in the cgroup ends now, so the figures are complete and
         * nothing outlives the run even for a moment (systemd would kill it right after us anyway). */
        for (unsigned round = 0; round < 100; round++) {
                _cleanup_free_ char *path = NULL, *buf = NULL;
                bool any = false;

                if (asprintf(&path, "%s/cgroup.procs", cg) < 0 ||
                    read_file_at(AT_FDCWD, path, 4 * 1024 * 1024, &buf, NULL) < 0)
                        return;
                for (char *p = buf; *p;) {
                        pid_t pid = (pid_t) strtol(p, &p, 10);
                        if (pid > 0 && pid != getpid()) {
                                (void) kill(pid, SIGKILL);
                                any = true;
                        }
                        p += strspn(p, "\n");
                }
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (!any)
                        return;
                usleep(1000);
        }
}

/* The status line on the run's control channel (sandbox-proto.h: FINISHED), if sbxd kept its end: it is
 * there a hop sooner than through systemd. Never waited for: sbxd reads it, or the line still comes as
 * STATUS=. */
static void report_finished(const char *line, int exit_status) {
        SbxFinishedMsg m = { .h.type = SBX_MSG_FINISHED, .h.arg = (uint32_t) exit_status };
        size_t n = strlen(line);

        if (n < sizeof(m.status)) {
                memcpy(m.status, line, n + 1);
                (void) send(report_fd, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
}

/* What the command's supervisor alone knows (denied calls, output: supervise.h). The resource figures
 * come from the unit's privileged figures reader (run_figures()) and from systemd, not from here. */
static void report(const char *extra, int status) {
        _cleanup_free_ char *line = NULL;
        char exited[32] = "", landlock[32] = "";

        /* A command that exited (not one a signal ended): its exit status, which ours will be too
         * (exit_as()). With it, sbxd can answer the run now, once it has seen that the cgroup holds only
         * us (docs/design.md); without it, it waits for the unit's stop-post. */
        if (status >= 0 && WIFEXITED(status))
                (void) snprintf(exited, sizeof(exited), " exit_status=%d", WEXITSTATUS(status));
        if (arg.landlock >= 0) /* the Landlock ABI the command ran under; 0: none (best-effort) */
                (void) snprintf(landlock, sizeof(landlock), " landlock=%d", landlock_abi_found);
        /* One line for systemd and for sbxd. Without the memory for it, only "finished": the run is then
         * answered at its unit's stop-post. */
        if (asprintf(&line, "STATUS=finished%s%s%s", extra ?: "", exited, landlock) < 0)
                line = NULL;
        /* Not while the unit is being stopped (a stop signal pending): systemd signals its main process, us,
         * before the rest of the cgroup, so a command that ended at a stop is never reported here; its end
         * comes through systemd, which knows why the unit stopped. */
        if (line && report_fd >= 0 && exited[0] && !stop_pending())
                report_finished(line + strlen("STATUS="), WEXITSTATUS(status));
        report_fd = safe_close(report_fd);
        (void) notify_send(line ?: "STATUS=finished");
        (void) notify_barrier(5 * USEC_PER_SEC);
}

/* "key value" lines of a cgroup file (memory.events, pids.events, cpu.stat): the value of key. */
static int cgroup_keyed(const char *cg, const char *attr, const char *key, uint64_t *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t k = strlen(key);
        char *end;
        int r;

        r = read_cgroup_file(cg, attr, &buf);
        if (r < 0)
                return r;
        for (const char *p = buf; *p; p += strcspn(p, "\n"), p += *p == '\n') {
                if (!strneq(p, key, k) || p[k] != ' ')
                        continue;
                errno = 0;
                *ret = strtoull(p + k + 1, &end, 10);
                return errno == 0 && end != p + k + 1 && (*end == '\n' || *end == 0) ? 0 : -EBADMSG;
        }
        return -ENOENT;
}

static int figures_write(const char *dir, const char *unit, const char *text, size_t len) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        if (dir_fd < 0)
                return negative_errno();
        return write_file_atomic_at(dir_fd, unit, text, len, 0600);
}

/* The privileged figures reader: an ExecStopPost=+ of every run's unit, run once the run's processes
 * are gone and before systemd removes the cgroup. It reads the cgroup's peaks and limit events (no
 * process of the run's user has a say in them) into DIR/<unit>, where sbxd reads them into the record
 * (docs/limits.md). Its standard output and error are the caller's: it says nothing there, a failure
 * goes into the file as "error: ..." for sbxd to log. */
static int run_figures(const char *dir) {
        static const struct {
                const char *attr, *key, *name;
                Ceiling ceiling;
                bool optional;     /* absent without a quota (the cpu controller is then not enabled) */
        } counters[] = {
                { "memory.events", "max", "memory_max", CEILING_MEMORY },
                { "memory.events", "oom", "oom", CEILING_MEMORY },
                { "memory.events", "oom_kill", "oom_kill", CEILING_MEMORY },
                { "pids.events", "max", "fork_refused", CEILING_TASKS },
                { "cpu.stat", "nr_throttled", "cpu_throttled", CEILING_CPU, true },
                { "cpu.stat", "throttled_usec", "cpu_throttled_usec", CEILING_CPU, true },
        };
        _cleanup_free_ char *cg = NULL, *text = NULL, *error = NULL;
        const char *unit;
        size_t len = 0;
        FILE *f;
        uint64_t v;
        int r;

        r = own_cgroup(&cg);
        if (r < 0)
                return SBX_EXIT_FAILURE; /* no unit to name the file after: sbxd finds none */
        unit = strrchr(cg, '/');
        if (!unit || !strneq(unit + 1, "sbx-", 4) || strlen(unit) < 13 || !streq(unit + strlen(unit) - 8, ".service"))
                return SBX_EXIT_FAILURE;
        unit++;
        f = open_memstream(&text, &len);
        if (!f)
                return SBX_EXIT_FAILURE;
        if (read_cgroup_u64(cg, "memory.peak", &v) >= 0 && v != UINT64_MAX)
                fprintf(f, "memory_peak=%" PRIu64 " ", v);
        if (read_cgroup_u64(cg, "pids.peak", &v) >= 0 && v != UINT64_MAX)
                fprintf(f, "tasks_peak=%" PRIu64 " ", v);
        /* the run's space as the command (and what it left running) left it: bound here as in the run */
        {
                bool full;

                if (space_usage(&v, &full) >= 0)
                        fprintf(f, "disk_used=%" PRIu64 " disk_full=%d ", v, full);
        }
        for (size_t i = 0; i < ELEMENTSOF(counters) && !error; i++) {
                r = cgroup_keyed(cg, counters[i].attr, counters[i].key, &v);
                if (r == -ENOENT && (counters[i].optional || ceilings_unenforced(counters[i].ceiling)))
                        v = 0; /* a testbed build's run without the controller: its record says so */
                else if (r < 0 && asprintf(&error, "error: %s/%s has no %s: %s\n", cg, counters[i].attr,
                                           counters[i].key, strerror(-r)) < 0)
                        error = NULL;
                fprintf(f, "%s=%" PRIu64 "%s", counters[i].name, v, i + 1 < ELEMENTSOF(counters) ? " " : "\n");
        }
        if (fclose(f) != 0)
                return SBX_EXIT_FAILURE;
        r = error ? figures_write(dir, unit, error, strlen(error)) : figures_write(dir, unit, text, len);
        return r < 0 || error ? SBX_EXIT_FAILURE : 0;
}

/* The run's dynamic user, seen from a privileged ExecStartPre=+/ExecStopPost=+ command. systemd gives
 * such a command the dynamic user's group (same number as its uid) as a supplementary group; NSS and
 * /run/systemd/dynamic-uid are not reliable there, as the unit's TemporaryFileSystem=/run applies. */
static int resolve_dynamic_user(uid_t *ret) {
        gid_t groups[64];
        int n, found = 0;
        uid_t uid = 0;

        n = getgroups(ELEMENTSOF(groups), groups);
        if (n < 0)
                return negative_errno();
        for (int i = 0; i < n; i++)
                if (uid_is_dynamic(groups[i])) {
                        uid = (uid_t) groups[i];
                        found++;
                }
        if (found != 1)
                return -ESRCH;
        *ret = uid;
        return 0;
}

/* The privileged half: runs as root outside the sandbox (ExecStartPre=+ / ExecStopPost=+), with the
 * unit's dynamic user already allocated (a supplementary group of this command; $USER is the name the
 * run's user has inside, "sbx", not the dynamic user's). */
static int run_handover(const char *dir) {
        unsigned long n = 0;
        uid_t uid = 0;
        int r;

        if (arg.owner_uid == (uid_t) -1 || dir[0] != '/') {
                fprintf(stderr, "sbx: workspace hand-over: invalid arguments\n");
                return SBX_EXIT_FAILURE;
        }
        r = resolve_dynamic_user(&uid);
        if (r < 0 || uid == 0 || uid == arg.owner_uid) {
                fprintf(stderr, "sbx: workspace hand-over: cannot resolve the run's dynamic user (uid %u)\n", (unsigned) uid);
                return SBX_EXIT_FAILURE;
        }
        /* a dynamic user's group has the same number */
        /* The unit's mount namespace applies here too: the caller's directory is visible as the bind
         * mount at the workspace path (its own path may be hidden, e.g. under /home or /tmp). */
        if (access(SBX_WORKSPACE, F_OK) >= 0)
                dir = SBX_WORKSPACE;
        if (arg.owner_ino != 0) {
                struct stat st;

                if (stat(dir, &st) < 0 || st.st_dev != arg.owner_dev || st.st_ino != arg.owner_ino) {
                        fprintf(stderr, "sbx: workspace hand-over: %s is not the directory sbxd checked\n", dir);
                        return SBX_EXIT_FAILURE;
                }
        }
        /* While the run owns the workspace no one else enters it (other tenants' runs see the host's
         * tree); its mode is given back with it, whatever the run made of it. */
        if (streq(arg.handover, "in"))
                r = handover_tree(dir, arg.owner_uid, arg.owner_gid, uid, (gid_t) uid,
                                  arg.workspace_mode == (mode_t) -1 ? (mode_t) -1 : 0700, &n);
        else
                r = handover_tree(dir, uid, (gid_t) uid, arg.owner_uid, arg.owner_gid, arg.workspace_mode, &n);
        if (r < 0) {
                fprintf(stderr, "sbx: workspace hand-over (%s) of %s failed: %s\n", arg.handover, dir, strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        return 0;
}

/* sbx-bpffs.service */
static int run_bpffs(const char *path) {
        int r = bpffs_ensure(path);

        if (r < 0) {
                fprintf(stderr, "sbx: cannot mount the BPF file system at %s: %s\n", path, strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        return 0;
}

/* The reaper's: the caches named by the arguments. */
static int run_remove_caches(char **dirs) {
        int failed = 0, r;

        r = cache_remove_leftovers();
        if (r < 0)
                fprintf(stderr, "sbx: cannot remove what an earlier removal of caches left: %s\n", strerror(-r));
        STRV_FOREACH(d, dirs) {
                r = cache_remove(*d);
                if (r < 0) {
                        fprintf(stderr, "sbx: cannot remove the cache %s: %s\n", *d, strerror(-r));
                        failed++;
                }
        }
        return failed > 0 ? SBX_EXIT_FAILURE : 0;
}

/* "OWNER/PROFILE/CACHE:SIZE": the cache's directory */
static char *cache_image_dir(const char *c) {
        return strndup(c, (size_t) (strrchr(c, ':') - c));
}

/* The space unit's: the run's space made or removed (op "create:PATH", "remove:PATH"). */
static int run_space(const char *op) {
        bool create = strneq(op, "create:", 7);
        int r;

        r = create ? space_create(op + 7, arg.space_size) : space_remove(op + 7);
        if (r < 0) {
                fprintf(stderr, "sbx: cannot %s the run's space %s: %s\n", create ? "make" : "remove", op + 7,
                        strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        /* the caches' own file systems: mounted for the run, unmounted after it (also after a failed
         * start: the remove command runs then too) */
        STRV_FOREACH(c, arg.cache_images) {
                _cleanup_free_ char *dir = cache_image_dir(*c);
                uint64_t size = 0;

                if (!dir)
                        return SBX_EXIT_FAILURE;
                (void) exec_parse_u64(strrchr(*c, ':') + 1, &size);
                r = create ? cache_image_attach(dir, size) : cache_image_detach(dir);
                if (r < 0) {
                        fprintf(stderr, "sbx: cannot %s the file system of cache %s: %s\n",
                                create ? "mount" : "unmount", dir, strerror(-r));
                        if (!create)
                                continue;
                        STRV_FOREACH(d, arg.cache_images) {
                                _cleanup_free_ char *e = cache_image_dir(*d);

                                if (e)
                                        (void) cache_image_detach(e);
                        }
                        (void) space_remove(op + 7);
                        return SBX_EXIT_FAILURE;
                }
        }
        return 0;
}

/* The network unit's: the run's network namespace made, removed, or connected with the bridge whose
 * command line argv is (op "create:PATH", "remove:PATH", "serve:PATH"). */
static int run_netns(const char *op, char **argv) {
        bool create = strneq(op, "create:", 7);
        int r;

        if (strneq(op, "serve:", 6)) {
                r = netns_serve(op + 6, argv, 10 * USEC_PER_SEC);
                if (r < 0) {
                        fprintf(stderr, "sbx: cannot connect the run's network namespace %s with %s: %s\n", op + 6,
                                argv[0], r == -ETIMEDOUT ? "no answer within 10 s" :
                                r == -ECHILD ? "it exited" : strerror(-r));
                        return SBX_EXIT_FAILURE;
                }
                return 0;
        }
        r = create ? netns_create(op + 7) : netns_remove(op + 7);
        if (r < 0) {
                fprintf(stderr, "sbx: cannot %s the run's network namespace %s: %s\n", create ? "create" : "remove",
                        op + 7, strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        return 0;
}

/* Everything the command runs in, checked and made before it comes: the confinement, the bound
 * directories, the caches' links, the workspace, the Landlock ruleset. Returns 0 with the unit's cgroup
 * in *ret_cg, or refuse()'s exit status. */
static int set_up(char **ret_cg) {
        _cleanup_free_ char *cg = NULL, *error = NULL;
        sigset_t mask;
        int r;

        r = own_cgroup(&cg);
        if (r < 0)
                return refuse("cannot find the unit's cgroup: %s", strerror(-r));
        r = check_confinement(cg);
        if (r != 0)
                return r;

        r = check_bound_dirs();
        if (r != 0)
                return r;
        r = link_caches();
        if (r != 0)
                return r;

        /* empty: the run's space is new */
        if (arg.export_out && mkdir(SBX_EXPORT_OUT, 0700) < 0)
                return refuse("cannot create the export directory %s: %m", SBX_EXPORT_OUT);
        if (arg.workspace_private && mkdir(SBX_WORKSPACE, 0755) < 0 && errno != EEXIST)
                return refuse("cannot create the private workspace %s: %m", SBX_WORKSPACE);
        if (chdir(SBX_WORKSPACE) < 0)
                return refuse("cannot enter the workspace %s: %m", SBX_WORKSPACE);
        /* Now that HOME holds what it links to. In a sandbox each command is a Landlock domain of its own:
         * without scoping there, so that one command's processes can still signal another's and reach its
         * abstract sockets, as in any shell (docs/security.md). */
        if (landlock_abi_found > 0) {
                r = landlock_ruleset_make(landlock_abi_found, arg.landlock_ro, arg.landlock_rw, SBX_HOME, !arg.serve,
                                          &error);
                if (r < 0)
                        return refuse("%s", error ?: strerror(-r));
                landlock_fd = r;
        }

        /* We stay: no core, no ptrace/proc-mem access by the command (same uid), reap orphans. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

        /* Block the stop signals: systemd sends them to the whole cgroup, the command gets its own copy and
         * we wait for it to end (SIGKILL after TimeoutStopSec= ends us all anyway). */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGPIPE);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        *ret_cg = TAKE_PTR(cg);
        return 0;
}

/* A sandbox: no command of its own, sbxd's come on the control channel (serve.h). */
static int run_sandbox(const char *cg) {
        ServeConfig cfg = { .seccomp_hex = arg.seccomp_filter, .output_max = arg.output_max,
                            .output_cut = arg.output_cut, .spawn_shared = spawn_shared(), .exec_child = child };
        _cleanup_close_ int ctl = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3), null = -EBADF;
        int r;

        /* the channel is fd 0 as systemd gave it: moved out of every command's reach */
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (ctl < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0)
                return refuse("cannot take the sandbox's control channel: %m");
        r = serve(ctl, &cfg);
        if (r < 0)
                fprintf(stderr, "sbx: the sandbox's control channel failed: %s\n", strerror(-r));
        end_leftovers(cg);
        report(NULL, -1);
        return r < 0 ? SBX_EXIT_FAILURE : 0;
}

/* The command comes on stdin, the channel sbxd queued it on (sandbox-proto.h): for a run at once,
 * for a pooled unit when a run is asked for, everything above checked before (docs/pool.md). Its
 * stdio replace the channel; a pooled unit's READY=1 starts its RuntimeMaxSec= from here. Returns 0
 * with the command in *ret_argv and *ret_env, or the exit status with *ret_argv left NULL. */
static int take_command(Supervisor *sup, char ***ret_argv, char ***ret_env) {
        _cleanup_close_ int ctl = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        char **cmd_argv = NULL, **cmd_env = NULL;
        int fds[3] = { -EBADF, -EBADF, -EBADF };
        int r;

        if (ctl < 0)
                return refuse("cannot take the unit's control channel: %m");
        if (arg.pool) /* while it waits: the page faults its command's path would take (spawn-child.h) */
                spawn_prepare(spawn_shared());
        r = serve_wait_one(ctl, arg.pool, &cmd_argv, &cmd_env, fds, sup);
        if ((r == 0 || r == -ECANCELED) && arg.pool) /* sbxd let it go: never used */
                return 0;
        if (r == -ECANCELED) /* stopped before its command started: sbxd records why */
                return SBX_EXIT_FAILURE;
        if (r < 0 && arg.pool) {
                fprintf(stderr, "sbx: the pooled unit's control channel failed: %s\n", strerror(-r));
                return SBX_EXIT_FAILURE;
        }
        if (r <= 0)
                return refuse("cannot read the run's command from its control channel: %s",
                              r < 0 ? strerror(-r) : "closed");
        for (int i = 0; i < 3; i++)
                if (dup2(fds[i], i) < 0)
                        return refuse("cannot take the run's standard input and output: %m");
        for (int i = 0; i < 3; i++)
                if (fds[i] > 2)
                        (void) close(fds[i]);
        /* kept for FINISHED (report()); the command never gets it (close-on-exec) */
        report_fd = TAKE_FD(ctl);
        /* without it the unit stays "activating" and its RuntimeMaxSec= never starts: fail closed */
        r = arg.pool ? notify_send("READY=1") : 1;
        if (r <= 0)
                return refuse("cannot tell systemd that the run's command starts (READY=1): %s",
                              r < 0 ? strerror(-r) : "no notify socket");
        *ret_argv = cmd_argv;
        *ret_env = cmd_env;
        return 0;
}

/* Runs the command as our child under the supervisor and waits for it; then ends what it left behind
 * and reports. Returns 0 with its wait status in *ret_status, or refuse()'s exit status. */
static int supervise_command(Supervisor *sup, const char *cg, char **argv, char **env, int *ret_status) {
        _cleanup_(gvisor_done) Gvisor gv = GVISOR_INIT;
        _cleanup_free_ char *error = NULL, *extra = NULL;
        _cleanup_strv_free_ char **gv_env = NULL;
        _cleanup_free_ char **envp = NULL; /* the strings are environ's and env's */
        uint64_t output_max = arg.output_max;
        pid_t pid;
        int r, status;

        /* The gVisor tier: the command becomes runsc's, with its whole environment (helper/gvisor.h). Its
         * output always goes through the relay: runsc would write an inherited file from offset 0. */
        if (arg.gvisor_network) {
                r = gvisor_environment(environ, env, &gv_env);
                if (r < 0)
                        return refuse("cannot make the command's environment: %s", strerror(-r));
                r = gvisor_find_command(argv[0], gv_env);
                if (r == -ENOENT || r == -EACCES) { /* as the kernel tier's child says it */
                        fprintf(stderr, "sbx: %s: %s\n", argv[0], r == -ENOENT ? "command not found" : strerror(-r));
                        report(NULL, -1);
                        *ret_status = W_EXITCODE(r == -ENOENT ? SBX_EXIT_NOT_FOUND : SBX_EXIT_CANNOT_EXEC, 0);
                        return 0;
                }
                r = gvisor_prepare(&gv, arg.gvisor_network, arg.gvisor_allow, arg.gvisor_deny, argv, gv_env,
                                   SBX_WORKSPACE, &error);
                if (r < 0)
                        return refuse("%s", error ?: strerror(-r));
                argv = gv.argv;
                env = NULL;
                if (output_max == 0)
                        output_max = UINT64_MAX;
        }

        /* A terminal's output is always relayed: the pty's master has to be read (terminal.h). */
        if (sup->tty && output_max == 0)
                output_max = UINT64_MAX;

        /* The syscall rules' program and the output relay (supervise.h). */
        r = supervisor_prepare(sup, arg.seccomp_filter, output_max, arg.output_cut, &error);
        if (r < 0)
                return refuse("%s", error ?: strerror(-r));
        /* Temporary elevated capture (docs/capture.md): offered where the output is relayed. Where it cannot be,
         * the run goes on as it would (nothing is said on the caller's stderr) and sbxd refuses to capture it:
         * it finds no pipe to open. */
        if (output_max > 0)
                (void) supervisor_offer_capture(sup);

        envp = spawn_environ(env);
        if (!envp)
                return refuse("out of memory");
        pid = spawn_child(spawn_shared(), run_child, &(RunChild) { .argv = argv, .envp = envp, .sup = sup });
        if (pid < 0)
                return refuse("cannot start the command's process: %s", strerror(-pid));

        r = supervisor_start(sup, pid, &error);
        if (r < 0) {
                /* The child could not install the program and has ended (reaped there) without running the
                 * command. (Had it got as far as execve() all the same, the program would be in force
                 * without a supervisor: what it catches fails with ENOSYS.) */
                end_leftovers(cg);
                return refuse("%s", error ?: strerror(-r));
        }
        /* Until the command ends: answers the caught syscalls, relays the output, reaps orphans. */
        r = supervisor_wait(sup, pid, &status);
        if (r < 0)
                return refuse("waitpid failed: %s", strerror(-r));

        end_leftovers(cg);
        /* runsc that could not start the command is a refusal (123), not the command's status */
        if (arg.gvisor_network && gvisor_check_started(&error) < 0)
                return refuse("%s", error);
        supervisor_finish(sup);
        if (supervisor_status(sup, &extra) < 0)
                extra = NULL;
        if (gv.version) { /* which runsc ran it, for the record */
                char *t = NULL;

                if (asprintf(&t, "%s runsc=%s", strempty(extra), gv.version) < 0)
                        t = NULL;
                free(extra);
                extra = t;
        }
        report(extra, status);
        *ret_status = status;
        return 0;
}

/* Our exit status is the command's, or we end by its signal. */
static int exit_as(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                struct rlimit rl = {};
                sigset_t mask;

                (void) setrlimit(RLIMIT_CORE, &rl);
                (void) signal(sig, SIG_DFL);
                sigemptyset(&mask);
                sigaddset(&mask, sig);
                (void) sigprocmask(SIG_UNBLOCK, &mask, NULL);
                (void) raise(sig);
                /* a signal that does not terminate (SIGCHLD...) cannot have ended the child */
        }
        return SBX_EXIT_FAILURE;
}

int main(int argc, char *argv[]) {
        _cleanup_(supervisor_done) Supervisor sup = SUPERVISOR_INIT;
        _cleanup_free_ char *cg = NULL;
        char **cmd_argv = NULL, **cmd_env = NULL;
        int r, status;

        if (argc == 2 && streq(argv[1], "--version"))
                return printf("sbx-exec %s%s\n", PACKAGE_VERSION, SBX_BUILD_KIND) < 0 ? SBX_EXIT_FAILURE : 0;
        /* sbx-image@DIGEST.service: a base image's mount (helper/image-mount.c) */
        if (argc == 2 && (strneq(argv[1], "--image-mount=", 14) || strneq(argv[1], "--image-umount=", 15)))
                return image_mount_main(argv[1]);
        r = exec_options_parse(&arg, argc, argv);
        if (r < 0) {
                fprintf(stderr, "sbx-exec: invalid arguments (this program is started by sbxd)\n");
                return SBX_EXIT_FAILURE;
        }
        argv += r;

        /* The privileged commands of the other units sbxd starts: each does one thing and exits. */
        if (arg.handover)
                return argv[1] ? SBX_EXIT_FAILURE : run_handover(argv[0]);
        if (arg.figures)
                return run_figures(arg.figures);
        if (arg.bpffs)
                return run_bpffs(arg.bpffs);
        if (arg.remove_caches)
                return run_remove_caches(argv);
        if (arg.space_op)
                return run_space(arg.space_op);
        if (arg.netns_op)
                return run_netns(arg.netns_op, argv);

        /* A run's or a sandbox's main process. */
        r = set_up(&cg);
        if (r != 0)
                return r;
        if (arg.serve)
                return run_sandbox(cg);
        r = take_command(&sup, &cmd_argv, &cmd_env);
        if (!cmd_argv)
                return r;
        r = supervise_command(&sup, cg, cmd_argv, cmd_env, &status);
        if (r != 0)
                return r;
        return exit_as(status);
}
