/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-broker: performs HTTP(S) requests for the workloads of sbx runs with secrets they never hold
 * (docs/credentials.md).
 *
 * It listens on one unix stream socket (socket activation: units/sbx-broker.socket, whose directory is bound
 * into every run with grants; or --listen PATH). One request per connection, in a thread of
 * its own (at most CONNECTIONS_MAX at once):
 *
 *   client -> broker: one line of JSON (at most 64 KiB, '\n' included)
 *        {"grant":"NAME","method":"GET","url":"https://...","headers":{"Name":"value"},"body_bytes":N}
 *      ("headers" and "body_bytes" optional), then exactly N bytes of body;
 *   broker -> client: one line of JSON, then the connection is closed:
 *        {"status":200,"headers":[["Name","value"],...],"body_bytes":N} and N bytes of body, or
 *        {"error":"MESSAGE","reason":"REASON"}, REASON being one of grant_reason_to_string()'s.
 *
 * Who asks is never taken from the request: the peer's PID (SO_PEERCRED, pinned by a pidfd at accept)
 * gives its cgroup, /sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-RUNID.service[/...], whose RUNID names the
 * grant file sbxd wrote for the run, /run/sbx/grants/RUNID.json (root's, 0600). The request is performed
 * only if, checked again for every request: the process is alive and in the same cgroup before and
 * after its request line arrived, the grant file exists and its "cgroup" contains the process, the
 * run's cgroup still exists; then the grant named exists, allows the method, covers the URL
 * (grant_url_match()), every request header is allowed, the body fits max_body, and the secret of the
 * run's tenant decrypts to something usable in a header. The response goes back with its headers
 * filtered and every occurrence of the secret in its body overwritten with '*'.
 *
 * Every request of an identified run, refused or not, adds one line to the run's operations log,
 * /run/sbx/grants/RUNID.ops (grant_op_format(); made empty by sbxd with the grant file, never created
 * here). A run's requests end when the log is full: GRANT_OPS_LINES_MAX - 1 of them, and a last line
 * saying it was refused, so that the record lists every request the broker made. The journal gets
 * one line per request too. Neither ever holds the secret, a body, a header value, the URL's path or its
 * query. */

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "broker-conf.h"
#include "fileio.h"
#include "grant.h"
#include "broker-log.h"
#include "policy.h"
#include "secret.h"
#include "upstream.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

#define CONNECTIONS_MAX 64
#define CLIENT_TIMEOUT_SEC 30
#define REQUEST_DEADLINE_USEC (60 * USEC_PER_SEC) /* to receive the request line and the body */
#define PROC_CGROUP_MAX 4096
#define CGROUP_ROOT "/sys/fs/cgroup"

static BrokerConf arg_conf;
static const char *arg_config = BROKER_CONF_PATH;
static const char *arg_listen;
/* The service manager runs the unified cgroup hierarchy (cgroup2 at CGROUP_ROOT): a peer's place is the
 * last line of its /proc/PID/cgroup even where v1 hierarchies are mounted too (grant_cgroup_unified_line()).
 * Otherwise only a /proc/PID/cgroup of that one line identifies a peer. */
static bool cgroup_unified;

static atomic_uint n_connections;
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

/* One client's connection. */
typedef struct Conn {
        int fd;
        int pidfd;       /* the peer process, pinned at accept; -EBADF if it could not be */
        pid_t pid;
        usec_t start;    /* CLOCK_REALTIME */
        usec_t start_mono;
} Conn;

static Conn *conn_free(Conn *c) {
        if (!c)
                return NULL;
        safe_close(c->fd);
        safe_close(c->pidfd);
        return mfree(c);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Conn *, conn_free);

/* What serving one request found out. */
typedef struct Request {
        Conn *conn;
        char run[RUN_ID_LEN + 1];
        bool identified;      /* the run is known: the request goes into its operations log */
        GrantFile *grants;
        const Grant *grant;
        GrantRequest req;
        GrantUrl url;
        char *in;             /* the request line and whatever came after it */
        size_t in_size, line_size;
        char *line_error;     /* why the request line could not be received, once the run is known */
        bool performing;      /* the checks passed: a failure now is not a refusal */
        uint8_t *body;
        Secret *secret;
        UpstreamResponse resp;
        GrantOp op;
        GrantReason reason;   /* _GRANT_REASON_INVALID: none (performed) */
        char *message;
} Request;

static void request_done(Request *x) {
        grant_file_free(x->grants);
        grant_request_done(&x->req);
        grant_url_done(&x->url);
        free(x->in);
        free(x->line_error);
        free(x->body);
        secret_free(x->secret);
        upstream_response_done(&x->resp);
        free(x->message);
}

/* Sets the refusal (the first one wins) and returns -EPERM for "return refuse(...)". */
_printf_(3, 4) static int refuse(Request *x, GrantReason reason, const char *fmt, ...) {
        va_list ap;

        if (x->reason >= 0)
                return -EPERM;
        x->reason = reason;
        va_start(ap, fmt);
        if (vasprintf(&x->message, fmt, ap) < 0)
                x->message = NULL;
        va_end(ap);
        return -EPERM;
}

/* ---- the socket ---- */

static int send_all(int fd, const void *p, size_t n) {
        const uint8_t *b = p;

        while (n > 0) {
                ssize_t k = send(fd, b, n, MSG_NOSIGNAL);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                b += k;
                n -= (size_t) k;
        }
        return 0;
}

static bool past_deadline(const Conn *c) {
        return now_monotonic() > c->start_mono + REQUEST_DEADLINE_USEC;
}

/* Receives at most n bytes; 0 at the end of the stream. */
static ssize_t recv_some(const Conn *c, void *p, size_t n) {
        for (;;) {
                ssize_t k;

                if (past_deadline(c))
                        return -ETIMEDOUT;
                k = recv(c->fd, p, n, 0);
                if (k >= 0)
                        return k;
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return -ETIMEDOUT; /* SO_RCVTIMEO */
                return negative_errno();
        }
}

/* Keeps why the request line could not be received: the run is identified first, to log it. */
_printf_(2, 3) static int line_fail(Request *x, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&x->line_error, fmt, ap) < 0)
                x->line_error = NULL;
        va_end(ap);
        return -EBADMSG;
}

/* The request line, and the start of the body that came with it. */
static int read_line(Request *x) {
        char *nl = NULL;

        x->in = malloc(GRANT_REQUEST_LINE_MAX);
        if (!x->in)
                return line_fail(x, "out of memory");
        while (!nl) {
                ssize_t k;

                if (x->in_size == GRANT_REQUEST_LINE_MAX)
                        return line_fail(x, "the request line is longer than %d bytes", GRANT_REQUEST_LINE_MAX);
                k = recv_some(x->conn, x->in + x->in_size, GRANT_REQUEST_LINE_MAX - x->in_size);
                if (k == -ETIMEDOUT)
                        return line_fail(x, "the request line did not arrive in time");
                if (k < 0)
                        return line_fail(x, "cannot receive the request: %s", strerror((int) -k));
                if (k == 0)
                        return line_fail(x, "the request line ended without a newline");
                nl = memchr(x->in + x->in_size, '\n', (size_t) k);
                x->in_size += (size_t) k;
        }
        x->line_size = (size_t) (nl - x->in);
        return 0;
}

static int read_body(Request *x) {
        size_t want = x->req.body_bytes, have = x->in_size - x->line_size - 1;

        if (have > want)
                return refuse(x, GRANT_REASON_BAD_REQUEST, "more bytes came than body_bytes (%zu)", want);
        if (want == 0)
                return 0;
        x->body = malloc(want);
        if (!x->body)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        memcpy(x->body, x->in + x->line_size + 1, have);
        while (have < want) {
                ssize_t k = recv_some(x->conn, x->body + have, want - have);

                if (k == -ETIMEDOUT)
                        return refuse(x, GRANT_REASON_BAD_REQUEST, "the body did not arrive in time");
                if (k < 0)
                        return refuse(x, GRANT_REASON_BAD_REQUEST, "cannot receive the body: %s", strerror((int) -k));
                if (k == 0)
                        return refuse(x, GRANT_REASON_BAD_REQUEST, "the body ended after %zu of %zu bytes", have, want);
                have += (size_t) k;
        }
        return 0;
}

/* ---- who asks ---- */

static int pidfd_open_pid(pid_t pid) {
        long fd = syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? negative_errno() : (int) fd;
}

/* Its place in the unified hierarchy, the line grant_cgroup_from_proc() and grant_cgroup_matches() take;
 * NULL where it has none that counts. */
static const char *unified_place(const char *proc_text) {
        return cgroup_unified ? grant_cgroup_unified_line(proc_text) : proc_text;
}

/* The peer's /proc/PID/cgroup; -ESRCH if the process pinned at accept is gone: then the PID might be
 * another process's already, and what was read is not the peer's. */
static int peer_cgroup(const Conn *c, char **ret) {
        _cleanup_free_ char *text = NULL;
        char path[sizeof("/proc//cgroup") + 3 * sizeof(pid_t)];
        int r;

        if (c->pid <= 0 || c->pidfd < 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) c->pid);
        r = read_file_at(AT_FDCWD, path, PROC_CGROUP_MAX, &text, NULL);
        if (r < 0)
                return r;
        /* EPERM: alive, but not ours to signal */
        if (syscall(SYS_pidfd_send_signal, c->pidfd, 0, NULL, 0) < 0 && errno != EPERM)
                return -ESRCH;
        *ret = TAKE_PTR(text);
        return 0;
}


static int load_grant_file(Request *x) {
        _cleanup_free_ char *path = NULL, *text = NULL, *error = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t size;
        int r;

        if (asprintf(&path, SBX_GRANTS_DIR "/%s.json", x->run) < 0)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0 && errno == ENOENT)
                return refuse(x, GRANT_REASON_NO_RUN, "run %s has no broker grants (or has ended)", x->run);
        if (fd < 0 || fstat(fd, &st) < 0) {
                log_error_errno(negative_errno(), "Cannot open %s: %m", path);
                return refuse(x, GRANT_REASON_INTERNAL, "cannot read the run's grants");
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0077) != 0) {
                log_error("%s is not a regular file of root's only (mode 0600): ignored.", path);
                return refuse(x, GRANT_REASON_INTERNAL, "cannot read the run's grants");
        }
        r = read_fd_full(fd, GRANT_FILE_MAX, &text, &size); /* what was fstat()ed is what is read */
        if (r < 0) {
                log_error_errno(r, "Cannot read %s: %m", path);
                return refuse(x, GRANT_REASON_INTERNAL, "cannot read the run's grants");
        }
        r = grant_file_parse(text, size, path, &x->grants, &error);
        if (r == -ENOMEM)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (r < 0) {
                log_error("%s", strna(error));
                return refuse(x, GRANT_REASON_INTERNAL, "the run's grants are malformed");
        }
        if (!streq(x->grants->run, x->run)) {
                log_error("%s: \"run\" is not %s: ignored.", path, x->run);
                return refuse(x, GRANT_REASON_INTERNAL, "the run's grants are malformed");
        }
        return 0;
}

/* Identity, as described at the top. The request line is received in between, so that a process cannot
 * change places while it sends it. */
static int identify(Request *x) {
        _cleanup_free_ char *before = NULL, *after = NULL, *path = NULL, *dir = NULL;
        struct stat st;
        int r;

        r = peer_cgroup(x->conn, &before);
        if (r < 0) {
                log_debug_errno(r, "Cannot read the cgroup of PID %d: %m", (int) x->conn->pid);
                return refuse(x, GRANT_REASON_NO_RUN, "the broker cannot identify this process");
        }
        r = grant_cgroup_from_proc(unified_place(before), &path);
        if (r == -ENOMEM)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (r < 0 || grant_cgroup_run_id(path, x->run) < 0)
                return refuse(x, GRANT_REASON_NO_RUN, "this process is not in an sbx run");

        (void) read_line(x);

        r = peer_cgroup(x->conn, &after);
        if (r < 0 || !streq(before, after))
                return refuse(x, GRANT_REASON_NO_RUN, "this process left its run or ended");
        r = load_grant_file(x);
        if (r < 0)
                return r;
        if (!grant_cgroup_matches(unified_place(after), x->grants->cgroup))
                return refuse(x, GRANT_REASON_NO_RUN, "this process is not in run %s", x->run);
        if (asprintf(&dir, CGROUP_ROOT "%s", x->grants->cgroup) < 0)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return refuse(x, GRANT_REASON_NO_RUN, "run %s has ended", x->run);

        x->identified = true;
        if (x->line_error || !x->in)
                return refuse(x, GRANT_REASON_BAD_REQUEST, "%s", x->line_error ?: "out of memory");
        return 0;
}

/* ---- the request ---- */

static bool secret_usable(const Secret *s) {
        return s->size > 0 && !memchr(s->data, '\r', s->size) && !memchr(s->data, '\n', s->size) &&
               !memchr(s->data, 0, s->size);
}

/* "Header: value_prefix+secret", NUL-terminated, in locked memory. */
static int secret_header(const Grant *g, const Secret *secret, Secret **ret) {
        _cleanup_(secret_freep) Secret *h = NULL;
        size_t n = strlen(g->header) + 2 + strlen(g->value_prefix) + secret->size + 1;
        int r;

        r = secret_new(n, &h);
        if (r < 0)
                return r;
        r = secret_append(h, g->header, strlen(g->header));
        r = r ?: secret_append(h, ": ", 2);
        r = r ?: secret_append(h, g->value_prefix, strlen(g->value_prefix));
        r = r ?: secret_append(h, secret->data, secret->size);
        r = r ?: secret_append(h, "", 1);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(h);
        return 0;
}

static int check_request(Request *x) {
        _cleanup_free_ char *error = NULL, *why = NULL;
        const Grant *g;
        int r;

        r = grant_request_parse(x->in, x->line_size, &x->req, &error);
        if (r == -ENOMEM)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (r < 0)
                return refuse(x, GRANT_REASON_BAD_REQUEST, "%s", strna(error));
        x->op.method = grant_method_from_string(x->req.method);

        g = x->grant = grant_file_find(x->grants, x->req.grant);
        if (!g)
                return refuse(x, GRANT_REASON_NO_GRANT, "run %s has no grant named '%s'", x->run,
                              grant_name_is_valid(x->req.grant) ? x->req.grant : "(invalid name)");
        x->op.grant = g->name;
        x->op.host = g->url_prefix.host;
        x->op.port = g->url_prefix.port;
        x->op.path_prefix = g->url_prefix.path;

        if (x->op.method < 0)
                return refuse(x, GRANT_REASON_METHOD, "unknown method (expected GET, HEAD, POST, PUT, PATCH or DELETE)");
        if (!grant_allows_method(g, x->op.method))
                return refuse(x, GRANT_REASON_METHOD, "grant '%s' does not allow %s", g->name, x->req.method);

        r = grant_url_match(g, x->req.url, &x->url, &why);
        if (r == -ENOMEM)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (r < 0)
                return refuse(x, GRANT_REASON_URL, "URL refused by grant '%s': %s", g->name, strna(why));

        for (size_t i = 0; x->req.headers && x->req.headers[i]; i += 2) {
                const char *name = x->req.headers[i];

                if (!grant_header_name_is_valid(name))
                        return refuse(x, GRANT_REASON_HEADER, "a header name is not an HTTP token");
                if (!grant_request_header_allowed(g, name, x->req.headers[i + 1]))
                        return refuse(x, GRANT_REASON_HEADER, "header '%s' is not allowed, or its value is not "
                                      "printable ASCII", name);
        }

        x->op.request_bytes = x->req.body_bytes;
        if (x->req.body_bytes > g->max_body)
                return refuse(x, GRANT_REASON_TOO_LARGE, "the body (%" PRIu64 " bytes) is larger than the grant's "
                              "max_body (%" PRIu64 " bytes)", x->req.body_bytes, g->max_body);
        if (x->req.body_bytes > 0 && (x->op.method == GRANT_METHOD_GET || x->op.method == GRANT_METHOD_HEAD))
                return refuse(x, GRANT_REASON_BAD_REQUEST, "%s takes no body", x->req.method);
        return read_body(x);
}

static int load_secret(Request *x) {
        const char *name = x->grant->credential;
        int r;

        r = secret_load(SECRETS_DIR, x->grants->tenant, name, &x->secret);
        if (r == -ENOENT)
                return refuse(x, GRANT_REASON_NO_SECRET, "the run's caller has no secret named '%s'", name);
        if (r == -ENOMEM || r == -EPERM || r == -EAGAIN) {
                log_error_errno(r, "Cannot keep secret '%s' of tenant %s in locked memory: %m", name, x->grants->tenant);
                return refuse(x, GRANT_REASON_INTERNAL, "the broker cannot hold the secret in locked memory");
        }
        if (r < 0) {
                log_warning_errno(r, "Cannot decrypt secret '%s' of tenant %s: %m", name, x->grants->tenant);
                return refuse(x, GRANT_REASON_NO_SECRET, "secret '%s' cannot be decrypted", name);
        }
        if (!secret_usable(x->secret))
                return refuse(x, GRANT_REASON_NO_SECRET, "secret '%s' is not usable in a header: it is empty or holds CR, "
                              "LF or NUL (was it stored with a final newline?)", name);
        return 0;
}

static int perform(Request *x) {
        _cleanup_(secret_freep) Secret *header = NULL;
        _cleanup_free_ char *url = NULL, *error = NULL;
        GrantReason reason;
        int r;

        x->performing = true;
        r = grant_url_format(&x->url, &url);
        if (r < 0)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        r = secret_header(x->grant, x->secret, &header);
        if (r < 0)
                return refuse(x, GRANT_REASON_INTERNAL, "the broker cannot hold the secret in locked memory");

        UpstreamRequest up = {
                .url = url,
                .scheme = x->url.scheme,
                .method = x->op.method,
                .headers = x->req.headers,
                .secret_header = (const char *) header->data,
                .body = x->body,
                .body_size = x->req.body_bytes,
                .max_body = x->grant->max_body,
                .ca_file = arg_conf.ca_file,
                .secret = x->secret->data,
                .secret_len = x->secret->size,
                .pool_key = x->grants->tenant,
        };
        r = upstream_perform(&up, &x->resp, &reason, &error);
        if (r < 0)
                return refuse(x, reason, "%s", strna(error));
        x->op.status = x->resp.status;
        x->op.response_bytes = x->resp.body_size;

        r = grant_redact(x->resp.body, x->resp.body_size, x->secret->data, x->secret->size);
        if (r < 0)
                return refuse(x, GRANT_REASON_INTERNAL, "out of memory");
        if (r > 0)
                log_notice("Run %s, grant %s: the response held the secret %d time(s), overwritten.", x->run,
                           x->grant->name, r);
        return 0;
}

/* ---- the outcome ---- */

/* The lines of the run's operations log (sbxd makes it empty with the grant file and removes it when the
 * run ends: the broker never creates it, so a request that ends after its run leaves nothing behind);
 * -ENOENT: no log (the run has ended). Under ops_lock. */
static int ops_open(const char *run, int *ret_fd, unsigned *ret_lines) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        unsigned lines = 0;
        struct stat st;
        char buf[16384];
        off_t off = 0;
        ssize_t k;

        if (asprintf(&path, SBX_GRANTS_DIR "/%s.ops", run) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -EBADFD;
        while (lines < GRANT_OPS_LINES_MAX && (k = pread(fd, buf, sizeof(buf), off)) > 0) {
                for (ssize_t i = 0; i < k; i++)
                        lines += buf[i] == '\n';
                off += k;
        }
        *ret_fd = TAKE_FD(fd);
        *ret_lines = lines;
        return 0;
}

/* Whether the run may still make requests: each one is a line of its log, and a run's log has at most
 * GRANT_OPS_LINES_MAX (so that the record lists them all). */
static int ops_room(const char *run) {
        _cleanup_close_ int fd = -EBADF;
        unsigned lines = 0;
        int r;

        pthread_mutex_lock(&ops_lock);
        r = ops_open(run, &fd, &lines);
        pthread_mutex_unlock(&ops_lock);
        if (r < 0)
                return r;
        return lines < GRANT_OPS_LINES_MAX - 1;
}

static void ops_append(const Request *x) {
        _cleanup_free_ char *line = NULL;
        _cleanup_close_ int fd = -EBADF;
        unsigned lines = 0;
        size_t n;
        ssize_t k;
        int r;

        if (grant_op_format(&x->op, &line, &n) < 0) {
                log_oom();
                return;
        }
        pthread_mutex_lock(&ops_lock);
        r = ops_open(x->run, &fd, &lines);
        if (r == -ENOENT)
                log_debug("Run %s has ended: its request is not logged.", x->run);
        else if (r < 0)
                log_warning_errno(r, "Cannot open the operations log of run %s, not logging the request: %m", x->run);
        else if (lines >= GRANT_OPS_LINES_MAX)
                log_debug("The operations log of run %s has %d lines: not logging the request.", x->run,
                          GRANT_OPS_LINES_MAX);
        else {
                k = write(fd, line, n);
                if (k != (ssize_t) n)
                        log_warning_errno(k < 0 ? negative_errno() : -EIO,
                                          "Cannot append to the operations log of run %s: %m", x->run);
        }
        pthread_mutex_unlock(&ops_lock);
}

static void reply(Request *x) {
        _cleanup_free_ char *line = NULL;
        size_t n;
        int r;

        if (x->reason >= 0)
                r = grant_error_format(x->reason, strna(x->message), &line, &n);
        else
                r = grant_reply_format(x->resp.status, x->resp.headers, x->resp.body_size, &line, &n);
        if (r >= 0)
                r = send_all(x->conn->fd, line, n);
        if (r >= 0 && x->reason < 0 && x->resp.body_size > 0)
                r = send_all(x->conn->fd, x->resp.body, x->resp.body_size);
        if (r < 0)
                log_debug_errno(r, "Cannot send the reply to PID %d: %m", (int) x->conn->pid);
}

/* A run's requests end where its log is full (the last line says so): none goes unrecorded. */
static int check_room(Request *x) {
        int r = ops_room(x->run);

        if (r > 0)
                return 0;
        if (r == -ENOENT)
                return refuse(x, GRANT_REASON_NO_RUN, "run %s has ended", x->run);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the operations log of run %s: %m", x->run);
                return refuse(x, GRANT_REASON_INTERNAL, "cannot log the request");
        }
        return refuse(x, GRANT_REASON_INTERNAL, "run %s has made the most brokered requests a run may (%d)", x->run,
                      GRANT_OPS_LINES_MAX - 1);
}

static void serve(Conn *c) {
        _cleanup_(request_done) Request x = {
                .conn = c,
                .reason = _GRANT_REASON_INVALID,
                .op = {
                        .method = _GRANT_METHOD_INVALID,
                        .reason = _GRANT_REASON_INVALID,
                        .status = -1,
                        .start_usec = c->start,
                },
        };

        if (identify(&x) >= 0 && check_room(&x) >= 0 && check_request(&x) >= 0 && load_secret(&x) >= 0)
                (void) perform(&x);
        reply(&x);
        /* the secret is not needed anymore */
        x.secret = secret_free(x.secret);

        if (!x.identified) {
                log_info("Refused a request of PID %d: %s", (int) c->pid, strna(x.message));
                return;
        }
        x.op.reason = x.reason;
        /* failed: allowed, but not performed (or the response was refused); refused: a check said no */
        x.op.verdict = x.reason < 0 ? GRANT_VERDICT_DONE :
                       x.performing || x.reason == GRANT_REASON_INTERNAL ? GRANT_VERDICT_FAILED : GRANT_VERDICT_REFUSED;
        if (getrandom(&x.op.id, sizeof(x.op.id), 0) != sizeof(x.op.id))
                x.op.id = now_monotonic() ^ ((uint64_t) c->pid << 32);
        x.op.duration_usec = now_monotonic() - c->start_mono;
        ops_append(&x);
        if (x.reason < 0)
                log_info("Run %s, grant %s: %s %s:%u: status %d.", x.run, x.op.grant, grant_method_to_string(x.op.method),
                         x.op.host, (unsigned) x.op.port, x.op.status);
        else
                log_info("Run %s, grant %s: %s (%s): %s", x.run, strna(x.op.grant),
                         grant_verdict_to_string(x.op.verdict), grant_reason_to_string(x.reason), strna(x.message));
}

static void *connection_thread(void *userdata) {
        _cleanup_(conn_freep) Conn *c = userdata;

        serve(c);
        atomic_fetch_sub(&n_connections, 1);
        return NULL;
}

/* A refusal without a thread: the peer gets the line if its socket takes it at once. */
static void reply_now(int fd, GrantReason reason, const char *message) {
        _cleanup_free_ char *line = NULL;
        size_t n;

        if (grant_error_format(reason, message, &line, &n) >= 0)
                (void) send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void on_connection(int fd) {
        _cleanup_(conn_freep) Conn *c = NULL;
        struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_SEC };
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        pthread_attr_t attr;
        pthread_t t;
        int r;

        c = calloc(1, sizeof(Conn));
        if (!c) {
                reply_now(fd, GRANT_REASON_INTERNAL, "out of memory");
                safe_close(fd);
                return;
        }
        *c = (Conn) { .fd = fd, .pidfd = -EBADF, .start = now_realtime(), .start_mono = now_monotonic() };
        /* the peer first, before it can go away and its PID be reused */
        len = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) < 0)
                c->pidfd = -EBADF;
        len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) >= 0 && cred.pid > 0) {
                c->pid = cred.pid;
                if (c->pidfd < 0)
                        c->pidfd = pidfd_open_pid(cred.pid);
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

        if (atomic_fetch_add(&n_connections, 1) >= CONNECTIONS_MAX) {
                atomic_fetch_sub(&n_connections, 1);
                reply_now(fd, GRANT_REASON_INTERNAL, "busy: too many requests at once, try again");
                return;
        }
        r = pthread_attr_init(&attr);
        if (r == 0) {
                r = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                r = r ?: pthread_create(&t, &attr, connection_thread, c);
                (void) pthread_attr_destroy(&attr);
        }
        if (r != 0) {
                atomic_fetch_sub(&n_connections, 1);
                log_error_errno(-r, "Failed to start a thread for a request: %m");
                reply_now(fd, GRANT_REASON_INTERNAL, "busy: cannot serve the request now");
                return;
        }
        TAKE_PTR(c);
}

/* ---- the daemon ---- */

static int load_config(void) {
        _cleanup_free_ char *text = NULL, *error = NULL;
        unsigned line = 0;
        int r;

        r = read_file_at(AT_FDCWD, arg_config, 64 * 1024, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", arg_config);
        r = broker_conf_parse(text, &arg_conf, &line, &error);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "%s:%u: %s", arg_config, line, strna(error));
        if (arg_conf.ca_file && access(arg_conf.ca_file, R_OK) < 0)
                return log_error_errno(negative_errno(), "%s: ca_file %s: %m", arg_config, arg_conf.ca_file);
        return 0;
}

static int listen_socket(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int n;

        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "Failed to get the sockets passed by systemd: %m");
        if (n > 1)
                return log_error_errno(-EINVAL, "Expected one socket from systemd, got %d.", n);
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return log_error_errno(-EINVAL, "The socket passed by systemd is not a listening unix stream socket.");
                return SD_LISTEN_FDS_START;
        }
        if (!arg_listen)
                return log_error_errno(-EINVAL, "No socket from systemd (sbx-broker.socket), and no --listen PATH.");
        if (strlen(arg_listen) >= sizeof(sa.sun_path))
                return log_error_errno(-ENAMETOOLONG, "--listen: path too long: %s", arg_listen);
        strcpy(sa.sun_path, arg_listen);
        if (lstat(arg_listen, &st) >= 0 && S_ISSOCK(st.st_mode))
                (void) unlink(arg_listen);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Failed to create a socket: %m");
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return log_error_errno(negative_errno(), "Failed to bind %s: %m", arg_listen);
        if (chmod(arg_listen, 0666) < 0)
                return log_error_errno(negative_errno(), "Failed to make %s accessible: %m", arg_listen);
        if (listen(fd, SOMAXCONN) < 0)
                return log_error_errno(negative_errno(), "Failed to listen on %s: %m", arg_listen);
        return TAKE_FD(fd);
}

static void help(void) {
        printf("sbx-broker [--listen PATH] [--config PATH]\n\n"
               "Performs HTTP(S) requests of sbx runs with the secrets their grants name.\n\n"
               "  --listen PATH  without socket activation: listen on PATH (mode 0666)\n"
               "  --config PATH  instead of " BROKER_CONF_PATH "\n"
               "  --version      show the version\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_LISTEN = 0x100, ARG_CONFIG, ARG_VERSION };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "listen", required_argument, NULL, ARG_LISTEN },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_LISTEN:
                        arg_listen = optarg;
                        break;
                case ARG_CONFIG:
                        arg_config = optarg;
                        break;
                case ARG_VERSION:
                        printf("sbx-broker %s\n", PACKAGE_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_close_ int fd = -EBADF;
        struct statfs sfs;
        int r;

        /* no core dumps, no ptrace by other root processes without CAP_SYS_PTRACE: it holds secrets */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) setrlimit(RLIMIT_CORE, &(struct rlimit) {});
        log_set_prefix("sbx-broker");
        log_open();

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        /* libcurl must not log TLS keys, whatever the environment says */
        (void) unsetenv("SSLKEYLOGFILE");
        (void) signal(SIGPIPE, SIG_IGN);

        if (load_config() < 0)
                return 1;
        cgroup_unified = statfs(CGROUP_ROOT, &sfs) >= 0 && (uint64_t) sfs.f_type == CGROUP2_SUPER_MAGIC;
        if (upstream_global_init() < 0)
                return 1;
        fd = listen_socket();
        if (fd < 0)
                return 1;
        log_info("Serving requests%s%s.", arg_conf.ca_file ? " trusting the CAs of " : "", strempty(arg_conf.ca_file));

        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

                if (cfd >= 0) {
                        on_connection(cfd);
                        continue;
                }
                switch (errno) {
                case EINTR:
                case ECONNABORTED:
                case EPROTO:
                        break;
                case EMFILE:
                case ENFILE:
                case ENOBUFS:
                case ENOMEM:
                        log_warning_errno(negative_errno(), "Cannot accept a connection now: %m");
                        (void) usleep(100 * 1000);
                        break;
                default:
                        return log_error_errno(negative_errno(), "Failed to accept a connection: %m"), 1;
                }
        }
}
