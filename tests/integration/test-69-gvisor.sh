#!/usr/bin/env bash
# The gVisor tier (process.isolation "gvisor", docs/security.md "Isolation tiers"): the command runs in
# runsc, gVisor's kernel in user space, inside the run's own unit. What it sees is gVisor's kernel; what
# holds around it is the unit's: the run's user, the file view, the profile's syscall lists (inside
# gVisor, the same EPERM), the network namespace and sbx's egress programs, the output ceiling, the
# record. runsc that cannot start is a refusal (123); a sandbox of the tier is refused.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd runsc || t_summary

W=$(mktemp -d /tmp/sbxt-gv.XXXXXX)
t_on_exit "rm -rf '$W'"
PROFILES_DIR=/etc/sbx/profiles.d
mkdir -p "$PROFILES_DIR"
# a gVisor profile with the public network, for the egress cases
jq '.network = {"mode": "allowlist", "destinations": [{"host": "127.0.0.1", "ports": [9]}]} |
    .description = "gVisor with an allowlist (tests)"' /usr/lib/sbx/profiles.d/untrusted.json \
  > "$PROFILES_DIR/gvnet.json"
t_on_exit "rm -f '$PROFILES_DIR/gvnet.json'; sbxctl profile reload >/dev/null 2>&1"
sbxctl profile reload >/dev/null

t_begin "a run of the untrusted profile runs in gVisor: its kernel, the run's user outside, the record says so"
assert_rc 7 sbxctl run -p untrusted -- sh -c 'uname -r; id -u; echo out; echo err >&2; exit 7'
assert_contains "$T_OUT" "4.4.0" "gVisor's kernel version"
assert_not_contains "$T_OUT" "$(uname -r)" "not the host's kernel"
assert_contains "$T_OUT" "out"
assert_contains "$T_OUT" "err"
id=$(last_run_id)
assert_eq "gvisor" "$(record_get "$id" .isolation)" "record: isolation"
assert_eq "$(runsc --version | sed -n '1s/.* //p')" "$(record_get "$id" .runsc_version)" "record: runsc_version"
assert_eq "exit-code" "$(record_get "$id" .stop_reason)" "record: stop reason"
assert_eq "7" "$(record_get "$id" .exit.code)" "record: exit code"
t_run sbxctl show "$id"
assert_contains "$T_OUT" "gvisor (runsc " "sbxctl show: the isolation line"
# a kernel-tier run says kernel
assert_rc 0 sbxctl run -- true
assert_eq "kernel" "$(record_get "$(last_run_id)" .isolation)" "a kernel-tier record"
assert_eq "null" "$(record_get "$(last_run_id)" .runsc_version)" "no runsc_version in the kernel tier"

t_begin "the workspace, HOME and /tmp are the run's: writes land outside as the caller's files"
mkdir -p "$W/ws" && echo input > "$W/ws/in.txt"
assert_rc 0 sbxctl run -p untrusted --workspace "$W/ws" -- sh -c \
  'cat in.txt; echo made > out.txt; echo h > ~/h; echo t > /tmp/t; cat ~/h /tmp/t; pwd'
assert_contains "$T_OUT" "input"
assert_contains "$T_OUT" "/home/sbx/workspace" "the workspace is the working directory"
assert_eq "made" "$(cat "$W/ws/out.txt")" "written through gVisor to the bound workspace"
assert_eq "$(stat -c %u "$W/ws")" "$(stat -c %u "$W/ws/out.txt")" "the new file is the caller's after hand-over"

t_begin "the host's OS is read-only and hidden paths stay hidden inside gVisor"
assert_rc 0 sbxctl run -p untrusted -- sh -c 'touch /usr/x 2>&1; cat /etc/shadow 2>&1; test -e /root/.bashrc && echo root-home; echo done'
assert_contains "$T_OUT" "done"
assert_match "$T_OUT" "(Read-only file system|Permission denied)" "no write to /usr"
assert_not_contains "$T_OUT" "root:" "no /etc/shadow"
assert_not_contains "$T_OUT" "root-home" "ProtectHome holds"

t_begin "the profile's syscall lists hold inside gVisor: sbx's deny-list gives EPERM, as in the kernel tier"
prog='import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, nr in (("io_uring_setup", 425), ("keyctl", 250), ("add_key", 248)):
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "ok")'
assert_rc 0 sbxctl run -p untrusted -- python3 -c "$prog"
assert_contains "$T_OUT" "io_uring_setup -1 Operation not permitted"
assert_contains "$T_OUT" "keyctl -1 Operation not permitted"
assert_contains "$T_OUT" "add_key -1 Operation not permitted"
# select() is glibc's pselect6, which this runsc's filter knows only as "pselect"; namespaces are as the
# profile's process.namespaces [] says: none (clone and unshare without namespace flags still work)
prog='import ctypes, os, select, socket
libc = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair(); b.send(b"x")
print("select", len(select.select([a], [], [], 1)[0]))
for name, nr, arg in (("unshare(NEWUSER)", 272, 0x10000000), ("unshare(NEWNET)", 272, 0x40000000), ("unshare(FILES)", 272, 0x400)):
    r = libc.syscall(nr, arg)
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "ok")
pid = os.fork()
if pid == 0:
    os._exit(0)
print("fork", os.waitpid(pid, 0)[1])'
assert_rc 0 sbxctl run -p untrusted -- python3 -c "$prog"
assert_contains "$T_OUT" "select 1" "select() inside gVisor"
assert_contains "$T_OUT" "unshare(NEWUSER) -1 Operation not permitted"
assert_contains "$T_OUT" "unshare(NEWNET) -1 Operation not permitted"
assert_contains "$T_OUT" "unshare(FILES) 0 ok" "unshare without namespace flags"
assert_contains "$T_OUT" "fork 0"
# a profile that denies a call the workload makes: EPERM from gVisor's filter
jq '.process.syscalls.deny = ["uname"] | .description = "gVisor, uname denied (tests)"' \
  /usr/lib/sbx/profiles.d/untrusted.json > "$PROFILES_DIR/gvdeny.json"
t_on_exit "rm -f '$PROFILES_DIR/gvdeny.json'; sbxctl profile reload >/dev/null 2>&1"
sbxctl profile reload >/dev/null
assert_rc 0 sbxctl run -p gvdeny -- python3 -c 'import os
try:
    os.uname(); print("uname-ran")
except OSError as e:
    print("uname-denied", e.errno)'
assert_contains "$T_OUT" "uname-denied 1" "the profile's deny-list, inside gVisor"

t_begin "the output ceiling and an inherited file: everything the command writes, in order"
: > "$W/seq.txt"
{ echo first; sbxctl run -p untrusted -- sh -c 'echo second; echo third'; echo fourth; } >> "$W/seq.txt"
assert_eq "first second third fourth" "$(tr '\n' ' ' < "$W/seq.txt" | sed 's/ $//')" "appended, never over what was there"
{ echo one; sbxctl run -p untrusted -- echo two; echo three; } > "$W/seq2.txt"
assert_eq "one two three" "$(tr '\n' ' ' < "$W/seq2.txt" | sed 's/ $//')" "a file the caller opened for writing"

t_begin "the wall-time ceiling and sbxctl stop end a gVisor run as any other, with the same line and record"
t0=$(date +%s)
assert_rc 124 sbxctl run -p untrusted --timeout 2s -- sh -c 'trap "" TERM; sleep 60'
el=$(( $(date +%s) - t0 ))
[ "$el" -lt 20 ] || _t_err "took ${el}s to stop a 2 s run"
assert_contains "$T_OUT" "sbx: stopped: wall-time limit 2s reached — make it faster or pass --timeout up to 1h"
assert_eq "timeout" "$(record_get "$(last_run_id)" .stop_reason)" "stop_reason"
# stopped while runsc is still starting, and once the command runs: cancelled both times, never refused
for when in starting running; do
  : > "$W/stop.out"
  sbxctl run -p untrusted -- sh -c 'echo started; exec sleep 60' > "$W/stop.out" 2>&1 &
  spid=$!
  id=""
  for _ in $(seq 200); do
    id=$(sbxctl list --no-legend 2>/dev/null | awk '$3 == "running" { print $1 }' | tail -n 1)
    [ -n "$id" ] && { [ "$when" = starting ] || grep -q started "$W/stop.out"; } && break
    sleep 0.05
  done
  if [ -z "$id" ]; then
    kill "$spid" 2>/dev/null; _t_err "the gVisor run never showed as running"; continue
  fi
  assert_rc 0 sbxctl stop "$id"
  wait "$spid"
  reason=$(record_get "$id" .stop_reason)
  # stopped that early, the unit may not have finished starting (start-failed), as in the kernel tier
  [ "$reason" = cancelled ] || { [ "$when" = starting ] && [ "$reason" = start-failed ]; } ||
    _t_err "the stop reason of a gVisor run stopped while $when: '$reason'"
  assert_eq true "$(record_get "$id" .cleanup.completed)" "its cleanup"
done
assert_clean

t_begin "a sandbox of the gVisor tier is refused with one line, nothing left"
before=$(systemctl list-units --all --no-legend 'sbx-*' | wc -l)
assert_rc 125 sbxctl create -p untrusted
assert_contains "$T_OUT" "process.isolation \"gvisor\" runs one command per run"
assert_eq "$before" "$(systemctl list-units --all --no-legend 'sbx-*' | wc -l)" "no unit left"

t_begin "runsc missing or unable to start is a refusal (123) with the reason, not the command's status"
# runsc's platform traces its own stubs: units of a profile whose ptrace is taken away again (a drop-in of
# the test's own) cannot start it
mkdir -p /run/systemd/system/sbx-gvdeny-.service.d
printf '[Service]\nSystemCallFilter=~ptrace\n' > /run/systemd/system/sbx-gvdeny-.service.d/90-test.conf
t_on_exit "rm -rf /run/systemd/system/sbx-gvdeny-.service.d; systemctl daemon-reload"
systemctl daemon-reload
assert_rc 123 sbxctl run -p gvdeny -- true
assert_contains "$T_OUT" "runsc could not start the command"
id=$(last_run_id)
assert_eq "refused" "$(record_get "$id" .stop_reason)" "record: refused"
assert_eq "null" "$(record_get "$id" .runsc_version)" "no runsc_version for a command that never ran"
# runsc missing from the run's view (InaccessiblePaths= of a drop-in): refused before anything starts
printf '[Service]\nInaccessiblePaths=/usr/bin/runsc\n' > /run/systemd/system/sbx-gvdeny-.service.d/90-test.conf
systemctl daemon-reload
assert_rc 123 sbxctl run -p gvdeny -- true
assert_contains "$T_OUT" "process.isolation \"gvisor\": /usr/bin/runsc cannot be run"
assert_contains "$T_OUT" "apt-get install runsc"
rm -rf /run/systemd/system/sbx-gvdeny-.service.d; systemctl daemon-reload

t_begin "a missing command: the same status and line as in the kernel tier"
assert_rc 127 sbxctl run -- /nonexistent/cmd
kernel_line=$T_OUT
assert_rc 127 sbxctl run -p untrusted -- /nonexistent/cmd
assert_contains "$T_OUT" "sbx: /nonexistent/cmd: command not found"
assert_contains "$kernel_line" "sbx: /nonexistent/cmd: command not found"
assert_rc 127 sbxctl run -p untrusted -- no-such-command-sbx
assert_contains "$T_OUT" "sbx: no-such-command-sbx: command not found"
# a file that is not executable (mode 0644, in the workspace)
chmod 0644 "$W/ws/in.txt"
assert_rc 126 sbxctl run -p untrusted --workspace "$W/ws" -- ./in.txt
assert_contains "$T_OUT" "sbx: ./in.txt: Permission denied"
assert_rc 126 sbxctl run --workspace "$W/ws" -- ./in.txt
assert_contains "$T_OUT" "sbx: ./in.txt: Permission denied" "the kernel tier says the same"

t_summary
