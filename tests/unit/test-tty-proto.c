/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tty-proto: the frames a run's terminal carries towards the run, encoded and decoded. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tty-proto.h"
#include "unit-test.h"

static void test_data_round_trip(void **state) {
        uint8_t buf[TTY_FRAME_MAX];
        TtyDecoder d = {};
        TtyFrame f;
        int n;

        n = tty_frame_data(buf, sizeof(buf), "ls\r", 3);
        assert_int_equal(n, 6);
        assert_memory_equal(buf, "\x01\x00\x03ls\r", 6);
        assert_int_equal(tty_decoder_feed(&d, buf, (size_t) n), 6);
        assert_int_equal(tty_decoder_next(&d, &f), 1);
        assert_int_equal(f.type, TTY_FRAME_DATA);
        assert_int_equal(f.size, 3);
        assert_memory_equal(f.data, "ls\r", 3);
        assert_int_equal(tty_decoder_next(&d, &f), 0);
}

static void test_winsize_round_trip(void **state) {
        uint8_t buf[16];
        TtyDecoder d = {};
        TtyFrame f;

        assert_int_equal(tty_frame_winsize(buf, sizeof(buf), 24, 300), 7);
        assert_memory_equal(buf, "\x02\x00\x04\x00\x18\x01\x2c", 7);
        tty_decoder_feed(&d, buf, 7);
        assert_int_equal(tty_decoder_next(&d, &f), 1);
        assert_int_equal(f.type, TTY_FRAME_WINSIZE);
        assert_int_equal(f.rows, 24);
        assert_int_equal(f.cols, 300);
}

static void test_encode_refusals(void **state) {
        uint8_t buf[TTY_FRAME_MAX + 1], small[5], payload[TTY_FRAME_PAYLOAD_MAX + 1] = {};

        assert_int_equal(tty_frame_data(buf, sizeof(buf), "", 0), -EINVAL);
        assert_int_equal(tty_frame_data(buf, sizeof(buf), payload, TTY_FRAME_PAYLOAD_MAX + 1), -EINVAL);
        assert_int_equal(tty_frame_data(buf, sizeof(buf), payload, TTY_FRAME_PAYLOAD_MAX), (int) TTY_FRAME_MAX);
        assert_int_equal(tty_frame_data(small, sizeof(small), "abc", 3), -ENOBUFS);
        assert_int_equal(tty_frame_winsize(buf, sizeof(buf), 0, 80), -EINVAL);
        assert_int_equal(tty_frame_winsize(buf, sizeof(buf), 24, TTY_SIZE_MAX + 1), -EINVAL);
        assert_int_equal(tty_frame_winsize(small, sizeof(small), 24, 80), -ENOBUFS);
}

/* Frames split anywhere, several in one read: each comes out whole, in order. */
static void test_split_and_batched(void **state) {
        uint8_t stream[64];
        size_t len = 0;
        int failures = 0;

        len += (size_t) tty_frame_data(stream + len, sizeof(stream) - len, "echo hi\r", 8);
        len += (size_t) tty_frame_winsize(stream + len, sizeof(stream) - len, 50, 132);
        len += (size_t) tty_frame_data(stream + len, sizeof(stream) - len, "\x03", 1);

        for (size_t step = 1; step <= len; step++) {
                TtyDecoder d = {};
                TtyFrame f;
                unsigned seen = 0;

                for (size_t off = 0; off < len; off += step) {
                        size_t n = step < len - off ? step : len - off;

                        check_row(failures, tty_decoder_feed(&d, stream + off, n) == n, "step %zu", step);
                        while (tty_decoder_next(&d, &f) == 1) {
                                seen++;
                                if (seen == 1)
                                        check_row(failures, f.type == TTY_FRAME_DATA && f.size == 8 &&
                                                  memcmp(f.data, "echo hi\r", 8) == 0, "step %zu", step);
                                else if (seen == 2)
                                        check_row(failures, f.type == TTY_FRAME_WINSIZE && f.rows == 50 &&
                                                  f.cols == 132, "step %zu", step);
                                else
                                        check_row(failures, f.type == TTY_FRAME_DATA && f.size == 1 &&
                                                  f.data[0] == 3, "step %zu", step);
                        }
                }
                check_row(failures, seen == 3, "step %zu: %u frames", step, seen);
        }
        assert_int_equal(failures, 0);
}

/* The decoder holds one frame at most: a big burst is taken in pieces, nothing lost. */
static void test_backpressure(void **state) {
        static uint8_t stream[3 * TTY_FRAME_MAX];
        uint8_t payload[TTY_FRAME_PAYLOAD_MAX];
        TtyDecoder d = {};
        TtyFrame f;
        size_t len = 0, off = 0, total = 0;

        memset(payload, 'x', sizeof(payload));
        for (int i = 0; i < 3; i++)
                len += (size_t) tty_frame_data(stream + len, sizeof(stream) - len, payload, sizeof(payload));
        while (off < len) {
                size_t k = tty_decoder_feed(&d, stream + off, len - off);

                assert_true(k > 0);
                off += k;
                while (tty_decoder_next(&d, &f) == 1) {
                        assert_int_equal(f.size, TTY_FRAME_PAYLOAD_MAX);
                        total += f.size;
                }
        }
        assert_int_equal(total, 3 * TTY_FRAME_PAYLOAD_MAX);
}

static void test_bad_streams(void **state) {
        static const struct {
                const char *bytes;
                size_t n;
        } bad[] = {
                { "\x00\x00\x01x", 4 },                 /* type 0 */
                { "\x07\x00\x01x", 4 },                 /* unknown type */
                { "\x01\x00\x00", 3 },                  /* empty data */
                { "\x01\x10\x01", 3 },                  /* data longer than TTY_FRAME_PAYLOAD_MAX */
                { "\x02\x00\x03\x00\x18\x00", 6 },      /* window size of 3 bytes */
                { "\x02\x00\x04\x00\x00\x00\x50", 7 },  /* 0 rows */
                { "\x02\x00\x04\x00\x18\xff\xff", 7 },  /* cols past TTY_SIZE_MAX */
        };
        int failures = 0;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                TtyDecoder d = {};
                TtyFrame f;

                tty_decoder_feed(&d, bad[i].bytes, bad[i].n);
                check_row(failures, tty_decoder_next(&d, &f) == -EBADMSG, "row %zu", i);
        }
        assert_int_equal(failures, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_data_round_trip),
                cmocka_unit_test(test_winsize_round_trip),
                cmocka_unit_test(test_encode_refusals),
                cmocka_unit_test(test_split_and_batched),
                cmocka_unit_test(test_backpressure),
                cmocka_unit_test(test_bad_streams),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
