/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbxctl's own exit codes (docs/design.md, sbxctl(1)). Everything else is the workload's status. */
#define SBX_EXIT_OUTPUT_LIMIT 122 /* the run was ended at its output limit */
#define SBX_EXIT_FAILURE 123   /* sbx could not run it: no systemd, sbxd unreachable, start failed */
#define SBX_EXIT_TIMEOUT 124   /* the run reached its wall-time limit */
#define SBX_EXIT_REFUSED 125   /* bad request: nothing was started */
#define SBX_EXIT_CANNOT_EXEC 126
#define SBX_EXIT_NOT_FOUND 127
