/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbx-mcp's tool calls in flight: each its own state on the event loop (its bus call, its pipes, its timers),
 * answered when its command has ended and its output is read; cancellation, progress, and the server's
 * sandboxes. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-error.h"
#include "client-lines.h"
#include "fileio.h"
#include "mcp-bus.h"
#include "mcp-calls.h"
#include "record-export.h"
#include "util.h"

#define PROGRESS_INTERVAL_USEC (2 * USEC_PER_SEC)
#define DRAIN_USEC (2 * USEC_PER_SEC)            /* output still open after the end: read this long, then cut */
#define CANCEL_STEP_USEC (5 * USEC_PER_SEC)      /* SIGTERM, then SIGHUP, then the answer without waiting more */
#define REMOVE_POLL_USEC (200 * USEC_PER_MSEC)
#define REMOVE_POLLS 150                         /* 30 s */
#define FILE_TOOL_TIMEOUT_USEC (60 * USEC_PER_SEC)
#define READ_HEADER 24                           /* read_file: the size's line before the content */

static void call_free(Call *c) {
        Server *s = c->server;

        if (c->prev)
                c->prev->next = c->next;
        else if (s->calls == c)
                s->calls = c->next;
        if (c->next)
                c->next->prev = c->prev;
        sd_event_source_disable_unref(c->out_src);
        sd_event_source_disable_unref(c->err_src);
        sd_event_source_disable_unref(c->in_src);
        sd_event_source_disable_unref(c->timer_src);
        sd_event_source_disable_unref(c->progress_src);
        sd_bus_slot_unref(c->slot);
        safe_close(c->out_fd);
        safe_close(c->err_fd);
        safe_close(c->in_fd);
        json_object_put(c->id);
        json_object_put(c->progress_token);
        json_object_put(c->exec);
        run_record_free(c->record);
        mcp_args_done(&c->args);
        mcp_capture_done(&c->out);
        mcp_capture_done(&c->err);
        free(c->in_data);
        free(c->op_id);
        free(c->sandbox);
        free(c);
}

void calls_free_all(Server *s) {
        while (s->calls)
                call_free(s->calls);
        while (s->sandboxes) {
                Sandbox *b = s->sandboxes;

                s->sandboxes = b->next;
                free(b->id);
                free(b->name);
                free(b);
        }
}

/* The call's answer (result taken; NULL: out of memory, said as an internal error), and the call gone. */
static int call_answer(Call *c, json_object *result) {
        Server *s = c->server;

        server_send(s, result ? mcp_response_new(c->id, result) : mcp_error_new(c->id, MCP_INTERNAL_ERROR, "out of memory"));
        call_free(c);
        server_check_done(s);
        return 0;
}

_printf_(2, 3) static int call_fail(Call *c, const char *fmt, ...) {
        _cleanup_free_ char *sentence = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&sentence, fmt, ap);
        va_end(ap);
        return call_answer(c, n < 0 ? NULL : mcp_tool_error(sentence));
}

/* ---- the server's sandboxes ------------------------------------------------------------------ */

static Sandbox *sandbox_find(Server *s, const char *key) {
        for (Sandbox *b = s->sandboxes; b; b = b->next)
                if (streq(b->id, key) || streq_ptr(b->name, key))
                        return b;
        return NULL;
}

static void sandbox_forget(Server *s, const char *id) {
        for (Sandbox **p = &s->sandboxes; *p; p = &(*p)->next)
                if (streq((*p)->id, id)) {
                        Sandbox *b = *p;

                        *p = b->next;
                        free(b->id);
                        free(b->name);
                        free(b);
                        return;
                }
}

static int sandbox_add(Server *s, const char *id, const char *name) {
        Sandbox *b = calloc(1, sizeof(Sandbox));

        if (!b || !(b->id = strdup(id)) || (name && !(b->name = strdup(name)))) {
                if (b)
                        free(b->id);
                free(b);
                return -ENOMEM;
        }
        b->next = s->sandboxes;
        s->sandboxes = b;
        return 0;
}

/* ---- the end of a command -------------------------------------------------------------------- */

static bool is_file_tool(McpTool t) {
        return t == MCP_TOOL_WRITE_FILE || t == MCP_TOOL_READ_FILE || t == MCP_TOOL_LIST_FILES;
}

static bool is_command(McpTool t) {
        return t == MCP_TOOL_RUN || t == MCP_TOOL_SANDBOX_EXEC || t == MCP_TOOL_WRITE_FILE ||
               t == MCP_TOOL_READ_FILE || t == MCP_TOOL_LIST_FILES;
}

static int run_answer(Call *c) {
        _cleanup_strv_free_ char **lines = NULL;
        const RunRecord *rec = c->record;
        json_object *result = NULL;

        if (!rec)
                return call_fail(c, "no valid record for run %s", c->op_id);
        if (rec->stop_reason == STOP_REFUSED || rec->stop_reason == STOP_START_FAILED)
                return call_fail(c, "run %s did not start: %s", c->op_id, strna(rec->error));
        if (rec->stop_reason == STOP_LOST)
                return call_fail(c, "run %s ended with an outcome sbx does not know: %s", c->op_id, strna(rec->error));
        if (client_observation_lines(rec, &lines) < 0 || client_egress_lines(rec, &lines) < 0)
                return call_answer(c, NULL);
        (void) mcp_command_result(&(McpOutcome) {
                .run_id = c->op_id,
                .exit_code = rec->exit_code,
                .signal = rec->exit_signal,
                .stop_reason = c->cancelled ? "cancelled" : stop_reason_to_string(rec->stop_reason),
                .out = &c->out,
                .err = &c->err,
                .agent_lines = lines,
        }, &result);
        return call_answer(c, result);
}

/* ExecFinished's result, exit code and signal */
static void exec_status(json_object *exec, const char **ret_result, int *ret_code, int *ret_signal) {
        json_object *v;

        *ret_result = json_object_object_get_ex(exec, "result", &v) ? json_object_get_string(v) : NULL;
        *ret_code = json_object_object_get_ex(exec, "exit_code", &v) && v ? json_object_get_int(v) : -1;
        *ret_signal = json_object_object_get_ex(exec, "exit_signal", &v) && v ? json_object_get_int(v) : 0;
}

static const char *exec_stop_reason(const char *result, int code) {
        if (streq(result, "exited"))
                return stop_reason_to_string(code == 0 ? STOP_SUCCESS : STOP_EXIT_CODE);
        if (streq(result, "signal"))
                return stop_reason_to_string(STOP_SIGNAL);
        if (streq(result, "timeout"))
                return stop_reason_to_string(STOP_TIMEOUT);
        return stop_reason_to_string(STOP_OUTPUT_LIMIT);
}

static int exec_answer(Call *c) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *sentence = NULL;
        json_object *result = NULL;
        const char *res;
        int code, sig;

        exec_status(c->exec, &res, &code, &sig);
        if (!res)
                return call_fail(c, "sbxd sent an invalid exec result");
        if (client_exec_result_sentence(res, c->sandbox, c->op_id, &sentence) < 0)
                return call_answer(c, NULL);
        /* not started, busy, lost: nothing ran to its end */
        if (sentence && !streq(res, "timeout") && !streq(res, "output-limit"))
                return call_fail(c, "%s", sentence);
        if (sentence && strv_push_take(&lines, TAKE_PTR(sentence)) < 0)
                return call_answer(c, NULL);
        (void) mcp_command_result(&(McpOutcome) {
                .run_id = c->op_id,
                .exit_code = streq(res, "exited") ? code : -1,
                .signal = streq(res, "signal") ? sig : 0,
                .stop_reason = c->cancelled ? "cancelled" : exec_stop_reason(res, code),
                .out = &c->out,
                .err = &c->err,
                .agent_lines = lines,
        }, &result);
        return call_answer(c, result);
}

/* The first line of the command's stderr, or what ended it */
static int file_tool_failed(Call *c, const char *res, int code) {
        _cleanup_free_ char *line = NULL, *sentence = NULL;
        const char *tool = mcp_tool_to_string(c->tool), *path = c->args.path ?: ".";

        if (c->err.size > 0) {
                size_t n = strcspn(c->err.data, "\n");

                if (mcp_utf8_text(c->err.data, n, &line, NULL) < 0)
                        return call_answer(c, NULL);
                return call_fail(c, "%s %s: %s", tool, path, line);
        }
        if (client_exec_result_sentence(res, c->sandbox, c->op_id, &sentence) < 0)
                return call_answer(c, NULL);
        if (sentence)
                return call_fail(c, "%s %s: %s", tool, path, sentence);
        return call_fail(c, "%s %s: the command in the sandbox ended with %s %d", tool, path,
                         streq(res, "signal") ? "signal" : "exit status", streq(res, "signal") ? 0 : code);
}

static int file_answer(Call *c) {
        json_object *structured = NULL, *result = NULL;
        const char *res;
        int code, sig, r;

        exec_status(c->exec, &res, &code, &sig);
        if (!res)
                return call_fail(c, "sbxd sent an invalid exec result");
        if (c->cancelled)
                return call_fail(c, "%s %s: cancelled", mcp_tool_to_string(c->tool), c->args.path ?: ".");
        if (!streq(res, "exited") || code != 0)
                return file_tool_failed(c, res, code);
        if (c->tool == MCP_TOOL_WRITE_FILE) {
                structured = json_object_new_object();
                r = structured ? 0 : -ENOMEM;
                if (r >= 0 && (json_object_object_add(structured, "path", json_object_new_string(c->args.path)) < 0 ||
                               json_object_object_add(structured, "bytes", json_object_new_uint64(c->in_size)) < 0))
                        r = -ENOMEM;
        } else if (c->tool == MCP_TOOL_READ_FILE)
                r = mcp_read_result(c->args.path, &c->out,
                                    c->args.encoding == _MCP_ENCODING_INVALID ? -1 : (int) c->args.encoding, &structured);
        else
                r = mcp_list_result(c->args.path ?: ".", &c->out, &structured);
        if (r == -EBADMSG)
                return call_fail(c, "%s %s: the sandbox's tools gave output of another form than expected",
                                 mcp_tool_to_string(c->tool), c->args.path ?: ".");
        if (r < 0) {
                json_object_put(structured);
                return call_answer(c, NULL);
        }
        (void) mcp_structured_result(structured, &result);
        return call_answer(c, result);
}

/* Answers once the command has ended and its output is read (or the drain timer gave up on it). */
static int call_try_answer(Call *c, bool drained) {
        if (!c->ended || (!drained && (c->out_fd >= 0 || c->err_fd >= 0)))
                return 0;
        if (c->tool == MCP_TOOL_RUN)
                return run_answer(c);
        if (c->tool == MCP_TOOL_SANDBOX_EXEC)
                return exec_answer(c);
        return file_answer(c);
}

static int on_drain_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        return call_try_answer(userdata, true);
}

/* The command ended: answer now, or once its output is read (at most DRAIN_USEC: a process it left behind
 * in a sandbox may hold the pipe open) */
static int call_ended(Call *c) {
        c->ended = true;
        c->timer_src = sd_event_source_disable_unref(c->timer_src);
        if (c->out_fd >= 0 || c->err_fd >= 0)
                (void) sd_event_add_time_relative(c->server->event, &c->timer_src, CLOCK_MONOTONIC, DRAIN_USEC, 0,
                                                  on_drain_timeout, c);
        return call_try_answer(c, false);
}

/* ---- pipes -------------------------------------------------------------------------------------- */

static int on_output(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Call *c = userdata;
        bool out = fd == c->out_fd;
        char buf[64 * 1024];
        ssize_t n = read(fd, buf, sizeof(buf));

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0) {
                if (mcp_capture_add(out ? &c->out : &c->err, buf, (size_t) n) < 0)
                        server_log(c->server, MCP_LOG_ERROR, "out of memory keeping a command's output");
                return 0;
        }
        /* the end (or an error: the same) */
        if (out) {
                c->out_src = sd_event_source_disable_unref(c->out_src);
                c->out_fd = safe_close(c->out_fd);
        } else {
                c->err_src = sd_event_source_disable_unref(c->err_src);
                c->err_fd = safe_close(c->err_fd);
        }
        return call_try_answer(c, false);
}

static int on_input(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Call *c = userdata;
        ssize_t n = c->in_off < c->in_size ? write(fd, c->in_data + c->in_off, c->in_size - c->in_off) : 0;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0)
                c->in_off += (size_t) n;
        /* all written, or the command does not read it (EPIPE): its stdin ends */
        if (n < 0 || c->in_off >= c->in_size) {
                c->in_src = sd_event_source_disable_unref(c->in_src);
                c->in_fd = safe_close(c->in_fd);
        }
        return 0;
}

static void safe_close_pair(int p[2]) {
        p[0] = safe_close(p[0]);
        p[1] = safe_close(p[1]);
}

/* Our ends of the command's three pipes on the event loop, theirs in theirs[] (closed once passed). */
static int call_pipes(Call *c, int theirs[3]) {
        int in[2] = { -EBADF, -EBADF }, out[2], err[2], r;

        if (c->in_size > 0 ? pipe2(in, O_CLOEXEC) < 0 : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0) {
                r = -errno;
                safe_close_pair(in);
                return r;
        }
        if (pipe2(err, O_CLOEXEC) < 0) {
                r = -errno;
                safe_close_pair(in);
                safe_close_pair(out);
                return r;
        }
        theirs[0] = in[0];
        theirs[1] = out[1];
        theirs[2] = err[1];
        c->in_fd = in[1];
        c->out_fd = out[0];
        c->err_fd = err[0];
        c->out.cap = c->tool == MCP_TOOL_READ_FILE ? c->server->cfg->output_cap + READ_HEADER : c->server->cfg->output_cap;
        c->err.cap = c->server->cfg->output_cap;
        r = fcntl(c->out_fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(c->err_fd, F_SETFL, O_NONBLOCK) < 0 ||
                            (c->in_fd >= 0 && fcntl(c->in_fd, F_SETFL, O_NONBLOCK) < 0) ? -errno : 0;
        if (r >= 0)
                r = sd_event_add_io(c->server->event, &c->out_src, c->out_fd, EPOLLIN, on_output, c);
        if (r >= 0)
                r = sd_event_add_io(c->server->event, &c->err_src, c->err_fd, EPOLLIN, on_output, c);
        if (r >= 0 && c->in_fd >= 0)
                r = sd_event_add_io(c->server->event, &c->in_src, c->in_fd, EPOLLOUT, on_input, c);
        return r;
}

/* ---- sbxd's signals ------------------------------------------------------------------------------ */

static bool from_daemon(Server *s, sd_bus_message *m) {
        return s->daemon && streq_ptr(sd_bus_message_get_sender(m), s->daemon);
}

/* Exited (the run's command ended, its cleanup goes on: the answer comes now) or Finished (no Exited came) */
static int on_finished(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;
        const char *id, *json;

        if (!from_daemon(s, m) || sd_bus_message_read(m, "ss", &id, &json) < 0)
                return 0;
        sandbox_forget(s, id); /* a sandbox of ours ended (removed, idle timeout, time limit) */
        for (Call *c = s->calls; c; c = c->next)
                if (c->tool == MCP_TOOL_RUN && streq_ptr(c->op_id, id) && !c->ended) {
                        _cleanup_free_ char *err = NULL;

                        if (run_record_from_json(json, &c->record, &err) < 0)
                                server_log(s, MCP_LOG_ERROR, "sbxd sent an invalid record: %s", strna(err));
                        return call_ended(c);
                }
        return 0;
}

static int on_exec_finished(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;
        const char *sandbox, *op, *json;

        if (!from_daemon(s, m) || sd_bus_message_read(m, "sss", &sandbox, &op, &json) < 0)
                return 0;
        for (Call *c = s->calls; c; c = c->next)
                if (c->tool != MCP_TOOL_RUN && is_command(c->tool) && streq_ptr(c->op_id, op) && !c->ended) {
                        c->exec = json_tokener_parse(json);
                        return call_ended(c);
                }
        return 0;
}

/* Every call waiting on sbxd gets the sentence; the connection is dropped (the next call makes a new one). */
static void bus_lost(Server *s, const char *why) {
        Call *next;

        for (Call *c = s->calls; c; c = next) {
                next = c->next;
                if (c->op_id && is_command(c->tool))
                        (void) call_fail(c, "%s during %s %s; its outcome is unknown", why,
                                         c->tool == MCP_TOOL_RUN ? "run" : "exec", c->op_id);
                else
                        (void) call_fail(c, "%s", why);
        }
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;
        const char *name, *old, *new;

        if (!streq_ptr(sd_bus_message_get_sender(m), "org.freedesktop.DBus") ||
            sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || !streq(name, SBX_BUS_NAME) || !s->daemon ||
            !streq(old, s->daemon))
                return 0;
        s->daemon = mfree(s->daemon);
        bus_lost(s, "sbxd went away");
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;

        if (!sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected") ||
            sd_bus_is_open(sd_bus_message_get_bus(m)) > 0)
                return 0;
        server_log(s, MCP_LOG_WARNING, "the connection to the system bus ended");
        /* the sandboxes were this connection's (sbxd stops them with it), unless detached */
        if (!s->cfg->keep_sandboxes)
                while (s->sandboxes)
                        sandbox_forget(s, s->sandboxes->id);
        bus_lost(s, "the connection to the system bus ended");
        s->daemon = mfree(s->daemon);
        s->bus = sd_bus_close_unref(s->bus);
        server_check_done(s);
        return 0;
}

static const McpBusHandlers handlers = {
        .exited = on_finished,
        .finished = on_finished,
        .exec_finished = on_exec_finished,
        .owner_changed = on_owner_changed,
        .disconnected = on_disconnected,
};

/* The reply of a call: its error as the call's tool error, or 0 and the sbxd that answered remembered. */
static int reply_check(Call *c, sd_bus_message *reply) {
        _cleanup_free_ char *sentence = NULL;

        c->slot = sd_bus_slot_unref(c->slot);
        if (!sd_bus_message_is_method_error(reply, NULL)) {
                if (!c->server->daemon)
                        c->server->daemon = strdup(sd_bus_message_get_sender(reply));
                return 0;
        }
        if (mcp_bus_reply_sentence(reply, &sentence) < 0)
                return call_answer(c, NULL), -EIO;
        return call_fail(c, "%s", sentence), -EIO;
}

/* ---- cancellation and progress ----------------------------------------------------------------- */

static int on_cancel_step(sd_event_source *src, uint64_t usec, void *userdata);

/* One step: Stop (a run) or SIGTERM (an exec); SIGHUP five seconds later; five more and the call is answered
 * without waiting further. */
static int cancel_step(Call *c) {
        Server *s = c->server;

        c->timer_src = sd_event_source_disable_unref(c->timer_src);
        if (c->cancel_step >= 2 || !s->bus)
                return c->ended ? call_try_answer(c, true) : call_fail(c, "%s %s was cancelled; its end was not seen",
                                                                        mcp_tool_to_string(c->tool), strna(c->op_id));
        if (c->tool == MCP_TOOL_RUN && c->cancel_step == 0)
                (void) mcp_bus_call(s->bus, "Stop", c->op_id, NULL, NULL, NULL);
        else if (c->tool != MCP_TOOL_RUN)
                (void) mcp_bus_signal_exec(s->bus, c->sandbox, c->op_id, c->cancel_step == 0 ? SIGTERM : SIGHUP);
        c->cancel_step++;
        return sd_event_add_time_relative(s->event, &c->timer_src, CLOCK_MONOTONIC, CANCEL_STEP_USEC, 0,
                                          on_cancel_step, c);
}

static int on_cancel_step(sd_event_source *src, uint64_t usec, void *userdata) {
        Call *c = userdata;

        /* the command ended: the drain timer is what is waited on */
        if (c->ended)
                return call_try_answer(c, true);
        return cancel_step(c);
}

static void call_cancel(Call *c) {
        if (c->cancelled)
                return;
        c->cancelled = true;
        /* a command started (its id known) and not ended; otherwise its reply or its end sees the flag */
        if (is_command(c->tool) && c->op_id && !c->ended)
                (void) cancel_step(c);
}

void call_cancel_id(Server *s, json_object *request_id) {
        for (Call *c = s->calls; c; c = c->next)
                if (request_id && json_object_equal(c->id, request_id)) {
                        server_log(s, MCP_LOG_INFO, "request %s cancelled", json_object_to_json_string(request_id));
                        call_cancel(c);
                        return;
                }
}

static int on_progress(sd_event_source *src, uint64_t usec, void *userdata) {
        Call *c = userdata;
        usec_t elapsed = now_monotonic() - c->started;
        json_object *p = json_object_new_object();
        char msg[128];
        int r;

        snprintf(msg, sizeof(msg), "%" PRIu64 " s, %" PRIu64 " bytes of output", elapsed / USEC_PER_SEC,
                 c->out.total + c->err.total);
        if (p && json_object_object_add(p, "progressToken", json_object_get(c->progress_token)) >= 0 &&
            json_object_object_add(p, "progress", json_object_new_uint64(elapsed / USEC_PER_SEC)) >= 0 &&
            json_object_object_add(p, "message", json_object_new_string(msg)) >= 0) {
                server_send(c->server, mcp_notification_new("notifications/progress", p));
                p = NULL;
        }
        json_object_put(p);
        /* a timer fires once: armed again for the next */
        r = sd_event_source_set_time_relative(src, PROGRESS_INTERVAL_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
}

/* ---- the tools ------------------------------------------------------------------------------------- */

/* Run or Exec answered: the command's id; its end comes as a signal */
static int on_command_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Call *c = userdata;
        const char *id;

        if (reply_check(c, reply) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &id) < 0 || !(c->op_id = strdup(id)))
                return call_fail(c, "sbxd sent an invalid reply");
        if (c->progress_token)
                (void) sd_event_add_time_relative(c->server->event, &c->progress_src, CLOCK_MONOTONIC,
                                                  PROGRESS_INTERVAL_USEC, 0, on_progress, c);
        if (c->cancelled)
                (void) cancel_step(c);
        return 0;
}

static int start_command(Call *c) {
        Server *s = c->server;
        const McpArgs *a = &c->args;
        _cleanup_strv_free_ char **cmd = NULL;
        int theirs[3] = { -EBADF, -EBADF, -EBADF }, r;

        /* run and sandbox_exec: the caller's stdin (write_file's content is in in_data already) */
        if (a->stdin_text) {
                c->in_size = strlen(a->stdin_text);
                c->in_data = TAKE_PTR(c->args.stdin_text);
        }
        r = mcp_args_command(c->tool, s->cfg, a, &cmd);
        if (r >= 0)
                r = call_pipes(c, theirs);
        /* an exec takes only the timeout of these */
        if (r >= 0)
                r = mcp_bus_command(s->bus, c->tool == MCP_TOOL_RUN ? NULL : c->sandbox, &(ClientRequest) {
                        .profile = a->profile,
                        .workspace = a->workspace,
                        .memory = a->memory,
                        .tasks = a->tasks,
                        /* the file tools' commands are short: one that waits (a FIFO) ends */
                        .timeout = a->timeout ?: (is_file_tool(c->tool) ? FILE_TOOL_TIMEOUT_USEC : 0),
                }, cmd, a->env, theirs, on_command_reply, c, &c->slot);
        for (size_t i = 0; i < 3; i++)
                safe_close(theirs[i]);
        if (r < 0)
                return call_fail(c, "cannot make the call to sbxd: %s", strerror(-r));
        c->started = now_monotonic();
        return 0;
}

static int on_create_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Call *c = userdata;
        json_object *o, *result = NULL;
        const char *id;

        if (reply_check(c, reply) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &id) < 0 || !run_id_is_valid(id))
                return call_fail(c, "sbxd sent an invalid reply");
        if (sandbox_add(c->server, id, c->args.name) < 0)
                return call_answer(c, NULL);
        o = json_object_new_object();
        if (o && (json_object_object_add(o, "sandbox_id", json_object_new_string(id)) < 0 ||
                  json_object_object_add(o, "profile", json_object_new_string(c->args.profile)) < 0 ||
                  json_object_object_add(o, "workspace", c->args.workspace ? json_object_new_string(c->args.workspace) : NULL) < 0))
                o = (json_object_put(o), NULL);
        (void) mcp_structured_result(o, &result);
        return call_answer(c, result);
}

static int remove_poll(Call *c);

static int on_remove_poll(sd_event_source *src, uint64_t usec, void *userdata) {
        return remove_poll(userdata);
}

/* Get of a sandbox being removed: its stop reason once its record is final */
static int on_remove_get(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(run_record_freep) RunRecord *rec = NULL;
        Call *c = userdata;
        json_object *o, *result = NULL;
        const char *json;

        if (reply_check(c, reply) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &json) < 0 || run_record_from_json(json, &rec, NULL) < 0)
                return call_fail(c, "sbxd sent an invalid record");
        if (!rec->finished && c->polls < REMOVE_POLLS)
                return sd_event_add_time_relative(c->server->event, &c->timer_src, CLOCK_MONOTONIC, REMOVE_POLL_USEC,
                                                  0, on_remove_poll, c);
        sandbox_forget(c->server, c->sandbox);
        o = json_object_new_object();
        if (o && (json_object_object_add(o, "sandbox_id", json_object_new_string(c->sandbox)) < 0 ||
                  json_object_object_add(o, "stop_reason", json_object_new_string(
                          rec->finished ? stop_reason_to_string(rec->stop_reason) : "stopping")) < 0))
                o = (json_object_put(o), NULL);
        (void) mcp_structured_result(o, &result);
        return call_answer(c, result);
}

static int remove_poll(Call *c) {
        int r;

        c->timer_src = sd_event_source_disable_unref(c->timer_src);
        c->polls++;
        r = mcp_bus_call(c->server->bus, "Get", c->sandbox, on_remove_get, c, &c->slot);
        return r < 0 ? call_fail(c, "cannot make the call to sbxd: %s", strerror(-r)) : 0;
}

static int on_remove_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Call *c = userdata;

        if (reply_check(c, reply) < 0)
                return 0;
        return remove_poll(c);
}

static int on_export_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(run_export_freep) RunExport *e = NULL;
        _cleanup_(json_object_putp) json_object *report = NULL;
        json_object *o = NULL, *delivered, *refused, *held, *result = NULL;
        Call *c = userdata;
        const char *json;

        if (reply_check(c, reply) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &json) < 0 || !(report = json_tokener_parse(json)) ||
            run_export_from_json(report, &e, NULL) < 0)
                return call_fail(c, "sbxd sent an invalid report");
        if (!e->reviewed)
                return call_fail(c, "export: %s", e->error ?: "the review did not finish");
        o = json_object_new_object();
        delivered = json_object_new_array();
        refused = json_object_new_array();
        held = json_object_new_array();
        if (!o || json_object_object_add(o, "directory", json_object_new_string(e->destination ?: c->server->cfg->export_dir)) < 0 ||
            json_object_object_add(o, "delivered", delivered) < 0 || json_object_object_add(o, "refused", refused) < 0 ||
            json_object_object_add(o, "held", held) < 0 || json_object_object_add(o, "report", TAKE_PTR(report)) < 0)
                return json_object_put(o), call_answer(c, NULL);
        for (size_t i = 0; i < e->n_exported; i++)
                (void) json_object_array_add(delivered, json_object_new_string(e->exported[i].path));
        for (size_t i = 0; i < e->n_held; i++)
                (void) json_object_array_add(held, json_object_new_string(e->held[i].path));
        for (size_t i = 0; i < e->n_refused; i++) {
                json_object *item = json_object_new_object();

                if (item && json_object_array_add(refused, item) >= 0) {
                        (void) json_object_object_add(item, "path", json_object_new_string(e->refused[i].path));
                        (void) json_object_object_add(item, "reason", json_object_new_string(strna(e->refused[i].reason)));
                } else
                        json_object_put(item);
        }
        (void) mcp_structured_result(o, &result);
        return call_answer(c, result);
}

static int on_show_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Call *c = userdata;
        json_object *o, *result = NULL;
        const char *json;

        if (reply_check(c, reply) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &json) < 0 || !(o = json_tokener_parse(json)) ||
            !json_object_is_type(o, json_type_object))
                return call_fail(c, "sbxd sent an invalid record");
        (void) mcp_structured_result(o, &result);
        return call_answer(c, result);
}

/* The sandbox a call names must be one this server made (by id or name): its id in c->sandbox. */
static int call_sandbox(Call *c) {
        Sandbox *b = sandbox_find(c->server, c->args.sandbox_id);

        if (!b)
                return call_fail(c, "sandbox '%s' is not one this server created (sandbox_create makes one)",
                                 c->args.sandbox_id), -ENOENT;
        c->sandbox = strdup(b->id);
        return c->sandbox ? 0 : (call_answer(c, NULL), -ENOMEM);
}

static int start_tool(Call *c) {
        Server *s = c->server;
        _cleanup_close_ int fd = -EBADF;
        int r = 0;

        if (c->args.sandbox_id && call_sandbox(c) < 0)
                return 0;
        switch (c->tool) {
        case MCP_TOOL_RUN:
        case MCP_TOOL_SANDBOX_EXEC:
        case MCP_TOOL_READ_FILE:
        case MCP_TOOL_LIST_FILES:
                return start_command(c);
        case MCP_TOOL_WRITE_FILE: {
                _cleanup_free_ char *sentence = NULL;

                r = mcp_args_content(&c->args, &c->in_data, &c->in_size, &sentence);
                if (r == -ENOMEM)
                        return call_answer(c, NULL);
                if (r < 0)
                        return call_fail(c, "%s", sentence);
                return start_command(c);
        }
        case MCP_TOOL_SANDBOX_CREATE:
                r = mcp_bus_create(s->bus, &(ClientRequest) {
                        .profile = c->args.profile,
                        .workspace = c->args.workspace,
                        .memory = c->args.memory,
                        .tasks = c->args.tasks,
                        .name = c->args.name,
                        .detach = s->cfg->keep_sandboxes,
                }, on_create_reply, c, &c->slot);
                break;
        case MCP_TOOL_SANDBOX_REMOVE:
                r = mcp_bus_call(s->bus, "RemoveSandbox", c->sandbox, on_remove_reply, c, &c->slot);
                break;
        case MCP_TOOL_EXPORT:
                fd = open(s->cfg->export_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return call_fail(c, "export: '%s': %m", s->cfg->export_dir);
                r = mcp_bus_export(s->bus, c->sandbox, c->args.path ?: "out", fd, on_export_reply, c, &c->slot);
                break;
        case MCP_TOOL_SHOW_RUN:
                r = mcp_bus_call(s->bus, "Get", c->args.run_id, on_show_reply, c, &c->slot);
                break;
        case _MCP_TOOL_MAX:
        case _MCP_TOOL_INVALID:
                r = -EINVAL;
                break;
        }
        return r < 0 ? call_fail(c, "cannot make the call to sbxd: %s", strerror(-r)) : 0;
}

/* ---- a call's start, the server's end --------------------------------------------------------------- */

static void answer_error(Server *s, json_object *id, McpErrorCode code, const char *message) {
        server_send(s, mcp_error_new(id, code, message));
}

/* tools/call's params: the tool, its arguments (NULL: none), the progress token (NULL: none). -EINVAL with
 * the message of the -32602 answer. */
static int call_params(json_object *params, McpTool *ret_tool, json_object **ret_arguments, json_object **ret_token,
                       char **ret_error) {
        json_object *name = NULL, *arguments = NULL, *meta = NULL, *token = NULL;

        if (!params || !json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string))
                return asprintf(ret_error, "tools/call: params.name must be a tool's name") < 0 ? -ENOMEM : -EINVAL;
        *ret_tool = mcp_tool_from_string(json_object_get_string(name));
        if (*ret_tool < 0)
                return asprintf(ret_error, "Unknown tool: %s", json_object_get_string(name)) < 0 ? -ENOMEM : -EINVAL;
        if (json_object_object_get_ex(params, "arguments", &arguments) && !json_object_is_type(arguments, json_type_object))
                return asprintf(ret_error, "tools/call: params.arguments must be an object") < 0 ? -ENOMEM : -EINVAL;
        if (json_object_object_get_ex(params, "_meta", &meta) && json_object_is_type(meta, json_type_object) &&
            json_object_object_get_ex(meta, "progressToken", &token) && !json_object_is_type(token, json_type_string) &&
            !json_object_is_type(token, json_type_int))
                return asprintf(ret_error, "tools/call: _meta.progressToken must be a string or an integer") < 0 ?
                        -ENOMEM : -EINVAL;
        *ret_arguments = arguments;
        *ret_token = token;
        return 0;
}

void call_start(Server *s, json_object *id, json_object *params) {
        _cleanup_free_ char *error = NULL, *sentence = NULL;
        json_object *arguments, *token;
        McpTool tool;
        Call *c;
        int r;

        r = call_params(params, &tool, &arguments, &token, &error);
        if (r < 0) {
                answer_error(s, id, r == -EINVAL ? MCP_INVALID_PARAMS : MCP_INTERNAL_ERROR, error ?: "out of memory");
                return;
        }
        c = calloc(1, sizeof(Call));
        if (!c) {
                answer_error(s, id, MCP_INTERNAL_ERROR, "out of memory");
                return;
        }
        *c = (Call) { .server = s, .tool = tool, .id = json_object_get(id), .progress_token = json_object_get(token),
                      .out_fd = -EBADF, .err_fd = -EBADF, .in_fd = -EBADF, .next = s->calls };
        if (s->calls)
                s->calls->prev = c;
        s->calls = c;
        r = mcp_args_decode(tool, arguments, &c->args, &error);
        if (r < 0) {
                answer_error(s, id, r == -EINVAL ? MCP_INVALID_PARAMS : MCP_INTERNAL_ERROR, error ?: "out of memory");
                call_free(c);
                return;
        }
        if (s->closing) {
                (void) call_fail(c, "the server is shutting down");
                return;
        }
        r = mcp_args_check(tool, s->cfg, &c->args, &sentence);
        if (r < 0) {
                (void) (r == -EPERM ? call_fail(c, "%s", sentence) : call_answer(c, NULL));
                return;
        }
        if (!s->bus) {
                r = mcp_bus_open(s->event, &handlers, s, &s->bus, &sentence);
                if (r < 0) {
                        (void) (sentence ? call_fail(c, "%s", sentence) : call_answer(c, NULL));
                        return;
                }
        }
        (void) start_tool(c);
}

static int on_shutdown_remove(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;

        if (s->removals > 0)
                s->removals--;
        server_check_done(s);
        return 0;
}

void calls_shutdown(Server *s) {
        for (Call *c = s->calls; c; c = c->next)
                call_cancel(c);
        if (s->cfg->keep_sandboxes || !s->bus)
                return;
        /* asked for each, and answered before the server ends (its connection's end would stop them too) */
        for (Sandbox *b = s->sandboxes; b; b = b->next)
                if (mcp_bus_call(s->bus, "RemoveSandbox", b->id, on_shutdown_remove, s, NULL) >= 0)
                        s->removals++;
}
