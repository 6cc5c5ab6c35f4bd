/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* D-Bus messages as bytes (the D-Bus specification's marshalling, in this machine's byte order), for a
 * client of sbxd's own socket that does without libsystemd: a method call built, with its file
 * descriptors, and a method return, error or signal read back. Only what that client needs: no
 * introspection, no type checking inside containers (the caller writes what it declared), no bus. Pure:
 * the socket is the caller's (wire-socket.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_DEPTH_MAX 16U
#define WIRE_FDS_MAX 16U
#define WIRE_MESSAGE_MAX (64U * 1024U * 1024U)   /* a message read: at most this, in all */

enum {
        WIRE_METHOD_CALL = 1,
        WIRE_METHOD_RETURN = 2,
        WIRE_ERROR = 3,
        WIRE_SIGNAL = 4,
};

#define WIRE_FLAG_NO_REPLY_EXPECTED 0x1

typedef struct WireFrame {
        char type;             /* 'a', 'e' (a dict entry), 'r' (a struct), 'v' */
        size_t len_at;         /* 'a': where its length goes */
        size_t start;          /* 'a': where its first element starts */
} WireFrame;

/* A message's body, written in order; errors stick (the first -errno is returned by wire_call_build()). */
typedef struct WireWriter {
        uint8_t *buf;
        size_t len, cap;
        char sig[256];         /* the body's signature: what was appended at the top level */
        size_t sig_len;
        WireFrame stack[WIRE_DEPTH_MAX];
        unsigned depth;
        int fds[WIRE_FDS_MAX]; /* 'h' values are indexes into these; not owned */
        unsigned n_fds;
        int error;
} WireWriter;

void wire_writer_done(WireWriter *w);

/* A value of a basic type: y b q u i t x (p points to a uint8_t, bool, uint16_t, uint32_t, int32_t,
 * uint64_t, int64_t), s o g (p is the string), h (p points to an int: the descriptor, sent with the
 * message). */
void wire_append_basic(WireWriter *w, char type, const void *p);
/* A container: 'a' with its element's type ("{sv}", "y", "s"), 'e' "sv" (in an a{..}), 'r' (a struct,
 * contents ignored), 'v' with the type of its value; wire_close() ends the innermost. */
void wire_open(WireWriter *w, char type, const char *contents);
void wire_close(WireWriter *w);
/* An "ay" of n bytes. */
void wire_append_bytes(WireWriter *w, const void *p, size_t n);
/* An "as" of the strings in l (NULL-terminated; NULL: empty). */
void wire_append_strv(WireWriter *w, char **l);

/* The whole method call, header and body (every container closed), in *ret (malloc'd) and *ret_len.
 * destination may be NULL. 0 or -errno (-EINVAL: a container left open, a value of an unknown type). */
int wire_call_build(WireWriter *body, uint32_t serial, uint8_t flags, const char *destination, const char *path,
                    const char *interface, const char *member, uint8_t **ret, size_t *ret_len);

/* A message read: pointers into its bytes (which the caller keeps). */
typedef struct WireMessage {
        uint8_t type, flags;
        uint32_t serial, reply_serial, n_fds;
        const char *path, *interface, *member, *error_name, *destination, *sender, *signature;
        const uint8_t *body;
        size_t body_len;
} WireMessage;

/* From a message's first 16 bytes: its whole length. 0, -EBADMSG (not a message of ours: another byte
 * order, another protocol version, a length beyond WIRE_MESSAGE_MAX). */
int wire_message_size(const uint8_t head[static 16], size_t *ret);
/* One whole message (len as wire_message_size() said): its header parsed. 0 or -EBADMSG. */
int wire_message_parse(const uint8_t *buf, size_t len, WireMessage *ret);
/* Its body's strings, when its signature is exactly as many "s" as given (1 or 2; b may be NULL for one).
 * 0, or -EBADMSG (another signature, a string out of bounds or without its NUL). */
int wire_read_strings(const WireMessage *m, const char **a, const char **b);
/* The same for n strings (1 to WIRE_STRINGS_MAX), into ret[0..n-1]. 0, -EBADMSG, -EINVAL (n out of range). */
#define WIRE_STRINGS_MAX 8U
int wire_read_string_list(const WireMessage *m, unsigned n, const char **ret);
