/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The resource ceilings of a run that need a cgroup controller (memory, tasks, cpu), and whether this
 * build may start a run where the host's cgroup2 tree lacks one. Only a testbed build may
 * (meson -Dtestbed-unenforced-limits=true, docs/testbed.md): its runs say so in their record, in
 * sbxctl's output and in the journal. Every other build refuses such a run (exit 123), as the packages
 * do; the packaging scripts refuse the option. */

#include <stdbool.h>

typedef enum Ceiling {
        CEILING_MEMORY = 1 << 0, /* MemoryMax=, MemorySwapMax=: the memory controller */
        CEILING_TASKS = 1 << 1,  /* TasksMax=: the pids controller */
        CEILING_CPU = 1 << 2,    /* CPUQuota=: the cpu controller */
        _CEILINGS_ALL = (1 << 3) - 1,
} Ceiling;

/* "memory", "tasks", "cpu": the names of the record's limits.unenforced list; NULL for anything else. */
const char *ceiling_to_string(Ceiling c);
/* The bit of one of those names, or -EINVAL. */
int ceiling_from_string(const char *s);

/* "memory, tasks, cpu": the names of mask's ceilings, joined by sep, into buf ("" for none). */
#define CEILINGS_LIST_MAX 32
char *ceilings_to_list(unsigned mask, const char *sep, char buf[static CEILINGS_LIST_MAX]);

/* What --version says after the version: in a testbed build, and only there, that it is one (the
 * packages' binaries are checked for this text: tests/integration/test-01-package.sh). */
#if SBX_TESTBED_UNENFORCED_LIMITS
#  define SBX_BUILD_KIND " (testbed build: testbed-unenforced-limits)"
#else
#  define SBX_BUILD_KIND ""
#endif

/* The bits of a list "memory,tasks" (names of ceiling_to_string(), comma-separated). -EINVAL: another
 * word, or an empty list. */
int ceilings_from_list(const char *s, unsigned *ret);

/* True only in a testbed build. */
static inline bool ceilings_may_go_unenforced(void) {
        return SBX_TESTBED_UNENFORCED_LIMITS;
}

/* Of the ceilings in mask, those whose controller this host's cgroup2 root does not offer (its
 * cgroup.controllers lists neither it nor, so, any cgroup's). The file's text is passed in (NULL: the
 * root's, read here), so the rule is testable. <0: the file could not be read. */
int ceilings_without_controller(unsigned mask, const char *controllers, unsigned *ret);

/* The ceilings of mask this build leaves unenforced here: always 0 but in a testbed build, and there
 * those without their controller (all of mask if the root's list cannot be read: nothing is claimed
 * that was not checked). */
unsigned ceilings_unenforced(unsigned mask);
