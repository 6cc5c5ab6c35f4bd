/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "tty-proto.h"

static void put_be16(uint8_t *p, unsigned v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static unsigned get_be16(const uint8_t *p) {
        return (unsigned) p[0] << 8 | p[1];
}

static int frame_put(uint8_t *buf, size_t size, TtyFrameType type, const void *payload, size_t n) {
        if (size < TTY_FRAME_HEADER + n)
                return -ENOBUFS;
        buf[0] = (uint8_t) type;
        put_be16(buf + 1, (unsigned) n);
        memcpy(buf + TTY_FRAME_HEADER, payload, n);
        return (int) (TTY_FRAME_HEADER + n);
}

int tty_frame_data(uint8_t *buf, size_t size, const void *data, size_t n) {
        if (n == 0 || n > TTY_FRAME_PAYLOAD_MAX)
                return -EINVAL;
        return frame_put(buf, size, TTY_FRAME_DATA, data, n);
}

static bool size_valid(unsigned v) {
        return v >= 1 && v <= TTY_SIZE_MAX;
}

int tty_frame_winsize(uint8_t *buf, size_t size, unsigned rows, unsigned cols) {
        uint8_t p[4];

        if (!size_valid(rows) || !size_valid(cols))
                return -EINVAL;
        put_be16(p, rows);
        put_be16(p + 2, cols);
        return frame_put(buf, size, TTY_FRAME_WINSIZE, p, sizeof(p));
}

size_t tty_decoder_feed(TtyDecoder *d, const void *p, size_t n) {
        size_t k;

        /* what was handed out goes first */
        if (d->consumed > 0) {
                memmove(d->buf, d->buf + d->consumed, d->used - d->consumed);
                d->used -= d->consumed;
                d->consumed = 0;
        }
        k = sizeof(d->buf) - d->used;
        if (k > n)
                k = n;
        memcpy(d->buf + d->used, p, k);
        d->used += k;
        return k;
}

int tty_decoder_next(TtyDecoder *d, TtyFrame *ret) {
        const uint8_t *h = d->buf + d->consumed;
        size_t avail = d->used - d->consumed;
        unsigned len;

        if (avail < TTY_FRAME_HEADER)
                return 0;
        len = get_be16(h + 1);
        switch (h[0]) {
        case TTY_FRAME_DATA:
                if (len == 0 || len > TTY_FRAME_PAYLOAD_MAX)
                        return -EBADMSG;
                break;
        case TTY_FRAME_WINSIZE:
                if (len != 4)
                        return -EBADMSG;
                break;
        default:
                return -EBADMSG;
        }
        if (avail < TTY_FRAME_HEADER + len)
                return 0;
        *ret = (TtyFrame) { .type = (TtyFrameType) h[0] };
        if (h[0] == TTY_FRAME_WINSIZE) {
                ret->rows = get_be16(h + 3);
                ret->cols = get_be16(h + 5);
                if (!size_valid(ret->rows) || !size_valid(ret->cols))
                        return -EBADMSG;
        } else {
                ret->data = h + TTY_FRAME_HEADER;
                ret->size = len;
        }
        d->consumed += TTY_FRAME_HEADER + len;
        return 1;
}
