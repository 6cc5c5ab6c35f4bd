#!/usr/bin/env bash
# Faults (docs/scale.md, "Faults"): sbxctl killed outright; sbxd killed outright at named points of a run's
# start and end; /var/lib/sbx full and read-only; journald stopped; the D-Bus daemon restarted (six
# adversaries at once, which need the ceilings: test-97). After each: every run bounded, every record
# complete (valid JSON, finished, a stop reason, cleanup completed), nothing left behind.
#   SBX_FAULT_POINTS          the sbxd kill points to go through: "all" (11), or names of them (default:
#                             rename1 after-start running renamed2; see the list below)
#   SBX_FAULT_ROUNDS          passes over them (default 1)
#   SBX_FAULT_CLIENT_STOP_MS  how soon a run's processes must be gone once its sbxctl is killed (2000)
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
ROUNDS=${SBX_FAULT_ROUNDS:-1}
POINTS=${SBX_FAULT_POINTS:-rename1 after-start running renamed2}
STOP_MS=${SBX_FAULT_CLIENT_STOP_MS:-2000}
OFFLINE_CG=/sys/fs/cgroup/sbx.slice/sbx-offline.slice

sbxd_pid() { systemctl show -P MainPID sbxd.service; }
# sbxd_wait_back OLDPID: sbxd runs again, with another main process (max ~30 s)
sbxd_wait_back() {
  local i p
  for i in $(seq 150); do
    p=$(sbxd_pid)
    [ -n "$p" ] && [ "$p" != 0 ] && [ "$p" != "$1" ] && systemctl is-active -q sbxd.service && return 0
    sleep 0.2
  done
  return 1
}
# wait_pid PID SECONDS: until the process is gone (1 if it is still there)
wait_pid() {
  local i
  for i in $(seq $(($2 * 10))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}
# wait_complete FILE SECONDS
wait_complete() {
  local i
  for i in $(seq $(($2 * 5))); do record_complete "$1" > /dev/null && return 0; sleep 0.2; done
  record_complete "$1"
}
# workspace_back DIR: everything in it is the caller's (root) again and its mode is 0755 as it was
workspace_back() {
  local left
  left=$(find "$1" ! -uid 0 -o ! -gid 0 | head -3)
  [ -z "$left" ] || _t_err "workspace $1 still has entries of the run's user: $left"
  assert_eq 755 "$(stat -c %a "$1")" "mode of the workspace $1"
}
# kill_gone PID PIDS: kill -9 PID, then print how many ms it took until all of PIDS were gone (nothing if
# they were still there after 30 s)
kill_gone() {
  local t0 p alive
  t0=$(ms)
  kill -KILL "$1"
  while [ $(($(ms) - t0)) -lt 30000 ]; do
    alive=0
    for p in $2; do [ -d "/proc/$p" ] && alive=1; done
    [ "$alive" = 0 ] && { echo $(($(ms) - t0)); return 0; }
    sleep 0.02
  done
}
stray_temp_records() { find "$SBX_RUNS_DIR" -maxdepth 1 -name '.#*' | head -3; }
systemctl reset-failed sbxd.service 2>/dev/null
systemctl start sbxd.service

# ---------------------------------------------------------------------------------------------------
t_begin "kill -9 of sbxctl run: the run's processes are gone within ${STOP_MS} ms, its record says cancelled"
# a first run warms sbxd up
assert_rc 0 sbxctl run -- true
sbx_run_bg "$W/o" -- sleep 3001
cpid=$CPID id=$RUN
pids=$(cat "$OFFLINE_CG/sbx-offline-$id.service/cgroup.procs" 2>/dev/null | tr '\n' ' ')
[ -n "$pids" ] || _t_err "no processes in the run's cgroup"
gone=$(kill_gone "$cpid" "$pids")
{ wait "$cpid"; } 2>/dev/null
t_log "the run's processes ($pids) were gone ${gone:-never (30 s)} ms after kill -9 of its client"
[ -n "$gone" ] && [ "$gone" -le "$STOP_MS" ] || _t_err "the run's processes were gone after ${gone:-more than 30000} ms (bound ${STOP_MS})"
wait_complete "$SBX_RUNS_DIR/$id.json" 30 > /dev/null || records_complete "$id.json"
assert_eq cancelled "$(record_get "$id" .stop_reason)" "stop_reason"
assert_clean

t_begin "kill -9 of sbxctl: a detached sandbox and its other commands stay; a non-detached one ends within ${STOP_MS} ms"
assert_rc 0 sbxctl create --detach
sb=$T_OUT
assert_match "$sb" '^[0-9a-f]{32}$' "sandbox id"
unit=$(record_get "$sb" .unit)
sbxctl exec "$sb" -- sleep 3002 > "$W/x1" 2>&1 & xpid=$!
sbxctl exec "$sb" -- sh -c 'sleep 6; echo second-exec-done' > "$W/x2" 2>&1 & x2pid=$!
for i in $(seq 150); do pgrep -f 'sleep 3002' > /dev/null && break; sleep 0.1; done
kill -KILL "$xpid"; { wait "$xpid"; } 2>/dev/null
sleep "$((STOP_MS / 1000 + 1))"
assert_eq active "$(systemctl is-active "$unit")" "the detached sandbox's unit after kill -9 of an exec's client"
pgrep -f 'sleep 3002' > /dev/null && _t_err "the command of the killed exec client still runs (it gets SIGHUP)"
wait "$x2pid"; rc=$?
assert_eq 0 "$rc" "the other exec's status"
assert_contains "$(cat "$W/x2")" "second-exec-done" "the other exec's output"
assert_rc 0 sbxctl exec "$sb" -- echo still-alive
assert_contains "$T_OUT" still-alive
assert_rc 0 sbxctl rm "$sb"
wait_complete "$SBX_RUNS_DIR/$sb.json" 30 > /dev/null || records_complete "$sb.json"
assert_eq cancelled "$(record_get "$sb" .stop_reason)" "the detached sandbox's stop_reason"
# not detached: the creator holds it
sbxctl create > "$W/create.out" 2>&1 & cpid=$!
for i in $(seq 300); do [ -s "$W/create.out" ] && break; sleep 0.1; done
sb2=$(head -n 1 "$W/create.out")
assert_match "$sb2" '^[0-9a-f]{32}$' "the id printed by create"
unit2=$(record_get "$sb2" .unit)
cg2=$(systemctl show -P ControlGroup "$unit2")
pids=$(cat "/sys/fs/cgroup$cg2/cgroup.procs" 2>/dev/null | tr '\n' ' ')
gone=$(kill_gone "$cpid" "$pids")
{ wait "$cpid"; } 2>/dev/null
t_log "the non-detached sandbox's processes were gone ${gone:-never (30 s)} ms after kill -9 of its creator"
[ -n "$pids" ] && [ -n "$gone" ] && [ "$gone" -le "$STOP_MS" ] ||
  _t_err "the sandbox's processes ($pids) gone after ${gone:-more than 30000} ms (bound ${STOP_MS})"
wait_complete "$SBX_RUNS_DIR/$sb2.json" 30 > /dev/null || records_complete "$sb2.json"
assert_clean

# ---------------------------------------------------------------------------------------------------
# kill -9 of sbxd at named points. strace attached to sbxd delivers SIGKILL on entry to the Nth call of a
# system call (-e inject=SYSCALL:signal=KILL:when=N), so sbxd dies before that call: a point of its code,
# with no hook in sbxd. sbxd writes a record as openat(.#RUN.json.RANDOM), write, fchmod, fsync,
# renameat(over RUN.json), fsync(the directory) (write_file_atomic_at()). Points of the start are counted
# from a run's request; those of the end from the moment the run's unit is active. Two points are events
# seen from outside instead: the unit's cgroup appearing, and going.
t_begin "kill -9 of sbxd at the points of a run's start and end: checks ready"
if t_require_cmd strace; then
  SKIP_KILLS=""
else
  SKIP_KILLS="strace is not installed"
fi

# sendmsg_index: which sendmsg() of sbxd, counted from a run's request, carries StartTransientUnit
# (measured on a run of its own, as the number depends on the calls sbxd makes before it)
sendmsg_index() {
  local p sp n
  p=$(sbxd_pid)
  strace -qq -p "$p" -e trace=sendmsg -s 400 -o "$W/cal.txt" 2> /dev/null & sp=$!
  for i in $(seq 100); do [ "$(awk '/^TracerPid:/ {print $2}' "/proc/$p/status")" = "$sp" ] && break; sleep 0.05; done
  mkdir -p "$W/wscal"; chmod 0755 "$W/wscal"
  sbxctl run -w "$W/wscal" -- true > /dev/null 2>&1
  sleep 0.5
  kill "$sp"; wait "$sp" 2> /dev/null
  n=$(grep '^sendmsg(\|^[0-9]* *sendmsg(' "$W/cal.txt" | grep -n StartTransientUnit | head -n 1 | cut -d: -f1)
  echo "${n:-0}"
}

# kill_point KEY NAME start|end EXPECT HOW: one run (in a workspace of its own) and a kill -9 of sbxd at
# a point. EXPECT: "none" (no record: killed before its first record was in place) or the record's stop
# reason and exit code ("exit-code 7": the command's, also when its unit ended while no sbxd ran: from
# PID 1's journal; "lost": its unit never started), alternatives separated by "|". HOW: "strace ARGS..." (injection), "cgroup-appears", "cgroup-gone", "running"
KP=0 KP_HIT=0
kill_point() {
  local key=$1 name=$2 phase=$3 expect=$4 how=$5 ws oldpid before cpid sp="" id="" f rc i cg new out t0 nrec=1
  shift 5
  [ "$POINTS" = all ] || [[ " $POINTS " == *" $key "* ]] || return 0
  [ "$expect" = none ] && nrec=0
  KP=$((KP + 1)) t0=$(ms)
  t_begin "kill -9 of sbxd ($phase: $name): run bounded, record complete, nothing left"
  [ -z "$SKIP_KILLS" ] || { t_skip "$SKIP_KILLS"; return; }
  ws=$W/ws$KP; mkdir -p "$ws"; chmod 0755 "$ws"
  systemctl reset-failed sbxd.service 2>/dev/null
  # which sendmsg() is StartTransientUnit, measured on this sbxd (a new one makes more calls at first)
  if [ "$how" = strace ] && [ "$*" != "${*/when=START/}" ]; then
    local a args=() n
    n=$(sendmsg_index)
    [ "$n" -ge 2 ] || _t_err "StartTransientUnit not found among sbxd's sendmsg() calls"
    t_log "StartTransientUnit is sendmsg #$n of a run"
    for a in "$@"; do a=${a/START+1/$((n + 1))}; args+=("${a/START/$n}"); done
    set -- "${args[@]}"
  fi
  oldpid=$(sbxd_pid)
  before=$(records)
  arm() {
    strace -f -qq -p "$oldpid" -o /dev/null "$@" 2> "$W/strace.err" & sp=$!
    for i in $(seq 100); do
      [ "$(awk '/^TracerPid:/ {print $2}' "/proc/$oldpid/status" 2>/dev/null)" = "$sp" ] && return 0
      sleep 0.05
    done
    _t_err "strace did not attach to sbxd: $(cat "$W/strace.err")"
  }
  cgroups() { find "$OFFLINE_CG" -maxdepth 1 -name 'sbx-offline-*.service' 2>/dev/null | sort; }
  # sbxd quiet (the previous run's end handled) before the calls are counted
  sleep 1
  [ "$phase" = start ] && [ "$how" = strace ] && arm "$@"
  local cg0; cg0=$(cgroups)
  # long enough for strace to attach while it runs, and for the next sbxd to adopt a run killed at its
  # start (a run that ends while no sbxd runs is lost: systemd collects its unit)
  sbxctl run -w "$ws" -- sh -c "echo started > started; sleep 8; echo done > done; exit 7" > "$W/kp.out" 2>&1 & cpid=$!
  case $phase:$how in
    start:cgroup-appears)
      for i in $(seq 3000); do
        new=$(comm -13 <(echo "$cg0") <(cgroups))
        [ -n "$new" ] && { kill -KILL "$oldpid"; break; }
        sleep 0.01
      done ;;
    end:*)
      for i in $(seq 300); do
        id=$(comm -13 <(echo "$before") <(records) | head -n 1); id=${id%.json}
        [ -n "$id" ] && [ -d "$OFFLINE_CG/sbx-offline-$id.service" ] && [ -e "$ws/started" ] && break
        sleep 0.1
      done
      [ -n "$id" ] || _t_err "the run did not start"
      cg=$OFFLINE_CG/sbx-offline-$id.service
      case $how in
        strace) arm "$@" ;;
        running) kill -KILL "$oldpid" ;;
        cgroup-gone)
          for i in $(seq 3000); do [ -d "$cg" ] || { kill -KILL "$oldpid"; break; }; sleep 0.01; done ;;
      esac ;;
  esac
  # sbxd is killed at the point, and systemd starts it again
  if sbxd_wait_back "$oldpid"; then
    KP_HIT=$((KP_HIT + 1))
  else
    _t_err "sbxd was not killed at this point, or not started again (main pid $(sbxd_pid), $(systemctl is-active sbxd.service))"
    kill -KILL "$oldpid" 2>/dev/null; sbxd_wait_back "$oldpid"
  fi
  [ -n "$sp" ] && { kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; }
  # the client ends: with the command's status once it re-attached, or one line when it could not
  wait_pid "$cpid" 60 || { _t_err "sbxctl still waits 60 s after the kill"; kill -KILL "$cpid"; }
  wait "$cpid"; rc=$?
  out=$(cat "$W/kp.out")
  mapfile -t new < <(comm -13 <(echo "$before") <(records))
  [ "${#new[@]}" -le 1 ] || _t_err "${#new[@]} new records for one run"
  for f in "${new[@]}"; do
    # an adopted run nobody attached to ends by itself (6 s); a sandbox's helper would end with sbxd
    wait_complete "$SBX_RUNS_DIR/$f" 40 > /dev/null || records_complete "$f"
    id=${f%.json}
  done
  local reason=none
  [ "${#new[@]}" = 1 ] && reason=$(jq -r 'if .exit.code != null then "\(.stop_reason) \(.exit.code)" else .stop_reason end' "$SBX_RUNS_DIR/${new[0]}")
  t_log "client exit $rc, record: $reason"
  [[ "|$expect|" == *"|$reason|"* ]] || _t_err "the run's record (stop reason, exit code): expected '$expect', got '$reason'"
  case $rc in
    7) assert_eq "exit-code 7" "$reason" "the record of a run whose client got its status 7" ;;
    123) assert_eq 1 "$(printf '%s\n' "$out" | grep -c .)" "lines of the client's error ($out)"
         assert_contains "$out" "sbxctl: " "the client's error" ;;
    *) _t_err "client exit status $rc (expected 7 or 123): $out" ;;
  esac
  assert_eq "$nrec" "${#new[@]}" "records of the run"
  if [ "$phase" = end ] && [ "$how" = running ]; then assert_eq 7 "$rc" "the client's status after re-attaching"; fi
  [ -z "$(stray_temp_records)" ] || _t_err "temporary records left: $(stray_temp_records)"
  assert_clean "after the kill"
  workspace_back "$ws"
  # the workspace of a run adopted by the new sbxd is free again
  [ "$how" = running ] && assert_rc 0 sbxctl run -w "$ws" -- true
  t_log "$(($(ms) - t0)) ms"
}

for round in $(seq "$ROUNDS"); do
  t_log "round $round of $ROUNDS"
  kill_point id "the run id drawn, nothing written" start none strace -e trace=getrandom -e inject=getrandom:signal=KILL:when=1
  kill_point write1 "while writing the first record" start none strace -e trace=fchmod -e inject=fchmod:signal=KILL:when=1
  kill_point rename1 "the first record written, not yet renamed" start none strace -e trace=renameat -e inject=renameat:signal=KILL:when=1
  kill_point before-start "the record on disk, StartTransientUnit not sent" start lost strace -e trace=sendmsg -e inject=sendmsg:signal=KILL:when=START
  # systemd drops a call whose sender left before it was handled (it cannot check the sender), or starts
  # the unit, which the next sbxd adopts
  kill_point after-start "StartTransientUnit sent, its reply not read" start "lost|exit-code 7" strace -e trace=sendmsg -e inject=sendmsg:signal=KILL:when=START+1
  kill_point cgroup-up "the unit's cgroup appeared" start "exit-code 7" cgroup-appears
  kill_point running "the command running" end "exit-code 7" running
  # the unit ended while no sbxd ran: its outcome from PID 1's journal
  kill_point cgroup-gone "the unit's cgroup gone" end "exit-code 7" cgroup-gone
  kill_point figures "the figures read, not yet removed" end "exit-code 7" strace -e trace=unlinkat -e inject=unlinkat:signal=KILL:when=1
  kill_point write2 "while writing the finished record" end "exit-code 7" strace -e trace=fchmod -e inject=fchmod:signal=KILL:when=1
  kill_point renamed2 "the finished record renamed, Finished not sent" end "exit-code 7" strace -e trace=fsync -e inject=fsync:signal=KILL:when=2
done

t_begin "after the kills: every record valid JSON, none half-written, the reaper finds nothing incomplete"
bad=0
# one jq over all of them; file by file only to count and name the invalid ones
if ! jq -e . "$SBX_RUNS_DIR"/*.json > /dev/null 2>&1; then
  for f in "$SBX_RUNS_DIR"/*.json; do jq -e . "$f" > /dev/null 2>&1 || { bad=$((bad + 1)); echo "invalid: $f" >&2; }; done
fi
assert_eq 0 "$bad" "records that are not valid JSON"
[ -z "$(stray_temp_records)" ] || _t_err "temporary records left: $(stray_temp_records)"
assert_rc 0 sbxctl gc --json
assert_eq "[] []" "$(printf '%s' "$T_OUT" | jq -c '.incomplete, .stopped' | tr '\n' ' ' | sed 's/ $//')" "gc: incomplete, stopped"
t_log "$KP_HIT of $KP kill points reached"
assert_clean

# ---------------------------------------------------------------------------------------------------
# /var/lib/sbx on a file system of its own for the next two cases: a 4 MiB tmpfs, with the tenant key
# (the records written meanwhile are copied to the real directory afterwards)
STATE_MOUNTED=0
state_mount() {
  systemctl stop sbxd.service
  cp -a "$SBX_STATEDIR/tenant.key" "$W/tenant.key"
  mount -t tmpfs -o size=4m,mode=0750 sbxtest-state "$SBX_STATEDIR" || return 1
  STATE_MOUNTED=1
  cp -a "$W/tenant.key" "$SBX_STATEDIR/"
  mkdir -m 0750 "$SBX_RUNS_DIR"; mkdir -m 0700 "$SBX_STATEDIR/figures"
  systemctl start sbxd.service
}
state_unmount() {
  [ "$STATE_MOUNTED" = 1 ] || return 0
  systemctl stop sbxd.service
  mount -o remount,rw "$SBX_STATEDIR" 2>/dev/null
  mkdir -p "$W/recs"; cp -a "$SBX_RUNS_DIR"/*.json "$W/recs/" 2>/dev/null
  umount "$SBX_STATEDIR" && STATE_MOUNTED=0
  cp -a "$W/recs"/*.json "$SBX_RUNS_DIR/" 2>/dev/null
  systemctl start sbxd.service
}
t_on_exit state_unmount

t_begin "/var/lib/sbx full: new runs refused (123, one line naming it); a running run finishes; its record is written once there is room"
if state_mount; then
  sbx_run_bg "$W/o" -- sh -c 'sleep 8; echo done-A; exit 3'
  cpid=$CPID id=$RUN
  dd if=/dev/zero of="$SBX_STATEDIR/filler" bs=64k > /dev/null 2>&1
  n0=$(record_count)
  assert_rc 123 sbxctl run -- true
  assert_eq "sbxctl: Cannot write the run record in /var/lib/sbx/runs: No space left on device" "$T_OUT" "the refusal"
  assert_eq "$n0" "$(record_count)" "records after the refused run"
  wait "$cpid"; rc=$?
  assert_eq 3 "$rc" "the running run's status"
  assert_contains "$(cat "$W/o")" "done-A" "its output"
  # answered at Exited: sbxd has the record as it was then (the file cannot be written), final soon after
  st=$(sbxctl show --json "$id" | jq -r '"\(.state) \(.stop_reason)"')
  case $st in "exited exit-code"|"finished exit-code") ;; *) _t_err "its record at the answer, as sbxd has it: $st" ;; esac
  for i in $(seq 50); do [ "$st" = "finished exit-code" ] && break; sleep 0.2; st=$(sbxctl show --json "$id" | jq -r '"\(.state) \(.stop_reason)"'); done
  assert_eq "finished exit-code" "$st" "its record, as sbxd answers (kept in memory)"
  assert_eq running "$(jq -r .state "$SBX_RUNS_DIR/$id.json")" "its record on the full disk"
  rm -f "$SBX_STATEDIR/filler"
  for i in $(seq 50); do record_complete "$SBX_RUNS_DIR/$id.json" > /dev/null && break; sleep 0.2; done
  record_complete "$SBX_RUNS_DIR/$id.json" > "$W/rc.txt" || _t_err "the record on disk once there is room: $(cat "$W/rc.txt")"
  assert_eq "exit-code 3" "$(jq -r '"\(.stop_reason) \(.exit.code)"' "$SBX_RUNS_DIR/$id.json")" "its record on disk"
  assert_rc 0 sbxctl run -- true
  assert_clean
else
  t_skip "cannot mount a tmpfs on $SBX_STATEDIR"
fi

t_begin "/var/lib/sbx read-only: new runs refused (123, naming it), also by an sbxd started then; a running run finishes; its record is written once writable"
if [ "$STATE_MOUNTED" = 1 ]; then
  sbx_run_bg "$W/o" -- sh -c 'sleep 8; echo done-B; exit 4'
  cpid=$CPID id=$RUN
  mount -o remount,ro "$SBX_STATEDIR"
  assert_rc 123 sbxctl run -- true
  assert_eq "sbxctl: Cannot write the run record in /var/lib/sbx/runs: Read-only file system" "$T_OUT" "the refusal"
  wait "$cpid"; rc=$?
  assert_eq 4 "$rc" "the running run's status"
  assert_contains "$(cat "$W/o")" "done-B" "its output"
  assert_eq running "$(jq -r .state "$SBX_RUNS_DIR/$id.json")" "its record on the read-only disk"
  mount -o remount,rw "$SBX_STATEDIR"
  for i in $(seq 50); do record_complete "$SBX_RUNS_DIR/$id.json" > /dev/null && break; sleep 0.2; done
  record_complete "$SBX_RUNS_DIR/$id.json" > "$W/rc.txt" || _t_err "the record on disk once writable: $(cat "$W/rc.txt")"
  assert_eq "exit-code 4" "$(jq -r '"\(.stop_reason) \(.exit.code)"' "$SBX_RUNS_DIR/$id.json")" "its record on disk"
  # an sbxd started on it (a reboot with the disk read-only): it adopts a running run and refuses new
  # ones the same way
  sbx_run_bg "$W/o" -- sh -c 'sleep 8; exit 5'
  cpid=$CPID id=$RUN
  mount -o remount,ro "$SBX_STATEDIR"
  systemctl restart sbxd.service
  assert_eq active "$(systemctl is-active sbxd.service)" "sbxd started on a read-only /var/lib/sbx"
  assert_rc 123 sbxctl run -- true
  assert_eq "sbxctl: Cannot write the run record in /var/lib/sbx/runs: Read-only file system" "$T_OUT" "the refusal by the new sbxd"
  wait "$cpid"; rc=$?
  assert_eq 5 "$rc" "the adopted run's status (its client re-attached)"
  # its mount namespace keeps /var/lib/sbx as it was when it started (read-only): writable again for
  # a restarted sbxd only, which completes the record it could not write from PID 1's journal (the
  # unit is gone: docs/scale.md)
  mount -o remount,rw "$SBX_STATEDIR"
  systemctl restart sbxd.service
  wait_complete "$SBX_RUNS_DIR/$id.json" 30 > /dev/null || records_complete "$id.json"
  assert_eq "exit-code 5" "$(jq -r '"\(.stop_reason) \(.exit.code)"' "$SBX_RUNS_DIR/$id.json")" \
    "the record sbxd could not write, completed by the next one"
  assert_rc 0 sbxctl run -- true
  assert_clean
  state_unmount
  assert_eq 0 "$STATE_MOUNTED" "the test's /var/lib/sbx unmounted"
else
  t_skip "no file system of its own for $SBX_STATEDIR (see the case above)"
fi

# ---------------------------------------------------------------------------------------------------
JOURNAL_UNITS=()
journal_back() {
  [ "${#JOURNAL_UNITS[@]}" -gt 0 ] || return 0
  systemctl start "${JOURNAL_UNITS[@]}"
  JOURNAL_UNITS=()
}
t_on_exit journal_back
t_begin "journald stopped: runs start and end with complete records, sbxd restarts without it"
for u in systemd-journald.socket systemd-journald-dev-log.socket systemd-journald-audit.socket systemd-journald.service; do
  systemctl is-active -q "$u" && JOURNAL_UNITS+=("$u")
done
systemctl stop "${JOURNAL_UNITS[@]}" 2> "$W/jstop"
if systemctl is-active -q systemd-journald.service; then
  t_skip "journald could not be stopped here: $(head -c 200 "$W/jstop")"
else
  before=$(records)
  sbxctl run -- sh -c 'echo one' > "$W/j1" 2>&1 & j1=$!
  sbxctl run -- sh -c 'sleep 2; exit 6' > "$W/j2" 2>&1 & j2=$!
  wait "$j1"; rc1=$?; wait "$j2"; rc2=$?
  assert_eq "0 6" "$rc1 $rc2" "statuses of two runs without journald"
  assert_eq one "$(cat "$W/j1")" "output"
  systemctl restart sbxd.service
  assert_eq active "$(systemctl is-active sbxd.service)" "sbxd restarted without journald"
  assert_rc 5 sbxctl run -- sh -c 'exit 5'
  mapfile -t new < <(comm -13 <(echo "$before") <(records))
  assert_eq 3 "${#new[@]}" "new records"
  records_complete "${new[@]}"
  assert_clean
fi
journal_back
assert_eq active "$(systemctl is-active systemd-journald.service)" "journald after it was started again"

# ---------------------------------------------------------------------------------------------------
t_begin "a figures reader killed before its rename: its temporary file goes with the run, and at sbxd's start"
# what write_file_atomic_at() leaves when the unit's stop timeout kills the reader (seen with 64 runs at once)
FIG=$SBX_STATEDIR/figures
sbx_run_bg "$W/fig.out" -- sleep 3002
if [ -n "${RUN:-}" ]; then
  unit=$(record_get "$RUN" .unit)
  : > "$FIG/.#$unit.0123456789abcdef"
  assert_rc 0 sbxctl stop "$RUN"
  wait "$CPID" 2>/dev/null
  wait_complete "$SBX_RUNS_DIR/$RUN.json" 30 > /dev/null || records_complete "$RUN.json"
  [ -e "$FIG/.#$unit.0123456789abcdef" ] &&
    { _t_err "the run's temporary figures file is still there after its end"; rm -f "$FIG/.#$unit.0123456789abcdef"; }
fi
# one of a unit that ended while no sbxd ran: removed when sbxd starts
stale=$FIG/.#sbx-offline-00000000000000000000000000000001.service.fedcba9876543210
: > "$stale"
systemctl restart sbxd.service
for _ in $(seq 50); do [ -e "$stale" ] || break; sleep 0.2; done
[ -e "$stale" ] && { _t_err "a stale temporary figures file survived sbxd's start"; rm -f "$stale"; }
assert_clean

t_begin "the D-Bus daemon restarted during a run: sbxd comes back and adopts it; its record is complete; new runs work"
# Over the system bus (SBX_DIRECT_SOCKET=0) the client's connection ends with the bus: it says so (123)
# and the run goes on. Over sbxd's own socket, the client sees sbxd go (it exits with its bus), follows
# the run over the new bus and exits with the command's status. The run ends (5) only once the test
# creates "go" in its workspace, after sbxd is back on the new bus (a run that ends while no sbxd runs
# is lost); 120 s at most.
for direct in 0 1; do
  mkdir -p "$W/dbusws$direct"; chmod 0755 "$W/dbusws$direct"
  SBX_DIRECT_SOCKET=$direct sbx_run_bg "$W/o" -w "$W/dbusws$direct" -- \
    sh -c 'i=0; until [ -e go ] || [ $i -ge 600 ]; do sleep 0.2; i=$((i + 1)); done; exit 5'
  cpid=$CPID id=$RUN
  oldpid=$(sbxd_pid)
  systemctl restart dbus.service
  if [ "$direct" = 0 ]; then
    wait_pid "$cpid" 30 || _t_err "sbxctl did not notice the bus going"
    wait "$cpid"; rc=$?
    assert_eq 123 "$rc" "the client's status (system bus)"
    # "the connection to the system bus ended during run ..." or, when the bus said first that sbxd's
    # name went, "sbxd went away during run ...": one line either way
    assert_eq 1 "$(grep -c . "$W/o")" "lines of the client's message ($(cat "$W/o"))"
    assert_contains "$(cat "$W/o")" "sbxctl: " "the client's message"
    assert_contains "$(cat "$W/o")" "during run $id" "the client's message"
  fi
  sbxd_wait_back "$oldpid" || _t_err "sbxd did not come back (main pid $(sbxd_pid), $(systemctl is-active sbxd.service))"
  sleep 1; touch "$W/dbusws$direct/go"
  if [ "$direct" = 1 ]; then
    wait_pid "$cpid" 60 || _t_err "sbxctl did not end with the run"
    wait "$cpid"; rc=$?
    assert_eq 5 "$rc" "the client's status (sbxd's own socket: the command's, from the next sbxd)"
    assert_not_contains "$(cat "$W/o")" "sbxctl: " "the client's output"
  fi
  wait_complete "$SBX_RUNS_DIR/$id.json" 60 > /dev/null || records_complete "$id.json"
  assert_eq "exit-code 5" "$(jq -r '"\(.stop_reason) \(.exit.code)"' "$SBX_RUNS_DIR/$id.json")" "the adopted run's record"
done
assert_rc 0 sbxctl run -- echo after-dbus
assert_contains "$T_OUT" after-dbus
assert_clean

t_summary
