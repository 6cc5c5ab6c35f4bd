#!/usr/bin/env bash
# Landlock, the command's second file-system wall (docs/security.md, "Landlock"): a run's command cannot
# write where its ruleset does not say so, even where its mounts and file permissions would let it; a
# kernel without Landlock refuses a run that requires it (files.landlock "required"), and runs one that
# takes it as best-effort without.
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary

if [ ! -r /sys/kernel/security/lsm ] || ! grep -qw landlock /sys/kernel/security/lsm; then
  t_begin "Landlock is enabled in this kernel"
  t_skip "this kernel has no Landlock (/sys/kernel/security/lsm: $(cat /sys/kernel/security/lsm 2>/dev/null))"
  t_summary
fi

t_begin "a run's command is under the ruleset: /dev/urandom is writable by its mount and mode, not by Landlock"
# PrivateDevices= binds /dev/urandom (0666) writable: only Landlock stands in the way
assert_rc 9 sbxctl run -- sh -c 'test -w /dev/urandom && echo mode-writable; echo x > /dev/urandom || exit 9'
assert_contains "$T_OUT" "mode-writable" "the mode lets the run's user write"
assert_contains "$T_OUT" "Permission denied" "the write is denied"
# the record says at which ABI: the best the kernel offers
abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))')
assert_eq "$abi" "$(record_get "$(last_run_id)" .landlock_abi)" "the record's landlock_abi"

t_begin "what a run writes is in the ruleset: workspace, HOME, /tmp, /var/tmp, /dev/shm, /dev/null, a pty"
assert_rc 0 sbxctl run -- sh -c 'set -e; echo a > w; mkdir -p d/e; mv w d/e/w; ln -s d/e/w l; echo b > ~/h;
  echo c > /tmp/t; echo d > /var/tmp/v; echo e > /dev/shm/s; echo f > /dev/null; : > /tmp/t; rm ~/h;
  cat d/e/w /tmp/t /var/tmp/v /dev/shm/s; head -c 3 /dev/zero | wc -c; ls /usr/bin/sh; echo done'
assert_contains "$T_OUT" "done"
# a terminal of its own: /dev/ptmx, then /dev/pts/N
assert_rc 0 sbxctl run -- python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"pty-ok\n"); print(os.read(m, 6).decode())'
assert_contains "$T_OUT" "pty-ok" "a terminal's devices"

t_begin "a sandbox's commands are under the ruleset, each exec"
assert_rc 0 sbxctl create --detach --name sbt-ll
sb=$T_OUT; t_on_exit "sbxctl rm '$sb' >/dev/null 2>&1"
assert_rc 0 sbxctl exec "$sb" -- sh -c 'echo kept > ~/h.txt; cat ~/h.txt'
assert_contains "$T_OUT" "kept"
assert_rc 9 sbxctl exec "$sb" -- sh -c 'echo x > /dev/urandom || exit 9'
assert_contains "$T_OUT" "Permission denied"
assert_rc 0 sbxctl rm "$sb"

# run_helper UNIT COMMAND PROPS... -- HELPER-ARGS...: prints "rc=N status=TEXT"
run_helper() { helper_unit "$@"; }
LL_SYSCALLS="landlock_create_ruleset landlock_add_rule landlock_restrict_self"
BASE=(-p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p SystemCallFilter=@system-service
      -p "SystemCallFilter=$LL_SYSCALLS" -p "SystemCallFilter=~io_uring_setup" -p SystemCallErrorNumber=EPERM
      -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -p PrivateNetwork=yes
      -p MemoryMax=100M -p MemorySwapMax=0 -p TasksMax=50)
EXPECT=(--expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
RULESET=(--landlock-ro=/ --landlock-rw=/home/sbx --landlock-rw=/tmp --landlock-rw=/dev/null)
NOLL=(-p "SystemCallFilter=~landlock_create_ruleset:ENOSYS")

t_begin "a kernel without Landlock (ENOSYS): required refuses the run, best-effort runs it without"
# a path of the ruleset that does not exist in the run is skipped
out=$(run_helper sbxt-ll0 'echo ran > /dev/null; exit 7' "${BASE[@]}" -- "${EXPECT[@]}" --landlock=required "${RULESET[@]}" --landlock-rw=/nonexistent/x)
assert_contains "$out" "rc=7 status=finished" "control: Landlock available"
out=$(run_helper sbxt-ll1 'exit 7' "${BASE[@]}" "${NOLL[@]}" -- "${EXPECT[@]}" --landlock=required "${RULESET[@]}")
assert_contains "$out" "rc=123 status=refused Landlock is not available in this kernel (not built in) and the profile requires it"
out=$(run_helper sbxt-ll2 'echo x > /dev/urandom && exit 7; exit 9' "${BASE[@]}" "${NOLL[@]}" -- "${EXPECT[@]}" --landlock=best-effort "${RULESET[@]}")
assert_contains "$out" "rc=7 status=finished" "best-effort: runs, without the ruleset"
# denied by the unit's filter with its EPERM (a profile that denies the calls): refused as well
out=$(run_helper sbxt-ll3 'exit 7' "${BASE[@]}" -p "SystemCallFilter=~landlock_create_ruleset" -- "${EXPECT[@]}" --landlock=required "${RULESET[@]}")
assert_contains "$out" "rc=123 status=refused Landlock is not available in this kernel (Operation not permitted)"

t_begin "attack: a unit that wrongly has a writable host directory outside the ruleset cannot write there"
tgt=/srv/sbxt-ll-target
mkdir -p "$tgt"; chmod 1777 "$tgt"; t_on_exit "rm -rf '$tgt'"
WRONG=(-p ProtectSystem=strict -p "ReadWritePaths=$tgt")
out=$(run_helper sbxt-ll5 "echo x > $tgt/f && exit 7; exit 9" "${BASE[@]}" "${WRONG[@]}" -- "${EXPECT[@]}")
assert_contains "$out" "rc=7 status=finished" "control: without Landlock the mounts let the write through"
rm -f "$tgt/f"
# no file, directory, link or fifo
out=$(run_helper sbxt-ll6 "(echo x > $tgt/f || mkdir $tgt/d || ln -s x $tgt/l || mkfifo $tgt/p) && exit 7; exit 9" "${BASE[@]}" "${WRONG[@]}" -- "${EXPECT[@]}" --landlock=required "${RULESET[@]}")
assert_contains "$out" "rc=9 status=finished" "with the ruleset every write fails"
assert_eq "" "$(ls -A "$tgt")" "what the run left in $tgt"

t_summary
