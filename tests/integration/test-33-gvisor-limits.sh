#!/usr/bin/env bash
# The gVisor tier's ceilings (docs/security.md "Isolation tiers"): runsc and the command's address spaces
# are processes of the run's unit, so the unit's memory and task ceilings hold for them as for a
# kernel-tier command, and a ceiling met inside gVisor gets the same stop reason, record and line.
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd runsc || t_summary
PY=/usr/bin/python3

t_begin "memory: a command over its ceiling inside gVisor is OOM-killed, with the kernel tier's line and record"
# gVisor's own /dev/shm is a tmpfs in the Sentry's memory, charged to the unit's cgroup: large writes fill
# it in a few system calls (an allocation the command touches page by page would fault through the
# ptrace platform one page at a time, which this lane's emulation makes minutes long)
if t_require_controller memory; then
  # runsc's own pages in the page cache first, charged here, not to the run's cgroup: read there for the
  # first time, they are what the kernel reclaims before it kills, and under this lane's emulation (the
  # root over 9p) refaulting them page by page delayed the OOM kill by minutes; a deadline far below
  # the profile's (1h) keeps a run that still does from taking the file's whole time
  cat "$(command -v runsc)" > /dev/null
  assert_rc 137 sbxctl run -p untrusted --memory 160M --timeout 240s -- sh -c 'dd if=/dev/zero of=/dev/shm/fill bs=16M count=40 2>&1; echo FILLED'
  assert_not_contains "$T_OUT" "FILLED"
  assert_contains "$T_OUT" "sbx: stopped: memory limit 160M reached (peak "
  assert_contains "$T_OUT" "oom-kill) — use less memory or pass --memory up to 2G"
  id=$(last_run_id)
  assert_eq "gvisor" "$(record_get "$id" .isolation)" "isolation"
  assert_eq "oom-kill" "$(record_get "$id" .stop_reason)" "stop_reason"
  kills=$(record_get "$id" .limit_events.oom_kill)
  [ "${kills:-0}" != null ] && [ "${kills:-0}" -ge 1 ] || _t_err "limit_events.oom_kill '$kills' (expected >= 1)"
  # the run reached its ceiling (the kernel charges a page or so past memory.max before the OOM kill);
  # a run is slow to start here, so no control run: test-30 has the kernel tier's
  peak=$(record_get "$id" .resources.memory_peak_bytes)
  [ "${peak:-0}" -le $(((160 << 20) + (64 << 10))) ] || _t_err "memory peak $peak above the ceiling"
  [ "${peak:-0}" -ge $((150 << 20)) ] || _t_err "memory peak $peak: the run did not reach its ceiling"
  assert_clean
fi

t_begin "tasks: a fork bomb inside gVisor is contained at the unit's task ceiling, with the kernel tier's line"
if t_require_controller pids; then
  t0=$(date +%s)
  t_run sbxctl run -p untrusted --tasks 96 --timeout 120s -- bash -c "$SBX_FORK_BOMB"
  el=$(( $(date +%s) - t0 ))
  t_log "status $T_RC after ${el}s"
  [ "$T_RC" != 0 ] || _t_err "the fork bomb ended with status 0"
  assert_contains "$T_OUT" "sbx: fork refused "
  assert_contains "$T_OUT" "task limit 96 reached — fewer processes or --tasks up to 512"
  id=$(last_run_id)
  refused=$(record_get "$id" .limit_events.fork_refused)
  [ "$refused" != null ] && [ "$refused" -gt 0 ] || _t_err "limit_events.fork_refused '$refused' (expected > 0)"
  assert_eq "96" "$(record_get "$id" .limits.tasks)" "limits.tasks"
  peak=$(record_get "$id" .resources.tasks_peak)
  [ "${peak:-0}" -le 96 ] || _t_err "tasks peak $peak above the ceiling"
  assert_clean
fi

t_summary
