/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reviewed export (docs/export.md): a run's ~/out reviewed into the caller's directory when it ends, by
 * its export unit (sbx-export@RUN.service, sbx-export(8)); what the review held waits in
 * SBX_EXPORTS_DIR/RUN/held for the caller's ApproveExport() or RejectExport(). */

#include <systemd/sd-bus.h>

#include "bus-fields.h"
#include "run.h"

/* The request's "export_fd" (h): a directory of the caller's; its path and identity into the request. */
int export_read_request_fd(sd_bus_message *msg, const BusField *f, void *field, sd_bus_error *error);
/* Before the run's unit starts: the review's directory, and the record's export section. */
int export_run_prepare(Run *run, const RunRequest *req);
/* After its export unit is gone: the reviewer's report into the record; what is not held goes. */
void export_run_ended(Run *run);

int export_method_approve(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int export_method_reject(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* The run did not start: its review's directory goes. */
void export_run_abandon(Run *run);

/* Export from a live sandbox (docs/export.md): a path in its HOME reviewed into the caller's directory by a
 * one-shot unit of its own, while the sandbox runs; one at a time per sandbox. The call is answered when
 * the unit's start job has ended, with the review's report in the record's shape, and the sandbox's record
 * gets its items appended to its export section. */
typedef struct LiveExport LiveExport;
/* Export(s sandbox, s path, h directory) -> s report_json */
int export_method_live(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* The review ended (result: its start job's) or its sandbox did: the record and the call get its report, or
 * the error. Frees x. */
void live_export_finish(LiveExport *x, const char *result);
/* The record of the run goes (the reaper, past RecordRetentionSec=): what its review held goes too. */
void export_forget(const char *run_id);
