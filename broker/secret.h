/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's secrets: the caller's credentials, stored encrypted as
 * /var/lib/sbx/secrets/TENANT/NAME.cred (systemd-creds encrypt --name=NAME; SECRETS_DIR), decrypted by
 * "systemd-creds decrypt --name=NAME --newline=no - -" with the file as its standard input.
 *
 * Decrypted secrets live only in Secret buffers: anonymous mappings that are mlock()ed (never swapped),
 * MADV_DONTDUMP (never in a core dump) and wiped with explicit_bzero() before they are unmapped. A cache
 * keeps them in the daemon, keyed by tenant, name and the file's device, inode, size, mtime and ctime:
 * the file is stat()ed on every request, so a secret that was removed or replaced is never served from
 * the cache (and a removed one leaves the cache). Thread-safe. */

#include <stddef.h>
#include <stdint.h>

#include "macro.h"

#define SECRETS_DIR SBX_STATEDIR "/secrets" /* as sbxd stores them: TENANT/NAME.cred, root's only */
#define SYSTEMD_CREDS_PATH "/usr/bin/systemd-creds"

typedef struct Secret {
        uint8_t *data;
        size_t size;   /* bytes in use */
        size_t mapped; /* bytes of the mapping, a multiple of the page size */
} Secret;

/* A zeroed, locked buffer of at least capacity bytes (size 0). -ENOMEM, or mlock()'s error (-EPERM,
 * -EAGAIN: RLIMIT_MEMLOCK). */
int secret_new(size_t capacity, Secret **ret);
Secret *secret_free(Secret *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Secret *, secret_free);

/* Appends n bytes; -ENOBUFS when they do not fit. */
int secret_append(Secret *s, const void *p, size_t n);

/* The secret NAME of TENANT under dir (SECRETS_DIR), decrypted, as a copy the caller frees.
 * -ENOENT: there is none; -EBADMSG: systemd-creds refused it (wrong name, another host's key, corrupt);
 * -EFBIG: above GRANT_SECRET_MAX; -ETIMEDOUT: systemd-creds did not finish in time; else another
 * negative errno. Logs nothing of the secret; logs the failures of systemd-creds itself. */
int secret_load(const char *dir, const char *tenant, const char *name, Secret **ret);
