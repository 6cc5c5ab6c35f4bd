/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NSS module (nss/nss-sbx.c), called directly: it names the caller's own uid and gid "sbx" and
 * nothing else, never root's or nobody's. As root, the caller's real ids are moved to a dynamic user's
 * and back (setresuid/setresgid of the real id only; the effective id stays 0). */
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

enum nss_status _nss_sbx_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_setpwent(int stayopen);
enum nss_status _nss_sbx_getpwent_r(struct passwd *pw, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_endpwent(void);
enum nss_status _nss_sbx_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_getgrnam_r(const char *name, struct group *gr, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_setgrent(int stayopen);
enum nss_status _nss_sbx_getgrent_r(struct group *gr, char *buf, size_t buflen, int *errnop);
enum nss_status _nss_sbx_endgrent(void);

#define DYNAMIC_ID 61500

/* The ids the module should name: a dynamic user's (as root, the real ids moved there), else the
 * caller's own. */
static int setup(void **state) {
        if (geteuid() == 0) {
                assert_int_equal(setresgid(DYNAMIC_ID, -1, -1), 0);
                assert_int_equal(setresuid(DYNAMIC_ID, -1, -1), 0);
        }
        return 0;
}

static int teardown(void **state) {
        if (geteuid() == 0) {
                assert_int_equal(setresuid(0, -1, -1), 0);
                assert_int_equal(setresgid(0, -1, -1), 0);
        }
        return 0;
}

static void assert_sbx_passwd(const struct passwd *pw) {
        assert_string_equal(pw->pw_name, "sbx");
        assert_string_equal(pw->pw_passwd, "!*");
        assert_string_equal(pw->pw_dir, "/home/sbx");
        assert_string_equal(pw->pw_shell, "/bin/sh");
        assert_int_equal(pw->pw_uid, getuid());
        assert_int_equal(pw->pw_gid, getgid());
}

static void test_passwd(void **state) {
        struct passwd pw;
        char buf[256];
        int e = 0;

        if (getuid() == 0 || getuid() == 65534)
                skip();
        assert_int_equal(_nss_sbx_getpwuid_r(getuid(), &pw, buf, sizeof(buf), &e), NSS_STATUS_SUCCESS);
        assert_sbx_passwd(&pw);
        memset(&pw, 0, sizeof(pw));
        assert_int_equal(_nss_sbx_getpwnam_r("sbx", &pw, buf, sizeof(buf), &e), NSS_STATUS_SUCCESS);
        assert_sbx_passwd(&pw);
        /* nobody else: another dynamic user, root, nobody, other names */
        static const uid_t others[] = { 0, 1, 1000, 61184, 65519, 65534, (uid_t) -1 };
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
                if (others[i] != getuid())
                        assert_int_equal(_nss_sbx_getpwuid_r(others[i], &pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getpwuid_r(getuid() + 1, &pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        static const char *const names[] = { "root", "nobody", "sbx-0123456789abcdef", "SBX", "sbx ", "" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                assert_int_equal(_nss_sbx_getpwnam_r(names[i], &pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        /* a buffer too small: ERANGE, try again with a larger one */
        for (size_t n = 0; n < 20; n++) {
                e = 0;
                assert_int_equal(_nss_sbx_getpwuid_r(getuid(), &pw, buf, n, &e), NSS_STATUS_TRYAGAIN);
                assert_int_equal(e, ERANGE);
        }
}

static void test_group(void **state) {
        struct group gr;
        char buf[256];
        int e = 0;

        if (getgid() == 0 || getgid() == 65534)
                skip();
        /* any alignment of the caller's buffer */
        for (size_t off = 0; off < sizeof(char *); off++) {
                memset(&gr, 0, sizeof(gr));
                assert_int_equal(_nss_sbx_getgrgid_r(getgid(), &gr, buf + off, sizeof(buf) - off, &e), NSS_STATUS_SUCCESS);
                assert_string_equal(gr.gr_name, "sbx");
                assert_int_equal(gr.gr_gid, getgid());
                assert_true((uintptr_t) gr.gr_mem % sizeof(char *) == 0);
                assert_null(gr.gr_mem[0]);
        }
        assert_int_equal(_nss_sbx_getgrnam_r("sbx", &gr, buf, sizeof(buf), &e), NSS_STATUS_SUCCESS);
        assert_int_equal(gr.gr_gid, getgid());
        assert_int_equal(_nss_sbx_getgrgid_r(0, &gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getgrgid_r(getgid() + 1, &gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getgrnam_r("nogroup", &gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        for (size_t n = 0; n < 12; n++) {
                e = 0;
                assert_int_equal(_nss_sbx_getgrgid_r(getgid(), &gr, buf, n, &e), NSS_STATUS_TRYAGAIN);
                assert_int_equal(e, ERANGE);
        }
}

/* getent passwd / getent group: the one entry, once per pass */
static void test_enumerate(void **state) {
        struct passwd pw;
        struct group gr;
        char buf[256];
        int e = 0;

        if (getuid() == 0 || getuid() == 65534 || getgid() == 0 || getgid() == 65534)
                skip();
        for (int pass = 0; pass < 2; pass++) {
                assert_int_equal(_nss_sbx_setpwent(0), NSS_STATUS_SUCCESS);
                assert_int_equal(_nss_sbx_getpwent_r(&pw, buf, 4, &e), NSS_STATUS_TRYAGAIN);
                assert_int_equal(_nss_sbx_getpwent_r(&pw, buf, sizeof(buf), &e), NSS_STATUS_SUCCESS);
                assert_sbx_passwd(&pw);
                assert_int_equal(_nss_sbx_getpwent_r(&pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
                assert_int_equal(_nss_sbx_endpwent(), NSS_STATUS_SUCCESS);

                assert_int_equal(_nss_sbx_setgrent(0), NSS_STATUS_SUCCESS);
                assert_int_equal(_nss_sbx_getgrent_r(&gr, buf, sizeof(buf), &e), NSS_STATUS_SUCCESS);
                assert_string_equal(gr.gr_name, "sbx");
                assert_int_equal(_nss_sbx_getgrent_r(&gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
                assert_int_equal(_nss_sbx_endgrent(), NSS_STATUS_SUCCESS);
        }
}

/* root (the gVisor tier's command, a privileged ExecStartPre=+) has its name from the files: the module
 * names no one */
static void test_root_is_not_sbx(void **state) {
        struct passwd pw;
        struct group gr;
        char buf[256];
        int e = 0;

        if (geteuid() != 0)
                skip();
        assert_int_equal(getuid(), 0);
        assert_int_equal(_nss_sbx_getpwuid_r(0, &pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getpwnam_r("sbx", &pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getgrgid_r(0, &gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_getgrnam_r("sbx", &gr, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_setpwent(0), NSS_STATUS_SUCCESS);
        assert_int_equal(_nss_sbx_getpwent_r(&pw, buf, sizeof(buf), &e), NSS_STATUS_NOTFOUND);
        assert_int_equal(_nss_sbx_endpwent(), NSS_STATUS_SUCCESS);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_passwd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_group, setup, teardown),
                cmocka_unit_test_setup_teardown(test_enumerate, setup, teardown),
                cmocka_unit_test(test_root_is_not_sbx),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
