/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* D-Bus marshalling (wire.h), after the D-Bus specification, "Message Protocol": every value aligned to
 * its size from the start of the message (the body starts on 8), arrays as a 32-bit length and their
 * elements, structs and dict entries on 8, variants as their signature and value. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define WIRE_ENDIAN 'l'
#else
#define WIRE_ENDIAN 'B'
#endif

/* header field codes */
enum {
        FIELD_PATH = 1,
        FIELD_INTERFACE = 2,
        FIELD_MEMBER = 3,
        FIELD_ERROR_NAME = 4,
        FIELD_REPLY_SERIAL = 5,
        FIELD_DESTINATION = 6,
        FIELD_SENDER = 7,
        FIELD_SIGNATURE = 8,
        FIELD_UNIX_FDS = 9,
};

static size_t align_of(char type) {
        switch (type) {
        case 'y': case 'g': case 'v':
                return 1;
        case 'q':
                return 2;
        case 'b': case 'u': case 'i': case 'h': case 's': case 'o': case 'a':
                return 4;
        case 't': case 'x': case 'd': case 'r': case 'e': case '(': case '{':
                return 8;
        default:
                return 0;
        }
}

void wire_writer_done(WireWriter *w) {
        free(w->buf);
        *w = (WireWriter) {};
}

static void put(WireWriter *w, const void *p, size_t n) {
        if (w->error)
                return;
        if (w->len + n > WIRE_MESSAGE_MAX) {
                w->error = -E2BIG;
                return;
        }
        if (w->len + n > w->cap) {
                size_t cap = w->cap * 2 > w->len + n ? w->cap * 2 : w->len + n + 256;
                uint8_t *b = realloc(w->buf, cap);

                if (!b) {
                        w->error = -ENOMEM;
                        return;
                }
                w->buf = b;
                w->cap = cap;
        }
        if (p)
                memcpy(w->buf + w->len, p, n);
        else
                memset(w->buf + w->len, 0, n);
        w->len += n;
}

static void pad(WireWriter *w, size_t a) {
        if (a > 1 && w->len % a)
                put(w, NULL, a - w->len % a);
}

/* A type appended at the top level goes into the body's signature. */
static void sig_add(WireWriter *w, const char *s, size_t n) {
        if (w->depth > 0 || w->error)
                return;
        if (w->sig_len + n >= sizeof w->sig) {
                w->error = -E2BIG;
                return;
        }
        memcpy(w->sig + w->sig_len, s, n);
        w->sig_len += n;
        w->sig[w->sig_len] = 0;
}

static void put_string(WireWriter *w, const char *s) {
        size_t n = strlen(s);
        uint32_t l = (uint32_t) n;

        pad(w, 4);
        put(w, &l, 4);
        put(w, s, n + 1);
}

void wire_append_basic(WireWriter *w, char type, const void *p) {
        char t[2] = { type, 0 };

        sig_add(w, t, 1);
        pad(w, align_of(type));
        switch (type) {
        case 'y':
                put(w, p, 1);
                break;
        case 'b': {
                uint32_t v = *(const bool *) p;
                put(w, &v, 4);
                break;
        }
        case 'q':
                put(w, p, 2);
                break;
        case 'u': case 'i':
                put(w, p, 4);
                break;
        case 't': case 'x':
                put(w, p, 8);
                break;
        case 's': case 'o':
                put_string(w, p);
                break;
        case 'g': {
                size_t n = strlen(p);
                uint8_t l = (uint8_t) n;

                if (n > 255) {
                        w->error = w->error ?: -EINVAL;
                        return;
                }
                put(w, &l, 1);
                put(w, p, n + 1);
                break;
        }
        case 'h': {
                uint32_t idx = w->n_fds;

                if (w->n_fds >= WIRE_FDS_MAX) {
                        w->error = w->error ?: -E2BIG;
                        return;
                }
                w->fds[w->n_fds++] = *(const int *) p;
                put(w, &idx, 4);
                break;
        }
        default:
                w->error = w->error ?: -EINVAL;
        }
}

void wire_open(WireWriter *w, char type, const char *contents) {
        WireFrame *f;

        if (w->depth >= WIRE_DEPTH_MAX) {
                w->error = w->error ?: -E2BIG;
                return;
        }
        if (type == 'a') {
                char t = 'a';

                sig_add(w, &t, 1);
                sig_add(w, contents, strlen(contents));
        } else if (type == 'v')
                sig_add(w, "v", 1);
        else if (type != 'e' && type != 'r') {
                w->error = w->error ?: -EINVAL;
                return;
        }
        f = &w->stack[w->depth];
        *f = (WireFrame) { .type = type };
        switch (type) {
        case 'a': {
                uint32_t zero = 0;
                size_t a = align_of(contents[0] == '{' ? 'e' : contents[0]);

                if (a == 0) {
                        w->error = w->error ?: -EINVAL;
                        return;
                }
                pad(w, 4);
                f->len_at = w->len;
                put(w, &zero, 4);
                pad(w, a);       /* the padding before the first element is not counted in the length */
                f->start = w->len;
                break;
        }
        case 'e': case 'r':
                pad(w, 8);
                break;
        case 'v':
                wire_append_basic(w, 'g', contents);
                /* the variant's own signature is not the body's: undo what wire_append_basic() added */
                if (w->depth == 0 && w->sig_len > 0)
                        w->sig[--w->sig_len] = 0;
                break;
        }
        w->depth++;
}

void wire_close(WireWriter *w) {
        WireFrame *f;

        if (w->depth == 0) {
                w->error = w->error ?: -EINVAL;
                return;
        }
        f = &w->stack[--w->depth];
        if (f->type == 'a' && !w->error) {
                uint32_t n = (uint32_t) (w->len - f->start);

                memcpy(w->buf + f->len_at, &n, 4);
        }
}

void wire_append_bytes(WireWriter *w, const void *p, size_t n) {
        wire_open(w, 'a', "y");
        if (n > 0)
                put(w, p, n);
        wire_close(w);
}

void wire_append_strv(WireWriter *w, char **l) {
        wire_open(w, 'a', "s");
        for (char **i = l; i && *i; i++)
                wire_append_basic(w, 's', *i);
        wire_close(w);
}

static void header_field(WireWriter *h, uint8_t code, char type, const void *value) {
        char t[2] = { type, 0 };

        wire_open(h, 'r', NULL);
        wire_append_basic(h, 'y', &code);
        wire_open(h, 'v', t);
        wire_append_basic(h, type, value);
        wire_close(h);
        wire_close(h);
}

int wire_call_build(WireWriter *body, uint32_t serial, uint8_t flags, const char *destination, const char *path,
                    const char *interface, const char *member, uint8_t **ret, size_t *ret_len) {
        WireWriter h = {};
        uint8_t fixed[4] = { WIRE_ENDIAN, WIRE_METHOD_CALL, flags, 1 };
        uint32_t body_len = (uint32_t) body->len, n_fds = body->n_fds;
        int r;

        if (body->error)
                return body->error;
        if (body->depth != 0)
                return -EINVAL;
        put(&h, fixed, 4);
        put(&h, &body_len, 4);
        put(&h, &serial, 4);
        wire_open(&h, 'a', "(yv)");
        header_field(&h, FIELD_PATH, 'o', path);
        if (interface)
                header_field(&h, FIELD_INTERFACE, 's', interface);
        header_field(&h, FIELD_MEMBER, 's', member);
        if (destination)
                header_field(&h, FIELD_DESTINATION, 's', destination);
        if (body->sig_len > 0)
                header_field(&h, FIELD_SIGNATURE, 'g', body->sig);
        if (n_fds > 0)
                header_field(&h, FIELD_UNIX_FDS, 'u', &n_fds);
        wire_close(&h);
        pad(&h, 8);
        put(&h, body->buf, body->len);
        r = h.error;
        if (r < 0) {
                wire_writer_done(&h);
                return r;
        }
        *ret = h.buf;
        *ret_len = h.len;
        return 0;
}

/* ---- reading ----------------------------------------------------------------------------------------- */

static uint32_t u32_at(const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, 4);
        return v;
}

int wire_message_size(const uint8_t head[static 16], size_t *ret) {
        uint64_t body, fields, total;

        if (head[0] != WIRE_ENDIAN || head[3] != 1)
                return -EBADMSG;
        body = u32_at(head + 4);
        fields = u32_at(head + 12);
        total = 16 + ((fields + 7) & ~UINT64_C(7)) + body;
        if (total > WIRE_MESSAGE_MAX)
                return -EBADMSG;
        *ret = (size_t) total;
        return 0;
}

/* A string of type s or o at *i (aligned to 4 first), or g; its end in *i. NULL if out of bounds. */
static const char *read_str(const uint8_t *buf, size_t end, size_t *i, char type) {
        size_t n, at = *i;

        if (type == 'g') {
                if (at >= end)
                        return NULL;
                n = buf[at++];
        } else {
                at = (at + 3) & ~(size_t) 3;
                if (at + 4 > end)
                        return NULL;
                n = u32_at(buf + at);
                at += 4;
        }
        if (at > end || n >= end - at || buf[at + n] != 0 || memchr(buf + at, 0, n))
                return NULL;
        *i = at + n + 1;
        return (const char *) buf + at;
}

int wire_message_parse(const uint8_t *buf, size_t len, WireMessage *ret) {
        WireMessage m = {};
        size_t total, i = 16, end;
        int r;

        if (len < 16)
                return -EBADMSG;
        r = wire_message_size(buf, &total);
        if (r < 0 || total != len)
                return -EBADMSG;
        m.type = buf[1];
        m.flags = buf[2];
        m.body_len = u32_at(buf + 4);
        m.serial = u32_at(buf + 8);
        end = 16 + u32_at(buf + 12);
        while (i < end) {
                const char *sig;
                uint8_t code;

                i = (i + 7) & ~(size_t) 7;
                if (i + 1 > end)
                        return -EBADMSG;
                code = buf[i++];
                sig = read_str(buf, end, &i, 'g');
                if (!sig || strlen(sig) != 1)
                        return -EBADMSG;
                switch (sig[0]) {
                case 's': case 'o': case 'g': {
                        const char *v = read_str(buf, end, &i, sig[0]);

                        if (!v)
                                return -EBADMSG;
                        if (code == FIELD_PATH)
                                m.path = v;
                        else if (code == FIELD_INTERFACE)
                                m.interface = v;
                        else if (code == FIELD_MEMBER)
                                m.member = v;
                        else if (code == FIELD_ERROR_NAME)
                                m.error_name = v;
                        else if (code == FIELD_DESTINATION)
                                m.destination = v;
                        else if (code == FIELD_SENDER)
                                m.sender = v;
                        else if (code == FIELD_SIGNATURE)
                                m.signature = v;
                        break;
                }
                case 'u': {
                        uint32_t v;

                        i = (i + 3) & ~(size_t) 3;
                        if (i + 4 > end)
                                return -EBADMSG;
                        v = u32_at(buf + i);
                        i += 4;
                        if (code == FIELD_REPLY_SERIAL)
                                m.reply_serial = v;
                        else if (code == FIELD_UNIX_FDS)
                                m.n_fds = v;
                        break;
                }
                default:
                        return -EBADMSG; /* no field of another type is defined */
                }
        }
        i = (end + 7) & ~(size_t) 7;
        if (i + m.body_len != len)
                return -EBADMSG;
        m.body = buf + i;
        *ret = m;
        return 0;
}

int wire_read_string_list(const WireMessage *m, unsigned n, const char **ret) {
        char want[WIRE_STRINGS_MAX + 1];
        size_t i = 0;

        if (n == 0 || n > WIRE_STRINGS_MAX)
                return -EINVAL;
        memset(want, 's', n);
        want[n] = 0;
        if (!m->signature || strcmp(m->signature, want) != 0)
                return -EBADMSG;
        /* offsets from the body's start, which is 8-aligned in the message */
        for (unsigned k = 0; k < n; k++) {
                ret[k] = read_str(m->body, m->body_len, &i, 's');
                if (!ret[k])
                        return -EBADMSG;
        }
        return 0;
}

int wire_read_strings(const WireMessage *m, const char **a, const char **b) {
        const char *s[2];
        int r;

        r = wire_read_string_list(m, b ? 2 : 1, s);
        if (r < 0)
                return r;
        *a = s[0];
        if (b)
                *b = s[1];
        return 0;
}
