#!/usr/bin/python3
# tests/integration/cp-probe.py - run INSIDE a sandbox by test-48-controlplane.sh (as its stdin:
# "python3 - KEY=VALUE..."): tries to reach the control plane and other tenants' runs, one attempt per
# line of output, "NAME RESULT", where RESULT is the errno name an attempt failed with, "ok" when it
# worked, or a short fact. The test file decides what each must be.
#
# Keys: run=ID (another tenant's run), pid=PID (one of its commands), helper=PID (its main process),
# ws=DIR (its workspace on the host), file=NAME (a file in it), abstract=NAME (a host abstract socket)
import ctypes
import errno
import os
import signal
import socket
import subprocess
import sys

A = dict(a.split("=", 1) for a in sys.argv[1:])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_PTRACE, NR_PROCESS_VM_READV, NR_PIDFD_SEND_SIGNAL, NR_PIDFD_OPEN = 101, 310, 424, 434


def out(name, result):
    print(name, result, flush=True)


def err(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) else type(e).__name__


def attempt(name, f):
    try:
        r = f()
        out(name, "ok" if r is None else r)
    except OSError as e:
        out(name, err(e))


def sys_call(*args):
    r = libc.syscall(*[ctypes.c_long(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def connect(family, kind, addr):
    s = socket.socket(family, kind)
    try:
        s.connect(addr)
    finally:
        s.close()


# ---- sockets by path: the system bus (sbxd's API and systemd's), sbxd's own socket, systemd's private socket,
# the journal
for name, path in [("bus", "/run/dbus/system_bus_socket"), ("bus-var", "/var/run/dbus/system_bus_socket"),
                   ("systemd-private", "/run/systemd/private"), ("journal", "/run/systemd/journal/socket"),
                   ("journal-stdout", "/run/systemd/journal/stdout"), ("dev-log", "/dev/log"),
                   ("bus-via-proc1", "/proc/1/root/run/dbus/system_bus_socket"), ("sbxd-socket", "/run/sbx/bus"),
                   ("sbxd-socket-via-proc1", "/proc/1/root/run/sbx/bus")]:
    attempt("path-" + name, lambda p=path: connect(socket.AF_UNIX, socket.SOCK_STREAM, p))

# ---- abstract sockets: the host's live in its network namespace
attempt("abstract-host", lambda: connect(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + A["abstract"]))
with open("/proc/net/unix") as f:
    unix = f.read()
out("proc-net-unix-host-abstract", "seen" if "@" + A["abstract"] in unix else "absent")
out("proc-net-unix-bus", "seen" if "system_bus_socket" in unix else "absent")

# ---- sbxd's API through its own client and busctl
for name, cmd in [("sbxctl", ["sbxctl", "list"]), ("busctl", ["busctl", "--system", "list"])]:
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=60)
        out("client-" + name, "exit-%d" % p.returncode)
    except OSError as e:
        out("client-" + name, err(e))

# ---- systemd's notify socket (bound in for the helper): no datagram socket to send with
NOTIFY = "/run/systemd/notify"
out("notify-present", "yes" if os.path.exists(NOTIFY) else "no")
attempt("notify-dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
attempt("notify-dgram-flags",
        lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK).close())
attempt("notify-dgram-high-bits", lambda: os.close(sys_call(41, (1 << 32) | 1, (1 << 32) | 2, 0)))
attempt("notify-socketpair", lambda: [s.close() for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)])
attempt("notify-stream", lambda: connect(socket.AF_UNIX, socket.SOCK_STREAM, NOTIFY))
attempt("notify-seqpacket", lambda: connect(socket.AF_UNIX, socket.SOCK_SEQPACKET, NOTIFY))


def flood():
    # what a flood would be: 500 forged reports
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for _ in range(500):
        s.sendto(b"STATUS=finished cpu_usec=1", NOTIFY)
    s.close()


attempt("notify-flood", flood)


def stream_sendto():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.sendto(b"STATUS=x", NOTIFY)
    finally:
        s.close()


attempt("notify-stream-sendto", stream_sendto)

# ---- the cgroup tree: only this run's own cgroup, read-only
own = open("/proc/self/cgroup").read().strip().split("::", 1)[1]
cg = "/sys/fs/cgroup" + own
seen = []
for d, dirs, files in os.walk("/sys/fs/cgroup"):
    seen.extend(x for x in dirs if x.endswith((".service", ".scope", ".slice")))
    if d.startswith(cg):
        dirs[:] = []
out("cgroup-units-seen", " ".join(sorted(x for x in seen if x.endswith((".service", ".scope")))) or "none")
out("cgroup-other-run", "seen" if any(A["run"] in x for x in seen) else "absent")
attempt("cgroup-other-run-dir", lambda: os.listdir("/sys/fs/cgroup/sbx.slice/sbx-offline.slice/sbx-offline-%s.service"
                                                   % A["run"]))
attempt("cgroup-system-slice", lambda: os.listdir("/sys/fs/cgroup/system.slice"))
attempt("cgroup-own-memory-max", lambda: open(cg + "/memory.max").read().strip())
attempt("cgroup-own-pids-max", lambda: open(cg + "/pids.max").read().strip())
attempt("cgroup-write-procs", lambda: open(cg + "/cgroup.procs", "w").write(str(os.getpid())))
attempt("cgroup-write-root-procs", lambda: open("/sys/fs/cgroup/cgroup.procs", "w").write(str(os.getpid())))
attempt("cgroup-mkdir", lambda: os.mkdir("/sys/fs/cgroup/sbx.slice/sbxt-escape"))
with open("/proc/self/mountinfo") as f:
    out("mountinfo-other-run", "seen" if A["run"] in f.read() else "absent")

# ---- /proc: other runs' processes
pids = [p for p in os.listdir("/proc") if p.isdigit()]
out("proc-foreign-uids", " ".join(sorted({str(os.stat("/proc/" + p).st_uid) for p in pids} - {str(os.getuid())}))
    or "none")
for name, pid in [("other-cmd", A["pid"]), ("other-helper", A["helper"]), ("pid1", "1")]:
    attempt("proc-%s-status" % name, lambda p=pid: open("/proc/%s/status" % p).read() and None)
    attempt("proc-%s-root" % name, lambda p=pid: os.listdir("/proc/%s/root/" % p) and None)
    attempt("proc-%s-environ" % name, lambda p=pid: open("/proc/%s/environ" % p).read() and None)

# ---- signals and tracing of another tenant's processes
for name, pid in [("other-cmd", int(A["pid"])), ("other-helper", int(A["helper"]))]:
    attempt("kill0-" + name, lambda p=pid: os.kill(p, 0))
    attempt("kill9-" + name, lambda p=pid: os.kill(p, signal.SIGKILL))
    attempt("ptrace-" + name, lambda p=pid: sys_call(NR_PTRACE, 16, p, 0, 0) and None)  # PTRACE_ATTACH

    def pidfd(p=pid):
        fd = sys_call(NR_PIDFD_OPEN, p, 0)
        try:
            sys_call(NR_PIDFD_SEND_SIGNAL, fd, signal.SIGKILL, 0, 0)
        finally:
            os.close(fd)
    attempt("pidfd-kill-" + name, pidfd)

    def vm_read(p=pid):
        buf = ctypes.create_string_buffer(8)
        local = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
        remote = (ctypes.c_void_p * 2)(0x400000, 8)
        sys_call(NR_PROCESS_VM_READV, p, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
    attempt("vmread-" + name, vm_read)

# ---- another tenant's workspace and HOME
attempt("ws-list", lambda: os.listdir(A["ws"]) and None)
attempt("ws-read", lambda: open(os.path.join(A["ws"], A["file"])).read() and None)
attempt("ws-stat-file", lambda: os.stat(os.path.join(A["ws"], A["file"])) and None)
out("home-other-file", "seen" if os.path.exists(os.path.expanduser("~/" + A["file"])) else "absent")
found = []
for top in ("/tmp", "/var/tmp", "/dev/shm", "/home", "/run"):
    for d, dirs, files in os.walk(top):
        found.extend(os.path.join(d, x) for x in files + dirs if A["file"] in x or x.startswith("systemd-private"))
out("find-other-files", " ".join(found) or "none")
attempt("caches", lambda: os.listdir("/var/lib/private") and None)
