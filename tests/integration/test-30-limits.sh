#!/usr/bin/env bash
# Resource ceilings are enforced by the kernel and show up in the record's stop reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3

t_begin "memory: a run over its ceiling is OOM-killed (137, oom-kill)"
if t_require_controller memory; then
  assert_rc 137 sbxctl run --memory 64M -- $PY -c 'x = bytearray(300 << 20); print("ALLOCATED", len(x))'
  assert_not_contains "$T_OUT" "ALLOCATED"
  assert_contains "$T_OUT" "ran out of memory"
  id=$(last_run_id)
  assert_eq "oom-kill" "$(record_get "$id" .stop_reason)" "stop_reason"
  peak=$(record_get "$id" .resources.memory_peak_bytes)
  [ "${peak:-0}" -le $((64 << 20)) ] && [ "${peak:-0}" -gt $((32 << 20)) ] || _t_err "memory peak $peak not in (32M, 64M]"
  # control: the same allocation fits under the profile's own ceiling
  assert_rc 0 sbxctl run -- $PY -c 'x = bytearray(300 << 20); print("ALLOCATED", len(x))'
  assert_contains "$T_OUT" "ALLOCATED 314572800"
  assert_clean
fi

t_begin "memory: the private workspace (tmpfs) counts against the ceiling"
if t_require_controller memory; then
  assert_rc 137 sbxctl run --memory 64M -- sh -c 'head -c 200M /dev/zero > big; echo WROTE'
  assert_not_contains "$T_OUT" "WROTE"
  assert_clean
fi

t_begin "wall time: a run over its ceiling is stopped (124, timeout)"
t0=$(date +%s)
assert_rc 124 sbxctl run --timeout 2s -- sleep 60
el=$(( $(date +%s) - t0 ))
[ "$el" -lt 30 ] || _t_err "took ${el}s to stop a 2 s run"
id=$(last_run_id)
assert_eq "timeout" "$(record_get "$id" .stop_reason)" "stop_reason"
# a command that ignores SIGTERM is killed as well
assert_rc 124 sbxctl run --timeout 2s -- sh -c 'trap "" TERM; sleep 60'
assert_clean

t_begin "tasks: no more processes than the ceiling"
if t_require_controller pids; then
  assert_rc 0 sbxctl run --tasks 16 -- $PY -c '
import os, time
n = 0
pids = []
try:
    for i in range(100):
        p = os.fork()
        if p == 0:
            time.sleep(5); os._exit(0)
        pids.append(p); n += 1
except OSError as e:
    print("fork refused after", n, "errno", e.errno)
'
  n=$(printf '%s' "$T_OUT" | sed -n 's/.*fork refused after \([0-9]*\).*/\1/p')
  [ -n "$n" ] && [ "$n" -lt 16 ] || _t_err "forks: '$T_OUT'"
  id=$(last_run_id)
  tp=$(record_get "$id" .resources.tasks_peak)
  [ "$tp" = null ] || [ "$tp" -le 16 ] || _t_err "tasks_peak $tp above 16"
  assert_clean
fi

t_begin "CPU: the profile's quota holds (200% = two CPUs at most)"
if t_require_controller cpu; then
  assert_rc 0 sbxctl run -- $PY -c '
import os, time, multiprocessing as mp
def spin(t):
    end = time.time() + t
    while time.time() < end: pass
if __name__ == "__main__":
    t0 = time.time(); c0 = os.times()
    ps = [mp.Process(target=spin, args=(3,)) for _ in range(4)]
    [p.start() for p in ps]; [p.join() for p in ps]
    c1 = os.times(); wall = time.time() - t0
    print("ratio", (c1.children_user + c1.children_system) / wall)
'
  r=$(printf '%s' "$T_OUT" | sed -n 's/^ratio //p')
  [ -n "$r" ] && [ "$(echo "$r <= 2.3" | bc)" = 1 ] || _t_err "cpu/wall ratio '$r' above the 200% quota"
fi

t_begin "a request may only tighten the profile"
assert_rc 125 sbxctl run --memory 64G -- true
assert_contains "$T_OUT" "memory: 64G is above the limit of profile 'offline' (2G)"
assert_rc 125 sbxctl run --timeout 5h -- true
assert_contains "$T_OUT" "timeout: 18000s is above the limit of profile 'offline' (3600s)"
assert_rc 125 sbxctl run --tasks 100000 -- true
assert_contains "$T_OUT" "tasks: 100000 is above the limit"
assert_rc 125 sbxctl run --memory lots -- true
assert_contains "$T_OUT" "--memory: 'lots' is not a size"
assert_clean

t_summary
