/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run's and CreateSandbox's request (sbxd/bus-fields.c, then src/plan/policy.c): the input describes a
 * method call (keys, variant types, values, repeats, unknown keys; then the command line), which is built
 * with sd-bus as a caller's would be, sealed and read back by bus_read_fields() with a table of the shape of
 * sbxd's request table (docs/dbus.md: every reader kind, a validated string, a bounded unsigned, keys
 * skipped by a flag). A call is decoded or refused with a named one-line error, nothing in between; what is
 * decoded is then validated against a profile that lets a caller set everything (run_request_validate())
 * and, if valid, compiled into a run's plan, as sbxd does next. */
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
#include "policy.h"
#include "proptable.h"
#include "record.h"

#define ONLY_SANDBOX 1u
#define ONLY_RUN 2u

static const BusField fields[] = {
        { "profile",           bus_field_string,       offsetof(RunRequest, profile) },
        { "workspace",         bus_field_string,       offsetof(RunRequest, workspace) },
        { "dataset",           bus_field_string,       offsetof(RunRequest, dataset) },
        { "network",           bus_field_string,       offsetof(RunRequest, network) },
        { "term",              bus_field_string,       offsetof(RunRequest, term), ONLY_RUN },
        { "memory",            bus_field_u64_positive, offsetof(RunRequest, memory_max) },
        { "tasks",             bus_field_u64_positive, offsetof(RunRequest, tasks_max) },
        { "timeout_usec",      bus_field_u64_positive, offsetof(RunRequest, runtime_max) },
        { "cpu_percent",       bus_field_unsigned,     offsetof(RunRequest, cpu_quota_percent), .max = 100000 },
        { "image",             bus_field_string,       offsetof(RunRequest, image) },
        { "idle_timeout_usec", bus_field_u64_positive, offsetof(RunRequest, idle_timeout), ONLY_SANDBOX },
        { "detach",            bus_field_bool,         offsetof(RunRequest, detach), ONLY_SANDBOX },
        { "name",              bus_field_string,       offsetof(RunRequest, sandbox_name), ONLY_SANDBOX,
          .valid = sandbox_name_is_valid, .expected = "a sandbox name" },
        {}
};

/* A profile that offers a caller every option: workspace, dataset, narrower network, lower limits. */
static const char profile_json[] =
        "{\"version\": 1, \"description\": \"fuzz\", \"files\": {\"workspace\": \"writable\"},"
        " \"network\": {\"mode\": \"public\"},"
        " \"resources\": {\"memory\": \"2G\", \"tasks\": 512, \"wall_time\": \"1h\", \"cpu\": \"200%\"},"
        " \"request\": {\"memory\": {\"min\": \"16M\"}, \"tasks\": {\"min\": 4}, \"wall_time\": {\"min\": \"1s\"},"
        "             \"cpu\": {\"min\": \"10%\"}, \"network\": [\"none\"],"
        "             \"dataset\": {\"under\": [\"/home\", \"/srv\", \"/tmp\"]}}}";
static Profile *profile;

static sd_bus *bus;
static int fd_null = -EBADF;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        int sv[2];

        /* a bus that is not connected to anything: enough to make and read messages */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || sd_bus_new(&bus) < 0 ||
            sd_bus_set_fd(bus, sv[0], sv[0]) < 0 || sd_bus_start(bus) < 0)
                abort();
        fd_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd_null < 0 || profile_parse(profile_json, strlen(profile_json), "fuzz", NULL, &profile, NULL) < 0)
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

/* What sbxd does with a decoded request next: the pure checks, and the plan if they pass. */
static void validate(RunRequest *req) {
        _cleanup_(run_plan_freep) RunPlan *plan = NULL;
        _cleanup_free_ char *error = NULL, *compile_error = NULL;
        int r;

        if (req->profile && !streq(req->profile, "fuzz"))
                return;
        /* These messages quote the caller's paths as given (a newline too): sbxd escapes what it logs
         * (method_start()), and the caller gets back what it sent. */
        r = run_request_validate(profile, req, &error);
        if (r < 0) {
                fuzz_check(r == -EPERM || r == -EINVAL || r == -E2BIG || r == -ENOMEM);
                fuzz_check(r == -ENOMEM || (error && *error));
                return;
        }
        fuzz_check(!error);
        req->run_id = strdup("0123456789abcdef0123456789abcdef");
        req->netns_path = strdup("/run/sbx/netns/0123456789abcdef0123456789abcdef");
        if (!req->run_id || !req->netns_path)
                return;
        r = policy_compile(profile, req, "/usr/libexec/sbx/sbx-exec", &plan, &compile_error);
        if (r >= 0) {
                _cleanup_free_ char *text = NULL;

                fuzz_check(plan && !compile_error);
                fuzz_check(prop_table_render_text(plan->props, &text) >= 0);
        } else
                fuzz_check(r == -ENOMEM || (compile_error && *compile_error));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(run_request_freep) RunRequest *req = calloc(1, sizeof(RunRequest));
        Input in = { data, size };
        bool sandbox;
        int r;

        if (!req)
                abort();
        sandbox = take_byte(&in) & 1;
        if (sd_bus_message_new_method_call(bus, &m, "org.sbx.Manager1", "/org/sbx/Manager1", "org.sbx.Manager1",
                                           sandbox ? "CreateSandbox" : "Run") < 0 ||
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
        if (sd_bus_message_close_container(m) < 0 || sd_bus_message_open_container(m, 'a', "s") < 0)
                return 0;
        /* the command line: the rest of the input, NUL-separated */
        for (size_t i = 0; i < 64 && in.n > 0; i++) {
                size_t len = strnlen((const char *) in.p, in.n);
                _cleanup_free_ char *arg = fuzz_strndup(in.p, len);

                in.p += MIN(len + 1, in.n);
                in.n -= MIN(len + 1, in.n);
                if (sd_bus_message_append(m, "s", arg) < 0)
                        return 0;
        }
        if (sd_bus_message_close_container(m) < 0 || sd_bus_message_seal(m, 1, 0) < 0 ||
            sd_bus_message_rewind(m, true) < 0)
                return 0;

        r = bus_read_fields(m, fields, sandbox ? ONLY_RUN : ONLY_SANDBOX, req, "request", &error);
        if (r < 0) {
                if (sd_bus_error_is_set(&error)) {
                        fuzz_check(streq(error.name, ERR_INVALID));
                        fuzz_check_one_line(error.message);
                } else
                        /* only the message itself may fail without a named error, and never here: it is
                         * well-formed */
                        fuzz_check(r == -ENOMEM);
                return 0;
        }
        /* the whole array was read: the command line comes next */
        fuzz_check(!sd_bus_error_is_set(&error));
        fuzz_check(!req->sandbox_name || sandbox_name_is_valid(req->sandbox_name));
        fuzz_check(req->cpu_quota_percent <= 100000);
        fuzz_check(sd_bus_message_read_strv(m, &req->argv) >= 0);
        req->sandbox = sandbox;
        if (sandbox)
                req->argv = strv_free(req->argv);
        validate(req);
        return 0;
}
