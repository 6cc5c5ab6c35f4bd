/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The server: reads messages from stdin on an event loop, answers them on stdout (whole lines, one at a
 * time), runs several tool calls at once, and at stdin's end stops what is still running and removes its
 * sandboxes before it returns. */

#include "mcp-tools.h"

/* Serves on stdin and stdout until stdin ends (or SIGTERM, SIGINT). 0 or -errno. */
int mcp_server_run(const McpConfig *cfg);
