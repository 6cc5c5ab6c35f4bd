/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The a{sv} of Run's and CreateSandbox's request and of Exec's options (sbxd/bus-fields.c): the input
 * describes a method call (keys, variant types, values, repeats, unknown keys), which is built with
 * sd-bus as a caller's would be, sealed and read back by bus_read_fields() with a table of the shape of
 * sbxd's (docs/dbus.md): every reader kind, a validated string, a bounded unsigned, keys skipped by a
 * flag. A call is decoded or refused with a named one-line error; nothing in between. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-errors.h"
#include "bus-fields.h"
#include "fuzz.h"
#include "macro.h"
#include "record.h"

typedef struct Request {
        char *profile, *workspace, *network, *term, *name;
        uint64_t memory, tasks, timeout_usec;
        unsigned cpu_percent;
        bool detach;
} Request;

#define ONLY_SANDBOX 1u
#define ONLY_RUN 2u

static const BusField fields[] = {
        { "profile",      bus_field_string,       offsetof(Request, profile) },
        { "workspace",    bus_field_string,       offsetof(Request, workspace) },
        { "network",      bus_field_string,       offsetof(Request, network) },
        { "term",         bus_field_string,       offsetof(Request, term), ONLY_RUN },
        { "memory",       bus_field_u64_positive, offsetof(Request, memory) },
        { "tasks",        bus_field_u64_positive, offsetof(Request, tasks), .max = 1u << 22 },
        { "timeout_usec", bus_field_u64_positive, offsetof(Request, timeout_usec) },
        { "cpu_percent",  bus_field_unsigned,     offsetof(Request, cpu_percent), .max = 100000 },
        { "detach",       bus_field_bool,         offsetof(Request, detach), ONLY_SANDBOX },
        { "name",         bus_field_string,       offsetof(Request, name), ONLY_SANDBOX,
          .valid = sandbox_name_is_valid, .expected = "a sandbox name" },
        {}
};

static sd_bus *bus;
static int fd_null = -EBADF;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        int sv[2];

        /* a bus that is not connected to anything: enough to make and read messages */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || sd_bus_new(&bus) < 0 ||
            sd_bus_set_fd(bus, sv[0], sv[0]) < 0 || sd_bus_start(bus) < 0)
                abort();
        fd_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd_null < 0)
                abort();
        return 0;
}

typedef struct Input {
        const uint8_t *p;
        size_t n;
} Input;

static uint8_t take_byte(Input *in) {
        uint8_t b = 0;

        if (in->n > 0) {
                b = *in->p++;
                in->n--;
        }
        return b;
}

static uint64_t take_u64(Input *in) {
        uint64_t v = 0;

        for (int i = 0; i < 8; i++)
                v = v << 8 | take_byte(in);
        return v;
}

/* A string of the input: a length byte, then that many bytes (up to the first NUL). */
static char *take_string(Input *in) {
        size_t len = take_byte(in);
        char *s;

        len = MIN(len, in->n);
        s = fuzz_strndup(in->p, len);

        in->p += len;
        in->n -= len;
        return s;
}

static int append_value(sd_bus_message *m, Input *in) {
        _cleanup_free_ char *s = NULL;
        int r;

        switch (take_byte(in) % 8) {
        case 0:
                s = take_string(in);
                return sd_bus_message_append(m, "v", "s", s);
        case 1:
                return sd_bus_message_append(m, "v", "t", take_u64(in));
        case 2:
                return sd_bus_message_append(m, "v", "b", (int) (take_byte(in) & 1));
        case 3:
                return sd_bus_message_append(m, "v", "u", (uint32_t) take_u64(in));
        case 4:
                return sd_bus_message_append(m, "v", "h", fd_null);
        case 5: /* as */
                r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "s");
                for (uint8_t k = take_byte(in) % 8; r >= 0 && k > 0; k--) {
                        _cleanup_free_ char *e = take_string(in);
                        r = sd_bus_message_append(m, "s", e);
                }
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r;
        case 6: /* a{sh} */
                r = sd_bus_message_open_container(m, 'v', "a{sh}");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "{sh}");
                for (uint8_t k = take_byte(in) % 8; r >= 0 && k > 0; k--) {
                        _cleanup_free_ char *e = take_string(in);
                        r = sd_bus_message_append(m, "{sh}", e, fd_null);
                }
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r;
        default:
                return sd_bus_message_append(m, "v", "i", (int32_t) take_u64(in));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Input in = { data, size };
        Request req = {};
        unsigned skip;
        int r;

        skip = take_byte(&in) & 1 ? ONLY_RUN : ONLY_SANDBOX;
        if (sd_bus_message_new_method_call(bus, &m, "org.sbx.Manager1", "/org/sbx/Manager1", "org.sbx.Manager1",
                                           "Run") < 0 ||
            sd_bus_message_open_container(m, 'a', "{sv}") < 0)
                abort();
        for (uint8_t n = take_byte(&in) % 16; n > 0 && in.n > 0; n--) {
                _cleanup_free_ char *key = NULL;
                uint8_t k = take_byte(&in);

                key = k < ELEMENTSOF(fields) - 1 ? strdup(fields[k].name) : take_string(&in);
                if (!key)
                        abort();
                /* sd-bus refuses what is not a valid call (a string that is not UTF-8): nothing to read */
                if (sd_bus_message_open_container(m, 'e', "sv") < 0 || sd_bus_message_append(m, "s", key) < 0 ||
                    append_value(m, &in) < 0 || sd_bus_message_close_container(m) < 0)
                        return 0;
        }
        if (sd_bus_message_close_container(m) < 0 || sd_bus_message_append(m, "s", "after") < 0 ||
            sd_bus_message_seal(m, 1, 0) < 0 || sd_bus_message_rewind(m, true) < 0)
                return 0;

        r = bus_read_fields(m, fields, skip, &req, "request", &error);
        if (r >= 0) {
                const char *after = NULL;

                /* the whole array was read: the next argument comes next */
                fuzz_check(!sd_bus_error_is_set(&error));
                fuzz_check(sd_bus_message_read(m, "s", &after) > 0 && streq(after, "after"));
                fuzz_check(!req.name || sandbox_name_is_valid(req.name));
                fuzz_check(req.cpu_percent <= 100000);
                fuzz_check(req.tasks <= 1u << 22);
        } else if (sd_bus_error_is_set(&error)) {
                fuzz_check(streq(error.name, ERR_INVALID));
                fuzz_check_one_line(error.message);
        } else
                /* only the message itself may fail without a named error, and never here: it is well-formed */
                fuzz_check(r == -ENOMEM);

        free(req.profile);
        free(req.workspace);
        free(req.network);
        free(req.term);
        free(req.name);
        return 0;
}
