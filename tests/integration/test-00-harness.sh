#!/usr/bin/env bash
# test-00-harness.sh - checks the harness (lib.sh) and the testbed it runs in, nothing of sbx itself.
# shellcheck source=tests/integration/lib.sh
# lane: both
. "$(dirname "$0")/lib.sh"
LIB=$(cd "$(dirname "$0")" && pwd)/lib.sh
TMP=$(mktemp -d); t_on_exit 'rm -rf "$TMP"' 

# run a throw-away test file that uses the harness; sets T_OUT and T_RC
child() { printf '. %q\n%s\n' "$LIB" "$1" > "$TMP/child.sh"; t_run bash "$TMP/child.sh"; }

t_begin "harness: passes, failures and skips are counted; a failure makes the exit status 1"
child 't_begin a; assert_eq 1 1; t_pass
t_begin b; assert_eq 1 2 "the value"; assert_contains "abc" "x"; t_pass
t_begin c; t_skip "because"
t_begin d; assert_contains "hello world" "lo w"
t_summary'
assert_eq 1 "$T_RC" "exit status"
assert_contains "$T_OUT" "PASS a"
assert_contains "$T_OUT" "FAIL b: the value: expected '1', got '2'"
assert_contains "$T_OUT" "SKIP c: because"
assert_contains "$T_OUT" "PASS d"
assert_eq "2 passed, 1 failed, 1 skipped" "$(printf '%s\n' "$T_OUT" | tail -n 1)" "closing line"
t_pass

t_begin "harness: all passing gives exit status 0 and exactly one closing line"
child 't_begin a; assert_rc 3 sh -c "echo out; exit 3"; assert_eq out "$T_OUT"; t_summary'
assert_eq 0 "$T_RC" "exit status"
assert_eq 1 "$(printf '%s\n' "$T_OUT" | grep -Ec '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$')" "closing lines"
assert_contains "$T_OUT" "1 passed, 0 failed, 0 skipped"
t_pass

t_begin "harness: a skip without a reason, and a crash without t_summary, are failures"
child 't_begin a; t_skip
t_begin b; exit 7'
assert_eq 1 "$T_RC" "exit status"
assert_contains "$T_OUT" "FAIL a: skipped without a reason"
assert_contains "$T_OUT" "FAIL b: test file exited with status 7"
assert_contains "$T_OUT" "0 passed, 2 failed, 0 skipped"
t_pass

t_begin "harness: a case that needs a missing controller fails in a native-lane file, is skipped in a both file"
: > "$TMP/none"
for lane in native both vm; do
  child "# lane: $lane
t_begin needs-memory; if t_require_controller memory; then t_pass; fi
t_summary"
  out=$(SBX_LANE=native T_CGROUP_CONTROLLERS=$TMP/none bash "$TMP/child.sh" 2>&1)
  case $lane in
    native) assert_contains "$out" "FAIL needs-memory: needs the cgroup controller 'memory', which the native lane lacks: this case belongs in a file of the vm lane" "a native file in the native lane" ;;
    both) assert_contains "$out" "SKIP needs-memory: needs the cgroup controller 'memory', which the native lane lacks: the vm lane runs this case" "a both file in the native lane" ;;
    vm) assert_contains "$out" "FAIL needs-memory" "a vm file forced into the native lane" ;;
  esac
  # the vm lane, where the controller is there
  echo "cpu memory pids" > "$TMP/all"
  out=$(SBX_LANE=vm T_CGROUP_CONTROLLERS=$TMP/all bash "$TMP/child.sh" 2>&1)
  assert_contains "$out" "PASS needs-memory" "the $lane file in the vm lane"
done
t_pass

# ---- the testbed itself: inside one (SBX_TESTBED set by testbed/vm.sh or nspawn.sh) these must hold
t_begin "testbed: systemd is PID 1"
if [ -z "${SBX_TESTBED:-}" ] && [ "$(t_testbed)" = none ]; then
  t_skip "not inside a testbed (SBX_TESTBED unset and systemd is not PID 1)"
else
  t_log "testbed: $(t_testbed)"
  assert_eq systemd "$(cat /proc/1/comm)" "PID 1"
  assert_file /run/systemd/system "/run/systemd/system"
  t_pass
fi

t_begin "testbed: the system is up (running or degraded)"
if t_require_systemd; then
  st=$(timeout 180 systemctl is-system-running --wait 2>&1)
  t_log "systemctl is-system-running: $st"
  [ "$st" = degraded ] && t_log "failed units: $(systemctl list-units --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
  assert_match "$st" '^(running|degraded)$' "system state"
  t_pass
fi

t_begin "testbed: the system bus answers and a transient unit runs"
if t_require_systemd && t_require_root; then
  assert_rc 0 busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId
  assert_rc 0 timeout 60 systemd-run --wait --pipe --quiet --collect echo transient-ok
  assert_eq transient-ok "$T_OUT" "transient unit output"
  t_pass
fi

t_begin "testbed: cgroup v2 with the memory, pids and cpu controllers (the native lane: a testbed build without them)"
if t_require_systemd; then
  assert_eq cgroup2fs "$(stat -f -c %T /sys/fs/cgroup)" "/sys/fs/cgroup type"
  c=$(cat /sys/fs/cgroup/cgroup.controllers)
  t_log "root controllers: ${c:-none}"
  if [ "$(t_lane)" = native ]; then
    # the native lane's premise: sbx there is a testbed build, which starts runs without the controllers
    # the host does not give (docs/testbed.md); with them all, it would be an ordinary build's test
    assert_match "$(sbxctl --version)" '\(testbed build: testbed-unenforced-limits\)$' "sbxctl --version in the native lane"
    t_pass
  elif [ "$(t_testbed)" = nspawn ]; then
    t_skip "nspawn testbed outside the lanes: memory/pids/cpu are bound to cgroup v1 on the host, so they are absent here"
  else
    for k in memory pids cpu; do assert_match "$c" "(^| )$k( |\$)" "root controllers"; done
    assert_match "$(sbxctl --version)" '^sbxctl [0-9][0-9.~a-z]*$' "sbxctl --version (not a testbed build)"
    t_pass
  fi
fi

t_summary
