/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keys of a Run, CreateSandbox or Exec request, as sbxctl and sbx-mcp send them. */
#include <string.h>

#include "client-request.h"
#include "macro.h"

typedef enum RequestKind {
        REQUEST_STRING,
        REQUEST_U64,
        REQUEST_BOOL,
} RequestKind;

typedef struct RequestKey {
        const char *key;
        RequestKind kind;
        size_t offset;
} RequestKey;

/* In the order sbxd's documentation lists them; a key is sent only when set (a string, a number above 0, true) */
static const RequestKey request_keys[] = {
        { "profile",           REQUEST_STRING, offsetof(ClientRequest, profile) },
        { "workspace",         REQUEST_STRING, offsetof(ClientRequest, workspace) },
        { "dataset",           REQUEST_STRING, offsetof(ClientRequest, dataset) },
        { "image",             REQUEST_STRING, offsetof(ClientRequest, image) },
        { "network",           REQUEST_STRING, offsetof(ClientRequest, network) },
        { "cpu_percent",       REQUEST_U64,    offsetof(ClientRequest, cpu_percent) },
        { "memory",            REQUEST_U64,    offsetof(ClientRequest, memory) },
        { "tasks",             REQUEST_U64,    offsetof(ClientRequest, tasks) },
        { "timeout_usec",      REQUEST_U64,    offsetof(ClientRequest, timeout) },
        { "term",              REQUEST_STRING, offsetof(ClientRequest, term) },
        { "idle_timeout_usec", REQUEST_U64,    offsetof(ClientRequest, idle_timeout) },
        { "name",              REQUEST_STRING, offsetof(ClientRequest, name) },
        { "detach",            REQUEST_BOOL,   offsetof(ClientRequest, detach) },
        { "wait_cleanup",      REQUEST_BOOL,   offsetof(ClientRequest, wait_cleanup) },
};

int client_request_append(sd_bus_message *m, const ClientRequest *req) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(request_keys); i++) {
                const RequestKey *k = &request_keys[i];
                const void *p = (const uint8_t *) req + k->offset;

                switch (k->kind) {
                case REQUEST_STRING:
                        if (*(const char *const *) p)
                                r = sd_bus_message_append(m, "{sv}", k->key, "s", *(const char *const *) p);
                        break;
                case REQUEST_U64:
                        if (*(const uint64_t *) p > 0)
                                r = sd_bus_message_append(m, "{sv}", k->key, "t", *(const uint64_t *) p);
                        break;
                case REQUEST_BOOL:
                        if (*(const bool *) p)
                                r = sd_bus_message_append(m, "{sv}", k->key, "b", 1);
                        break;
                }
        }
        return r;
}

static int append_byte_strings(sd_bus_message *m, const char *key, char **l) {
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "aay");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "ay");
        STRV_FOREACH(s, l)
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 'y', *s, strlen(*s));
        for (int i = 0; i < 3 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

int client_command_append(sd_bus_message *m, char **cmd, char **env) {
        int r;

        r = append_byte_strings(m, "argv_bytes", cmd);
        if (r >= 0 && env && env[0])
                r = append_byte_strings(m, "environment", env);
        return r;
}
