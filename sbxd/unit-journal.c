/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How a unit ended, read from PID 1's entries in the journal (unit-journal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "unit-journal.h"

#define UNIT_JOURNAL_MAX_ENTRIES 500

/* FIELD's value in the current entry, NUL-terminated (NULL: absent) */
static int entry_field(sd_journal *j, const char *field, char **ret) {
        const void *data;
        size_t len, k = strlen(field);
        int r;

        r = sd_journal_get_data(j, field, &data, &len);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;
        if (len <= k || memcmp(data, field, k) != 0 || ((const char *) data)[k] != '=')
                return -EBADMSG;
        *ret = strndup((const char *) data + k + 1, len - k - 1);
        return *ret ? 0 : -ENOMEM;
}

int unit_journal_outcome(const char *unit, UnitOutcome *ret) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        _cleanup_free_ char *match = NULL;
        UnitOutcome o = {};
        int r;

        r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
        if (r < 0)
                return r;
        if (asprintf(&match, "UNIT=%s", unit) < 0)
                return -ENOMEM;
        /* _PID= is set by journald itself: only PID 1's word counts, not a process that logs UNIT= */
        r = sd_journal_add_match(j, match, 0);
        if (r >= 0)
                r = sd_journal_add_match(j, "_PID=1", 0);
        if (r >= 0)
                r = sd_journal_seek_tail(j);
        if (r < 0)
                return r;
        for (unsigned n = 0; n < UNIT_JOURNAL_MAX_ENTRIES; n++) {
                _cleanup_free_ char *id = NULL, *result = NULL, *code = NULL, *status = NULL, *command = NULL;
                UnitJournalEntry e = {};

                r = sd_journal_previous(j);
                if (r <= 0)
                        break;
                if (entry_field(j, "MESSAGE_ID", &id) < 0 || entry_field(j, "UNIT_RESULT", &result) < 0 ||
                    entry_field(j, "EXIT_CODE", &code) < 0 || entry_field(j, "EXIT_STATUS", &status) < 0 ||
                    entry_field(j, "COMMAND", &command) < 0)
                        continue;
                e = (UnitJournalEntry) { .message_id = id, .unit_result = result, .exit_code = code,
                                         .exit_status = status, .command = command };
                (void) sd_journal_get_realtime_usec(j, &e.realtime);
                r = unit_outcome_add(&o, &e);
                if (r != 0)
                        break;
        }
        if (r < 0) {
                unit_outcome_done(&o);
                return r;
        }
        r = unit_outcome_finish(&o);
        if (r < 0) {
                unit_outcome_done(&o);
                return r;
        }
        *ret = o;
        return 0;
}
