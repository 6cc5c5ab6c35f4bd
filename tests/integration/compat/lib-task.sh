# tests/integration/compat/lib-task.sh - sourced by the task-*.sh scripts of the compatibility suite.
# shellcheck shell=bash
#
# A task runs in its current directory (which must be writable: the sandbox's workspace, or a scratch
# directory outside), with HOME writable, and uses only the system's own tools (/usr/bin/python3, no
# shims, no network). It prints "TASK <name> OK" as its last line, or "TASK <name> FAILED: why" and
# exits non-zero at the first check that fails.
set -u
export LC_ALL=C.UTF-8
TASK=${TASK:-$(basename "$0" .sh)}; TASK=${TASK#task-}
# shellcheck disable=SC2034  # TASK_DIR (this folder: the tasks' data) and PY are for the tasks
TASK_DIR=$(cd "$(dirname "$0")" && pwd) PY=/usr/bin/python3

fail() { echo "TASK $TASK FAILED: $*"; exit 1; }
T0=${EPOCHREALTIME/[.,]/}
# step MSG: a heading, with the seconds since the task started
step() { local d=$(( (${EPOCHREALTIME/[.,]/} - T0) / 100000 )); echo "-- [$((d / 10)).$((d % 10))s] $*"; }
# run CMD...: show the command, fail the task if it fails
run() { echo "+ $*"; "$@" || fail "'$*' exited $?"; }
# expect WANT GOT WHAT
expect() { [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"; }
# contains HAYSTACK NEEDLE WHAT
contains() { case $1 in *"$2"*) ;; *) fail "$3: '$2' not found in: $(printf '%s' "$1" | head -c 400)" ;; esac; }
# note_diff ID MSG: the task saw something work differently and carried on (the caller compares these lines
# inside and outside with known-differences.txt, as "task:NAME:ID")
note_diff() { echo "DIFF $1: ${*:2}"; }
ok() { step "done"; echo "TASK $TASK OK"; exit 0; }
# started PID COMM: wait (up to 10 s) until the background child PID has executed COMM: "cmd & pid=$!"
# returns once the shell has forked, before the child has called execve()
started() {
  local i c
  for ((i = 0; i < 1000; i++)); do
    c=$(cat "/proc/$1/comm" 2>/dev/null) || fail "process $1 ($2) is gone"
    [ "$c" = "$2" ] && return 0
    sleep 0.01
  done
  fail "process $1 did not start $2 within 10 s (its comm is '$c')"
}
# fstat FORMAT FILE...: stat -c FORMAT, for the fields %a %h %i %u %Y. Where coreutils' stat fails with
# "Invalid argument" (its statx() with AT_NO_AUTOMOUNT, which gVisor's 2022 kernel refuses) the task says so
# (DIFF statx-einval, on stderr: callers capture stdout) and reads the same fields with Python's os.stat
# (fstatat), so the check itself still runs
fstat() {
  local out
  if out=$(stat -c "$1" "${@:2}" 2>&1); then printf '%s\n' "$out"; return 0; fi
  case $out in *"Invalid argument"*) ;; *) printf '%s\n' "$out" >&2; return 1 ;; esac
  note_diff statx-einval "stat fails: $(head -n 1 <<< "$out")" >&2
  $PY - "$@" <<'PY'
import os, sys
for p in sys.argv[2:]:
    s = os.stat(p)
    f = {"a": "%o" % (s.st_mode & 0o7777), "h": s.st_nlink, "i": s.st_ino, "u": s.st_uid, "Y": int(s.st_mtime)}
    print(__import__("re").sub(r"%([ahiuY])", lambda m: str(f[m.group(1)]), sys.argv[1]))
PY
}

[ -w . ] || fail "the current directory $(pwd) is not writable"
[ -n "${HOME:-}" ] && [ -w "$HOME" ] || fail "HOME '${HOME:-}' is not writable"
# a fresh scratch directory for this task, inside the current one
WORK=$(pwd)/work-$TASK
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || fail "cannot create $WORK"
