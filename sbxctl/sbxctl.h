/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What sbxctl.c gives its verb files: the options after a subcommand, and the verbs it dispatches to. */

#include "common.h"
#include "options.h"


/* sbxctl cache (caches.c) */
int verb_cache(int argc, char **argv);

/* sbxctl export (export.c) */
int verb_export(int argc, char **argv);

/* sbxctl image (image.c) */
int verb_image(int argc, char **argv);
