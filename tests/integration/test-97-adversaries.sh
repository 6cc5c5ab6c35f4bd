#!/usr/bin/env bash
# Six adversaries at once (docs/scale.md, "Faults"): a fork bomb, a memory hog, yes past its output cap, dd
# past its disk cap, sleep past its deadline and a spinner under a CPU quota, while a probe on the host keeps
# answering. Each is contained by its own ceiling, with the right record and line; nothing is left behind.
# It needs the memory, pids and cpu controllers: the vm lane. test-96 has the other faults.
#   SBX_FAULT_PROBE_RATIO     the probe under the adversaries: its median at most this many times the
#                             idle median, its slowest answer this many times the idle slowest (10)
#   SBX_FAULT_PROBE_FLOOR_MS  ... or this for the median, whichever is larger (50)
#   SBX_FAULT_PROBE_MAX_MS    ... or this for the slowest answer, whichever is larger (1000)
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
PY=/usr/bin/python3
PROBE_MAX_MS=${SBX_FAULT_PROBE_MAX_MS:-1000}
PROBE_RATIO=${SBX_FAULT_PROBE_RATIO:-10}
PROBE_FLOOR_MS=${SBX_FAULT_PROBE_FLOOR_MS:-50}
RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_adversaries

t_begin "six adversaries at once are each contained with the right record and line; the host keeps answering"
if t_require_controller memory && t_require_controller pids && t_require_controller cpu; then
  mkdir -p "$RUNPROF"
  cat > "$RUNPROF/$PROF.json" <<'EOF'
{
  "version": 1,
  "description": "sbx test: faults (an output cap and a disk cap)",
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 128, "cpu": "100%", "wall_time": "2min", "output": 65536,
                 "output_action": "cut", "disk": "16M" },
  "request": { "memory": { "min": "16M" }, "tasks": { "min": 4 }, "wall_time": { "min": "1s" },
               "cpu": { "min": "10%" } }
}
EOF
  t_on_exit "rm -f '$RUNPROF/$PROF.json'; rmdir '$RUNPROF' /run/sbx 2>/dev/null; systemctl daemon-reload"
  # the generator writes the profile's slice and drop-in (sbxctl profile reload is the same over D-Bus,
  # whose 25 s timeout a daemon-reload can outlast under emulation)
  assert_rc 0 systemctl daemon-reload
  # the probe, on the host (outside sbx.slice): /bin/true then sleep 0.1, over and over; each answer is
  # the time from one /bin/true to the next less the 100 ms of sleep (two forks and execs: a host that
  # stalls at any moment shows)
  probe() {
    local s p=""
    while :; do
      s=${EPOCHREALTIME/./}
      [ -n "$p" ] && echo $(((s - p) / 1000 - 100))
      p=$s; /bin/true; sleep 0.1
    done
  }
  # pstats FILE: "median max count" of the probe's answers in ms
  pstats() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR == 0) print "0 0 0"; else print a[int((NR + 1) / 2)], a[NR], NR}'; }
  probe > "$W/probe.idle" & ppid=$!
  sleep 5; kill "$ppid"; wait "$ppid" 2>/dev/null
  read -r idle_med idle_max idle_n < <(pstats "$W/probe.idle")
  before=$(records)
  probe > "$W/probe.load" & ppid=$!
  t0=$(ms)
  P=(-p "$PROF")
  sbxctl run "${P[@]}" --tasks 32 --timeout 60s -- bash -c "$SBX_FORK_BOMB" > "$W/a.bomb" 2>&1 & a1=$!
  sbxctl run "${P[@]}" --memory 64M -- $PY -c 'x = bytearray(300 << 20); print("ALLOCATED")' > "$W/a.hog" 2>&1 & a2=$!
  sbxctl run "${P[@]}" -- sh -c 'yes | head -c 2000000' > "$W/a.yes.out" 2> "$W/a.yes" & a3=$!
  sbxctl run "${P[@]}" -- dd if=/dev/zero of=/tmp/fill bs=1M count=64 > "$W/a.dd" 2>&1 & a4=$!
  sbxctl run "${P[@]}" --timeout 3s -- sleep infinity > "$W/a.sleep" 2>&1 & a5=$!
  sbxctl run "${P[@]}" --cpu 20% -- $PY -c '
import time
end = time.time() + 4
while time.time() < end: pass' > "$W/a.spin" 2>&1 & a6=$!
  rcs=()
  for p in $a1 $a2 $a3 $a4 $a5 $a6; do wait "$p"; rcs+=($?); done
  el=$(($(ms) - t0))
  sleep 1; kill "$ppid"; wait "$ppid" 2>/dev/null
  read -r load_med load_max load_n < <(pstats "$W/probe.load")
  t_log "probe: idle median ${idle_med} ms, max ${idle_max} ms ($idle_n answers);" \
    "with the six adversaries (${el} ms) median ${load_med} ms, max ${load_max} ms ($load_n answers)"
  bound=$((idle_med * PROBE_RATIO)); [ "$bound" -ge "$PROBE_FLOOR_MS" ] || bound=$PROBE_FLOOR_MS
  [ "$load_med" -le "$bound" ] || _t_err "probe median ${load_med} ms under the adversaries, above ${bound} ms"
  maxb=$((idle_max * PROBE_RATIO)); [ "$maxb" -ge "$PROBE_MAX_MS" ] || maxb=$PROBE_MAX_MS
  [ "$load_max" -le "$maxb" ] || _t_err "probe's slowest answer ${load_max} ms, above ${maxb} ms"
  [ "$load_n" -ge 10 ] || _t_err "only $load_n probe answers in ${el} ms"
  assert_eq "2 137 0 1 124 0" "${rcs[*]}" "exit statuses (bomb, hog, yes, dd, sleep, spinner)"
  # each run's record, found by its limits
  mapfile -t new < <(comm -13 <(echo "$before") <(records))
  assert_eq 6 "${#new[@]}" "new records"
  (cd "$SBX_RUNS_DIR" && jq -c '{stop_reason, code: .exit.code, tasks: .limits.tasks, mem: .limits.memory_bytes,
    wall: .limits.wall_time_usec, cpu: .limits.cpu_percent, out: .resources.output_bytes, cut: .output_truncated,
    disk: .disk, ev: .limit_events}' "${new[@]}") | sed 's/^/  # /'
  records_complete "${new[@]}"
  rec() { (cd "$SBX_RUNS_DIR" && jq -c "select($1)" "${new[@]}"); }
  r=$(rec '.limits.tasks == 32')
  assert_eq "exit-code true 32" "$(jq -r '"\(.stop_reason) \(.limit_events.fork_refused > 0) \(.resources.tasks_peak)"' <<< "$r")" "fork bomb: stop_reason, fork_refused > 0, tasks_peak"
  assert_contains "$(cat "$W/a.bomb")" "sbx: fork refused " "fork bomb's output"
  assert_contains "$(cat "$W/a.bomb")" "task limit 32 reached" "fork bomb's output"
  r=$(rec ".limits.memory_bytes == $((64 << 20))")
  assert_eq "oom-kill" "$(jq -r .stop_reason <<< "$r")" "memory hog: stop_reason"
  assert_contains "$(cat "$W/a.hog")" "sbx: stopped: memory limit 64M reached" "memory hog's output"
  assert_not_contains "$(cat "$W/a.hog")" "ALLOCATED" "memory hog's output"
  r=$(rec '.output_truncated == true')
  assert_eq "success 2000000 65536" "$(jq -r '"\(.stop_reason) \(.resources.output_bytes) \(.limits.output_bytes)"' <<< "$r")" "yes: stop_reason, output_bytes, output limit"
  assert_eq 65536 "$(stat -c %s "$W/a.yes.out")" "bytes of yes the caller got"
  assert_contains "$(cat "$W/a.yes")" "sbx: output cut at the limit " "yes's stderr"
  r=$(rec '.exit.code == 1')
  assert_eq "exit-code 16777216" "$(jq -r '"\(.stop_reason) \(.disk.max_bytes)"' <<< "$r")" "dd: stop_reason, disk cap"
  assert_contains "$(cat "$W/a.dd")" "No space left on device" "dd's output"
  # full, as the figures reader found the space; unknown (null) when it could not read it, never guessed
  if [ "$(jq -r .disk.used_bytes <<< "$r")" = null ]; then
    t_log "dd: the figures reader could not read the run's space (disk.used_bytes null, full unknown)"
  else
    assert_eq true "$(jq -r .disk.full <<< "$r")" "dd: disk.full"
  fi
  r=$(rec '.limits.wall_time_usec == 3000000')
  assert_eq timeout "$(jq -r .stop_reason <<< "$r")" "sleep infinity: stop_reason"
  assert_contains "$(cat "$W/a.sleep")" "sbx: stopped: wall-time limit 3s reached" "sleep infinity's output"
  r=$(rec '.limits.cpu_percent == 20')
  assert_eq "success true" "$(jq -r '"\(.stop_reason) \(.limit_events.cpu_throttled > 0)"' <<< "$r")" "spinner: stop_reason, cpu_throttled > 0"
  assert_contains "$(cat "$W/a.spin")" "sbx: cpu limit 20% reached: throttled " "spinner's output"
  assert_clean "after the adversaries"
fi

t_summary
