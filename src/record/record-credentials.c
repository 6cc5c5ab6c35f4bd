/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The credentials section of a run record (docs/credentials.md): the names of the credentials a run
 * received as files, its broker grants, and the requests the broker handled for it, as the broker's
 * operations log has them. Pure (json-c only). Nothing here ever holds a secret's value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grant.h"
#include "record-credentials.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define RECORD_TIME_MAX_USEC (UINT64_C(253402300800) * USEC_PER_SEC) /* 10000-01-01T00:00:00Z */

static void broker_op_done(BrokerOp *op) {
        free(op->grant);
        free(op->method);
        free(op->host);
        free(op->path_prefix);
        free(op->verdict);
        free(op->reason);
}

RunCredentials *run_credentials_free(RunCredentials *c) {
        if (!c)
                return NULL;
        strv_free(c->files);
        strv_free(c->grants);
        for (size_t i = 0; i < c->n_brokered; i++)
                broker_op_done(&c->brokered[i]);
        free(c->brokered);
        free(c);
        return NULL;
}

static int strv_sorted_copy(char *const *l, char ***ret) {
        size_t n = strv_length((char **) l);
        _cleanup_strv_free_ char **c = calloc(n + 1, sizeof(char *));

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return -ENOMEM;
        /* insertion sort: a handful of names */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(c[j - 1], c[j]) > 0; j--) {
                        char *t = c[j];
                        c[j] = c[j - 1];
                        c[j - 1] = t;
                }
        *ret = TAKE_PTR(c);
        return 0;
}

int run_record_credentials_init(RunRecord *r, char *const *files, char *const *grants) {
        RunCredentials *c = calloc(1, sizeof(RunCredentials));
        int k;

        if (!c)
                return -ENOMEM;
        k = strv_sorted_copy(files, &c->files);
        if (k == 0)
                k = strv_sorted_copy(grants, &c->grants);
        if (k < 0) {
                run_credentials_free(c);
                return k;
        }
        run_credentials_free(r->credentials);
        r->credentials = c;
        return 0;
}

/* ---- one operation, as the broker logs it and as the record keeps it ---- */

static bool token_is_valid(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                      *c == '_' || *c == '.'))
                        return false;
        return true;
}

/* A printable ASCII string of at most max bytes without white space (a host, a path prefix). */
static bool printable_is_valid(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c <= 0x20 || *c >= 0x7f)
                        return false;
        return true;
}

static int get_member(json_object *o, const char *key, json_type type, bool nullable, json_object **ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return -EBADMSG;
        if (!v) {
                if (!nullable)
                        return -EBADMSG;
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, type))
                return -EBADMSG;
        *ret = v;
        return 0;
}

static int get_text(json_object *o, const char *key, bool nullable, bool (*valid)(const char *, size_t), size_t max,
                    char **ret) {
        json_object *v;
        int k = get_member(o, key, json_type_string, nullable, &v);

        if (k < 0)
                return k;
        if (!v) {
                *ret = NULL;
                return 0;
        }
        if (!valid(json_object_get_string(v), max))
                return -EBADMSG;
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : -ENOMEM;
}

static int get_count(json_object *o, const char *key, uint64_t *ret) {
        json_object *v;
        int k = get_member(o, key, json_type_int, false, &v);

        if (k < 0)
                return k;
        if (json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = json_object_get_uint64(v);
        return 0;
}

static bool verdict_is_valid(const char *s, size_t max) {
        return streq(s, "done") || streq(s, "refused") || streq(s, "failed");
}

/* The fields common to the log's line and the record's entry; the time is read by the caller. */
static int op_from_json(json_object *o, BrokerOp *op) {
        json_object *v;
        uint64_t u;
        int k;

        k = get_member(o, "id", json_type_string, false, &v);
        if (k < 0)
                return k;
        if (strlen(json_object_get_string(v)) != BROKER_OP_ID_LEN ||
            !lower_hex_is_valid(json_object_get_string(v), BROKER_OP_ID_LEN))
                return -EBADMSG;
        memcpy(op->id, json_object_get_string(v), BROKER_OP_ID_LEN + 1);
        if ((k = get_text(o, "grant", true, token_is_valid, 32, &op->grant)) < 0 ||
            (k = get_text(o, "method", true, token_is_valid, 16, &op->method)) < 0 ||
            (k = get_text(o, "host", true, printable_is_valid, 255, &op->host)) < 0 ||
            (k = get_text(o, "path_prefix", true, printable_is_valid, GRANT_URL_MAX, &op->path_prefix)) < 0 ||
            (k = get_text(o, "verdict", false, verdict_is_valid, 0, &op->verdict)) < 0 ||
            (k = get_text(o, "reason", true, token_is_valid, 32, &op->reason)) < 0)
                return k;
        k = get_member(o, "port", json_type_int, true, &v);
        if (k < 0)
                return k;
        if (v) {
                if (json_object_get_int64(v) < 1 || json_object_get_int64(v) > 65535)
                        return -EBADMSG;
                op->port = (uint16_t) json_object_get_int64(v);
        }
        if (!op->host != !op->port)
                return -EBADMSG;
        k = get_member(o, "status", json_type_int, true, &v);
        if (k < 0)
                return k;
        op->status = -1;
        if (v) {
                if (json_object_get_int64(v) < 100 || json_object_get_int64(v) > 999)
                        return -EBADMSG;
                op->status = (int) json_object_get_int64(v);
        }
        if ((k = get_count(o, "request_bytes", &op->request_bytes)) < 0 ||
            (k = get_count(o, "response_bytes", &op->response_bytes)) < 0 ||
            (k = get_count(o, "duration_usec", &u)) < 0)
                return k;
        op->duration = u;
        /* "done" is a response; anything else says why not */
        if (streq(op->verdict, "done") ? (op->reason || op->status < 0) : !op->reason)
                return -EBADMSG;
        return 0;
}

static int push_op(RunCredentials *c, BrokerOp *op) {
        BrokerOp *l;

        c->brokered_total++;
        if (c->n_brokered >= RECORD_BROKERED_MAX) {
                broker_op_done(op);
                return 0;
        }
        l = realloc(c->brokered, (c->n_brokered + 1) * sizeof(BrokerOp));
        if (!l) {
                c->brokered_total--;
                broker_op_done(op);
                return -ENOMEM;
        }
        c->brokered = l;
        c->brokered[c->n_brokered++] = *op;
        return 1;
}

int run_record_add_brokered(RunRecord *r, const char *line) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        BrokerOp op = {};
        uint64_t start;
        int k;

        if (!r->credentials)
                return -ENOENT;
        o = json_tokener_parse(line);
        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        k = op_from_json(o, &op);
        if (k == 0)
                k = get_count(o, "start_usec", &start);
        if (k < 0) {
                broker_op_done(&op);
                return k;
        }
        /* a time the record can write (before the year 10000) */
        if (start == 0 || start >= RECORD_TIME_MAX_USEC) {
                broker_op_done(&op);
                return -EBADMSG;
        }
        op.started_at = start;
        return push_op(r->credentials, &op);
}

/* ---- the record's JSON ---- */

#define ADD(o, k, v)                                                  \
        do {                                                          \
                if (json_object_object_add((o), (k), (v)) < 0)        \
                        return -ENOMEM;                               \
        } while (0)

static json_object *string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static int strv_to_json(char **l, json_object **ret) {
        json_object *a = json_object_new_array();

        if (!a)
                return -ENOMEM;
        STRV_FOREACH(i, l)
                if (json_object_array_add(a, json_object_new_string(*i)) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
        *ret = a;
        return 0;
}

static int op_to_json(const BrokerOp *op, json_object *x) {
        char buf[TIMESTAMP_MAX];

        if (!format_timestamp(buf, op->started_at))
                return -ERANGE;
        ADD(x, "id", json_object_new_string(op->id));
        ADD(x, "grant", string_or_null(op->grant));
        ADD(x, "method", string_or_null(op->method));
        ADD(x, "host", string_or_null(op->host));
        ADD(x, "port", op->port ? json_object_new_int(op->port) : NULL);
        ADD(x, "path_prefix", string_or_null(op->path_prefix));
        ADD(x, "verdict", json_object_new_string(op->verdict));
        ADD(x, "reason", string_or_null(op->reason));
        ADD(x, "status", op->status >= 0 ? json_object_new_int(op->status) : NULL);
        ADD(x, "request_bytes", json_object_new_uint64(op->request_bytes));
        ADD(x, "response_bytes", json_object_new_uint64(op->response_bytes));
        ADD(x, "started_at", json_object_new_string(buf));
        ADD(x, "duration_usec", json_object_new_uint64(op->duration));
        return 0;
}

int run_credentials_to_json(const RunCredentials *c, json_object *o) {
        json_object *files, *grants, *ops;
        int k;

        if ((k = strv_to_json(c->files, &files)) < 0)
                return k;
        ADD(o, "files", files);
        if ((k = strv_to_json(c->grants, &grants)) < 0)
                return k;
        ADD(o, "grants", grants);
        ops = json_object_new_array();
        if (!ops)
                return -ENOMEM;
        ADD(o, "brokered", ops);
        for (size_t i = 0; i < c->n_brokered; i++) {
                json_object *x = json_object_new_object();

                if (!x || json_object_array_add(ops, x) < 0) {
                        json_object_put(x);
                        return -ENOMEM;
                }
                if ((k = op_to_json(&c->brokered[i], x)) < 0)
                        return k;
        }
        ADD(o, "brokered_total", json_object_new_uint64(c->brokered_total));
        return 0;
}

static int names_from_json(json_object *o, const char *key, char ***ret, char **ret_error) {
        _cleanup_strv_free_ char **l = NULL;
        json_object *a;
        size_t n;

        if (get_member(o, key, json_type_array, false, &a) < 0)
                return error_setf(ret_error, -EBADMSG, "credentials.%s: expected an array of names", key);
        n = json_object_array_length(a);
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(a, i);

                if (!json_object_is_type(v, json_type_string) || !token_is_valid(json_object_get_string(v), 64))
                        return error_setf(ret_error, -EBADMSG, "credentials.%s[%zu]: expected a name", key, i);
                if (!(l[i] = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int run_credentials_from_json(json_object *o, json_object *cleanup, RunCredentials **ret, char **ret_error) {
        _cleanup_(run_credentials_freep) RunCredentials *c = calloc(1, sizeof(RunCredentials));
        json_object *ops, *v;
        int k;

        if (!c)
                return -ENOMEM;
        if (!o || !json_object_is_type(o, json_type_object))
                return error_setf(ret_error, -EBADMSG, "credentials: expected an object");
        if ((k = names_from_json(o, "files", &c->files, ret_error)) < 0 ||
            (k = names_from_json(o, "grants", &c->grants, ret_error)) < 0)
                return k;
        if (get_member(o, "brokered", json_type_array, false, &ops) < 0)
                return error_setf(ret_error, -EBADMSG, "credentials.brokered: expected an array");
        if (json_object_array_length(ops) > RECORD_BROKERED_MAX)
                return error_setf(ret_error, -EBADMSG, "credentials.brokered: more than %d entries",
                                  RECORD_BROKERED_MAX);
        for (size_t i = 0; i < json_object_array_length(ops); i++) {
                json_object *x = json_object_array_get_idx(ops, i);
                BrokerOp op = {};

                k = x && json_object_is_type(x, json_type_object) ? op_from_json(x, &op) : -EBADMSG;
                if (k == 0) {
                        if (get_member(x, "started_at", json_type_string, false, &v) < 0 ||
                            parse_timestamp(json_object_get_string(v), &op.started_at) < 0)
                                k = -EBADMSG;
                }
                if (k < 0) {
                        broker_op_done(&op);
                        return k == -ENOMEM ? k : error_setf(ret_error, -EBADMSG, "credentials.brokered[%zu]: malformed", i);
                }
                if ((k = push_op(c, &op)) < 0)
                        return k;
        }
        if (get_count(o, "brokered_total", &c->brokered_total) < 0 || c->brokered_total < c->n_brokered)
                return error_setf(ret_error, -EBADMSG, "credentials.brokered_total: expected at least the entries listed");
        if (!cleanup || !json_object_object_get_ex(cleanup, "credentials_gone", &v) ||
            !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "cleanup.credentials_gone: expected a boolean");
        c->gone = json_object_get_boolean(v);
        *ret = TAKE_PTR(c);
        return 0;
}
