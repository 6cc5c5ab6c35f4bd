/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbxd's own socket (direct.h): its listener, and one sd-bus server connection per peer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-id128.h>

#include "direct.h"
#include "log.h"
#include "macro.h"
#include "run-core.h"
#include "run.h"
#include "sandbox.h"
#include "util.h"

typedef struct DirectPeer {
        DirectServer *server;
        sd_bus *bus;
        uid_t uid;
        char name[32];                 /* "direct.N": the client's name in the log */
        sd_event_source *io, *more;    /* its socket; another turn of peer_process() */
        sd_event_source *deadline;     /* the handshake's (DIRECT_HANDSHAKE_USEC) */
        struct DirectPeer *next, *prev;
} DirectPeer;

/* sd_bus_process() steps per turn of a connection (then another turn, after the loop's other sources) */
#define PEER_STEPS 64U

struct DirectServer {
        Manager *manager;
        char *path;
        int fd;
        sd_event_source *source;
        sd_id128_t id;                 /* the server id sd-bus gives its peers in the handshake */
        DirectPeer *peers;
        unsigned n_peers;
        uint64_t n_accepted;
        DirectInstall install;         /* the methods and signals a connection gets */
};

static unsigned peers_of_uid(DirectServer *s, uid_t uid) {
        unsigned n = 0;

        for (DirectPeer *p = s->peers; p; p = p->next)
                n += p->uid == uid;
        return n;
}

/* Closes the connection; its runs lose their client (and stop), and its commands in sandboxes get SIGHUP,
 * only when it ended by itself (ended). */
static void peer_free(DirectPeer *p, bool ended) {
        DirectServer *s = p->server;

        for (Run *run = s->manager->runs, *next; run; run = next) {
                next = run->next; /* run_stop() does not free it, but stay on the safe side */
                if (run->sandbox)
                        sandbox_client_bus_gone(run->sandbox, p->bus, ended);
                if (ended && run->client_bus == p->bus)
                        run_client_gone(run);
        }
        if (p->prev)
                p->prev->next = p->next;
        else
                s->peers = p->next;
        if (p->next)
                p->next->prev = p->prev;
        s->n_peers--;
        sd_event_source_disable_unref(p->io);
        sd_event_source_disable_unref(p->more);
        sd_event_source_disable_unref(p->deadline);
        /* not flushed: a flush would wait for a handshake the peer may never finish */
        sd_bus_close_unref(p->bus);
        free(p);
}

/* The connection is driven here, not by sd_bus_attach_event(): that reads a peer's bytes only on POLLIN,
 * and a message that came in the same read as the handshake's BEGIN would stay in sd-bus's buffer until
 * the peer wrote again (systemd 252), which a client waiting for its reply never does. So every step
 * sd_bus_process() has is taken, PEER_STEPS a turn. */
static int peer_process(DirectPeer *p) {
        int r = 0;

        for (unsigned i = 0; i < PEER_STEPS; i++) {
                r = sd_bus_process(p->bus, NULL);
                if (r <= 0)
                        break;
        }
        /* closed by the peer (or for breaking the protocol): sd-bus has closed its end too */
        if (r < 0 || sd_bus_is_open(p->bus) <= 0) {
                log_debug("Client %s (uid %u) disconnected.", p->name, (unsigned) p->uid);
                peer_free(p, true);
                return 0;
        }
        if (r > 0)
                (void) sd_event_source_set_enabled(p->more, SD_EVENT_ONESHOT);
        return 0;
}

static int on_peer_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        return peer_process(userdata);
}

static int on_peer_more(sd_event_source *src, void *userdata) {
        return peer_process(userdata);
}

/* The handshake's deadline: a connection still in it is closed (it has no runs: it has made no call). */
static int on_peer_deadline(sd_event_source *src, uint64_t usec, void *userdata) {
        DirectPeer *p = userdata;

        if (sd_bus_is_ready(p->bus) > 0)
                return 0;
        log_debug("Client %s (uid %u) did not finish its handshake within %u s; closed.", p->name,
                  (unsigned) p->uid, (unsigned) (DIRECT_HANDSHAKE_USEC / USEC_PER_SEC));
        peer_free(p, true);
        return 0;
}

/* Before each wait: POLLOUT too while sd-bus has something queued for the peer. */
static int on_peer_prepare(sd_event_source *src, void *userdata) {
        DirectPeer *p = userdata;
        int events = sd_bus_get_events(p->bus);

        if (events >= 0)
                (void) sd_event_source_set_io_events(src, (uint32_t) events);
        return 0;
}

static int peer_start(DirectServer *s, int fd, uid_t uid) {
        _cleanup_close_ int owned = fd;
        DirectPeer *p = calloc(1, sizeof(DirectPeer));
        int r;

        if (!p)
                return -ENOMEM;
        p->server = s;
        p->uid = uid;
        (void) snprintf(p->name, sizeof p->name, "direct.%" PRIu64, ++s->n_accepted);
        r = sd_bus_new(&p->bus);
        if (r >= 0)
                r = sd_bus_set_description(p->bus, p->name);
        if (r >= 0)
                r = sd_bus_set_fd(p->bus, owned, owned);
        if (r >= 0) {
                owned = -EBADF; /* the bus's now */
                /* the peer's messages are believed only for what sbxd checks itself (its uid: SO_PEERCRED) */
                r = sd_bus_set_trusted(p->bus, false);
        }
        if (r >= 0)
                r = sd_bus_set_server(p->bus, true, s->id);
        if (r >= 0)
                r = sd_bus_negotiate_fds(p->bus, true);
        if (r >= 0)
                r = s->install(s->manager, p->bus);
        if (r >= 0)
                r = sd_bus_start(p->bus);
        if (r >= 0)
                r = sd_event_add_io(s->manager->event, &p->io, sd_bus_get_fd(p->bus), EPOLLIN, on_peer_io, p);
        if (r >= 0)
                r = sd_event_source_set_prepare(p->io, on_peer_prepare);
        if (r >= 0)
                r = sd_event_add_defer(s->manager->event, &p->more, on_peer_more, p);
        if (r >= 0)
                r = sd_event_source_set_enabled(p->more, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time_relative(s->manager->event, &p->deadline, CLOCK_MONOTONIC,
                                               DIRECT_HANDSHAKE_USEC, 0, on_peer_deadline, p);
        if (r < 0) {
                sd_event_source_disable_unref(p->io);
                sd_event_source_disable_unref(p->more);
                sd_event_source_disable_unref(p->deadline);
                sd_bus_close_unref(p->bus);
                free(p);
                return r;
        }
        p->next = s->peers;
        if (p->next)
                p->next->prev = p;
        s->peers = p;
        s->n_peers++;
        return 0;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        DirectServer *s = userdata;
        struct ucred cred = {};
        socklen_t len = sizeof cred;
        int c, r;

        c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(errno, "Failed to accept a connection on %s, ignoring: %m", s->path);
                return 0;
        }
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof cred) {
                log_warning_errno(errno, "Failed to read the credentials of a connection on %s; closed: %m",
                                  s->path);
                safe_close(c);
                return 0;
        }
        /* too many connections (of this uid): this one is closed before its handshake, and its client takes
         * the system bus, whose daemon has limits of its own. Never left waiting in the backlog: a client
         * would wait there for sd-bus's handshake timeout. */
        if (s->n_peers >= DIRECT_PEERS_MAX || peers_of_uid(s, cred.uid) >= DIRECT_PEERS_PER_UID_MAX) {
                log_debug("%u connections on %s (%u of uid %u): one more closed.", s->n_peers, s->path,
                          peers_of_uid(s, cred.uid), (unsigned) cred.uid);
                safe_close(c);
                return 0;
        }
        r = peer_start(s, c, cred.uid);
        if (r < 0)
                log_warning_errno(r, "Failed to set up a connection on %s; closed: %m", s->path);
        return 0;
}

int direct_server_open(Manager *m, const char *path, DirectInstall install, DirectServer **ret) {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } addr = { .un.sun_family = AF_UNIX };
        _cleanup_free_ char *dir = NULL;
        DirectServer *s;
        struct stat st;
        int r;

        if (strlen(path) >= sizeof addr.un.sun_path || !(dir = strdup(path)))
                return -EINVAL;
        strcpy(addr.un.sun_path, path);
        *strrchr(dir, '/') = 0;
        /* the directory is root's (RuntimeDirectory= makes it 0755): nobody else can put a socket there,
         * and clients believe what answers on it */
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022)) {
                log_error("%s is not a directory of root's that only root may write to.", dir);
                return -EPERM;
        }
        s = calloc(1, sizeof(DirectServer));
        if (!s)
                return -ENOMEM;
        s->manager = m;
        s->install = install;
        s->fd = -EBADF;
        s->path = strdup(path);
        r = s->path ? sd_id128_randomize(&s->id) : -ENOMEM;
        if (r >= 0) {
                s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                r = s->fd < 0 ? -errno : 0;
        }
        /* an earlier sbxd's socket (it left without removing it) */
        if (r >= 0 && unlink(path) < 0 && errno != ENOENT)
                r = -errno;
        if (r >= 0 && bind(s->fd, &addr.sa, sizeof addr.un) < 0)
                r = -errno;
        /* anyone may connect, as to the system bus; sbxd scopes each call to the caller's uid */
        if (r >= 0 && chmod(path, 0666) < 0)
                r = -errno;
        if (r >= 0 && listen(s->fd, SOMAXCONN) < 0)
                r = -errno;
        if (r >= 0)
                r = sd_event_add_io(m->event, &s->source, s->fd, EPOLLIN, on_accept, s);
        if (r < 0) {
                direct_server_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

DirectServer *direct_server_free(DirectServer *s) {
        if (!s)
                return NULL;
        /* removed first: a client from now on finds none and takes the system bus */
        if (s->path && s->fd >= 0)
                (void) unlink(s->path);
        s->source = sd_event_source_disable_unref(s->source);
        safe_close(s->fd);
        while (s->peers)
                peer_free(s->peers, false);
        free(s->path);
        free(s);
        return NULL;
}
