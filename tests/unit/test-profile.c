/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The profile parser: documents in, Profiles or exact one-line errors out. Documents are written with
 * single quotes for readability and turned into JSON by json() before parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>

#include "fileio.h"
#include "command.h"
#include "profile.h"
#include "unit-test.h"

#define FILE_NAME "x.json"
#define DOC_SHA256 "5e708231b4e4cfcad1b5ae3c5fea982ec8f52d110e5ffba0a9cf71c8fd56af5d"

/* A valid document with only the required keys, plus 'extra' (top-level members, each with a leading
 * comma). NET and RES replace the network and resources sections. */
#define NET_NONE "{'mode': 'none'}"
#define RES_DEFAULT "{'memory': '2G', 'tasks': 512, 'wall_time': '1h'}"
#define DOC_NR(net, res, extra) "{'version': 1, 'description': 'd', 'network': " net ", 'resources': " res extra "}"
#define DOC(extra) DOC_NR(NET_NONE, RES_DEFAULT, extra)
#define DOC_NET(net) DOC_NR(net, RES_DEFAULT, "")
#define DOC_RES(res, extra) DOC_NR(NET_NONE, res, extra)

static char *json(const char *s) {
        char *t = strdup(s);

        assert_non_null(t);
        for (char *c = t; *c; c++)
                if (*c == '\'')
                        *c = '"';
        return t;
}

static int parse(const char *doc, Profile **ret, char **ret_error) {
        _cleanup_free_ char *t = json(doc);

        return profile_parse(t, strlen(t), "test", FILE_NAME, ret, ret_error);
}

static Profile *parse_ok(const char *doc) {
        Profile *p = NULL;
        char *error = NULL;
        int r;

        r = parse(doc, &p, &error);
        if (r < 0)
                fail_msg("profile_parse() failed: %d %s\n  document: %s", r, strna(error), doc);
        assert_null(error);
        assert_non_null(p);
        return p;
}

static void assert_strv_equal(char **a, const char *const *b) {
        size_t i;

        assert_non_null(a);
        for (i = 0; a[i] && b[i]; i++)
                assert_string_equal(a[i], b[i]);
        assert_null(a[i]);
        assert_null(b[i]);
}

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })
#define STRV_EMPTY ((const char *const[]) { NULL })

typedef struct ErrorCase {
        const char *doc;   /* single-quoted JSON */
        const char *error; /* the whole message */
} ErrorCase;

/* Every row must fail with -EINVAL and exactly its message. */
static void check_errors(const ErrorCase *table, size_t n) {
        unsigned failures = 0;

        for (size_t i = 0; i < n; i++) {
                Profile *p = NULL;
                char *error = NULL;
                int r;

                r = parse(table[i].doc, &p, &error);
                check_row(failures, r == -EINVAL, "row %zu: r=%d, document %s", i, r, table[i].doc);
                check_row(failures, !p, "row %zu: got a profile", i);
                check_row(failures, error && streq(error, table[i].error),
                          "row %zu:\n    document: %s\n    expected: %s\n    got:      %s", i, table[i].doc,
                          table[i].error, strna(error));
                check_row(failures, !error || !strchr(error, '\n'), "row %zu: message of several lines", i);
                profile_free(p);
                free(error);
        }
        assert_int_equal(failures, 0);
}

#define CHECK_ERRORS(table) check_errors(table, ELEMENTSOF(table))

/* ---- valid documents ---- */

static const char full_doc[] =
        "{\n"
        "  'version': 1,\n"
        "  'description': 'Everything set',\n"
        "  'files': {\n"
        "    'base': 'host',\n"
        "    'read_only': ['/opt/tools', '/srv/data'],\n"
        "    'read_write': ['/var/tmp/out'],\n"
        "    'hidden': ['/opt/tools/secret', '/home'],\n"
        "    'workspace': 'none'\n"
        "  },\n"
        "  'process': {\n"
        "    'syscalls': { 'allow': ['@system-service', 'ptrace'], 'deny': ['@mount', 'kill'] },\n"
        "    'syscall_rules': [\n"
        "      { 'syscall': 'ioctl', 'arg': 1, 'value': 'TIOCSETD', 'bits': 64 },\n"
        "      { 'syscall': 'personality' },\n"
        "      { 'syscall': 'clone', 'arg': 0, 'op': 'masked_eq', 'value': 268435456, 'mask': 268435456 },\n"
        "      { 'syscall': 'socket', 'arg': 0, 'op': 'ne', 'value': 2, 'bits': 32 },\n"
        "      { 'syscall': 'mmap', 'arg': 2, 'op': 'ge', 'value': 18446744073709551614 }\n"
        "    ],\n"
        "    'namespaces': ['user', 'mnt', 'pid'],\n"
        "    'capabilities': [],\n"
        "    'devices': 'private',\n"
        "    'write_execute_memory': false\n"
        "  },\n"
        "  'network': {\n"
        "    'mode': 'allowlist',\n"
        "    'destinations': [\n"
        "      { 'host': 'pypi.org', 'ports': [443, 80] },\n"
        "      { 'address': '192.0.2.0/24' },\n"
        "      { 'address': '2001:db8::1', 'ports': ['8000-8100', 22], 'protocol': 'tcp' },\n"
        "      { 'host': '*.Mirror.Example.ORG', 'private': true, 'protocol': 'udp' },\n"
        "      { 'address': '10.20.0.0/16', 'private': true, 'protocol': 'any', 'ports': ['1-65535'] }\n"
        "    ]\n"
        "  },\n"
        "  'resources': {\n"
        "    'memory': '2G', 'swap': 1048576, 'cpu': '150%', 'tasks': 64,\n"
        "    'wall_time': '90min', 'disk': '512M', 'output': '10M', 'output_action': 'cut'\n"
        "  },\n"
        "  'aggregate': { 'memory': '8G', 'tasks': 256, 'cpu': '400%' },\n"
        "  'lifetime': { 'caches': [ { 'name': 'pip', 'path': '.cache/pip' }, { 'name': 'go_mod', 'path': "
        "'go/pkg/mod' } ] },\n"
        "  'environment': { 'allow': ['CI_*', 'LANG'], 'deny': ['CI_SECRET'] },\n"
        "  'request': {\n"
        "    'memory': { 'min': '16M' },\n"
        "    'tasks': { 'min': 4 },\n"
        "    'wall_time': { 'min': 30 },\n"
        "    'cpu': { 'min': '10%' },\n"
        "    'network': ['none'],\n"
        "    'dataset': { 'under': ['/srv', '/home/data'] }\n"
        "  }\n"
        "}\n";

static void test_full(void **state) {
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ char *text = json(full_doc);
        char *error = NULL;

        assert_int_equal(profile_parse(text, strlen(text), "full", "/etc/sbx/profiles.d/full.json", &p, &error), 0);
        assert_null(error);
        assert_string_equal(p->name, "full");
        assert_string_equal(p->path, "/etc/sbx/profiles.d/full.json");
        assert_string_equal(p->description, "Everything set");
        assert_int_equal(strlen(p->digest), 7 + 64);
        assert_true(strneq(p->digest, "sha256:", 7));

        assert_strv_equal(p->read_only, STRV("/opt/tools", "/srv/data"));
        assert_strv_equal(p->read_write, STRV("/var/tmp/out"));
        assert_strv_equal(p->hidden, STRV("/opt/tools/secret", "/home"));
        assert_false(p->workspace);

        assert_strv_equal(p->syscall_allow, STRV("@system-service", "ptrace"));
        assert_strv_equal(p->syscall_deny, STRV("@mount", "kill"));
        assert_int_equal(p->n_rules, 5);

        /* ioctl's request is compared as 32 bits, whatever "bits" says */
        assert_string_equal(p->rules[0].syscall, "ioctl");
        assert_int_equal(p->rules[0].nr, seccomp_syscall_resolve_name("ioctl"));
        assert_true(p->rules[0].has_arg);
        assert_int_equal(p->rules[0].arg, 1);
        assert_int_equal(p->rules[0].cmp, SYSCALL_CMP_EQ);
        assert_int_equal(p->rules[0].value, TIOCSETD);
        assert_string_equal(p->rules[0].value_name, "TIOCSETD");
        assert_true(p->rules[0].arg32);

        assert_string_equal(p->rules[1].syscall, "personality");
        assert_int_equal(p->rules[1].nr, seccomp_syscall_resolve_name("personality"));
        assert_false(p->rules[1].has_arg);
        assert_null(p->rules[1].value_name);

        assert_string_equal(p->rules[2].syscall, "clone");
        assert_int_equal(p->rules[2].arg, 0);
        assert_int_equal(p->rules[2].cmp, SYSCALL_CMP_MASKED_EQ);
        assert_int_equal(p->rules[2].value, 268435456);
        assert_int_equal(p->rules[2].mask, 268435456);
        assert_false(p->rules[2].arg32);
        assert_null(p->rules[2].value_name);

        assert_int_equal(p->rules[3].cmp, SYSCALL_CMP_NE);
        assert_int_equal(p->rules[3].value, 2);
        assert_int_equal(p->rules[3].mask, 0);
        assert_true(p->rules[3].arg32);

        assert_int_equal(p->rules[4].arg, 2);
        assert_int_equal(p->rules[4].cmp, SYSCALL_CMP_GE);
        assert_true(p->rules[4].value == UINT64_MAX - 1);
        assert_false(p->rules[4].arg32);

        assert_int_equal(p->namespaces, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID);
        assert_false(p->write_execute_memory);

        assert_int_equal(p->network, NETWORK_ALLOWLIST);
        assert_int_equal(p->n_destinations, 5);
        for (size_t i = 0; i < p->n_destinations; i++)
                assert_int_equal(p->destinations[i].rule, i);
        assert_string_equal(p->destinations[0].host, "pypi.org");
        assert_null(p->destinations[0].address);
        assert_int_equal(p->destinations[0].n_ports, 2);
        assert_int_equal(p->destinations[0].ports[0].lo, 443);
        assert_int_equal(p->destinations[0].ports[0].hi, 443);
        assert_int_equal(p->destinations[0].ports[1].lo, 80);
        assert_int_equal(p->destinations[0].ports[1].hi, 80);
        assert_int_equal(p->destinations[0].protocol, NET_PROTOCOL_ANY);
        assert_false(p->destinations[0].private);
        assert_null(p->destinations[1].host);
        assert_string_equal(p->destinations[1].address, "192.0.2.0/24");
        assert_int_equal(p->destinations[1].n_ports, 0);
        assert_null(p->destinations[1].ports);
        assert_string_equal(p->destinations[2].address, "2001:db8::1");
        assert_int_equal(p->destinations[2].n_ports, 2);
        assert_int_equal(p->destinations[2].ports[0].lo, 8000);
        assert_int_equal(p->destinations[2].ports[0].hi, 8100);
        assert_int_equal(p->destinations[2].ports[1].lo, 22);
        assert_int_equal(p->destinations[2].ports[1].hi, 22);
        assert_int_equal(p->destinations[2].protocol, NET_PROTOCOL_TCP);
        assert_string_equal(p->destinations[3].host, "*.mirror.example.org");
        assert_true(p->destinations[3].private);
        assert_int_equal(p->destinations[3].protocol, NET_PROTOCOL_UDP);
        assert_string_equal(p->destinations[4].address, "10.20.0.0/16");
        assert_true(p->destinations[4].private);
        assert_int_equal(p->destinations[4].ports[0].lo, 1);
        assert_int_equal(p->destinations[4].ports[0].hi, 65535);

        assert_int_equal(p->memory_max, 2ULL << 30);
        assert_int_equal(p->swap_max, 1ULL << 20);
        assert_int_equal(p->cpu_quota_percent, 150);
        assert_int_equal(p->tasks_max, 64);
        assert_int_equal(p->runtime_max, 90 * 60 * USEC_PER_SEC);
        assert_int_equal(p->disk_max, 512ULL << 20);
        assert_int_equal(p->output_max, 10ULL << 20);
        assert_int_equal(p->output_action, OUTPUT_ACTION_CUT);
        assert_strv_equal(p->environment_allow, STRV("CI_*", "LANG"));
        assert_strv_equal(p->environment_deny, STRV("CI_SECRET"));

        assert_int_equal(p->slice_memory_max, 8ULL << 30);
        assert_int_equal(p->slice_tasks_max, 256);
        assert_int_equal(p->slice_cpu_quota_percent, 400);

        assert_int_equal(p->n_caches, 2);
        assert_string_equal(p->caches[0].name, "pip");
        assert_string_equal(p->caches[0].path, ".cache/pip");
        assert_string_equal(p->caches[1].name, "go_mod");
        assert_string_equal(p->caches[1].path, "go/pkg/mod");

        assert_true(p->request.memory.allowed);
        assert_int_equal(p->request.memory.min, 16ULL << 20);
        assert_true(p->request.tasks.allowed);
        assert_int_equal(p->request.tasks.min, 4);
        assert_true(p->request.runtime.allowed);
        assert_int_equal(p->request.runtime.min, 30 * USEC_PER_SEC);
        assert_true(p->request.cpu.allowed);
        assert_int_equal(p->request.cpu.min, 10);
        assert_true(p->request.network_none);
        assert_strv_equal(p->request.dataset_under, STRV("/srv", "/home/data"));
}

static void test_defaults(void **state) {
        _cleanup_(profile_freep) Profile *p = parse_ok(DOC(""));

        assert_string_equal(p->name, "test");
        assert_string_equal(p->path, FILE_NAME);
        assert_string_equal(p->description, "d");

        /* empty lists are empty, not NULL */
        assert_strv_equal(p->read_only, STRV_EMPTY);
        assert_strv_equal(p->read_write, STRV_EMPTY);
        assert_strv_equal(p->hidden, STRV_EMPTY);
        assert_true(p->workspace);

        assert_strv_equal(p->syscall_allow, STRV("@system-service"));
        assert_strv_equal(p->syscall_deny, STRV_EMPTY);
        assert_int_equal(p->n_rules, 0);
        assert_int_equal(p->namespaces, 0);
        assert_true(p->write_execute_memory);

        assert_int_equal(p->network, NETWORK_NONE);
        assert_int_equal(p->n_destinations, 0);

        assert_int_equal(p->memory_max, 2ULL << 30);
        assert_int_equal(p->swap_max, 0);
        assert_int_equal(p->cpu_quota_percent, 0);
        assert_int_equal(p->tasks_max, 512);
        assert_int_equal(p->runtime_max, 3600 * USEC_PER_SEC);
        assert_int_equal(p->disk_max, 1ULL << 30);
        assert_int_equal(p->output_max, 0);
        assert_int_equal(p->output_action, OUTPUT_ACTION_STOP);
        assert_int_equal(p->landlock, LANDLOCK_MODE_REQUIRED);
        /* any name but the dynamic loader's, sbx's own and the like */
        assert_strv_equal(p->environment_allow, STRV("*"));
        assert_strv_equal(p->environment_deny, environment_deny_default);

        assert_int_equal(p->slice_memory_max, 0);
        assert_int_equal(p->slice_tasks_max, 0);
        assert_int_equal(p->slice_cpu_quota_percent, 0);

        assert_int_equal(p->n_caches, 0);

        assert_false(p->request.memory.allowed);
        assert_false(p->request.tasks.allowed);
        assert_false(p->request.runtime.allowed);
        assert_false(p->request.cpu.allowed);
        assert_false(p->request.network_none);
        assert_null(p->request.dataset_under);
}

/* Present but empty sections keep the defaults too. */
static void test_empty_sections(void **state) {
        _cleanup_(profile_freep) Profile *p =
                parse_ok(DOC(", 'files': {}, 'process': { 'syscalls': {}, 'syscall_rules': [] }, "
                             "'aggregate': {}, 'lifetime': { 'caches': [] }, 'request': {}"));

        assert_strv_equal(p->syscall_allow, STRV("@system-service"));
        assert_strv_equal(p->syscall_deny, STRV_EMPTY);
        assert_int_equal(p->n_rules, 0);
        assert_int_equal(p->n_caches, 0);
        assert_true(p->workspace);
        assert_false(p->request.memory.allowed);
        assert_null(p->request.dataset_under);
}

static void test_units(void **state) {
        static const struct {
                const char *res;
                uint64_t memory;
                usec_t runtime;
                uint64_t tasks;
        } table[] = {
                { "{'memory': '4M', 'tasks': 2, 'wall_time': '1s'}", 4ULL << 20, USEC_PER_SEC, 2 },
                { "{'memory': 4194304, 'tasks': 2, 'wall_time': 1}", 4ULL << 20, USEC_PER_SEC, 2 },
                { "{'memory': '1T', 'tasks': 2, 'wall_time': '1d'}", 1ULL << 40, 86400 * USEC_PER_SEC, 2 },
                { "{'memory': '5000000', 'tasks': 9, 'wall_time': '1500ms'}", 5000000, 1500 * USEC_PER_MSEC, 9 },
                { "{'memory': '1G', 'tasks': 2, 'wall_time': '2000000us'}", 1ULL << 30, 2 * USEC_PER_SEC, 2 },
                { "{'memory': '1G', 'tasks': 2, 'wall_time': '5min'}", 1ULL << 30, 300 * USEC_PER_SEC, 2 },
                { "{'memory': '1G', 'tasks': 2, 'wall_time': '90s'}", 1ULL << 30, 90 * USEC_PER_SEC, 2 },
                { "{'memory': '1G', 'tasks': 2, 'wall_time': '2h'}", 1ULL << 30, 7200 * USEC_PER_SEC, 2 },
                { "{'memory': '1G', 'tasks': 2, 'wall_time': '45'}", 1ULL << 30, 45 * USEC_PER_SEC, 2 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *doc = NULL;
                Profile *p = NULL;
                char *error = NULL;

                assert_true(asprintf(&doc, DOC_NR(NET_NONE, "%s", ""), table[i].res) > 0);
                check_row(failures, parse(doc, &p, &error) == 0, "row %zu: %s", i, strna(error));
                if (p) {
                        check_row(failures, p->memory_max == table[i].memory, "row %zu", i);
                        check_row(failures, p->runtime_max == table[i].runtime, "row %zu", i);
                        check_row(failures, p->tasks_max == table[i].tasks, "row %zu", i);
                }
                profile_free(p);
                free(error);
        }
        assert_int_equal(failures, 0);
}

static void test_cpu(void **state) {
        _cleanup_(profile_freep) Profile *a =
                parse_ok(DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', 'cpu': '0%'}", ""));
        _cleanup_(profile_freep) Profile *b =
                parse_ok(DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', 'cpu': '1000000%'}", ""));
        /* A run without a quota of its own is still held by the slice's. */
        _cleanup_(profile_freep) Profile *c = parse_ok(DOC(", 'aggregate': { 'cpu': '400%' }"));

        assert_int_equal(a->cpu_quota_percent, 0);
        assert_int_equal(b->cpu_quota_percent, 1000000);
        assert_int_equal(c->cpu_quota_percent, 0);
        assert_int_equal(c->slice_cpu_quota_percent, 400);
}

static void test_network_modes(void **state) {
        _cleanup_(profile_freep) Profile *pub = parse_ok(DOC_NET("{'mode': 'public'}"));
        _cleanup_(profile_freep) Profile *allow = parse_ok(
                DOC_NET("{'mode': 'allowlist', 'destinations': [{'address': '10.0.0.0/8', 'ports': [65535, 1], "
                        "'private': true}, {'host': 'a-b.example.COM'}, {'address': '::/0'}, {'host': 'x1.y2'}, "
                        "{'address': '100.64.0.1', 'private': true}, {'address': '0.0.0.0/0'}, "
                        "{'address': '192.0.2.5/24'}, {'host': '*.x1.y2', 'ports': ['1-1', '2-65535']}]}"));

        assert_int_equal(pub->network, NETWORK_PUBLIC);
        assert_int_equal(pub->n_destinations, 0);
        assert_int_equal(allow->network, NETWORK_ALLOWLIST);
        assert_int_equal(allow->n_destinations, 8);
        assert_int_equal(allow->destinations[0].ports[0].lo, 65535);
        assert_int_equal(allow->destinations[0].ports[1].hi, 1);
        assert_true(allow->destinations[0].private);
        /* names are stored in lower case */
        assert_string_equal(allow->destinations[1].host, "a-b.example.com");
        assert_false(allow->destinations[1].private);
        assert_string_equal(allow->destinations[2].address, "::/0");
        assert_string_equal(allow->destinations[3].host, "x1.y2");
        /* a prefix that only covers denied ranges needs no "private": they stay denied inside it */
        assert_string_equal(allow->destinations[5].address, "0.0.0.0/0");
        /* as written (the egress compiler zeroes the host bits) */
        assert_string_equal(allow->destinations[6].address, "192.0.2.5/24");
        assert_string_equal(allow->destinations[7].host, "*.x1.y2");
        assert_int_equal(allow->destinations[7].n_ports, 2);
        assert_int_equal(allow->destinations[7].ports[1].lo, 2);
        assert_int_equal(allow->destinations[7].ports[1].hi, 65535);
}

/* A path below another one in a different list is fine; only the same path is a contradiction. */
/* files.landlock: "required" (the default) or "best-effort", nothing else */
static void test_landlock(void **state) {
        _cleanup_(profile_freep) Profile *req = parse_ok(DOC(", 'files': { 'landlock': 'required' }"));
        _cleanup_(profile_freep) Profile *best = parse_ok(DOC(", 'files': { 'landlock': 'best-effort' }"));
        _cleanup_(profile_freep) Profile *dflt = parse_ok(DOC(", 'files': {}"));
        static const ErrorCase table[] = {
                { DOC(", 'files': {'landlock': 'off'}"),
                  FILE_NAME ": files.landlock: expected one of required, best-effort, got \"off\"" },
                { DOC(", 'files': {'landlock': true}"),
                  FILE_NAME ": files.landlock: expected one of required, best-effort, got true" },
        };

        assert_int_equal(req->landlock, LANDLOCK_MODE_REQUIRED);
        assert_int_equal(best->landlock, LANDLOCK_MODE_BEST_EFFORT);
        assert_int_equal(dflt->landlock, LANDLOCK_MODE_REQUIRED);
        assert_string_equal(landlock_mode_to_string(LANDLOCK_MODE_BEST_EFFORT), "best-effort");
        assert_int_equal(landlock_mode_from_string("required"), LANDLOCK_MODE_REQUIRED);
        assert_int_equal(landlock_mode_from_string("Required"), -EINVAL);
        assert_null(landlock_mode_to_string(_LANDLOCK_MODE_MAX));
        CHECK_ERRORS(table);
}

/* process.isolation: "kernel" (the default) or "gvisor"; the gVisor tier refuses what it cannot give as
 * asked, and ceilings below what runsc itself needs */
static void test_isolation(void **state) {
        _cleanup_(profile_freep) Profile *dflt = parse_ok(DOC(""));
        _cleanup_(profile_freep) Profile *kernel = parse_ok(DOC(", 'process': { 'isolation': 'kernel' }"));
        _cleanup_(profile_freep) Profile *gv = parse_ok(DOC(", 'process': { 'isolation': 'gvisor' }"));
        static const ErrorCase table[] = {
                { DOC(", 'process': {'isolation': 'vm'}"),
                  FILE_NAME ": process.isolation: expected one of kernel, gvisor, got \"vm\"" },
                { DOC(", 'files': {'landlock': 'best-effort'}, 'process': {'isolation': 'gvisor'}"),
                  FILE_NAME ": process.isolation: \"gvisor\": files.landlock cannot be set (Landlock cannot confine "
                  "runsc; the command's file view is the unit's, through gVisor's own kernel)" },
                { DOC(", 'process': {'isolation': 'gvisor', 'namespaces': ['user']}"),
                  FILE_NAME ": process.isolation: \"gvisor\": process.namespaces must be [] (runsc uses the "
                  "namespaces the unit allows it)" },
                { DOC(", 'process': {'isolation': 'gvisor', 'write_execute_memory': false}"),
                  FILE_NAME ": process.isolation: \"gvisor\": process.write_execute_memory must be true (runsc's "
                  "platform maps code it writes)" },
                { DOC(", 'process': {'isolation': 'gvisor', 'syscall_rules': [{'syscall': 'personality'}]}"),
                  FILE_NAME ": process.isolation: \"gvisor\": process.syscall_rules cannot be used (the command's "
                  "calls never reach the host's seccomp filters; process.syscalls are applied inside gVisor)" },
                { DOC(", 'files': {'base': 'image', 'image': 'debian'}, 'process': {'isolation': 'gvisor'}"),
                  FILE_NAME ": process.isolation: \"gvisor\": files.base must be \"host\" (runsc comes from the "
                  "host's OS)" },
                { DOC_RES("{'memory': '64M', 'tasks': 512, 'wall_time': '1h'}", ", 'process': {'isolation': 'gvisor'}"),
                  FILE_NAME ": resources.memory: expected at least 128M with process.isolation \"gvisor\" (runsc's "
                  "own memory)" },
                { DOC_RES("{'memory': '1G', 'tasks': 63, 'wall_time': '1h'}", ", 'process': {'isolation': 'gvisor'}"),
                  FILE_NAME ": resources.tasks: expected at least 64 with process.isolation \"gvisor\" (runsc's "
                  "own processes and threads)" },
                { DOC(", 'process': {'isolation': 'gvisor'}, 'request': {'tasks': {'min': 8}}"),
                  FILE_NAME ": request.tasks.min: expected at least 64 with process.isolation \"gvisor\"" },
        };

        assert_int_equal(dflt->isolation, ISOLATION_KERNEL);
        assert_int_equal(kernel->isolation, ISOLATION_KERNEL);
        assert_int_equal(gv->isolation, ISOLATION_GVISOR);
        assert_string_equal(isolation_to_string(ISOLATION_GVISOR), "gvisor");
        assert_int_equal(isolation_from_string("kernel"), ISOLATION_KERNEL);
        assert_int_equal(isolation_from_string("gVisor"), -EINVAL);
        CHECK_ERRORS(table);
}

static void test_nested_paths(void **state) {
        _cleanup_(profile_freep) Profile *p = parse_ok(
                DOC(", 'files': { 'read_only': ['/usr'], 'hidden': ['/usr/share'], 'read_write': ['/usr/share/x'] }"));

        assert_strv_equal(p->read_only, STRV("/usr"));
        assert_strv_equal(p->hidden, STRV("/usr/share"));
        assert_strv_equal(p->read_write, STRV("/usr/share/x"));
}

static void test_description_length(void **state) {
        _cleanup_free_ char *doc = NULL, *long_doc = NULL;
        _cleanup_free_ char *d200 = NULL, *d201 = NULL;
        _cleanup_(profile_freep) Profile *p = NULL;
        char *error = NULL;

        /* 200 characters of two bytes each: counted in characters, not bytes */
        d200 = calloc(200 * 2 + 1, 1);
        assert_non_null(d200);
        for (size_t i = 0; i < 200; i++)
                memcpy(d200 + 2 * i, "\xc3\xa9", 2);
        assert_true(asprintf(&doc,
                             "{'version': 1, 'description': '%s', 'network': " NET_NONE ", 'resources': " RES_DEFAULT
                             "}",
                             d200) > 0);
        p = parse_ok(doc);
        assert_string_equal(p->description, d200);

        d201 = calloc(202, 1);
        assert_non_null(d201);
        memset(d201, 'a', 201);
        assert_true(asprintf(&long_doc,
                             "{'version': 1, 'description': '%s', 'network': " NET_NONE ", 'resources': " RES_DEFAULT
                             "}",
                             d201) > 0);
        assert_int_equal(parse(long_doc, &p, &error), -EINVAL);
        assert_string_equal(error, FILE_NAME ": description: expected 1 to 200 characters, got 201");
        free(error);
}

/* ---- errors ---- */

static void test_syntax_errors(void **state) {
        static const ErrorCase table[] = {
                { "", FILE_NAME ":1:1: unexpected end of data" },
                { "   \n  ", FILE_NAME ":2:3: unexpected end of data" },
                { "{'version': 1,\n", FILE_NAME ":2:1: unexpected end of data" },
                { "{\n  'version': 1,\n  'description': tru\n}", FILE_NAME ":3:21: boolean expected" },
                { "{\n  'version': 1,\n}", FILE_NAME ":3:1: unexpected character" },
                { "[1, 2,]", FILE_NAME ":1:7: unexpected character" },
                { "{version: 1}", FILE_NAME ":1:2: quoted object property name expected" },
                { "// comment\n{}", FILE_NAME ":1:1: unexpected character" },
                { "{'version': 01}", FILE_NAME ":1:15: number expected" },
                /* columns count characters, not bytes */
                { "{'description': '\xc3\xa9\xc3\xa9', x}", FILE_NAME ":1:23: quoted object property name expected" },
                { "{'description': '\xff'}", FILE_NAME ":1:18: invalid utf-8 string" },
                /* trailing garbage, also after a complete, valid document */
                { "{'version': 1} x", FILE_NAME ":1:16: trailing characters after the JSON document" },
                { DOC("") "\n\n  }", FILE_NAME ":3:3: trailing characters after the JSON document" },
                { "{} {}", FILE_NAME ":1:4: trailing characters after the JSON document" },
                { "1 2", FILE_NAME ":1:3: trailing characters after the JSON document" },
        };

        CHECK_ERRORS(table);
}

static void test_nul_byte(void **state) {
        static const char text[] = "{\"version\": 1}\n\0{}";
        Profile *p = NULL;
        char *error = NULL;

        assert_int_equal(profile_parse(text, sizeof(text) - 1, "test", FILE_NAME, &p, &error), -EINVAL);
        assert_null(p);
        assert_string_equal(error, FILE_NAME ":2:1: NUL character");
        free(error);
}

static void test_document_errors(void **state) {
        static const ErrorCase table[] = {
                { "[]", FILE_NAME ": expected a JSON object, got []" },
                { "null", FILE_NAME ": expected a JSON object, got null" },
                { "5", FILE_NAME ": expected a JSON object, got 5" },
                { "'x'", FILE_NAME ": expected a JSON object, got \"x\"" },
                { "{}", FILE_NAME ": version: missing required key" },
                { "{'version': 2, 'bogus': 1}", FILE_NAME ": version: expected format version 1, got 2" },
                { "{'version': '1'}", FILE_NAME ": version: expected format version 1, got \"1\"" },
                { "{'version': 1.0}", FILE_NAME ": version: expected format version 1, got 1.0" },
                { "{'version': 1, 'network': " NET_NONE ", 'resources': " RES_DEFAULT "}",
                  FILE_NAME ": description: missing required key" },
                { "{'version': 1, 'description': 'd', 'resources': " RES_DEFAULT "}",
                  FILE_NAME ": network: missing required key" },
                { "{'version': 1, 'description': 'd', 'network': " NET_NONE "}",
                  FILE_NAME ": resources: missing required key" },
        };

        CHECK_ERRORS(table);
}

static void test_unknown_keys(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'bogus': 1"), FILE_NAME ": bogus: unknown key" },
                { DOC(", 'files': {'bogus': []}"), FILE_NAME ": files.bogus: unknown key" },
                { DOC(", 'process': {'syscalls': {'allow': ['@basic-io'], 'bogus': 1}}"),
                  FILE_NAME ": process.syscalls.bogus: unknown key" },
                { DOC(", 'process': {'syscall_rules': [{'syscall': 'ptrace'}, {'syscall': 'kill', 'Arg': 0}]}"),
                  FILE_NAME ": process.syscall_rules[1].Arg: unknown key" },
                { DOC_NET("{'mode': 'allowlist', 'destinations': [{'host': 'a.org', 'port': 1}]}"),
                  FILE_NAME ": network.destinations[0].port: unknown key" },
                { DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', 'memroy': '1G'}", ""),
                  FILE_NAME ": resources.memroy: unknown key" },
                { DOC(", 'aggregate': {'swap': '1G'}"), FILE_NAME ": aggregate.swap: unknown key" },
                { DOC(", 'lifetime': {'caches': [{'name': 'a', 'path': 'b', 'size': 1}]}"),
                  FILE_NAME ": lifetime.caches[0].size: unknown key" },
                { DOC(", 'request': {'memory': {'min': '4M', 'max': '1G'}}"),
                  FILE_NAME ": request.memory.max: unknown key" },
                { DOC(", 'request': {'dataset': {'under': ['/srv'], 'rw': true}}"),
                  FILE_NAME ": request.dataset.rw: unknown key" },
                { DOC(", 'request': {'swap': {'min': '0'}}"), FILE_NAME ": request.swap: unknown key" },
                /* keys that are not identifiers are quoted, control characters escaped */
                { DOC(", 'files': {'read only': []}"), FILE_NAME ": files.\"read only\": unknown key" },
                { DOC(", 'files': {'a\\nb\\u0001': []}"), FILE_NAME ": files.\"a\\nb\\u0001\": unknown key" },
                { DOC(", '': 1"), FILE_NAME ": \"\": unknown key" },
        };

        CHECK_ERRORS(table);
}

static void test_wrong_types(void **state) {
        static const ErrorCase table[] = {
                { "{'version': 1, 'description': 5}", FILE_NAME ": description: expected a string, got 5" },
                { DOC(", 'files': []"), FILE_NAME ": files: expected an object, got []" },
                { DOC(", 'process': null"), FILE_NAME ": process: expected an object, got null" },
                { DOC(", 'files': {'read_only': '/opt'}"),
                  FILE_NAME ": files.read_only: expected an array, got \"/opt\"" },
                { DOC(", 'files': {'read_only': ['/opt', 1]}"),
                  FILE_NAME ": files.read_only[1]: expected a string, got 1" },
                { DOC(", 'files': {'hidden': [{}]}"), FILE_NAME ": files.hidden[0]: expected a string, got {}" },
                { DOC(", 'files': {'hidden': [[1]]}"),
                  FILE_NAME ": files.hidden[0]: expected a string, got an array" },
                { DOC(", 'process': {'write_execute_memory': 'yes'}"),
                  FILE_NAME ": process.write_execute_memory: expected a boolean, got \"yes\"" },
                { DOC(", 'process': {'syscalls': []}"), FILE_NAME ": process.syscalls: expected an object, got []" },
                { DOC(", 'process': {'syscalls': {'deny': [1]}}"),
                  FILE_NAME ": process.syscalls.deny[0]: expected a string, got 1" },
                { DOC(", 'process': {'syscall_rules': {'syscall': 'kill'}}"),
                  FILE_NAME ": process.syscall_rules: expected an array, got an object" },
                { DOC(", 'process': {'syscall_rules': ['kill']}"),
                  FILE_NAME ": process.syscall_rules[0]: expected an object, got \"kill\"" },
                { DOC(", 'process': {'capabilities': {}}"),
                  FILE_NAME ": process.capabilities: expected an array, got {}" },
                { DOC_NET("'none'"), FILE_NAME ": network: expected an object, got \"none\"" },
                { DOC_RES("{'memory': '2G', 'tasks': '512', 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.tasks: expected an integer of at least 2, got \"512\"" },
                { DOC_RES("{'memory': '2G', 'tasks': 5.5, 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.tasks: expected an integer of at least 2, got 5.5" },
                { DOC(", 'lifetime': {'caches': {}}"), FILE_NAME ": lifetime.caches: expected an array, got {}" },
                { DOC(", 'request': {'network': 'none'}"),
                  FILE_NAME ": request.network: expected an array, got \"none\"" },
                { DOC(", 'request': {'dataset': ['/srv']}"),
                  FILE_NAME ": request.dataset: expected an object, got an array" },
                { DOC(", 'request': {'memory': '16M'}"),
                  FILE_NAME ": request.memory: expected an object, got \"16M\"" },
                { DOC(", 'aggregate': {'tasks': '100'}"),
                  FILE_NAME ": aggregate.tasks: expected an integer >= 0, got \"100\"" },
                /* embedded NUL characters in strings */
                { "{'version': 1, 'description': 'a\\u0000b'}",
                  FILE_NAME ": description: expected a string without NUL characters, got \"a\\u0000b\"" },
                { DOC(", 'files': {'read_only': ['/a\\u0000b']}"),
                  FILE_NAME ": files.read_only[0]: expected a string without NUL characters, got \"/a\\u0000b\"" },
                { DOC_RES("{'memory': '2G\\u0000x', 'tasks': 512, 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.memory: expected a size like \"2G\", got \"2G\\u0000x\"" },
                { DOC_NET("{'mode': 'none\\u0000'}"),
                  FILE_NAME ": network.mode: expected one of none, public, allowlist, got \"none\\u0000\"" },
                { DOC(", 'process': {'syscall_rules': [{'syscall': 'ioctl', 'arg': 1, 'value': 'TIOCSTI\\u0000'}]}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected an integer >= 0 or one of TIOCSTI, TIOCLINUX, "
                            "TIOCSETD, TIOCCONS, got \"TIOCSTI\\u0000\"" },
        };

        CHECK_ERRORS(table);
}

static void test_description_errors(void **state) {
        static const ErrorCase table[] = {
                { "{'version': 1, 'description': ''}",
                  FILE_NAME ": description: expected 1 to 200 characters, got 0" },
                { "{'version': 1, 'description': 'two\\nlines'}",
                  FILE_NAME ": description: expected one line without control characters, got \"two\\nlines\"" },
                { "{'version': 1, 'description': 'tab\\there'}",
                  FILE_NAME ": description: expected one line without control characters, got \"tab\\there\"" },
                { "{'version': 1, 'description': 'esc\\u001b[31m'}",
                  FILE_NAME ": description: expected one line without control characters, got \"esc\\u001b[31m\"" },
                { "{'version': 1, 'description': 'c1\\u009b'}",
                  FILE_NAME ": description: expected one line without control characters, got \"c1\\u009b\"" },
                { "{'version': 1, 'description': 'del\\u007f'}",
                  FILE_NAME ": description: expected one line without control characters, got \"del\\u007f\"" },
        };

        CHECK_ERRORS(table);
}

static void test_size_errors(void **state) {
#define RES_MEM(m) DOC_RES("{'memory': " m ", 'tasks': 512, 'wall_time': '1h'}", "")
#define RES_WITH(extra) DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', " extra "}", "")
        static const ErrorCase table[] = {
                { RES_MEM("true"), FILE_NAME ": resources.memory: expected a size like \"2G\", got true" },
                { RES_MEM("'2X'"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \"2X\"" },
                { RES_MEM("'2g'"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \"2g\"" },
                { RES_MEM("'1.5G'"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \"1.5G\"" },
                { RES_MEM("' 2G'"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \" 2G\"" },
                { RES_MEM("'-1'"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \"-1\"" },
                { RES_MEM("-1"), FILE_NAME ": resources.memory: expected a size like \"2G\", got -1" },
                { RES_MEM("2.0"), FILE_NAME ": resources.memory: expected a size like \"2G\", got 2.0" },
                { RES_MEM("''"), FILE_NAME ": resources.memory: expected a size like \"2G\", got \"\"" },
                { RES_MEM("'99999999T'"),
                  FILE_NAME ": resources.memory: expected a size like \"2G\", got \"99999999T\"" },
                /* json-c saturates integers beyond 64 bits: refused rather than taken as the maximum */
                { RES_MEM("99999999999999999999"),
                  FILE_NAME ": resources.memory: expected a size like \"2G\", got 18446744073709551615" },
                { RES_MEM("'1M'"), FILE_NAME ": resources.memory: expected at least 4M, got \"1M\"" },
                { RES_MEM("4194303"), FILE_NAME ": resources.memory: expected at least 4M, got 4194303" },
                { RES_MEM("'0'"), FILE_NAME ": resources.memory: expected at least 4M, got \"0\"" },
                { RES_WITH("'swap': '1 G'"), FILE_NAME ": resources.swap: expected a size like \"2G\", got \"1 G\"" },
                { RES_WITH("'disk': '512K'"), FILE_NAME ": resources.disk: expected at least 1M, got \"512K\"" },
                { RES_WITH("'output': false"),
                  FILE_NAME ": resources.output: expected a size like \"2G\", got false" },
                { RES_WITH("'output_action': 'kill'"),
                  FILE_NAME ": resources.output_action: expected one of stop, cut, got \"kill\"" },
                { DOC(", 'environment': { 'allow': ['A=B'] }"),
                  FILE_NAME ": environment.allow[0]: expected a variable name or a glob of names, got \"A=B\"" },
                { DOC(", 'environment': { 'deny': ['LD_*', 'LD_*'] }"),
                  FILE_NAME ": environment.deny[1]: 'LD_*' is also in environment.deny[0]" },
                { DOC(", 'environment': { 'allow': '*' }"),
                  FILE_NAME ": environment.allow: expected an array, got \"*\"" },
                { DOC(", 'environment': { 'keep': [] }"),
                  FILE_NAME ": environment.keep: unknown key" },
                { DOC_RES("{'tasks': 512, 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.memory: missing required key" },
                { DOC_RES("{'memory': '2G', 'tasks': 1, 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.tasks: expected an integer of at least 2, got 1" },
                { DOC_RES("{'memory': '2G', 'tasks': -5, 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.tasks: expected an integer of at least 2, got -5" },
                { DOC_RES("{'memory': '2G', 'wall_time': '1h'}", ""),
                  FILE_NAME ": resources.tasks: missing required key" },
        };

        CHECK_ERRORS(table);
}

static void test_duration_cpu_errors(void **state) {
#define RES_TIME(t) DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': " t "}", "")
        static const ErrorCase table[] = {
                { RES_TIME("'1x'"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"1x\"" },
                { RES_TIME("'1 h'"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"1 h\"" },
                { RES_TIME("'h'"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"h\"" },
                { RES_TIME("'d'"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"d\"" },
                { RES_TIME("'1.5h'"),
                  FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"1.5h\"" },
                { RES_TIME("-1"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got -1" },
                { RES_TIME("[]"), FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got []" },
                { RES_TIME("'999999999999999999d'"),
                  FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got \"999999999999999999d\"" },
                { RES_TIME("99999999999999"),
                  FILE_NAME ": resources.wall_time: expected a duration like \"1h\", got 99999999999999" },
                { RES_TIME("'500ms'"), FILE_NAME ": resources.wall_time: expected at least 1s, got \"500ms\"" },
                { RES_TIME("'999999us'"), FILE_NAME ": resources.wall_time: expected at least 1s, got \"999999us\"" },
                { RES_TIME("0"), FILE_NAME ": resources.wall_time: expected at least 1s, got 0" },
                { DOC_RES("{'memory': '2G', 'tasks': 512}", ""),
                  FILE_NAME ": resources.wall_time: missing required key" },
                { RES_WITH("'cpu': '200'"),
                  FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"200\"" },
                { RES_WITH("'cpu': 200"), FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got 200" },
                { RES_WITH("'cpu': '-5%'"),
                  FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"-5%\"" },
                { RES_WITH("'cpu': '1.5%'"),
                  FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"1.5%\"" },
                { RES_WITH("'cpu': '%'"), FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"%\"" },
                { RES_WITH("'cpu': '50%%'"),
                  FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"50%%\"" },
                { RES_WITH("'cpu': '1000001%'"),
                  FILE_NAME ": resources.cpu: expected a CPU share like \"200%\", got \"1000001%\"" },
        };

        CHECK_ERRORS(table);
}

static void test_path_errors(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'files': {'read_only': ['opt']}"),
                  FILE_NAME ": files.read_only[0]: expected an absolute, normalized path, got \"opt\"" },
                { DOC(", 'files': {'read_only': ['/opt/']}"),
                  FILE_NAME ": files.read_only[0]: expected an absolute, normalized path, got \"/opt/\"" },
                { DOC(", 'files': {'read_write': ['/a//b']}"),
                  FILE_NAME ": files.read_write[0]: expected an absolute, normalized path, got \"/a//b\"" },
                { DOC(", 'files': {'hidden': ['/a/../etc']}"),
                  FILE_NAME ": files.hidden[0]: expected an absolute, normalized path, got \"/a/../etc\"" },
                { DOC(", 'files': {'hidden': ['/a/.']}"),
                  FILE_NAME ": files.hidden[0]: expected an absolute, normalized path, got \"/a/.\"" },
                { DOC(", 'files': {'hidden': ['']}"),
                  FILE_NAME ": files.hidden[0]: expected an absolute, normalized path, got \"\"" },
                { DOC(", 'files': {'read_only': ['/my dir']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/my dir\"" },
                { DOC(", 'files': {'read_only': ['/a:b']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/a:b\"" },
                { DOC(", 'files': {'read_only': ['/a\\\\b']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/a\\\\b\"" },
                { DOC(", 'files': {'read_only': ['/a\\\"b']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/a\\\"b\"" },
                { DOC(", 'files': {'read_only': ['/srv/100%n']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/srv/100%n\"" },
                { DOC(", 'files': {'read_only': ['/a\\tb']}"),
                  FILE_NAME ": files.read_only[0]: expected a path without ':', '\"', '\\', '%', white space or control "
                            "characters, got \"/a\\tb\"" },
                { DOC(", 'files': {'read_only': ['/']}"), FILE_NAME
                  ": files.read_only[0]: expected a path other than / and outside /proc, /sys and /dev, got \"/\"" },
                { DOC(", 'files': {'hidden': ['/proc']}"), FILE_NAME
                  ": files.hidden[0]: expected a path other than / and outside /proc, /sys and /dev, got \"/proc\"" },
                { DOC(", 'files': {'read_write': ['/sys/fs/cgroup']}"),
                  FILE_NAME ": files.read_write[0]: expected a path other than / and outside /proc, /sys and /dev, "
                            "got \"/sys/fs/cgroup\"" },
                { DOC(", 'files': {'read_only': ['/dev/sda']}"),
                  FILE_NAME ": files.read_only[0]: expected a path other than / and outside /proc, /sys and /dev, got "
                            "\"/dev/sda\"" },
                { DOC(", 'files': {'base': 'empty'}"), FILE_NAME ": files.base: expected \"host\" or \"image\", got \"empty\"" },
                { DOC(", 'files': {'workspace': true}"),
                  FILE_NAME ": files.workspace: expected \"writable\" or \"none\", got true" },
                { DOC(", 'files': {'workspace': 'readonly'}"),
                  FILE_NAME ": files.workspace: expected \"writable\" or \"none\", got \"readonly\"" },
        };

        CHECK_ERRORS(table);
}

static void test_path_too_long(void **state) {
        _cleanup_free_ char *path = NULL, *doc = NULL, *expected = NULL;
        Profile *p = NULL;
        char *error = NULL;

        /* "/aaa...": 4096 bytes, normalized */
        path = malloc(4097);
        assert_non_null(path);
        path[0] = '/';
        memset(path + 1, 'a', 4095);
        path[4096] = 0;
        assert_true(asprintf(&doc, DOC(", 'files': {'read_only': ['%s']}"), path) > 0);
        assert_int_equal(parse(doc, &p, &error), -EINVAL);
        assert_string_equal(error, FILE_NAME ": files.read_only[0]: expected a path of at most 4095 bytes, got 4096");
        free(error);

        /* 4095 is fine */
        path[4095] = 0;
        free(doc);
        assert_true(asprintf(&doc, DOC(", 'files': {'read_only': ['%s']}"), path) > 0);
        p = parse_ok(doc);
        assert_int_equal(strlen(p->read_only[0]), 4095);
        profile_free(p);
}

static void test_path_contradictions(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'files': {'read_only': ['/opt'], 'hidden': ['/srv', '/opt']}"),
                  FILE_NAME ": files.hidden[1]: '/opt' is also in files.read_only[0]" },
                { DOC(", 'files': {'read_write': ['/opt'], 'read_only': ['/a', '/opt']}"),
                  FILE_NAME ": files.read_write[0]: '/opt' is also in files.read_only[1]" },
                { DOC(", 'files': {'read_write': ['/x'], 'hidden': ['/x']}"),
                  FILE_NAME ": files.hidden[0]: '/x' is also in files.read_write[0]" },
                { DOC(", 'files': {'read_write': ['/x', '/y', '/x']}"),
                  FILE_NAME ": files.read_write[2]: '/x' is also in files.read_write[0]" },
        };

        CHECK_ERRORS(table);
}

static void test_syscall_errors(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'process': {'syscalls': {'deny': ['ptrace', 'kill', 'ptrac']}}"),
                  FILE_NAME ": process.syscalls.deny[2]: unknown syscall 'ptrac'" },
                { DOC(", 'process': {'syscalls': {'allow': ['@system-service', '@bogus']}}"),
                  FILE_NAME ": process.syscalls.allow[1]: unknown syscall group '@bogus'" },
                { DOC(", 'process': {'syscalls': {'allow': ['@System-service']}}"),
                  FILE_NAME ": process.syscalls.allow[0]: expected a syscall group or name, got \"@System-service\"" },
                { DOC(", 'process': {'syscalls': {'deny': ['PTRACE']}}"),
                  FILE_NAME ": process.syscalls.deny[0]: expected a syscall group or name, got \"PTRACE\"" },
                { DOC(", 'process': {'syscalls': {'deny': ['']}}"),
                  FILE_NAME ": process.syscalls.deny[0]: expected a syscall group or name, got \"\"" },
                { DOC(", 'process': {'syscalls': {'deny': ['@']}}"),
                  FILE_NAME ": process.syscalls.deny[0]: expected a syscall group or name, got \"@\"" },
                { DOC(", 'process': {'syscalls': {'deny': ['kill:EPERM']}}"),
                  FILE_NAME ": process.syscalls.deny[0]: expected a syscall group or name, got \"kill:EPERM\"" },
                { DOC(", 'process': {'syscalls': {'allow': []}}"),
                  FILE_NAME ": process.syscalls.allow: expected at least one syscall group or name, got []" },
                /* contradictions */
                { DOC(", 'process': {'syscalls': {'allow': ['@system-service', 'ptrace'], 'deny': ['kill', "
                      "'ptrace']}}"),
                  FILE_NAME ": process.syscalls.deny[1]: 'ptrace' is also in process.syscalls.allow[1]" },
                { DOC(", 'process': {'syscalls': {'deny': ['@system-service']}}"),
                  FILE_NAME ": process.syscalls.deny[0]: '@system-service' is also in process.syscalls.allow[0]" },
                { DOC(", 'process': {'syscalls': {'deny': ['kill', 'kill']}}"),
                  FILE_NAME ": process.syscalls.deny[1]: 'kill' is also in process.syscalls.deny[0]" },
                /* the exec helper installs its filter with seccomp() */
                { DOC(", 'process': {'syscalls': {'deny': ['kill', 'seccomp']}}"),
                  FILE_NAME ": process.syscalls.deny[1]: seccomp may not be denied (sbx's exec helper needs "
                            "seccomp() to install its filter)" },
        };
        _cleanup_(profile_freep) Profile *p =
                parse_ok(DOC(", 'process': {'syscalls': {'allow': ['@system-service', 'seccomp'], 'deny': ['kill']}}"));

        assert_strv_equal(p->syscall_allow, STRV("@system-service", "seccomp"));

        CHECK_ERRORS(table);
}

static void test_syscall_names(void **state) {
        /* A name of another architecture (socketcall is i386's) resolves to a pseudo number: systemd
         * skips it, so it is not an error. Every known group is accepted. */
        _cleanup_(profile_freep) Profile *p = parse_ok(
                DOC(", 'process': {'syscalls': {'allow': ['@aio', '@basic-io', '@chown', '@clock', '@cpu-emulation', "
                    "'@debug', '@default', '@file-system', '@io-event', '@ipc', '@keyring', '@known', '@memlock', "
                    "'@module', '@mount', '@network-io', '@obsolete', '@pkey', '@privileged', '@process', '@raw-io', "
                    "'@reboot', '@resources', '@sandbox', '@setuid', '@signal', '@swap', '@sync', "
                    "'@system-service', '@timer'], 'deny': ['socketcall', 'io_uring_setup']}}"));

        assert_int_equal(strv_length(p->syscall_allow), 30);
        assert_strv_equal(p->syscall_deny, STRV("socketcall", "io_uring_setup"));
}

static void test_syscall_groups(void **state) {
        const char *const *g = profile_syscall_groups();
        size_t n = 0;

        assert_non_null(g);
        for (; g[n]; n++) {
                assert_true(g[n][0] == '@');
                if (n > 0)
                        assert_true(strcmp(g[n - 1], g[n]) < 0);
        }
        assert_int_equal(n, 30);
}

static void test_syscall_rules(void **state) {
        _cleanup_(profile_freep) Profile *p =
                parse_ok(DOC(", 'process': {'syscall_rules': ["
                             "{'syscall': 'ioctl', 'arg': 1, 'value': 'TIOCSTI'}, "
                             "{'syscall': 'ioctl', 'arg': 1, 'op': 'eq', 'value': 'TIOCLINUX', 'bits': 64}, "
                             "{'syscall': 'ioctl', 'arg': 1, 'value': 'TIOCCONS', 'bits': 32}, "
                             "{'syscall': 'ioctl', 'arg': 0, 'value': 3}, "
                             "{'syscall': 'ioctl', 'arg': 1, 'op': 'masked_eq', 'value': 21504, 'mask': 65280}, "
                             "{'syscall': 'prctl', 'arg': 0, 'op': 'gt', 'value': 4294967296}, "
                             "{'syscall': 'kill', 'arg': 5, 'op': 'lt', 'value': 0}, "
                             "{'syscall': 'kill', 'arg': 4, 'op': 'le', 'value': 1}]}"));
        static const struct {
                const char *syscall;
                unsigned arg;
                SyscallCmp cmp;
                uint64_t value, mask;
                bool arg32;
                const char *value_name;
        } expected[] = {
                { "ioctl", 1, SYSCALL_CMP_EQ, TIOCSTI, 0, true, "TIOCSTI" },
                { "ioctl", 1, SYSCALL_CMP_EQ, TIOCLINUX, 0, true, "TIOCLINUX" },
                { "ioctl", 1, SYSCALL_CMP_EQ, TIOCCONS, 0, true, "TIOCCONS" },
                { "ioctl", 0, SYSCALL_CMP_EQ, 3, 0, false, NULL },
                { "ioctl", 1, SYSCALL_CMP_MASKED_EQ, 0x5400, 0xff00, true, NULL },
                { "prctl", 0, SYSCALL_CMP_GT, 1ULL << 32, 0, false, NULL },
                { "kill", 5, SYSCALL_CMP_LT, 0, 0, false, NULL },
                { "kill", 4, SYSCALL_CMP_LE, 1, 0, false, NULL },
        };

        assert_int_equal(p->n_rules, ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                const SyscallRule *r = &p->rules[i];

                assert_string_equal(r->syscall, expected[i].syscall);
                assert_int_equal(r->nr, seccomp_syscall_resolve_name(expected[i].syscall));
                assert_true(r->nr >= 0);
                assert_true(r->has_arg);
                assert_int_equal(r->arg, expected[i].arg);
                assert_int_equal(r->cmp, expected[i].cmp);
                assert_true(r->value == expected[i].value);
                assert_true(r->mask == expected[i].mask);
                assert_int_equal(r->arg32, expected[i].arg32);
                if (expected[i].value_name)
                        assert_string_equal(r->value_name, expected[i].value_name);
                else
                        assert_null(r->value_name);
        }
}

static void test_syscall_rule_errors(void **state) {
#define RULES(...) DOC(", 'process': {'syscall_rules': [" __VA_ARGS__ "]}")
        static const ErrorCase table[] = {
                { RULES("{'syscall': 'kill'}, {'arg': 0, 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[1].syscall: missing required key" },
                { RULES("{'syscall': 'ptrac'}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: unknown syscall 'ptrac'" },
                { RULES("{'syscall': 'Kill'}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: expected a syscall name, got \"Kill\"" },
                { RULES("{'syscall': '@mount'}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: expected a syscall name, got \"@mount\"" },
                { RULES("{'syscall': 5}"), FILE_NAME ": process.syscall_rules[0].syscall: expected a string, got 5" },
                /* syscalls sbx itself needs or already covers */
                { RULES("{'syscall': 'kill'}, {'syscall': 'sendmsg'}"),
                  FILE_NAME ": process.syscall_rules[1].syscall: a rule on sendmsg is not supported (sbx's exec "
                            "helper calls it after the filter is in force)" },
                { RULES("{'syscall': 'sendmsg', 'arg': 0, 'value': 3}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: a rule on sendmsg is not supported (sbx's exec "
                            "helper calls it after the filter is in force)" },
                { RULES("{'syscall': 'seccomp'}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: a rule on seccomp is not supported (sbx catches every "
                            "seccomp() call of the command already)" },
                { RULES("{'syscall': 'seccomp', 'arg': 0, 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[0].syscall: a rule on seccomp is not supported (sbx catches every "
                            "seccomp() call of the command already)" },
                { RULES("{'syscall': 'kill', 'arg': 6, 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[0].arg: expected an argument number from 0 to 5, got 6" },
                { RULES("{'syscall': 'kill', 'arg': -1, 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[0].arg: expected an argument number from 0 to 5, got -1" },
                { RULES("{'syscall': 'kill', 'arg': '1', 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[0].arg: expected an argument number from 0 to 5, got \"1\"" },
                { RULES("{'syscall': 'kill', 'arg': 1}"),
                  FILE_NAME ": process.syscall_rules[0].value: missing required key (a rule with \"arg\" needs one)" },
                { RULES("{'syscall': 'kill', 'value': 1}"),
                  FILE_NAME ": process.syscall_rules[0].value: only allowed with \"arg\"" },
                { RULES("{'syscall': 'kill', 'op': 'eq'}"),
                  FILE_NAME ": process.syscall_rules[0].op: only allowed with \"arg\"" },
                { RULES("{'syscall': 'kill', 'bits': 32}"),
                  FILE_NAME ": process.syscall_rules[0].bits: only allowed with \"arg\"" },
                { RULES("{'syscall': 'kill', 'arg': 1, 'op': 'like', 'value': 1}"), FILE_NAME
                  ": process.syscall_rules[0].op: expected one of eq, ne, lt, le, gt, ge, masked_eq, got \"like\"" },
                { RULES("{'syscall': 'ioctl', 'arg': 1, 'value': 'TIOCFOO'}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected an integer >= 0 or one of TIOCSTI, TIOCLINUX, "
                            "TIOCSETD, TIOCCONS, got \"TIOCFOO\"" },
                { RULES("{'syscall': 'ioctl', 'arg': 1, 'value': -1}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected an integer >= 0 or one of TIOCSTI, TIOCLINUX, "
                            "TIOCSETD, TIOCCONS, got -1" },
                { RULES("{'syscall': 'ioctl', 'arg': 1, 'value': 1.5}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected an integer >= 0 or one of TIOCSTI, TIOCLINUX, "
                            "TIOCSETD, TIOCCONS, got 1.5" },
                /* masked_eq needs a mask, and only it may have one */
                { RULES("{'syscall': 'clone', 'arg': 0, 'op': 'masked_eq', 'value': 1}"), FILE_NAME
                  ": process.syscall_rules[0].mask: missing required key (\"op\": \"masked_eq\" needs one)" },
                { RULES("{'syscall': 'clone', 'arg': 0, 'value': 1, 'mask': 1}"),
                  FILE_NAME ": process.syscall_rules[0].mask: only allowed with \"op\": \"masked_eq\"" },
                { RULES("{'syscall': 'clone', 'arg': 0, 'op': 'ne', 'value': 1, 'mask': 1}"),
                  FILE_NAME ": process.syscall_rules[0].mask: only allowed with \"op\": \"masked_eq\"" },
                { RULES("{'syscall': 'clone', 'arg': 0, 'op': 'masked_eq', 'value': 1, 'mask': '1'}"),
                  FILE_NAME ": process.syscall_rules[0].mask: expected an integer >= 0, got \"1\"" },
                { RULES("{'syscall': 'kill', 'arg': 1, 'value': 1, 'bits': 16}"),
                  FILE_NAME ": process.syscall_rules[0].bits: expected 32 or 64, got 16" },
                { RULES("{'syscall': 'kill', 'arg': 1, 'value': 1, 'bits': '64'}"),
                  FILE_NAME ": process.syscall_rules[0].bits: expected 32 or 64, got \"64\"" },
                /* 32-bit compares: a value that does not fit would never match */
                { RULES("{'syscall': 'kill', 'arg': 1, 'value': 4294967296, 'bits': 32}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected a 32-bit value (the compare uses 32 bits), "
                            "got 4294967296" },
                { RULES("{'syscall': 'ioctl', 'arg': 1, 'value': 4294988818}"),
                  FILE_NAME ": process.syscall_rules[0].value: expected a 32-bit value (the compare uses 32 bits), "
                            "got 4294988818" },
                { RULES("{'syscall': 'ioctl', 'arg': 1, 'op': 'masked_eq', 'value': 1, 'mask': 18446744073709551614}"),
                  FILE_NAME ": process.syscall_rules[0].mask: expected a 32-bit mask (the compare uses 32 bits), got "
                            "18446744073709551614" },
        };

        CHECK_ERRORS(table);
}

static void test_syscall_rule_foreign(void **state) {
        /* A name libseccomp knows only for other architectures (socketcall is i386's and s390's, open is not
         * one of aarch64's) resolves to a negative pseudo number: a rule on it could never match. */
        static const char *const candidates[] = { "socketcall", "open" };
        const char *name = NULL;
        _cleanup_free_ char *doc = NULL, *expected = NULL;

        for (size_t i = 0; i < ELEMENTSOF(candidates) && !name; i++)
                if (seccomp_syscall_resolve_name(candidates[i]) < 0 &&
                    seccomp_syscall_resolve_name(candidates[i]) != __NR_SCMP_ERROR)
                        name = candidates[i];
        if (!name) {
                print_message("socketcall and open are both native syscalls here: skipping\n");
                skip();
        }
        assert_true(asprintf(&doc, RULES("{'syscall': 'kill'}, {'syscall': '%s', 'arg': 0, 'value': 1}"), name) > 0);
        assert_true(asprintf(&expected,
                             FILE_NAME ": process.syscall_rules[1].syscall: '%s' is not a syscall of the native "
                                       "architecture, a rule on it could never match",
                             name) > 0);
        check_errors(&(const ErrorCase) { doc, expected }, 1);
}

static void test_process_errors(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'process': {'namespaces': ['net', 'bogus']}"), FILE_NAME
                  ": process.namespaces[1]: expected one of cgroup, ipc, mnt, net, pid, user, uts, got \"bogus\"" },
                { DOC(", 'process': {'namespaces': ['mount']}"), FILE_NAME
                  ": process.namespaces[0]: expected one of cgroup, ipc, mnt, net, pid, user, uts, got \"mount\"" },
                { DOC(", 'process': {'namespaces': ['net', 'user', 'net']}"),
                  FILE_NAME ": process.namespaces[2]: 'net' is also in process.namespaces[0]" },
                { DOC(", 'process': {'capabilities': ['CAP_SYS_ADMIN']}"),
                  FILE_NAME ": process.capabilities: expected [] (runs get no capabilities in version 1)" },
                { DOC(", 'process': {'devices': 'host'}"),
                  FILE_NAME ": process.devices: expected \"private\", got \"host\"" },
        };
        _cleanup_(profile_freep) Profile *p =
                parse_ok(DOC(", 'process': {'namespaces': ['cgroup', 'ipc', 'mnt', 'net', 'pid', 'user', 'uts']}"));

        assert_int_equal(p->namespaces, CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
                                                CLONE_NEWUSER | CLONE_NEWUTS);
        CHECK_ERRORS(table);
}

#define LABEL64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void test_network_errors(void **state) {
#define ALLOW(...) DOC_NET("{'mode': 'allowlist', 'destinations': [" __VA_ARGS__ "]}")
#define DNS_EXPECTED "expected a DNS name of at least two labels, or \"*.\" and one"
        static const ErrorCase table[] = {
                { DOC_NET("{}"), FILE_NAME ": network.mode: missing required key" },
                { DOC_NET("{'mode': 'open'}"),
                  FILE_NAME ": network.mode: expected one of none, public, allowlist, got \"open\"" },
                { DOC_NET("{'mode': 'None'}"),
                  FILE_NAME ": network.mode: expected one of none, public, allowlist, got \"None\"" },
                { DOC_NET("{'mode': 'none', 'destinations': [{'host': 'a.org'}]}"),
                  FILE_NAME ": network.destinations: only allowed with \"mode\": \"allowlist\"" },
                { DOC_NET("{'mode': 'public', 'destinations': []}"),
                  FILE_NAME ": network.destinations: only allowed with \"mode\": \"allowlist\"" },
                { DOC_NET("{'mode': 'allowlist'}"),
                  FILE_NAME ": network.destinations: missing required key (\"mode\": \"allowlist\" needs it)" },
                { ALLOW(), FILE_NAME ": network.destinations: expected at least one destination, got []" },
                { DOC_NET("{'mode': 'allowlist', 'destinations': {}}"),
                  FILE_NAME ": network.destinations: expected an array, got {}" },
                { ALLOW("{'host': 'a.org'}, {'host': 'b.org', 'address': '192.0.2.1'}"),
                  FILE_NAME ": network.destinations[1]: expected exactly one of \"host\" and \"address\"" },
                { ALLOW("{'ports': [443]}"),
                  FILE_NAME ": network.destinations[0]: expected exactly one of \"host\" and \"address\"" },
                { ALLOW("{'host': 'bad_name.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"bad_name.org\"" },
                { ALLOW("{'host': '192.0.2.1'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"192.0.2.1\"" },
                { ALLOW("{'host': '-a.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"-a.org\"" },
                { ALLOW("{'host': 'a..org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a..org\"" },
                { ALLOW("{'host': 'a.org.'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a.org.\"" },
                { ALLOW("{'host': ''}"), FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"\"" },
                { ALLOW("{'host': 443}"), FILE_NAME ": network.destinations[0].host: expected a string, got 443" },
                { ALLOW("{'address': 'pypi.org'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"pypi.org\"" },
                { ALLOW("{'address': '10.0.0.0/33'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"10.0.0.0/33\"" },
                { ALLOW("{'address': '10.0.0.0/'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"10.0.0.0/\"" },
                { ALLOW("{'address': '10.0.0.0/08'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"10.0.0.0/08\"" },
                { ALLOW("{'address': '2001:db8::/129'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"2001:db8::/129\"" },
                { ALLOW("{'address': '10.1'}"),
                  FILE_NAME ": network.destinations[0].address: expected an IPv4 or IPv6 address, optionally with a "
                            "/prefix length, got \"10.1\"" },
                { ALLOW("{'host': 'a.org', 'ports': [0]}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a port from 1 to 65535, got 0" },
                { ALLOW("{'host': 'a.org', 'ports': [443, 65536]}"),
                  FILE_NAME ": network.destinations[0].ports[1]: expected a port from 1 to 65535, got 65536" },
                { ALLOW("{'host': 'a.org', 'ports': ['443']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a port from 1 to 65535 or a range "
                            "\"LO-HI\", got \"443\"" },
                { ALLOW("{'host': 'a.org', 'ports': [443, 80, 443]}"),
                  FILE_NAME ": network.destinations[0].ports[2]: 443 is also in network.destinations[0].ports[0]" },
                /* names */
                { ALLOW("{'host': 'org'}"), FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"org\"" },
                { ALLOW("{'host': '*.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"*.org\"" },
                { ALLOW("{'host': '*'}"), FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"*\"" },
                { ALLOW("{'host': '*.'}"), FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"*.\"" },
                { ALLOW("{'host': 'a.*.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a.*.org\"" },
                { ALLOW("{'host': '*a.b.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"*a.b.org\"" },
                { ALLOW("{'host': '*.*.b.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"*.*.b.org\"" },
                { ALLOW("{'host': 'a-.org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a-.org\"" },
                { ALLOW("{'host': 'a.123'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a.123\"" },
                { ALLOW("{'host': 'a.b c'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"a.b c\"" },
                { ALLOW("{'host': '" LABEL64 ".org'}"),
                  FILE_NAME ": network.destinations[0].host: " DNS_EXPECTED ", got \"" LABEL64 "...\"" },
                /* port ranges */
                { ALLOW("{'host': 'a.org', 'ports': ['80-79']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"80-79\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['0-80']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"0-80\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['1-65536']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"1-65536\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['080-90']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"080-90\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['80 - 90']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"80 - 90\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['80-90-100']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"80-90-100\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['-80']}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a range \"LO-HI\" with 1 <= LO <= HI <= "
                            "65535, got \"-80\"" },
                { ALLOW("{'host': 'a.org', 'ports': [-1]}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a port from 1 to 65535 or a range "
                            "\"LO-HI\", got -1" },
                { ALLOW("{'host': 'a.org', 'ports': [443.0]}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a port from 1 to 65535 or a range "
                            "\"LO-HI\", got 443.0" },
                { ALLOW("{'host': 'a.org', 'ports': [80, '8000-8100', '8100-8200']}"),
                  FILE_NAME ": network.destinations[0].ports[2]: overlaps network.destinations[0].ports[1], "
                            "expected ports and ranges that do not, got \"8100-8200\"" },
                { ALLOW("{'host': 'a.org', 'ports': ['70-90', 80]}"),
                  FILE_NAME ": network.destinations[0].ports[1]: overlaps network.destinations[0].ports[0], "
                            "expected ports and ranges that do not, got 80" },
                { ALLOW("{'host': 'a.org', 'ports': [{}]}"),
                  FILE_NAME ": network.destinations[0].ports[0]: expected a port from 1 to 65535 or a range "
                            "\"LO-HI\", got {}" },
                /* protocol and private */
                { ALLOW("{'host': 'a.org', 'protocol': 'icmp'}"),
                  FILE_NAME ": network.destinations[0].protocol: expected one of tcp, udp, any, got \"icmp\"" },
                { ALLOW("{'host': 'a.org', 'protocol': 'TCP'}"),
                  FILE_NAME ": network.destinations[0].protocol: expected one of tcp, udp, any, got \"TCP\"" },
                { ALLOW("{'host': 'a.org', 'private': 'yes'}"),
                  FILE_NAME ": network.destinations[0].private: expected a boolean, got \"yes\"" },
                { ALLOW("{'address': '192.0.2.1', 'private': true}"),
                  FILE_NAME ": network.destinations[0].private: only allowed with a \"host\", or an \"address\" "
                            "in a private or shared range ('192.0.2.1' is in neither)" },
                { ALLOW("{'address': '10.0.0.0/7', 'private': true}"),
                  FILE_NAME ": network.destinations[0].private: only allowed with a \"host\", or an \"address\" "
                            "in a private or shared range ('10.0.0.0/7' is in neither)" },
                /* always-denied ranges */
                { ALLOW("{'address': '10.1.2.3'}"),
                  FILE_NAME ": network.destinations[0].address: '10.1.2.3' lies in the private range 10.0.0.0/8: set "
                            "\"private\": true to open it" },
                { ALLOW("{'address': '100.64.0.0/10', 'ports': [53]}"),
                  FILE_NAME ": network.destinations[0].address: '100.64.0.0/10' lies in the shared (carrier-grade "
                            "NAT) range 100.64.0.0/10: set \"private\": true to open it" },
                { ALLOW("{'address': 'fd12::/16'}"),
                  FILE_NAME ": network.destinations[0].address: 'fd12::/16' lies in the private range fc00::/7: "
                            "set \"private\": true to open it" },
                { ALLOW("{'address': '169.254.169.254', 'private': true}"),
                  FILE_NAME ": network.destinations[0].address: '169.254.169.254' lies in the link-local (metadata) "
                            "range 169.254.0.0/16, which no profile can open" },
                { ALLOW("{'address': 'fd00:ec2::254', 'private': true}"),
                  FILE_NAME ": network.destinations[0].address: 'fd00:ec2::254' lies in the link-local (metadata) "
                            "range fd00:ec2::254/128, which no profile can open" },
                { ALLOW("{'address': '127.0.0.1'}"),
                  FILE_NAME ": network.destinations[0].address: '127.0.0.1' lies in the loopback range 127.0.0.0/8, "
                            "which no profile can open (a run's own loopback is always allowed)" },
                { ALLOW("{'address': '::1'}"),
                  FILE_NAME ": network.destinations[0].address: '::1' lies in the loopback range ::1/128, "
                            "which no profile can open (a run's own loopback is always allowed)" },
                { ALLOW("{'address': 'fe80::1/64'}"),
                  FILE_NAME ": network.destinations[0].address: 'fe80::1/64' lies in the link-local (metadata) "
                            "range fe80::/10, which no profile can open" },
                { ALLOW("{'address': '224.0.0.251'}"),
                  FILE_NAME ": network.destinations[0].address: '224.0.0.251' lies in the multicast range "
                            "224.0.0.0/4, which no profile can open" },
                { ALLOW("{'address': '255.255.255.255'}"),
                  FILE_NAME ": network.destinations[0].address: '255.255.255.255' lies in the broadcast address "
                            "255.255.255.255/32, which no profile can open" },
                { ALLOW("{'address': '0.0.0.0'}"),
                  FILE_NAME ": network.destinations[0].address: '0.0.0.0' lies in the unspecified address range "
                            "0.0.0.0/8, which no profile can open" },
                { ALLOW("{'address': '::'}"),
                  FILE_NAME ": network.destinations[0].address: '::' lies in the unspecified address range ::/128, "
                            "which no profile can open" },
                { ALLOW("{'address': '240.0.0.1'}"),
                  FILE_NAME ": network.destinations[0].address: '240.0.0.1' lies in the reserved range 240.0.0.0/4, "
                            "which no profile can open" },
                { ALLOW("{'address': '64:ff9b::10.0.0.1', 'private': true}"),
                  FILE_NAME ": network.destinations[0].address: '64:ff9b::10.0.0.1' lies in the IPv6 form of a "
                            "denied IPv4 range 64:ff9b::a00:0/104, which no profile can open" },
                { ALLOW("{'address': '2002:a9fe:a9fe::1'}"),
                  FILE_NAME ": network.destinations[0].address: '2002:a9fe:a9fe::1' lies in the IPv6 form of a "
                            "denied IPv4 range 2002:a9fe::/32, which no profile can open" },
                { ALLOW("{'address': '::169.254.169.254'}"),
                  FILE_NAME ": network.destinations[0].address: '::169.254.169.254' lies in the IPv6 form of a "
                            "denied IPv4 range ::169.254.0.0/112, which no profile can open" },
                { ALLOW("{'address': '64:ff9b:1::5'}"),
                  FILE_NAME ": network.destinations[0].address: '64:ff9b:1::5' lies in the IPv6 form of a "
                            "denied IPv4 range 64:ff9b:1::/48, which no profile can open" },
                { ALLOW("{'host': 'a.org', 'ports': []}"),
                  FILE_NAME ": network.destinations[0].ports: expected at least one port (leave \"ports\" out for "
                            "every port), got []" },
        };

        CHECK_ERRORS(table);
}

static void test_aggregate_errors(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'aggregate': {'memory': '1G'}"),
                  FILE_NAME ": aggregate.memory: expected 0 (no limit) or at least the per-run value "
                            "(resources.memory), got \"1G\"" },
                { DOC(", 'aggregate': {'memory': true}"),
                  FILE_NAME ": aggregate.memory: expected a size like \"2G\", got true" },
                { DOC(", 'aggregate': {'tasks': 511}"),
                  FILE_NAME ": aggregate.tasks: expected 0 (no limit) or at least the per-run value "
                            "(resources.tasks), got 511" },
                { DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', 'cpu': '200%'}",
                          ", 'aggregate': {'cpu': '100%'}"),
                  FILE_NAME ": aggregate.cpu: expected \"0%\" (no limit) or at least the per-run value "
                            "(resources.cpu), got \"100%\"" },
                { DOC(", 'aggregate': {'cpu': 4}"),
                  FILE_NAME ": aggregate.cpu: expected a CPU share like \"200%\", got 4" },
        };
        _cleanup_(profile_freep) Profile *p = parse_ok(DOC(", 'aggregate': {'memory': '0', 'tasks': 0, 'cpu': '0%'}"));
        _cleanup_(profile_freep) Profile *q = parse_ok(DOC(", 'aggregate': {'memory': '2G', 'tasks': 512}"));

        assert_int_equal(p->slice_memory_max, 0);
        assert_int_equal(q->slice_memory_max, 2ULL << 30);
        assert_int_equal(q->slice_tasks_max, 512);
        CHECK_ERRORS(table);
}

static void test_credentials(void **state) {
        _cleanup_free_ char *url = NULL;
        _cleanup_(profile_freep) Profile *a = parse_ok(DOC(""));
        _cleanup_(profile_freep) Profile *b = parse_ok(DOC(
                ", 'credentials': {'files': ['pypi_token', 'gh'], 'grants': {"
                "'repo-read': {'credential': 'gh', 'methods': ['GET', 'HEAD'], "
                "'url_prefix': 'HTTPS://Git.Example:443/api/repos/acme/'}, "
                "'upload': {'credential': 'gh', 'methods': ['POST'], 'url_prefix': 'http://192.0.2.1:8080/up', "
                "'header': 'X-Token', 'value_prefix': '', 'max_body': '4K'}}}"));
        static const ErrorCase table[] = {
                { DOC(", 'credentials': {'files': ['Bad']}"),
                  FILE_NAME ": credentials.files[0]: expected a credential name ([a-z][a-z0-9_-]{0,63}), got \"Bad\"" },
                { DOC(", 'credentials': {'files': ['a', 'a']}"), FILE_NAME ": credentials.files[1]: 'a' is also in credentials.files[0]" },
                { DOC(", 'credentials': {'grants': {'G': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://h.example/'}}}"),
                  FILE_NAME ": credentials.grants.G: invalid grant name: expected [a-z][a-z0-9_-]{0,31}" },
                { DOC(", 'credentials': {'grants': {'g': {'methods': ['GET'], 'url_prefix': 'https://h.example/'}}}"),
                  FILE_NAME ": credentials.grants.g.credential: missing required key" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': [], "
                      "'url_prefix': 'https://h.example/'}}}"),
                  FILE_NAME ": credentials.grants.g.methods: expected at least one method" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['get'], "
                      "'url_prefix': 'https://h.example/'}}}"),
                  FILE_NAME ": credentials.grants.g.methods[0]: expected one of GET, HEAD, POST, PUT, PATCH, DELETE, got \"get\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://u@h.example/'}}}"), FILE_NAME ": credentials.grants.g.url_prefix: expected an http(s) URL prefix: URL has a user name ('@'), got \"https://u@h.example/\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://h.example/a/../b'}}}"), FILE_NAME ": credentials.grants.g.url_prefix: expected an http(s) URL prefix: path holds a '.' or '..' segment, got \"https://h.example/a/../b\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'ftp://h.example/'}}}"), FILE_NAME ": credentials.grants.g.url_prefix: expected an http(s) URL prefix: scheme must be https:// or http://, got \"ftp://h.example/\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://h.example/', 'header': 'Host'}}}"), FILE_NAME ": credentials.grants.g.header: expected a header name (not Host, Cookie, Connection, Content-Length or Transfer-Encoding), got \"Host\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://h.example/', 'max_body': '65M'}}}"),
                  FILE_NAME ": credentials.grants.g.max_body: expected 1 byte to 64M, got \"65M\"" },
                { DOC(", 'credentials': {'grants': {'g': {'credential': 'a', 'methods': ['GET'], "
                      "'url_prefix': 'https://h.example/'}}}, 'pool': {'size': 1}"),
                  FILE_NAME ": pool.size: a pool cannot serve a profile with broker grants (credentials.grants)" },
                { DOC(", 'credentials': {'secrets': []}"), FILE_NAME ": credentials.secrets: unknown key" },
        };

        assert_null(a->credential_files);
        assert_int_equal(a->n_grants, 0);
        assert_string_equal(b->credential_files[0], "pypi_token");
        assert_string_equal(b->credential_files[1], "gh");
        assert_null(b->credential_files[2]);
        assert_int_equal(b->n_grants, 2);
        /* in the document's order, defaults filled in, the prefix normalized */
        assert_string_equal(b->grants[0].name, "repo-read");
        assert_int_equal(grant_url_format(&b->grants[0].url_prefix, &url), 0);
        assert_string_equal(url, "https://git.example/api/repos/acme/");
        url = mfree(url);
        assert_string_equal(b->grants[0].header, "Authorization");
        assert_string_equal(b->grants[0].value_prefix, "Bearer ");
        assert_int_equal(b->grants[0].max_body, 1 << 20);
        assert_int_equal(b->grants[0].methods, (1u << GRANT_METHOD_GET) | (1u << GRANT_METHOD_HEAD));
        assert_int_equal(grant_url_format(&b->grants[1].url_prefix, &url), 0);
        assert_string_equal(url, "http://192.0.2.1:8080/up");
        assert_string_equal(b->grants[1].header, "X-Token");
        assert_string_equal(b->grants[1].value_prefix, "");
        assert_int_equal(b->grants[1].max_body, 4096);
        CHECK_ERRORS(table);
}

static void test_pool(void **state) {
        _cleanup_(profile_freep) Profile *a = parse_ok(DOC(""));
        _cleanup_(profile_freep) Profile *b = parse_ok(DOC(", 'pool': {'size': 3}"));
        _cleanup_(profile_freep) Profile *c = parse_ok(DOC(", 'pool': {'size': 16}"));
        _cleanup_(profile_freep) Profile *d = parse_ok(DOC(", 'pool': {}"));
        /* 0 is allowed whatever the network and caches */
        _cleanup_(profile_freep) Profile *e = parse_ok(DOC_NR("{'mode': 'public'}", RES_DEFAULT, ", 'pool': {'size': 0}"));
        static const ErrorCase table[] = {
                { DOC(", 'pool': {'size': 17}"), FILE_NAME ": pool.size: expected at most 16, got 17" },
                { DOC(", 'pool': {'size': -1}"), FILE_NAME ": pool.size: expected an integer >= 0, got -1" },
                { DOC(", 'pool': {'size': '2'}"), FILE_NAME ": pool.size: expected an integer >= 0, got \"2\"" },
                { DOC(", 'pool': {'count': 2}"), FILE_NAME ": pool.count: unknown key" },
                { DOC(", 'pool': 2"), FILE_NAME ": pool: expected an object, got 2" },
                { DOC_NR("{'mode': 'public'}", RES_DEFAULT, ", 'pool': {'size': 1}"),
                  FILE_NAME ": pool.size: a pool serves only profiles whose network mode is \"none\"" },
                { DOC(", 'lifetime': {'caches': [{'name': 'pip', 'path': '.cache/pip'}]}, 'pool': {'size': 1}"),
                  FILE_NAME ": pool.size: a pool cannot serve a profile with caches (lifetime.caches)" },
        };

        assert_int_equal(a->pool_size, 0);
        assert_int_equal(b->pool_size, 3);
        assert_int_equal(c->pool_size, 16);
        assert_int_equal(d->pool_size, 0);
        assert_int_equal(e->pool_size, 0);
        CHECK_ERRORS(table);
}

static void test_lifetime_errors(void **state) {
#define CACHES(...) DOC(", 'lifetime': {'caches': [" __VA_ARGS__ "]}")
        static const ErrorCase table[] = {
                { CACHES("{'name': 'pip', 'path': '.cache/pip'}, {'name': 'pip', 'path': '.pip'}"),
                  FILE_NAME ": lifetime.caches[1].name: 'pip' is also in lifetime.caches[0].name" },
                { CACHES("{'name': 'pip', 'path': '.cache/pip'}, {'name': 'pip2', 'path': '.cache/pip'}"),
                  FILE_NAME ": lifetime.caches[1].path: '.cache/pip' is also in lifetime.caches[0].path" },
                { CACHES("{'path': '.cache'}"), FILE_NAME ": lifetime.caches[0].name: missing required key" },
                { CACHES("{'name': 'a'}"), FILE_NAME ": lifetime.caches[0].path: missing required key" },
                { CACHES("{'name': 'Pip', 'path': 'a'}"),
                  FILE_NAME ": lifetime.caches[0].name: expected 1 to 32 characters of a-z, 0-9 and _, got \"Pip\"" },
                { CACHES("{'name': '', 'path': 'a'}"),
                  FILE_NAME ": lifetime.caches[0].name: expected 1 to 32 characters of a-z, 0-9 and _, got \"\"" },
                { CACHES("{'name': 'abcdefghijklmnopqrstuvwxyz0123456', 'path': 'a'}"),
                  FILE_NAME ": lifetime.caches[0].name: expected 1 to 32 characters of a-z, 0-9 and _, got "
                            "\"abcdefghijklmnopqrstuvwxyz0123456\"" },
                { CACHES("{'name': 'a', 'path': '../x'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"../x\"" },
                { CACHES("{'name': 'a', 'path': 'a/../../x'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"a/../../x\"" },
                { CACHES("{'name': 'a', 'path': '/root/.cache'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"/root/.cache\"" },
                { CACHES("{'name': 'a', 'path': '.cache/'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \".cache/\"" },
                { CACHES("{'name': 'a', 'path': './x'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"./x\"" },
                { CACHES("{'name': 'a', 'path': ''}"), FILE_NAME
                  ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", got \"\"" },
                { CACHES("{'name': 'a', 'path': 'my cache'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a path without ':', '\"', '\\', '%', white space or "
                            "control characters, got \"my cache\"" },
                /* ".." anywhere: the exec helper refuses it even inside a name */
                { CACHES("{'name': 'a', 'path': 'a..b/x'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"a..b/x\"" },
                { CACHES("{'name': 'a', 'path': 'x/b..'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"x/b..\"" },
                { CACHES("{'name': 'a', 'path': '...'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"...\"" },
                { CACHES("{'name': 'a', 'path': '..'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"..\"" },
                { CACHES("{'name': 'a', 'path': 'x/./y'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"x/./y\"" },
                { CACHES("{'name': 'a', 'path': '.'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \".\"" },
                { CACHES("{'name': 'a', 'path': 'x//y'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a normalized path relative to HOME, without \"..\", "
                            "got \"x//y\"" },
                /* where the workspace and the dataset are bound */
                { CACHES("{'name': 'a', 'path': 'workspace'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a path outside \"workspace\" and \"dataset\" (where "
                            "a run's workspace and dataset are bound), got \"workspace\"" },
                { CACHES("{'name': 'a', 'path': 'x'}, {'name': 'b', 'path': 'workspace/.cache'}"),
                  FILE_NAME ": lifetime.caches[1].path: expected a path outside \"workspace\" and \"dataset\" (where "
                            "a run's workspace and dataset are bound), got \"workspace/.cache\"" },
                { CACHES("{'name': 'a', 'path': 'dataset'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a path outside \"workspace\" and \"dataset\" (where "
                            "a run's workspace and dataset are bound), got \"dataset\"" },
                { CACHES("{'name': 'a', 'path': 'dataset/x/y'}"),
                  FILE_NAME ": lifetime.caches[0].path: expected a path outside \"workspace\" and \"dataset\" (where "
                            "a run's workspace and dataset are bound), got \"dataset/x/y\"" },
                /* one cache inside another */
                { CACHES("{'name': 'a', 'path': '.cache'}, {'name': 'b', 'path': '.cache/pip'}"),
                  FILE_NAME ": lifetime.caches[1].path: '.cache/pip' lies below '.cache' (lifetime.caches[0].path): "
                            "caches may not nest" },
                { CACHES("{'name': 'a', 'path': '.cache/pip'}, {'name': 'b', 'path': '.cache'}"),
                  FILE_NAME ": lifetime.caches[1].path: '.cache' contains '.cache/pip' (lifetime.caches[0].path): "
                            "caches may not nest" },
                { CACHES("{'name': 'a', 'path': '.npm'}, {'name': 'b', 'path': 'go'}, "
                         "{'name': 'c', 'path': 'go/pkg/mod/cache'}"),
                  FILE_NAME ": lifetime.caches[2].path: 'go/pkg/mod/cache' lies below 'go' (lifetime.caches[1].path): "
                            "caches may not nest" },
                { DOC(", 'lifetime': {'caches': [{'name': 'a', 'path': 'b'}], 'keep': true}"),
                  FILE_NAME ": lifetime.keep: unknown key" },
        };
        /* Siblings, names that only start like another path, and names with single dots are fine. */
        _cleanup_(profile_freep) Profile *p =
                parse_ok(CACHES("{'name': 'a', 'path': '.cache/pip'}, {'name': 'b', 'path': '.cache/npm'}, "
                                "{'name': 'c', 'path': '.cache/pip2'}, {'name': 'd', 'path': 'workspaces'}, "
                                "{'name': 'e', 'path': 'my/workspace'}, {'name': 'f', 'path': 'datasets/.x.y'}, "
                                "{'name': 'g', 'path': '.cache2'}"));

        assert_int_equal(p->n_caches, 7);
        assert_string_equal(p->caches[5].path, "datasets/.x.y");
        CHECK_ERRORS(table);
}

static void test_request_errors(void **state) {
        static const ErrorCase table[] = {
                { DOC(", 'request': {'memory': {'min': '4G'}}"), FILE_NAME
                  ": request.memory.min: expected at most the profile's own value (resources.memory), got \"4G\"" },
                { DOC(", 'request': {'memory': {'min': '1M'}}"),
                  FILE_NAME ": request.memory.min: expected at least 4M, got \"1M\"" },
                { DOC(", 'request': {'memory': {}}"), FILE_NAME ": request.memory.min: missing required key" },
                { DOC(", 'request': {'memory': {'min': 'lots'}}"),
                  FILE_NAME ": request.memory.min: expected a size like \"2G\", got \"lots\"" },
                { DOC(", 'request': {'tasks': {'min': 513}}"), FILE_NAME
                  ": request.tasks.min: expected at most the profile's own value (resources.tasks), got 513" },
                { DOC(", 'request': {'tasks': {'min': 1}}"),
                  FILE_NAME ": request.tasks.min: expected at least 2, got 1" },
                { DOC(", 'request': {'tasks': {'min': '4'}}"),
                  FILE_NAME ": request.tasks.min: expected an integer >= 0, got \"4\"" },
                { DOC(", 'request': {'wall_time': {'min': '2h'}}"),
                  FILE_NAME ": request.wall_time.min: expected at most the profile's own value (resources.wall_time), "
                            "got \"2h\"" },
                { DOC(", 'request': {'wall_time': {'min': '10ms'}}"),
                  FILE_NAME ": request.wall_time.min: expected at least 1s, got \"10ms\"" },
                { DOC_RES("{'memory': '2G', 'tasks': 512, 'wall_time': '1h', 'cpu': '200%'}",
                          ", 'request': {'cpu': {'min': '300%'}}"),
                  FILE_NAME
                  ": request.cpu.min: expected at most the profile's own value (resources.cpu), got \"300%\"" },
                { DOC(", 'request': {'cpu': {'min': '0%'}}"),
                  FILE_NAME ": request.cpu.min: expected at least 1%, got \"0%\"" },
                { DOC(", 'request': {'network': ['public']}"),
                  FILE_NAME ": request.network[0]: expected \"none\" (the only mode a run may narrow to in version "
                            "1), got \"public\"" },
                { DOC(", 'request': {'network': ['none', 'allowlist']}"),
                  FILE_NAME ": request.network[1]: expected \"none\" (the only mode a run may narrow to in version "
                            "1), got \"allowlist\"" },
                { DOC(", 'request': {'network': []}"), FILE_NAME ": request.network: expected [\"none\"], got []" },
                { DOC(", 'request': {'network': ['none', 'none']}"),
                  FILE_NAME ": request.network[1]: 'none' is also in request.network[0]" },
                { DOC(", 'request': {'dataset': {}}"), FILE_NAME ": request.dataset.under: missing required key" },
                { DOC(", 'request': {'dataset': {'under': []}}"),
                  FILE_NAME ": request.dataset.under: expected at least one path, got []" },
                { DOC(", 'request': {'dataset': {'under': ['data']}}"),
                  FILE_NAME ": request.dataset.under[0]: expected an absolute, normalized path, got \"data\"" },
                { DOC(", 'request': {'dataset': {'under': ['/srv', '/proc/1']}}"),
                  FILE_NAME ": request.dataset.under[1]: expected a path other than / and outside /proc, /sys and "
                            "/dev, got \"/proc/1\"" },
                { DOC(", 'request': {'dataset': {'under': ['/srv', '/srv']}}"),
                  FILE_NAME ": request.dataset.under[1]: '/srv' is also in request.dataset.under[0]" },
                { DOC(", 'request': {'dataset': {'under': '/srv'}}"),
                  FILE_NAME ": request.dataset.under: expected an array, got \"/srv\"" },
        };
        /* With no CPU quota of its own, any minimum is below the profile's value. */
        _cleanup_(profile_freep) Profile *p =
                parse_ok(DOC(", 'request': {'cpu': {'min': '800%'}, 'memory': {'min': '2G'}, 'tasks': {'min': 512}, "
                             "'wall_time': {'min': 3600}}"));

        assert_int_equal(p->request.cpu.min, 800);
        assert_int_equal(p->request.memory.min, 2ULL << 30);
        assert_int_equal(p->request.tasks.min, 512);
        assert_int_equal(p->request.runtime.min, 3600 * USEC_PER_SEC);
        CHECK_ERRORS(table);
}

/* Errors are reported in a fixed order: the version, unknown keys, then the sections in the order of
 * the format, whatever the order of the keys in the document. */
static void test_first_error_wins(void **state) {
        static const ErrorCase table[] = {
                { "{'resources': 1, 'version': 1, 'description': 2, 'bogus': 3}", FILE_NAME ": bogus: unknown key" },
                { "{'resources': 1, 'version': 1, 'description': 2}",
                  FILE_NAME ": description: expected a string, got 2" },
                { DOC_NR("1", "2", ""), FILE_NAME ": network: expected an object, got 1" },
                { DOC(", 'process': {'devices': 'x', 'namespaces': ['y']}"), FILE_NAME
                  ": process.namespaces[0]: expected one of cgroup, ipc, mnt, net, pid, user, uts, got \"y\"" },
        };

        CHECK_ERRORS(table);
}

static void test_messages(void **state) {
        _cleanup_free_ char *text = json(DOC(", 'bogus': 1"));
        _cleanup_free_ char *long_doc = NULL;
        Profile *p = NULL;
        char *error = NULL;

        /* no path: "<input>" */
        assert_int_equal(profile_parse(text, strlen(text), "test", NULL, &p, &error), -EINVAL);
        assert_string_equal(error, "<input>: bogus: unknown key");
        free(error);
        error = NULL;

        assert_int_equal(profile_parse("{", 1, "test", NULL, &p, &error), -EINVAL);
        assert_string_equal(error, "<input>:1:2: unexpected end of data");
        free(error);
        error = NULL;

        /* the message is optional */
        assert_int_equal(profile_parse(text, strlen(text), "test", NULL, &p, NULL), -EINVAL);
        assert_null(p);

        /* long values are cut in messages */
        long_doc = json(DOC(", 'files': {'base': "
                            "'0123456789012345678901234567890123456789012345678901234567890123456789'}"));
        assert_int_equal(profile_parse(long_doc, strlen(long_doc), "test", FILE_NAME, &p, &error), -EINVAL);
        assert_string_equal(error,
                            FILE_NAME ": files.base: expected \"host\" or \"image\", got "
                                      "\"0123456789012345678901234567890123456789012345678901234567890123...\"");
        free(error);
}

static void test_bad_name(void **state) {
        _cleanup_free_ char *text = json(DOC(""));
        Profile *p = NULL;
        char *error = NULL;

        assert_int_equal(profile_parse(text, strlen(text), "Bad-Name", FILE_NAME, &p, &error), -EINVAL);
        assert_null(p);
        assert_string_equal(error,
                            FILE_NAME ": invalid profile name: expected [a-z][a-z0-9_]{0,31}, got \"Bad-Name\"");
        free(error);
        error = NULL;

        assert_int_equal(profile_parse(text, strlen(text), NULL, FILE_NAME, &p, &error), -EINVAL);
        assert_string_equal(error, FILE_NAME ": invalid profile name: expected [a-z][a-z0-9_]{0,31}, got null");
        free(error);
}

/* The text is neither read past 'size' nor needs a NUL at the end. */
static void test_size_bound(void **state) {
        _cleanup_free_ char *text = json(DOC("") "garbage");
        _cleanup_(profile_freep) Profile *p = NULL;
        char *error = NULL;
        size_t n = strlen(text) - strlen("garbage");

        assert_int_equal(profile_parse(text, n, "test", FILE_NAME, &p, &error), 0);
        assert_null(error);
        assert_int_equal(p->tasks_max, 512);
}

static void test_digest(void **state) {
        static const char doc[] = "{\"version\": 1, \"description\": \"d\", \"network\": {\"mode\": \"none\"}, "
                                  "\"resources\": {\"memory\": \"2G\", \"tasks\": 512, \"wall_time\": \"1h\"}}\n";
        _cleanup_(profile_freep) Profile *a = NULL, *b = NULL, *c = NULL;
        _cleanup_free_ char *spaced = NULL;
        char *error = NULL;

        assert_int_equal(profile_parse(doc, strlen(doc), "test", NULL, &a, &error), 0);
        assert_int_equal(profile_parse(doc, strlen(doc), "other", "/x/other.json", &b, &error), 0);
        /* sha256 of the exact bytes (printf '%s' "$doc" | sha256sum) */
        assert_string_equal(a->digest, "sha256:" DOC_SHA256);
        assert_string_equal(a->digest, b->digest);
        assert_null(a->path);

        /* the same document with other white space is other bytes */
        assert_true(asprintf(&spaced, "%s ", doc) > 0);
        assert_int_equal(profile_parse(spaced, strlen(spaced), "test", NULL, &c, &error), 0);
        assert_string_not_equal(a->digest, c->digest);
        assert_null(error);
}

static void test_enums(void **state) {
        for (int i = 0; i < _NETWORK_MODE_MAX; i++) {
                const char *s = network_mode_to_string((NetworkMode) i);

                assert_non_null(s);
                assert_int_equal(network_mode_from_string(s), i);
        }
        assert_string_equal(network_mode_to_string(NETWORK_ALLOWLIST), "allowlist");
        assert_null(network_mode_to_string(_NETWORK_MODE_MAX));
        assert_null(network_mode_to_string(_NETWORK_MODE_INVALID));
        assert_int_equal(network_mode_from_string("None"), _NETWORK_MODE_INVALID);
        assert_int_equal(network_mode_from_string(""), _NETWORK_MODE_INVALID);
        assert_int_equal(network_mode_from_string(NULL), _NETWORK_MODE_INVALID);

        for (int i = 0; i < _SYSCALL_CMP_MAX; i++) {
                const char *s = syscall_cmp_to_string((SyscallCmp) i);

                assert_non_null(s);
                assert_int_equal(syscall_cmp_from_string(s), i);
        }
        assert_string_equal(syscall_cmp_to_string(SYSCALL_CMP_MASKED_EQ), "masked_eq");
        assert_null(syscall_cmp_to_string(_SYSCALL_CMP_MAX));
        assert_null(syscall_cmp_to_string(_SYSCALL_CMP_INVALID));
        assert_int_equal(syscall_cmp_from_string("EQ"), _SYSCALL_CMP_INVALID);
        assert_int_equal(syscall_cmp_from_string(NULL), _SYSCALL_CMP_INVALID);

        for (int i = 0; i < _NET_PROTOCOL_MAX; i++) {
                const char *s = net_protocol_to_string((NetProtocol) i);

                assert_non_null(s);
                assert_int_equal(net_protocol_from_string(s), i);
        }
        assert_string_equal(net_protocol_to_string(NET_PROTOCOL_ANY), "any");
        assert_null(net_protocol_to_string(_NET_PROTOCOL_MAX));
        assert_int_equal(net_protocol_from_string("TCP"), _NET_PROTOCOL_INVALID);
        assert_int_equal(net_protocol_from_string(NULL), _NET_PROTOCOL_INVALID);
}

static void test_profile_name_is_valid(void **state) {
        static const struct {
                const char *name;
                bool ok;
        } table[] = {
                { "offline", true },
                { "a", true },
                { "data_2", true },
                { "abcdefghijklmnopqrstuvwxyz012345", true }, /* 32 */
                { "abcdefghijklmnopqrstuvwxyz0123456", false },
                { "", false },
                { "2data", false },
                { "_x", false },
                { "Offline", false },
                { "off-line", false },
                { "off.line", false },
                { "off line", false },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                check_row(failures, profile_name_is_valid(table[i].name) == table[i].ok, "'%s'", table[i].name);
        assert_int_equal(failures, 0);
        assert_false(profile_name_is_valid(NULL));
}

/* Every profile shipped in profiles/ parses. */
static void test_shipped_profiles(void **state) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *pattern = NULL;
        glob_t g = {};
        unsigned failures = 0;
        int r;

        if (!root) {
                print_message("SBX_SOURCE_ROOT not set (run the test through meson): skipping\n");
                skip();
        }
        assert_true(asprintf(&pattern, "%s/profiles/*" PROFILE_SUFFIX, root) > 0);
        r = glob(pattern, 0, NULL, &g);
        if (r == GLOB_NOMATCH) {
                print_message("no %s: skipping\n", pattern);
                globfree(&g);
                skip();
        }
        assert_int_equal(r, 0);

        for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *path = g.gl_pathv[i], *base = strrchr(path, '/') + 1;
                _cleanup_free_ char *text = NULL, *name = strndup(base, strlen(base) - strlen(PROFILE_SUFFIX));
                Profile *p = NULL;
                char *error = NULL;
                size_t size;

                assert_non_null(name);
                r = read_file_at(AT_FDCWD, path, 1024 * 1024, &text, &size);
                check_row(failures, r >= 0, "%s: read: %d", path, r);
                if (r < 0)
                        continue;
                r = profile_parse(text, size, name, path, &p, &error);
                check_row(failures, r == 0, "%s", strna(error));
                if (p) {
                        check_row(failures, streq(p->name, name), "%s", path);
                        print_message("%s: %s\n", name, p->description);
                }
                profile_free(p);
                free(error);
        }
        globfree(&g);
        assert_int_equal(failures, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_empty_sections),
                cmocka_unit_test(test_units),
                cmocka_unit_test(test_cpu),
                cmocka_unit_test(test_network_modes),
                cmocka_unit_test(test_nested_paths),
                cmocka_unit_test(test_landlock),
                cmocka_unit_test(test_isolation),
                cmocka_unit_test(test_description_length),
                cmocka_unit_test(test_syntax_errors),
                cmocka_unit_test(test_nul_byte),
                cmocka_unit_test(test_document_errors),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_wrong_types),
                cmocka_unit_test(test_description_errors),
                cmocka_unit_test(test_size_errors),
                cmocka_unit_test(test_duration_cpu_errors),
                cmocka_unit_test(test_path_errors),
                cmocka_unit_test(test_path_too_long),
                cmocka_unit_test(test_path_contradictions),
                cmocka_unit_test(test_syscall_errors),
                cmocka_unit_test(test_syscall_names),
                cmocka_unit_test(test_syscall_groups),
                cmocka_unit_test(test_syscall_rules),
                cmocka_unit_test(test_syscall_rule_errors),
                cmocka_unit_test(test_syscall_rule_foreign),
                cmocka_unit_test(test_process_errors),
                cmocka_unit_test(test_network_errors),
                cmocka_unit_test(test_aggregate_errors),
                cmocka_unit_test(test_lifetime_errors),
                cmocka_unit_test(test_pool),
                cmocka_unit_test(test_credentials),
                cmocka_unit_test(test_request_errors),
                cmocka_unit_test(test_first_error_wins),
                cmocka_unit_test(test_messages),
                cmocka_unit_test(test_bad_name),
                cmocka_unit_test(test_size_bound),
                cmocka_unit_test(test_digest),
                cmocka_unit_test(test_enums),
                cmocka_unit_test(test_profile_name_is_valid),
                cmocka_unit_test(test_shipped_profiles),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
