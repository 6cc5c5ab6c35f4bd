/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run records on disk, one JSON file per run, written atomically; and the figures units leave (store.h). */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fileio.h"
#include "log.h"
#include "sha256.h"
#include "store.h"

#define RECORD_MAX_SIZE (64U * 1024U)

static int load_or_create_key(int dir_fd, uint8_t key[static 32]) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = openat(dir_fd, "tenant.key", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT) {
                uint8_t fresh[32];
                int r;

                if (getrandom(fresh, sizeof(fresh), 0) != sizeof(fresh))
                        return negative_errno();
                r = write_file_atomic_at(dir_fd, "tenant.key", fresh, sizeof(fresh), 0600);
                if (r < 0)
                        return r;
                fd = openat(dir_fd, "tenant.key", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        }
        if (fd < 0)
                return negative_errno();
        n = read(fd, key, 32);
        if (n < 0)
                return negative_errno();
        if (n != 32)
                return -EBADMSG;
        return 0;
}

struct StorePending {
        char run_id[RUN_ID_LEN + 1];
        char *json;
        StorePending *next;
};

static StorePending **pending_find(Store *s, const char *run_id) {
        StorePending **p = &s->pending;

        while (*p && !streq((*p)->run_id, run_id))
                p = &(*p)->next;
        return p;
}

static void pending_drop(Store *s, const char *run_id) {
        StorePending **p = pending_find(s, run_id), *e = *p;

        if (!e)
                return;
        *p = e->next;
        free(e->json);
        free(e);
}

/* A record is written to ".#RUN.json.RANDOM" and renamed over RUN.json (write_file_atomic_at()): a temporary
 * file still there when sbxd starts is what an sbxd killed while writing left. RUN.json is the record as it
 * was before that write (or none: the run never started), the next write makes it whole. */
static void sweep_temp_records(int dir_fd, const char *statedir) {
        unsigned n = 0;
        int fd;
        DIR *d;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));)
                if (strneq(de->d_name, ".#", 2) && strstr(de->d_name, ".json.") &&
                    unlinkat(dir_fd, de->d_name, 0) >= 0)
                        n++;
        closedir(d);
        if (n > 0)
                log_warning("Removed %u unfinished record file(s) from %s/runs (an earlier sbxd ended while writing).",
                            n, statedir);
}

int store_open(Store *s, const char *statedir) {
        _cleanup_close_ int state_fd = -EBADF;
        int r;

        *s = (Store) { .dir_fd = -EBADF, .figures_fd = -EBADF };

        r = mkdir_p(statedir, 0750);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", statedir);
        state_fd = open(statedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open %s: %m", statedir);
        r = load_or_create_key(state_fd, s->tenant_key);
        if (r < 0)
                return log_error_errno(r, "Failed to load %s/tenant.key: %m", statedir);
        if (mkdirat(state_fd, "runs", 0750) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Failed to create %s/runs: %m", statedir);
        s->dir_fd = openat(state_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (s->dir_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open %s/runs: %m", statedir);
        sweep_temp_records(s->dir_fd, statedir);
        /* root's only: written by the units' privileged figures readers */
        if (mkdir(SBX_FIGURES_DIR, 0700) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Failed to create " SBX_FIGURES_DIR ": %m");
        s->figures_fd = open(SBX_FIGURES_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (s->figures_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open " SBX_FIGURES_DIR ": %m");
        return 0;
}

static bool figures_name_is_valid(const char *unit) {
        return unit && strneq(unit, "sbx-", 4) && !strchr(unit, '/') && strlen(unit) < 256;
}

int store_take_figures(Store *s, const char *unit, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (!figures_name_is_valid(unit))
                return -EINVAL;
        r = read_file_at(s->figures_fd, unit, 4096, &text, NULL);
        if (r < 0)
                return r;
        (void) unlinkat(s->figures_fd, unit, 0);
        *ret = TAKE_PTR(text);
        return 0;
}

/* The unit a file of the figures directory is of: its name, or for ".#UNIT.RANDOM" (16 hex digits), what a
 * figures reader killed between writing and renaming left (write_file_atomic_at(); the unit's stop timeout
 * ends it, on a loaded host), UNIT. False for anything else. */
static bool figures_file_unit(const char *name, char unit[static 256]) {
        size_t n = strlen(name);

        if (name[0] != '.') {
                if (n >= 256)
                        return false;
                memcpy(unit, name, n + 1);
                return true;
        }
        if (!strneq(name, ".#", 2) || n < 2 + 1 + 17 || n - 2 - 17 >= 256 || name[n - 17] != '.' ||
            strspn(name + n - 16, "0123456789abcdef") != 16)
                return false;
        memcpy(unit, name + 2, n - 2 - 17);
        unit[n - 2 - 17] = 0;
        return true;
}

/* Removes the figures files of the units drop() names, temporary ones included. */
static void figures_remove_if(Store *s, bool (*drop)(const char *unit, void *userdata), void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        char unit[256];
        DIR *d;

        if (s->figures_fd < 0 || (fd = openat(s->figures_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                return;
        d = fdopendir(fd);
        if (!d)
                return;
        TAKE_FD(fd);
        for (struct dirent *de; (de = readdir(d));)
                if (figures_file_unit(de->d_name, unit) && drop(unit, userdata))
                        (void) unlinkat(s->figures_fd, de->d_name, 0);
        closedir(d);
}

static bool is_unit(const char *unit, void *userdata) {
        return streq(unit, userdata);
}

void store_drop_figures(Store *s, const char *unit) {
        if (figures_name_is_valid(unit) && s->figures_fd >= 0)
                figures_remove_if(s, is_unit, (void *) unit);
}

struct sweep {
        bool (*keep)(const char *unit, void *userdata);
        void *userdata;
};

static bool not_kept(const char *unit, void *userdata) {
        struct sweep *w = userdata;

        return !w->keep(unit, w->userdata);
}

void store_sweep_figures(Store *s, bool (*keep)(const char *unit, void *userdata), void *userdata) {
        figures_remove_if(s, not_kept, &(struct sweep) { keep, userdata });
}

void store_close(Store *s) {
        while (s->pending)
                pending_drop(s, s->pending->run_id);
        s->dir_fd = safe_close(s->dir_fd);
        s->figures_fd = safe_close(s->figures_fd);
        memset(s->tenant_key, 0, sizeof(s->tenant_key));
}

static void keyed_id(const Store *s, const char *prefix, uid_t uid, char ret[static TENANT_ID_LEN + 1]) {
        uint8_t mac[SHA256_DIGEST_SIZE];
        char msg[48];
        int n = snprintf(msg, sizeof(msg), "%suid:%u", prefix, (unsigned) uid);

        hmac_sha256(s->tenant_key, sizeof(s->tenant_key), msg, (size_t) n, mac);
        hex_encode(mac, TENANT_ID_LEN / 2, ret);
}

void store_tenant_id(const Store *s, uid_t uid, char ret[static TENANT_ID_LEN + 1]) {
        keyed_id(s, "", uid, ret);
}

void store_cache_owner_id(const Store *s, uid_t uid, char ret[static TENANT_ID_LEN + 1]) {
        keyed_id(s, "cache:", uid, ret);
}

static int write_json(Store *s, const char *run_id, const char *json) {
        _cleanup_free_ char *name = NULL;

        if (asprintf(&name, "%s.json", run_id) < 0)
                return -ENOMEM;
        return write_file_atomic_at(s->dir_fd, name, json, strlen(json), 0640);
}

int store_write(Store *s, const RunRecord *r) {
        _cleanup_free_ char *json = NULL;
        StorePending *e;
        int k;

        k = run_record_to_json(r, &json);
        if (k < 0)
                return k;
        k = write_json(s, r->run_id, json);
        if (k >= 0 || !(r->finished || r->exited) || strlen(r->run_id) != RUN_ID_LEN) {
                if (k >= 0)
                        pending_drop(s, r->run_id);
                return k;
        }
        /* The record on disk says the run is still running: keep the exited (its answer sent) or finished
         * one until it can be written, the finished one in the exited one's place. */
        e = *pending_find(s, r->run_id);
        if (!e) {
                e = calloc(1, sizeof(*e));
                if (!e)
                        return k;
                strcpy(e->run_id, r->run_id);
                e->next = s->pending;
                s->pending = e;
        }
        free(e->json);
        e->json = TAKE_PTR(json);
        log_warning("The record of run %s is kept in memory until it can be written (%s); sbxd tries again every "
                    "few seconds.", r->run_id, strerror(-k));
        return k;
}

unsigned store_write_pending(Store *s) {
        unsigned left = 0;

        for (StorePending **p = &s->pending; *p;) {
                StorePending *e = *p;

                if (write_json(s, e->run_id, e->json) < 0) {
                        left++;
                        p = &e->next;
                        continue;
                }
                log_info("Wrote the record of run %s, kept in memory until now.", e->run_id);
                *p = e->next;
                free(e->json);
                free(e);
        }
        return left;
}

int store_read(Store *s, const char *run_id, RunRecord **ret) {
        _cleanup_free_ char *name = NULL, *json = NULL, *err = NULL;
        int r;

        if (!run_id_is_valid(run_id))
                return -EINVAL;
        if (asprintf(&name, "%s.json", run_id) < 0)
                return -ENOMEM;
        {
                StorePending *e = *pending_find(s, run_id);

                if (e)
                        return run_record_from_json(e->json, ret, &err);
        }
        r = read_file_at(s->dir_fd, name, RECORD_MAX_SIZE, &json, NULL);
        if (r < 0)
                return r;
        r = run_record_from_json(json, ret, &err);
        if (r < 0)
                log_warning("Run record %s is invalid: %s", name, strna(err));
        return r;
}

int store_remove(Store *s, const char *run_id) {
        _cleanup_free_ char *name = NULL;

        if (!run_id_is_valid(run_id))
                return -EINVAL;
        if (asprintf(&name, "%s.json", run_id) < 0)
                return -ENOMEM;
        return unlinkat(s->dir_fd, name, 0) < 0 ? negative_errno() : 0;
}

static int cmp_started(const void *a, const void *b) {
        const RunRecord *x = *(RunRecord * const *) a, *y = *(RunRecord * const *) b;
        return x->started_at < y->started_at ? -1 : x->started_at > y->started_at;
}

void run_records_free(RunRecord **recs, size_t n) {
        for (size_t i = 0; i < n; i++)
                run_record_free(recs[i]);
        free(recs);
}

int store_load_all(Store *s, RunRecord ***ret, size_t *ret_n) {
        RunRecord **recs = NULL;
        size_t n = 0, allocated = 0;
        int fd, r = 0;
        DIR *d;

        fd = dup(s->dir_fd);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return negative_errno();
        }
        rewinddir(d);

        for (struct dirent *de; (de = readdir(d));) {
                char id[RUN_ID_LEN + 1];
                RunRecord *rec;

                if (strlen(de->d_name) != RUN_ID_LEN + 5 || !streq(de->d_name + RUN_ID_LEN, ".json"))
                        continue;
                memcpy(id, de->d_name, RUN_ID_LEN);
                id[RUN_ID_LEN] = 0;
                if (store_read(s, id, &rec) < 0)
                        continue;
                if (n == allocated) {
                        RunRecord **nr = realloc(recs, (allocated = MAX(allocated * 2, (size_t) 16)) * sizeof(*recs));
                        if (!nr) {
                                run_record_free(rec);
                                r = -ENOMEM;
                                break;
                        }
                        recs = nr;
                }
                recs[n++] = rec;
        }
        closedir(d);
        if (r < 0) {
                run_records_free(recs, n);
                return r;
        }
        if (n > 0)
                qsort(recs, n, sizeof(*recs), cmp_started);
        *ret = recs;
        *ret_n = n;
        return 0;
}

int store_list_json(Store *s, const char *tenant, char **ret) {
        RunRecord **recs = NULL;
        _cleanup_free_ char *out = NULL;
        size_t n = 0, out_size = 0;
        bool first = true;
        FILE *f;
        int r;

        r = store_load_all(s, &recs, &n);
        if (r < 0)
                return r;
        f = open_memstream(&out, &out_size);
        if (!f) {
                run_records_free(recs, n);
                return -ENOMEM;
        }
        fputc('[', f);
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *j = NULL;

                if (tenant && !streq(recs[i]->tenant, tenant))
                        continue;
                r = run_record_to_json(recs[i], &j);
                if (r >= 0)
                        fprintf(f, "%s%s", first ? "" : ",", j);
                first = false;
        }
        fputs("]\n", f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        run_records_free(recs, n);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(out);
        return 0;
}
