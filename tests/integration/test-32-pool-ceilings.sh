#!/usr/bin/env bash
# The warm pool's claims in the kernel (docs/pool.md): a run's lower ceilings, set on the waiting unit it is
# served by, hold in its cgroup (memory.max, pids.max, cpu.max), and its limit events are its own. It needs
# the memory, pids and cpu controllers: the vm lane. test-49 has the rest of the pool.
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/pool.sh"
t_require_systemd || t_summary
PROF=sbxtest_poolcg
# time enough for a memory hog to meet its ceiling on a loaded, emulated machine (test-49's pool has 4 s,
# for its case about the wall time)
POOL_WALL_TIME=60s
t_on_exit pool_remove_profiles
mkdir -p "$RUNPROF"

t_begin "the run's lower ceilings are set on the pooled unit and hold in the kernel"
if t_require_controller memory && t_require_controller pids && t_require_controller cpu; then
  write_profile "$PROF" 2
  assert_rc 0 systemctl start sbxd.service
  assert_rc 0 sbxctl profile reload
  wait_pool 2
  assert_rc 0 sbxctl run --quiet -p "$PROF" --memory 64M --tasks 8 --cpu 50% -- \
    sh -c 'cg=/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup); cat $cg/memory.max $cg/pids.max $cg/cpu.max'
  assert_eq "67108864
8
50000 100000" "$T_OUT" "memory.max, pids.max, cpu.max inside the run"
  id=$(last_run_id)
  assert_eq pool "$(record_get "$id" .start)" "record start"
  wait_pool 2
  assert_rc 137 sbxctl run -p "$PROF" --memory 64M -- python3 -c 'x = bytearray(300 << 20); print("ALLOCATED")'
  assert_not_contains "$T_OUT" "ALLOCATED"
  id=$(last_run_id)
  assert_eq pool "$(record_get "$id" .start)" "record start"
  assert_eq oom-kill "$(record_get "$id" .stop_reason)" "stop reason"
  # the limit events are the run's own, read by the unit's figures reader as for a cold run
  kills=$(record_get "$id" .limit_events.oom_kill)
  [ "$kills" != null ] && [ "$kills" -ge 1 ] || _t_err "limit_events.oom_kill '$kills' of a pooled run"
  assert_eq "$((64 << 20))" "$(record_get "$id" .limits.memory_bytes)" "limits.memory_bytes of a pooled run"
  # the pool off: nothing of it is left
  pool_off
fi

t_summary
