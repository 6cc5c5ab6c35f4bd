/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "exit-codes.h"
#include "record.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static const char *const stop_reason_table[_STOP_REASON_MAX] = {
        [STOP_SUCCESS] = "success",
        [STOP_EXIT_CODE] = "exit-code",
        [STOP_SIGNAL] = "signal",
        [STOP_CORE_DUMP] = "core-dump",
        [STOP_TIMEOUT] = "timeout",
        [STOP_OOM_KILL] = "oom-kill",
        [STOP_CANCELLED] = "cancelled",
        [STOP_START_FAILED] = "start-failed",
        [STOP_REFUSED] = "refused",
        [STOP_LOST] = "lost",
};

const char *stop_reason_to_string(StopReason r) {
        if (r < 0 || r >= _STOP_REASON_MAX)
                return NULL;
        return stop_reason_table[r];
}

StopReason stop_reason_from_string(const char *s) {
        if (!s)
                return _STOP_REASON_INVALID;
        for (int i = 0; i < _STOP_REASON_MAX; i++)
                if (streq(stop_reason_table[i], s))
                        return (StopReason) i;
        return _STOP_REASON_INVALID;
}

StopReason stop_reason_from_unit_result(const char *result) {
        static const struct {
                const char *result;
                StopReason reason;
        } map[] = {
                { "success", STOP_SUCCESS },      { "exit-code", STOP_EXIT_CODE },
                { "signal", STOP_SIGNAL },        { "core-dump", STOP_CORE_DUMP },
                { "timeout", STOP_TIMEOUT },      { "oom-kill", STOP_OOM_KILL },
                { "resources", STOP_START_FAILED }, { "protocol", STOP_START_FAILED },
                { "start-limit-hit", STOP_START_FAILED }, { "exec-condition", STOP_START_FAILED },
                { "watchdog", STOP_TIMEOUT },
        };
        if (!result)
                return _STOP_REASON_INVALID;
        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (streq(map[i].result, result))
                        return map[i].reason;
        return _STOP_REASON_INVALID;
}

RunRecord *run_record_new(void) {
        RunRecord *r = calloc(1, sizeof(RunRecord));
        if (!r)
                return NULL;
        r->stop_reason = _STOP_REASON_INVALID;
        r->exit_code = -1;
        r->cpu_usec = r->memory_peak = r->tasks_peak = r->output_bytes = UINT64_MAX;
        return r;
}

static void denied_list_free(DeniedSyscall *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(list[i].name);
        free(list);
}

RunRecord *run_record_free(RunRecord *r) {
        if (!r)
                return NULL;
        free(r->unit);
        free(r->profile);
        free(r->policy_digest);
        free(r->error);
        denied_list_free(r->denied, r->n_denied);
        free(r);
        return NULL;
}

static bool denied_name_is_valid(const char *s, size_t len) {
        if (len == 0 || len > 64)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

/* run_record_add_denied() on a bare list, so that a new list can be built before it replaces the old. */
static int denied_list_add(DeniedSyscall **list, size_t *n, const char *name, uint64_t count) {
        DeniedSyscall *d;
        char *copy;

        if (!name || !denied_name_is_valid(name, strlen(name)))
                return -EINVAL;
        for (size_t i = 0; i < *n; i++)
                if (streq((*list)[i].name, name)) {
                        if (count > UINT64_MAX - 1 - (*list)[i].count)
                                return -ERANGE;
                        (*list)[i].count += count;
                        return 0;
                }
        if (count == UINT64_MAX)
                return -ERANGE;
        if (*n >= RECORD_DENIED_MAX)
                return -E2BIG;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        d = reallocarray(*list, *n + 1, sizeof(DeniedSyscall));
        if (!d) {
                free(copy);
                return -ENOMEM;
        }
        *list = d;
        (*list)[(*n)++] = (DeniedSyscall) { .name = copy, .count = count };
        return 0;
}

int run_record_add_denied(RunRecord *r, const char *name, uint64_t count) {
        return denied_list_add(&r->denied, &r->n_denied, name, count);
}

uint64_t run_record_get_denied(const RunRecord *r, const char *name) {
        for (size_t i = 0; i < r->n_denied; i++)
                if (streq(r->denied[i].name, name))
                        return r->denied[i].count;
        return 0;
}

/* One "name:count" item of the helper's list at *p; advances *p past it. */
static int parse_denied_item(const char **p, char *name, uint64_t *ret_count) {
        const char *s = *p, *colon = s + strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
        char *end;

        if (*colon != ':' || !denied_name_is_valid(s, (size_t) (colon - s)) || colon[1] < '0' || colon[1] > '9')
                return -EBADMSG;
        errno = 0;
        *ret_count = strtoull(colon + 1, &end, 10);
        if (errno != 0 || *ret_count == UINT64_MAX || !(*end == 0 || *end == ',' || *end == ' ' || *end == '\n'))
                return -EBADMSG;
        if (name) {
                memcpy(name, s, (size_t) (colon - s));
                name[colon - s] = 0;
        }
        *p = end;
        return 0;
}

int run_record_parse_denied(RunRecord *r, const char *list) {
        DeniedSyscall *denied = NULL;
        size_t n_denied = 0;
        char name[65];
        uint64_t count;
        int k = 0;

        if (!list)
                return -EBADMSG;
        /* First the syntax of the whole list, so that a bad one is -EBADMSG whatever else is wrong with
         * it; then the new list is built on the side and replaces r's only once it is complete. */
        for (int pass = 0; pass < 2 && k >= 0; pass++) {
                const char *p = list;

                if (*p == 0 || *p == ' ' || *p == '\n')
                        continue; /* an empty list */
                for (;;) {
                        k = parse_denied_item(&p, pass == 0 ? NULL : name, &count);
                        if (k >= 0 && pass == 1)
                                k = denied_list_add(&denied, &n_denied, name, count);
                        if (k < 0 || *p != ',')
                                break;
                        p++;
                }
        }
        if (k < 0) {
                denied_list_free(denied, n_denied);
                return k;
        }

        denied_list_free(r->denied, r->n_denied);
        r->denied = denied;
        r->n_denied = n_denied;
        return 0;
}

static json_object *json_u64_or_null(uint64_t v) {
        return v == UINT64_MAX ? NULL : json_object_new_uint64(v);
}

static int json_time_or_null(usec_t t, json_object **ret) {
        char buf[TIMESTAMP_MAX];

        if (t == 0) {
                *ret = NULL;
                return 0;
        }
        if (!format_timestamp(buf, t))
                return -ERANGE;
        *ret = json_object_new_string(buf);
        return *ret ? 0 : -ENOMEM;
}

#define ADD(o, k, v)                                                  \
        do {                                                          \
                if (json_object_object_add((o), (k), (v)) < 0)        \
                        return -ENOMEM;                               \
        } while (0)

int run_record_to_json(const RunRecord *r, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *exit_o, *res, *cleanup, *started, *ended, *denied;
        const char *s;
        char *text;
        int k;

        if (!o)
                return -ENOMEM;
        if ((k = json_time_or_null(r->started_at, &started)) < 0)
                return k;
        if ((k = json_time_or_null(r->ended_at, &ended)) < 0) {
                json_object_put(started);
                return k;
        }
        ADD(o, "version", json_object_new_int(RECORD_VERSION));
        ADD(o, "run_id", json_object_new_string(r->run_id));
        ADD(o, "unit", r->unit ? json_object_new_string(r->unit) : NULL);
        ADD(o, "tenant", json_object_new_string(r->tenant));
        ADD(o, "profile", json_object_new_string(strna(r->profile)));
        ADD(o, "policy_digest", r->policy_digest ? json_object_new_string(r->policy_digest) : NULL);
        ADD(o, "state", json_object_new_string(r->finished ? "finished" : "running"));
        ADD(o, "started_at", started);
        ADD(o, "ended_at", ended);
        s = stop_reason_to_string(r->stop_reason);
        ADD(o, "stop_reason", s ? json_object_new_string(s) : NULL);

        exit_o = json_object_new_object();
        if (!exit_o)
                return -ENOMEM;
        ADD(o, "exit", exit_o);
        ADD(exit_o, "code", r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
        ADD(exit_o, "signal", r->exit_signal > 0 ? json_object_new_int(r->exit_signal) : NULL);

        res = json_object_new_object();
        if (!res)
                return -ENOMEM;
        ADD(o, "resources", res);
        ADD(res, "cpu_usec", json_u64_or_null(r->cpu_usec));
        ADD(res, "memory_peak_bytes", json_u64_or_null(r->memory_peak));
        ADD(res, "tasks_peak", json_u64_or_null(r->tasks_peak));
        ADD(res, "output_bytes", json_u64_or_null(r->output_bytes));
        ADD(o, "output_truncated", json_object_new_boolean(r->output_truncated));

        denied = json_object_new_object();
        if (!denied)
                return -ENOMEM;
        ADD(o, "denied_syscalls", denied);
        for (size_t i = 0; i < r->n_denied; i++) {
                json_object *c = json_object_new_uint64(r->denied[i].count);
                if (!c)
                        return -ENOMEM;
                ADD(denied, r->denied[i].name, c);
        }

        cleanup = json_object_new_object();
        if (!cleanup)
                return -ENOMEM;
        ADD(o, "cleanup", cleanup);
        ADD(cleanup, "unit_gone", json_object_new_boolean(r->unit_gone));
        ADD(cleanup, "cgroup_gone", json_object_new_boolean(r->cgroup_gone));
        ADD(cleanup, "completed", json_object_new_boolean(r->finished && r->unit_gone && r->cgroup_gone));

        if (r->error)
                ADD(o, "error", json_object_new_string(r->error));

        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        text = malloc(strlen(s) + 2);
        if (!text)
                return -ENOMEM;
        sprintf(text, "%s\n", s);
        *ret = text;
        return 0;
}

static bool is_hex(const char *s, size_t len) {
        if (!s || strlen(s) != len)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return false;
        return true;
}

static int get_string(json_object *o, const char *key, bool nullable, const char **ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return error_setf(ret_error, -EBADMSG, "%s: missing", key);
        if (!v) {
                if (!nullable)
                        return error_setf(ret_error, -EBADMSG, "%s: null, expected a string", key);
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return error_setf(ret_error, -EBADMSG, "%s: expected a string", key);
        *ret = json_object_get_string(v);
        return 0;
}

static int get_u64(json_object *o, const char *path, const char *key, uint64_t *ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return error_setf(ret_error, -EBADMSG, "%s.%s: missing", path, key);
        if (!v) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return error_setf(ret_error, -EBADMSG, "%s.%s: expected a non-negative integer or null", path, key);
        *ret = json_object_get_uint64(v);
        if (*ret == UINT64_MAX) /* our own "unknown" marker: never a real value */
                return error_setf(ret_error, -EBADMSG, "%s.%s: out of range", path, key);
        return 0;
}

static int get_time(json_object *o, const char *key, bool nullable, usec_t *ret, char **ret_error) {
        const char *s;
        int r = get_string(o, key, nullable, &s, ret_error);

        if (r < 0)
                return r;
        if (!s) {
                *ret = 0;
                return 0;
        }
        if (parse_timestamp(s, ret) < 0)
                return error_setf(ret_error, -EBADMSG, "%s: '%s' is not an RFC 3339 UTC timestamp", key, s);
        return 0;
}

int run_record_from_json(const char *json, RunRecord **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(run_record_freep) RunRecord *r = NULL;
        json_object *v, *sub;
        const char *s;
        uint64_t u;
        int k;

        {
                json_tokener *tok = json_tokener_new();
                size_t len = strlen(json), end;

                if (!tok)
                        return -ENOMEM;
                o = json_tokener_parse_ex(tok, json, (int) len);
                end = json_tokener_get_parse_end(tok);
                json_tokener_free(tok);
                if (!o || !json_object_is_type(o, json_type_object))
                        return error_setf(ret_error, -EBADMSG, "not a JSON object");
                /* nothing but white space may follow the object */
                for (; end < len; end++)
                        if (!strchr(" \t\r\n", json[end]))
                                return error_setf(ret_error, -EBADMSG, "trailing data after the record");
        }
        r = run_record_new();
        if (!r)
                return -ENOMEM;

        if (!json_object_object_get_ex(o, "version", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int(v) != RECORD_VERSION)
                return error_setf(ret_error, -EBADMSG, "version: expected %d", RECORD_VERSION);

        if ((k = get_string(o, "run_id", false, &s, ret_error)) < 0)
                return k;
        if (!run_id_is_valid(s))
                return error_setf(ret_error, -EBADMSG, "run_id: not a run id");
        strcpy(r->run_id, s);
        if ((k = get_string(o, "unit", true, &s, ret_error)) < 0)
                return k;
        if (s && !(r->unit = strdup(s)))
                return -ENOMEM;
        if ((k = get_string(o, "tenant", false, &s, ret_error)) < 0)
                return k;
        if (!is_hex(s, TENANT_ID_LEN))
                return error_setf(ret_error, -EBADMSG, "tenant: not a tenant id");
        strcpy(r->tenant, s);
        if ((k = get_string(o, "profile", false, &s, ret_error)) < 0)
                return k;
        if (!(r->profile = strdup(s)))
                return -ENOMEM;
        if ((k = get_string(o, "policy_digest", true, &s, ret_error)) < 0)
                return k;
        if (s && !(r->policy_digest = strdup(s)))
                return -ENOMEM;
        if ((k = get_string(o, "state", false, &s, ret_error)) < 0)
                return k;
        if (!streq(s, "running") && !streq(s, "finished"))
                return error_setf(ret_error, -EBADMSG, "state: expected \"running\" or \"finished\"");
        r->finished = streq(s, "finished");
        if ((k = get_time(o, "started_at", false, &r->started_at, ret_error)) < 0)
                return k;
        if ((k = get_time(o, "ended_at", !r->finished ? true : false, &r->ended_at, ret_error)) < 0)
                return k;
        if ((k = get_string(o, "stop_reason", !r->finished, &s, ret_error)) < 0)
                return k;
        if (s && (r->stop_reason = stop_reason_from_string(s)) < 0)
                return error_setf(ret_error, -EBADMSG, "stop_reason: unknown value '%s'", s);

        if (!json_object_object_get_ex(o, "exit", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "exit: expected an object");
        if ((k = get_u64(sub, "exit", "code", &u, ret_error)) < 0)
                return k;
        if (u != UINT64_MAX && u > 255)
                return error_setf(ret_error, -EBADMSG, "exit.code: out of range");
        r->exit_code = u == UINT64_MAX ? -1 : (int) u;
        if ((k = get_u64(sub, "exit", "signal", &u, ret_error)) < 0)
                return k;
        if (u != UINT64_MAX && (u == 0 || u > 64))
                return error_setf(ret_error, -EBADMSG, "exit.signal: out of range");
        r->exit_signal = u == UINT64_MAX ? 0 : (int) u;

        if (!json_object_object_get_ex(o, "resources", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "resources: expected an object");
        if ((k = get_u64(sub, "resources", "cpu_usec", &r->cpu_usec, ret_error)) < 0 ||
            (k = get_u64(sub, "resources", "memory_peak_bytes", &r->memory_peak, ret_error)) < 0 ||
            (k = get_u64(sub, "resources", "tasks_peak", &r->tasks_peak, ret_error)) < 0)
                return k;
        /* Added later in version 1: absent in older records. */
        if (json_object_object_get_ex(sub, "output_bytes", NULL) &&
            (k = get_u64(sub, "resources", "output_bytes", &r->output_bytes, ret_error)) < 0)
                return k;
        if (json_object_object_get_ex(o, "output_truncated", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_setf(ret_error, -EBADMSG, "output_truncated: expected a boolean");
                r->output_truncated = json_object_get_boolean(v);
        }
        if (json_object_object_get_ex(o, "denied_syscalls", &sub)) {
                if (!json_object_is_type(sub, json_type_object))
                        return error_setf(ret_error, -EBADMSG, "denied_syscalls: expected an object");
                json_object_object_foreach(sub, name, count) {
                        if (!json_object_is_type(count, json_type_int) || json_object_get_int64(count) < 0 ||
                            json_object_get_uint64(count) == UINT64_MAX)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls.%s: expected a non-negative integer", name);
                        k = run_record_add_denied(r, name, json_object_get_uint64(count));
                        if (k == -ENOMEM)
                                return k;
                        if (k == -E2BIG)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls: more than %d syscalls", RECORD_DENIED_MAX);
                        if (k < 0)
                                return error_setf(ret_error, -EBADMSG, "denied_syscalls: '%s' is not a syscall name", name);
                }
        }

        if (!json_object_object_get_ex(o, "cleanup", &sub) || !json_object_is_type(sub, json_type_object))
                return error_setf(ret_error, -EBADMSG, "cleanup: expected an object");
        if (!json_object_object_get_ex(sub, "unit_gone", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "cleanup.unit_gone: expected a boolean");
        r->unit_gone = json_object_get_boolean(v);
        if (!json_object_object_get_ex(sub, "cgroup_gone", &v) || !json_object_is_type(v, json_type_boolean))
                return error_setf(ret_error, -EBADMSG, "cleanup.cgroup_gone: expected a boolean");
        r->cgroup_gone = json_object_get_boolean(v);

        if (json_object_object_get_ex(o, "error", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return error_setf(ret_error, -EBADMSG, "error: expected a string");
                if (!(r->error = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }

        *ret = TAKE_PTR(r);
        return 0;
}

int run_record_exit_status(const RunRecord *r) {
        switch (r->stop_reason) {
        case STOP_SUCCESS:
        case STOP_EXIT_CODE:
                if (r->exit_signal > 0)
                        return 128 + r->exit_signal;
                return r->exit_code >= 0 ? r->exit_code : SBX_EXIT_FAILURE;
        case STOP_SIGNAL:
        case STOP_CORE_DUMP:
                return r->exit_signal > 0 ? 128 + r->exit_signal : SBX_EXIT_FAILURE;
        case STOP_TIMEOUT:
                return SBX_EXIT_TIMEOUT;
        case STOP_OOM_KILL:
                return 128 + SIGKILL;
        case STOP_CANCELLED:
                return 128 + (r->exit_signal > 0 ? r->exit_signal : SIGTERM);
        case STOP_START_FAILED:
        case STOP_REFUSED:
        case STOP_LOST:
        case _STOP_REASON_MAX:
        case _STOP_REASON_INVALID:
        default:
                return SBX_EXIT_FAILURE;
        }
}
