/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The verbs sbxctl.c dispatches to, one file a family. argc and argv: the words after the verb, checked
 * against its entry in the table. 0, or sbxctl's exit status. */

/* run.c */
int verb_run(int argc, char **argv);
int verb_exec(int argc, char **argv);

/* sandboxes.c */
int verb_create(int argc, char **argv);
int verb_rm(int argc, char **argv);

/* records.c */
int verb_list(int argc, char **argv);
int verb_show(int argc, char **argv);
int verb_stop(int argc, char **argv);
int verb_gc(int argc, char **argv);
int verb_capture(int argc, char **argv);

/* profiles.c */
int verb_profile(int argc, char **argv);

/* secrets.c */
int verb_secret(int argc, char **argv);

/* export.c */
int verb_export(int argc, char **argv);

/* caches.c */
int verb_cache(int argc, char **argv);

/* image.c */
int verb_image(int argc, char **argv);
