/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The server's loop: stdin's lines become messages (capped, bad ones answered with their JSON-RPC error),
 * the methods are answered, tools/call is handed to mcp-calls.c; stdout carries only whole messages; the
 * end of stdin (or SIGTERM, SIGINT) stops what runs and removes the sandboxes before the loop ends. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "mcp-calls.h"
#include "mcp-server.h"
#include "util.h"

#define SHUTDOWN_USEC (30 * USEC_PER_SEC)      /* the longest the server waits for what it stopped */
#define READ_CHUNK (64 * 1024)

void server_send(Server *s, json_object *m) {
        _cleanup_free_ char *line = NULL;
        size_t len;

        if (!m)
                return;
        if (!s->stdout_gone && mcp_message_format(m, &line, &len) >= 0 && loop_write(STDOUT_FILENO, line, len) < 0) {
                /* the client is gone: what runs is stopped as at the end of stdin */
                s->stdout_gone = true;
                fputs("sbx-mcp: the client closed stdout; stopping\n", stderr);
                if (!s->closing) {
                        s->closing = true;
                        calls_shutdown(s);
                }
        }
        json_object_put(m);
}

void server_log(Server *s, McpLogLevel level, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        json_object *p;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        if (!text)
                return;
        if (s->level < 0 || s->stdout_gone) {
                fprintf(stderr, "sbx-mcp: %s\n", text);
                return;
        }
        if (level < s->level)
                return;
        p = json_object_new_object();
        if (p && json_object_object_add(p, "level", json_object_new_string(mcp_log_level_to_string(level))) >= 0 &&
            json_object_object_add(p, "logger", json_object_new_string("sbx-mcp")) >= 0 &&
            json_object_object_add(p, "data", json_object_new_string(text)) >= 0) {
                server_send(s, mcp_notification_new("notifications/message", p));
                return;
        }
        json_object_put(p);
}

void server_check_done(Server *s) {
        if (s->closing && !s->calls && s->removals == 0)
                (void) sd_event_exit(s->event, 0);
}

/* ---- methods ----------------------------------------------------------------------------------------- */

static void answer(Server *s, json_object *id, json_object *result) {
        server_send(s, result ? mcp_response_new(id, result) : mcp_error_new(id, MCP_INTERNAL_ERROR, "out of memory"));
}

static void handle_request(Server *s, const McpMessage *m) {
        json_object *result = NULL, *v;
        _cleanup_free_ char *text = NULL;
        McpLogLevel level;
        int r;

        switch (m->known) {
        case MCP_METHOD_INITIALIZE:
                r = mcp_initialize_result(m->params, PACKAGE_VERSION, &result);
                if (r == -EINVAL)
                        return server_send(s, mcp_error_new(m->id, MCP_INVALID_PARAMS,
                                                            "initialize: params.protocolVersion must be a string"));
                return answer(s, m->id, result);
        case MCP_METHOD_PING:
                return answer(s, m->id, json_object_new_object());
        case MCP_METHOD_TOOLS_LIST:
                (void) mcp_tools_list(&result);
                return answer(s, m->id, result);
        case MCP_METHOD_TOOLS_CALL:
                return call_start(s, m->id, m->params);
        case MCP_METHOD_SET_LEVEL:
                level = m->params && json_object_object_get_ex(m->params, "level", &v) ?
                        mcp_log_level_from_string(json_object_get_string(v)) : _MCP_LOG_INVALID;
                if (level < 0)
                        return server_send(s, mcp_error_new(m->id, MCP_INVALID_PARAMS, "logging/setLevel: params.level "
                                                            "must be one of debug, info, notice, warning, error, "
                                                            "critical, alert, emergency"));
                s->level = level;
                return answer(s, m->id, json_object_new_object());
        case MCP_METHOD_INITIALIZED:
        case MCP_METHOD_CANCELLED:
        case _MCP_METHOD_MAX:
        case _MCP_METHOD_INVALID:
                break;
        }
        if (asprintf(&text, "Method not found: %s", m->method) < 0)
                text = NULL;
        server_send(s, mcp_error_new(m->id, MCP_METHOD_NOT_FOUND, text ?: "Method not found"));
}

static void handle_line(Server *s, const char *line, size_t len) {
        McpMessage m = {};
        McpDecodeError e = {};
        json_object *v;
        int r;

        r = mcp_message_decode(line, len, &m, &e);
        if (r == -ENODATA)
                return;
        if (r == -ENOMEM)
                return server_log(s, MCP_LOG_ERROR, "out of memory reading a message");
        if (r < 0) {
                server_send(s, mcp_error_new(e.id, e.code, e.message));
                mcp_decode_error_done(&e);
                return;
        }
        if (m.kind == MCP_KIND_REQUEST)
                handle_request(s, &m);
        else if (m.kind == MCP_KIND_NOTIFICATION && m.known == MCP_METHOD_CANCELLED && m.params &&
                 json_object_object_get_ex(m.params, "requestId", &v))
                call_cancel_id(s, v);
        /* other notifications (initialized, unknown ones) and responses: nothing to answer */
        mcp_message_done(&m);
}

/* ---- stdin ------------------------------------------------------------------------------------------- */

static void server_close(Server *s, const char *why) {
        if (s->closing)
                return;
        s->closing = true;
        server_log(s, MCP_LOG_INFO, "%s: stopping the calls in flight and removing this server's sandboxes", why);
        calls_shutdown(s);
        (void) sd_event_add_time_relative(s->event, &s->deadline_src, CLOCK_MONOTONIC, SHUTDOWN_USEC, 0, NULL, NULL);
        server_check_done(s);
}

/* The whole lines in the buffer handled; what is left over the cap answered and dropped up to its newline */
static void handle_buffer(Server *s) {
        size_t start = 0;

        for (;;) {
                char *nl = memchr(s->buf + start, '\n', s->len - start);
                size_t n;

                if (!nl)
                        break;
                n = (size_t) (nl - (s->buf + start));
                if (s->discarding)
                        s->discarding = false;
                else if (n > MCP_MESSAGE_MAX)
                        server_send(s, mcp_error_new(NULL, MCP_INVALID_REQUEST, "Invalid Request: a message is at most 4 MiB"));
                else
                        handle_line(s, s->buf + start, n);
                start += n + 1;
        }
        memmove(s->buf, s->buf + start, s->len - start);
        s->len -= start;
        if (s->len > MCP_MESSAGE_MAX) {
                if (!s->discarding)
                        server_send(s, mcp_error_new(NULL, MCP_INVALID_REQUEST, "Invalid Request: a message is at most 4 MiB"));
                s->discarding = true;
                s->len = 0;
        }
}

/* One read of stdin: 1 while there is more, 0 at its end */
static int read_stdin(Server *s) {
        char *p = realloc(s->buf, s->len + READ_CHUNK + 1);
        ssize_t n;

        if (!p)
                return -ENOMEM;
        s->buf = p;
        n = read(STDIN_FILENO, s->buf + s->len, READ_CHUNK);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 1;
        if (n <= 0) {
                /* a last line without its newline is still a message */
                if (s->len > 0 && !s->discarding)
                        handle_line(s, s->buf, s->len);
                s->len = 0;
                return 0;
        }
        s->len += (size_t) n;
        handle_buffer(s);
        return 1;
}

static int on_stdin(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Server *s = userdata;

        if (read_stdin(s) <= 0) {
                s->stdin_src = sd_event_source_disable_unref(s->stdin_src);
                server_close(s, "stdin ended");
        }
        return 0;
}

/* stdin a regular file (epoll takes none): read on each turn of the loop */
static int on_stdin_file(sd_event_source *src, void *userdata) {
        return on_stdin(src, STDIN_FILENO, EPOLLIN, userdata);
}

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        Server *s = userdata;

        s->stdin_src = sd_event_source_disable_unref(s->stdin_src);
        server_close(s, si->ssi_signo == SIGTERM ? "SIGTERM" : si->ssi_signo == SIGINT ? "SIGINT" : "SIGHUP");
        return 0;
}

int mcp_server_run(const McpConfig *cfg) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        Server s = { .cfg = cfg, .level = _MCP_LOG_INVALID };
        sigset_t mask;
        int r;

        /* a client that went away is seen as EPIPE on stdout, not as a signal */
        (void) signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        r = sd_event_new(&event);
        if (r < 0)
                return r;
        s.event = event;
        r = sd_event_add_io(event, &s.stdin_src, STDIN_FILENO, EPOLLIN, on_stdin, &s);
        if (r == -EPERM) {
                r = sd_event_add_defer(event, &s.stdin_src, on_stdin_file, &s);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s.stdin_src, SD_EVENT_ON);
        }
        for (int sig = SIGHUP; r >= 0 && sig <= SIGTERM; sig++)
                if (sigismember(&mask, sig))
                        r = sd_event_add_signal(event, NULL, sig, on_signal, &s);
        if (r >= 0)
                r = sd_event_loop(event);
        calls_free_all(&s);
        sd_event_source_disable_unref(s.stdin_src);
        sd_event_source_disable_unref(s.deadline_src);
        s.bus = sd_bus_flush_close_unref(s.bus);
        free(s.daemon);
        free(s.buf);
        return r;
}
