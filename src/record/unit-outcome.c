/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "unit-outcome.h"

/* sd-messages.h: SD_MESSAGE_UNIT_SUCCESS, SD_MESSAGE_UNIT_FAILURE_RESULT, SD_MESSAGE_UNIT_PROCESS_EXIT */
#define MESSAGE_UNIT_SUCCESS "7ad2d189f7e94e70a38c781354912448"
#define MESSAGE_UNIT_FAILURE_RESULT "d9b373ed55a64feb8242e02dbe79a49c"
#define MESSAGE_UNIT_PROCESS_EXIT "98e322203f7a4ed290d09fe03c09fe15"

static int exit_code_from_string(const char *s) {
        if (streq_ptr(s, "exited"))
                return CLD_EXITED;
        if (streq_ptr(s, "killed"))
                return CLD_KILLED;
        if (streq_ptr(s, "dumped"))
                return CLD_DUMPED;
        return 0;
}

int unit_outcome_add(UnitOutcome *o, const UnitJournalEntry *e) {
        if (!e->message_id)
                return 0;
        if (!o->result && (streq(e->message_id, MESSAGE_UNIT_SUCCESS) ||
                           (streq(e->message_id, MESSAGE_UNIT_FAILURE_RESULT) && e->unit_result && *e->unit_result))) {
                o->result = strdup(streq(e->message_id, MESSAGE_UNIT_SUCCESS) ? "success" : e->unit_result);
                if (!o->result)
                        return -ENOMEM;
                o->ended_at = e->realtime;
        } else if (o->code == 0 && streq(e->message_id, MESSAGE_UNIT_PROCESS_EXIT) &&
                   streq_ptr(e->command, "ExecStart") && e->exit_status) {
                /* the main process's; a control process's (ExecStopPost=) says nothing of the command */
                int code = exit_code_from_string(e->exit_code);
                char *end;
                long v;

                errno = 0;
                v = strtol(e->exit_status, &end, 10);
                if (code != 0 && errno == 0 && end != e->exit_status && *end == 0 && v >= 0 && v <= 255) {
                        o->code = code;
                        o->status = (int) v;
                }
        }
        return o->result && o->code != 0;
}

int unit_outcome_finish(UnitOutcome *o) {
        if (!o->result)
                return -ENOENT;
        if (o->code == 0 && streq(o->result, "success")) {
                o->code = CLD_EXITED;
                o->status = 0;
        }
        return 0;
}

void unit_outcome_done(UnitOutcome *o) {
        free(o->result);
        *o = (UnitOutcome) {};
}
