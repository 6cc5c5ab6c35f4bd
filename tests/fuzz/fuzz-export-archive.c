/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Archives leaving a run (export/archive-normalize.c): the input is a file of the run's output folder that
 * libmagic would call a zip, a gzip or a tar (by its first bytes). It is rewritten as sbx-export does, with
 * small caps; what comes out must be normal already: rewriting it again keeps every member and drops
 * none. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive-normalize.h"
#include "fuzz.h"
#include "macro.h"

static int scratch_fd = -EBADF;
static char scratch_dir[] = "/tmp/sbx-fuzz-export-XXXXXX";

static void remove_scratch(void) {
        (void) rmdir(scratch_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        if (!mkdtemp(scratch_dir))
                abort();
        scratch_fd = open(scratch_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (scratch_fd < 0)
                abort();
        /* members are O_TMPFILE files in it: nothing is left there but the directory */
        atexit(remove_scratch);
        return 0;
}

static int memfd_with(const uint8_t *data, size_t size) {
        int fd = memfd_create("fuzz", MFD_CLOEXEC);

        if (fd < 0)
                abort();
        if (size > 0 && write(fd, data, size) != (ssize_t) size)
                abort();
        return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(archive_result_done) ArchiveResult res = {}, again = {};
        _cleanup_close_ int in = memfd_with(data, size), out = memfd_with(NULL, 0), out2 = memfd_with(NULL, 0);
        ArchiveLimits limits = { .max_entries = 256, .max_bytes = 4 << 20, .keep_exec = size > 0 && data[0] & 1 };
        ArchiveKind kind;
        int r;

        if (size >= 2 && data[0] == 'P' && data[1] == 'K')
                kind = ARCHIVE_KIND_ZIP;
        else if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
                kind = ARCHIVE_KIND_GZIP;
        else
                kind = ARCHIVE_KIND_TAR;

        r = archive_normalize(in, kind, out, scratch_fd, &limits, &res);
        if (r < 0) {
                if (!(r == -EBADMSG || r == -E2BIG || r == -EFBIG || r == -ENOMEM))
                        fprintf(stderr, "archive_normalize() -> %d\n", r);
                fuzz_check(r == -EBADMSG || r == -E2BIG || r == -EFBIG || r == -ENOMEM);
                return 0;
        }
        if (r == 1) {
                fuzz_check(kind == ARCHIVE_KIND_GZIP);
                return 0;
        }
        fuzz_check(r == 0);
        fuzz_check(res.n_entries <= limits.max_entries && res.bytes <= limits.max_bytes);
        for (size_t i = 0; i < res.n_dropped; i++)
                fuzz_check(res.dropped[i].entry && res.dropped[i].reason);

        r = archive_normalize(out, kind, out2, scratch_fd, &limits, &again);
        if (r != 0 || again.n_dropped != 0 || again.n_entries != res.n_entries - res.n_dropped ||
            again.bytes != res.bytes) {
                fprintf(stderr, "normalised archive not normal: %d, %zu dropped (first: %s: %s), %" PRIu64
                        " of %" PRIu64 " entries, %" PRIu64 " of %" PRIu64 " bytes\n", r, again.n_dropped,
                        again.n_dropped ? again.dropped[0].entry : "-", again.n_dropped ? again.dropped[0].reason : "-",
                        again.n_entries, res.n_entries - res.n_dropped, again.bytes, res.bytes);
                abort();
        }
        return 0;
}
