/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run records (src/record/record*.c): sbxd reads them back from disk (a restart, the reaper, List), and
 * adds what others wrote: the exec helper's denied calls and cgroup figures, the broker's operations log,
 * the export reviewer's report. A record is read or refused naming what; one that is read writes back as
 * text that reads back to the same text. */
#include <errno.h>

#include "fuzz.h"
#include "record-export.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(run_record_freep) RunRecord *r = NULL, *back = NULL;
        _cleanup_(run_export_freep) RunExport *report = NULL;
        _cleanup_free_ char *s = fuzz_strndup(data, size), *error = NULL, *text = NULL, *text2 = NULL,
                            *error2 = NULL, *report_error = NULL, *exec = NULL;
        int k;

        k = run_record_from_json(s, &r, &error);
        if (k < 0) {
                fuzz_check(!r);
                if (k != -ENOMEM)
                        fuzz_check(error);
        } else {
                fuzz_check(r);
                (void) run_record_exit_status(r);
                (void) run_record_cleanup_completed(r);
                fuzz_check(run_record_to_json(r, &text) >= 0);
                k = run_record_from_json(text, &back, &error2);
                if (k < 0) {
                        fprintf(stderr, "a record written does not read back: %s\n%s\n", error2, text);
                        abort();
                }
                fuzz_check(run_record_to_json(back, &text2) >= 0);
                if (!streq(text, text2)) {
                        fprintf(stderr, "a record changes when read back:\n%s\n%s\n", text, text2);
                        abort();
                }
                for (size_t i = 0; r->sandbox && i < r->sandbox->n_execs; i++) {
                        exec = mfree(exec);
                        fuzz_check(run_exec_to_json(&r->sandbox->execs[i], &exec) >= 0);
                        fuzz_check(!strchr(exec, '\n'));
                }
        }

        /* what others write into a record (a fresh one each, as sbxd keeps them) */
        run_record_free(r);
        r = run_record_new();
        if (!r)
                return 0;
        k = run_record_parse_denied(r, s);
        fuzz_check(k >= 0 || k == -EBADMSG || k == -E2BIG || k == -ERANGE || k == -ENOMEM);
        k = run_record_parse_figures(r, s);
        fuzz_check(k >= 0 || k == -EBADMSG);
        if (run_record_credentials_init(r, NULL, NULL) >= 0) {
                k = run_record_add_brokered(r, s);
                fuzz_check(k >= 0 || k == -EBADMSG || k == -ENOMEM);
        }
        k = run_export_from_report(s, &report, &report_error);
        fuzz_check(k >= 0 ? !!report : !report);
        if (k >= 0 && run_record_export_init(r, "/home/user/out") >= 0)
                (void) run_export_append(r->export, report);
        text = mfree(text);
        fuzz_check(run_record_to_json(r, &text) >= 0);
        return 0;
}
