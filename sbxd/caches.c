/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache-prune.h"
#include "caches.h"
#include "log.h"

/* A run starting with a cache marks its last use: an empty file SBX_STATEDIR/caches/OWNER.PROFILE.CACHE
 * (its mtime). A cache without one (made before sbx kept them) counts from its own directory's mtime. */
#define USE_DIR SBX_STATEDIR "/caches"
/* How long new runs keep off a cache whose removal was started, at the most: until the removal's unit is
 * done (its start job's end, caches_removal_done()), or this long if that is missed. */
#define REMOVING_USEC (10 * 60 * USEC_PER_SEC)
/* How deep the measurement follows a cache's tree: deeper parts are not counted. */
#define MEASURE_DEPTH_MAX 256

static void dir_to_stamp(const char *dir, char *buf, size_t l) {
        snprintf(buf, l, "%s", dir);
        for (char *c = buf; *c; c++)
                if (*c == '/')
                        *c = '.';
}

void caches_note_use(Manager *m, const RunPlan *plan) {
        const Prop *p = prop_table_get(plan->props, "StateDirectory");
        _cleanup_close_ int dfd = -EBADF;

        if (!p)
                return;
        if (mkdir(USE_DIR, 0700) < 0 && errno != EEXIST) {
                log_warning_errno(negative_errno(), "Cannot create " USE_DIR ", ignoring: %m");
                return;
        }
        dfd = open(USE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return;
        STRV_FOREACH(s, p->strv) {
                char stamp[128];
                int fd;

                if (!strneq(*s, "sbx-cache/", 10) || !cache_dir_is_valid(*s + 10))
                        continue;
                dir_to_stamp(*s + 10, stamp, sizeof(stamp));
                fd = openat(dfd, stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0 || futimens(fd, NULL) < 0)
                        log_warning_errno(negative_errno(), "Cannot note the use of cache %s, ignoring: %m", *s + 10);
                safe_close(fd);
        }
}

bool caches_removing(Manager *m, const char *dir) {
        usec_t now = now_monotonic();

        for (size_t i = 0; i < m->n_caches_removing; i++)
                if (m->caches_removing[i].until > now && streq(m->caches_removing[i].dir, dir))
                        return true;
        return false;
}

/* Keeps the entries for which keep() says so. */
static void removing_filter(Manager *m, bool (*keep)(const CacheRemoving *c, const void *arg), const void *arg) {
        size_t k = 0;

        for (size_t i = 0; i < m->n_caches_removing; i++)
                if (keep(&m->caches_removing[i], arg))
                        m->caches_removing[k++] = m->caches_removing[i];
                else {
                        free(m->caches_removing[i].dir);
                        free(m->caches_removing[i].unit);
                }
        m->n_caches_removing = k;
}

static bool not_expired(const CacheRemoving *c, const void *now) {
        return c->until > *(const usec_t *) now;
}

static bool not_of_unit(const CacheRemoving *c, const void *unit) {
        return !streq(c->unit, unit);
}

static int removing_add(Manager *m, const char *dir, const char *unit) {
        CacheRemoving *l;
        usec_t now = now_monotonic();
        size_t k;

        removing_filter(m, not_expired, &now);
        k = m->n_caches_removing;
        l = realloc(m->caches_removing, (k + 1) * sizeof(CacheRemoving));
        if (!l)
                return -ENOMEM;
        m->caches_removing = l;
        l[k] = (CacheRemoving) { .dir = strdup(dir), .unit = strdup(unit), .until = now + REMOVING_USEC };
        if (!l[k].dir || !l[k].unit) {
                free(l[k].dir);
                free(l[k].unit);
                return -ENOMEM;
        }
        m->n_caches_removing++;
        return 0;
}

void caches_removal_done(Manager *m, const char *unit, const char *result) {
        bool ours = false;

        for (size_t i = 0; i < m->n_caches_removing && !ours; i++)
                ours = streq(m->caches_removing[i].unit, unit);
        if (!ours)
                return;
        if (!streq(result, "done"))
                log_warning("The removal of caches by %s finished with result '%s' (see journalctl -u %s).", unit,
                            result, unit);
        removing_filter(m, not_of_unit, unit);
}

void caches_done(Manager *m) {
        usec_t never = USEC_INFINITY;

        removing_filter(m, not_expired, &never);
        m->caches_removing = mfree(m->caches_removing);
}

/* What dfd's tree takes on disk, on its own file system (directories of another are not entered; a file's
 * st_dev is not compared: overlayfs gives files their layer's device), not following symlinks. */
static uint64_t tree_bytes(int dfd, dev_t dev, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        uint64_t sum = 0;

        if (depth > MEASURE_DEPTH_MAX || !(d = fdopendir(dfd))) {
                safe_close(dfd);
                return 0;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (dot_or_dot_dot(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        struct stat sst;

                        if (sub < 0)
                                continue;
                        if (fstat(sub, &sst) < 0 || sst.st_dev != dev) {
                                safe_close(sub);
                                continue;
                        }
                        sum += (uint64_t) sst.st_blocks * 512 + tree_bytes(sub, dev, depth + 1);
                } else
                        sum += (uint64_t) st.st_blocks * 512;
        }
        return sum;
}

static bool run_uses(const Run *run, const char *owner, const char *profile) {
        if (!run->record || !streq_ptr(run->record->profile, profile))
                return false;
        /* a run adopted from an earlier sbxd has no owner noted: all of its profile's caches count */
        return !run->cache_owner || streq(run->cache_owner, owner);
}

typedef struct CacheList {
        CacheUse *c;
        char **dirs;
        size_t n;
} CacheList;

static void cache_list_done(CacheList *l) {
        free(l->c);
        strv_free(l->dirs);
}

static int cache_list_add(Manager *m, CacheList *l, int use_fd, int cfd, const char *dir) {
        const char *slash = strchr(dir, '/'), *profile_end = strrchr(dir, '/');
        _cleanup_free_ char *owner = strndup(dir, (size_t) (slash - dir)),
                            *profile = strndup(slash + 1, (size_t) (profile_end - slash - 1));
        char stamp[128];
        struct stat st, ss;
        CacheUse *c;
        char **d;

        if (!owner || !profile)
                return -ENOMEM;
        if (fstat(cfd, &st) < 0) {
                safe_close(cfd);
                return 0;
        }
        c = realloc(l->c, (l->n + 1) * sizeof(CacheUse));
        if (!c) {
                safe_close(cfd);
                return -ENOMEM;
        }
        l->c = c;
        d = realloc(l->dirs, (l->n + 2) * sizeof(char *));
        if (!d) {
                safe_close(cfd);
                return -ENOMEM;
        }
        l->dirs = d;
        if (!(d[l->n] = strdup(dir))) {
                safe_close(cfd);
                return -ENOMEM;
        }
        d[l->n + 1] = NULL;
        dir_to_stamp(dir, stamp, sizeof(stamp));
        c[l->n] = (CacheUse) {
                .dir = d[l->n],
                .last_use = (use_fd >= 0 && fstatat(use_fd, stamp, &ss, AT_SYMLINK_NOFOLLOW) >= 0 ? timespec_to_usec(&ss.st_mtim)
                                                                                               : timespec_to_usec(&st.st_mtim)),
                .bytes = (uint64_t) st.st_blocks * 512 + tree_bytes(cfd, st.st_dev, 0),
                .busy = caches_removing(m, dir),
        };
        for (Run *run = m->runs; run && !c[l->n].busy; run = run->next)
                c[l->n].busy = run_uses(run, owner, profile);
        l->n++;
        return 0;
}

/* The directory name of d, NULL if it is not one (or "." or ".."). */
static DIR *open_subdir(DIR *d, const char *name) {
        DIR *sub;
        int fd;

        if (dot_or_dot_dot(name) || (fd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
                return NULL;
        sub = fdopendir(fd);
        if (!sub)
                safe_close(fd);
        return sub;
}

/* Every OWNER/PROFILE/CACHE below CACHE_ROOT. Entries of other names (a removal's leftovers) are not
 * caches. */
static int caches_scan(Manager *m, CacheList *l) {
        _cleanup_close_ int root = open(CACHE_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW),
                            use_fd = open(USE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        _cleanup_(closedirp) DIR *owners = NULL;
        struct dirent *o;

        if (root < 0)
                return errno == ENOENT ? 0 : negative_errno();
        owners = fdopendir(TAKE_FD(root));
        if (!owners)
                return negative_errno();
        while ((o = readdir(owners))) {
                _cleanup_(closedirp) DIR *profiles = open_subdir(owners, o->d_name);
                struct dirent *p;

                while (profiles && (p = readdir(profiles))) {
                        _cleanup_(closedirp) DIR *names = open_subdir(profiles, p->d_name);
                        struct dirent *c;

                        while (names && (c = readdir(names))) {
                                _cleanup_free_ char *dir = NULL;
                                int fd, r;

                                if (dot_or_dot_dot(c->d_name) ||
                                    asprintf(&dir, "%s/%s/%s", o->d_name, p->d_name, c->d_name) < 0 ||
                                    !cache_dir_is_valid(dir))
                                        continue;
                                fd = openat(dirfd(names), c->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                                if (fd < 0)
                                        continue;
                                r = cache_list_add(m, l, use_fd, fd, dir);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

/* One privileged one-shot unit removes them all (sbx-exec --remove-caches), in the host's view of
 * /var/lib, with nothing else writable. */
static int start_removal(Manager *m, char **dirs, const char *unit) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        size_t n = strv_length(dirs), k = 0;
        int r;

        argv = calloc(n + 4, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        if (!(argv[k++] = strdup(SBX_EXEC_PATH)) || !(argv[k++] = strdup("--remove-caches")) ||
            !(argv[k++] = strdup("--")))
                return -ENOMEM;
        STRV_FOREACH(d, dirs)
                if (!(argv[k++] = strdup(*d)))
                        return -ENOMEM;
        r = manager_new_oneshot_call(m, unit, "sbx removal of caches past their retention or size", &call);
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)(sv)", "ProtectSystem", "s", "strict", "ReadWritePaths",
                                          "as", 2, "-" CACHE_ROOT, "-" CACHE_LINK_ROOT, "PrivateNetwork", "b", 1,
                                          "NoNewPrivileges", "b", 1);
        if (r >= 0)
                r = manager_send_oneshot_call(m, call, argv);
        return r;
}

int caches_collect(Manager *m, const DaemonConf *conf, json_object *report) {
        _cleanup_(cache_list_done) CacheList l = {};
        _cleanup_strv_free_ char **victims = NULL;
        json_object *caches = json_object_new_object(), *removed = json_object_new_array();
        uint64_t kept_bytes = 0;
        size_t n_kept = 0, n_victims = 0;
        int r;

        if (!caches || !removed || json_object_object_add(report, "caches", caches) < 0) {
                json_object_put(caches);
                json_object_put(removed);
                return -ENOMEM;
        }
        if (json_object_object_add(caches, "removed", removed) < 0) {
                json_object_put(removed);
                return -ENOMEM;
        }
        r = caches_scan(m, &l);
        if (r < 0)
                log_warning_errno(r, "Cannot read the caches in " CACHE_ROOT ", ignoring: %m");
        (void) cache_prune_select(l.c, l.n, now_realtime(), conf->cache_retention, conf->cache_max_size);
        victims = calloc(l.n + 1, sizeof(char *));
        if (!victims)
                return -ENOMEM;
        for (size_t i = 0; i < l.n; i++) {
                json_object *o;

                if (l.c[i].verdict == CACHE_KEEP) {
                        n_kept++;
                        kept_bytes += l.c[i].bytes;
                        continue;
                }
                o = json_object_new_object();
                if (!o || json_object_array_add(removed, o) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
                if (json_object_object_add(o, "cache", json_object_new_string(l.c[i].dir)) < 0 ||
                    json_object_object_add(o, "reason",
                                           json_object_new_string(cache_prune_reason_to_string(l.c[i].verdict))) < 0 ||
                    json_object_object_add(o, "bytes", json_object_new_uint64(l.c[i].bytes)) < 0 ||
                    json_object_object_add(o, "last_use", json_object_new_uint64(l.c[i].last_use)) < 0)
                        return -ENOMEM;
                if (!(victims[n_victims++] = strdup(l.c[i].dir)))
                        return -ENOMEM;
        }
        if (n_victims > 0) {
                char id[RUN_ID_LEN + 1], unit[64];

                r = run_id_new(id);
                if (r < 0)
                        return r;
                snprintf(unit, sizeof(unit), "sbx-cache-removal-%.16s.service", id);
                for (size_t i = 0; i < n_victims; i++) {
                        char stamp[128];
                        _cleanup_free_ char *path = NULL;

                        r = removing_add(m, victims[i], unit);
                        if (r < 0)
                                return r;
                        dir_to_stamp(victims[i], stamp, sizeof(stamp));
                        if (asprintf(&path, USE_DIR "/%s", stamp) >= 0)
                                (void) unlink(path);
                }
                r = start_removal(m, victims, unit);
                if (r < 0) {
                        log_warning_errno(r, "Failed to start the removal of %zu caches: %m", n_victims);
                        caches_removal_done(m, unit, "failed to start");
                } else
                        log_info("Reaper: removing %zu caches (past their retention or the size cap).", n_victims);
        }
        if (json_object_object_add(caches, "kept", json_object_new_uint64(n_kept)) < 0 ||
            json_object_object_add(caches, "kept_bytes", json_object_new_uint64(kept_bytes)) < 0 ||
            json_object_object_add(caches, "retention_usec", json_object_new_uint64(conf->cache_retention)) < 0 ||
            json_object_object_add(caches, "max_bytes", json_object_new_uint64(conf->cache_max_size)) < 0)
                return -ENOMEM;
        return 0;
}
