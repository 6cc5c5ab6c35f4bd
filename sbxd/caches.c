/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caches feature (feature.h): the profiles' caches seen from sbxd, their last use, which a new run
 * cannot have (in use, or being removed), and their removal by the reaper (caches.h). */
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
#include "feature.h"
#include "bus-errors.h"
#include "log.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

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

static bool caches_removing(Manager *m, const char *dir) {
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

/* The start job of unit ended with result: if it was a removal of caches, new runs may have them again. */
static void caches_removal_done(Manager *m, const char *unit, const char *result) {
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

static void caches_done(Manager *m) {
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

/* What a cache takes on disk: its file system's image (the blocks written: images are sparse), or for a
 * cache of an earlier version, a directory, its tree. */
static uint64_t cache_bytes(int cfd, const struct stat *st, const char *dir) {
        _cleanup_free_ char *image = NULL;
        struct stat ist;

        if (asprintf(&image, CACHE_IMAGE_ROOT "/%s.img", dir) >= 0 && stat(image, &ist) >= 0 && S_ISREG(ist.st_mode))
                return (uint64_t) ist.st_blocks * 512;
        return (uint64_t) st->st_blocks * 512 + tree_bytes(cfd, st->st_dev, 0);
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
                .bytes = cache_bytes(cfd, &st, dir),
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
                                          "as", 3, "-" CACHE_ROOT, "-" CACHE_LINK_ROOT, "-" CACHE_IMAGE_ROOT, "PrivateNetwork", "b", 1,
                                          "NoNewPrivileges", "b", 1);
        if (r >= 0)
                r = manager_send_oneshot_call(m, call, argv, NULL, NULL, NULL);
        return r;
}

/* Marks dirs as being removed (new runs keep off them), forgets their last use, and starts their removal. */
static int remove_caches(Manager *m, char **dirs) {
        char id[RUN_ID_LEN + 1], unit[64];
        int r;

        r = run_id_new(id);
        if (r < 0)
                return r;
        snprintf(unit, sizeof(unit), "sbx-cache-removal-%.16s.service", id);
        STRV_FOREACH(d, dirs) {
                char stamp[128];
                _cleanup_free_ char *path = NULL;

                r = removing_add(m, *d, unit);
                if (r < 0)
                        return r;
                dir_to_stamp(*d, stamp, sizeof(stamp));
                if (asprintf(&path, USE_DIR "/%s", stamp) >= 0)
                        (void) unlink(path);
        }
        r = start_removal(m, dirs, unit);
        if (r < 0) {
                log_warning_errno(r, "Failed to start the removal of %zu caches: %m", strv_length(dirs));
                caches_removal_done(m, unit, "failed to start");
        }
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
                r = remove_caches(m, victims);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        log_info("Reaper: removing %zu caches (past their retention or the size cap).", n_victims);
        }
        if (json_object_object_add(caches, "kept", json_object_new_uint64(n_kept)) < 0 ||
            json_object_object_add(caches, "kept_bytes", json_object_new_uint64(kept_bytes)) < 0 ||
            json_object_object_add(caches, "retention_usec", json_object_new_uint64(conf->cache_retention)) < 0 ||
            json_object_object_add(caches, "max_bytes", json_object_new_uint64(conf->cache_max_size)) < 0)
                return -ENOMEM;
        return 0;
}

/* ---- the caller's own caches (sbxctl cache) ---- */

/* The caller's caches: those below its cache owner id. */
static int caller_caches(Manager *m, sd_bus_message *msg, CacheList *mine, char owner[static TENANT_ID_LEN + 1]) {
        _cleanup_(cache_list_done) CacheList all = {};
        char tenant[TENANT_ID_LEN + 1];
        uid_t uid;
        int r;

        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        store_cache_owner_id(&m->store, uid, owner);
        r = caches_scan(m, &all);
        if (r < 0)
                return r;
        for (size_t i = 0; i < all.n; i++) {
                CacheUse *c;
                char **d;

                if (!strneq(all.dirs[i], owner, TENANT_ID_LEN) || all.dirs[i][TENANT_ID_LEN] != '/')
                        continue;
                c = realloc(mine->c, (mine->n + 1) * sizeof(CacheUse));
                if (!c)
                        return -ENOMEM;
                mine->c = c;
                d = realloc(mine->dirs, (mine->n + 2) * sizeof(char *));
                if (!d)
                        return -ENOMEM;
                mine->dirs = d;
                d[mine->n] = TAKE_PTR(all.dirs[i]);
                d[mine->n + 1] = NULL;
                c[mine->n] = all.c[i];
                c[mine->n].dir = d[mine->n];
                mine->n++;
        }
        return 0;
}

/* {"profile", "name", "bytes", "last_use"} of cache c (OWNER/PROFILE/NAME) appended to a; the object in
 * *ret, for more keys. */
static int cache_entry_add(json_object *a, const CacheUse *c, json_object **ret) {
        const char *profile = c->dir + TENANT_ID_LEN + 1, *name = strrchr(c->dir, '/') + 1;
        json_object *o = json_object_new_object();

        if (!o || json_object_array_add(a, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        if (json_object_object_add(o, "profile", json_object_new_string_len(profile, (int) (name - 1 - profile))) < 0 ||
            json_object_object_add(o, "name", json_object_new_string(name)) < 0 ||
            json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes)) < 0 ||
            json_object_object_add(o, "last_use", json_object_new_uint64(c->last_use)) < 0)
                return -ENOMEM;
        if (ret)
                *ret = o;
        return 0;
}

static int load_conf(DaemonConf *conf, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        int r = daemon_conf_load(DAEMON_CONF_PATH, conf, &why);

        if (r < 0)
                return why ? sd_bus_error_setf(error, ERR_INVALID, "%s", why) : r;
        return 0;
}

/* ListCaches() -> s: [{"profile", "name", "bytes", "last_use", "expires_at", "in_use"}] */
int caches_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(cache_list_done) CacheList l = {};
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();
        char owner[TENANT_ID_LEN + 1];
        DaemonConf conf;
        int r;

        if (!a)
                return -ENOMEM;
        r = load_conf(&conf, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = caller_caches(userdata, msg, &l, owner);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l.n; i++) {
                json_object *o;

                r = cache_entry_add(a, &l.c[i], &o);
                if (r < 0)
                        return r;
                if (json_object_object_add(o, "expires_at", conf.cache_retention > 0 ?
                                           json_object_new_uint64(l.c[i].last_use + conf.cache_retention) : NULL) < 0 ||
                    json_object_object_add(o, "in_use", json_object_new_boolean(l.c[i].busy)) < 0)
                        return -ENOMEM;
        }
        return sd_bus_reply_method_return(msg, "s", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
}

/* RemoveCache(s profile, s name) -> (): one of the caller's caches goes (not one a run uses) */
int caches_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(cache_list_done) CacheList l = {};
        _cleanup_free_ char *dir = NULL;
        char owner[TENANT_ID_LEN + 1];
        const char *profile, *name;
        int r;

        r = sd_bus_message_read(msg, "ss", &profile, &name);
        if (r < 0)
                return r;
        r = caller_caches(userdata, msg, &l, owner);
        if (r < 0)
                return r;
        if (asprintf(&dir, "%s/%s/%s", owner, profile, name) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < l.n; i++) {
                if (!streq(l.dirs[i], dir))
                        continue;
                if (l.c[i].busy)
                        return sd_bus_error_setf(error, ERR_BUSY, "cache: %s/%s is in use by a run (or being removed)",
                                                 profile, name);
                r = remove_caches(userdata, (char *[]) { dir, NULL });
                if (r < 0)
                        return sd_bus_error_setf(error, ERR_START_FAILED, "cache: cannot start the removal of %s/%s: %s",
                                                 profile, name, strerror(-r));
                log_info("Cache %s/%s of owner %s: removal started on request.", profile, name, owner);
                return sd_bus_reply_method_return(msg, NULL);
        }
        return sd_bus_error_setf(error, ERR_NO_CACHE, "cache: you have no cache %s/%s", profile, name);
}

/* PruneCaches() -> s: the caller's caches unused for longer than CacheRetentionSec= go now, as the reaper
 * would remove them; [{"profile", "name", "bytes", "last_use"}] of those */
int caches_method_prune(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(cache_list_done) CacheList l = {};
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();
        _cleanup_strv_free_ char **victims = NULL;
        char owner[TENANT_ID_LEN + 1];
        size_t n = 0;
        DaemonConf conf;
        int r;

        if (!a)
                return -ENOMEM;
        r = load_conf(&conf, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = caller_caches(userdata, msg, &l, owner);
        if (r < 0)
                return r;
        (void) cache_prune_select(l.c, l.n, now_realtime(), conf.cache_retention, 0);
        victims = calloc(l.n + 1, sizeof(char *));
        if (!victims)
                return -ENOMEM;
        for (size_t i = 0; i < l.n; i++) {
                if (l.c[i].verdict == CACHE_KEEP)
                        continue;
                r = cache_entry_add(a, &l.c[i], NULL);
                if (r < 0)
                        return r;
                if (!(victims[n++] = strdup(l.dirs[i])))
                        return -ENOMEM;
        }
        if (n > 0) {
                r = remove_caches(userdata, victims);
                if (r < 0)
                        return sd_bus_error_setf(error, ERR_START_FAILED, "cache: cannot start the removal: %s",
                                                 strerror(-r));
        }
        return sd_bus_reply_method_return(msg, "s", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

/* Whose caches the run's are, and their use noted (the reaper keeps caches in use). */
static int caches_prepare(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        if (ctx->req->cache_owner && !(run->cache_owner = strdup(ctx->req->cache_owner)))
                return -ENOMEM;
        caches_note_use(run->manager, ctx->plan);
        return 0;
}

/* A run's caches are released with its unit, in the cleanup: its client is answered at Finished, so
 * that its next run of the profile has them (not ephemeral ones, as while this one holds them). */
static int caches_exited(Run *run) {
        return run->cache_owner != NULL;
}

/* Caches are per caller and profile, handed to one run's user at a time: while another run of the same
 * caller and profile holds them, a new run gets ephemeral ones; so it does for a cache the reaper is
 * removing. */
static int busy_caches(Manager *m, const Profile *p, const char *tenant, const char *cache_owner, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        for (size_t i = 0; i < p->n_caches; i++) {
                _cleanup_free_ char *dir = NULL;
                char **k;

                if (asprintf(&dir, "%s/%s/%s", cache_owner, p->name, p->caches[i].name) < 0)
                        return -ENOMEM;
                if (!caches_removing(m, dir))
                        continue;
                k = realloc(l, (n + 2) * sizeof(char *));
                if (!k)
                        return -ENOMEM;
                l = k;
                if (!(l[n] = strdup(p->caches[i].name)))
                        return -ENOMEM;
                l[++n] = NULL;
        }
        for (Run *r = m->runs; r; r = r->next)
                if (r->record && streq_ptr(r->record->profile, p->name) && streq(r->record->tenant, tenant) &&
                    p->n_caches > 0) {
                        l = strv_free(l);
                        l = calloc(p->n_caches + 1, sizeof(char *));
                        if (!l)
                                return -ENOMEM;
                        for (size_t i = 0; i < p->n_caches; i++)
                                if (!(l[i] = strdup(p->caches[i].name)))
                                        return -ENOMEM;
                        break;
                }
        *ret = TAKE_PTR(l);
        return 0;
}

/* What the plan needs: whose caches the run's are, and which of them it cannot have (busy_caches()). */
static int caches_plan_inputs(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error) {
        char cache_owner[TENANT_ID_LEN + 1], tenant[TENANT_ID_LEN + 1];

        if (p->n_caches == 0)
                return 0;
        store_cache_owner_id(&m->store, uid, cache_owner);
        store_tenant_id(&m->store, uid, tenant);
        if (!(req->cache_owner = strdup(cache_owner)))
                return -ENOMEM;
        return busy_caches(m, p, tenant, cache_owner, &req->busy_caches);
}

const Feature feature_caches = {
        .name = "caches",
        .stop = caches_done,
        .plan_inputs = caches_plan_inputs,
        .prepare = caches_prepare,
        .exited = caches_exited,
        .job_removed = caches_removal_done,
};
