/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnss_sbx.so.2: inside a run, the run's own user and group have a name (docs/sandboxes.md, "The run's
 * user"). The unit's nsswitch.conf (identity/nsswitch.conf, bound over /etc/nsswitch.conf) asks this
 * module after the run's /etc/passwd and /etc/group, which list root and nobody only. It answers for
 * the caller's own uid and gid alone, as "sbx" with home /home/sbx: another run's dynamic user, whose
 * name carries its run id, stays unknown, and so does every user of the host. It reads no file and
 * asks nothing of anyone (no D-Bus, no varlink): the answer is a function of getuid() and getgid().
 *
 * Outside a run the module is inert: no nsswitch.conf of the host names it. */
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* SBX_USER_NAME and SBX_HOME: config.h, as for the rest of sbx */
#define SBX_USER_SHELL "/bin/sh"
/* no password: no login with one (not a hash crypt() can match) */
#define SBX_USER_PASSWORD "!*"
/* the overflow uid and gid ("nobody"): never "sbx" */
#define SBX_OVERFLOW_ID 65534

#define NSS_EXPORT __attribute__((visibility("default")))

NSS_EXPORT enum nss_status _nss_sbx_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen, int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t buflen,
                                               int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_setpwent(int stayopen);
NSS_EXPORT enum nss_status _nss_sbx_getpwent_r(struct passwd *pw, char *buf, size_t buflen, int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_endpwent(void);
NSS_EXPORT enum nss_status _nss_sbx_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t buflen, int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_getgrnam_r(const char *name, struct group *gr, char *buf, size_t buflen,
                                               int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_setgrent(int stayopen);
NSS_EXPORT enum nss_status _nss_sbx_getgrent_r(struct group *gr, char *buf, size_t buflen, int *errnop);
NSS_EXPORT enum nss_status _nss_sbx_endgrent(void);

/* The ids this module names: the caller's own, unless it is root or the overflow id (those keep their
 * names from the files). */
static bool own_uid(uid_t *ret) {
        uid_t u = getuid();

        if (u == 0 || u == SBX_OVERFLOW_ID)
                return false;
        *ret = u;
        return true;
}

static bool own_gid(gid_t *ret) {
        gid_t g = getgid();

        if (g == 0 || g == SBX_OVERFLOW_ID)
                return false;
        *ret = g;
        return true;
}

/* Copies s into the caller's buffer at *pos; NULL when it does not fit. */
static char *buf_add(char *buf, size_t buflen, size_t *pos, const char *s) {
        size_t l = strlen(s) + 1;
        char *p;

        if (l > buflen - *pos)
                return NULL;
        p = memcpy(buf + *pos, s, l);
        *pos += l;
        return p;
}

static enum nss_status fill_passwd(uid_t uid, struct passwd *pw, char *buf, size_t buflen, int *errnop) {
        size_t pos = 0;

        pw->pw_name = buf_add(buf, buflen, &pos, SBX_USER_NAME);
        pw->pw_passwd = buf_add(buf, buflen, &pos, SBX_USER_PASSWORD);
        pw->pw_gecos = buf_add(buf, buflen, &pos, SBX_USER_NAME);
        pw->pw_dir = buf_add(buf, buflen, &pos, SBX_HOME);
        pw->pw_shell = buf_add(buf, buflen, &pos, SBX_USER_SHELL);
        if (!pw->pw_name || !pw->pw_passwd || !pw->pw_gecos || !pw->pw_dir || !pw->pw_shell) {
                *errnop = ERANGE;
                return NSS_STATUS_TRYAGAIN;
        }
        pw->pw_uid = uid;
        /* the caller's own group (a dynamic user's has the same number) */
        pw->pw_gid = getgid();
        return NSS_STATUS_SUCCESS;
}

static enum nss_status fill_group(gid_t gid, struct group *gr, char *buf, size_t buflen, int *errnop) {
        size_t pos, align = sizeof(char *) - (uintptr_t) buf % sizeof(char *);

        if (align == sizeof(char *))
                align = 0;
        /* the member list (empty) first, aligned for its pointer */
        if (buflen < align + sizeof(char *)) {
                *errnop = ERANGE;
                return NSS_STATUS_TRYAGAIN;
        }
        gr->gr_mem = (char **) (void *) (buf + align);
        gr->gr_mem[0] = NULL;
        pos = align + sizeof(char *);
        gr->gr_name = buf_add(buf, buflen, &pos, SBX_USER_NAME);
        gr->gr_passwd = buf_add(buf, buflen, &pos, SBX_USER_PASSWORD);
        if (!gr->gr_name || !gr->gr_passwd) {
                *errnop = ERANGE;
                return NSS_STATUS_TRYAGAIN;
        }
        gr->gr_gid = gid;
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_sbx_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen, int *errnop) {
        uid_t own;

        if (!own_uid(&own) || uid != own)
                return NSS_STATUS_NOTFOUND;
        return fill_passwd(own, pw, buf, buflen, errnop);
}

enum nss_status _nss_sbx_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t buflen, int *errnop) {
        uid_t own;

        if (!name || strcmp(name, SBX_USER_NAME) != 0 || !own_uid(&own))
                return NSS_STATUS_NOTFOUND;
        return fill_passwd(own, pw, buf, buflen, errnop);
}

enum nss_status _nss_sbx_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t buflen, int *errnop) {
        gid_t own;

        if (!own_gid(&own) || gid != own)
                return NSS_STATUS_NOTFOUND;
        return fill_group(own, gr, buf, buflen, errnop);
}

enum nss_status _nss_sbx_getgrnam_r(const char *name, struct group *gr, char *buf, size_t buflen, int *errnop) {
        gid_t own;

        if (!name || strcmp(name, SBX_USER_NAME) != 0 || !own_gid(&own))
                return NSS_STATUS_NOTFOUND;
        return fill_group(own, gr, buf, buflen, errnop);
}

/* Enumeration (getent passwd, getent group): the one entry, once. glibc serialises the *ent calls of a
 * database under its own lock. */
static bool pw_done, gr_done;

enum nss_status _nss_sbx_setpwent(int stayopen) {
        pw_done = false;
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_sbx_endpwent(void) {
        pw_done = false;
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_sbx_getpwent_r(struct passwd *pw, char *buf, size_t buflen, int *errnop) {
        enum nss_status s;
        uid_t own;

        if (pw_done || !own_uid(&own))
                return NSS_STATUS_NOTFOUND;
        s = fill_passwd(own, pw, buf, buflen, errnop);
        if (s == NSS_STATUS_SUCCESS)
                pw_done = true;
        return s;
}

enum nss_status _nss_sbx_setgrent(int stayopen) {
        gr_done = false;
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_sbx_endgrent(void) {
        gr_done = false;
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_sbx_getgrent_r(struct group *gr, char *buf, size_t buflen, int *errnop) {
        enum nss_status s;
        gid_t own;

        if (gr_done || !own_gid(&own))
                return NSS_STATUS_NOTFOUND;
        s = fill_group(own, gr, buf, buflen, errnop);
        if (s == NSS_STATUS_SUCCESS)
                gr_done = true;
        return s;
}
