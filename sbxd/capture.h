/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Temporary elevated capture (docs/capture.md): `Capture(s run_id, t duration_usec) -> t until_usec`, for root
 * and whom polkit authorizes for org.sbx.capture. From then until the expiry (or the run's end) the output
 * the run's exec helper passes to the caller is also written, by sbxd, to SBX_CAPTURE_DIR/<run id> (0600,
 * root's). The record's "capture" says so; the reaper deletes the file once the capture expired. */

#include <systemd/sd-bus.h>

#include "run.h"

typedef struct Capture Capture;

Capture *capture_free(Capture *c);

/* The method (org.sbx.Manager1.Capture). */
int capture_method(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The run is over: what is still in the pipe goes to the file, and capture ends (capture.ended_at). The
 * caller writes the record. */
void capture_run_ended(Run *run);

/* The reaper's part (also when sbxd starts): deletes the files of captures past their expiry
 * (capture.deleted_at), ends the captures records say are on but that no one is taking any more (sbxd
 * restarted: capture.ended_at), and deletes files no record speaks for. Returns the files deleted. */
size_t capture_reap(Manager *m, usec_t now);
