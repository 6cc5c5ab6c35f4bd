/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "grant.h"
#include "broker-log.h"
#include "secret.h"

#define SECRET_CACHE_MAX 64
#define DECRYPT_TIMEOUT_MSEC 15000


/* ---- locked buffers ---- */

int secret_new(size_t capacity, Secret **ret) {
        long page = sysconf(_SC_PAGESIZE);
        size_t ps = page > 0 ? (size_t) page : 4096, mapped;
        Secret *s;
        void *p;

        if (capacity == 0 || capacity > SIZE_MAX - ps)
                return -EINVAL;
        mapped = (capacity + ps - 1) / ps * ps;
        p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return -ENOMEM;
        if (mlock(p, mapped) < 0) {
                int r = negative_errno();

                (void) munmap(p, mapped);
                return r;
        }
        (void) madvise(p, mapped, MADV_DONTDUMP);
        s = calloc(1, sizeof(Secret));
        if (!s) {
                (void) munlock(p, mapped);
                (void) munmap(p, mapped);
                return -ENOMEM;
        }
        *s = (Secret) { .data = p, .mapped = mapped };
        *ret = s;
        return 0;
}

Secret *secret_free(Secret *s) {
        if (!s)
                return NULL;
        explicit_bzero(s->data, s->mapped);
        (void) munlock(s->data, s->mapped);
        (void) munmap(s->data, s->mapped);
        return mfree(s);
}

int secret_append(Secret *s, const void *p, size_t n) {
        if (n > s->mapped - s->size)
                return -ENOBUFS;
        memcpy(s->data + s->size, p, n);
        s->size += n;
        return 0;
}

static int secret_copy(const Secret *s, Secret **ret) {
        Secret *c;
        int r;

        r = secret_new(MAX(s->size, (size_t) 1), &c);
        if (r < 0)
                return r;
        (void) secret_append(c, s->data, s->size);
        *ret = c;
        return 0;
}

/* ---- decryption ---- */

static void posix_spawn_file_actions_destroyp(posix_spawn_file_actions_t **fa) {
        if (*fa)
                (void) posix_spawn_file_actions_destroy(*fa);
}

static void posix_spawnattr_destroyp(posix_spawnattr_t **a) {
        if (*a)
                (void) posix_spawnattr_destroy(*a);
}

/* The child's end: exit status 0, or its failure logged. */
static int reap(pid_t pid, const char *name, bool kill_it) {
        int status;

        if (kill_it)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(negative_errno(), "Failed to wait for systemd-creds: %m");
        if (kill_it)
                return 0;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (WIFEXITED(status))
                log_warning("systemd-creds could not decrypt secret '%s' (exit status %d).", name, WEXITSTATUS(status));
        else
                log_warning("systemd-creds decrypting secret '%s' was killed by signal %d.", name,
                            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return -EBADMSG;
}

/* Runs systemd-creds with fd as its standard input, its standard output read into a locked buffer. */
static int decrypt(int fd, const char *name, Secret **ret) {
        _cleanup_(posix_spawn_file_actions_destroyp) posix_spawn_file_actions_t *fa = NULL;
        _cleanup_(posix_spawnattr_destroyp) posix_spawnattr_t *attr = NULL;
        posix_spawn_file_actions_t fa_storage;
        posix_spawnattr_t attr_storage;
        _cleanup_(secret_freep) Secret *s = NULL;
        _cleanup_close_ int out_r = -EBADF, out_w = -EBADF;
        _cleanup_free_ char *name_arg = NULL;
        usec_t deadline;
        sigset_t none, def;
        int pipefd[2], r;
        pid_t pid;

        if (asprintf(&name_arg, "--name=%s", name) < 0)
                return -ENOMEM;
        char *argv[] = { (char *) "systemd-creds", (char *) "decrypt", name_arg, (char *) "--newline=no",
                         (char *) "-", (char *) "-", NULL };

        r = secret_new(GRANT_SECRET_MAX + 1, &s);
        if (r < 0)
                return r;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        out_r = pipefd[0];
        out_w = pipefd[1];

        if (posix_spawn_file_actions_init(&fa_storage) != 0)
                return -ENOMEM;
        fa = &fa_storage;
        if (posix_spawnattr_init(&attr_storage) != 0)
                return -ENOMEM;
        attr = &attr_storage;
        /* stdin: the credential file; stdout: the pipe; stderr: ours (the journal), for its errors;
         * nothing else, whatever other threads opened without O_CLOEXEC */
        r = posix_spawn_file_actions_adddup2(fa, fd, STDIN_FILENO);
        r = r ?: posix_spawn_file_actions_adddup2(fa, out_w, STDOUT_FILENO);
        r = r ?: posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
        /* the daemon ignores SIGPIPE, and other threads may block signals: not the child */
        (void) sigemptyset(&none);
        (void) sigemptyset(&def);
        (void) sigaddset(&def, SIGPIPE);
        r = r ?: posix_spawnattr_setsigmask(attr, &none);
        r = r ?: posix_spawnattr_setsigdefault(attr, &def);
        r = r ?: posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (r != 0)
                return -r;
        /* an environment of its own: its warnings (a host key not on encrypted media) are not the
         * broker's to log for every decryption, and nothing of the broker's environment concerns it */
        r = posix_spawn(&pid, SYSTEMD_CREDS_PATH, fa, attr, argv,
                        (char *[]) { (char *) "SYSTEMD_LOG_LEVEL=err", (char *) "LC_ALL=C", NULL });
        if (r != 0)
                return log_error_errno(-r, "Failed to run " SYSTEMD_CREDS_PATH ": %m");
        out_w = safe_close(out_w);

        deadline = now_monotonic() + DECRYPT_TIMEOUT_MSEC * USEC_PER_MSEC;
        for (;;) {
                struct pollfd p = { .fd = out_r, .events = POLLIN };
                usec_t now = now_monotonic();
                ssize_t k;

                if (now >= deadline) {
                        (void) reap(pid, name, true);
                        return log_error_errno(-ETIMEDOUT, "systemd-creds took longer than %d s to decrypt secret '%s'.",
                                               DECRYPT_TIMEOUT_MSEC / 1000, name);
                }
                r = poll(&p, 1, (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (r < 0 && errno != EINTR) {
                        r = negative_errno();
                        (void) reap(pid, name, true);
                        return r;
                }
                if (r <= 0)
                        continue;
                if (s->size >= s->mapped) {
                        (void) reap(pid, name, true);
                        return -EFBIG;
                }
                k = read(out_r, s->data + s->size, s->mapped - s->size);
                if (k < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        r = negative_errno();
                        (void) reap(pid, name, true);
                        return r;
                }
                if (k == 0)
                        break;
                s->size += (size_t) k;
        }
        r = reap(pid, name, false);
        if (r < 0)
                return r;
        if (s->size > GRANT_SECRET_MAX)
                return -EFBIG;
        *ret = TAKE_PTR(s);
        return 0;
}

/* ---- the cache ---- */

typedef struct CacheEntry {
        char tenant[GRANT_TENANT_LEN + 1];
        char name[GRANT_CREDENTIAL_NAME_MAX + 1];
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtim, ctim;
        usec_t used; /* monotonic: the least recently used goes first */
        Secret *secret;
} CacheEntry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static CacheEntry cache[SECRET_CACHE_MAX];

static bool entry_is(const CacheEntry *e, const char *tenant, const char *name) {
        return e->secret && streq(e->tenant, tenant) && streq(e->name, name);
}

static bool entry_matches(const CacheEntry *e, const struct stat *st) {
        return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
               e->mtim.tv_sec == st->st_mtim.tv_sec && e->mtim.tv_nsec == st->st_mtim.tv_nsec &&
               e->ctim.tv_sec == st->st_ctim.tv_sec && e->ctim.tv_nsec == st->st_ctim.tv_nsec;
}

static void entry_drop(CacheEntry *e) {
        secret_free(e->secret);
        *e = (CacheEntry) {};
}

/* Under cache_lock: the entry of (tenant, name), dropped if it is not of this file. */
static CacheEntry *cache_find(const char *tenant, const char *name, const struct stat *st) {
        for (size_t i = 0; i < SECRET_CACHE_MAX; i++) {
                if (!entry_is(&cache[i], tenant, name))
                        continue;
                if (st && entry_matches(&cache[i], st))
                        return &cache[i];
                entry_drop(&cache[i]);
        }
        return NULL;
}

static void cache_forget(const char *tenant, const char *name) {
        pthread_mutex_lock(&cache_lock);
        (void) cache_find(tenant, name, NULL);
        pthread_mutex_unlock(&cache_lock);
}

/* Takes s: into the cache, or freed when it cannot be kept. */
static void cache_put(const char *tenant, const char *name, const struct stat *st, Secret *s) {
        CacheEntry *e = NULL;

        pthread_mutex_lock(&cache_lock);
        (void) cache_find(tenant, name, NULL);
        for (size_t i = 0; i < SECRET_CACHE_MAX; i++)
                if (!e || !cache[i].secret || (e->secret && cache[i].used < e->used))
                        e = &cache[i];
        entry_drop(e);
        *e = (CacheEntry) {
                .dev = st->st_dev,
                .ino = st->st_ino,
                .size = st->st_size,
                .mtim = st->st_mtim,
                .ctim = st->st_ctim,
                .used = now_monotonic(),
                .secret = s,
        };
        strcpy(e->tenant, tenant);
        strcpy(e->name, name);
        pthread_mutex_unlock(&cache_lock);
}

static int cache_get(const char *tenant, const char *name, const struct stat *st, Secret **ret) {
        CacheEntry *e;
        int r = -ENOENT;

        pthread_mutex_lock(&cache_lock);
        e = cache_find(tenant, name, st);
        if (e) {
                e->used = now_monotonic();
                r = secret_copy(e->secret, ret);
        }
        pthread_mutex_unlock(&cache_lock);
        return r;
}

int secret_load(const char *dir, const char *tenant, const char *name, Secret **ret) {
        _cleanup_(secret_freep) Secret *s = NULL, *copy = NULL;
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!lower_hex_is_valid(tenant, GRANT_TENANT_LEN) || !credential_name_is_valid(name))
                return -EINVAL;
        if (asprintf(&path, "%s/%s/%s.cred", dir, tenant, name) < 0)
                return -ENOMEM;
        /* what is stat()ed is what is decrypted: the open file, not the path again */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        cache_forget(tenant, name);
                return r;
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;

        r = cache_get(tenant, name, &st, ret);
        if (r != -ENOENT)
                return r;

        r = decrypt(fd, name, &s);
        if (r < 0)
                return r;
        /* the cache keeps a copy of the secret's size, not of the buffer it was read into */
        r = secret_copy(s, &copy);
        if (r < 0)
                return r;
        cache_put(tenant, name, &st, TAKE_PTR(copy));
        *ret = TAKE_PTR(s);
        return 0;
}
