/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* /etc/sbx/sbxd.conf: sbxd's own settings (sbxd(8), CONFIGURATION). Lines of KEY=VALUE, "#" comments,
 * blank lines; an unknown key or a bad value is an error naming the line. Pure but for the loader. */

#include "util.h"

#define DAEMON_CONF_PATH "/etc/sbx/sbxd.conf"
#define DAEMON_CONF_RECORD_RETENTION_DEFAULT (30ULL * 24 * 3600 * USEC_PER_SEC)
#define DAEMON_CONF_CACHE_RETENTION_DEFAULT (30ULL * 24 * 3600 * USEC_PER_SEC)
#define DAEMON_CONF_CACHE_MAX_SIZE_DEFAULT (10ULL * 1024 * 1024 * 1024)

typedef struct DaemonConf {
        usec_t record_retention;   /* RecordRetentionSec=: finished runs' records older than this (by
                                    * their end) are removed by the reaper; 0: kept for ever */
        usec_t cache_retention;    /* CacheRetentionSec=: caches no run has started with for longer are
                                    * removed by the reaper; 0: kept however old */
        uint64_t cache_max_size;   /* CacheMaxSize=: what all caches together may take on disk; beyond it
                                    * the least recently used go first; 0: no cap */
} DaemonConf;

#define DAEMON_CONF_DEFAULTS                                                                              \
        ((DaemonConf) { .record_retention = DAEMON_CONF_RECORD_RETENTION_DEFAULT,                           \
                        .cache_retention = DAEMON_CONF_CACHE_RETENTION_DEFAULT,                             \
                        .cache_max_size = DAEMON_CONF_CACHE_MAX_SIZE_DEFAULT })

/* Parses text (the file's contents) over the defaults; on failure *ret is unchanged and ret_error says
 * "line N: ..." (-EINVAL). */
int daemon_conf_parse(const char *text, DaemonConf *ret, char **ret_error);
/* Reads path: no file is the defaults; an error names the file and line. */
int daemon_conf_load(const char *path, DaemonConf *ret, char **ret_error);
