/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The profile search path: the one place where the policy core reads files. A name is looked up in
 * /etc/sbx/profiles.d, /run/sbx/profiles.d, /usr/lib/sbx/profiles.d in that order; the first file named
 * NAME.json wins and masks the others; a symlink to /dev/null or an empty file masks the name
 * entirely. $SBX_PROFILES_PATH (colon-separated directories) replaces the list, for tests. */

#include "profile.h"

#define PROFILE_DIRS_DEFAULT "/etc/sbx/profiles.d:/run/sbx/profiles.d:/usr/lib/sbx/profiles.d"

/* The directories searched, highest priority first (NULL-terminated, owned by the caller). */
int profile_search_path(char ***ret);

/* Finds NAME on the search path. Returns 0 and the file's path, -ENOENT when no file has that name,
 * -ERFKILL when the winning file masks it (and its path). */
int profile_find(char *const *dirs, const char *name, char **ret_path);

/* Reads and parses the profile NAME (from the search path). Errors: -EINVAL bad name or bad document,
 * -ENOENT no such profile, -ERFKILL masked, other negative errnos from reading; always with a one-line
 * message in *ret_error (naming the file for document errors). */
int profile_load(char *const *dirs, const char *name, Profile **ret, char **ret_error);

/* Reads and parses one file; the profile's name is the file name without ".json". */
int profile_load_file(const char *path, Profile **ret, char **ret_error);

/* The effective profile files, one per name (masked names left out), sorted by name. *ret_names and
 * *ret_paths are parallel NULL-terminated lists. Files whose names are not valid profile names are
 * skipped and listed in *ret_ignored (may be NULL). */
int profile_enumerate(char *const *dirs, char ***ret_names, char ***ret_paths, char ***ret_ignored);
