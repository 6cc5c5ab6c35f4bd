/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The verbs sbxctl.c dispatches to, one file a family: their arguments are the words after the verb. */

/* run.c */
int verb_run(char **cmd);
int verb_exec(const char *sandbox, char **cmd);

/* sandboxes.c */
int verb_create(void);
int verb_rm(char **ids);

/* records.c */
int verb_list(void);
int verb_show(const char *id);
int verb_stop(const char *id);
int verb_gc(void);
int verb_capture(const char *id);

/* profiles.c */
int verb_profile(char **args);

/* secrets.c */
int verb_secret(int argc, char **argv);

/* export.c */
int verb_export(int argc, char **argv);

/* caches.c */
int verb_cache(int argc, char **argv);

/* image.c */
int verb_image(int argc, char **argv);
