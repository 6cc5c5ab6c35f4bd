#!/usr/bin/env bash
# Debugging tools that trace processes: strace and gdb (both need ptrace on the run's own
# processes), plus Python's faulthandler and a core-less crash. Where ptrace is denied the task says so
# ("DIFF ...") and goes on; the caller decides whether that is a known difference.
. "$(dirname "$0")/lib-task.sh"
command -v gcc >/dev/null || fail "gcc not installed"
printf '#include <stdio.h>\nint crash(int *p) { return *p; }\nint main(void) { puts("before"); fflush(stdout); return crash(0); }\n' > crash.c
run gcc -g -O0 -o crash crash.c
step "a crash is a SIGSEGV (exit 139)"
(ulimit -c 0; exec ./crash > out.txt 2>&1); rc=$?
expect 139 "$rc" "exit status of a NULL dereference"
step "Python's faulthandler"
out=$(ulimit -c 0; $PY -X faulthandler -c 'import ctypes; ctypes.string_at(0)' 2>&1); rc=$?
expect 139 "$rc" "exit status of a crashing python"
contains "$out" "Fatal Python error: Segmentation fault" "faulthandler's report"
if command -v strace >/dev/null; then
  step "strace"
  out=$(strace -f -qq -e trace=execve,openat -o trace.txt sh -c 'cat /dev/null' 2>&1); rc=$?
  if [ "$rc" = 0 ] && grep -q 'execve("/usr/bin/cat"' trace.txt; then
    echo "strace traced $(wc -l < trace.txt) calls"
  elif [[ $out == *"Operation not permitted"* ]]; then
    note_diff strace-ptrace "strace cannot trace (ptrace denied): $(printf '%s' "$out" | head -n 1)"
  else
    fail "strace (exit $rc): $(printf '%s' "$out" | head -c 300)"
  fi
else
  echo "(strace not installed)"
fi
if command -v gdb >/dev/null; then
  step "gdb: run to the crash and print the backtrace"
  out=$(gdb -q -nx -batch -ex run -ex bt ./crash 2>&1); rc=$?
  if [[ $out == *"SIGSEGV"* && $out == *"crash (p=0x0) at crash.c:2"* ]]; then
    echo "gdb found the crash in crash.c:2"
  elif [[ $out == *"Operation not permitted"* || $out == *"ptrace"* ]]; then
    note_diff gdb-ptrace "gdb cannot run a program (ptrace denied): $(printf '%s' "$out" | grep -m1 -iE 'ptrace')"
  else
    fail "gdb (exit $rc): $(printf '%s' "$out" | tail -c 400)"
  fi
else
  echo "(gdb not installed)"
fi
ok
