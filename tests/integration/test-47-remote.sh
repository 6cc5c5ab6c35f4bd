#!/usr/bin/env bash
# Other machines: sbxctl -H (D-Bus over ssh, as systemctl -H) and -M (a local container). The test
# starts an sshd of its own on 127.0.0.1 (a transient unit, its own host key, root's login by a key it
# generates) and an ssh_config drop-in naming it "sbxt47", so that -H sbxt47 reaches this machine's sbxd
# the way it would reach another's: list, show, stop, create, rm over sd-bus through ssh and
# systemd-stdio-bridge; run and exec through sbxctl run on the other end of ssh (D-Bus over ssh cannot
# carry the file descriptors they pass). -M: a container booted from this machine's root with
# systemd-nspawn and registered with systemd-machined, when that works here.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_root || t_summary

H=sbxt47                                   # the ssh_config alias of the test's sshd
SSHD_UNIT=t47-sshd-$$.service              # not sbx-*: sbx_leftovers would count it
CTR_UNIT=t47-nspawn-$$.service
CTR=sbxt47c$$                              # the container's machine name
CONF=/etc/ssh/ssh_config.d/sbxt47-$$.conf  # read by root's ssh (Debian's ssh_config includes the directory)
T=$(mktemp -d /var/tmp/sbxt47.XXXXXX)
SBS=()                                     # sandboxes to remove if a case failed half-way

# end the multiplexing ssh masters (processes of the test's own: one per host alias)
masters_exit() {
  local c
  for c in "$T"/cm-*; do [ -S "$c" ] && ssh -o ControlPath="$c" -O exit "$H" >/dev/null 2>&1; done
  true
}
cleanup() {
  local s
  masters_exit
  for s in "${SBS[@]}"; do sbxctl rm "$s" >/dev/null 2>&1; done
  systemctl stop "$CTR_UNIT" >/dev/null 2>&1
  systemctl stop "$SSHD_UNIT" >/dev/null 2>&1
  rm -f "$CONF"
  rm -rf "$T"
}
t_on_exit cleanup

# ssh_ok: the test's sshd lets root in with the test's key
ssh_ok() { ssh -o ConnectTimeout=10 "$H" true >/dev/null 2>&1; }
# one_line TEXT WHAT: TEXT is a single line
one_line() { [ "$(printf '%s\n' "$1" | wc -l)" = 1 ] || _t_err "${2:-the error} is not one line: $1"; }
# sb_wait_gone ID: until the sandbox's record is finished (max ~30 s)
sb_wait_gone() {
  local _
  for _ in $(seq 300); do
    [ "$(record_get "$1" .state 2>/dev/null)" = finished ] && return 0
    sleep 0.1
  done
  return 1
}

t_begin "an sshd of the test's own on 127.0.0.1 lets root in with the test's key"
for c in /usr/sbin/sshd ssh ssh-keygen systemd-stdio-bridge; do
  t_require_cmd "$c" || t_summary
done
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -C sbxt47-host -f "$T/host_key"
ssh-keygen -q -t ed25519 -N '' -C sbxt47-client -f "$T/client_key"
cp "$T/client_key.pub" "$T/authorized_keys"
cat > "$T/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $T/host_key
PidFile none
AuthorizedKeysFile $T/authorized_keys
# the keys live in a directory under /var/tmp (world-writable): not a user's home
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
# a testbed build's sbxctl on the other side goes without its "ceilings not enforced" line, as here (lib.sh)
SetEnv SBX_TESTBED_QUIET=1
EOF
# the alias; 127.0.0.1 itself (for the HOST:PORT form) gets the key but not the port
cat > "$CONF" <<EOF
Host $H
    HostName 127.0.0.1
    Port $PORT
Host $H 127.0.0.1
    User root
    IdentityFile $T/client_key
    IdentitiesOnly yes
    # one connection per host, its sessions multiplexed (an ssh handshake takes seconds under emulation)
    ControlMaster auto
    ControlPath $T/cm-%C
    ControlPersist 300
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    BatchMode yes
    LogLevel ERROR
EOF
# RuntimeDirectory=sshd: its privilege separation directory /run/sshd, gone with the unit
assert_rc 0 systemd-run --quiet --unit="$SSHD_UNIT" --collect -p RuntimeDirectory=sshd \
  /usr/sbin/sshd -D -e -f "$T/sshd_config"
for _ in $(seq 100); do ssh_ok && break; sleep 0.2; done
ssh_ok || { t_fail "cannot log in: $(ssh -o ConnectTimeout=10 "$H" true 2>&1 | tail -n 3); $(journalctl -q -u "$SSHD_UNIT" | tail -n 5)"; t_summary; }
# its listening sockets (local addresses): one, on loopback
assert_eq "127.0.0.1:$PORT" "$(ss -Hltn "sport = :$PORT" | awk '{print $4}')" "sshd's sockets"

# Each ssh connection costs seconds in an emulated VM: one sbxctl -H per point made.
t_begin "-H list (sd-bus over ssh) is this machine's list; --all and --json too, with -H USER@HOST:PORT"
# at least one record; the lists compared are taken once no run is between its Exited and Finished
# (a run answered at Exited becomes "finished" while the list goes over ssh)
assert_rc 0 sbxctl run --wait-cleanup -- true
for _ in $(seq 1 300); do
  sbxctl --no-legend list --all | awk '$3 == "exited" { f = 1 } END { exit !f }' || break
  sleep 0.1
done
local_list=$(sbxctl --no-legend list)
t0=$(date +%s%N)
assert_rc 0 sbxctl -H "$H" --no-legend list
t_log "one list over -H: $(( ($(date +%s%N) - t0) / 1000000 )) ms (ssh, systemd-stdio-bridge, List)"
assert_eq "$local_list" "$T_OUT" "the list over -H"
# the port and user of the host argument (the ssh_config gives 127.0.0.1 the key, not the port)
assert_rc 0 sbxctl list --host="root@127.0.0.1:$PORT" --all --json
assert_eq "$(sbxctl list --all --json)" "$T_OUT" "list --all --json over -H root@127.0.0.1:PORT"

t_begin "-H create --detach, show, exec, rm"
assert_rc 0 sbxctl -H "$H" create --detach --name t47-sb --idle-timeout 5min
sb=$T_OUT; SBS+=("$sb")
assert_match "$sb" '^[0-9a-f]{32}$' "the sandbox id"
assert_eq running "$(record_get "$sb" .state)" "its record here"
assert_eq true "$(record_get "$sb" .sandbox.detach)" "detached"
assert_rc 0 sbxctl -H "$H" show --json "$sb"
assert_eq "$(sbxctl show --json "$sb")" "$T_OUT" "show --json over -H"
sbxctl -H "$H" exec t47-sb -- sh -c 'echo to-out; echo to-err >&2; exit 4' > "$T/x.out" 2> "$T/x.err"
assert_eq 4 "$?" "the exit status of an exec over -H"
assert_eq "to-out" "$(cat "$T/x.out")" "stdout of an exec over -H"
assert_eq "to-err" "$(cat "$T/x.err")" "stderr of an exec over -H"
out=$(echo "from stdin" | sbxctl -H "$H" exec --timeout 5min "$sb" -- cat)
assert_eq "from stdin" "$out" "stdin of an exec over -H"
assert_rc 0 sbxctl -H "$H" rm t47-sb
sb_wait_gone "$sb" || _t_err "the sandbox did not end"
assert_eq cancelled "$(record_get "$sb" .stop_reason)" "stop_reason"
assert_eq 2 "$(record_get "$sb" .sandbox.execs_total)" "execs in the record"

t_begin "-H run: the command's output, exit status, stdin, arguments and streams byte for byte"
assert_rc 3 sbxctl -H "$H" run -- sh -c 'echo hi; exit 3'
assert_eq hi "$T_OUT" "output"
run=$(last_run_id)
assert_eq 3 "$(record_get "$run" .exit.code)" "the record of the run (on the other end, here)"
# every word reaches the command as it was: quotes, $, globs, newlines, empty words, options
# shellcheck disable=SC2016,SC1003
assert_rc 0 sbxctl -H "$H" run -- printf '<%s>' "a b" "it's" '$HOME' '*' '' "$(printf 'l1\nl2')" -H x '\'
assert_eq "<a b><it's><\$HOME><*><><l1
l2><-H><x><\\>" "$T_OUT" "the arguments"
# binary stdin to stdout, stderr apart (no terminal: no CR/LF translation, no streams merged)
{ head -c 65536 /dev/urandom; printf 'a\r\nb'; } > "$T/bin"
sbxctl -H "$H" run --timeout 5min -- sh -c 'cat; printf e >&2' < "$T/bin" > "$T/bin.out" 2> "$T/bin.err"
cmp -s "$T/bin" "$T/bin.out" || _t_err "binary stdin to stdout over -H is not byte for byte"
assert_eq e "$(cat "$T/bin.err")" "stderr, apart from stdout"
# refused there, refused here: the status of sbxctl on the other end is ours (and USER@HOST:PORT)
assert_rc 125 sbxctl -H "root@127.0.0.1:$PORT" run --profile no-such-profile -- true
assert_contains "$T_OUT" "no-such-profile"
one_line "$T_OUT" "the refusal"

t_begin "-H run on a terminal: a terminal on the other end (ssh -t), and Ctrl-C cancels the run (130)"
# sbxctl on a pseudo-terminal of its own; "ready" from the command, then Ctrl-C typed on that terminal
cat > "$T/ctrl-c.py" <<'EOF'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    # -T: the command gets sbxctl's terminal (ssh's) as it is, and Ctrl-C reaches sbxctl (with a terminal
    # of the run's own it would reach the command: test-71)
    os.execvp("sbxctl", ["sbxctl", "-H", sys.argv[1], "run", "-T", "--", "sh", "-c",
                         "test -t 0 && test -t 1 && echo on-a-tty; echo ready; sleep 120"])
out, sent, deadline = b"", False, time.time() + 180
while time.time() < deadline:
    if select.select([fd], [], [], 1)[0]:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if not sent and b"ready" in out:
        os.write(fd, b"\x03")
        sent = True
else:
    os.kill(pid, 9)
status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
print("status %d" % status)
EOF
before=$(record_count)
t_run /usr/bin/python3 "$T/ctrl-c.py" "$H"
assert_contains "$T_OUT" "on-a-tty" "the command's stdin and stdout"
assert_contains "$T_OUT" "status 130" "sbxctl after Ctrl-C"
assert_not_contains "$T_OUT" "Connection to" "what ssh says"
run=$(last_run_id)
if [ "$(record_count)" -gt "$before" ]; then
  assert_eq cancelled "$(record_get "$run" .stop_reason)" "stop_reason of the run"
else
  _t_err "no run was recorded"
fi

t_begin "-H stop stops a run here; the end of the ssh connection stops a run over -H"
sbx_run_bg "$T/bg.out" -- sleep 300 || true
if [ -n "${RUN:-}" ]; then
  assert_rc 0 sbxctl -H "$H" stop "$RUN"
  wait "${CPID:?}"; rc=$?
  assert_eq 143 "$rc" "the local run's client after stop over -H"
  assert_eq cancelled "$(record_get "$RUN" .stop_reason)" "stop_reason"
fi
# sshd signals nothing to a command without a terminal when the connection ends; sbxctl on the other
# end sees its stdout lose its reader
before=$(record_count)
sbxctl -H "$H" run -- sleep 300 > "$T/hup.out" 2>&1 < /dev/null &
cpid=$!
if run=$(sbx_wait_new_run "$before" "$cpid") && sbx_wait_active "$run"; then
  kill -TERM "$cpid"; wait "$cpid" 2>/dev/null
  for _ in $(seq 150); do [ "$(record_get "$run" .state)" = finished ] && break; sleep 0.1; done
  assert_eq finished "$(record_get "$run" .state)" "the run after its ssh connection ended"
  assert_eq cancelled "$(record_get "$run" .stop_reason)" "stop_reason"
else
  _t_err "no run appeared: $(cat "$T/hup.out")"
  kill "$cpid" 2>/dev/null
fi
# an exec over -H whose connection ends: its command gets SIGHUP
assert_rc 0 sbxctl create --detach --name t47-hup
hsb=$T_OUT; SBS+=("$hsb")
sbxctl -H "$H" exec t47-hup -- sleep 311 > "$T/hup2.out" 2>&1 < /dev/null &
cpid=$!
for _ in $(seq 600); do pgrep -f '^sleep 311$' >/dev/null && break; sleep 0.1; done
if pgrep -f '^sleep 311$' >/dev/null; then
  kill -TERM "$cpid"; wait "$cpid" 2>/dev/null
  for _ in $(seq 150); do pgrep -f '^sleep 311$' >/dev/null || break; sleep 0.1; done
  assert_eq "" "$(pgrep -f '^sleep 311$')" "the exec's command after its ssh connection ended"
  assert_rc 0 sbxctl rm t47-hup
  sb_wait_gone "$hsb" || _t_err "the sandbox did not end"
  assert_eq "signal 1" "$(record_get "$hsb" '.sandbox.execs[0] | "\(.result) \(.exit_signal)"')" "the exec in the record"
else
  _t_err "the exec never started: $(cat "$T/hup2.out")"
  kill "$cpid" 2>/dev/null
fi

t_begin "-H create without --detach: the sandbox lives as long as sbxctl (its connection through ssh)"
sbxctl -H "$H" create > "$T/create.out" 2>&1 < /dev/null &
cpid=$!
for _ in $(seq 300); do [ -s "$T/create.out" ] && break; sleep 0.1; done
sb=$(head -n 1 "$T/create.out"); SBS+=("$sb")
assert_match "$sb" '^[0-9a-f]{32}$' "the id printed"
assert_rc 0 sbxctl -H "$H" exec "$sb" -- true
assert_eq running "$(record_get "$sb" .state)" "while sbxctl create waits"
kill -INT "$cpid"; wait "$cpid"; rc=$?
assert_eq 0 "$rc" "sbxctl create after Ctrl-C"
sb_wait_gone "$sb" || _t_err "the sandbox outlived sbxctl create -H"
assert_eq cancelled "$(record_get "$sb" .stop_reason)" "stop_reason"
# its connection lost (ssh killed): the sandbox ends with it, and sbxctl says so
sbxctl -H "$H" create > "$T/create2.out" 2>&1 < /dev/null &
cpid=$!
for _ in $(seq 300); do [ -s "$T/create2.out" ] && break; sleep 0.1; done
sb=$(head -n 1 "$T/create2.out"); SBS+=("$sb")
assert_match "$sb" '^[0-9a-f]{32}$' "the id printed"
sshpid=$(pgrep -P "$cpid" -x ssh)
if [ -n "$sshpid" ]; then
  kill -KILL "$sshpid"; wait "$cpid"; rc=$?
  assert_eq 255 "$rc" "sbxctl create when its connection is lost"
  assert_contains "$(tail -n 1 "$T/create2.out")" "ended with it"
  sb_wait_gone "$sb" || _t_err "the sandbox outlived its connection"
else
  _t_err "no ssh under sbxctl create -H"
  kill "$cpid"; wait "$cpid"
fi

t_begin "-H with a host that cannot be reached, or bad input: one line, a distinct exit status"
assert_rc 255 sbxctl -H root@127.0.0.1:1 list
assert_match "$T_OUT" '^sbxctl: cannot reach the system bus of host root@127\.0\.0\.1:1 over ssh: .*[Cc]onnection refused'
one_line "$T_OUT"
assert_rc 255 sbxctl -H root@127.0.0.1:1 run -- true
assert_contains "$T_OUT" "Connection refused"
one_line "$T_OUT"
assert_rc 255 sbxctl -H root@127.0.0.1:1 exec some-sandbox -- true
one_line "$T_OUT"
for bad in '' '-oProxyCommand=touch /tmp/x' 'a b' 'host:port' 'host:70000' 'user@' '@host' '[::1' 'host/-bad'; do
  assert_rc 125 sbxctl -H "$bad" list
  one_line "$T_OUT" "-H '$bad'"
done
assert_rc 125 sbxctl -H "$H" -M box list
one_line "$T_OUT"
assert_rc 125 sbxctl -M '' list
assert_rc 125 sbxctl -M 'a/b' list
# profile list, show and check read this machine's files: refused rather than answered from here
for sub in list "show offline" "check /usr/lib/sbx/profiles.d/offline.json"; do
  # shellcheck disable=SC2086
  assert_rc 125 sbxctl -H "$H" profile $sub
  assert_contains "$T_OUT" "of this machine"
  one_line "$T_OUT"
done
# a relative workspace is a path of this machine: not sent to another
assert_rc 125 sbxctl -H "$H" create --detach --workspace relative/dir
one_line "$T_OUT"

t_begin "-M with a machine that does not exist: one line, a distinct exit status"
assert_rc 255 sbxctl -M no-such-machine-t47 list
assert_contains "$T_OUT" "machine no-such-machine-t47 is not running"
one_line "$T_OUT"
assert_rc 255 sbxctl -M no-such-machine-t47 run -- true
one_line "$T_OUT"

t_begin "-M: list, run and exec in a container registered with systemd-machined (fds pass into it)"
ctr_skip=""
if ! command -v systemd-nspawn >/dev/null || ! command -v machinectl >/dev/null; then
  ctr_skip="systemd-nspawn or machinectl not installed"
else
  # This machine's root (sbx installed), under a tmpfs overlay mounted in the unit's own mount namespace
  # (nothing it writes stays), booted to basic.target (D-Bus activation brings sbxd). It shares this
  # machine's network namespace (the VM's has only loopback): with a private one, nspawn gives it a /sys
  # without /sys/firmware and /sys/fs/bpf, and sbxd's unit does not start. CAP_NET_ADMIN and CAP_BPF: sbx
  # attaches its egress programs to its cgroups. testbed-payload.service is the VM testbed's: masked,
  # or the container would run it.
  D=/run/t47-ctr-$$
  cat > "$T/ctr.sh" <<EOF
set -e
mount -t tmpfs -o mode=755 t47rw $D
mkdir $D/upper $D/work $D/root
mount -t overlay -o lowerdir=/,upperdir=$D/upper,workdir=$D/work t47root $D/root
exec systemd-nspawn --quiet --directory=$D/root --machine=$CTR --keep-unit --notify-ready=yes \\
  --console=read-only --capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN \\
  --system-call-filter="bpf landlock_create_ruleset landlock_add_rule landlock_restrict_self" \\
  -b systemd.unit=basic.target systemd.mask=testbed-payload.service systemd.firstboot=off
EOF
  t0=$(date +%s)
  if ! systemd-run --quiet --unit="$CTR_UNIT" --collect -p Type=notify \
      -p TimeoutStartSec=400 -p TimeoutStopSec=90 -p KillMode=mixed -p Delegate=yes -p PrivateMounts=yes \
      -p RuntimeDirectory="${D#/run/}" --setenv=SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 \
      /bin/bash "$T/ctr.sh" > "$T/ctr.out" 2>&1; then
    ctr_skip="the container did not boot here: $(tail -n 2 "$T/ctr.out" | tr '\n' ' ') $(journalctl -q -u "$CTR_UNIT" | tail -n 4 | tr '\n' ' ')"
  elif ! machinectl show "$CTR" >/dev/null 2>&1; then
    ctr_skip="the container is not registered with systemd-machined"
  fi
  t_log "container booted in $(( $(date +%s) - t0 )) s"
fi
if [ -n "$ctr_skip" ]; then
  t_skip "$ctr_skip"
elif assert_rc 0 sbxctl -M "$CTR" --no-legend list; then
  t_run sbxctl --machine="$CTR" run -- sh -c 'echo in-container; exit 3'
  if [ "$T_RC" = 123 ]; then
    # the container's sbxd answers, but cannot run sandboxes in this nesting: say why, pass nothing
    t_skip "sbx cannot run sandboxes inside the container here: $T_OUT"
  else
    assert_eq 3 "$T_RC" "the exit status of a run through -M"
    assert_eq in-container "$T_OUT" "its output"
    crun=$(sbxctl -M "$CTR" --no-legend list | tail -n 1 | awk '{print $1}')
    assert_match "$crun" '^[0-9a-f]{32}$' "the run in the container's list"
    # records are per machine: the container's run is not in this machine's list (the container
    # started with a copy of this machine's records, being booted from its root)
    assert_not_contains "$(sbxctl --no-legend list)" "$crun" "this machine's list"
    out=$(printf 'through a file descriptor' | sbxctl -M "$CTR" run -- cat)
    assert_eq "through a file descriptor" "$out" "stdin passed as a file descriptor into the container"
    assert_rc 0 sbxctl -M "$CTR" create --detach
    csb=$T_OUT
    assert_rc 5 sbxctl -M "$CTR" exec "$csb" -- sh -c 'echo exec-in-container; exit 5'
    assert_eq exec-in-container "$T_OUT" "exec through -M"
    assert_rc 0 sbxctl -M "$CTR" rm "$csb"
    assert_rc 0 sbxctl -M "$CTR" show --json "$crun"
    assert_eq 3 "$(printf '%s' "$T_OUT" | jq -r .exit.code)" "the record of the container's run"
    # a container on another host, -H HOST/MACHINE: systemd-stdio-bridge --machine= there, and for
    # run, sbxctl -M MACHINE there
    assert_rc 0 sbxctl -H "$H/$CTR" --no-legend list
    assert_contains "$T_OUT" "$crun" "the container's list over -H HOST/MACHINE"
    assert_rc 4 sbxctl -H "$H/$CTR" run -- sh -c 'echo via-host; exit 4'
    assert_eq via-host "$T_OUT" "run over -H HOST/MACHINE"
  fi
fi
systemctl stop "$CTR_UNIT" >/dev/null 2>&1

t_begin "nothing is left: runs, sandboxes, the sshd, the container"
sbxctl rm "${SBS[@]}" >/dev/null 2>&1
SBS=()
masters_exit
systemctl stop "$SSHD_UNIT" >/dev/null 2>&1
for _ in $(seq 50); do systemctl is-active -q "$SSHD_UNIT" || break; sleep 0.1; done
assert_ne active "$(systemctl is-active "$SSHD_UNIT" 2>/dev/null)" "the test's sshd"
assert_eq "" "$(ss -Hltn "sport = :$PORT")" "sshd's port"
[ -e /run/sshd ] && _t_err "/run/sshd is left"
assert_ne active "$(systemctl is-active "$CTR_UNIT" 2>/dev/null)" "the container"
[ -e "/run/t47-ctr-$$" ] && _t_err "/run/t47-ctr-$$ is left"
assert_eq "" "$(pgrep -x ssh)" "ssh processes"
assert_clean "after the remote cases"

t_summary
