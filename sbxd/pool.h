/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The warm pool (docs/pool.md): for each profile with pool.size > 0, sbxd keeps that many units started
 * as a run's would be, their exec helpers waiting (--pool) with every check done, owned by no one and
 * running nothing. A run of the profile that a waiting unit can serve (policy_pool_match()) claims it:
 * the run's ceilings are set on the unit and read back from its cgroup, then its command and stdio go to
 * the helper, which says READY=1 (the unit's RuntimeMaxSec= counts from there) and runs it exactly as a
 * run's helper does. From then on it is an ordinary run (run.c). A pooled unit serves one run and is
 * never reused; the pool refills in the background, with a growing delay after failures. Units left
 * waiting by an earlier sbxd are stopped when sbxd starts. */

#include "run.h"

typedef struct PoolMember PoolMember;
typedef struct PoolClaim PoolClaim;    /* a claim in progress: owned by its Run (run->claim) */

/* The pool is a feature of the run core (feature.h): its hooks start it once sbxd took up the runs of an
 * earlier one, and offer a waiting unit to a run it can serve (route, route_keeps, hand_over, release,
 * claim). A claim ends with run_claimed() (run.h). */

/* The run ends before its claim did (its unit is gone): nothing more is sent. */
PoolClaim *pool_claim_free(PoolClaim *c);
