/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sbxctl's options: parsed into the values common.h declares. */

/* The options before the verb, from optind on (to the first word that is not one); 1 to go on, else minus
 * the exit status (0 after --help and --version). */
int parse_argv(int argc, char *argv[]);
/* The options after the first word (a subcommand's); 1 to go on, else minus the exit status. */
int parse_argv_after_first(int argc, char *argv[]);
