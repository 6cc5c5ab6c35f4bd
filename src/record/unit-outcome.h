/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A run's outcome from PID 1's journal, for a unit that ended while no sbxd ran (docs/scale.md, "Faults"):
 * systemd logs the end of every unit (its Result, the main process's exit when it did not succeed), and
 * these entries outlive the unit, which systemd collects at once. Pure: the caller reads the entries
 * (sbxd/unit-journal.c) and folds them in here, newest first. */

#include <stdbool.h>

#include "util.h"

typedef struct UnitOutcome {
        char *result;      /* the unit's Result ("success", "exit-code", "timeout", ...); NULL: not logged */
        int code;          /* the main process's end: CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3; 0: not logged */
        int status;        /* its exit status (CLD_EXITED) or signal */
        usec_t ended_at;   /* when the unit's end was logged (CLOCK_REALTIME) */
} UnitOutcome;

/* The fields of one journal entry of PID 1's with UNIT= the unit (NULL where absent). */
typedef struct UnitJournalEntry {
        const char *message_id;   /* MESSAGE_ID= */
        const char *unit_result;  /* UNIT_RESULT= */
        const char *exit_code;    /* EXIT_CODE= ("exited", "killed", "dumped") */
        const char *exit_status;  /* EXIT_STATUS= (a number) */
        const char *command;      /* COMMAND= ("ExecStart", ...) */
        usec_t realtime;          /* the entry's __REALTIME_TIMESTAMP */
} UnitJournalEntry;

/* Folds one entry in (entries newest first). Returns 1 when the outcome is complete, 0 to read on,
 * -ENOMEM. Entries that say nothing of the unit's end are ignored. */
int unit_outcome_add(UnitOutcome *o, const UnitJournalEntry *e);

/* After the last entry: 0 when the unit's end was logged (a success without a logged exit is an exit
 * with status 0: systemd logs a successful main process's exit at debug level only), -ENOENT if not. */
int unit_outcome_finish(UnitOutcome *o);

void unit_outcome_done(UnitOutcome *o);
