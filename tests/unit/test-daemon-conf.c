/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon-conf: /etc/sbx/sbxd.conf, its defaults and its errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon-conf.h"
#include "unit-test.h"

#define DAY (24ULL * 3600 * USEC_PER_SEC)

static void test_parse(void **state) {
        static const struct {
                const char *text;
                usec_t retention;
        } table[] = {
                { "", DAEMON_CONF_RECORD_RETENTION_DEFAULT },
                { "# nothing\n\n   \n", DAEMON_CONF_RECORD_RETENTION_DEFAULT },
                { "RecordRetentionSec=7d\n", 7 * DAY },
                { "  RecordRetentionSec = 12h  \r\n", 12 * 3600 * USEC_PER_SEC },
                { "RecordRetentionSec=0", 0 },
                { "RecordRetentionSec=90\nRecordRetentionSec=1d", DAY }, /* the last one counts */
        };
        unsigned failures = 0;

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                DaemonConf c = DAEMON_CONF_DEFAULTS;
                char *err = NULL;
                int r = daemon_conf_parse(table[i].text, &c, &err);

                check_row(failures, r == 0 && c.record_retention == table[i].retention, "'%s' -> %d %" PRIu64 " %s",
                          table[i].text, r, c.record_retention, err ?: "");
                free(err);
        }
        assert_int_equal(failures, 0);
}

static void test_caches(void **state) {
        DaemonConf c = DAEMON_CONF_DEFAULTS;
        char *err = NULL;

        assert_int_equal(c.cache_retention, 30 * DAY);
        assert_int_equal(c.cache_max_size, 10ULL << 30);
        assert_int_equal(daemon_conf_parse("CacheRetentionSec=7d\nCacheMaxSize=512M\n", &c, &err), 0);
        assert_int_equal(c.cache_retention, 7 * DAY);
        assert_int_equal(c.cache_max_size, 512ULL << 20);
        assert_int_equal(c.record_retention, DAEMON_CONF_RECORD_RETENTION_DEFAULT);
        assert_int_equal(daemon_conf_parse("CacheRetentionSec=0\nCacheMaxSize=0", &c, &err), 0);
        assert_int_equal(c.cache_retention, 0);
        assert_int_equal(c.cache_max_size, 0);
        assert_int_equal(daemon_conf_parse("CacheMaxSize=lots", &c, &err), -EINVAL);
        assert_string_equal(err, "line 1: CacheMaxSize: 'lots' is not a size (e.g. 10G, 512M, 0)");
        free(err);
        err = NULL;
        assert_int_equal(daemon_conf_parse("\nCacheRetentionSec=later", &c, &err), -EINVAL);
        assert_string_equal(err, "line 2: CacheRetentionSec: 'later' is not a duration (e.g. 30d, 12h, 0)");
        free(err);
        assert_int_equal(c.cache_max_size, 0); /* unchanged by a refused text */
}

static void test_refused(void **state) {
        static const struct {
                const char *text, *error;
        } table[] = {
                { "RecordRetentionSec", "line 1: expected KEY=VALUE" },
                { "# ok\nRecordRetentionSec=soon", "line 2: RecordRetentionSec: 'soon' is not a duration" },
                { "RecordRetentionSec=-1d", "line 1: RecordRetentionSec: '-1d' is not a duration" },
                { "RecordRetentionSec=99999999999999999d", "line 1: RecordRetentionSec: '99999999999999999d' is not" },
                { "\n\nRetention=1d", "line 3: unknown key 'Retention'" },
        };
        unsigned failures = 0;

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                DaemonConf c = { .record_retention = 42 };
                char *err = NULL;
                int r = daemon_conf_parse(table[i].text, &c, &err);

                check_row(failures, r == -EINVAL && err && strneq(err, table[i].error, strlen(table[i].error)) &&
                                            c.record_retention == 42,
                          "'%s' -> %d '%s'", table[i].text, r, err ?: "");
                free(err);
        }
        assert_int_equal(failures, 0);
}

static void test_load(void **state) {
        char path[] = "/tmp/sbx-conf-XXXXXX", *err = NULL;
        DaemonConf c = { .record_retention = 1 };
        FILE *f;
        int fd;

        assert_int_equal(daemon_conf_load("/nonexistent/sbxd.conf", &c, &err), 0);
        assert_int_equal(c.record_retention, DAEMON_CONF_RECORD_RETENTION_DEFAULT);

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs("RecordRetentionSec=2d\nBogus=1\n", f);
        fclose(f);
        assert_int_equal(daemon_conf_load(path, &c, &err), -EINVAL);
        assert_non_null(err);
        assert_non_null(strstr(err, path));
        assert_non_null(strstr(err, "line 2: unknown key 'Bogus'"));
        free(err);
        unlink(path);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_caches),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_load),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
