#!/usr/bin/env bash
# Long-lived sandboxes: create, exec (from inside the unit, with the caller's stdio and exit status),
# persistence between execs, per-exec timeout and output ceiling, signals, concurrency, idle timeout,
# the creator's connection, removal with a complete record, and tenants. Attacks from inside: the
# helper's control channel and the other execs are out of reach.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
SBS=()
DIRECT=$(cd "$(dirname "$0")" && pwd)/direct-client.py
t_on_exit 'for s in "${SBS[@]}"; do sbxctl rm "$s" >/dev/null 2>&1; done'

sb_unit() { record_get "$1" .unit; }
# sb_wait_gone ID: until the sandbox's record is finished (max ~30 s)
sb_wait_gone() {
  local i
  for i in $(seq 300); do
    [ "$(record_get "$1" .state 2>/dev/null)" = finished ] && return 0
    sleep 0.1
  done
  return 1
}

t_begin "create --detach prints the id; exec runs commands in it with the caller's stdio and exit status"
assert_rc 0 sbxctl create --detach --name sbt-one
sb=$T_OUT; SBS+=("$sb")
assert_match "$sb" '^[0-9a-f]{32}$' "sandbox id"
assert_eq running "$(record_get "$sb" .state)" "state"
assert_eq sbt-one "$(record_get "$sb" .sandbox.name)" "name"
assert_eq active "$(systemctl is-active "$(sb_unit "$sb")")" "the sandbox's unit"
assert_rc 3 sbxctl exec sbt-one -- sh -c 'echo out; echo err >&2; exit 3'
assert_contains "$T_OUT" "out"
assert_contains "$T_OUT" "err"
out=$(echo "from stdin" | sbxctl exec "$sb" -- cat)
assert_eq "from stdin" "$out" "stdin reaches the command"
assert_rc 127 sbxctl exec "$sb" -- /nonexistent/cmd
assert_rc 0 sbxctl exec "$sb" -- true

t_begin "files in HOME and the workspace persist between execs; the same user, cgroup and namespaces every time"
assert_rc 0 sbxctl exec "$sb" -- sh -c 'echo kept > ~/h.txt; echo kept > w.txt; id -u; cat /proc/self/cgroup; readlink /proc/self/ns/mnt /proc/self/ns/net'
first=$T_OUT
assert_rc 0 sbxctl exec "$sb" -- sh -c 'cat ~/h.txt w.txt; id -u; cat /proc/self/cgroup; readlink /proc/self/ns/mnt /proc/self/ns/net'
assert_eq "kept
kept" "$(printf '%s\n' "$T_OUT" | head -n 2)" "files written by the previous exec"
assert_eq "$first" "$(printf '%s\n' "$T_OUT" | tail -n +3)" "uid, cgroup and namespaces of two execs"
assert_contains "$first" "$(sb_unit "$sb")" "the exec's cgroup is the sandbox unit's"
assert_ne 0 "$(printf '%s\n' "$first" | sed -n 1p)" "uid inside"
assert_ne "$(readlink /proc/self/ns/mnt)" "$(printf '%s\n' "$first" | sed -n 3p)" "mount namespace"

t_begin "per-exec timeout (124) and output ceiling (122: the command is ended past it); the sandbox outlives both"
assert_rc 124 sbxctl exec --timeout 1s "$sb" -- sleep 30
assert_contains "$T_OUT" "time limit"
sbxctl exec "$sb" --output-max 1K -- sh -c 'head -c 100000 /dev/zero | tr "\0" x' > "$W/cap.out" 2> "$W/cap.err"
assert_eq 122 "$?" "exit status past the output ceiling"
assert_eq 1024 "$(wc -c < "$W/cap.out")" "bytes passed on"
assert_contains "$(cat "$W/cap.err")" "was stopped at its output limit"
assert_eq active "$(systemctl is-active "$(sb_unit "$sb")")" "the sandbox after a timeout"

t_begin "Ctrl-C to sbxctl exec reaches the command (its process group), not the sandbox"
sbxctl exec "$sb" -- sh -c 'trap "echo got-int; exit 42" INT; echo ready; while :; do sleep 0.1; done' > "$W/int.out" 2>&1 &
cpid=$!
for i in $(seq 100); do grep -q ready "$W/int.out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$cpid"; wait "$cpid"; rc=$?
assert_eq 42 "$rc" "exit status after SIGINT"
assert_contains "$(cat "$W/int.out")" "got-int" "the command's INT handler"
assert_eq active "$(systemctl is-active "$(sb_unit "$sb")")" "the sandbox after Ctrl-C of one exec"

t_begin "exec on sbxd's own socket and over the system bus: the same stdio and exit status; the caller's end hangs the command up"
for direct in 1 0; do
  assert_rc 5 env SBX_DIRECT_SOCKET=$direct SBX_LOG_LEVEL=debug sbxctl exec "$sb" -- sh -c 'echo out-$0; exit 5' "$direct"
  assert_contains "$T_OUT" "out-$direct" "the command's stdout (SBX_DIRECT_SOCKET=$direct)"
  if [ "$direct" = 1 ]; then
    assert_contains "$T_OUT" "connected to sbxd at /run/sbx/bus" "the way exec went"
  else
    assert_not_contains "$T_OUT" "connected to sbxd at /run/sbx/bus" "the way exec went (SBX_DIRECT_SOCKET=0)"
  fi
  # the caller killed (no word to sbxd): its connection's end is the command's SIGHUP
  rm -f "$W/hup.out"
  SBX_DIRECT_SOCKET=$direct sbxctl exec "$sb" -- sh -c 'trap "echo got-hup > hup-$0.txt; exit 0" HUP; echo ready; while :; do sleep 0.1; done' "$direct" > "$W/hup.out" 2>&1 &
  cpid=$!
  for i in $(seq 100); do grep -q ready "$W/hup.out" 2>/dev/null && break; sleep 0.1; done
  kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
  got=
  for i in $(seq 100); do
    got=$(sbxctl exec "$sb" -- cat "hup-$direct.txt" 2>/dev/null) && break
    sleep 0.1
  done
  assert_eq got-hup "$got" "the command after its caller was killed (SBX_DIRECT_SOCKET=$direct)"
done
assert_eq 0 "$(record_get "$sb" '[.sandbox.execs[] | select(.result == "running")] | length')" "execs still running"
assert_eq active "$(systemctl is-active "$(sb_unit "$sb")")" "the sandbox after its callers went away"

t_begin "concurrent execs run side by side within the sandbox's ceilings"
# each says when it began and ended (inside): side by side when all four had begun before any ended
# (a wall-time bound would also fail on a loaded host)
for k in 1 2 3 4; do
  sbxctl exec "$sb" -- sh -c "date +%s%N; sleep 2; echo done-$k; date +%s%N" > "$W/c$k.out" 2>&1 &
  pids[$k]=$!
done
for k in 1 2 3 4; do wait "${pids[$k]}" || _t_err "exec $k failed: $(cat "$W/c$k.out")"; done
last_begin=0 first_end=
for k in 1 2 3 4; do
  assert_eq "done-$k" "$(sed -n 2p "$W/c$k.out")" "exec $k"
  b=$(sed -n 1p "$W/c$k.out") e=$(sed -n 3p "$W/c$k.out")
  assert_match "$b $e" '^[0-9]+ [0-9]+$' "exec $k's times"
  [[ "$b" =~ ^[0-9]+$ ]] && [ "$b" -gt "$last_begin" ] && last_begin=$b
  [[ "$e" =~ ^[0-9]+$ ]] && { [ -z "$first_end" ] || [ "$e" -lt "$first_end" ]; } && first_end=$e
done
[ -n "$first_end" ] && [ "$last_begin" -lt "$first_end" ] ||
  _t_err "the four execs were not running at once: the last began at $last_begin, the first ended at ${first_end:-?}"
# the sandbox's TasksMax bounds them all together
tmax=$(systemctl show -P TasksMax "$(sb_unit "$sb")")
assert_match "$tmax" '^[0-9]+$' "TasksMax of the sandbox"

t_begin "from inside: the helper's control channel, its fds and memory are out of reach"
hpid=$(systemctl show -P MainPID "$(sb_unit "$sb")")
assert_eq sbx-exec "$(cat /proc/$hpid/comm)" "the sandbox's main process"
# every process the command can see: none of the helper's (or its supervisors') fds or environment
# may be readable; the command's own fds hold no socket (the channel is not inherited)
assert_rc 0 sbxctl exec "$sb" -- sh -c 'for p in /proc/[0-9]*; do
    c=$(cat $p/comm 2>/dev/null)
    [ "$c" = sbx-exec ] || continue
    echo "SEEN $p"
    ls $p/fd >/dev/null 2>&1 && echo "FD-READ $p"
    cat $p/environ >/dev/null 2>&1 && echo "ENVIRON-READ $p"
  done
  ls -l /proc/self/fd/ | grep -c socket; true'
assert_not_contains "$T_OUT" "FD-READ" "the helper's fds"
assert_not_contains "$T_OUT" "ENVIRON-READ" "the helper's environment"
assert_eq 0 "$(printf '%s\n' "$T_OUT" | tail -n 1)" "sockets among the command's own fds"
# ptrace of the helper: not dumpable, so refused even for the same uid
if command -v python3 >/dev/null; then
  assert_rc 0 sbxctl exec "$sb" -- python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, $hpid, None, None)   # PTRACE_ATTACH
print('attach', r, ctypes.get_errno())"
  assert_not_contains "$T_OUT" "attach 0 " "PTRACE_ATTACH to the helper"
fi

t_begin "while idle, a spare supervisor waits for the next exec, out of the commands' sight; killed, another takes its place"
# sb_helpers SB: the pids of the sandbox's sbx-exec processes (its helper, and a spare or supervisors)
sb_helpers() {
  local cg p
  cg=/sys/fs/cgroup$(systemctl show -P ControlGroup "$(sb_unit "$1")")
  for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = sbx-exec ] && echo "$p"
  done
}
# sb_spare SB HELPER [NOT]: until the one spare beside the helper (other than NOT) is there; prints it
sb_spare() {
  local i s
  for i in $(seq 100); do
    s=$(sb_helpers "$1" | grep -vx "$2")
    [ "$(printf '%s\n' "$s" | grep -c .)" = 1 ] && [ "$s" != "${3:-}" ] && { echo "$s"; return 0; }
    sleep 0.1
  done
  return 1
}
assert_rc 0 sbxctl create --detach --name sbt-spare
sp=$T_OUT; SBS+=("$sp")
hp=$(systemctl show -P MainPID "$(sb_unit "$sp")")
s1=$(sb_spare "$sp" "$hp") || _t_err "no spare beside the idle sandbox's helper: $(sb_helpers "$sp" | tr '\n' ' ')"
assert_eq "$hp" "$(awk '/^PPid:/ {print $2}' "/proc/$s1/status")" "the spare's parent"
# an exec takes it: while it runs there is no other (it never holds a task a command might want), and
# none of them is in the command's sight
sbxctl exec sbt-spare -- sh -c 'cat /proc/[0-9]*/comm 2>/dev/null | grep -c "^sbx-exec$"; sleep 2' > "$W/spare.out" 2>&1 &
cpid=$!
for i in $(seq 100); do [ -s "$W/spare.out" ] && break; sleep 0.05; done
assert_eq "$hp $s1" "$(sb_helpers "$sp" | sort -n | tr '\n' ' ' | sed 's/ $//')" "the sandbox's sbx-exec processes while an exec runs (the spare is its supervisor)"
wait "$cpid"
assert_eq 0 "$(cat "$W/spare.out")" "sbx-exec processes the command sees"
s2=$(sb_spare "$sp" "$hp" "$s1") || _t_err "no new spare after the exec"
# a spare that dies while it waits (the OOM killer's choice, say) is replaced, and costs no exec
kill -KILL "$s2"
sb_spare "$sp" "$hp" "$s2" > /dev/null || _t_err "no spare after the last one was killed"
assert_rc 6 sbxctl exec sbt-spare -- sh -c 'echo after; exit 6'
assert_contains "$T_OUT" "after" "an exec after its spare was killed"
assert_eq "$hp" "$(systemctl show -P MainPID "$(sb_unit "$sp")")" "the helper"
assert_rc 0 sbxctl rm sbt-spare
sb_wait_gone "$sp" || _t_err "the sandbox's record did not finish"
assert_eq cancelled "$(record_get "$sp" .stop_reason)" "the sandbox with a spare, removed"
assert_eq true "$(record_get "$sp" .cleanup.completed)" "its cleanup"

t_begin "rm removes the sandbox; its record lists every exec with figures only, never a command line"
assert_rc 0 sbxctl rm sbt-one
sb_wait_gone "$sb" || _t_err "the sandbox's record did not finish"
assert_eq cancelled "$(record_get "$sb" .stop_reason)" "stop_reason"
assert_eq true "$(record_get "$sb" .cleanup.completed)" "cleanup.completed"
n=$(record_get "$sb" '.sandbox.execs | length')
[ "$n" -ge 10 ] || _t_err "only $n execs in the record"
assert_eq "$n" "$(record_get "$sb" .sandbox.execs_total)" "execs_total"
assert_eq 3 "$(record_get "$sb" '.sandbox.execs[0].exit_code')" "the first exec's exit code"
assert_eq exited "$(record_get "$sb" '.sandbox.execs[0].result')" "the first exec's result"
assert_eq 8 "$(record_get "$sb" '.sandbox.execs[0].output_bytes')" "the first exec's output bytes"
assert_contains "$(record_get "$sb" '[.sandbox.execs[].result] | join(" ")')" "timeout" "results"
rec=$(cat "$SBX_RUNS_DIR/$sb.json")
assert_not_contains "$rec" "trap" "the record (a command line)"
assert_not_contains "$rec" "from stdin" "the record (output)"
assert_rc 1 sbxctl exec "$sb" -- true
assert_contains "$T_OUT" "no sandbox"
assert_clean

t_begin "idle timeout: a sandbox with no command for that long ends as idle-timeout; a running exec holds it"
assert_rc 0 sbxctl create --detach --idle-timeout 2s
sb=$T_OUT; SBS+=("$sb")
assert_rc 0 sbxctl exec "$sb" -- sleep 3   # longer than the idle timeout: it must not end under it
sb_wait_gone "$sb" || _t_err "the sandbox did not end at its idle timeout"
assert_eq idle-timeout "$(record_get "$sb" .stop_reason)" "stop_reason"
assert_clean

t_begin "without --detach the sandbox lives as long as sbxctl create does"
sbxctl create > "$W/create.out" 2>&1 &
cpid=$!
for i in $(seq 300); do [ -s "$W/create.out" ] && break; sleep 0.1; done
sb=$(head -n 1 "$W/create.out"); SBS+=("$sb")
assert_match "$sb" '^[0-9a-f]{32}$' "the id printed"
assert_rc 0 sbxctl exec "$sb" -- true
kill -INT "$cpid"; wait "$cpid"
sb_wait_gone "$sb" || _t_err "the sandbox outlived its creator"
assert_eq cancelled "$(record_get "$sb" .stop_reason)" "stop_reason"
# the creator killed outright: its connection goes, and the sandbox with it
sbxctl create > "$W/create2.out" 2>&1 &
cpid=$!
for i in $(seq 300); do [ -s "$W/create2.out" ] && break; sleep 0.1; done
sb=$(head -n 1 "$W/create2.out"); SBS+=("$sb")
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
sb_wait_gone "$sb" || _t_err "the sandbox outlived its creator's connection"
assert_clean

t_begin "bad input: one-line errors, distinct exit codes, nothing left"
assert_rc 125 sbxctl create --name 'bad name'
assert_rc 125 sbxctl create --detach --bogus
assert_rc 125 sbxctl exec
assert_rc 125 sbxctl exec sbt-none
assert_rc 1 sbxctl exec sbt-none -- true
assert_contains "$T_OUT" "no sandbox sbt-none"
assert_rc 0 sbxctl create --detach --name sbt-dup
SBS+=(sbt-dup)
assert_rc 125 sbxctl create --detach --name sbt-dup
assert_contains "$T_OUT" "named 'sbt-dup' already"
assert_rc 0 sbxctl rm sbt-dup
assert_clean

t_begin "tenants: another user cannot see, exec into, signal or remove a sandbox"
if id nobody >/dev/null 2>&1; then
  assert_rc 0 sbxctl create --detach --name sbt-root
  sb=$T_OUT; SBS+=("$sb")
  assert_rc 1 runuser -u nobody -- sbxctl exec "$sb" -- id
  assert_contains "$T_OUT" "no sandbox"
  assert_rc 1 runuser -u nobody -- sbxctl exec sbt-root -- id
  assert_rc 1 runuser -u nobody -- sbxctl rm "$sb"
  assert_rc 1 runuser -u nobody -- sbxctl show "$sb"
  assert_rc 0 runuser -u nobody -- sbxctl list --no-legend
  assert_not_contains "$T_OUT" "$sb" "nobody's list"
  # a direct SignalExec for another tenant's sandbox: the same answer as for none
  t_run runuser -u nobody -- busctl call org.sbx.Manager1 /org/sbx/Manager1 org.sbx.Manager1 SignalExec ssi "$sb" 0123456789abcdef0123456789abcdef 2
  assert_contains "$T_OUT" "no sandbox"
  # ... and on sbxd's own socket, whatever SENDER header it carries
  for sender in "" org.freedesktop.DBus; do
    assert_rc 0 runuser -u nobody -- python3 "$DIRECT" signalexec "$sb" 0123456789abcdef0123456789abcdef $sender
    assert_eq "error org.sbx.Error.NoSuchSandbox" "$T_OUT" "nobody's SignalExec on the socket, SENDER '${sender:-none}'"
  done
  # nobody's own sandbox works, under nobody's tenant
  assert_rc 0 runuser -u nobody -- sbxctl create --detach --name sbt-nb
  nb=$T_OUT
  assert_rc 0 runuser -u nobody -- sbxctl exec sbt-nb -- true
  assert_rc 0 runuser -u nobody -- sbxctl rm sbt-nb
  assert_rc 0 sbxctl rm "$sb"
  sb_wait_gone "$sb"; sb_wait_gone "$nb"
  assert_ne "$(record_get "$sb" .tenant)" "$(record_get "$nb" .tenant)" "tenant ids"
  assert_clean
else
  t_skip "no user 'nobody' on this machine"
fi

t_summary
