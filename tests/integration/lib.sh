# tests/integration/lib.sh - a tiny test harness for the integration tests (bash).
# shellcheck shell=bash
#
# A test file tests/integration/test-NN-name.sh looks like:
#
#   #!/usr/bin/env bash
#   . "$(dirname "$0")/lib.sh"
#   t_begin "true exits 0"
#   t_run sbxctl run -- true
#   assert_eq 0 "$T_RC" "exit status"
#   t_pass
#   t_begin "memory limit"
#   t_require_controller memory || true     # skips (with a reason) when not enforceable here
#   ...
#   t_summary
#
# Each file runs alone (as root, inside a testbed: see docs/testbed.md) and prints one line per case,
#   PASS name | FAIL name: why | SKIP name: reason
# (after "  # case time: N.N s", the seconds since its t_begin), then exactly one closing line "N passed, N failed, N skipped"; its exit status is 1 if any failed.
#
# Case rules: t_begin opens a case; a failed assert marks it failed (the first message is kept, later
# asserts still run and are reported); t_pass closes it (as failed if an assert failed); t_fail MSG
# closes it as failed; t_skip REASON closes it as skipped (a reason is required); opening the next
# case or t_summary closes a still-open case as passed unless an assert failed. Assertions outside a
# case count as a case of their own. If the file exits without t_summary, the summary is printed
# anyway, and an unexpected non-zero exit counts as a failure.
#
# Do not 'set -e' in test files: a failed assert returns 1 (so 'assert_rc 0 cmd || ...' works).
# Helpers: t_run CMD... (sets T_OUT = stdout+stderr, T_RC), t_log MSG, t_testbed (prints vm | nspawn
# | host | none), t_lane and t_file_lane (see below), t_on_exit CMD (cleanup run at exit, before the summary),
# t_require_root, t_require_systemd, t_require_controller NAME, t_require_cmd NAME
# (each returns 1 after t_skip when the requirement is not met).

T_PASSED=0 T_FAILED=0 T_SKIPPED=0
T_NAME="" T_OPEN=0 T_ERR="" T_DONE=0 T_T0=""
T_OUT="" T_RC=0 T_CLEANUP=()
export LC_ALL=C SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat
# A testbed build's sbxctl (docs/testbed.md) ends each run that went without ceilings with a line saying so;
# the cases compare what sbxctl prints, so they go without it (test-10 checks the line). Other builds
# ignore the variable.
export SBX_TESTBED_QUIET=1

_t_close() {   # $1 = pass | fail | skip, $2 = message
  local how=$1 msg=${2:-}
  [ "$T_OPEN" = 1 ] || return 0
  [ -n "$T_T0" ] && echo "  # case time: $(_t_since "$T_T0") s"
  if [ "$how" = pass ] && [ -n "$T_ERR" ]; then how=fail msg=$T_ERR; fi
  if [ "$how" = fail ] && [ -z "$msg" ]; then msg=${T_ERR:-failed}; fi
  case $how in
    pass) T_PASSED=$((T_PASSED + 1)); echo "PASS $T_NAME" ;;
    fail) T_FAILED=$((T_FAILED + 1)); echo "FAIL $T_NAME: $msg" ;;
    skip) T_SKIPPED=$((T_SKIPPED + 1)); echo "SKIP $T_NAME: $msg" ;;
  esac
  T_OPEN=0 T_NAME="" T_ERR="" T_T0=""
}

_t_since() {   # seconds since $1 (an $EPOCHREALTIME), one decimal
  local a=${1/./} b=${EPOCHREALTIME/./}
  local d=$(( (b - a) / 100000 ))
  echo "$((d / 10)).$((d % 10))"
}

_t_implicit() {   # an assert or result outside a case gets a case of its own
  [ "$T_OPEN" = 1 ] && return 0
  local n=${#FUNCNAME[@]}
  T_NAME="${0##*/}:line ${BASH_LINENO[n - 2]:-?}" T_OPEN=1 T_ERR=""
}

t_begin() {
  [ -n "${1:-}" ] || { echo "t_begin: a name is required" >&2; return 2; }
  _t_close pass
  T_NAME=$1 T_OPEN=1 T_ERR="" T_T0=$EPOCHREALTIME
  echo "---- $T_NAME"
}

t_pass() { _t_implicit; _t_close pass; }

t_fail() { _t_implicit; _t_close fail "${1:-failed}"; return 0; }

t_skip() {
  _t_implicit
  if [ -z "${1:-}" ]; then _t_close fail "skipped without a reason"; else _t_close skip "$1"; fi
  return 0
}

t_log() { echo "  # $*"; }

# record a failed check in the open case (without closing it)
_t_err() {
  _t_implicit
  echo "  not ok: $1"
  [ -n "$T_ERR" ] || T_ERR=$1
  return 1
}

assert_eq() {   # EXPECTED ACTUAL [WHAT]
  [ "$1" = "$2" ] && return 0
  _t_err "${3:-value}: expected '$1', got '$2'"
}

assert_ne() {   # UNEXPECTED ACTUAL [WHAT]
  [ "$1" != "$2" ] && return 0
  _t_err "${3:-value}: got '$2', which it must not be"
}

assert_contains() {   # HAYSTACK NEEDLE [WHAT]
  case $1 in *"$2"*) return 0 ;; esac
  _t_err "${3:-output} does not contain '$2'; it was: $(printf '%s' "$1" | head -c 600)"
}

assert_not_contains() {   # HAYSTACK NEEDLE [WHAT]
  case $1 in *"$2"*) _t_err "${3:-output} contains '$2'; it was: $(printf '%s' "$1" | head -c 600)"; return 1 ;; esac
  return 0
}

assert_match() {   # STRING ERE [WHAT]
  printf '%s' "$1" | grep -Eq -- "$2" && return 0
  _t_err "${3:-value} does not match /$2/; it was: $(printf '%s' "$1" | head -c 600)"
}

assert_rc() {   # EXPECTED CMD... : runs CMD (setting T_OUT and T_RC) and checks its exit status
  local want=$1; shift
  t_run "$@"
  [ "$T_RC" = "$want" ] && return 0
  _t_err "'$*' exited $T_RC, expected $want; output: $(printf '%s' "$T_OUT" | head -c 600)"
}

assert_file() {   # PATH [WHAT]
  [ -e "$1" ] && return 0
  _t_err "${2:-file} $1 does not exist"
}

t_run() {   # CMD... : sets T_OUT (stdout and stderr) and T_RC
  T_OUT=$("$@" 2>&1); T_RC=$?
  return 0
}

t_testbed() {
  if [ -n "${SBX_TESTBED:-}" ]; then echo "$SBX_TESTBED"; return; fi
  if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && [ -d /run/systemd/system ]; then
    if systemd-detect-virt -cq 2>/dev/null; then echo nspawn; else echo host; fi
  else echo none; fi
}

t_require_root() {
  [ "$(id -u)" = 0 ] && return 0
  t_skip "needs root"; return 1
}

t_require_systemd() {
  [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && [ -d /run/systemd/system ] && return 0
  t_skip "systemd is not PID 1 here (run inside a testbed: testbed/vm.sh)"; return 1
}

# The lanes (docs/testbed.md): each file says on a line of its own which one runs it, "# lane: native"
# (nspawn on the host's kernel, a testbed build: no memory, pids or cpu controller), "# lane: vm" (the
# VM: Debian's kernel, every controller, the packages) or "# lane: both". payload.sh sets SBX_LANE.
t_lane() { echo "${SBX_LANE:-}"; }          # the lane running this file; "" for a file run by hand
t_file_lane() { sed -n 's/^# lane: \([a-z]*\)$/\1/p' "$0" | head -n 1; }   # the lane this file declares

t_require_controller() {   # NAME: the cgroup v2 controller must be available (MemoryMax= needs memory)
  # (T_CGROUP_CONTROLLERS: another file to read them from, for test-00's checks of this rule)
  grep -qw -- "$1" "${T_CGROUP_CONTROLLERS:-/sys/fs/cgroup/cgroup.controllers}" 2>/dev/null && return 0
  if [ "$(t_lane)" = native ]; then
    # a case that needs a ceiling enforced fails loudly in the native lane, unless its file runs in both
    # lanes (the VM lane runs it): nothing passes because nothing was enforced
    if [ "$(t_file_lane)" = both ]; then
      t_skip "needs the cgroup controller '$1', which the native lane lacks: the vm lane runs this case"
    else
      t_fail "needs the cgroup controller '$1', which the native lane lacks: this case belongs in a file of the vm lane"
    fi
    return 1
  fi
  t_skip "cgroup controller '$1' not available in the $(t_testbed) testbed, so its limits are not enforced"
  return 1
}

t_require_cmd() {
  command -v "$1" >/dev/null 2>&1 && return 0
  t_skip "command '$1' not installed"; return 1
}

t_on_exit() { T_CLEANUP+=("$1"); }   # CMD (a string for eval): run at exit, before the summary

_t_cleanup() {
  local c
  for c in "${T_CLEANUP[@]}"; do eval "$c"; done
  T_CLEANUP=()
}

t_summary() {
  _t_cleanup
  _t_close pass
  T_DONE=1
  echo "$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped"
  [ "$T_FAILED" = 0 ]
  exit $?
}

_t_exit() {
  local rc=$?
  [ "$T_DONE" = 1 ] && return
  _t_cleanup
  if [ "$rc" != 0 ]; then
    if [ "$T_OPEN" = 1 ]; then _t_close fail "${T_ERR:+$T_ERR; }test file exited with status $rc inside this case"
    else T_NAME="${0##*/}" T_OPEN=1; _t_close fail "test file exited with status $rc"; fi
  fi
  t_summary
}
_t_signal() {   # killed (e.g. by the payload's per-file timeout): the open case failed
  local sig=$1 rc=$2
  trap - EXIT
  _t_cleanup
  if [ "$T_OPEN" != 1 ]; then T_NAME="${0##*/}" T_OPEN=1; fi
  _t_close fail "${T_ERR:+$T_ERR; }killed by SIG$sig (a timeout?)"
  T_DONE=1
  echo "$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped"
  exit "$rc"
}
trap _t_exit EXIT
trap '_t_signal TERM 143' TERM
trap '_t_signal INT 130' INT
trap '_t_signal HUP 129' HUP
