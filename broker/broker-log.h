/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* log.h for a daemon with threads: log_internal() writes one line in several stdio calls, so each line is
 * written under stderr's lock, whole, whatever other threads log meanwhile (stdio locks are recursive). */

#include <stdio.h>

#include "log.h"

#undef log_full_errno
#define log_full_errno(level, error, ...)                                                              \
        ({                                                                                             \
                int _r_;                                                                               \
                flockfile(stderr);                                                                     \
                _r_ = log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__);       \
                funlockfile(stderr);                                                                   \
                _r_;                                                                                   \
        })
