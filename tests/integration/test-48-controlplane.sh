#!/usr/bin/env bash
# Tenancy and the control plane, attacked from inside: two users (tenants) each have a sandbox with a
# workspace under /srv; from inside A's, tests/integration/cp-probe.py tries to reach sbxd's API and
# systemd's (the system bus, systemd's private and notify sockets, by path, abstract name and /proc),
# B's processes (/proc, signals, ptrace, pidfd), B's cgroup, workspace and HOME. Every attempt must fail
# with the errno the boundary gives; controls from the host show the targets are there. Then A's command
# kills everything it can (kill -9 -1): its own sandbox ends with a complete record, B's goes on.
# sbxd's own socket, from the host: a client that forges its messages' SENDER and sends signals cannot
# act on another tenant's run, finds only a run's methods there, and one uid's connections are bounded.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
PROBE=$(cd "$(dirname "$0")" && pwd)/cp-probe.py
UA=sbxt-cpa UB=sbxt-cpb
SECRET=sbxt-cp-secret-$$
ABSTRACT=sbxt-cp-abstract-$$

# the two tenants: users of their own, removed at the end (the testbed's root is a throw-away overlay)
for u in "$UA" "$UB"; do
  id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$u" ||
    { t_begin "two users"; t_fail "useradd $u failed"; t_summary; }
done
t_on_exit "userdel $UA 2>/dev/null; userdel $UB 2>/dev/null"
# workspaces outside /home, /tmp and /var/tmp, readable by everyone as their owners made them
W=$(mktemp -d /srv/sbxt-cp.XXXXXX); chmod 0755 "$W"; t_on_exit "rm -rf '$W'"
mkdir -p "$W/a" "$W/b"; chown "$UA:" "$W/a"; chown "$UB:" "$W/b"; chmod 0755 "$W/a" "$W/b"
echo "B-HOST-FILE" > "$W/b/$SECRET"; chown "$UB:" "$W/b/$SECRET"; chmod 0644 "$W/b/$SECRET"
SBS=()
t_on_exit 'for s in "${SBS[@]}"; do sbxctl rm "$s" >/dev/null 2>&1; done'
# a listening abstract socket of the host, and connections to the host's sockets as controls
$PY -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(); time.sleep(600)' "$ABSTRACT" &
lpid=$!
t_on_exit "kill $lpid 2>/dev/null"
as_a() { runuser -u "$UA" -- "$@"; }
as_b() { runuser -u "$UB" -- "$@"; }
line() { printf '%s\n' "$PROBE_OUT" | sed -n "s/^$1 //p"; }   # NAME: the probe's result for NAME
ex() {   # NAME WANT: the probe's result for NAME is WANT
  local got
  got=$(line "$1")
  [ "$got" = "$2" ] && return 0
  _t_err "probe '$1' gave '${got:-nothing}', expected '$2'"
}

t_begin "setup: tenant B's sandbox holds a workspace, a file in HOME and a process of its own"
assert_rc 0 as_b sbxctl create --detach --workspace "$W/b" --name sbxt-cp-b
B=$T_OUT; SBS+=("$B")
assert_match "$B" '^[0-9a-f]{32}$' "B's sandbox id"
# the process makes itself a session of its own (so it outlives its exec); wait until it has
assert_rc 0 as_b sbxctl exec "$B" -- sh -c "echo B-RUN-FILE > run-$SECRET; echo B-HOME > ~/$SECRET; \
  setsid sleep 600 </dev/null >/dev/null 2>&1 & p=\$!; \
  while [ \"\$(cut -d' ' -f6 /proc/\$p/stat)\" != \$p ]; do sleep 0.1; done; echo \$p"
BPID=$(printf '%s\n' "$T_OUT" | tail -n 1)
BUNIT=$(record_get "$B" .unit)
BHELPER=$(systemctl show -P MainPID "$BUNIT")
assert_match "$BPID" '^[0-9]+$' "B's process"
assert_eq sleep "$(cat "/proc/$BPID/comm" 2>/dev/null)" "B's process on the host"
assert_eq sbx-exec "$(cat "/proc/$BHELPER/comm" 2>/dev/null)" "B's helper on the host"
# the host (root) sees what A will look for: the controls of the cases below
assert_file "/sys/fs/cgroup/sbx.slice/sbx-offline.slice/$BUNIT" "B's cgroup on the host"
assert_file "$W/b/run-$SECRET" "the file B's command wrote"
assert_rc 0 $PY -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect("\0" + sys.argv[1])' "$ABSTRACT"
assert_rc 0 $PY -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("/run/dbus/system_bus_socket")'

t_begin "a workspace in use is closed to everyone but its run (mode 0700 owned by the run's user)"
assert_eq "700" "$(stat -c %a "$W/b")" "mode of B's workspace while its sandbox runs"
assert_ne "$(id -u "$UB")" "$(stat -c %u "$W/b")" "owner of B's workspace while its sandbox runs"
assert_rc 1 as_a cat "$W/b/$SECRET"
assert_contains "$T_OUT" "Permission denied" "user A on the host reads B's workspace"

t_begin "setup: tenant A's sandbox runs the probe"
assert_rc 0 as_a sbxctl create --detach --workspace "$W/a" --name sbxt-cp-a
A=$T_OUT; SBS+=("$A")
AUNIT=$(record_get "$A" .unit)
jbefore=$(journalctl _PID=1 -o cat --no-pager 2>/dev/null | grep -c "reception only permitted for main PID")
assert_rc 0 as_a sbxctl exec "$A" -- $PY - run="$B" pid="$BPID" helper="$BHELPER" ws="$W/b" file="$SECRET" \
  abstract="$ABSTRACT" < "$PROBE"
PROBE_OUT=$T_OUT
t_log "$(printf '%s\n' "$PROBE_OUT" | tr '\n' ';')"
assert_contains "$PROBE_OUT" "caches " "the probe's last line"

t_begin "the system bus, sbxd's own socket, systemd's private socket and the journal: not there by any path"
for n in bus bus-var systemd-private journal journal-stdout dev-log bus-via-proc1 sbxd-socket sbxd-socket-via-proc1; do
  ex "path-$n" ENOENT
done

t_begin "abstract sockets of the host: another network namespace"
ex abstract-host ECONNREFUSED
ex proc-net-unix-host-abstract absent
ex proc-net-unix-bus absent

t_begin "sbxd's API and systemd's: the clients inside fail to connect"
ex client-sbxctl exit-123
ex client-busctl exit-1

t_begin "systemd's notify socket: no datagram socket to send with (EACCES), nothing logged by PID 1"
ex notify-present yes
for n in notify-dgram notify-dgram-flags notify-dgram-high-bits notify-socketpair notify-flood; do ex "$n" EACCES; done
ex notify-stream EPROTOTYPE
ex notify-seqpacket EPROTOTYPE
ex notify-stream-sendto ENOTSUP   # EOPNOTSUPP, the same number
jafter=$(journalctl _PID=1 -o cat --no-pager 2>/dev/null | grep -c "reception only permitted for main PID")
assert_eq "$jbefore" "$jafter" "PID 1's log lines about refused notifications"

t_begin "the cgroup tree: only the sandbox's own cgroup, read-only, limits readable"
ex cgroup-units-seen "$AUNIT"
ex cgroup-other-run absent
ex cgroup-other-run-dir ENOENT
ex cgroup-system-slice ENOENT
# what the host reads there (ENOENT in the native lane: no memory or pids controller)
host_cg() { cat "/sys/fs/cgroup/sbx.slice/sbx-offline.slice/$AUNIT/$1" 2>/dev/null || echo ENOENT; }
ex cgroup-own-memory-max "$(host_cg memory.max)"
ex cgroup-own-pids-max "$(host_cg pids.max)"
ex cgroup-write-procs EROFS
ex cgroup-write-root-procs EROFS
ex cgroup-mkdir EROFS
ex mountinfo-other-run absent

t_begin "/proc: other tenants' processes, the helpers and PID 1 are invisible"
ex proc-foreign-uids none
for p in other-cmd other-helper pid1; do
  for what in status root environ; do ex "proc-$p-$what" ENOENT; done
done

t_begin "signals, ptrace, pidfd and process_vm_readv to another tenant's processes: EPERM"
for p in other-cmd other-helper; do
  for what in kill0 kill9 ptrace pidfd-kill vmread; do ex "$what-$p" EPERM; done
done
assert_eq sleep "$(cat "/proc/$BPID/comm" 2>/dev/null)" "B's process after the attempts"

t_begin "another tenant's workspace and HOME: closed (EACCES) and out of sight"
ex ws-list EACCES
ex ws-read EACCES
ex ws-stat-file EACCES
ex home-other-file absent
ex find-other-files none
ex caches EACCES

t_begin "kill -9 -1 in A's sandbox: B's sandbox and process live on; A's sandbox ends with a complete record"
as_a sbxctl exec "$A" -- sh -c 'kill -9 -1; sleep 5' > /dev/null 2>&1
rc=$?
assert_ne 0 "$rc" "exit status of the exec that killed its sandbox"
for _ in $(seq 100); do [ "$(record_get "$A" .state)" = finished ] && break; sleep 0.2; done
assert_eq finished "$(record_get "$A" .state)" "state of A's sandbox"
assert_eq signal "$(record_get "$A" .stop_reason)" "stop_reason of A's sandbox (its helper was killed)"
assert_eq true "$(record_get "$A" .cleanup.completed)" "cleanup of A's sandbox"
assert_eq lost "$(record_get "$A" '.sandbox.execs[-1].result')" "the exec that killed the helper"
assert_eq "$(id -u "$UA"):755" "$(stat -c %u:%a "$W/a")" "A's workspace: owner and mode given back"
assert_eq sleep "$(cat "/proc/$BPID/comm" 2>/dev/null)" "B's process"
assert_eq running "$(record_get "$B" .state)" "B's sandbox"
assert_rc 0 as_b sbxctl exec "$B" -- cat "run-$SECRET"
assert_contains "$T_OUT" "B-RUN-FILE" "B's workspace seen by B's sandbox"

t_begin "B's sandbox removed: its workspace goes back to B with its mode; nothing is left"
assert_rc 0 as_b sbxctl rm "$B"
for _ in $(seq 100); do [ "$(record_get "$B" .state)" = finished ] && break; sleep 0.2; done
assert_eq cancelled "$(record_get "$B" .stop_reason)" "stop_reason of B's sandbox"
assert_eq "$(id -u "$UB"):755" "$(stat -c %u:%a "$W/b")" "B's workspace: owner and mode"
assert_eq "$(id -u "$UB"):644" "$(stat -c %u:%a "$W/b/run-$SECRET")" "the file B's run wrote"
kill -0 "$BPID" 2>/dev/null && _t_err "B's process outlived its sandbox"
assert_clean

# ---- sbxd's own socket (/run/sbx/bus, docs/dbus.md): D-Bus peer to peer, attacked by a client that writes
# its messages itself (direct-client.py)
DIRECT=$(cd "$(dirname "$0")" && pwd)/direct-client.py
assert_eq "srw-rw-rw- root root" "$(stat -c '%A %U %G' /run/sbx/bus 2>&1)" "sbxd's own socket"

t_begin "sbxd's own socket: the caller is the uid the kernel gives, whatever its messages say"
before=$(record_count)
as_b sbxctl run -- sleep 300 > "$W/ob" 2>&1 & bcpid=$!
BR=$(sbx_wait_new_run "$before" "$bcpid") && sbx_wait_active "$BR" || _t_err "B's run did not start: $(cat "$W/ob")"
BRUNIT=$(record_get "$BR" .unit)
for sender in "" org.freedesktop.DBus :1.1 org.freedesktop.systemd1; do
  assert_rc 0 as_a $PY "$DIRECT" stop "$BR" $sender
  assert_eq "error org.sbx.Error.NoSuchRun" "$T_OUT" "A's Stop of B's run, SENDER header '${sender:-none}'"
done
assert_rc 0 as_a $PY "$DIRECT" signals "$BRUNIT" direct.1
assert_eq ok "$T_OUT" "the connection after A's forged signals"
sleep 1
assert_eq running "$(record_get "$BR" .state)" "B's run after A's Stops and forged signals"
assert_rc 0 as_b $PY "$DIRECT" stop "$BR"
assert_eq ok "$T_OUT" "B's own Stop over the socket"
wait "$bcpid"; rc=$?
assert_eq 143 "$rc" "B's client, its run stopped"
assert_eq cancelled "$(record_get "$BR" .stop_reason)" "B's run"
assert_clean

t_begin "sbxd's own socket: a run's and an exec's calls only; the rest of the interface is on the system bus"
for m in ListAll CollectGarbage List Attach Get CreateSandbox RemoveSandbox AddSecret ImportImage; do
  assert_rc 0 as_a $PY "$DIRECT" call "$m"
  assert_eq "error org.freedesktop.DBus.Error.UnknownMethod" "$T_OUT" "$m on sbxd's own socket"
done
# a string that is not UTF-8 (which sbxctl never sends) is refused, naming the key, and nothing starts
before=$(record_count)
assert_rc 0 as_a $PY "$DIRECT" badstring workspace
assert_eq "error org.sbx.Error.InvalidRequest: workspace: not a valid string (a D-Bus string is UTF-8)" "$T_OUT" \
  "Run with a workspace of Latin-1 bytes"
assert_eq "$before" "$(record_count)" "records after it"
# a call that comes in the same read as the handshake's last line is answered too (not left in a buffer)
assert_rc 0 as_a $PY "$DIRECT" pipelined List
assert_eq "error org.freedesktop.DBus.Error.UnknownMethod" "$T_OUT" "a call written with BEGIN"

t_begin "sbxd's own socket: one uid's connections are bounded (64); its runs take the system bus, others' the socket"
REL=$W/release; rm -f "$REL"
as_a $PY "$DIRECT" flood 65 "$REL" > "$W/flood" 2>&1 & fpid=$!
t_on_exit "touch '$REL'"
for _ in $(seq 300); do [ -s "$W/flood" ] && break; sleep 0.1; done
assert_eq "accepted 64 refused 1" "$(cat "$W/flood")" "A's 65 connections"
assert_rc 0 as_a env SBX_LOG_LEVEL=debug sbxctl run -- echo a-over-the-bus
assert_contains "$T_OUT" "/run/sbx/bus not usable: the system bus" "A's run while A holds 64"
assert_contains "$T_OUT" "a-over-the-bus"
assert_rc 0 as_b env SBX_LOG_LEVEL=debug sbxctl run -- echo b-over-the-socket
assert_contains "$T_OUT" "connected to sbxd at /run/sbx/bus" "B's run while A holds 64"
assert_contains "$T_OUT" "b-over-the-socket"
touch "$REL"; wait "$fpid"
assert_rc 0 as_a env SBX_LOG_LEVEL=debug sbxctl run -- true
assert_contains "$T_OUT" "connected to sbxd at /run/sbx/bus" "A's run once its connections are closed"
assert_clean

t_begin "sbxd's own socket: connections that do not finish their handshake are closed after 10 s, a finished one is not"
as_a $PY "$DIRECT" silent 63 40 > "$W/silent" 2>&1 & spid=$!
for _ in $(seq 300); do [ -s "$W/silent" ] && break; sleep 0.1; done
assert_eq "open 63" "$(head -n 1 "$W/silent")" "A's silent connections (and one through its handshake: 64)"
# A's 64 slots are held (63 silent, 1 handshaken) (sbxctl connects at once: well within the 10 s)
assert_rc 0 as_a env SBX_LOG_LEVEL=debug sbxctl run -- echo a-while-held
assert_contains "$T_OUT" "/run/sbx/bus not usable: the system bus" "A's run while its 64 connections are held"
wait "$spid"
line=$(tail -n 1 "$W/silent")
assert_contains "$line" "closed 63 of 63 after" "the silent connections"
assert_contains "$line" "handshaken: ok" "the connection that finished its handshake, after the deadline"
assert_match "$line" "after (9|[1-3][0-9]) s" "closed at the deadline, not before it"
assert_rc 0 as_a env SBX_LOG_LEVEL=debug sbxctl run -- echo a-after
assert_contains "$T_OUT" "connected to sbxd at /run/sbx/bus" "A's run once the silent connections are closed"
assert_contains "$T_OUT" "a-after"
assert_clean

t_begin "the workspace's mode comes back after a run that changed it and after a hand-over that failed"
mkdir -p "$W/c"; touch "$W/c/locked"; chown -R "$UA:" "$W/c"; chmod 0751 "$W/c"
assert_rc 0 as_a sbxctl run --workspace "$W/c" -- sh -c 'stat -c %a .; chmod 0777 .'
assert_eq 700 "$T_OUT" "mode inside the run"
assert_eq "$(id -u "$UA"):751" "$(stat -c %u:%a "$W/c")" "after a run that made it 0777"
if chattr +i "$W/c/locked" 2>/dev/null; then
  t_on_exit "chattr -i '$W/c/locked' 2>/dev/null"
  assert_rc 123 as_a sbxctl run --workspace "$W/c" -- true
  assert_eq "$(id -u "$UA"):751" "$(stat -c %u:%a "$W/c")" "after a hand-over that failed"
  chattr -i "$W/c/locked"
else
  t_log "chattr +i is not supported on $(stat -f -c %T "$W"): the failed hand-over is not tried"
fi
assert_clean

t_summary
