/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/wire: a Run call written byte by byte and read by sd-bus itself, as a server on a socket of the
 * test's own (a forked child, as sbxd serves its socket): the handshake, every kind of value sbxctl sends,
 * the descriptors; sd-bus's reply, signal and error read back; and what is not a message refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "client-request.h"
#include "macro.h"
#include "unit-test.h"
#include "utf8.h"
#include "wire.h"
#include "wire-socket.h"

#define RUN_ID "0123456789abcdef0123456789abcdef"

/* ---- the server: sd-bus, in a child ---------------------------------------------------------------- */

/* The next message sd-bus has for us (a method call nobody handles), waiting at most 10 s. */
static sd_bus_message *next_call(sd_bus *bus) {
        for (int i = 0; i < 1000; i++) {
                sd_bus_message *m = NULL;
                int r = sd_bus_process(bus, &m);

                if (r < 0)
                        return NULL;
                if (m)
                        return m;
                if (r == 0 && sd_bus_wait(bus, 10 * 1000) < 0)
                        return NULL;
        }
        return NULL;
}

#define CHECK(cond)                                                                          \
        do {                                                                                 \
                if (!(cond)) {                                                               \
                        fprintf(stderr, "server: %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
                        return 1;                                                            \
                }                                                                            \
        } while (0)

/* The Run call's arguments, each as the client wrote it; 0 if they all are. */
static int check_run(sd_bus_message *m) {
        const char *key, *s, *contents;
        const void *bytes;
        size_t n;
        char **strv = NULL;
        unsigned seen = 0;
        int fd, b;
        uint64_t t;
        struct stat st;

        CHECK(sd_bus_message_is_method_call(m, "org.sbx.Manager1", "Run"));
        CHECK(streq(sd_bus_message_get_path(m), "/org/sbx/Manager1"));
        CHECK(streq(sd_bus_message_get_destination(m), "org.sbx.Manager1"));
        CHECK(streq(sd_bus_message_get_signature(m, true), "a{sv}ashhh"));
        CHECK(sd_bus_message_enter_container(m, 'a', "{sv}") > 0);
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                CHECK(sd_bus_message_read(m, "s", &key) > 0);
                CHECK(sd_bus_message_peek_type(m, NULL, &contents) > 0);
                CHECK(sd_bus_message_enter_container(m, 'v', contents) > 0);
                if (streq(key, "profile")) {
                        CHECK(sd_bus_message_read(m, "s", &s) > 0 && streq(s, "offline"));
                        seen |= 1;
                } else if (streq(key, "memory")) {
                        CHECK(sd_bus_message_read(m, "t", &t) > 0 && t == UINT64_C(68719476736));
                        seen |= 2;
                } else if (streq(key, "timeout_usec")) {
                        CHECK(sd_bus_message_read(m, "t", &t) > 0 && t == UINT64_C(68719476736));
                        seen |= 32;
                } else if (streq(key, "wait_cleanup")) {
                        CHECK(sd_bus_message_read(m, "b", &b) > 0 && b == 1);
                        seen |= 4;
                } else if (streq(key, "caches_ro")) {
                        CHECK(sd_bus_message_read_strv(m, &strv) > 0);
                        CHECK(strv && streq(strv[0], "pip") && streq(strv[1], "npm") && !strv[2]);
                        strv_free(strv);
                        seen |= 8;
                } else if (streq(key, "argv_bytes")) {
                        CHECK(sd_bus_message_enter_container(m, 'a', "ay") > 0);
                        CHECK(sd_bus_message_read_array(m, 'y', &bytes, &n) > 0 && n == 4 && !memcmp(bytes, "echo", 4));
                        CHECK(sd_bus_message_read_array(m, 'y', &bytes, &n) > 0 && n == 0);
                        CHECK(sd_bus_message_read_array(m, 'y', &bytes, &n) > 0 && n == 3 && !memcmp(bytes, "\xff" "a\n", 3));
                        CHECK(sd_bus_message_exit_container(m) > 0);
                        seen |= 16;
                } else
                        CHECK(!"an unexpected key");
                CHECK(sd_bus_message_exit_container(m) > 0);
                CHECK(sd_bus_message_exit_container(m) > 0);
        }
        CHECK(sd_bus_message_exit_container(m) > 0);
        CHECK(seen == 63);
        CHECK(sd_bus_message_read_strv(m, &strv) > 0 && strv_length(strv) == 0);
        strv_free(strv);
        /* the descriptors: the write end of the test's pipe three times */
        for (int i = 0; i < 3; i++) {
                CHECK(sd_bus_message_read(m, "h", &fd) > 0);
                CHECK(fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode));
        }
        CHECK(write(fd, "x", 1) == 1);
        return 0;
}

static int serve(int listener) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *run = NULL, *other = NULL;
        sd_id128_t id;
        int fd;

        fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(sd_id128_randomize(&id) >= 0);
        CHECK(sd_bus_new(&bus) >= 0);
        CHECK(sd_bus_set_fd(bus, fd, fd) >= 0);
        CHECK(sd_bus_set_server(bus, true, id) >= 0);
        CHECK(sd_bus_negotiate_fds(bus, true) >= 0);
        CHECK(sd_bus_start(bus) >= 0);

        run = next_call(bus);
        CHECK(run);
        if (check_run(run) != 0)
                return 1;
        /* a signal before the reply, then the reply, then the signals after it */
        CHECK(sd_bus_emit_signal(bus, "/org/sbx/Manager1", "org.sbx.Manager1", "Exited", "ss", "f00", "{}") >= 0);
        CHECK(sd_bus_reply_method_return(run, "s", RUN_ID) >= 0);
        CHECK(sd_bus_emit_signal(bus, "/org/sbx/Manager1", "org.sbx.Manager1", "Exited", "ss", RUN_ID,
                                 "{\"run_id\":\"" RUN_ID "\"}") >= 0);
        /* an exec's end: three strings */
        CHECK(sd_bus_emit_signal(bus, "/org/sbx/Manager1", "org.sbx.Manager1", "ExecFinished", "sss", RUN_ID, "0f",
                                 "{\"result\":\"exited\"}") >= 0);
        /* Stop, with no reply wanted; then a call answered with an error */
        other = next_call(bus);
        CHECK(other && sd_bus_message_is_method_call(other, "org.sbx.Manager1", "Stop"));
        CHECK(sd_bus_message_get_expect_reply(other) == 0);
        other = sd_bus_message_unref(other);
        other = next_call(bus);
        CHECK(other && sd_bus_message_is_method_call(other, "org.sbx.Manager1", "Ping"));
        CHECK(sd_bus_reply_method_errorf(other, "org.sbx.Error.NoSuchProfile", "profile: no profile named '%s'",
                                         "x") >= 0);
        CHECK(sd_bus_flush(bus) >= 0);
        return 0;
}

/* ---- the client: src/wire ------------------------------------------------------------------------- */

static void next_message(WireConn *c, WireMessage *m) {
        for (int i = 0; i < 100; i++) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int r = wire_conn_next(c, m);

                assert_true(r >= 0);
                if (r > 0)
                        return;
                assert_true(poll(&p, 1, 10000) > 0);
                assert_int_equal(wire_conn_fill(c), 0);
        }
        fail_msg("no message from the server");
}

static void send_call(WireConn *c, WireWriter *w, uint32_t serial, uint8_t flags, const char *member) {
        _cleanup_free_ uint8_t *msg = NULL;
        size_t len;

        assert_int_equal(wire_call_build(w, serial, flags, "org.sbx.Manager1", "/org/sbx/Manager1",
                                         "org.sbx.Manager1", member, &msg, &len), 0);
        assert_int_equal(wire_conn_send(c, msg, len, w->fds, w->n_fds), 0);
}

static void test_with_sd_bus(void **state) {
        char dir[] = "/tmp/sbx-test-wire.XXXXXX", path[128];
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } addr = { .un.sun_family = AF_UNIX };
        _cleanup_close_ int listener = -EBADF, idle = -EBADF;
        WireConn c = WIRE_CONN_INIT;
        WireWriter w = {};
        WireMessage m;
        const char *a, *b, *x[WIRE_STRINGS_MAX + 1];
        uint64_t mem = UINT64_C(68719476736);
        bool yes = true;
        int pipefd[2], status;
        char *caches[] = { (char *) "pip", (char *) "npm", NULL }, got;
        pid_t pid;

        assert_non_null(mkdtemp(dir));
        (void) snprintf(path, sizeof path, "%s/bus", dir);
        strcpy(addr.un.sun_path, path);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, &addr.sa, sizeof addr.un), 0);
        assert_int_equal(listen(listener, 4), 0);
        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                reset_crash_signals();
                _exit(serve(listener));
        }

        /* a socket whose other end is another uid's is not used (nothing sent: one nobody serves), ours is */
        (void) snprintf(addr.un.sun_path, sizeof addr.un.sun_path, "%s/idle", dir);
        idle = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(idle >= 0);
        assert_int_equal(bind(idle, &addr.sa, sizeof addr.un), 0);
        assert_int_equal(listen(idle, 4), 0);
        assert_int_equal(wire_conn_open(addr.un.sun_path, getuid() + 1, &c), 0);
        assert_int_equal(c.fd, -1);
        (void) unlink(addr.un.sun_path);
        assert_int_equal(wire_conn_open("/nonexistent/sbx/bus", getuid(), &c), 0);
        assert_int_equal(wire_conn_open(path, getuid(), &c), 1);

        wire_open(&w, 'a', "{sv}");
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "profile");
        wire_open(&w, 'v', "s");
        wire_append_basic(&w, 's', "offline");
        wire_close(&w);
        wire_close(&w);
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "memory");
        wire_open(&w, 'v', "t");
        wire_append_basic(&w, 't', &mem);
        wire_close(&w);
        wire_close(&w);
        /* a u64 after 20 bytes of its entry: aligned to 8, not 4 */
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "timeout_usec");
        wire_open(&w, 'v', "t");
        wire_append_basic(&w, 't', &mem);
        wire_close(&w);
        wire_close(&w);
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "wait_cleanup");
        wire_open(&w, 'v', "b");
        wire_append_basic(&w, 'b', &yes);
        wire_close(&w);
        wire_close(&w);
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "caches_ro");
        wire_open(&w, 'v', "as");
        wire_append_strv(&w, caches);
        wire_close(&w);
        wire_close(&w);
        wire_open(&w, 'e', "sv");
        wire_append_basic(&w, 's', "argv_bytes");
        wire_open(&w, 'v', "aay");
        wire_open(&w, 'a', "ay");
        wire_append_bytes(&w, "echo", 4);
        wire_append_bytes(&w, "", 0);
        wire_append_bytes(&w, "\xff" "a\n", 3);
        wire_close(&w);
        wire_close(&w);
        wire_close(&w);
        wire_close(&w);
        wire_append_strv(&w, NULL);
        for (int i = 0; i < 3; i++)
                wire_append_basic(&w, 'h', &pipefd[1]);
        assert_string_equal(w.sig, "a{sv}ashhh");
        send_call(&c, &w, 1, 0, "Run");
        wire_writer_done(&w);
        /* the server wrote into the descriptor it was passed */
        assert_int_equal(read(pipefd[0], &got, 1), 1);
        assert_int_equal(got, 'x');

        next_message(&c, &m);
        assert_int_equal(m.type, WIRE_SIGNAL);
        assert_string_equal(m.member, "Exited");
        assert_int_equal(wire_read_strings(&m, &a, &b), 0);
        assert_string_equal(a, "f00");
        assert_int_equal(wire_read_strings(&m, &a, NULL), -EBADMSG); /* "ss" is not "s" */
        next_message(&c, &m);
        assert_int_equal(m.type, WIRE_METHOD_RETURN);
        assert_int_equal(m.reply_serial, 1);
        assert_int_equal(wire_read_strings(&m, &a, NULL), 0);
        assert_string_equal(a, RUN_ID);
        next_message(&c, &m);
        assert_int_equal(m.type, WIRE_SIGNAL);
        assert_string_equal(m.interface, "org.sbx.Manager1");
        assert_string_equal(m.path, "/org/sbx/Manager1");
        assert_int_equal(wire_read_strings(&m, &a, &b), 0);
        assert_string_equal(a, RUN_ID);
        assert_string_equal(b, "{\"run_id\":\"" RUN_ID "\"}");
        next_message(&c, &m);
        assert_string_equal(m.member, "ExecFinished");
        assert_int_equal(wire_read_string_list(&m, 3, x), 0);
        assert_string_equal(x[0], RUN_ID);
        assert_string_equal(x[1], "0f");
        assert_string_equal(x[2], "{\"result\":\"exited\"}");
        assert_int_equal(wire_read_strings(&m, &a, &b), -EBADMSG); /* "sss" is not "ss" */
        assert_int_equal(wire_read_string_list(&m, 4, x), -EBADMSG);
        assert_int_equal(wire_read_string_list(&m, 0, x), -EINVAL);
        assert_int_equal(wire_read_string_list(&m, WIRE_STRINGS_MAX + 1, x), -EINVAL);

        wire_append_basic(&w, 's', RUN_ID);
        send_call(&c, &w, 2, WIRE_FLAG_NO_REPLY_EXPECTED, "Stop");
        wire_writer_done(&w);
        send_call(&c, &w, 3, 0, "Ping");
        next_message(&c, &m);
        assert_int_equal(m.type, WIRE_ERROR);
        assert_int_equal(m.reply_serial, 3);
        assert_string_equal(m.error_name, "org.sbx.Error.NoSuchProfile");
        assert_int_equal(wire_read_strings(&m, &a, NULL), 0);
        assert_string_equal(a, "profile: no profile named 'x'");

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        /* the server closed its end */
        for (int r = 0; r == 0;) {
                struct pollfd p = { .fd = c.fd, .events = POLLIN };

                assert_true(poll(&p, 1, 10000) > 0);
                r = wire_conn_fill(&c);
                if (r != 0)
                        assert_int_equal(r, -ECONNRESET);
        }
        wire_conn_done(&c);
        close(pipefd[0]);
        close(pipefd[1]);
        (void) unlink(path);
        (void) rmdir(dir);
}

/* ---- what is not a message ----------------------------------------------------------------------- */

static void build_ping(uint8_t **ret, size_t *ret_len) {
        WireWriter w = {};

        wire_append_basic(&w, 's', "hello");
        assert_int_equal(wire_call_build(&w, 7, 0, NULL, "/a", "b.c", "D", ret, ret_len), 0);
        wire_writer_done(&w);
}

static void test_parse(void **state) {
        _cleanup_free_ uint8_t *msg = NULL;
        size_t len, total;
        WireMessage m;
        const char *a;
        WireWriter w = {};

        build_ping(&msg, &len);
        assert_int_equal(wire_message_size(msg, &total), 0);
        assert_int_equal(total, len);
        assert_int_equal(wire_message_parse(msg, len, &m), 0);
        assert_int_equal(m.type, WIRE_METHOD_CALL);
        assert_int_equal(m.serial, 7);
        assert_string_equal(m.path, "/a");
        assert_string_equal(m.interface, "b.c");
        assert_string_equal(m.member, "D");
        assert_null(m.destination);
        assert_string_equal(m.signature, "s");
        assert_int_equal(wire_read_strings(&m, &a, NULL), 0);
        assert_string_equal(a, "hello");

        /* shorter or longer than it says */
        assert_int_equal(wire_message_parse(msg, len - 1, &m), -EBADMSG);
        assert_int_equal(wire_message_parse(msg, 15, &m), -EBADMSG);
        /* another byte order, another version */
        msg[0] = msg[0] == 'l' ? 'B' : 'l';
        assert_int_equal(wire_message_size(msg, &total), -EBADMSG);
        msg[0] = msg[0] == 'l' ? 'B' : 'l';
        msg[3] = 2;
        assert_int_equal(wire_message_parse(msg, len, &m), -EBADMSG);
        msg[3] = 1;
        /* a body length beyond what is allowed */
        memcpy(msg + 4, &(uint32_t) { 0xfffffff0 }, 4);
        assert_int_equal(wire_message_size(msg, &total), -EBADMSG);
        free(msg);

        /* the body's string without its NUL, or longer than the body */
        build_ping(&msg, &len);
        msg[len - 1] = 'x';
        assert_int_equal(wire_message_parse(msg, len, &m), 0);
        assert_int_equal(wire_read_strings(&m, &a, NULL), -EBADMSG);
        msg[len - 1] = 0;
        memcpy((uint8_t *) m.body, &(uint32_t) { 1000 }, 4);
        assert_int_equal(wire_read_strings(&m, &a, NULL), -EBADMSG);
        /* a header field whose string runs past the fields */
        memcpy(msg + 12, &(uint32_t) { 9 }, 4);
        assert_int_equal(wire_message_parse(msg, len, &m), -EBADMSG);

        /* the writer: a container left open, a type it does not know */
        wire_open(&w, 'a', "s");
        assert_int_equal(wire_call_build(&w, 1, 0, NULL, "/a", NULL, "D", &msg, &len), -EINVAL);
        wire_writer_done(&w);
        wire_append_basic(&w, 'z', "x");
        assert_int_equal(wire_call_build(&w, 1, 0, NULL, "/a", NULL, "D", &msg, &len), -EINVAL);
        wire_writer_done(&w);
}

/* A request's strings go as D-Bus strings, which must be UTF-8: the clients refuse what sd-bus would, and name
 * the key (client_request_not_utf8(), sbxctl's check_request_utf8()). */
static void test_request_utf8(void **state) {
        static const char *const strings[] = {
                "", "/home/user/ws", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                "caf\xe9", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
                "\xc3", "\xe2\x82", "\x80", "\xff",
                /* noncharacters: sd-bus refuses them */
                "\xef\xbf\xbe", "\xef\xbf\xbf", "\xef\xb7\x90", "\xef\xb7\xaf", "\xf0\x9f\xbf\xbe", "\xf4\x8f\xbf\xbf",
                "\xef\xb7\x8f", "\xef\xb7\xb0", "\xef\xbf\xbd",
        };
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        int pair[2];

        /* a connection in its handshake (the other end never answers) is open enough to build messages */
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        assert_int_equal(sd_bus_new(&bus), 0);
        assert_int_equal(sd_bus_set_fd(bus, pair[0], pair[0]), 0);
        assert_int_equal(sd_bus_start(bus), 0);
        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                ClientRequest req = { .profile = "default", .workspace = "/home/user/ws", .name = strings[i] };
                bool valid = utf8_valid_dbus(strings[i], strlen(strings[i]));

                /* sd-bus's own verdict on the same string */
                assert_int_equal(sd_bus_message_new_method_call(bus, &m, "org.example", "/a", "org.example.I", "M"), 0);
                assert_int_equal(sd_bus_message_append(m, "s", strings[i]) >= 0, valid);
                if (valid)
                        assert_null(client_request_not_utf8(&req));
                else
                        assert_string_equal(client_request_not_utf8(&req), "name");
        }
        assert_true(utf8_valid_dbus("caf\xc3\xa9", 5));
        assert_false(utf8_valid_dbus("caf\xe9", 4));
        assert_false(utf8_valid_dbus("\xef\xbf\xbf", 3));
        assert_true(utf8_valid("\xef\xbf\xbf", 3));
        /* the first key in the request's order */
        ClientRequest req = { .profile = "p\xff", .workspace = "/w\xe9" };
        assert_string_equal(client_request_not_utf8(&req), "profile");
        req.profile = "default";
        assert_string_equal(client_request_not_utf8(&req), "workspace");
        (void) close(pair[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_request_utf8),
                cmocka_unit_test(test_with_sd_bus),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
