/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes, durations and timestamps (src/shared/util.c), as the command line, profiles, records and
 * sbxd.conf give them, and sbxd.conf itself (src/shared/daemon-conf.c). A value is accepted whole or
 * refused with -EINVAL or -ERANGE (never wrapped around); a timestamp read back is what formatting
 * writes; a configuration is taken whole or refused naming its line, leaving the defaults as they were. */
#include <errno.h>
#include <inttypes.h>

#include "daemon-conf.h"
#include "fuzz.h"
#include "util.h"

static void check_number(const char *s, int (*parse)(const char *, uint64_t *), uint64_t unit_max) {
        uint64_t v = UINT64_C(0xdeadbeef);
        size_t digits = strspn(s, "0123456789");
        int r;

        r = parse(s, &v);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -ERANGE);
                fuzz_check(v == UINT64_C(0xdeadbeef));
                return;
        }
        fuzz_check(r == 0 && digits > 0);
        /* no overflow: the number alone is at most the value (no unit divides) and at most a unit's
         * factor times smaller */
        if (digits < 20) {
                uint64_t n = strtoull(s, NULL, 10);

                fuzz_check(v == 0 || n == 0 || v >= n / 1000);
                fuzz_check(n == 0 || v / n <= unit_max);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size), *error = NULL;
        DaemonConf c = DAEMON_CONF_DEFAULTS, before = c;
        char buf[TIMESTAMP_MAX], bytes[32];
        usec_t t;
        int r;

        check_number(s, parse_size, UINT64_C(1) << 40);
        check_number(s, parse_duration, 3600 * USEC_PER_SEC);

        if (parse_timestamp(s, &t) >= 0) {
                fuzz_check(format_timestamp(buf, t));
                fuzz_check(streq(buf, s));
        }
        if (size >= sizeof(uint64_t)) {
                uint64_t u;

                memcpy(&u, data, sizeof(u));
                if (format_timestamp(buf, u)) {
                        fuzz_check(parse_timestamp(buf, &t) == 0);
                        fuzz_check(t == u);
                }
                fuzz_check(format_bytes(bytes, sizeof(bytes), u));
        }

        r = daemon_conf_parse(s, &c, &error);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -ENOMEM);
                fuzz_check(memcmp(&c, &before, sizeof(c)) == 0);
                if (r == -EINVAL)
                        fuzz_check_one_line(error);
        }
        return 0;
}
