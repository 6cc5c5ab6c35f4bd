/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxctl export: a live sandbox's files reviewed into the caller's directory; what a review held,
 * approved into the caller's directory or rejected; and the end-of-run lines of a run's export
 * (docs/export.md). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exit-codes.h"
#include "export-policy.h"
#include "fileio.h"
#include "policy.h"
#include "record-export.h"
#include "common.h"
#include "options.h"
#include "verbs.h"

/* ---- export from a live sandbox ---- */

/* The run id of the caller's sandbox key (an id, or a name: its object's path ends with the id). */
static int sandbox_run_id(const char *key, char **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path, *slash;
        int r;

        if (run_id_is_valid(key)) {
                *ret = strdup(key);
                return *ret ? 0 : failed("out of memory");
        }
        r = call_daemon_reply("GetSandbox", &reply, "s", key);
        if (r != 0)
                return r;
        if (sd_bus_message_read(reply, "o", &path) < 0 || !(slash = strrchr(path, '/')) || !run_id_is_valid(slash + 1))
                return failed("sbxd sent an invalid reply");
        *ret = strdup(slash + 1);
        return *ret ? 0 : failed("out of memory");
}

/* sbxctl export SANDBOX PATH --to=DIR: PATH (in the sandbox's HOME) reviewed into DIR while the sandbox runs. */
static int export_live(const char *sandbox, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(run_export_freep) RunExport *e = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *run_id = NULL, *missing = NULL;
        json_object *o;
        const char *json;
        int r;

        const char *path = NULL;

        /* options may also follow the path: "export SANDBOX PATH --to DIR" */
        if (argc >= 1) {
                path = argv[0];
                r = parse_argv_after_first(argc, argv);
                if (r <= 0)
                        return -r;
                argc -= optind;
        }
        if (argc != 0 || !path)
                return refused("export: expected a sandbox and a path in its HOME (export SANDBOX PATH --to=DIR), "
                               "or approve or reject");
        if (!run_id_is_valid(sandbox) && !sandbox_name_is_valid(sandbox))
                return refused("export: '%s' is neither a sandbox id nor a name", sandbox);
        if (!arg_export_to)
                return refused("export %s: --to=DIR is needed: the directory what passes review goes into", sandbox);
        fd = open(arg_export_to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return refused("export: '%s': %s", arg_export_to, strerror(errno));
        r = call_daemon_reply_timeout((EXPORT_REVIEW_TIMEOUT_SEC + 60) * USEC_PER_SEC, "Export", &reply, "ssh", sandbox, path,
                                      fd);
        if (r != 0)
                return r;
        if (sd_bus_message_read(reply, "s", &json) < 0 || !(o = json_tokener_parse(json)))
                return failed("sbxd sent an invalid reply");
        r = run_export_from_json(o, &e, NULL);
        json_object_put(o);
        if (r < 0)
                return failed("sbxd sent an invalid report");
        if (e->n_held > 0) {
                r = sandbox_run_id(sandbox, &run_id);
                if (r != 0)
                        return r;
        }
        if (asprintf(&missing, "%s is not in the sandbox", path) < 0)
                return failed("out of memory");
        return print_export_lines(e, run_id ?: sandbox, missing) ? SBX_EXIT_FAILURE : 0;
}

/* ---- approve and reject ---- */

static int openat2_beneath(int dfd, const char *name, int flags, mode_t mode) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | O_NOFOLLOW),
                .mode = (flags & O_CREAT) ? mode : 0,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int) syscall(SYS_openat2, dfd, name, &how, sizeof(how));

        return fd < 0 ? -errno : fd;
}

/* The parent directory of path below dfd, made as needed (0755); its last component in *ret_name. */
static int open_parent(int dfd, const char *path, const char **ret_name) {
        _cleanup_free_ char *p = strdup(path);
        char *slash;
        int fd;

        if (!p)
                return -ENOMEM;
        slash = strrchr(p, '/');
        *ret_name = slash ? path + (slash - p) + 1 : path;
        if (!slash) {
                fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? -errno : fd;
        }
        *slash = 0;
        for (char *c = p;; c++) {
                bool end = *c == 0;

                if (*c == '/' || end) {
                        *c = 0;
                        if (mkdirat(dfd, p, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        if (end)
                                break;
                        *c = '/';
                }
        }
        fd = openat2_beneath(dfd, p, O_RDONLY | O_DIRECTORY, 0);
        return fd;
}

static int copy_fd(int in, int out) {
        char buf[64 * 1024];

        for (;;) {
                ssize_t n = read(in, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                if (loop_write(out, buf, (size_t) n) < 0)
                        return -errno;
        }
}

/* One held item into the destination, as the caller: the file made first (never over one that is
 * there), then sbxd asked to release it. */
static int approve_one(const RunRecord *rec, const ExportItem *h, int dest_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_close_ int pfd = -EBADF, out = -EBADF;
        const char *name, *path;
        int fd, r;

        if (!export_source_path_is_valid(h->path))
                return refused("export approve: %s: '%s' is not a path sbxctl writes", h->id, h->path);
        pfd = open_parent(dest_fd, h->path, &name);
        if (pfd < 0)
                return refused("export approve: %s: cannot make the directories of '%s': %s", h->id, h->path,
                               strerror(-pfd));
        out = openat2_beneath(pfd, name, O_WRONLY | O_CREAT | O_EXCL, (mode_t) (h->mode & 0755) ?: 0644);
        if (out < 0)
                return refused("export approve: %s: cannot create '%s' in the destination: %s", h->id, h->path,
                               strerror(-out));
        r = call_daemon_reply("ApproveExport", &reply, "ss", rec->run_id, h->id);
        if (r == 0 && (sd_bus_message_read(reply, "sh", &path, &fd) < 0 || !streq(path, h->path)))
                r = failed("sbxd sent an invalid reply");
        if (r == 0 && (r = copy_fd(fd, out)) < 0)
                r = failed("export approve: %s: approved, but writing '%s' failed: %s", h->id, h->path, strerror(-r));
        if (r != 0) {
                (void) unlinkat(pfd, name, 0);
                return r;
        }
        printf("approved %s %s (%" PRIu64 " bytes, sha256 %s)\n", h->id, h->path, h->size, h->sha256);
        return 0;
}

static bool wanted(char **ids, const char *id) {
        return strv_length(ids) == 0 || strv_contains(ids, id);
}

int verb_export(int argc, char **argv) {
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        _cleanup_close_ int dest_fd = -EBADF;
        const char *verb, *id;
        int r, ret = 0;
        char **ids;
        bool approve;

        if (argc == 0)
                return refused("export: expected approve, reject, or a sandbox and a path");
        verb = argv[0];
        r = parse_argv_after_first(argc, argv);
        if (r <= 0)
                return -r;
        argv += optind;
        argc -= optind;
        if (!streq(verb, "approve") && !streq(verb, "reject"))
                return export_live(verb, argc, argv);
        approve = streq(verb, "approve");
        if (argc < 1)
                return refused("export %s: expected a run id, then the ids of held items (none: all of them)", verb);
        id = argv[0];
        ids = argv + 1;
        if (!run_id_is_valid(id))
                return refused("export %s: '%s' is not a run id (32 hex characters)", verb, id);
        STRV_FOREACH(i, ids)
                if (!export_item_id_is_valid(*i))
                        return refused("export %s: '%s' is not a held item's id (h1, h2, ...)", verb, *i);
        r = get_record(id, &rec);
        if (r != 0)
                return r;
        if (!rec->export)
                return refused("export %s: run %s did not export", verb, id);
        STRV_FOREACH(i, ids)
                if (!run_export_find_held(rec->export, *i))
                        return refused("export %s: run %s holds no item '%s'", verb, id, *i);
        if (rec->export->n_held == 0)
                return refused("export %s: run %s holds nothing", verb, id);
        if (approve) {
                const char *to = arg_export_to ?: rec->export->destination;

                if (!to)
                        return refused("export approve: run %s has no destination: give one with --to=DIR", id);
                dest_fd = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dest_fd < 0)
                        return refused("export approve: cannot open the destination '%s': %s", to, strerror(errno));
        }
        for (size_t k = 0; k < rec->export->n_held; k++) {
                const ExportItem *h = &rec->export->held[k];

                if (!wanted(ids, h->id))
                        continue;
                if (approve)
                        r = approve_one(rec, h, dest_fd);
                else if ((r = call_daemon_reply("RejectExport", NULL, "ss", id, h->id)) == 0)
                        printf("rejected %s %s\n", h->id, h->path);
                if (r != 0 && ret == 0)
                        ret = r;
        }
        return ret;
}
