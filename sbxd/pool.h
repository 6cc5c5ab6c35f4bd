/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The warm pool (docs/pool.md): for each profile with pool.size > 0, sbxd keeps that many units started
 * as a run's would be, their exec helpers waiting (--pool) with every check done, owned by no one and
 * running nothing. A run of the profile that a waiting unit can serve (policy_pool_match()) claims it:
 * the run's ceilings are set on the unit and read back from its cgroup, then its command and stdio go to
 * the helper, which says READY=1 (the unit's RuntimeMaxSec= counts from there) and runs it exactly as a
 * run's helper does. From then on it is an ordinary run (manager.c). A pooled unit serves one run and is
 * never reused; the pool refills in the background, with a growing delay after failures. Units left
 * waiting by an earlier sbxd are stopped when sbxd starts. */

#include "run.h"

typedef struct PoolMember PoolMember;
typedef struct PoolClaim PoolClaim;    /* a claim in progress: owned by its Run (run->claim) */

int pool_new(Manager *m, Pool **ret);
Pool *pool_free(Pool *p);
/* Stops what an earlier sbxd left waiting, reads the profiles and fills the pool; re-reads them whenever
 * systemd reloads (profiles are installed with a reload, 'sbxctl profile reload'). */
int pool_start(Pool *p);

/* A waiting unit of the profile (its id in run_id), or NULL. */
PoolMember *pool_find(Pool *p, const char *profile, char run_id[static RUN_ID_LEN + 1]);
const RunPlan *pool_member_plan(const PoolMember *pm);
/* The run's plan does not match the unit found: a unit made from another version of the profile than
 * current is stopped (and the profiles read again); one that another request may match stays. */
void pool_member_mismatch(Pool *p, PoolMember *pm, const Profile *current);
/* The unit becomes the run's (whose unit, unit path and cgroup path are the member's): it leaves the
 * pool, its egress policy and the record's network section (made with it) go to the run. Cannot fail;
 * from here on the member is the run's to claim (pool_claim()) or to let go (pool_member_release()). */
void pool_member_hand_over(Pool *p, PoolMember *pm, Run *run);
/* The run could not take it after all: its unit is stopped. */
void pool_member_release(Pool *p, PoolMember *pm);
/* Sets the run's ceilings on the handed-over unit (and then checks them in the cgroup) when they are not
 * the profile's, sends the command with the run's stdio (fds are duplicated). Ends with
 * manager_run_claimed(). A negative errno if nothing could be started (the unit is then stopped). */
int pool_claim(Pool *p, PoolMember *pm, Run *run, const RunPlan *plan, const int fds[3], char **argv, char **env);
/* The run ends before its claim did (its unit is gone): nothing more is sent. */
PoolClaim *pool_claim_free(PoolClaim *c);
