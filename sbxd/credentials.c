/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Secrets at rest, a run's credential files, and its broker grants (credentials.h, docs/credentials.md).
 *
 * A value passes through sbxd only on its way to systemd-creds: read from the caller's file descriptor
 * into locked memory, written to systemd-creds' stdin, wiped. Everything sbxd keeps, and everything the
 * unit's properties name, is encrypted (the host's credential key, and a TPM2 where the host has one):
 * PID 1 decrypts it into the unit's credentials directory when the unit starts, and removes that
 * directory when the unit ends. */
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bus-errors.h"
#include "credentials.h"
#include "feature.h"
#include "fileio.h"
#include "grant.h"
#include "log.h"
#include "run.h"


DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* A value in memory that is never swapped out and is wiped when freed. */
typedef struct Secret {
        void *data;
        size_t size, alloc;
} Secret;

static void secret_done(Secret *s) {
        if (!s->data)
                return;
        explicit_bzero(s->data, s->alloc);
        (void) munlock(s->data, s->alloc);
        munmap(s->data, s->alloc);
        *s = (Secret) {};
}

/* Reads at most SBX_SECRET_MAX bytes from fd, a memfd: a file of the caller's could be on a file system
 * (FUSE) that makes sbxd wait for ever; a memfd is read from memory. */
static int secret_read_fd(int fd, const char *what, Secret *ret, sd_bus_error *error) {
        Secret s = { .alloc = SBX_SECRET_MAX + 1 };
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || fcntl(fd, F_GET_SEALS) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s: expected a memfd (memfd_create(2))", what);
        s.data = mmap(NULL, s.alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s.data == MAP_FAILED)
                return -errno;
        (void) mlock(s.data, s.alloc);
        (void) madvise(s.data, s.alloc, MADV_DONTDUMP);
        for (;;) {
                n = pread(fd, (char *) s.data + s.size, s.alloc - s.size, (off_t) s.size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;

                        secret_done(&s);
                        return sd_bus_error_setf(error, ERR_INVALID, "%s: cannot read: %s", what, strerror(-e));
                }
                if (n == 0 || s.size + (size_t) n >= s.alloc) {
                        s.size += (size_t) n;
                        break;
                }
                s.size += (size_t) n;
        }
        if (s.size == 0 || s.size > SBX_SECRET_MAX) {
                size_t size = s.size;

                secret_done(&s);
                return sd_bus_error_setf(error, ERR_INVALID, "%s: %s (1 byte to %u KiB)", what,
                                         size == 0 ? "empty" : "too large", SBX_SECRET_MAX / 1024);
        }
        *ret = s;
        return 0;
}

#define CREDS_TIMEOUT_USEC (30 * USEC_PER_SEC)

/* systemd-creds encrypt --name=NAME - OUTPUT, the value on its stdin. sbxd waits for it (a TPM2 takes
 * a few hundred milliseconds), at most CREDS_TIMEOUT_USEC. */
static int creds_encrypt(const char *name, const Secret *s, const char *output) {
        _cleanup_free_ char *name_opt = NULL;
        posix_spawn_file_actions_t fa;
        int pipefd[2], status, r;
        pid_t pid;

        if (asprintf(&name_opt, "--name=%s", name) < 0)
                return -ENOMEM;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        r = posix_spawn_file_actions_init(&fa);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&fa, pipefd[0], STDIN_FILENO);
        if (r == 0)
                r = posix_spawn(&pid, SBX_SYSTEMD_CREDS, &fa, NULL,
                                (char *[]) { (char *) "systemd-creds", (char *) "encrypt", name_opt, (char *) "-",
                                             (char *) output, NULL },
                                /* its warnings (a host key not on encrypted media) are not sbxd's */
                                (char *[]) { (char *) "SYSTEMD_LOG_LEVEL=err", (char *) "LC_ALL=C", NULL });
        posix_spawn_file_actions_destroy(&fa);
        (void) close(pipefd[0]);
        if (r != 0) {
                (void) close(pipefd[1]);
                return -r;
        }
        r = loop_write(pipefd[1], s->data, s->size);
        (void) close(pipefd[1]);
        /* at most CREDS_TIMEOUT_USEC (a TPM that does not answer): then it is killed */
        for (usec_t end = now_monotonic() + CREDS_TIMEOUT_USEC;;) {
                pid_t k = waitpid(pid, &status, WNOHANG);

                if (k == pid)
                        break;
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (now_monotonic() >= end) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -ETIME;
                }
                (void) usleep(2000);
        }
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EIO;
        return 0;
}

#define SECRETS_PER_TENANT_MAX 256

static int secret_path(const char *tenant, const char *name, char **ret) {
        return asprintf(ret, SBX_SECRETS_DIR "/%s/%s.cred", tenant, name) < 0 ? -ENOMEM : 0;
}

/* ---- the caller's secrets ---- */

static int count_secrets(const char *dir_path) {
        DIR *dir = opendir(dir_path);
        int n = 0;

        if (!dir)
                return 0;
        for (struct dirent *de; (de = readdir(dir));)
                if (de->d_name[0] != '.')
                        n++;
        closedir(dir);
        return n;
}

static int compare_names(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b, *nx = NULL, *ny = NULL;

        (void) json_object_object_get_ex(x, "name", &nx);
        (void) json_object_object_get_ex(y, "name", &ny);
        return strcmp(strempty(json_object_get_string(nx)), strempty(json_object_get_string(ny)));
}

/* The name checked, and the caller's tenant: whose secret it is. */
static int caller_secret(Manager *m, sd_bus_message *msg, const char *name, char tenant[static TENANT_ID_LEN + 1],
                         sd_bus_error *error) {
        if (!credential_name_is_valid(name))
                return sd_bus_error_setf(error, ERR_INVALID, "name: '%s' is not a credential name ([a-z][a-z0-9_-]{0,63})",
                                         name);
        return manager_caller_tenant(m, msg, tenant, NULL);
}

int secrets_method_add(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *dir = NULL, *path = NULL, *tmp = NULL;
        char tenant[TENANT_ID_LEN + 1];
        Secret s = {};
        const char *name;
        int fd, replace, r;

        r = sd_bus_message_read(msg, "shb", &name, &fd, &replace);
        if (r < 0)
                return r;
        r = caller_secret(m, msg, name, tenant, error);
        if (r < 0)
                return r;
        if (asprintf(&dir, SBX_SECRETS_DIR "/%s", tenant) < 0 || secret_path(tenant, name, &path) < 0 ||
            asprintf(&tmp, "%s.new", path) < 0)
                return -ENOMEM;
        if (!replace && access(path, F_OK) == 0)
                return sd_bus_error_setf(error, ERR_EXISTS, "name: a secret named '%s' exists (replace it with --replace)",
                                         name);
        if (access(path, F_OK) < 0 && count_secrets(dir) >= SECRETS_PER_TENANT_MAX)
                return sd_bus_error_setf(error, ERR_INVALID, "name: the caller has %d secrets, the most sbx keeps "
                                         "(remove some with sbxctl secret rm)", SECRETS_PER_TENANT_MAX);
        r = secret_read_fd(fd, "value", &s, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = mkdir_p(dir, 0700);
        if (r >= 0) {
                (void) unlink(tmp);
                r = creds_encrypt(name, &s, tmp);
        }
        secret_done(&s);
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                log_error_errno(r, "Failed to store a secret of tenant %s with systemd-creds: %m", tenant);
                return sd_bus_error_setf(error, ERR_START_FAILED, "Cannot encrypt the secret with systemd-creds: %s",
                                         strerror(-r));
        }
        log_info("Tenant %s stored secret '%s'.", tenant, name);
        return sd_bus_reply_method_return(msg, NULL);
}

int secrets_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(json_object_putp) json_object *list = json_object_new_array();
        _cleanup_free_ char *dir_path = NULL;
        char tenant[TENANT_ID_LEN + 1];
        DIR *dir;
        int r;

        if (!list)
                return -ENOMEM;
        r = manager_caller_tenant(m, msg, tenant, NULL);
        if (r < 0)
                return r;
        if (asprintf(&dir_path, SBX_SECRETS_DIR "/%s", tenant) < 0)
                return -ENOMEM;
        dir = opendir(dir_path);
        if (!dir && errno != ENOENT)
                return -errno;
        for (struct dirent *de; dir && (de = readdir(dir));) {
                size_t n = strlen(de->d_name);
                _cleanup_free_ char *name = NULL;
                json_object *o;
                struct stat st;
                char buf[TIMESTAMP_MAX];

                if (n <= 5 || !streq(de->d_name + n - 5, ".cred"))
                        continue;
                name = strndup(de->d_name, n - 5);
                if (!name)
                        break;
                if (!credential_name_is_valid(name) || fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                o = json_object_new_object();
                if (!o || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        break;
                }
                if (json_object_object_add(o, "name", json_object_new_string(name)) < 0 ||
                    json_object_object_add(o, "modified_at",
                                           format_timestamp(buf, (usec_t) st.st_mtim.tv_sec * USEC_PER_SEC +
                                                                         (usec_t) st.st_mtim.tv_nsec / 1000) ?
                                                   json_object_new_string(buf) :
                                                   NULL) < 0)
                        break;
        }
        if (dir)
                closedir(dir);
        json_object_array_sort(list, compare_names);
        return sd_bus_reply_method_return(msg, "s", json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN));
}

int secrets_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *path = NULL;
        char tenant[TENANT_ID_LEN + 1];
        const char *name;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = caller_secret(m, msg, name, tenant, error);
        if (r < 0)
                return r;
        if (secret_path(tenant, name, &path) < 0)
                return -ENOMEM;
        if (unlink(path) < 0) {
                if (errno == ENOENT)
                        return sd_bus_error_setf(error, ERR_NO_SECRET, "name: no secret named '%s'", name);
                return -errno;
        }
        log_info("Tenant %s removed secret '%s'.", tenant, name);
        return sd_bus_reply_method_return(msg, NULL);
}

/* ---- a run's credentials ---- */

void run_credential_files_done(RunCredentialFiles *f) {
        f->names = strv_free(f->names);
        f->paths = strv_free(f->paths);
}

static int strv_push(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **t = realloc(*l, (n + 2) * sizeof(char *));

        if (!t) {
                free(s);
                return -ENOMEM;
        }
        t[n] = s;
        t[n + 1] = NULL;
        *l = t;
        return 0;
}

static int strv_push_copy(char ***l, const char *s) {
        char *c = strdup(s);

        return c ? strv_push(l, c) : -ENOMEM;
}

static int run_stage_dir(const char *run_id, char **ret) {
        return asprintf(ret, SBX_RUN_CREDENTIALS_DIR "/%s", run_id) < 0 ? -ENOMEM : 0;
}

int run_credentials_prepare(const char *tenant, const char *run_id, const RunRequest *req, RunCredentialFiles *ret,
                            sd_bus_error *error) {
        RunCredentialFiles f = {};
        _cleanup_free_ char *stage = NULL;
        int r = 0;

        strncpy(f.run_id, run_id, RUN_ID_LEN);
        STRV_FOREACH(c, req->credentials) {
                char *path = NULL;

                if (secret_path(tenant, *c, &path) < 0)
                        r = -ENOMEM;
                else if (access(path, F_OK) < 0) {
                        free(path);
                        r = sd_bus_error_setf(error, ERR_INVALID, "credentials: no secret named '%s' (sbxctl secret add %s)",
                                              *c, *c);
                } else {
                        r = strv_push(&f.paths, path);
                        if (r >= 0)
                                r = strv_push_copy(&f.names, *c);
                }
                if (r < 0)
                        goto fail;
        }
        if (strv_length(req->credential_fd_names) > 0) {
                if (run_stage_dir(run_id, &stage) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                r = mkdir_p(stage, 0700);
                if (r < 0)
                        goto fail;
                f.staged = true;
        }
        for (size_t i = 0; i < strv_length(req->credential_fd_names); i++) {
                const char *name = req->credential_fd_names[i];
                _cleanup_free_ char *what = NULL;
                char *path = NULL;
                Secret s = {};

                if (asprintf(&what, "credentials: '%s'", name) < 0 || asprintf(&path, "%s/%s.cred", stage, name) < 0) {
                        free(path);
                        r = -ENOMEM;
                        goto fail;
                }
                r = secret_read_fd(req->credential_fds[i], what, &s, error);
                if (r >= 0 && !sd_bus_error_is_set(error)) {
                        r = creds_encrypt(name, &s, path);
                        secret_done(&s);
                        if (r < 0)
                                r = sd_bus_error_setf(error, ERR_START_FAILED,
                                                      "credentials: cannot encrypt '%s' with systemd-creds: %s", name,
                                                      strerror(-r));
                }
                if (r >= 0 && sd_bus_error_is_set(error))
                        r = -EINVAL;
                if (r >= 0)
                        r = strv_push(&f.paths, path);
                else
                        free(path);
                if (r >= 0)
                        r = strv_push_copy(&f.names, name);
                if (r < 0)
                        goto fail;
        }
        *ret = f;
        return 0;
fail:
        if (f.staged)
                run_credentials_remove(run_id);
        run_credential_files_done(&f);
        return r;
}

int run_credentials_append(sd_bus_message *call, const RunCredentialFiles *f) {
        int r;

        if (strv_length(f->names) == 0)
                return 0;
        r = sd_bus_message_open_container(call, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(call, "s", "LoadCredentialEncrypted");
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'v', "a(ss)");
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(ss)");
        for (size_t i = 0; r >= 0 && f->names[i]; i++)
                r = sd_bus_message_append(call, "(ss)", f->names[i], f->paths[i]);
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(call);
        return r;
}

/* ---- a run's grants, for the broker ---- */

/* A grant of the profile, every key written (grant_dispatch() reads it back without defaults). */
static int grant_to_json(const Grant *g, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        _cleanup_free_ char *url = NULL;
        json_object *methods = json_object_new_array();

        if (!o || !methods || json_object_object_add(o, "methods", methods) < 0) {
                json_object_put(methods);
                return -ENOMEM;
        }
        for (GrantMethod m = 0; m < _GRANT_METHOD_MAX; m++)
                if (grant_allows_method(g, m) &&
                    json_object_array_add(methods, json_object_new_string(grant_method_to_string(m))) < 0)
                        return -ENOMEM;
        if (grant_url_format(&g->url_prefix, &url) < 0)
                return -ENOMEM;
        if (json_object_object_add(o, "credential", json_object_new_string(g->credential)) < 0 ||
            json_object_object_add(o, "url_prefix", json_object_new_string(url)) < 0 ||
            json_object_object_add(o, "header", json_object_new_string(g->header)) < 0 ||
            json_object_object_add(o, "value_prefix", json_object_new_string(g->value_prefix)) < 0 ||
            json_object_object_add(o, "max_body", json_object_new_uint64(g->max_body)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

int run_grants_write(const Profile *p, const char *run_id, const char *tenant, const char *cgroup_path) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int dir = -EBADF;
        json_object *grants = json_object_new_object();
        const char *text;
        int r;

        if (!o || !grants || json_object_object_add(o, "grants", grants) < 0) {
                json_object_put(grants);
                return -ENOMEM;
        }
        /* the cgroup as /proc/PID/cgroup names it: below the cgroup file system's root */
        if (!strneq(cgroup_path, "/sys/fs/cgroup/", strlen("/sys/fs/cgroup/")))
                return -EINVAL;
        if (json_object_object_add(o, "run", json_object_new_string(run_id)) < 0 ||
            json_object_object_add(o, "tenant", json_object_new_string(tenant)) < 0 ||
            json_object_object_add(o, "cgroup", json_object_new_string(cgroup_path + strlen("/sys/fs/cgroup"))) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_grants; i++) {
                json_object *g;

                r = grant_to_json(&p->grants[i], &g);
                if (r < 0)
                        return r;
                if (json_object_object_add(grants, p->grants[i].name, g) < 0)
                        return -ENOMEM;
        }
        r = mkdir_p(SBX_GRANTS_DIR, 0700);
        if (r < 0)
                return r;
        dir = open(SBX_GRANTS_DIR, O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        if (asprintf(&name, "%s.json", run_id) < 0)
                return -ENOMEM;
        /* the operations log first, empty: the broker appends to it and never creates it, so that a
         * request ending after the run leaves nothing (run_grants_take_operations()) */
        {
                _cleanup_free_ char *ops = NULL;
                _cleanup_close_ int fd = -EBADF;

                if (asprintf(&ops, "%s.ops", run_id) < 0)
                        return -ENOMEM;
                fd = openat(dir, ops, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0)
                        return -errno;
        }
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        return write_file_atomic_at(dir, name, text, strlen(text), 0600);
}

/* GRANT_OPS_LINES_MAX lines of at most ~9 KiB (a URL prefix of GRANT_URL_MAX bytes and the rest) */
#define OPS_FILE_MAX (16U * 1024U * 1024U)

void run_grants_take_operations(const char *run_id, RunRecord *rec) {
        _cleanup_free_ char *grants = NULL, *ops = NULL, *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size, bad = 0;
        int r;

        if (!rec->credentials || asprintf(&grants, SBX_GRANTS_DIR "/%s.json", run_id) < 0 ||
            asprintf(&ops, SBX_GRANTS_DIR "/%s.ops", run_id) < 0)
                return;
        /* The grants first: from here on the broker refuses the run's requests. Then the log is taken
         * away from the broker (it never creates it) and read: a request still in flight is not logged
         * and leaves nothing behind. */
        (void) unlink(grants);
        fd = open(ops, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return;
        (void) unlink(ops);
        r = read_fd_full(fd, OPS_FILE_MAX, &text, &size);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the broker's operations of run %s: %m", run_id);
                return;
        }
        for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
                end = strchr(line, '\n');
                if (!end)
                        break; /* a line being written when the log was taken: not a whole one */
                *end = 0;
                if (*line && run_record_add_brokered(rec, line) == -EBADMSG)
                        bad++;
        }
        if (bad > 0)
                log_warning("The broker's operations log of run %s has %zu malformed lines, ignored.", run_id, bad);
}

static void remove_dir_files(const char *path) {
        DIR *d = opendir(path);

        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));)
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
        (void) rmdir(path);
}

void run_credentials_remove(const char *run_id) {
        _cleanup_free_ char *stage = NULL, *grants = NULL, *ops = NULL;

        if (run_stage_dir(run_id, &stage) < 0 || asprintf(&grants, SBX_GRANTS_DIR "/%s.json", run_id) < 0 ||
            asprintf(&ops, SBX_GRANTS_DIR "/%s.ops", run_id) < 0)
                return;
        remove_dir_files(stage);
        (void) unlink(grants);
        (void) unlink(ops);
}

bool run_credentials_gone(const char *unit, const char *run_id) {
        _cleanup_free_ char *creds = NULL, *stage = NULL, *grants = NULL, *ops = NULL;

        if (asprintf(&creds, "/run/credentials/%s", unit) < 0 || run_stage_dir(run_id, &stage) < 0 ||
            asprintf(&grants, SBX_GRANTS_DIR "/%s.json", run_id) < 0 || asprintf(&ops, SBX_GRANTS_DIR "/%s.ops", run_id) < 0)
                return false;
        return access(creds, F_OK) < 0 && errno == ENOENT && access(stage, F_OK) < 0 && errno == ENOENT &&
               access(grants, F_OK) < 0 && errno == ENOENT && access(ops, F_OK) < 0 && errno == ENOENT;
}

void run_credentials_sweep(bool (*has_run)(const char *run_id, void *userdata), void *userdata) {
        const char *const dirs[] = { SBX_RUN_CREDENTIALS_DIR, SBX_GRANTS_DIR };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                DIR *d = opendir(dirs[i]);

                if (!d)
                        continue;
                for (struct dirent *de; (de = readdir(d));) {
                        char id[RUN_ID_LEN + 1] = {};
                        /* ".#RUN.json.XXXX": a grant file an sbxd that crashed was writing */
                        bool temp = strneq(de->d_name, ".#", 2);
                        const char *name = de->d_name + (temp ? 2 : 0), *dot = strchr(name, '.');
                        size_t n = dot ? (size_t) (dot - name) : strlen(name);

                        if (name[0] == '.' || n > RUN_ID_LEN)
                                continue;
                        memcpy(id, name, n);
                        if (!run_id_is_valid(id) || has_run(id, userdata))
                                continue;
                        log_info("Removing the credentials and grants left by run %s.", id);
                        if (temp)
                                (void) unlinkat(dirfd(d), de->d_name, 0);
                        run_credentials_remove(id);
                }
                closedir(d);
        }
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

/* The broker's operations for the run into its record (already there when Exited came); what sbx made for it goes. */
static void credentials_ended(Run *run) {
        if (!run->record->credentials)
                return;
        run_grants_take_operations(run->id, run->record);
        run_credentials_remove(run->id);
        run->record->credentials->gone = run_credentials_gone(run->unit, run->id);
}

/* The command has ended: its grants go now, before its client is answered (Exited), so that the broker
 * refuses everything from then on, and the requests the broker made for it go into the record the answer
 * carries. The rest (its credential files) goes with the cleanup (credentials_ended()). */
static int credentials_exited(Run *run) {
        if (run->record->credentials)
                run_grants_take_operations(run->id, run->record);
        return 0;
}

static void credentials_abandon(Run *run) {
        if (run->record->credentials)
                run_credentials_remove(run->id);
}

/* A run sbxd follows, or one whose record says it is running (not adopted: its things stay). */
static bool id_has_run(const char *id, void *userdata) {
        Manager *m = userdata;
        _cleanup_(run_record_freep) RunRecord *rec = NULL;

        int r;

        if (manager_find_run(m, id))
                return true;
        r = store_read(&m->store, id, &rec);
        if (r == -ENOENT)
                return false;
        return r < 0 || !rec->finished;
}

/* Credentials and grants of runs that ended while no sbxd ran (a run that was not adopted, or whose record
 * cannot be read, keeps its grants). */
static void credentials_gc(Manager *m, bool runs_known) {
        if (runs_known)
                run_credentials_sweep(id_has_run, m);
}

/* Its credentials (encrypted files PID 1 decrypts into the unit's credentials directory) and its
 * grants (the broker's to read): made for it here, removed when it ends (run_complete()). */
static int credentials_prepare_unit(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        const Profile *profile = ctx->profile;
        _cleanup_strv_free_ char **grant_names = NULL;
        int r;

        if (!run_request_has_credentials(ctx->req) && profile->n_grants == 0)
                return 0;
        run->cred_files = calloc(1, sizeof(RunCredentialFiles));
        if (!run->cred_files)
                return -ENOMEM;
        grant_names = calloc(profile->n_grants + 1, sizeof(char *));
        if (!grant_names)
                return -ENOMEM;
        for (size_t i = 0; i < profile->n_grants; i++)
                if (!(grant_names[i] = strdup(profile->grants[i].name)))
                        return -ENOMEM;
        r = run_credentials_prepare(run->record->tenant, run->id, ctx->req, run->cred_files, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r < 0 ? r : -EINVAL;
        r = run_record_credentials_init(run->record, run->cred_files->names, grant_names);
        if (r >= 0 && profile->n_grants > 0) {
                r = run_grants_write(profile, run->id, run->record->tenant, run->cgroup_path);
                if (r < 0) {
                        run_credentials_remove(run->id);
                        return sd_bus_error_setf(error, ERR_UNENFORCEABLE, "Cannot write the grants of the run "
                                                 "for the broker in %s: %s", SBX_GRANTS_DIR, strerror(-r));
                }
        }
        if (r < 0) {
                run_credentials_remove(run->id);
                return r;
        }
        return 0;
}

/* LoadCredentialEncrypted= of the run's unit. */
static int credentials_append_units(Run *run, sd_bus_message *call) {
        if (!run->cred_files)
                return 0;
        return run_credentials_append(call, run->cred_files);
}

static void credentials_free_run(Run *run) {
        if (run->cred_files)
                run_credential_files_done(run->cred_files);
        run->cred_files = mfree(run->cred_files);
}

const Feature feature_credentials = {
        .name = "credentials",
        .prepare_unit = credentials_prepare_unit,
        .append_units = credentials_append_units,
        .exited = credentials_exited,
        .ended = credentials_ended,
        .start_refused = credentials_ended,
        .start_failed = credentials_ended,
        .abandon = credentials_abandon,
        .gc = credentials_gc,
        .free_run = credentials_free_run,
};
