#!/usr/bin/env bash
# Argument-level syscall rules: a seccomp program the exec helper installs right before the command
# starts, whose caught calls it answers with EPERM and counts. Terminal injection (TIOCSTI, also with
# high bits in the request, TIOCLINUX), io_uring and a profile's own rule, tried from inside a run; the
# counts in the record; the listener never reaches the command; and a program that cannot be installed
# stops the run before the command starts.
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3

# Each line: NAME RET ERRNO (ERRNO 0 on success).
PROBE_TERMINAL='
import ctypes, fcntl, os, termios
libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long
def show(name, r):
    print(name, r, ctypes.get_errno() if r < 0 else 0)
# a pty that is our controlling terminal: there TIOCSTI would work without the rule
os.setsid()
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
c = ctypes.create_string_buffer(b"x")
show("TIOCSTI", libc.ioctl(slave, 0x5412, c))
show("TIOCSTI-high-bits", libc.ioctl(slave, 0x5412 | (1 << 32), c))
show("TIOCLINUX", libc.ioctl(slave, 0x541C, c))
params = ctypes.create_string_buffer(120)
show("io_uring_setup", libc.syscall(ctypes.c_long(425), ctypes.c_long(8), params))
ws = ctypes.create_string_buffer(8)
show("TIOCGWINSZ", libc.ioctl(slave, 0x5413, ws))
'

t_begin "terminal injection and io_uring are denied with EPERM inside a run, and counted by name"
assert_rc 0 sbxctl run -- $PY -c "$PROBE_TERMINAL"
assert_contains "$T_OUT" "TIOCSTI -1 1" "TIOCSTI"
assert_contains "$T_OUT" "TIOCSTI-high-bits -1 1" "TIOCSTI with bit 32 set in the request"
assert_contains "$T_OUT" "TIOCLINUX -1 1" "TIOCLINUX"
assert_contains "$T_OUT" "io_uring_setup -1 1" "io_uring_setup"
assert_contains "$T_OUT" "TIOCGWINSZ 0 0" "an unrelated ioctl on the same terminal"
run=$(last_run_id)
assert_eq 3 "$(record_get "$run" '.denied_syscalls.ioctl')" "denied_syscalls.ioctl in the record"
# systemd's own filter denies io_uring_setup too (SystemCallFilter=~), and its EPERM takes precedence
# over the user notification: such calls never reach the helper and are not counted.
t_log "denied_syscalls of the run: $(record_get "$run" '.denied_syscalls' | tr -d ' \n')"

t_begin "the command cannot install a seccomp listener of its own (which could let caught calls through)"
assert_rc 0 sbxctl run -- $PY -c '
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
insn = ctypes.create_string_buffer(struct.pack("<HBBI", 0x06, 0, 0, 0x7fff0000))   # RET ALLOW
prog = ctypes.create_string_buffer(struct.pack("<HxxxxxxQ", 1, ctypes.addressof(insn)))
r = libc.syscall(ctypes.c_long(317), ctypes.c_long(1), ctypes.c_long(8), prog)      # SET_MODE_FILTER, NEW_LISTENER
print("seccomp", r, ctypes.get_errno() if r < 0 else 0)
'
assert_contains "$T_OUT" "seccomp -1 1" "seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)"

t_begin "the helper's listener is not among the command's fds"
assert_rc 0 sbxctl run -- $PY -c '
import os
for fd in sorted(os.listdir("/proc/self/fd"), key=int):
    try: print(fd, os.readlink("/proc/self/fd/" + fd))
    except OSError as e: print(fd, e)
print("end")
'
assert_contains "$T_OUT" "end"
assert_not_contains "$T_OUT" "seccomp" "the command's open fds"

t_begin "a run without denied calls records an empty object"
assert_rc 0 sbxctl run -- true
assert_eq "{}" "$(record_get "$(last_run_id)" '.denied_syscalls' | tr -d ' \n')" "denied_syscalls"

t_begin "a profile's own argument rule bites, also with high bits in a 32-bit argument"
t_add_profile sbxtest_rules <<'EOF'
{
  "version": 1,
  "description": "sbx test: one argument-level rule of its own",
  "process": {
    "syscall_rules": [ { "syscall": "getpriority", "arg": 0, "op": "eq", "value": 2, "bits": 32 } ]
  },
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "wall_time": "5min" }
}
EOF
assert_rc 0 sbxctl profile reload
assert_rc 0 sbxctl run -p sbxtest_rules -- $PY -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def gp(which):
    r = libc.syscall(ctypes.c_long(140), ctypes.c_long(which), ctypes.c_long(0))   # getpriority
    return "%d %d" % (r, ctypes.get_errno() if r < 0 else 0)
print("PRIO_USER", gp(2))
print("PRIO_USER-high-bits", gp(2 | (1 << 32)))
print("PRIO_PROCESS", gp(0))
'
assert_contains "$T_OUT" "PRIO_USER -1 1" "getpriority(PRIO_USER)"
assert_contains "$T_OUT" "PRIO_USER-high-bits -1 1" "getpriority(PRIO_USER | 1<<32)"
assert_match "$T_OUT" "PRIO_PROCESS [0-9]+ 0" "getpriority(PRIO_PROCESS)"
run=$(last_run_id)
assert_eq 2 "$(record_get "$run" '.denied_syscalls.getpriority')" "denied_syscalls.getpriority"
assert_eq null "$(record_get "$run" '.denied_syscalls.ioctl')" "denied_syscalls.ioctl"

t_begin "a rule on a call the helper's child makes after the program is in force: answered, the run does not hang"
# The command's child shares the helper's memory until its execve() only where no rule can catch a call it
# makes from the program's installation on (helper/spawn-child.h): the helper, suspended meanwhile, could not
# answer it. A rule on execve catches the command's own start: it must end as a refused exec (126), at once.
t_add_profile sbxtest_execve <<'EOF'
{
  "version": 1,
  "description": "sbx test: a rule on execve",
  "process": { "syscall_rules": [ { "syscall": "execve" } ] },
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "wall_time": "20s" }
}
EOF
assert_rc 0 sbxctl profile reload
SECONDS=0
assert_rc 126 sbxctl run -p sbxtest_execve -- /bin/true
assert_contains "$T_OUT" "/bin/true: Operation not permitted" "the child's own line"
[ "$SECONDS" -lt 15 ] || _t_err "took ${SECONDS}s: the run waited for its wall time"
assert_eq 1 "$(record_get "$(last_run_id)" '.denied_syscalls.execve')" "denied_syscalls.execve"

t_begin "sbxd lets the child share the helper's memory only where no rule catches its calls"
sb=$(sbxctl create --detach -p sbxtest_execve) || t_fail "create with a rule on execve"
sb_shared=$(sbxctl create --detach -p sbxtest_rules) || t_fail "create with a rule on getpriority"
for s in "$sb" "$sb_shared"; do
  unit=$(sbxctl show "$s" | sed -n 's/^Unit: *//p')
  exec_start=$(systemctl show -P ExecStart "$unit")
  if [ "$s" = "$sb" ]; then
    assert_not_contains "$exec_start" "--spawn-shared" "$unit's helper (a rule on execve)"
  else
    assert_contains "$exec_start" "--spawn-shared" "$unit's helper (a rule on getpriority)"
  fi
done
assert_rc 0 sbxctl exec "$sb_shared" -- /bin/true
assert_rc 126 sbxctl exec "$sb" -- /bin/true
sbxctl rm "$sb" "$sb_shared" >/dev/null 2>&1

# ---- fail closed: driving the helper directly through systemd-run (as test-50 does) ----------------
NOSECCOMP=(-p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p SystemCallFilter=@system-service
           -p "SystemCallFilter=~io_uring_setup" -p SystemCallErrorNumber=EPERM
           -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -p PrivateNetwork=yes)
BASE=("${NOSECCOMP[@]}" -p SystemCallFilter=seccomp)   # allow lists merge
ALLOW_ALL=060000000000ff7f   # one instruction: BPF_RET|BPF_K SECCOMP_RET_ALLOW

# run_helper UNIT PROPS... -- HELPER-ARGS...: prints "rc=N status=TEXT"; the command exits 7
run_helper() { helper_unit "$1" 'exit 7' "${@:2}"; }

t_begin "control: the helper installs a program and runs the command"
out=$(run_helper sbxt-sc0 "${BASE[@]}" -- --expect-network=none --seccomp-filter=$ALLOW_ALL)
assert_contains "$out" "rc=7 status=finished" "helper result"

t_begin "a seccomp filter that is not hex: refused, the command does not run"
out=$(run_helper sbxt-sc1 "${BASE[@]}" -- --expect-network=none --seccomp-filter=zz$ALLOW_ALL)
assert_contains "$out" "rc=123 status=refused the seccomp filter is invalid"

t_begin "a program the kernel rejects: refused, the command does not run"
out=$(run_helper sbxt-sc2 "${BASE[@]}" -- --expect-network=none --seccomp-filter=ffff000000000000)
assert_contains "$out" "rc=123 status=refused the seccomp filter cannot be installed: Invalid argument"

t_begin "seccomp() not allowed by the unit's syscall filter: refused, the command does not run"
out=$(run_helper sbxt-sc3 "${NOSECCOMP[@]}" -- --expect-network=none --seccomp-filter=$ALLOW_ALL)
assert_contains "$out" "rc=123 status=refused the seccomp filter cannot be installed: Operation not permitted"

assert_clean "after all runs"
t_summary
