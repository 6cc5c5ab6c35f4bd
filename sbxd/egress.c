/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress programs in the kernel: probe, load, attach once at sbx.slice through BPF links, pin links
 * and maps so that the attachment and the policy outlive sbxd, adopt the pins again after a restart,
 * and give sbxd the maps and the event ring. No policy is decided here (src/plan/egress-policy.c
 * compiles the entries); nothing is logged (errors come back as negative errno plus a one-line reason). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egress.h"
#include "egress.skel.h"
#include "util.h"

#define EGRESS_PROGS_MAX 16

typedef enum EgressMap {
        EGRESS_MAP_CONFIG,
        EGRESS_MAP_RUNS,
        EGRESS_MAP_RULES4,
        EGRESS_MAP_RULES6,
        EGRESS_MAP_DNS_ORIG,
        EGRESS_MAP_EVENTS,
        EGRESS_MAP_STATS,
        _EGRESS_MAP_MAX,
} EgressMap;

/* the names in egress.bpf.c, which are also the pins' names */
static const char *const egress_map_names[_EGRESS_MAP_MAX] = {
        [EGRESS_MAP_CONFIG] = "config",
        [EGRESS_MAP_RUNS] = "runs",
        [EGRESS_MAP_RULES4] = "rules4",
        [EGRESS_MAP_RULES6] = "rules6",
        [EGRESS_MAP_DNS_ORIG] = "dns_orig",
        [EGRESS_MAP_EVENTS] = "events",
        [EGRESS_MAP_STATS] = "stats",
};

typedef struct EgressLink {
        char *pin;                   /* <pin_dir>/link_<program> */
        char *section;               /* "cgroup/connect4", for messages */
        int fd;
        uint32_t id;
        struct stat pin_st;          /* the pin's file when fd was taken from it: the same file, the same link */
} EgressLink;

struct Egress {
        char *pin_dir;
        char *slice_dir;
        uint64_t slice_cgroup;
        int map_fd[_EGRESS_MAP_MAX];
        EgressLink links[EGRESS_PROGS_MAX];
        size_t n_links;
        struct ring_buffer *rb;
        int (*event_cb)(const struct egress_event *ev, void *userdata);
        void *event_userdata;
};

static void egress_skel_destroyp(struct egress **s) {
        if (*s)
                egress__destroy(*s);
}

static void bpf_link_destroyp(struct bpf_link **l) {
        if (*l)
                bpf_link__destroy(*l);
}

_printf_(3, 4) static int fail(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                char *m = NULL;

                va_start(ap, fmt);
                if (vasprintf(&m, fmt, ap) < 0)
                        m = NULL;
                va_end(ap);
                free(*ret_error);
                *ret_error = m;
        }
        return r;
}

static char *path_join(const char *dir, const char *prefix, const char *name) {
        char *p;

        if (asprintf(&p, "%s/%s%s", dir, prefix, name) < 0)
                return NULL;
        return p;
}

/* FNV-1a over the embedded object: tells one build of the programs from another */
/* The same file, made at the same moment: a file of bpffs is made when an object is pinned and removed with
 * the pin, so another pin at the path is another file (its inode number may come round again, not with
 * the same change time to the nanosecond). */
static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
               a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static uint64_t object_digest(void) {
        const uint8_t *b;
        uint64_t h = 0xcbf29ce484222325ULL;
        size_t n = 0;

        b = egress__elf_bytes(&n);
        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

static int cgroup_id_of(const char *dir, uint64_t *ret) {
        struct stat st;

        if (stat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

/* mkdir -p on a bpffs: the deepest existing ancestor must already be one (nothing is mounted here) */
static int pin_dir_make(const char *pin_dir, char **ret_error) {
        _cleanup_free_ char *p = strdup(pin_dir);
        struct statfs sfs;
        char *s;

        if (!p)
                return -ENOMEM;
        if (p[0] != '/')
                return fail(ret_error, -EINVAL, "egress pin directory '%s' is not absolute", pin_dir);

        for (;;) {
                if (statfs(p, &sfs) >= 0)
                        break;
                if (errno != ENOENT)
                        return fail(ret_error, -errno, "cannot inspect '%s': %s", p, strerror(errno));
                s = strrchr(p, '/');
                if (!s || s == p)
                        return fail(ret_error, -EOPNOTSUPP, "bpffs is not mounted (no bpffs above '%s')",
                                    pin_dir);
                *s = 0;
        }
        if ((uint64_t) sfs.f_type != BPF_FS_MAGIC)
                return fail(ret_error, -EOPNOTSUPP, "bpffs is not mounted at '%s' (needed for '%s')", p,
                            pin_dir);

        strcpy(p, pin_dir);
        for (s = p + 1;; s++) {
                bool end = *s == 0;

                if (*s != '/' && !end)
                        continue;
                *s = 0;
                if (mkdir(p, 0700) < 0 && errno != EEXIST)
                        return fail(ret_error, -errno, "cannot create '%s': %s", p, strerror(errno));
                if (end)
                        break;
                *s = '/';
        }
        return 0;
}

/* One trivial program per attach type: tells a missing hook from a verifier rejection. */
static int probe_attach_type(enum bpf_prog_type type, enum bpf_attach_type attach) {
        const struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach);
        int fd;

        fd = bpf_prog_load(type, NULL, "GPL", insns, ELEMENTSOF(insns), &opts);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

static int probe_kernel(struct egress *skel, char **ret_error) {
        static const struct {
                enum bpf_map_type type;
                const char *name;
        } maps[] = {
                { BPF_MAP_TYPE_RINGBUF, "ring buffer maps" },
                { BPF_MAP_TYPE_LPM_TRIE, "LPM trie maps" },
                { BPF_MAP_TYPE_LRU_HASH, "LRU hash maps" },
                { BPF_MAP_TYPE_PERCPU_ARRAY, "per-CPU array maps" },
        };
        static const struct {
                enum bpf_func_id id;
                const char *name;
        } helpers[] = {
                { BPF_FUNC_get_current_ancestor_cgroup_id, "bpf_get_current_ancestor_cgroup_id" },
                { BPF_FUNC_get_socket_cookie, "bpf_get_socket_cookie" },
                { BPF_FUNC_ktime_get_boot_ns, "bpf_ktime_get_boot_ns" },
                { BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve" },
        };
        struct bpf_program *p;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(maps); i++) {
                r = libbpf_probe_bpf_map_type(maps[i].type, NULL);
                if (r < 0)
                        return fail(ret_error, r, "cannot probe for BPF %s: %s", maps[i].name, strerror(-r));
                if (r == 0)
                        return fail(ret_error, -EOPNOTSUPP, "the kernel lacks BPF %s", maps[i].name);
        }

        bpf_object__for_each_program(p, skel->obj) {
                r = probe_attach_type(bpf_program__type(p), bpf_program__expected_attach_type(p));
                if (r == -EPERM || r == -EACCES)
                        return fail(ret_error, r, "not permitted to load BPF programs: %s", strerror(-r));
                if (r < 0)
                        return fail(ret_error, -EOPNOTSUPP, "the kernel lacks the BPF hook %s (%s)",
                                    bpf_program__section_name(p), strerror(-r));
        }

        for (size_t i = 0; i < ELEMENTSOF(helpers); i++) {
                r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, helpers[i].id, NULL);
                if (r < 0)
                        return fail(ret_error, r, "cannot probe for the BPF helper %s: %s", helpers[i].name,
                                    strerror(-r));
                if (r == 0)
                        return fail(ret_error, -EOPNOTSUPP,
                                    "the kernel lacks the BPF helper %s for cgroup socket hooks",
                                    helpers[i].name);
        }
        return 0;
}

/* A pinned map matches what this build defines. */
static int map_matches(int fd, const struct bpf_map *m) {
        struct bpf_map_info info = {};
        uint32_t len = sizeof(info);
        int r;

        r = bpf_obj_get_info_by_fd(fd, &info, &len);
        if (r < 0)
                return r;
        return info.type == bpf_map__type(m) && info.key_size == bpf_map__key_size(m) &&
               info.value_size == bpf_map__value_size(m) && info.max_entries == bpf_map__max_entries(m) &&
               info.map_flags == bpf_map__map_flags(m);
}

static int config_read(int fd, struct egress_config *ret) {
        uint32_t zero = 0;

        return bpf_map_lookup_elem(fd, &zero, ret);
}

static void egress_close_fds(Egress *e) {
        ring_buffer__free(e->rb);
        e->rb = NULL;
        for (size_t i = 0; i < _EGRESS_MAP_MAX; i++)
                e->map_fd[i] = safe_close(e->map_fd[i]);
        for (size_t i = 0; i < e->n_links; i++) {
                e->links[i].fd = safe_close(e->links[i].fd);
                e->links[i].pin = mfree(e->links[i].pin);
                e->links[i].section = mfree(e->links[i].section);
        }
        e->n_links = 0;
}

Egress *egress_free(Egress *e) {
        if (!e)
                return NULL;
        egress_close_fds(e);
        free(e->pin_dir);
        free(e->slice_dir);
        return mfree(e);
}

/* Opens the pins of a complete, current attachment: every map as this build defines it, config naming
 * this slice and this build, every link a cgroup link of the right type on this slice. -ESTALE (or
 * -ENOENT) when anything is missing or different. */
static int egress_adopt(Egress *e, struct egress *skel, uint64_t digest) {
        struct egress_config cfg = {};
        struct bpf_program *p;
        struct bpf_map *m;
        int r;

        egress_close_fds(e);

        bpf_object__for_each_map(m, skel->obj) {
                _cleanup_free_ char *pin = NULL;
                size_t i;

                for (i = 0; i < _EGRESS_MAP_MAX; i++)
                        if (streq(bpf_map__name(m), egress_map_names[i]))
                                break;
                if (i >= _EGRESS_MAP_MAX)
                        continue; /* .rodata and the like: not pinned */
                pin = path_join(e->pin_dir, "", egress_map_names[i]);
                if (!pin)
                        return -ENOMEM;
                r = bpf_obj_get(pin);
                if (r < 0)
                        return r;
                e->map_fd[i] = r;
                r = map_matches(e->map_fd[i], m);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ESTALE;
        }
        for (size_t i = 0; i < _EGRESS_MAP_MAX; i++)
                if (e->map_fd[i] < 0)
                        return -ENOENT;

        r = config_read(e->map_fd[EGRESS_MAP_CONFIG], &cfg);
        if (r < 0)
                return r;
        if (cfg.slice_cgroup != e->slice_cgroup || cfg.object_digest != digest)
                return -ESTALE;

        bpf_object__for_each_program(p, skel->obj) {
                struct bpf_link_info info = {};
                uint32_t len = sizeof(info);
                struct stat st;
                EgressLink *l;

                if (e->n_links >= EGRESS_PROGS_MAX)
                        return -E2BIG;
                l = &e->links[e->n_links++];
                l->pin = path_join(e->pin_dir, "link_", bpf_program__name(p));
                l->section = strdup(bpf_program__section_name(p));
                if (!l->pin || !l->section)
                        return -ENOMEM;
                /* the pin's file before and after the link is taken from it: the link is that file's */
                if (stat(l->pin, &st) < 0)
                        return -errno;
                r = bpf_obj_get(l->pin);
                if (r < 0)
                        return r;
                l->fd = r;
                if (stat(l->pin, &l->pin_st) < 0)
                        return -errno;
                if (!same_file(&st, &l->pin_st))
                        return -ESTALE;
                r = bpf_obj_get_info_by_fd(l->fd, &info, &len);
                if (r < 0)
                        return r;
                if (info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != e->slice_cgroup ||
                    info.cgroup.attach_type != bpf_program__expected_attach_type(p))
                        return -ESTALE;
                l->id = info.id;
        }
        return 0;
}

/* Pins through a temporary name (new_<name>) and rename(): an older pin of the same name is replaced in one step,
 * so an old attachment is only dropped once the new one is in place. */
static int pin_replace(const char *pin, int (*do_pin)(void *obj, const char *path), void *obj) {
        _cleanup_free_ char *tmp = NULL;
        const char *base = strrchr(pin, '/');
        int r;

        /* bpffs refuses names with a dot */
        if (!base || asprintf(&tmp, "%.*s/new_%s", (int) (base - pin), pin, base + 1) < 0)
                return -ENOMEM;
        (void) unlink(tmp);
        r = do_pin(obj, tmp);
        if (r < 0)
                return r;
        if (rename(tmp, pin) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

static int pin_map(void *obj, const char *path) {
        return bpf_map__pin(obj, path);
}

static int pin_link(void *obj, const char *path) {
        return bpf_link__pin(obj, path);
}

/* Removes the links of programs this build does not have (older builds) and leftover temporaries;
 * nothing else, should the directory be shared. */
static void pin_dir_clean(const char *pin_dir, struct egress *skel) {
        _cleanup_(closedirp) DIR *d = opendir(pin_dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                struct bpf_program *p;
                bool keep = false;

                if (!strneq(de->d_name, "link_", 5) && !strneq(de->d_name, "new_", 4))
                        continue;
                bpf_object__for_each_program(p, skel->obj)
                        if (!keep && strneq(de->d_name, "link_", 5) && streq(de->d_name + 5, bpf_program__name(p)))
                                keep = true;
                if (!keep)
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        }
}

/* Loads the programs (keeping the old maps and so the runs' policy when the old attachment was for this
 * same slice and its maps have this build's layout), attaches them and pins everything. */
static int egress_install(Egress *e, struct egress *skel, uint64_t digest, char **ret_error) {
        _cleanup_close_ int cg_fd = -EBADF;
        struct egress_config cfg = { .slice_cgroup = e->slice_cgroup, .object_digest = digest };
        struct egress_config old = {};
        _cleanup_close_ int old_config = -EBADF;
        _cleanup_free_ char *config_pin = NULL;
        struct bpf_program *p;
        struct bpf_map *m;
        bool reuse;
        uint32_t zero = 0;
        int r;

        egress_close_fds(e);

        r = probe_kernel(skel, ret_error);
        if (r < 0)
                return r;

        config_pin = path_join(e->pin_dir, "", "config");
        if (!config_pin)
                return -ENOMEM;
        old_config = bpf_obj_get(config_pin);
        reuse = old_config >= 0 && config_read(old_config, &old) >= 0 && old.slice_cgroup == e->slice_cgroup;

        bpf_object__for_each_map(m, skel->obj) {
                _cleanup_free_ char *pin = NULL;
                _cleanup_close_ int fd = -EBADF;

                if (!reuse)
                        break;
                for (size_t i = 0; i < _EGRESS_MAP_MAX; i++)
                        if (streq(bpf_map__name(m), egress_map_names[i]))
                                pin = path_join(e->pin_dir, "", egress_map_names[i]);
                if (!pin)
                        continue;
                fd = bpf_obj_get(pin);
                if (fd < 0 || map_matches(fd, m) <= 0)
                        continue; /* a map of another layout: a fresh one replaces it */
                r = bpf_map__reuse_fd(m, fd);
                if (r < 0)
                        return fail(ret_error, r, "cannot reuse the pinned map %s: %s", pin, strerror(-r));
        }

        r = egress__load(skel);
        if (r < 0)
                return fail(ret_error, r, "loading the egress BPF programs failed: %s", strerror(-r));

        r = bpf_map_update_elem(bpf_map__fd(skel->maps.config), &zero, &cfg, BPF_ANY);
        if (r < 0)
                return fail(ret_error, r, "cannot configure the egress programs: %s", strerror(-r));

        cg_fd = open(e->slice_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg_fd < 0)
                return fail(ret_error, -errno, "cannot open '%s': %s", e->slice_dir, strerror(errno));

        bpf_object__for_each_map(m, skel->obj) {
                _cleanup_free_ char *pin = NULL;

                for (size_t i = 0; i < _EGRESS_MAP_MAX; i++)
                        if (streq(bpf_map__name(m), egress_map_names[i]))
                                pin = path_join(e->pin_dir, "", egress_map_names[i]);
                if (!pin)
                        continue;
                if (bpf_map__is_pinned(m))
                        continue;
                r = pin_replace(pin, pin_map, m);
                if (r < 0)
                        return fail(ret_error, r, "cannot pin %s: %s", pin, strerror(-r));
        }

        bpf_object__for_each_program(p, skel->obj) {
                _cleanup_(bpf_link_destroyp) struct bpf_link *l = NULL;
                _cleanup_free_ char *pin = NULL;

                l = bpf_program__attach_cgroup(p, cg_fd);
                if (!l)
                        return fail(ret_error, negative_errno(), "cannot attach %s to '%s': %s",
                                    bpf_program__section_name(p), e->slice_dir, strerror(errno));
                pin = path_join(e->pin_dir, "link_", bpf_program__name(p));
                if (!pin)
                        return -ENOMEM;
                r = pin_replace(pin, pin_link, l);
                if (r < 0)
                        return fail(ret_error, r, "cannot pin %s: %s", pin, strerror(-r));
        }

        pin_dir_clean(e->pin_dir, skel);
        return 0;
}

static int egress_events_open(Egress *e);

int egress_open_at(const char *pin_dir, const char *slice_cgroup_dir, Egress **ret, char **ret_error) {
        _cleanup_(egress_skel_destroyp) struct egress *skel = NULL;
        _cleanup_egress_free_ Egress *e = NULL;
        struct statfs sfs;
        uint64_t digest;
        int r;

        if (!pin_dir || !slice_cgroup_dir || !ret)
                return -EINVAL;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < _EGRESS_MAP_MAX; i++)
                e->map_fd[i] = -EBADF;
        e->pin_dir = strdup(pin_dir);
        e->slice_dir = strdup(slice_cgroup_dir);
        if (!e->pin_dir || !e->slice_dir)
                return -ENOMEM;

        if (statfs(slice_cgroup_dir, &sfs) < 0)
                return fail(ret_error, -errno, "cannot inspect '%s': %s", slice_cgroup_dir, strerror(errno));
        if ((uint64_t) sfs.f_type != CGROUP2_SUPER_MAGIC)
                return fail(ret_error, -EOPNOTSUPP, "'%s' is not on a cgroup2 file system", slice_cgroup_dir);
        r = cgroup_id_of(slice_cgroup_dir, &e->slice_cgroup);
        if (r < 0)
                return fail(ret_error, r, "cannot inspect '%s': %s", slice_cgroup_dir, strerror(-r));

        r = pin_dir_make(pin_dir, ret_error);
        if (r < 0)
                return r;

        skel = egress__open();
        if (!skel)
                return fail(ret_error, negative_errno(), "cannot open the egress BPF object: %s", strerror(errno));
        digest = object_digest();

        r = egress_adopt(e, skel, digest);
        if (r < 0) {
                r = egress_install(e, skel, digest, ret_error);
                if (r < 0)
                        return r;
                r = egress_adopt(e, skel, digest);
                if (r < 0)
                        return fail(ret_error, r, "the egress pins in '%s' do not match what was just attached: %s",
                                    pin_dir, strerror(-r));
        }

        r = egress_events_open(e);
        if (r < 0)
                return fail(ret_error, r, "cannot open the egress event ring: %s", strerror(-r));

        *ret = TAKE_PTR(e);
        return 0;
}

int egress_open(const char *slice_cgroup_dir, Egress **ret, char **ret_error) {
        return egress_open_at(EGRESS_PIN_DIR, slice_cgroup_dir, ret, ret_error);
}

int egress_unpin(Egress *e) {
        int r = 0;

        if (!e)
                return -EINVAL;
        for (size_t i = 0; i < e->n_links; i++)
                if (unlink(e->links[i].pin) < 0 && errno != ENOENT)
                        r = -errno;
        for (size_t i = 0; i < _EGRESS_MAP_MAX; i++) {
                _cleanup_free_ char *pin = path_join(e->pin_dir, "", egress_map_names[i]);

                if (!pin)
                        return -ENOMEM;
                if (unlink(pin) < 0 && errno != ENOENT)
                        r = -errno;
        }
        if (rmdir(e->pin_dir) < 0 && errno != ENOENT && errno != ENOTEMPTY)
                r = -errno;
        return r;
}

uint64_t egress_slice_cgroup(const Egress *e) {
        return e ? e->slice_cgroup : 0;
}

int egress_verify(Egress *e, char **ret_error) {
        struct egress_config cfg = {};
        uint64_t now = 0;
        int r;

        if (!e)
                return -EINVAL;

        r = cgroup_id_of(e->slice_dir, &now);
        if (r < 0)
                return fail(ret_error, -ESTALE, "the slice cgroup '%s' is gone: %s", e->slice_dir, strerror(-r));
        if (now != e->slice_cgroup)
                return fail(ret_error, -ESTALE,
                            "the slice cgroup '%s' was created again (id %" PRIu64 ", egress programs attached to %" PRIu64 ")",
                            e->slice_dir, now, e->slice_cgroup);

        r = config_read(e->map_fd[EGRESS_MAP_CONFIG], &cfg);
        if (r < 0)
                return fail(ret_error, r, "cannot read the egress configuration: %s", strerror(-r));
        if (cfg.slice_cgroup != now)
                return fail(ret_error, -ESTALE, "the egress programs are configured for another slice");

        for (size_t i = 0; i < e->n_links; i++) {
                const EgressLink *l = &e->links[i];
                struct bpf_link_info info = {};
                uint32_t len = sizeof(info);
                struct stat st;

                r = bpf_obj_get_info_by_fd(l->fd, &info, &len);
                if (r < 0)
                        return fail(ret_error, r, "cannot inspect the %s link: %s", l->section, strerror(-r));
                if (info.cgroup.cgroup_id != now)
                        return fail(ret_error, -ESTALE, "the %s program is no longer attached to '%s'",
                                    l->section, e->slice_dir);

                /* and it stays attached without us: its pin is still this link, the file it was taken from (a
                 * pinned object's file is made when it is pinned and holds that object alone) */
                if (stat(l->pin, &st) < 0)
                        return fail(ret_error, -ESTALE, "the pin %s is gone: %s", l->pin, strerror(errno));
                if (!same_file(&st, &l->pin_st))
                        return fail(ret_error, -ESTALE, "the pin %s holds another link", l->pin);
        }
        return 0;
}

int egress_run_set(Egress *e, uint64_t cgroup, uint32_t flags) {
        struct egress_run run = { .flags = flags };
        uint32_t g;
        int r;

        if (!e || cgroup == 0)
                return -EINVAL;

        /* a new generation, never one a cached verdict of an earlier run with this id could carry */
        r = bpf_map_lookup_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup, &run);
        if (r >= 0)
                run.generation++;
        else if (r == -ENOENT) {
                if (getrandom(&g, sizeof(g), 0) != sizeof(g))
                        return negative_errno();
                run.generation = g;
        } else
                return r;
        run.flags = flags;
        return bpf_map_update_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup, &run, BPF_ANY);
}

/* After every write of a run's rules: the programs' cached verdicts of that run stop counting. */
static int run_rules_changed(Egress *e, uint64_t cgroup) {
        struct egress_run run;
        int r;

        r = bpf_map_lookup_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup, &run);
        if (r == -ENOENT)
                return 0; /* not registered (yet): denied everything, nothing cached counts */
        if (r < 0)
                return r;
        run.generation++;
        r = bpf_map_update_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup, &run, BPF_EXIST);
        return r == -ENOENT ? 0 : r;
}

static int value_check(const struct egress_value *v) {
        if (!v || v->n_ranges > EGRESS_MAX_PORT_RANGES || v->reason >= _EGRESS_REASON_MAX)
                return -EINVAL;
        for (size_t i = 0; i < v->n_ranges; i++)
                if (v->r[i].lo > v->r[i].hi)
                        return -EINVAL;
        return 0;
}

int egress_rule_put4(Egress *e, const struct egress_key4 *k, const struct egress_value *v) {
        int r;

        if (!e || !k || k->cgroup == 0 || k->prefixlen < EGRESS_KEY_HDR_BITS || k->prefixlen > EGRESS_KEY_HDR_BITS + 32)
                return -EINVAL;
        r = value_check(v);
        if (r < 0)
                return r;
        r = bpf_map_update_elem(e->map_fd[EGRESS_MAP_RULES4], k, v, BPF_ANY);
        if (r < 0)
                return r;
        return run_rules_changed(e, k->cgroup);
}

int egress_rule_put6(Egress *e, const struct egress_key6 *k, const struct egress_value *v) {
        int r;

        if (!e || !k || k->cgroup == 0 || k->prefixlen < EGRESS_KEY_HDR_BITS || k->prefixlen > EGRESS_KEY_HDR_BITS + 128)
                return -EINVAL;
        r = value_check(v);
        if (r < 0)
                return r;
        r = bpf_map_update_elem(e->map_fd[EGRESS_MAP_RULES6], k, v, BPF_ANY);
        if (r < 0)
                return r;
        return run_rules_changed(e, k->cgroup);
}

int egress_rule_del4(Egress *e, const struct egress_key4 *k) {
        int r;

        if (!e || !k)
                return -EINVAL;
        r = bpf_map_delete_elem(e->map_fd[EGRESS_MAP_RULES4], k);
        if (r < 0)
                return r;
        return run_rules_changed(e, k->cgroup);
}

int egress_rule_del6(Egress *e, const struct egress_key6 *k) {
        int r;

        if (!e || !k)
                return -EINVAL;
        r = bpf_map_delete_elem(e->map_fd[EGRESS_MAP_RULES6], k);
        if (r < 0)
                return r;
        return run_rules_changed(e, k->cgroup);
}

/* Keys of a trie whose cgroup field is 'cgroup', collected before anything is deleted (deleting while
 * walking would restart the walk). Both key layouts put the cgroup at the same offset. */
static int trie_keys_of(int fd, size_t key_size, uint64_t cgroup, uint8_t **ret, size_t *ret_n) {
        _cleanup_free_ uint8_t *keys = NULL, *cur = NULL, *next = NULL;
        size_t n = 0, allocated = 0;
        bool first = true;
        int r;

        cur = malloc(key_size);
        next = malloc(key_size);
        if (!cur || !next)
                return -ENOMEM;

        for (;;) {
                uint64_t id;

                r = bpf_map_get_next_key(fd, first ? NULL : cur, next);
                if (r == -ENOENT)
                        break;
                if (r < 0)
                        return r;
                first = false;
                memcpy(cur, next, key_size);
                memcpy(&id, next + offsetof(struct egress_key4, cgroup), sizeof(id));
                if (id != cgroup)
                        continue;
                if (ret) {
                        if (n >= allocated) {
                                size_t a = MAX(allocated * 2, (size_t) 64);
                                uint8_t *k = reallocarray(keys, a, key_size);

                                if (!k)
                                        return -ENOMEM;
                                keys = k;
                                allocated = a;
                        }
                        memcpy(keys + n * key_size, next, key_size);
                }
                n++;
        }

        if (ret)
                *ret = TAKE_PTR(keys);
        *ret_n = n;
        return 0;
}

_Static_assert(offsetof(struct egress_key4, cgroup) == offsetof(struct egress_key6, cgroup),
               "both key layouts carry the cgroup at the same offset");

int egress_run_remove(Egress *e, uint64_t cgroup) {
        static const struct {
                EgressMap map;
                size_t key_size;
        } tries[] = {
                { EGRESS_MAP_RULES4, sizeof(struct egress_key4) },
                { EGRESS_MAP_RULES6, sizeof(struct egress_key6) },
        };
        int r;

        if (!e || cgroup == 0)
                return -EINVAL;

        /* first the run itself: from here on it is denied everything */
        r = bpf_map_delete_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup);
        if (r < 0 && r != -ENOENT)
                return r;

        for (size_t t = 0; t < ELEMENTSOF(tries); t++) {
                _cleanup_free_ uint8_t *keys = NULL;
                size_t n = 0;

                r = trie_keys_of(e->map_fd[tries[t].map], tries[t].key_size, cgroup, &keys, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        r = bpf_map_delete_elem(e->map_fd[tries[t].map], keys + i * tries[t].key_size);
                        if (r < 0 && r != -ENOENT)
                                return r;
                }
        }
        return 0;
}

int egress_run_count(Egress *e, uint64_t cgroup, size_t *ret_entries) {
        struct egress_run run;
        size_t n4 = 0, n6 = 0;
        bool registered;
        int r;

        if (!e || !ret_entries)
                return -EINVAL;

        r = bpf_map_lookup_elem(e->map_fd[EGRESS_MAP_RUNS], &cgroup, &run);
        if (r < 0 && r != -ENOENT)
                return r;
        registered = r >= 0;
        r = trie_keys_of(e->map_fd[EGRESS_MAP_RULES4], sizeof(struct egress_key4), cgroup, NULL, &n4);
        if (r < 0)
                return r;
        r = trie_keys_of(e->map_fd[EGRESS_MAP_RULES6], sizeof(struct egress_key6), cgroup, NULL, &n6);
        if (r < 0)
                return r;

        *ret_entries = (registered ? 1 : 0) + n4 + n6;
        return 0;
}

static bool cgroup_listed(const uint64_t *l, size_t n, uint64_t id) {
        for (size_t i = 0; i < n; i++)
                if (l[i] == id)
                        return true;
        return false;
}

static int push_cgroup(uint64_t **l, size_t *n, uint64_t id) {
        uint64_t *a;

        if (cgroup_listed(*l, *n, id))
                return 0;
        a = reallocarray(*l, *n + 1, sizeof(uint64_t));
        if (!a)
                return -ENOMEM;
        a[(*n)++] = id;
        *l = a;
        return 0;
}

int egress_gc(Egress *e, const uint64_t *keep, size_t n_keep, size_t *ret_removed) {
        static const struct {
                EgressMap map;
                size_t key_size;
                size_t cgroup_offset;
        } maps[] = {
                { EGRESS_MAP_RUNS, sizeof(uint64_t), 0 },
                { EGRESS_MAP_RULES4, sizeof(struct egress_key4), offsetof(struct egress_key4, cgroup) },
                { EGRESS_MAP_RULES6, sizeof(struct egress_key6), offsetof(struct egress_key6, cgroup) },
        };
        _cleanup_free_ uint64_t *found = NULL;
        size_t n_found = 0, removed = 0;
        int r;

        if (!e)
                return -EINVAL;
        for (size_t m = 0; m < ELEMENTSOF(maps); m++) {
                uint8_t cur[sizeof(struct egress_key6)], next[sizeof(struct egress_key6)];
                bool first = true;

                for (;;) {
                        uint64_t id;

                        r = bpf_map_get_next_key(e->map_fd[maps[m].map], first ? NULL : cur, next);
                        if (r == -ENOENT)
                                break;
                        if (r < 0)
                                return r;
                        first = false;
                        memcpy(cur, next, maps[m].key_size);
                        memcpy(&id, next + maps[m].cgroup_offset, sizeof(id));
                        if (!cgroup_listed(keep, n_keep, id)) {
                                r = push_cgroup(&found, &n_found, id);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        for (size_t i = 0; i < n_found; i++) {
                if (found[i] == 0)
                        continue;
                r = egress_run_remove(e, found[i]);
                if (r < 0)
                        return r;
                removed++;
        }
        if (ret_removed)
                *ret_removed = removed;
        return 0;
}

static int on_event(void *ctx, void *data, size_t size) {
        Egress *e = ctx;

        if (size < sizeof(struct egress_event) || !e->event_cb)
                return 0;
        return e->event_cb(data, e->event_userdata);
}

static int egress_events_open(Egress *e) {
        e->rb = ring_buffer__new(e->map_fd[EGRESS_MAP_EVENTS], on_event, e, NULL);
        if (!e->rb)
                return negative_errno();
        return 0;
}

int egress_events_fd(Egress *e) {
        if (!e || !e->rb)
                return -EINVAL;
        return ring_buffer__epoll_fd(e->rb);
}

int egress_events_consume(Egress *e, int (*cb)(const struct egress_event *ev, void *userdata), void *userdata) {
        int r;

        if (!e || !e->rb || !cb)
                return -EINVAL;
        e->event_cb = cb;
        e->event_userdata = userdata;
        r = ring_buffer__consume(e->rb);
        e->event_cb = NULL;
        e->event_userdata = NULL;
        return r;
}

int egress_stats(Egress *e, uint64_t ret[_EGRESS_STAT_MAX]) {
        _cleanup_free_ uint64_t *v = NULL;
        uint64_t sum[_EGRESS_STAT_MAX] = {};
        int ncpu, r;

        if (!e || !ret)
                return -EINVAL;
        ncpu = libbpf_num_possible_cpus();
        if (ncpu <= 0)
                return ncpu < 0 ? ncpu : -EIO;
        v = calloc(ncpu, sizeof(uint64_t));
        if (!v)
                return -ENOMEM;

        for (uint32_t i = 0; i < _EGRESS_STAT_MAX; i++) {
                r = bpf_map_lookup_elem(e->map_fd[EGRESS_MAP_STATS], &i, v);
                if (r < 0)
                        return r;
                for (int c = 0; c < ncpu; c++)
                        sum[i] += v[c];
        }
        memcpy(ret, sum, sizeof(sum));
        return 0;
}
