#!/usr/bin/env bash
# The offline profile's boundary, attacked from inside: files, secrets, sockets, network, privileges.
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3

t_begin "cannot write /usr, /etc, /var or /boot"
assert_rc 0 sbxctl run -- sh -c 'for p in /usr/sbx-x /etc/sbx-x /var/lib/sbx-x /boot/sbx-x /sbx-x; do touch $p 2>/dev/null && echo WROTE $p; done; echo done'
assert_contains "$T_OUT" "done"
assert_not_contains "$T_OUT" "WROTE"
for p in /usr/sbx-x /etc/sbx-x /var/lib/sbx-x /boot/sbx-x /sbx-x; do [ -e $p ] && _t_err "$p exists on the host"; done

t_begin "cannot read /root, /home or another user's files"
mkdir -p /root/.ssh /home/sbxvictim
echo "ROOT-SECRET-123" > /root/.ssh/id_sbxtest; chmod 600 /root/.ssh/id_sbxtest
echo "HOME-SECRET-456" > /home/sbxvictim/secret; chmod 644 /home/sbxvictim/secret
t_on_exit "rm -rf /root/.ssh/id_sbxtest /home/sbxvictim"
assert_rc 0 sbxctl run -- sh -c 'cat /root/.ssh/id_sbxtest /home/sbxvictim/secret 2>&1; echo end'
assert_not_contains "$T_OUT" "ROOT-SECRET-123"
assert_not_contains "$T_OUT" "HOME-SECRET-456"
assert_rc 0 sbxctl run -- sh -c 'echo "root:[$(ls -A /root | tr "\n" " ")] home:[$(ls -A /home | tr "\n" " ")]"'
assert_eq "root:[] home:[sbx ]" "$T_OUT" "what /root and /home show (only the sandbox's own HOME)"
assert_rc 0 sbxctl run -- sh -c 'cat /etc/shadow 2>&1; echo end'
assert_not_contains "$T_OUT" "root:" "/etc/shadow"

t_begin "no host sockets: D-Bus, systemd, container runtimes, /run, /tmp"
mkdir -p /run/containerd /run/podman
$PY - <<'PYEOF' &
import socket, os, time
paths = ["/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock", "/tmp/sbxtest.sock"]
socks = []
for p in paths:
    try: os.unlink(p)
    except FileNotFoundError: pass
    s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o777); s.listen(); socks.append(s)
a = socket.socket(socket.AF_UNIX); a.bind("\0sbxtest-abstract"); a.listen(); socks.append(a)
time.sleep(60)
PYEOF
lpid=$!
t_on_exit "kill $lpid 2>/dev/null; rm -f /run/docker.sock /run/containerd/containerd.sock /run/podman/podman.sock /tmp/sbxtest.sock"
sleep 1
assert_rc 0 sbxctl run -- $PY -c '
import socket
for p in ["/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private",
          "/run/systemd/journal/stdout", "/run/docker.sock", "/var/run/docker.sock",
          "/run/containerd/containerd.sock", "/run/podman/podman.sock", "/tmp/sbxtest.sock", "\0sbxtest-abstract"]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print("CONNECTED", repr(p))
    except OSError as e:
        print("refused", repr(p), e.errno)
'
assert_not_contains "$T_OUT" "CONNECTED"
assert_contains "$T_OUT" "refused '/run/dbus/system_bus_socket'"
# the same listeners are reachable from outside the sandbox (the test can fail)
out=$($PY -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("/run/docker.sock"); print("ok")' 2>&1)
assert_eq "ok" "$out" "control: host can reach its own socket"

t_begin "offline: no TCP/UDP to the host's listeners or any address"
$PY - <<'PYEOF' &
import socket, time
ls = []
for fam, addr in [(socket.AF_INET, ("127.0.0.1", 18431)), (socket.AF_INET6, ("::1", 18432))]:
    s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(addr); s.listen(); ls.append(s)
time.sleep(60)
PYEOF
npid=$!
t_on_exit "kill $npid 2>/dev/null"
sleep 1
out=$($PY -c 'import socket; socket.create_connection(("127.0.0.1", 18431), 2); print("ok")' 2>&1)
assert_eq "ok" "$out" "control: the listener is reachable from the host"
assert_rc 0 sbxctl run -- $PY -c '
import socket
for host, port in [("127.0.0.1", 18431), ("::1", 18432), ("10.0.2.2", 80), ("192.0.2.1", 80)]:
    try:
        socket.create_connection((host, port), 2); print("CONNECTED", host, port)
    except OSError as e:
        print("refused", host, port, e.errno)
import os
print("interfaces", sorted(os.listdir("/sys/class/net")))
'
assert_not_contains "$T_OUT" "CONNECTED"
assert_contains "$T_OUT" "refused 127.0.0.1 18431"
assert_match "$T_OUT" "interfaces \['lo'\]"

t_begin "the environment is clean"
SBX_SECRET_TOKEN=hunter2 AWS_SECRET_ACCESS_KEY=abc assert_rc 0 sbxctl run -- env
assert_not_contains "$T_OUT" "hunter2"
assert_not_contains "$T_OUT" "AWS_SECRET"
assert_not_contains "$T_OUT" "NOTIFY_SOCKET" "the command's environment"
keys=$(printf '%s\n' "$T_OUT" | cut -d= -f1 | sort | tr '\n' ' ')
assert_eq "HOME INVOCATION_ID LANG LOGNAME PATH SYSTEMD_EXEC_PID USER " "$keys" "environment keys"

t_begin "no privilege: namespaces, mount, setuid, ptrace, other processes, kernel"
assert_rc 0 sbxctl run -- sh -c '
unshare -r true 2>/dev/null && echo ESCAPE-userns
unshare -n true 2>/dev/null && echo ESCAPE-netns
mount -t tmpfs none /home/sbx/workspace 2>/dev/null && echo ESCAPE-mount
su -c true 2>/dev/null && echo ESCAPE-su
kill -0 1 2>/dev/null && echo ESCAPE-kill-pid1
cat /proc/1/environ >/dev/null 2>&1 && echo ESCAPE-proc1
echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo ESCAPE-sysctl
ls /proc | grep -c "^[0-9]" ; echo end'
assert_contains "$T_OUT" "end"
assert_not_contains "$T_OUT" "ESCAPE"
# only the sandbox's own processes are visible (helper, sh, ls, grep: a handful, not the host's)
n=$(printf '%s\n' "$T_OUT" | grep -E '^[0-9]+$' | head -1)
[ "${n:-999}" -le 6 ] || _t_err "the sandbox sees $n processes in /proc"
assert_rc 0 sbxctl run -- $PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())   # PTRACE_ATTACH to the helper
'
assert_match "$T_OUT" "ptrace -1 (1|13)" "PTRACE_ATTACH refused"

t_begin "io_uring and setuid-style syscalls are refused"
assert_rc 0 sbxctl run -- $PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print("io_uring_setup", libc.syscall(425, 8, params), ctypes.get_errno())
print("setuid", libc.setuid(0), ctypes.get_errno())
print("chroot", libc.chroot(b"/"), ctypes.get_errno())
'
assert_match "$T_OUT" "io_uring_setup -1 1" "io_uring_setup refused with EPERM"
assert_match "$T_OUT" "setuid -1 1" "setuid(0)"
assert_match "$T_OUT" "chroot -1 1" "chroot"

assert_clean "after all runs"
t_summary
