/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's terminal (docs/sandboxes.md, "A terminal"): the caller's side (sbxctl) and the exec helper share
 * one stream socket, given as the command's stdin, stdout and stderr. Towards the run it carries frames:
 * what is typed, and the caller's window size whenever it changes (SIGWINCH). From the run it carries
 * the pseudo-terminal's output as plain bytes (the output ceiling counts them as any run's output).
 *
 *   frame: type (1 byte), length (2 bytes, big-endian), then length bytes of payload
 *   TTY_FRAME_DATA     the bytes typed, 1..TTY_FRAME_PAYLOAD_MAX of them
 *   TTY_FRAME_WINSIZE  rows, cols: 2 bytes each, big-endian, both 1..TTY_SIZE_MAX
 *
 * Pure: no I/O here. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TTY_FRAME_HEADER 3U
#define TTY_FRAME_PAYLOAD_MAX 4096U
#define TTY_FRAME_MAX (TTY_FRAME_HEADER + TTY_FRAME_PAYLOAD_MAX)
#define TTY_SIZE_MAX 10000U

typedef enum TtyFrameType {
        TTY_FRAME_DATA = 1,
        TTY_FRAME_WINSIZE = 2,
        _TTY_FRAME_TYPE_MAX,
        _TTY_FRAME_TYPE_INVALID = -22,
} TtyFrameType;

typedef struct TtyFrame {
        TtyFrameType type;
        const uint8_t *data;   /* DATA: the bytes, valid until the decoder is fed again */
        size_t size;
        unsigned rows, cols;   /* WINSIZE */
} TtyFrame;

/* Bytes received, not yet made into frames: at most one frame's worth is kept. */
typedef struct TtyDecoder {
        uint8_t buf[TTY_FRAME_MAX];
        size_t used;
        size_t consumed;       /* of buf: the frames handed out */
} TtyDecoder;

/* One frame into buf (of size bytes). Returns the frame's length, -EINVAL for an empty or oversized
 * payload or a window size out of range, -ENOBUFS if buf is too small. */
int tty_frame_data(uint8_t *buf, size_t size, const void *data, size_t n);
int tty_frame_winsize(uint8_t *buf, size_t size, unsigned rows, unsigned cols);

/* How many of n bytes the decoder takes now (it holds at most one frame: feed the rest after
 * tty_decoder_next() has handed out what it has). */
size_t tty_decoder_feed(TtyDecoder *d, const void *p, size_t n);
/* The next whole frame: 1 with *ret set, 0 when more bytes are needed, -EBADMSG for a stream that is not
 * this protocol (an unknown type, a length out of range, a bad window size): nothing more can be read
 * from it. */
int tty_decoder_next(TtyDecoder *d, TtyFrame *ret);
