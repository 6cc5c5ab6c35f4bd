/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proptable: typed unit properties, their "Key=Value" rendering and the policy digest. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sched.h>
#include <cmocka.h>

#include "proptable.h"
#include "unit-test.h"
#include "util.h"

static char *render(const PropTable *t) {
        char *text = NULL;

        assert_int_equal(prop_table_render_text(t, &text), 0);
        assert_non_null(text);
        return text;
}

static void assert_renders(const PropTable *t, const char *expected) {
        char *text = render(t);

        assert_string_equal(text, expected);
        free(text);
}

static void test_prop_def_find(void **state) {
        static const struct {
                const char *name;
                const char *bus_name;
                PropKind kind;
        } table[] = {
                { "DynamicUser", "DynamicUser", PROP_BOOL },
                { "ProtectSystem", "ProtectSystem", PROP_STRING },
                { "TasksMax", "TasksMax", PROP_U64 },
                { "MemoryMax", "MemoryMax", PROP_BYTES },
                { "RuntimeMaxSec", "RuntimeMaxUSec", PROP_USEC },
                { "TimeoutStopSec", "TimeoutStopUSec", PROP_USEC },
                { "CPUQuota", "CPUQuotaPerSecUSec", PROP_CPU_QUOTA },
                { "CapabilityBoundingSet", "CapabilityBoundingSet", PROP_CAPS },
                { "RestrictNamespaces", "RestrictNamespaces", PROP_NAMESPACES },
                { "SystemCallErrorNumber", "SystemCallErrorNumber", PROP_ERRNO },
                { "UMask", "UMask", PROP_MODE },
                { "Environment", "Environment", PROP_ENVIRONMENT },
                { "BindPaths", "BindPaths", PROP_BIND_PATHS },
                { "TemporaryFileSystem", "TemporaryFileSystem", PROP_TMPFS },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                const PropDef *d = prop_def_find(table[i].name);

                check_row(failures, d && streq(d->name, table[i].name) && streq(d->bus_name, table[i].bus_name) &&
                                            d->kind == table[i].kind,
                          "%s", table[i].name);
        }
        assert_int_equal(failures, 0);
        assert_null(prop_def_find("NoSuchProperty"));
        assert_null(prop_def_find("memorymax"));
        assert_null(prop_def_find(""));
}

/* One row per rendering: a table holding just that property renders to exactly that line. */
static void test_render_each_kind(void **state) {
        static const char *const env[] = { "HOME=/home/sbx", "A=has space", "Q=a\"b\\c", NULL };
        static const char *const binds[] = { "/src", "/home/sbx/workspace", "/a", "/b", NULL };
        static const char *const tmpfs[] = { "/run", "ro,mode=0755", "/home/sbx", "size=1024", NULL };
        static const char *const families[] = { "AF_UNIX", "AF_INET", "AF_INET6", NULL };
        static const char *const syscalls[] = { "@system-service", NULL };
        static const char *const paths[] = { "/a", "/b c", NULL };
        static const char *const none[] = { NULL };
        static const char *const native[] = { "native", NULL };
        enum { BOOL, STRING, U64, ERRNO, STRV };
        static const struct {
                const char *name;
                int how;
                bool b;
                uint64_t u;
                const char *s;
                const char *const *strv;
                const char *text;
        } table[] = {
                { "DynamicUser", BOOL, .b = true, .text = "DynamicUser=yes\n" },
                { "PrivateNetwork", BOOL, .b = false, .text = "PrivateNetwork=no\n" },
                { "ProtectSystem", STRING, .s = "strict", .text = "ProtectSystem=strict\n" },
                { "Description", STRING, .s = "", .text = "Description=\n" },
                { "TasksMax", U64, .u = 512, .text = "TasksMax=512\n" },
                { "TasksMax", U64, .u = 0, .text = "TasksMax=0\n" },
                { "TasksMax", U64, .u = UINT64_MAX, .text = "TasksMax=infinity\n" },
                { "TasksMax", U64, .u = UINT64_MAX - 1, .text = "TasksMax=18446744073709551614\n" },
                { "MemoryMax", U64, .u = 2147483648ULL, .text = "MemoryMax=2147483648\n" },
                { "MemoryMax", U64, .u = UINT64_MAX, .text = "MemoryMax=infinity\n" },
                { "MemorySwapMax", U64, .u = 0, .text = "MemorySwapMax=0\n" },
                { "LimitCORE", U64, .u = UINT64_MAX, .text = "LimitCORE=infinity\n" },
                { "RuntimeMaxSec", U64, .u = 3600 * USEC_PER_SEC, .text = "RuntimeMaxSec=3600s\n" },
                { "RuntimeMaxSec", U64, .u = 1500 * USEC_PER_MSEC, .text = "RuntimeMaxSec=1500ms\n" },
                { "RuntimeMaxSec", U64, .u = 1500, .text = "RuntimeMaxSec=1500us\n" },
                { "RuntimeMaxSec", U64, .u = 0, .text = "RuntimeMaxSec=0s\n" },
                { "RuntimeMaxSec", U64, .u = UINT64_MAX, .text = "RuntimeMaxSec=infinity\n" },
                { "TimeoutStopSec", U64, .u = 5 * USEC_PER_SEC, .text = "TimeoutStopSec=5s\n" },
                { "CPUQuota", U64, .u = 2000000, .text = "CPUQuota=200%\n" },
                { "CPUQuota", U64, .u = 500000, .text = "CPUQuota=50%\n" },
                { "CapabilityBoundingSet", U64, .u = 0, .text = "CapabilityBoundingSet=\n" },
                { "AmbientCapabilities", U64, .u = 0, .text = "AmbientCapabilities=\n" },
                { "RestrictNamespaces", U64, .u = 0, .text = "RestrictNamespaces=yes\n" },
                { "UMask", U64, .u = 0022, .text = "UMask=0022\n" },
                { "UMask", U64, .u = 0777, .text = "UMask=0777\n" },
                { "UMask", U64, .u = 0, .text = "UMask=0000\n" },
                { "SystemCallErrorNumber", ERRNO, .u = EPERM, .text = "SystemCallErrorNumber=EPERM\n" },
                { "SystemCallErrorNumber", ERRNO, .u = EACCES, .text = "SystemCallErrorNumber=EACCES\n" },
                { "SystemCallErrorNumber", ERRNO, .u = ENOSYS, .text = "SystemCallErrorNumber=ENOSYS\n" },
                { "SystemCallArchitectures", STRV, .strv = native,
                  .text = "SystemCallArchitectures=native\n" },
                { "InaccessiblePaths", STRV, .strv = paths, .text = "InaccessiblePaths=/a /b c\n" },
                { "InaccessiblePaths", STRV, .strv = none, .text = "InaccessiblePaths=\n" },
                { "SystemCallFilter", STRV, .strv = syscalls, .text = "SystemCallFilter=@system-service\n" },
                { "RestrictAddressFamilies", STRV, .strv = families,
                  .text = "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n" },
                { "Environment", STRV, .strv = env,
                  .text = "Environment=\"HOME=/home/sbx\" \"A=has space\" \"Q=a\\\"b\\\\c\"\n" },
                { "Environment", STRV, .strv = none, .text = "Environment=\n" },
                { "BindPaths", STRV, .strv = binds, .text = "BindPaths=/src:/home/sbx/workspace:rbind /a:/b:rbind\n" },
                { "BindReadOnlyPaths", STRV, .strv = binds,
                  .text = "BindReadOnlyPaths=/src:/home/sbx/workspace:rbind /a:/b:rbind\n" },
                { "TemporaryFileSystem", STRV, .strv = tmpfs,
                  .text = "TemporaryFileSystem=/run:ro,mode=0755 /home/sbx:size=1024\n" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
                _cleanup_free_ char *text = NULL;
                int r = -1;

                assert_non_null(t);
                switch (table[i].how) {
                case BOOL:
                        r = prop_table_add_bool(t, table[i].name, table[i].b);
                        break;
                case STRING:
                        r = prop_table_add_string(t, table[i].name, table[i].s);
                        break;
                case U64:
                        r = prop_table_add_u64(t, table[i].name, table[i].u);
                        break;
                case ERRNO:
                        r = prop_table_add_errno(t, table[i].name, (int) table[i].u);
                        break;
                case STRV:
                        r = prop_table_add_strv(t, table[i].name, (char *const *) table[i].strv);
                        break;
                }
                check_row(failures, r == 0, "adding row %zu (%s) -> %d", i, table[i].name, r);
                if (r < 0)
                        continue;
                r = prop_table_render_text(t, &text);
                check_row(failures, r == 0 && streq(text, table[i].text), "row %zu: rendered %d '%s', expected '%s'",
                          i, r, strna(text), table[i].text);
        }
        assert_int_equal(failures, 0);
}

/* Values the text renderer has no name for are refused, not rendered wrong. */
static void test_render_namespaces(void **state) {
        static const struct {
                uint64_t flags;
                const char *text;
        } table[] = {
                { 0, "RestrictNamespaces=yes\n" },
                { CLONE_NEWNET, "RestrictNamespaces=net\n" },
                { CLONE_NEWUSER | CLONE_NEWNET, "RestrictNamespaces=net user\n" },
                { CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUSER |
                          CLONE_NEWUTS,
                  "RestrictNamespaces=cgroup ipc net mnt pid user uts\n" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
                _cleanup_free_ char *text = NULL;

                assert_non_null(t);
                assert_int_equal(prop_table_add_u64(t, "RestrictNamespaces", table[i].flags), 0);
                assert_int_equal(prop_table_render_text(t, &text), 0);
                check_row(failures, streq(text, table[i].text), "row %zu: '%s'", i, text);
        }
        assert_int_equal(failures, 0);
}

static void test_render_unrenderable(void **state) {
        static const struct {
                const char *name;
                bool is_errno;
                uint64_t u;
        } table[] = {
                { "CapabilityBoundingSet", false, 1ULL << 21 /* CAP_SYS_ADMIN */ },
                { "AmbientCapabilities", false, 1 },
                { "RestrictNamespaces", false, 0x1 /* not a namespace flag */ },
                { "RestrictNamespaces", false, 0x20000 | 0x1 },
                { "SystemCallErrorNumber", true, EIO },
                { "SystemCallErrorNumber", true, 0 },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
                char *text = (char *) "untouched";
                char digest[72] = "untouched";
                int r;

                assert_non_null(t);
                r = table[i].is_errno ? prop_table_add_errno(t, table[i].name, (int) table[i].u)
                                      : prop_table_add_u64(t, table[i].name, table[i].u);
                assert_int_equal(r, 0);
                r = prop_table_render_text(t, &text);
                check_row(failures, r == -EOPNOTSUPP && streq(text, "untouched"), "row %zu (%s) -> %d", i,
                          table[i].name, r);
                r = prop_table_digest(t, digest);
                check_row(failures, r == -EOPNOTSUPP && streq(digest, "untouched"), "digest row %zu (%s) -> %d", i,
                          table[i].name, r);
        }
        assert_int_equal(failures, 0);
}

static void test_render_order(void **state) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();

        assert_non_null(t);
        assert_renders(t, "");
        assert_int_equal(prop_table_add_string(t, "Type", "exec"), 0);
        assert_int_equal(prop_table_add_bool(t, "DynamicUser", true), 0);
        assert_int_equal(prop_table_add_u64(t, "MemoryMax", 4ULL << 20), 0);
        assert_int_equal(prop_table_add_string(t, "KillMode", "control-group"), 0);
        assert_renders(t, "Type=exec\n"
                          "DynamicUser=yes\n"
                          "MemoryMax=4194304\n"
                          "KillMode=control-group\n");
        assert_int_equal(t->n, 4);
}

/* Each adder takes only its own kinds; a refused add leaves the table as it was. */
static void test_wrong_kind_refused(void **state) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        char *l[] = { (char *) "x", NULL };
        unsigned failures = 0;
        int r;

        assert_non_null(t);

#define REFUSED(call)                                                                    \
        do {                                                                             \
                r = (call);                                                              \
                check_row(failures, r == -EINVAL && t->n == 0, "%s -> %d", #call, r);    \
        } while (0)

        REFUSED(prop_table_add_bool(t, "MemoryMax", true));
        REFUSED(prop_table_add_bool(t, "ProtectSystem", true));
        REFUSED(prop_table_add_bool(t, "NoSuchProperty", true));
        REFUSED(prop_table_add_string(t, "DynamicUser", "yes"));
        REFUSED(prop_table_add_string(t, "MemoryMax", "1G"));
        REFUSED(prop_table_add_string(t, "Environment", "A=b"));
        REFUSED(prop_table_add_string(t, "NoSuchProperty", "x"));
        REFUSED(prop_table_add_u64(t, "DynamicUser", 1));
        REFUSED(prop_table_add_u64(t, "ProtectSystem", 1));
        REFUSED(prop_table_add_u64(t, "SystemCallErrorNumber", EPERM));
        REFUSED(prop_table_add_u64(t, "Environment", 0));
        REFUSED(prop_table_add_u64(t, "NoSuchProperty", 0));
        REFUSED(prop_table_add_errno(t, "MemoryMax", EPERM));
        REFUSED(prop_table_add_errno(t, "DynamicUser", EPERM));
        REFUSED(prop_table_add_errno(t, "NoSuchProperty", EPERM));
        REFUSED(prop_table_add_strv(t, "MemoryMax", l));
        REFUSED(prop_table_add_strv(t, "ProtectSystem", l));
        REFUSED(prop_table_add_strv(t, "NoSuchProperty", l));
#undef REFUSED

        assert_int_equal(failures, 0);
        assert_renders(t, "");
}

static void test_pairs_must_be_even(void **state) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        char *one[] = { (char *) "/src", NULL };
        char *three[] = { (char *) "/src", (char *) "/dst", (char *) "/other", NULL };
        char *two[] = { (char *) "/src", (char *) "/dst", NULL };

        assert_non_null(t);
        assert_int_equal(prop_table_add_strv(t, "BindPaths", one), -EINVAL);
        assert_int_equal(prop_table_add_strv(t, "BindPaths", three), -EINVAL);
        assert_int_equal(prop_table_add_strv(t, "BindReadOnlyPaths", one), -EINVAL);
        assert_int_equal(prop_table_add_strv(t, "TemporaryFileSystem", three), -EINVAL);
        assert_int_equal(t->n, 0);
        /* Odd counts are fine where there are no pairs. */
        assert_int_equal(prop_table_add_strv(t, "InaccessiblePaths", three), 0);
        assert_int_equal(prop_table_add_strv(t, "BindPaths", two), 0);
        assert_renders(t, "InaccessiblePaths=/src /dst /other\nBindPaths=/src:/dst:rbind\n");
}

/* Strings are copied: the caller's buffers may change or go away. */
static void test_values_are_copied(void **state) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        char s[] = "strict", a[] = "/src", b[] = "/dst";
        char *l[] = { a, b, NULL };
        const Prop *p;

        assert_non_null(t);
        assert_int_equal(prop_table_add_string(t, "ProtectSystem", s), 0);
        assert_int_equal(prop_table_add_strv(t, "BindPaths", l), 0);
        strcpy(s, "XXXXXX");
        strcpy(a, "/bad");
        l[1] = NULL;
        assert_renders(t, "ProtectSystem=strict\nBindPaths=/src:/dst:rbind\n");

        p = prop_table_get(t, "BindPaths");
        assert_non_null(p);
        assert_ptr_not_equal(p->strv, l);
        assert_string_equal(p->strv[0], "/src");
        assert_string_equal(p->strv[1], "/dst");
        assert_null(p->strv[2]);
}

static void test_get(void **state) {
        _cleanup_(prop_table_freep) PropTable *t = prop_table_new();
        const Prop *p;

        assert_non_null(t);
        assert_null(prop_table_get(t, "MemoryMax"));
        assert_int_equal(prop_table_add_bool(t, "DynamicUser", true), 0);
        assert_int_equal(prop_table_add_u64(t, "MemoryMax", 1234), 0);
        assert_int_equal(prop_table_add_errno(t, "SystemCallErrorNumber", EPERM), 0);

        p = prop_table_get(t, "MemoryMax");
        assert_non_null(p);
        assert_string_equal(p->def->name, "MemoryMax");
        assert_int_equal(p->def->kind, PROP_BYTES);
        assert_int_equal(p->u, 1234);
        p = prop_table_get(t, "DynamicUser");
        assert_non_null(p);
        assert_true(p->b);
        p = prop_table_get(t, "SystemCallErrorNumber");
        assert_non_null(p);
        assert_int_equal(p->i, EPERM);
        assert_null(prop_table_get(t, "TasksMax"));
        assert_null(prop_table_get(t, "memorymax"));
}

/* The digest is sha256 over the text rendering; expected values computed independently
 * (Python hashlib) over the exact text. */
static void test_digest(void **state) {
        _cleanup_(prop_table_freep) PropTable *a = prop_table_new(), *b = prop_table_new(), *c = prop_table_new(),
                                              *e = prop_table_new();
        char da[72], db[72], dc[72], de[72];

        assert_true(a && b && c && e);
        assert_int_equal(prop_table_add_bool(a, "DynamicUser", true), 0);
        assert_int_equal(prop_table_add_u64(a, "MemoryMax", 1024), 0);
        assert_int_equal(prop_table_digest(a, da), 0);
        assert_string_equal(da, "sha256:bd9800242777c526e1e879a132c24aba88ec761f353a75215af50010a178b5a1");
        assert_int_equal(strlen(da), 71);

        /* Same content built again: same digest. */
        assert_int_equal(prop_table_add_bool(b, "DynamicUser", true), 0);
        assert_int_equal(prop_table_add_u64(b, "MemoryMax", 1024), 0);
        assert_int_equal(prop_table_digest(b, db), 0);
        assert_string_equal(db, da);
        /* Stable when asked twice. */
        assert_int_equal(prop_table_digest(a, da), 0);
        assert_string_equal(da, db);

        /* One value changed: another digest. */
        b->props[1].u = 2048;
        assert_int_equal(prop_table_digest(b, db), 0);
        assert_string_equal(db, "sha256:5a2e899176039fadd979f5a18455cde9fe32958ee6fad6b0d74d880ebacb4bd8");
        assert_string_not_equal(db, da);

        /* Same properties, other order: another digest (the rendering is ordered). */
        assert_int_equal(prop_table_add_u64(c, "MemoryMax", 1024), 0);
        assert_int_equal(prop_table_add_bool(c, "DynamicUser", true), 0);
        assert_int_equal(prop_table_digest(c, dc), 0);
        assert_string_equal(dc, "sha256:b04c16972df7048d6c8ada686d73e8037e8607230638626c87002c8c05c0a708");

        /* Empty table: sha256 of "". */
        assert_int_equal(prop_table_digest(e, de), 0);
        assert_string_equal(de, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_free_null(void **state) {
        assert_null(prop_table_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_prop_def_find),
                cmocka_unit_test(test_render_each_kind),
                cmocka_unit_test(test_render_namespaces),
                cmocka_unit_test(test_render_unrenderable),
                cmocka_unit_test(test_render_order),
                cmocka_unit_test(test_wrong_kind_refused),
                cmocka_unit_test(test_pairs_must_be_even),
                cmocka_unit_test(test_values_are_copied),
                cmocka_unit_test(test_get),
                cmocka_unit_test(test_digest),
                cmocka_unit_test(test_free_null),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
