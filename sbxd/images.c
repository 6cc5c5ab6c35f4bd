/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The images feature (feature.h): the image store, its import in a child process, and a run's base image
 * held while it runs (images.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "bus-errors.h"
#include "feature.h"
#include "fileio.h"
#include "images.h"
#include "record-image.h"
#include "log.h"
#include "polkit.h"
#include "sha256.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* ---- the store ---------------------------------------------------------------------------------------- */

/* Every image of the store (entries that are not one are skipped: an import under way, say). */
static int store_list(ImageInfo ***ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = opendir(SBX_IMAGES_DIR);
        ImageInfo **l = NULL;
        size_t n = 0;
        struct dirent *de;

        if (!d && errno != ENOENT)
                return -errno;
        while (d && (de = readdir(d))) {
                ImageInfo *i = NULL, **nl;

                if (!image_digest_is_valid(de->d_name) || image_info_load(SBX_IMAGES_DIR, de->d_name, &i, NULL) < 0)
                        continue;
                nl = realloc(l, (n + 1) * sizeof(ImageInfo *));
                if (!nl) {
                        image_info_free(i);
                        break;
                }
                l = nl;
                l[n++] = i;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static void store_list_free(ImageInfo **l, size_t n) {
        for (size_t i = 0; i < n; i++)
                image_info_free(l[i]);
        free(l);
}

/* The version a reference names: its digest, or the most recent import under the name. -ENOENT: no
 * image of that name; -ENXIO: the name has no such version (or the digest is another image's). */
static int store_find(const ImageRef *ref, ImageInfo **ret, char **ret_error) {
        _cleanup_(image_info_freep) ImageInfo *best = NULL;
        ImageInfo **l = NULL;
        size_t n = 0;
        int r;

        if (ref->digest[0]) {
                r = image_info_load(SBX_IMAGES_DIR, ref->digest, &best, ret_error);
                if (r == -ENOENT || (r >= 0 && !streq(best->name, ref->name)))
                        return -ENXIO;
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(best);
                return 0;
        }
        r = store_list(&l, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (streq(l[i]->name, ref->name) && (!best || l[i]->imported_at > best->imported_at)) {
                        image_info_free(best);
                        best = TAKE_PTR(l[i]);
                }
        store_list_free(l, n);
        if (!best)
                return -ENOENT;
        *ret = TAKE_PTR(best);
        return 0;
}

static bool image_in_use(Manager *m, const char *hex) {
        for (Run *run = m->runs; run; run = run->next)
                if (run->record && run->record->image && !run->record->finished &&
                    streq(run->record->image->digest + strlen("sha256:"), hex))
                        return true;
        return false;
}

/* ---- the kernel ------------------------------------------------------------------------------------------ */

/* A module of the running kernel: built in, or there to be loaded (systemd loads loop and dm_verity for a
 * unit with RootImage=; the kernel loads a file system's module when it is mounted). */
static bool kernel_has(const char *fs, const char *module) {
        _cleanup_free_ char *text = NULL, *path = NULL, *ko = NULL;
        struct utsname u;

        if (fs && read_file_at(AT_FDCWD, "/proc/filesystems", 64 * 1024, &text, NULL) >= 0) {
                for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                        const char *t = strrchr(l, '\t');
                        size_t k = strcspn(t ? t + 1 : l, "\n");

                        if (t && strlen(fs) == k && strneq(t + 1, fs, k))
                                return true;
                }
                text = mfree(text);
        }
        if (asprintf(&path, "/sys/module/%s", module) < 0)
                return false;
        if (access(path, F_OK) == 0)
                return true;
        if (uname(&u) < 0 || asprintf(&ko, "/%s.ko", module) < 0)
                return false;
        for (const char *list = "modules.builtin\0modules.dep\0"; *list; list += strlen(list) + 1) {
                _cleanup_free_ char *f = NULL;

                if (asprintf(&f, "/usr/lib/modules/%s/%s", u.release, list) < 0)
                        return false;
                text = mfree(text);
                if (read_file_at(AT_FDCWD, f, 16 * 1024 * 1024, &text, NULL) < 0)
                        continue;
                /* "kernel/fs/squashfs/squashfs.ko" (builtin) or "...squashfs.ko.xz:" (a module); module
                 * file names use '-' or '_' alike */
                for (char *c = ko; *c; c++)
                        if (*c == '_')
                                *c = '-';
                if (strstr(text, ko))
                        return true;
                for (char *c = ko; *c; c++)
                        if (*c == '-')
                                *c = '_';
                if (strstr(text, ko))
                        return true;
        }
        return false;
}

static const char *kernel_missing(const char *format) {
        if (streq(format, "squashfs") && !kernel_has("squashfs", "squashfs"))
                return "no squashfs file system";
        if (streq(format, "erofs") && !kernel_has("erofs", "erofs"))
                return "no erofs file system";
        if (!kernel_has(NULL, "loop") && access("/dev/loop-control", F_OK) < 0)
                return "no loop devices";
        if (!kernel_has(NULL, "dm_verity"))
                return "no dm-verity";
        return NULL;
}

/* ---- a run on an image ----------------------------------------------------------------------------------- */

/* For a run of a profile on a base image: finds the image (the profile's, narrowed by the request) in the
 * store, checks it and the kernel's support for it, and sets req->run_image. Errors on error (bad or
 * unknown name: ERR_INVALID/ERR_NO_IMAGE; a digest the store does not hold under the name, or a damaged
 * entry: ERR_IMAGE_MISMATCH; a kernel without support: ERR_UNENFORCEABLE). */
static int images_check_request(Manager *m, const Profile *p, RunRequest *req, uid_t uid, sd_bus_error *error) {
        _cleanup_(image_info_freep) ImageInfo *info = NULL;
        _cleanup_(run_image_freep) RunImage *img = NULL;
        _cleanup_free_ char *why = NULL;
        const char *missing;
        struct stat st;
        ImageRef ref;
        int r;

        if (!p->base_image)
                return 0;
        r = image_ref_merge(p->image, req->image, &ref, &why);
        if (r == -EBADMSG)
                return sd_bus_error_setf(error, ERR_IMAGE_MISMATCH, "%s", why);
        if (r < 0)
                return why ? sd_bus_error_setf(error, ERR_INVALID, "%s", why) : r;
        r = store_find(&ref, &info, &why);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, ERR_NO_IMAGE, "image %s: no such image (sbxctl image list)", ref.name);
        if (r == -ENXIO)
                return sd_bus_error_setf(error, ERR_IMAGE_MISMATCH, "image %s: digest mismatch: the store holds no "
                                         "version sha256:%s of it", ref.name, ref.digest);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_IMAGE_MISMATCH, "image %s: its entry in the store cannot be used: %s",
                                         ref.name, why ?: strerror(-r));
        /* What the run will mount is what was hashed at import: image.raw is the file the digest names,
         * and dm-verity checks every block read from it against the root hash computed from the same
         * bytes then (docs/images.md); the store is root's alone. Its size is checked here, the rest by
         * the kernel on every read. */
        img = calloc(1, sizeof(RunImage));
        if (!img)
                return -ENOMEM;
        if (!(img->name = strdup(info->name)) ||
            asprintf(&img->path, SBX_IMAGES_DIR "/%s/" IMAGE_FILE, info->digest) < 0 ||
            asprintf(&img->verity_path, SBX_IMAGES_DIR "/%s/" IMAGE_VERITY_FILE, info->digest) < 0)
                return -ENOMEM;
        memcpy(img->digest, info->digest, sizeof(img->digest));
        memcpy(img->root_hash, info->root_hash, sizeof(img->root_hash));
        if (stat(img->path, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size != info->size)
                return sd_bus_error_setf(error, ERR_IMAGE_MISMATCH, "image %s@sha256:%s: %s is missing or not the size "
                                         "it was imported with", info->name, info->digest, img->path);
        if (stat(img->verity_path, &st) < 0 || !S_ISREG(st.st_mode))
                return sd_bus_error_setf(error, ERR_IMAGE_MISMATCH, "image %s@sha256:%s: its dm-verity data %s is missing",
                                         info->name, info->digest, img->verity_path);
        missing = kernel_missing(info->format);
        if (missing)
                return sd_bus_error_setf(error, ERR_UNENFORCEABLE, "image %s@sha256:%s cannot be mounted: this kernel "
                                         "has %s (a run on an image never falls back to the host's OS)",
                                         info->name, info->digest, missing);
        req->run_image = TAKE_PTR(img);
        return 0;
}

void images_hold(Manager *m, const char *hex) {
        _cleanup_free_ char *hold = NULL;

        if (image_hold_unit_name(hex, &hold) < 0)
                return;
        (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "RestartUnit", NULL, NULL, "ss",
                                        hold, "replace");
}

/* Image hex's mount goes (its hold first, which needs it): no run uses it (image_in_use()). */
static void images_unmount(Manager *m, const char *hex) {
        _cleanup_free_ char *hold = NULL, *unit = NULL;

        if (image_hold_unit_name(hex, &hold) < 0 || image_unit_name(hex, &unit) < 0)
                return;
        (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL, "ss", hold,
                                        "replace");
        (void) sd_bus_call_method_async(m->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL, "ss", unit,
                                        "replace");
}

/* ---- import ------------------------------------------------------------------------------------------------ */

/* Runs argv (output to out_fd, or /dev/null), waits for it. Child of the import child only. */
static int run_wait(char *const *argv, int out_fd) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO) < 0 ||
                    dup2(null, STDERR_FILENO) < 0)
                        _exit(127);
                execv(argv[0], argv);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status))
                return -EPROTO;
        return WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Copies fd into dir_fd/name and hashes what it wrote (of a directory's import: reads back mksquashfs's
 * file). */
static int copy_hash(int in, int out, char hex[static IMAGE_DIGEST_HEX + 1], uint64_t *ret_size,
                     uint8_t *head, size_t head_size) {
        static uint8_t buf[1 << 20];
        uint8_t d[SHA256_DIGEST_SIZE];
        uint64_t total = 0;
        Sha256 ctx;

        sha256_init(&ctx);
        for (;;) {
                ssize_t n = read(in, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;

                        sha256_final(&ctx, d);
                        return e;
                }
                if (n == 0)
                        break;
                if (total < head_size)
                        memcpy(head + total, buf, MIN((size_t) n, (size_t) (head_size - total)));
                sha256_update(&ctx, buf, (size_t) n);
                if (out >= 0 && loop_write(out, buf, (size_t) n) < 0) {
                        int e = -errno;

                        sha256_final(&ctx, d);
                        return e;
                }
                total += (uint64_t) n;
        }
        sha256_final(&ctx, d);
        hex_encode(d, sizeof(d), hex);
        *ret_size = total;
        return 0;
}

/* The mount points a squashfs file lacks ("unsquashfs -l" lists "squashfs-root/PATH"); NULL: none */
static int squashfs_missing_mount_points(const char *image, int tmp_fd, char **ret) {
        _cleanup_free_ char *list = NULL, *missing = NULL;
        _cleanup_close_ int fd = openat(tmp_fd, "list.txt", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int r;

        if (fd < 0)
                return -errno;
        r = run_wait((char *const[]) { (char *) "/usr/bin/unsquashfs", (char *) "-l", (char *) image, NULL }, fd);
        if (r < 0)
                return r;
        r = read_file_at(tmp_fd, "list.txt", 256 * 1024 * 1024, &list, NULL);
        (void) unlinkat(tmp_fd, "list.txt", 0);
        if (r < 0)
                return r;
        for (const char *const *p = image_mount_points; *p; p++) {
                _cleanup_free_ char *line = NULL;

                if (asprintf(&line, "\nsquashfs-root/%s\n", *p) < 0)
                        return -ENOMEM;
                if (!strstr(list, line)) {
                        char *n = NULL;

                        if (asprintf(&n, "%s%s/%s", missing ?: "", missing ? ", " : "", *p) < 0)
                                return -ENOMEM;
                        free(missing);
                        missing = n;
                }
        }
        *ret = TAKE_PTR(missing);
        return 0;
}

/* The import itself, in the child: the image into a new directory of the store. Its result goes to
 * out_fd as "OK <hex>" or "ERR <bus error name> <message>". */
static int import_child(const char *name, int src_fd, int out_fd) {
        _cleanup_free_ char *tmp = NULL, *root_hash = NULL, *vtext = NULL, *meta = NULL, *final = NULL;
        _cleanup_close_ int tmp_fd = -EBADF, img = -EBADF;
        ImageInfo info = { .name = (char *) name, .imported_at = now_realtime() };
        uint8_t head[2048] = {};
        struct stat st;
        const char *format, *err = ERR_INVALID;
        char msg[512] = "";
        int r;

        if (fstat(src_fd, &st) < 0)
                return dprintf(out_fd, "ERR %s cannot read the source: %m\n", ERR_START_FAILED), 1;
        if ((mkdir(SBX_STATEDIR, 0750) < 0 && errno != EEXIST) || (mkdir(SBX_IMAGES_DIR, 0700) < 0 && errno != EEXIST))
                return dprintf(out_fd, "ERR %s cannot make %s: %m\n", ERR_START_FAILED, SBX_IMAGES_DIR), 1;
        if (asprintf(&tmp, SBX_IMAGES_DIR "/.import-XXXXXX") < 0 || !mkdtemp(tmp))
                return dprintf(out_fd, "ERR %s cannot make a directory in %s: %m\n", ERR_START_FAILED, SBX_IMAGES_DIR), 1;
        tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tmp_fd < 0)
                goto fail_errno;
        if (S_ISDIR(st.st_mode)) {
                /* A directory becomes a squashfs file, reproducibly (no times, sorted, the tree's owners and
                 * modes): its canonical serialization, which the digest names (docs/images.md). The mount
                 * points a run needs are added where the tree lacks them. */
                _cleanup_free_ char *dst = NULL;
                char *argv[64] = { (char *) SBX_MKSQUASHFS_PATH };
                char pseudo[16][64];
                size_t k = 1, np = 0;

                /* the tree is the working directory: a path through /proc/self/fd would be a symlink to
                 * mksquashfs, not the directory */
                if (fchdir(src_fd) < 0 || asprintf(&dst, "%s/" IMAGE_FILE, tmp) < 0)
                        goto fail_errno;
                argv[k++] = (char *) ".";
                argv[k++] = dst;
                for (const char *o = "-noappend\0-no-xattrs\0-mkfs-time\0" "0\0-all-time\0" "0\0-no-progress\0-quiet\0";
                     *o; o += strlen(o) + 1)
                        argv[k++] = (char *) o;
                for (const char *const *p = image_mount_points; *p && np < ELEMENTSOF(pseudo); p++)
                        if (faccessat(src_fd, *p, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
                                (void) snprintf(pseudo[np], sizeof(pseudo[np]), "%s d 755 0 0", *p);
                                argv[k++] = (char *) "-p";
                                argv[k++] = pseudo[np++];
                        }
                argv[k] = NULL;
                if (run_wait(argv, -1) < 0) {
                        (void) snprintf(msg, sizeof(msg), "mksquashfs could not make an image of the directory");
                        goto fail;
                }
                img = openat(tmp_fd, IMAGE_FILE, O_RDONLY | O_CLOEXEC);
                if (img < 0)
                        goto fail_errno;
                r = copy_hash(img, -EBADF, info.digest, &info.size, head, sizeof(head));
                info.source = (char *) "directory";
        } else if (S_ISREG(st.st_mode)) {
                img = openat(tmp_fd, IMAGE_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (img < 0)
                        goto fail_errno;
                r = copy_hash(src_fd, img, info.digest, &info.size, head, sizeof(head));
                if (r >= 0 && fsync(img) < 0)
                        r = -errno;
                info.source = (char *) "file";
        } else {
                (void) snprintf(msg, sizeof(msg), "the source is neither a regular file nor a directory");
                goto fail;
        }
        if (r < 0) {
                errno = -r;
                goto fail_errno;
        }
        format = image_format_from_header(head, MIN(info.size, (uint64_t) sizeof(head)));
        if (!format) {
                (void) snprintf(msg, sizeof(msg), "not a squashfs or erofs file system image");
                goto fail;
        }
        info.format = (char *) format;
        if (streq(format, "squashfs")) {
                _cleanup_free_ char *path = NULL, *missing = NULL;

                if (asprintf(&path, "%s/" IMAGE_FILE, tmp) < 0)
                        goto fail_errno;
                r = squashfs_missing_mount_points(path, tmp_fd, &missing);
                if (r < 0) {
                        (void) snprintf(msg, sizeof(msg), "unsquashfs could not list the image: %s", strerror(-r));
                        goto fail;
                }
                if (missing) {
                        (void) snprintf(msg, sizeof(msg), "the image lacks mount points a run needs: %s (make them as "
                                        "empty directories, or import a directory, where sbx adds them)", missing);
                        goto fail;
                }
        }
        /* dm-verity: the hash tree in image.verity, its root hash in the metadata */
        {
                _cleanup_free_ char *data = NULL, *hash = NULL;
                _cleanup_close_ int out = openat(tmp_fd, "verity.txt", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                const char *l;

                if (out < 0 || asprintf(&data, "%s/" IMAGE_FILE, tmp) < 0 ||
                    asprintf(&hash, "%s/" IMAGE_VERITY_FILE, tmp) < 0)
                        goto fail_errno;
                if (run_wait((char *const[]) { (char *) SBX_VERITYSETUP_PATH, (char *) "format", data, hash, NULL }, out) < 0) {
                        (void) snprintf(msg, sizeof(msg), "veritysetup could not make the image's dm-verity data (is "
                                        "cryptsetup-bin installed?)");
                        err = ERR_START_FAILED;
                        goto fail;
                }
                if (read_file_at(tmp_fd, "verity.txt", 64 * 1024, &vtext, NULL) < 0 ||
                    !(l = strstr(vtext, "Root hash:")))
                        goto fail_verity;
                l += strlen("Root hash:");
                l += strspn(l, " \t");
                r = (int) strspn(l, "0123456789abcdef");
                if (r < 2 || (size_t) r > IMAGE_ROOT_HASH_HEX_MAX || r % 2)
                        goto fail_verity;
                memcpy(info.root_hash, l, (size_t) r);
                info.root_hash[r] = 0;
                (void) unlinkat(tmp_fd, "verity.txt", 0);
        }
        if (image_info_to_json(&info, &meta) < 0 ||
            write_file_atomic_at(tmp_fd, IMAGE_META_FILE, meta, strlen(meta), 0600) < 0)
                goto fail_errno;
        (void) fchmod(tmp_fd, 0700);
        if (asprintf(&final, SBX_IMAGES_DIR "/%s", info.digest) < 0)
                goto fail_errno;
        if (rename(tmp, final) < 0) {
                _cleanup_(image_info_freep) ImageInfo *old = NULL;

                if (errno != EEXIST && errno != ENOTEMPTY)
                        goto fail_errno;
                (void) rm_rf_at(AT_FDCWD, tmp, 2);
                /* the same bytes again: nothing to do under the same name; another name's they are not */
                if (image_info_load(SBX_IMAGES_DIR, info.digest, &old, NULL) >= 0 && !streq(old->name, name))
                        return dprintf(out_fd, "ERR %s this image is imported already, as %s@sha256:%s\n", ERR_EXISTS,
                                       old->name, info.digest), 1;
        }
        return dprintf(out_fd, "OK %s\n", info.digest), 0;

fail_verity:
        (void) snprintf(msg, sizeof(msg), "veritysetup printed no root hash");
        err = ERR_START_FAILED;
        goto fail;
fail_errno:
        (void) snprintf(msg, sizeof(msg), "%s", strerror(errno));
        err = ERR_START_FAILED;
fail:
        if (tmp)
                (void) rm_rf_at(AT_FDCWD, tmp, 2);
        return dprintf(out_fd, "ERR %s %s\n", err, msg), 1;
}

typedef struct ImportJob {
        sd_bus_message *msg;
        sd_event_source *src;
        pid_t pid;
        char *name;
        int fd;
        char buf[1024];
        size_t n;
} ImportJob;

static ImportJob *import_job_free(ImportJob *j) {
        if (!j)
                return NULL;
        sd_event_source_disable_unref(j->src);
        sd_bus_message_unref(j->msg);
        if (j->fd >= 0)
                (void) close(j->fd);
        if (j->pid > 0)
                (void) waitpid(j->pid, NULL, 0);
        free(j->name);
        free(j);
        return NULL;
}

static int on_import_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ImportJob *j = userdata;
        ssize_t n;
        char *eol;

        n = read(fd, j->buf + j->n, sizeof(j->buf) - 1 - j->n);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0) {
                j->n += (size_t) n;
                if (j->n < sizeof(j->buf) - 1)
                        return 0;
        }
        j->buf[j->n] = 0;
        eol = strchr(j->buf, '\n');
        if (eol)
                *eol = 0;
        if (strneq(j->buf, "OK ", 3) && image_digest_is_valid(j->buf + 3)) {
                log_info("Image %s@sha256:%s imported.", j->name, j->buf + 3);
                (void) sd_bus_reply_method_return(j->msg, "s", j->buf + 3);
        } else if (strneq(j->buf, "ERR ", 4) && strchr(j->buf + 4, ' ')) {
                char *sp = strchr(j->buf + 4, ' ');

                *sp = 0;
                log_info("Image %s was not imported: %s", j->name, sp + 1);
                (void) sd_bus_reply_method_errorf(j->msg, j->buf + 4, "image %s: %s", j->name, sp + 1);
        } else
                (void) sd_bus_reply_method_errorf(j->msg, ERR_START_FAILED, "image %s: the import ended without a result",
                                                  j->name);
        import_job_free(j);
        return 0;
}

int images_method_import(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        char tenant[TENANT_ID_LEN + 1];
        const char *name;
        ImportJob *j;
        struct stat st;
        int fd, pipefd[2], src_fd, r;
        uid_t uid;
        pid_t pid;

        r = sd_bus_message_read(msg, "sh", &name, &fd);
        if (r < 0)
                return r;
        if (!image_name_is_valid(name))
                return sd_bus_error_setf(error, ERR_INVALID, "image: '%s' is not a name (1-64 of a-z 0-9 . _ -, starting "
                                         "with a letter or digit)", name);
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                return sd_bus_error_setf(error, ERR_INVALID, "image %s: the source is neither a regular file nor a directory",
                                         name);
        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        r = polkit_check_async(&m->polkit, msg, POLKIT_ACTION_IMAGE, uid, images_method_import, m);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_ACCESS, "importing an image needs root or polkit's " POLKIT_ACTION_IMAGE);
        if (r == 0)
                return 1;

        src_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (src_fd < 0)
                return -errno;
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = -errno;
                (void) close(src_fd);
                return r;
        }
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void) close(src_fd);
                (void) close(pipefd[0]);
                (void) close(pipefd[1]);
                return r;
        }
        if (pid == 0) {
                sigset_t all;

                sigemptyset(&all);
                (void) sigprocmask(SIG_SETMASK, &all, NULL);
                (void) close(pipefd[0]);
                _exit(import_child(name, src_fd, pipefd[1]));
        }
        (void) close(src_fd);
        (void) close(pipefd[1]);
        j = calloc(1, sizeof(ImportJob));
        if (!j || !(j->name = strdup(name))) {
                free(j);
                (void) close(pipefd[0]);
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return -ENOMEM;
        }
        j->pid = pid;
        j->fd = pipefd[0];
        j->msg = sd_bus_message_ref(msg);
        r = sd_event_add_io(m->event, &j->src, j->fd, EPOLLIN, on_import_output, j);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                import_job_free(j);
                return r;
        }
        log_info("Image %s: import started (uid %u).", name, (unsigned) uid);
        return 1;
}

/* ---- list and remove -------------------------------------------------------------------------------------- */

int images_method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();
        ImageInfo **l = NULL;
        size_t n = 0;
        int r;

        if (!a)
                return -ENOMEM;
        r = store_list(&l, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = NULL;
                json_object *o;

                r = image_info_to_json(l[i], &text);
                if (r < 0)
                        break;
                o = json_tokener_parse(text);
                if (!o) {
                        r = -ENOMEM;
                        break;
                }
                (void) json_object_object_add(o, "in_use", json_object_new_boolean(image_in_use(m, l[i]->digest)));
                (void) json_object_array_add(a, o);
        }
        store_list_free(l, n);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "s", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
}

int images_method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *why = NULL;
        char tenant[TENANT_ID_LEN + 1];
        const char *s;
        ImageInfo **l = NULL;
        size_t n = 0, removed = 0;
        ImageRef ref;
        uid_t uid;
        int r;

        r = sd_bus_message_read(msg, "s", &s);
        if (r < 0)
                return r;
        if (image_ref_parse(s, &ref, &why) < 0)
                return sd_bus_error_setf(error, ERR_INVALID, "%s", why);
        r = manager_caller_tenant(m, msg, tenant, &uid);
        if (r < 0)
                return r;
        r = polkit_check_async(&m->polkit, msg, POLKIT_ACTION_IMAGE, uid, images_method_remove, m);
        if (r < 0)
                return sd_bus_error_setf(error, ERR_ACCESS, "removing an image needs root or polkit's " POLKIT_ACTION_IMAGE);
        if (r == 0)
                return 1;
        r = store_list(&l, &n);
        if (r < 0)
                return r;
        /* every version the reference names, or none: one in use refuses it all */
        for (size_t i = 0; i < n; i++)
                if (streq(l[i]->name, ref.name) && (!ref.digest[0] || streq(l[i]->digest, ref.digest)) &&
                    image_in_use(m, l[i]->digest)) {
                        r = sd_bus_error_setf(error, ERR_BUSY, "image %s@sha256:%s is in use by a run", l[i]->name,
                                              l[i]->digest);
                        store_list_free(l, n);
                        return r;
                }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;

                if (!streq(l[i]->name, ref.name) || (ref.digest[0] && !streq(l[i]->digest, ref.digest)))
                        continue;
                if (asprintf(&path, SBX_IMAGES_DIR "/%s", l[i]->digest) < 0) {
                        store_list_free(l, n);
                        return -ENOMEM;
                }
                /* its mount (unused: checked above) goes with it */
                images_unmount(m, l[i]->digest);
                /* the metadata first: a half-removed entry is no image */
                {
                        _cleanup_free_ char *meta = NULL;

                        if (asprintf(&meta, "%s/" IMAGE_META_FILE, path) >= 0)
                                (void) unlink(meta);
                }
                r = rm_rf_at(AT_FDCWD, path, 2);
                if (r < 0) {
                        store_list_free(l, n);
                        return log_error_errno(r, "Failed to remove image %s: %m", path);
                }
                log_info("Image %s@sha256:%s removed.", l[i]->name, l[i]->digest);
                removed++;
        }
        store_list_free(l, n);
        if (removed == 0)
                return sd_bus_error_setf(error, ERR_NO_IMAGE, "image %s: no such image%s", s,
                                         ref.digest[0] ? " version" : "");
        return sd_bus_reply_method_return(msg, NULL);
}

/* ---- the feature's hooks (feature.h) ------------------------------------------------------------ */

/* A run on a base image: the image into its record, and its hold unit (re)started. */
static int images_prepare(Run *run, const RunPrepare *ctx, sd_bus_error *error) {
        const RunImage *img = ctx->req->run_image;
        int r;

        if (!img)
                return 0;
        r = run_record_image_init(run->record, img->name, img->digest, true);
        if (r < 0)
                return r;
        images_hold(run->manager, img->digest);
        return 0;
}

const Feature feature_images = {
        .name = "images",
        .prepare = images_prepare,
        .check_request = images_check_request,
};
