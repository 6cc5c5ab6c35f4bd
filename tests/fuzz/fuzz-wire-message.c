/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* D-Bus messages as sbxctl reads them on sbxd's own socket (src/wire): the bytes a connection has read are
 * taken apart into whole messages (wire_conn_next()), each one's header parsed and its body's strings read.
 * Whatever the bytes, each message is either refused (-EBADMSG, and nothing more is read from the
 * connection) or parsed with every string it points to NUL-terminated inside its own bytes; and a method
 * call built from what was parsed (wire_call_build()) parses back to the same fields. */
#include <errno.h>

#include "fuzz.h"
#include "wire-socket.h"
#include "wire.h"

static bool inside(const char *s, const uint8_t *buf, size_t len) {
        const uint8_t *p = (const uint8_t *) s;

        return !s || (p >= buf && p < buf + len && memchr(p, 0, (size_t) (buf + len - p)));
}

/* A method call of the same path, interface, member, destination, serial and flags, with the strings read
 * from the body as its body: it parses back to them. */
static void check_round_trip(const WireMessage *m, const char *a, const char *b) {
        WireWriter w = {};
        WireMessage back;
        uint8_t *msg = NULL;
        const char *a2 = NULL, *b2 = NULL;
        size_t len;

        if (!m->path || !m->member)
                return;
        if (a)
                wire_append_basic(&w, 's', a);
        if (b)
                wire_append_basic(&w, 's', b);
        if (wire_call_build(&w, m->serial, m->flags, m->destination, m->path, m->interface, m->member, &msg,
                            &len) < 0) {
                wire_writer_done(&w);
                return; /* out of memory, or a field beyond what a header holds */
        }
        fuzz_check(wire_message_parse(msg, len, &back) == 0);
        fuzz_check(back.type == WIRE_METHOD_CALL && back.serial == m->serial && back.flags == m->flags);
        fuzz_check(strcmp(back.path, m->path) == 0 && strcmp(back.member, m->member) == 0);
        fuzz_check(!m->interface == !back.interface && (!m->interface || strcmp(back.interface, m->interface) == 0));
        fuzz_check(!m->destination == !back.destination &&
                   (!m->destination || strcmp(back.destination, m->destination) == 0));
        if (a) {
                fuzz_check(wire_read_strings(&back, &a2, b ? &b2 : NULL) == 0);
                fuzz_check(strcmp(a, a2) == 0 && (!b || strcmp(b, b2) == 0));
        } else
                fuzz_check(back.body_len == 0 && !back.signature);
        free(msg);
        wire_writer_done(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        WireConn c = WIRE_CONN_INIT;
        WireMessage m;
        int r;

        /* as if the socket had brought these bytes */
        c.in = malloc(size ?: 1);
        if (!c.in)
                return 0;
        memcpy(c.in, data, size);
        c.in_len = c.in_cap = size;

        while ((r = wire_conn_next(&c, &m)) > 0) {
                size_t len = (size_t) (m.body - c.msg) + m.body_len;
                const char *a = NULL, *b = NULL, *x[3];

                fuzz_check(m.body >= c.msg && len <= size);
                fuzz_check(inside(m.path, c.msg, len) && inside(m.interface, c.msg, len) &&
                           inside(m.member, c.msg, len) && inside(m.error_name, c.msg, len) &&
                           inside(m.destination, c.msg, len) && inside(m.sender, c.msg, len) &&
                           inside(m.signature, c.msg, len));
                if (wire_read_strings(&m, &a, &b) == 0)
                        fuzz_check(inside(a, m.body, m.body_len) && inside(b, m.body, m.body_len));
                else if (wire_read_strings(&m, &a, NULL) == 0)
                        fuzz_check(inside(a, m.body, m.body_len));
                else
                        a = NULL;
                /* an exec's end: three strings, each inside the body */
                if (wire_read_string_list(&m, 3, x) == 0)
                        for (int i = 0; i < 3; i++)
                                fuzz_check(inside(x[i], m.body, m.body_len));
                check_round_trip(&m, a, b);
        }
        fuzz_check(r == 0 || r == -EBADMSG || r == -ENOMEM);
        wire_conn_done(&c);
        return 0;
}
