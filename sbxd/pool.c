/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool: see pool.h and docs/pool.md. */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "feature.h"
#include "fileio.h"
#include "log.h"
#include "pool.h"
#include "profile-load.h"
#include "sandbox.h"
#include "unit-bus.h"

#define POOL_RETRY_MIN_USEC (1 * USEC_PER_SEC)
#define POOL_RETRY_MAX_USEC (5 * 60 * USEC_PER_SEC)
/* how long systemd may take to make a started unit's cgroup (its egress entries are keyed by it) */
#define POOL_CGROUP_WAIT_USEC (10 * USEC_PER_SEC)
#define POOL_CGROUP_POLL_USEC (2 * USEC_PER_MSEC)
/* how long the kernel may take to show a claim's ceilings (systemd writes them after it answers) */
#define POOL_LIMITS_WAIT_USEC (2 * USEC_PER_SEC)
#define POOL_LIMITS_POLL_USEC (1 * USEC_PER_MSEC)
/* After a claim the pool refills a moment later, not at once: a unit's start (a dynamic user, mounts,
 * namespaces, a cgroup) takes much of a small machine's CPU, and the claimed run's command starts right
 * then; a short run is over before the refill starts */
#define POOL_REFILL_AFTER_CLAIM_USEC (1 * USEC_PER_SEC)
/* the description of a waiting unit; a claim gives it a run's */
#define POOL_DESCRIPTION_PREFIX "sbx pool unit "

typedef struct PoolSpec {
        char *profile;
        char digest[72];           /* of the profile file the pool's units are made from */
        unsigned size;
        unsigned failures;         /* in a row: units that ended, or could not be started, before READY */
        usec_t retry_at;           /* CLOCK_MONOTONIC; 0: now */
} PoolSpec;

struct PoolMember {
        Pool *pool;
        char id[RUN_ID_LEN + 1];
        Profile *profile;
        RunPlan *plan;
        char *unit, *unit_path, *cgroup_path;
        RunRecord *record;         /* the run's, once claimed; its network section is kept by net */
        RunNet *net;               /* its egress policy: its own loopback only, in force before READY */
        int ctl;                   /* sbxd's end of its helper's control channel */
        sd_event_source *ctl_source, *cgroup_timer;
        sd_bus_slot *slot_start, *slot_state;
        sd_bus_slot *slot_props;   /* its PropertiesChanged, for the run that claims it (run_watch_unit_ahead()) */
        usec_t started;            /* CLOCK_MONOTONIC */
        bool ready;                /* the helper said READY: every check passed, it waits for a command */
        PoolMember *next;
};

struct PoolClaim {
        Pool *pool;
        Run *run;
        int ctl;
        char **argv;
        char **env;                /* its environment entries (command.h), or NULL */
        int fds[3];
        PoolLimits limits;
        bool check_limits;         /* the run's ceilings differ from the unit's: read them back */
        usec_t deadline;
        sd_bus_slot *slot;
        sd_event_source *timer;
};

struct Pool {
        Manager *manager;
        PoolSpec *specs;
        size_t n_specs;
        PoolMember *members;
        sd_event_source *refill, *retry;
        sd_bus_slot *slot_reloading, *slot_list, *slot_startup;
        /* systemd finished booting: a waiting unit's start job lasts until its run comes, and boot is
         * not over while any job runs, so none is started before */
        bool startup_finished;
};

static void pool_schedule_refill(Pool *p);
static int pool_rescan(Pool *p);

/* ---- members ---------------------------------------------------------------------------------------- */

static PoolMember *member_free(PoolMember *pm) {
        if (!pm)
                return NULL;
        if (pm->pool)
                for (PoolMember **q = &pm->pool->members; *q; q = &(*q)->next)
                        if (*q == pm) {
                                *q = pm->next;
                                break;
                        }
        sd_event_source_disable_unref(pm->ctl_source);
        sd_event_source_disable_unref(pm->cgroup_timer);
        sd_bus_slot_unref(pm->slot_start);
        sd_bus_slot_unref(pm->slot_state);
        sd_bus_slot_unref(pm->slot_props);
        safe_close(pm->ctl);
        if (pm->net)
                run_net_finish(pm->net);
        run_net_free(pm->net);
        run_record_free(pm->record);
        run_plan_free(pm->plan);
        profile_free(pm->profile);
        free(pm->unit);
        free(pm->unit_path);
        free(pm->cgroup_path);
        free(pm);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(PoolMember *, member_free);

static PoolSpec *spec_find(Pool *p, const char *profile) {
        for (size_t i = 0; i < p->n_specs; i++)
                if (streq(p->specs[i].profile, profile))
                        return &p->specs[i];
        return NULL;
}

/* Stops the unit (and lets systemd forget it: sbxd holds a reference since StartTransientUnit). */
static void unit_release(Pool *p, const char *unit, const char *unit_path) {
        Manager *m = p->manager;

        (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL, "ss", unit,
                                        "replace");
        if (unit_path)
                (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, unit_path, "org.freedesktop.systemd1.Unit",
                                                "Unref", NULL, NULL, NULL);
}

static void member_retire(PoolMember *pm, bool failed, const char *why) {
        Pool *p = pm->pool;
        PoolSpec *spec = spec_find(p, pm->profile->name);

        if (failed) {
                log_warning("Pooled unit %s of profile %s ended before it was used: %s", pm->unit, pm->profile->name,
                            why);
                if (spec) {
                        spec->failures = MIN(spec->failures + 1, 16U);
                        spec->retry_at = now_monotonic() +
                                         MIN(POOL_RETRY_MIN_USEC << (spec->failures - 1), POOL_RETRY_MAX_USEC);
                }
        } else
                log_debug("Pooled unit %s of profile %s stopped: %s", pm->unit, pm->profile->name, why);
        unit_release(p, pm->unit, pm->unit_path);
        member_free(pm);
        pool_schedule_refill(p);
}

/* The helper said READY: the unit must be waiting as planned (activating, Type=notify): a unit that is
 * active already would count its RuntimeMaxSec= from its start, one that ended cannot serve. */
static int on_member_state_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PoolMember *pm = userdata;
        PoolSpec *spec = spec_find(pm->pool, pm->profile->name);
        _cleanup_free_ char *why = NULL;
        const char *state = NULL;

        pm->slot_state = sd_bus_slot_unref(pm->slot_state);
        if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read(reply, "v", "s", &state) < 0 ||
            !streq(state, "activating")) {
                if (asprintf(&why, "its unit is %s, not waiting for its command (a drop-in made by an older sbx "
                             "sets another Type=? 'sbxctl profile reload' makes them again)", strna(state)) < 0)
                        why = NULL;
                member_retire(pm, true, why ?: "its unit is not waiting for its command");
                return 0;
        }
        pm->ready = true;
        if (spec)
                spec->failures = 0;
        log_debug("Pooled unit %s of profile %s is ready (%.1f ms).", pm->unit, pm->profile->name,
                  (double) (now_monotonic() - pm->started) / USEC_PER_MSEC);
        return 0;
}

static int on_member_ctl(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        PoolMember *pm = userdata;
        SbxMsgHeader h;
        ssize_t n;

        n = recv(fd, &h, sizeof(h), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n == (ssize_t) sizeof(h) && h.type == SBX_MSG_READY && !pm->ready && !pm->slot_state) {
                if (sd_bus_call_method_async(pm->pool->manager->bus, &pm->slot_state, SD_DEST, pm->unit_path,
                                             "org.freedesktop.DBus.Properties", "Get", on_member_state_reply, pm,
                                             "ss", "org.freedesktop.systemd1.Unit", "ActiveState") < 0)
                        member_retire(pm, true, "cannot ask systemd for its state");
                return 0;
        }
        if (n > 0)
                return 0; /* nothing else is expected before a command: ignored */
        /* the channel closed: the helper is gone */
        member_retire(pm, true, pm->ready ? "its helper exited" : "its helper exited before it was ready");
        return 0;
}

static int on_member_cgroup(sd_event_source *s, uint64_t usec, void *userdata) {
        PoolMember *pm = userdata;
        _cleanup_free_ char *why = NULL;
        struct stat st;
        int r;

        if (stat(pm->cgroup_path, &st) < 0) {
                if (now_monotonic() - pm->started > POOL_CGROUP_WAIT_USEC) {
                        member_retire(pm, true, "systemd did not make its cgroup");
                        return 0;
                }
                (void) sd_event_source_set_time_relative(s, POOL_CGROUP_POLL_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return 0;
        }
        pm->cgroup_timer = sd_event_source_disable_unref(pm->cgroup_timer);
        /* its own loopback only (mode none), before the helper's probes look for it */
        r = run_net_register(pm->net, pm->cgroup_path, NULL, &why);
        if (r < 0)
                member_retire(pm, true, why ?: "its egress policy could not be put in place");
        return 0;
}

static int on_member_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PoolMember *pm = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        pm->slot_start = sd_bus_slot_unref(pm->slot_start);
        if (e) {
                member_retire(pm, true, e->message);
                return 0;
        }
        r = sd_event_add_time_relative(pm->pool->manager->event, &pm->cgroup_timer, CLOCK_MONOTONIC, 0, 0,
                                       on_member_cgroup, pm);
        if (r < 0)
                member_retire(pm, true, "cannot wait for its cgroup");
        return 0;
}

/* Starts one unit of the profile, as a run's but waiting for its command. */
static int member_start(Pool *p, Profile *profile_in) {
        Manager *m = p->manager;
        _cleanup_(profile_freep) Profile *profile = profile_in;
        _cleanup_(member_freep) PoolMember *pm = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_free_ char *why = NULL, *slice = NULL;
        _cleanup_close_ int helper_end = -EBADF, devnull = -EBADF;
        RunRequest req = { .pool = true, .unenforced_ceilings = ceilings_unenforced(_CEILINGS_ALL) };
        int pair[2], fds[3], sz = SBX_SANDBOX_MSG_MAX * 2, r;

        pm = calloc(1, sizeof(PoolMember));
        if (!pm)
                return -ENOMEM;
        pm->ctl = -EBADF;
        pm->started = now_monotonic();
        r = run_id_new(pm->id);
        if (r < 0)
                return r;
        req.run_id = pm->id;
        r = run_request_validate(profile, &req, &why);
        if (r >= 0)
                r = net_manager_prepare(m->net, &why);
        if (r >= 0)
                r = policy_compile(profile, &req, SBX_EXEC_PATH, &pm->plan, &why);
        if (r >= 0)
                r = run_add_seccomp(pm->plan, &why);
        if (r < 0) {
                log_warning("Cannot make a pooled unit of profile %s: %s", profile->name, why ?: strerror(-r));
                return r;
        }
        pm->record = run_record_new();
        if (!pm->record)
                return -ENOMEM;
        r = run_net_new(m->net, profile, NETWORK_NONE, NULL, pm->id, pm->record, &pm->net, &why);
        if (r < 0) {
                log_warning("Cannot make a pooled unit of profile %s: %s", profile->name, why ?: strerror(-r));
                return r;
        }
        if (policy_unit_name(profile->name, pm->id, &pm->unit) < 0 || policy_slice_name(profile->name, &slice) < 0 ||
            policy_cgroup_path(profile->name, pm->id, &pm->cgroup_path) < 0)
                return -ENOMEM;
        r = manager_unit_object_path(pm->unit, &pm->unit_path);
        if (r < 0)
                return r;

        /* The control channel, as a sandbox's (sandbox-proto.h): the helper's end is the unit's stdin. */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) < 0)
                return -errno;
        pm->ctl = pair[0];
        helper_end = pair[1];
        if (setsockopt(pm->ctl, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0 &&
            setsockopt(pm->ctl, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
                return -errno;
        if (fcntl(helper_end, F_SETFL, 0) < 0)
                return -errno;
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0)
                return -errno;
        fds[0] = helper_end;
        fds[1] = fds[2] = devnull;

        pm->profile = TAKE_PTR(profile);
        pm->plan->profile = pm->profile;
        r = run_new_start_call(m, pm->unit, pm->id, "pool unit", slice, fds, pm->plan, &call);
        if (r >= 0)
                r = run_finish_start_call(call, pm->plan, pm->id);
        if (r < 0)
                return log_error_errno(r, "Failed to build the StartTransientUnit call of a pooled unit: %m");
        r = sd_event_add_io(m->event, &pm->ctl_source, pm->ctl, EPOLLIN, on_member_ctl, pm);
        if (r < 0)
                return r;
        /* Before the start, as for a run's unit; the run that claims the unit takes it. */
        r = run_watch_unit_ahead(m, pm->unit_path, &pm->slot_props);
        if (r < 0)
                return log_error_errno(r, "Failed to watch pooled unit %s: %m", pm->unit);
        r = sd_bus_call_async(m->bus, &pm->slot_start, call, on_member_start_reply, pm, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to call StartTransientUnit: %m");
        log_debug("Starting pooled unit %s of profile %s.", pm->unit, pm->profile->name);
        pm->pool = p;
        pm->next = p->members;
        p->members = TAKE_PTR(pm);
        return 0;
}

/* ---- keeping the pool full ------------------------------------------------------------------------- */

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Pool *p = userdata;

        p->retry = sd_event_source_disable_unref(p->retry);
        pool_schedule_refill(p);
        return 0;
}

static int on_refill(sd_event_source *s, void *userdata) {
        Pool *p = userdata;
        usec_t now = now_monotonic(), next_retry = 0;

        p->refill = sd_event_source_disable_unref(p->refill);

        /* units of profiles no longer pooled, of an older version of the profile, too old, or too many */
        for (PoolMember *pm = p->members, *next; pm; pm = next) {
                PoolSpec *spec = spec_find(p, pm->profile->name);

                next = pm->next;
                if (!spec)
                        member_retire(pm, false, "its profile has no pool now");
                else if (!streq(spec->digest, pm->profile->digest))
                        member_retire(pm, false, "its profile changed");
                else if (now - pm->started > POLICY_POOL_CLAIM_MAX_USEC)
                        member_retire(pm, false, "it waited too long");
        }
        /* (member_retire() scheduled another round: the counts below are final only then) */
        for (size_t i = 0; i < p->n_specs; i++) {
                PoolSpec *spec = &p->specs[i];
                unsigned n = 0;

                for (PoolMember *pm = p->members, *next; pm; pm = next) {
                        next = pm->next;
                        if (!streq(pm->profile->name, spec->profile))
                                continue;
                        if (++n > spec->size)
                                member_retire(pm, false, "the pool is smaller now");
                }
                if (!p->startup_finished)
                        continue;
                if (spec->retry_at > now) {
                        if (next_retry == 0 || spec->retry_at < next_retry)
                                next_retry = spec->retry_at;
                        continue;
                }
                for (; n < spec->size; n++) {
                        _cleanup_strv_free_ char **dirs = NULL;
                        _cleanup_free_ char *why = NULL;
                        Profile *profile = NULL;
                        int r;

                        r = profile_search_path(&dirs);
                        if (r >= 0)
                                r = profile_load(dirs, spec->profile, &profile, &why);
                        if (r >= 0 && !streq(profile->digest, spec->digest)) {
                                /* changed since the last reading: read them all again first */
                                profile_free(profile);
                                (void) pool_rescan(p);
                                return 0;
                        }
                        if (r >= 0)
                                r = member_start(p, profile);
                        if (r < 0) {
                                spec->failures = MIN(spec->failures + 1, 16U);
                                spec->retry_at = now + MIN(POOL_RETRY_MIN_USEC << (spec->failures - 1),
                                                           POOL_RETRY_MAX_USEC);
                                if (next_retry == 0 || spec->retry_at < next_retry)
                                        next_retry = spec->retry_at;
                                break;
                        }
                }
        }
        /* the oldest unit's claim deadline, or the next retry: another round then */
        for (PoolMember *pm = p->members; pm; pm = pm->next)
                if (next_retry == 0 || pm->started + POLICY_POOL_CLAIM_MAX_USEC + 1 < next_retry)
                        next_retry = pm->started + POLICY_POOL_CLAIM_MAX_USEC + 1;
        p->retry = sd_event_source_disable_unref(p->retry);
        if (next_retry > 0 &&
            sd_event_add_time(p->manager->event, &p->retry, CLOCK_MONOTONIC, next_retry, USEC_PER_MSEC, on_retry, p) < 0)
                log_warning("Cannot schedule the pool's next refill; it refills on the next run.");
        return 0;
}

static void pool_schedule_refill(Pool *p) {
        if (p->refill || !p->manager->event)
                return;
        if (sd_event_add_defer(p->manager->event, &p->refill, on_refill, p) < 0)
                log_warning("Cannot schedule the pool's refill; it refills on the next run.");
}

/* A refill at 'when' at the latest (a round due earlier stays as it is). */
static void pool_schedule_refill_at(Pool *p, usec_t when) {
        uint64_t due;

        if (p->refill || !p->manager->event)
                return;
        if (p->retry && sd_event_source_get_time(p->retry, &due) >= 0 && due <= when)
                return;
        p->retry = sd_event_source_disable_unref(p->retry);
        if (sd_event_add_time(p->manager->event, &p->retry, CLOCK_MONOTONIC, when, USEC_PER_MSEC, on_retry, p) < 0)
                pool_schedule_refill(p);
}

/* Reads which profiles have a pool, and how large. */
static int pool_rescan(Pool *p) {
        _cleanup_strv_free_ char **dirs = NULL, **names = NULL, **paths = NULL;
        PoolSpec *specs = NULL;
        size_t n = 0;
        int r;

        r = profile_search_path(&dirs);
        if (r >= 0)
                r = profile_enumerate(dirs, &names, &paths, NULL);
        if (r < 0)
                return log_warning_errno(r, "Cannot list the profiles for the pool: %m");
        specs = calloc(strv_length(names) + 1, sizeof(PoolSpec));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; names[i]; i++) {
                _cleanup_(profile_freep) Profile *profile = NULL;
                _cleanup_free_ char *why = NULL;
                PoolSpec *old;

                if (profile_load_file(paths[i], &profile, &why) < 0 || profile->pool_size == 0)
                        continue;
                specs[n].profile = strdup(profile->name);
                if (!specs[n].profile)
                        break;
                memcpy(specs[n].digest, profile->digest, sizeof(specs[n].digest));
                specs[n].size = profile->pool_size;
                old = spec_find(p, profile->name);
                if (old && streq(old->digest, profile->digest)) { /* the same file: its backoff holds */
                        specs[n].failures = old->failures;
                        specs[n].retry_at = old->retry_at;
                }
                n++;
        }
        for (size_t i = 0; i < p->n_specs; i++)
                free(p->specs[i].profile);
        free(p->specs);
        p->specs = specs;
        p->n_specs = n;
        log_debug("Pool: %zu profile(s) with a pool.", n);
        pool_schedule_refill(p);
        return 0;
}

static int on_reloading(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Pool *p = userdata;
        int active;

        if (!streq_ptr(sd_bus_message_get_sender(msg), p->manager->systemd_owner) ||
            sd_bus_message_read(msg, "b", &active) < 0 || active)
                return 0;
        /* reloaded: the profiles may be other ones now */
        (void) pool_rescan(p);
        return 0;
}

/* Units an earlier sbxd left waiting: not a run's, so nobody's. */
static bool endswith_service(const char *name) {
        size_t n = strlen(name), k = strlen(".service");

        return n >= k && streq(name + n - k, ".service");
}

static int on_list_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Pool *p = userdata;
        const char *name, *desc, *s1, *s2, *s3, *s4, *job_type;
        const char *unit_path, *job_path;
        uint32_t job_id;
        size_t n;
        int r;

        p->slot_list = sd_bus_slot_unref(p->slot_list);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                log_warning("Cannot list sbx's units: %s", sd_bus_message_get_error(reply)->message);
                return 0;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        while (r > 0 && (r = sd_bus_message_read(reply, "(ssssssouso)", &name, &desc, &s1, &s2, &s3, &s4, &unit_path,
                                                   &job_id, &job_type, &job_path)) > 0) {
                bool ours = false;

                if (!strneq(desc, POOL_DESCRIPTION_PREFIX, strlen(POOL_DESCRIPTION_PREFIX)))
                        continue;
                for (Run *run = p->manager->runs; run; run = run->next)
                        if (streq(run->unit, name))
                                ours = true;
                for (PoolMember *pm = p->members; pm; pm = pm->next)
                        if (streq(pm->unit, name))
                                ours = true;
                if (ours)
                        continue;
                /* claimed, but its description was not changed yet: a run's, even if not taken up */
                n = strlen(name);
                if (n > RUN_ID_LEN + strlen(".service") && endswith_service(name)) {
                        _cleanup_(run_record_freep) RunRecord *rec = NULL;
                        char id[RUN_ID_LEN + 1];

                        memcpy(id, name + n - strlen(".service") - RUN_ID_LEN, RUN_ID_LEN);
                        id[RUN_ID_LEN] = 0;
                        if (store_read(&p->manager->store, id, &rec) >= 0) {
                                log_warning("%s has a run record but is not followed; leaving it to its limits.", name);
                                continue;
                        }
                }
                log_info("Stopping %s, left waiting in the pool by an earlier sbxd.", name);
                unit_release(p, name, NULL);
        }
        return 0;
}

static int on_startup_finished(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Pool *p = userdata;

        if (!streq_ptr(sd_bus_message_get_sender(msg), p->manager->systemd_owner) || p->startup_finished)
                return 0;
        log_debug("Pool: systemd finished starting up; filling the pool.");
        p->startup_finished = true;
        p->slot_startup = sd_bus_slot_unref(p->slot_startup);
        pool_schedule_refill(p);
        return 0;
}

static int pool_start(Pool *p) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Manager *m = p->manager;
        uint64_t finished = 0;
        int r;

        r = sd_bus_match_signal(m->bus, &p->slot_startup, SD_DEST, SD_PATH, SD_MANAGER, "StartupFinished",
                                on_startup_finished, p);
        if (r < 0)
                return r;
        r = sd_bus_get_property_trivial(m->bus, SD_DEST, SD_PATH, SD_MANAGER, "FinishTimestampMonotonic", &error, 't',
                                        &finished);
        if (r < 0)
                log_warning("Cannot ask systemd whether it finished starting up (%s); the pool waits for it.",
                            error.message ?: strerror(-r));
        if (finished > 0) {
                p->startup_finished = true;
                p->slot_startup = sd_bus_slot_unref(p->slot_startup);
        }

        r = sd_bus_match_signal(m->bus, &p->slot_reloading, SD_DEST, SD_PATH, SD_MANAGER, "Reloading", on_reloading, p);
        if (r < 0)
                return r;
        r = sd_bus_call_method_async(m->bus, &p->slot_list, SD_DEST, SD_PATH, SD_MANAGER, "ListUnitsByPatterns",
                                     on_list_reply, p, "asas", 0, 1, "sbx-*.service");
        if (r < 0)
                return r;
        return pool_rescan(p);
}

static int pool_new(Manager *m, Pool **ret) {
        Pool *p = calloc(1, sizeof(Pool));

        if (!p)
                return -ENOMEM;
        p->manager = m;
        *ret = p;
        return 0;
}

static Pool *pool_free(Pool *p) {
        if (!p)
                return NULL;
        /* the units stop when their control channels close (or at their TimeoutStartSec=) */
        while (p->members)
                member_free(p->members);
        for (size_t i = 0; i < p->n_specs; i++)
                free(p->specs[i].profile);
        free(p->specs);
        sd_event_source_disable_unref(p->refill);
        sd_event_source_disable_unref(p->retry);
        sd_bus_slot_unref(p->slot_reloading);
        sd_bus_slot_unref(p->slot_list);
        sd_bus_slot_unref(p->slot_startup);
        free(p);
        return NULL;
}

/* ---- claims ------------------------------------------------------------------------------------------ */

static PoolMember *pool_find(Pool *p, const char *profile, char run_id[static RUN_ID_LEN + 1]) {
        usec_t now = now_monotonic();

        if (!p)
                return NULL;
        for (PoolMember *pm = p->members; pm; pm = pm->next)
                if (pm->ready && streq(pm->profile->name, profile) && now - pm->started < POLICY_POOL_CLAIM_MAX_USEC) {
                        memcpy(run_id, pm->id, RUN_ID_LEN + 1);
                        return pm;
                }
        return NULL;
}

static void pool_member_mismatch(Pool *p, PoolMember *pm, const Profile *current) {
        if (streq(pm->profile->digest, current->digest))
                return; /* another request may match it */
        /* the file changed, without a reload yet: the pool's units are made from the new one */
        member_retire(pm, false, "its profile changed");
        (void) pool_rescan(p);
}

static void pool_member_hand_over(Pool *p, PoolMember *pm, Run *run) {
        for (PoolMember **q = &p->members; *q; q = &(*q)->next)
                if (*q == pm) {
                        *q = pm->next;
                        break;
                }
        pm->next = NULL;
        pm->ready = false;
        run_take_watch(run, &pm->slot_props);
        assert(!run->record->network); /* a pooled run's record gets no other network section */
        run->record->network = TAKE_PTR(pm->record->network);
        run->net = TAKE_PTR(pm->net);
        run_net_set_record(run->net, run->record);
        pool_schedule_refill_at(p, now_monotonic() + POOL_REFILL_AFTER_CLAIM_USEC);
}

static void pool_member_release(Pool *p, PoolMember *pm) {
        member_retire(pm, false, "its run could not take it");
}

PoolClaim *pool_claim_free(PoolClaim *c) {
        if (!c)
                return NULL;
        sd_bus_slot_unref(c->slot);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->ctl);
        for (int i = 0; i < 3; i++)
                safe_close(c->fds[i]);
        strv_free(c->argv);
        strv_free(c->env);
        if (c->run && c->run->claim == c)
                c->run->claim = NULL;
        free(c);
        return NULL;
}

/* The claim is over: the command went to the helper (error NULL), or the run is refused. */
static void claim_done(PoolClaim *c, const char *error) {
        Run *run = c->run;

        pool_claim_free(c);
        run_claimed(run, error);
}

static void claim_send(PoolClaim *c) {
        _cleanup_free_ char *msg = NULL;
        int r;

        r = sandbox_send_exec(c->ctl, c->run->id, c->argv, c->env, c->fds, 0, 0, NULL);
        if (r < 0) {
                if (asprintf(&msg, "cannot hand the command to the pooled unit: %s",
                             r == -EPIPE || r == -ECONNRESET ? "its helper is gone" : strerror(-r)) < 0)
                        msg = NULL;
                claim_done(c, msg ?: "cannot hand the command to the pooled unit");
                return;
        }
        log_debug("Run %s: command handed to its pooled unit.", c->run->id);
        /* the channel stays the run's, for its helper's FINISHED */
        r = run_watch_report(c->run, TAKE_FD(c->ctl));
        if (r < 0)
                log_debug_errno(r, "Run %s: cannot watch its control channel, answered through systemd: %m",
                                c->run->id);
        claim_done(c, NULL);
}

static int read_u64_or_max(const char *cg, const char *file, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *buf = NULL;
        char *end;
        int r;

        if (asprintf(&path, "%s/%s", cg, file) < 0)
                return -ENOMEM;
        r = read_file_at(AT_FDCWD, path, 256, &buf, NULL);
        if (r < 0)
                return r;
        if (strneq(buf, "max", 3)) {
                *ret = UINT64_MAX;
                return 0;
        }
        errno = 0;
        *ret = strtoull(buf, &end, 10);
        return errno == 0 && end != buf && (*end == '\n' || *end == 0) ? 0 : -EBADMSG;
}

/* Whether the kernel holds the run's ceilings: NULL if it does, else what differs. */
static const char *claim_limits_differ(PoolClaim *c) {
        const char *cg = c->run->cgroup_path;
        _cleanup_free_ char *path = NULL, *cpu = NULL;
        unsigned unenforced = c->run->record->limits.unenforced; /* a testbed build's (ceilings.h) */
        uint64_t v, quota, period;
        int r;

        if (!(unenforced & CEILING_MEMORY) && (read_u64_or_max(cg, "memory.max", &v) < 0 || v != c->limits.memory_max))
                return "MemoryMax";
        if (!(unenforced & CEILING_TASKS) && (read_u64_or_max(cg, "pids.max", &v) < 0 || v != c->limits.tasks_max))
                return "TasksMax";
        if (asprintf(&path, "%s/cpu.max", cg) < 0)
                return "CPUQuota";
        r = read_file_at(AT_FDCWD, path, 256, &cpu, NULL);
        if (r == -ENOENT && ceilings_unenforced(CEILING_CPU))
                return NULL;
        if (r < 0)
                return "CPUQuota";
        if (c->limits.cpu_quota_per_sec_usec == UINT64_MAX)
                return strneq(cpu, "max ", 4) ? NULL : "CPUQuota";
        if (sscanf(cpu, "%" SCNu64 " %" SCNu64, &quota, &period) != 2 || period == 0 ||
            quota * 100 / period != c->limits.cpu_quota_per_sec_usec / 10000)
                return "CPUQuota";
        return NULL;
}

static int on_claim_limits(sd_event_source *s, uint64_t usec, void *userdata) {
        PoolClaim *c = userdata;
        const char *differs = claim_limits_differ(c);
        _cleanup_free_ char *msg = NULL;

        if (!differs) {
                claim_send(c);
                return 0;
        }
        if (now_monotonic() > c->deadline) {
                if (asprintf(&msg, "%s of the pooled unit is not the run's in the kernel", differs) < 0)
                        msg = NULL;
                claim_done(c, msg ?: "a ceiling of the pooled unit is not the run's in the kernel");
                return 0;
        }
        (void) sd_event_source_set_time_relative(s, POOL_LIMITS_POLL_USEC);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static int on_claim_go(sd_event_source *s, void *userdata) {
        claim_send(userdata);
        return 0;
}

static int on_claim_props_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PoolClaim *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        _cleanup_free_ char *msg = NULL;
        int r;

        c->slot = sd_bus_slot_unref(c->slot);
        if (e) {
                if (asprintf(&msg, "cannot set the run's ceilings on the pooled unit: %s", e->message) < 0)
                        msg = NULL;
                claim_done(c, msg ?: "cannot set the run's ceilings on the pooled unit");
                return 0;
        }
        if (!c->check_limits) {
                claim_send(c);
                return 0;
        }
        /* systemd writes the cgroup after it answered: until then, and never later than the deadline */
        c->deadline = now_monotonic() + POOL_LIMITS_WAIT_USEC;
        r = sd_event_add_time_relative(c->pool->manager->event, &c->timer, CLOCK_MONOTONIC, 0, 0, on_claim_limits, c);
        if (r < 0)
                claim_done(c, "cannot check the run's ceilings on the pooled unit");
        return 0;
}

static int pool_claim(Pool *p, PoolMember *pm, Run *run, const RunPlan *plan, const int fds[3], char **argv, char **env) {
        Manager *m = p->manager;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_free_ char *desc = NULL;
        PoolLimits unit_limits;
        PoolClaim *c;
        int r;

        c = calloc(1, sizeof(PoolClaim));
        if (!c)
                return -ENOMEM;
        *c = (PoolClaim) { .pool = p, .run = run, .ctl = -EBADF, .fds = { -EBADF, -EBADF, -EBADF } };
        run->claim = c;
        r = policy_pool_limits(plan, &c->limits);
        if (r >= 0)
                r = policy_pool_limits(pm->plan, &unit_limits);
        if (r < 0)
                goto fail;
        c->check_limits = memcmp(&c->limits, &unit_limits, sizeof(PoolLimits)) != 0;
        c->argv = strv_copy(argv);
        c->env = env ? strv_copy(env) : NULL;
        if (!c->argv || (env && !c->env)) {
                r = -ENOMEM;
                goto fail;
        }
        for (int i = 0; i < 3; i++)
                if ((c->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) < 0) {
                        r = -errno;
                        goto fail;
                }

        /* The unit is the run's now: its description says so, and the run's ceilings are its own
         * (runtime: kept in /run, gone with the unit). */
        if (asprintf(&desc, "sbx run %s (profile %s)", run->id, pm->profile->name) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = sd_bus_message_new_method_call(m->bus, &call, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
        if (r >= 0)
                r = sd_bus_message_append(call, "sb", pm->unit, 1);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sv)", "Description", "s", desc);
        if (r >= 0 && c->check_limits)
                r = sd_bus_message_append(call, "(sv)(sv)(sv)", "MemoryMax", "t", c->limits.memory_max, "TasksMax", "t",
                                          c->limits.tasks_max, "CPUQuotaPerSecUSec", "t",
                                          c->limits.cpu_quota_per_sec_usec);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        /* With the profile's own ceilings nothing is to be checked first: the description follows on its
         * own, the command goes as soon as the run is set up (after the caller's reply is due). */
        if (r >= 0 && c->check_limits)
                r = sd_bus_call_async(m->bus, &c->slot, call, on_claim_props_reply, c, 0);
        else if (r >= 0) {
                r = sd_bus_call_async(m->bus, NULL, call, NULL, NULL, 0);
                if (r >= 0)
                        r = sd_event_add_defer(m->event, &c->timer, on_claim_go, c);
        }
        if (r < 0)
                goto fail;

        /* What the unit's helper used and met before the run's command came is not the run's. */
        run_take_base_figures(run);
        /* The member is the run's: its channel goes to the claim, the rest is not needed. */
        c->ctl = TAKE_FD(pm->ctl);
        member_free(pm);
        return 0;
fail:
        pool_claim_free(c);
        member_retire(pm, false, "a claim failed");
        return r;
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

/* sbxd took up the runs of an earlier one: what is not a run's among sbx's units is left from an earlier
 * pool (stopped), then the pool fills. */
static int pool_manager_start(Manager *m) {
        int r;

        r = pool_new(m, &m->pool);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the warm pool: %m");
        r = pool_start(m->pool);
        if (r < 0)
                log_warning_errno(r, "Failed to start the warm pool (runs start units of their own): %m");
        return 0;
}

static void pool_manager_stop(Manager *m) {
        m->pool = pool_free(m->pool);
}

/* A run a waiting unit may serve: not a sandbox, of a profile with a pool, and with nothing a unit made
 * before the request could not have (a network, host directories, credentials, an export, a terminal). */
static int pool_route(Manager *m, const Profile *p, const RunRequest *req, char run_id[static RUN_ID_LEN + 1],
                      void **ret_unit) {
        PoolMember *pm;

        if (req->sandbox || p->pool_size == 0 || policy_run_network(p, req) != NETWORK_NONE || req->workspace ||
            req->dataset || run_request_has_credentials(req) || req->export_dir || req->tty.on)
                return 0;
        pm = pool_find(m->pool, p->name, run_id);
        if (!pm)
                return 0;
        *ret_unit = pm;
        return 1;
}

/* The unit serves the run if it was made from the same plan (the run's ceilings apart, which the claim
 * applies). */
static int pool_route_keeps(Manager *m, void *unit, const Profile *p, const RunPlan *plan) {
        _cleanup_free_ char *why = NULL;
        PoolMember *pm = unit;
        int r;

        r = policy_pool_match(pm->plan, plan, &why);
        if (r != 0)
                return r;
        log_debug("Run not served by pooled unit %s: %s", pm->id, strna(why));
        pool_member_mismatch(m->pool, pm, p);
        return 0;
}

static void pool_hand_over_run(Run *run, void *unit) {
        pool_member_hand_over(run->manager->pool, unit, run);
}

/* The run's record could not be written: the unit is stopped, the entries handed over with it go. */
static void pool_release_run(Run *run, void *unit) {
        pool_member_release(run->manager->pool, unit);
        run_net_finish(run->net);
}

static int pool_claim_run(Run *run, void *unit, const RunPrepare *ctx) {
        int r;

        r = pool_claim(run->manager->pool, unit, run, ctx->plan, ctx->stdio, ctx->req->argv, ctx->req->env);
        if (r < 0)
                run_net_finish(run->net); /* the unit is being stopped: its entries go now */
        return r;
}

/* A claim still out when its run goes (the run was refused, or sbxd stops). */
static void pool_free_run(Run *run) {
        run->claim = pool_claim_free(run->claim);
}

const Feature feature_pool = {
        .name = "pool",
        .start = pool_manager_start,
        .stop = pool_manager_stop,
        .route = pool_route,
        .route_keeps = pool_route_keeps,
        .hand_over = pool_hand_over_run,
        .release = pool_release_run,
        .claim = pool_claim_run,
        .free_run = pool_free_run,
};
