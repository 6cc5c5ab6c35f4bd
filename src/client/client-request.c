/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keys of a Run, CreateSandbox or Exec request, as sbxctl and sbx-mcp send them: one table, walked for
 * whichever writes the message (client-bus.c: sd-bus; sbxctl/front.c: src/wire). */
#include <errno.h>
#include <string.h>

#include "client-request.h"
#include "macro.h"
#include "utf8.h"

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

int client_request_walk(const ClientRequest *req, ClientRequestPut put, void *userdata) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(request_keys); i++) {
                const RequestKey *k = &request_keys[i];
                const void *p = (const uint8_t *) req + k->offset;

                switch (k->kind) {
                case REQUEST_STRING:
                        if (*(const char *const *) p)
                                r = put(userdata, k->key, 's', *(const char *const *) p);
                        break;
                case REQUEST_U64:
                        if (*(const uint64_t *) p > 0)
                                r = put(userdata, k->key, 't', p);
                        break;
                case REQUEST_BOOL:
                        if (*(const bool *) p)
                                r = put(userdata, k->key, 'b', p);
                        break;
                }
        }
        return r;
}

static int check_utf8(void *userdata, const char *key, char type, const void *value) {
        const char **bad = userdata;

        if (type != 's' || utf8_valid_dbus(value, strlen(value)))
                return 0;
        *bad = key;
        return -EILSEQ;
}

const char *client_request_not_utf8(const ClientRequest *req) {
        const char *bad = NULL;

        (void) client_request_walk(req, check_utf8, &bad);
        return bad;
}
