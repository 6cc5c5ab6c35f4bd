#!/usr/bin/env python3
# tests/adversarial/battery.py - every in-run attack of the adversarial suite, in one process, so that
# one run per profile tries them all (tests/integration/test-81-adversarial.sh runs it).
#
#   python3 battery.py [--tier kernel|gvisor] [--marker TEXT] [--secret PATH]... [--host-port N] [--tasks N]
#                      [--workspace DIR] [--skip NAME]... [--only NAME]
#
# --tier: the kernel the run's profile gives its command (process.isolation; the test reads it from the
# profile): the attacks are the same in both tiers, a few answers differ and are judged per tier (the
# column of docs/security.md's table). --skip NAME: a case not to try (the test says why); --only NAME: only
# that case (and the tier check).
# --marker: text the test planted in host files (--secret PATH, each hidden from runs): reading it back
# is an escape. --host-port: a TCP port the test listens on at the host's loopback. --tasks: the run's
# task ceiling (a fork bomb that gets past it has escaped). --workspace: the run's workspace, if any
# (else HOME is used for files the attacks create).
#
# Prints a first line of class "battery" (case "start": the tier and the run's user), one JSON line per case:
# {"class", "case", "attack_succeeded", "detail"} (and "as_documented" where docs/security.md states each
# tier's answer), then a last line of class "battery" (case "end") with the counts the test compares with
# the record (ioctl_denials: TIOCSTI and TIOCLINUX calls made, each denied and counted by sbx's seccomp rules
# in the kernel tier; ioctl_calls and ioctl_refused: the same calls and how many failed, gVisor's evidence). Python 3 standard library only;
# raw syscalls through ctypes (x86-64 numbers). Nothing here writes to a file it managed to open where it
# must not: such an open is reported and the descriptor closed at once.
import ctypes
import errno
import json
import os
import socket
import stat
import struct
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]

ARGS = {"marker": None, "secret": [], "host_port": None, "tasks": None, "workspace": None, "skip": [],
        "only": None, "tier": "kernel"}
_a = sys.argv[1:]
while _a:
    k = _a.pop(0)
    if k == "--secret":
        ARGS["secret"].append(_a.pop(0))
    elif k == "--skip":   # a case's name: not tried (the test says why)
        ARGS["skip"].append(_a.pop(0))
    elif k in ("--marker", "--host-port", "--tasks", "--workspace", "--only", "--tier"):
        ARGS[k[2:].replace("-", "_")] = _a.pop(0)
    else:
        sys.exit("battery: unknown argument " + k)

if ARGS["tier"] not in ("kernel", "gvisor"):
    sys.exit("battery: --tier is kernel or gvisor")
GVISOR = ARGS["tier"] == "gvisor"
GVISOR_RELEASE = "4.4.0"   # what gVisor's kernel says it is (uname -r)

# the attacks are meant for a run's confined user: as root outside a run they would act on the host. In the
# gVisor tier the command is uid 0 of runsc's user namespace, which maps only the run's user (and has no
# capability): accepted there, and only on gVisor's kernel
if os.getuid() == 0 and not (GVISOR and os.uname().release == GVISOR_RELEASE):
    sys.exit("battery: refuses to run as root (it is meant to run inside a run, as the run's user)")

COUNTS = {"cases": 0, "succeeded": 0, "ioctl_denials": 0, "ioctl_calls": 0, "ioctl_refused": 0}
# first, the line that names the run (its unit's invocation id, which the journal ties to the unit
# sbx-PROFILE-RUN.service; the user's name inside is sbx, or root in gVisor), in case a case ends it
print(json.dumps({"class": "battery", "case": "start", "tier": ARGS["tier"], "user": os.environ.get("USER", ""),
                  "invocation": os.environ.get("INVOCATION_ID", "")}), flush=True)


def report(cls, case, succeeded, detail, as_documented=None):
    """one line per case; as_documented: for cases whose answer docs/security.md states per tier, whether the
    answer was the one stated for this tier"""
    COUNTS["cases"] += 1
    COUNTS["succeeded"] += bool(succeeded)
    line = {"class": cls, "case": case, "attack_succeeded": bool(succeeded), "detail": str(detail)[:300]}
    if as_documented is not None:
        line["as_documented"] = bool(as_documented)
    print(json.dumps(line), flush=True)


def ename(e):
    return errno.errorcode.get(e, str(e))


def sc(nr, *args):
    """a raw syscall: (return value, errno name or 'ok')"""
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return r, ("ok" if r >= 0 else ename(ctypes.get_errno()))


def case(cls, name):
    """decorator: runs the attack at once; an exception is a failed attack, with its text as detail. An attack
    may return a third value, whether its answer is the one docs/security.md states for this tier"""
    def wrap(f):
        if name in ARGS["skip"] or (ARGS["only"] and name != ARGS["only"] and cls != "tier"):
            return f
        t0 = time.monotonic()
        documented = None
        try:
            ok, detail, *more = f()
            documented = more[0] if more else None
        except OSError as e:
            ok, detail = False, "%s %s" % (ename(e.errno) if e.errno else "", e)
        except Exception as e:   # an attack that could not be tried is not a success; say why
            ok, detail = False, "error: %r" % (e,)
        report(cls, name, ok, "%s [%.1fs]" % (detail, time.monotonic() - t0), documented)
        return f
    return wrap


# ---- the tier: the kernel the command meets is the one the test named ------------------------------------
@case("tier", "the command runs on the kernel of its tier (uname -r)")
def _():
    rel = os.uname().release
    on_gvisor = rel == GVISOR_RELEASE
    return on_gvisor != GVISOR, "tier %s, uname -r %s, uid %d, pid %d" % (ARGS["tier"], rel, os.getuid(), os.getpid())


def read_marker(path):
    """(True, ...) if PATH can be read and holds the marker (or, without a marker, anything)"""
    try:
        with open(path, "rb") as f:
            data = f.read(65536)
    except OSError as e:
        return False, "%s: %s" % (path, ename(e.errno))
    if ARGS["marker"] and ARGS["marker"].encode() not in data:
        return False, "%s: readable, no marker (%d bytes)" % (path, len(data))
    return True, "%s: READ %d bytes" % (path, len(data))


def open_for_write(path):
    """(True, ...) if PATH opens for writing; closed at once, nothing written"""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        return False, "%s: %s" % (path, ename(e.errno))
    os.close(fd)
    return True, "%s: OPENED for writing" % path


HOME = os.environ.get("HOME", "/tmp")
WORK = ARGS["workspace"] or HOME
ROOT_ID = (os.stat("/").st_dev, os.stat("/").st_ino)

# ---- leaked descriptors and cwd (CVE-2024-21626 class): first, before this script opens anything ------
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
leaked = []
for fd in fds:
    try:
        st = os.fstat(fd)
    except OSError:
        continue   # the descriptor of the listing itself, closed already
    target = ""
    try:
        target = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        pass
    if fd > 2 or stat.S_ISDIR(st.st_mode):
        leaked.append("%d->%s" % (fd, target))
if not ARGS["only"]:
    report("leaked-fds", "no descriptor beyond 0-2, none a directory", bool(leaked),
           "open: %s; leaked: %s" % (fds, leaked or "none"))


def top_of(fd):
    """walk '..' from a directory fd to its top; (dev, ino) of the top"""
    cur = os.dup(fd)
    try:
        for _ in range(256):
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=cur)
            a, b = os.fstat(cur), os.fstat(up)
            os.close(cur)
            cur = up
            if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
                break
        st = os.fstat(cur)
        return st.st_dev, st.st_ino
    finally:
        os.close(cur)


@case("leaked-fds", "cwd is inside the run's own root")
def _():
    link = os.readlink("/proc/self/cwd")
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        top = top_of(fd)
    finally:
        os.close(fd)
    bad = link.startswith("(unreachable)") or top != ROOT_ID
    return bad, "cwd %s; '..' from it ends at %s, / is %s" % (link, top, ROOT_ID)


# ---- path traversal -------------------------------------------------------------------------------------
def read_marker_any(path):
    """(True, ...) if PATH can be read at all (for files no run may read, such as /etc/shadow)"""
    try:
        with open(path, "rb") as f:
            return True, "%s: READ %d bytes" % (path, len(f.read(4096)))
    except OSError as e:
        return False, "%s: %s" % (path, ename(e.errno))


@case("path-traversal", "../ from the workspace to the host's /etc/shadow and planted secrets")
def _():
    hits, seen = [], []
    ups = "/".join([".."] * 12)
    for p in ["/etc/shadow", "/etc/gshadow"] + ARGS["secret"]:
        path = os.path.join(WORK, ups, p.lstrip("/"))
        ok, d = (read_marker if p in ARGS["secret"] else read_marker_any)(path)
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen)


@case("path-traversal", "/proc/1/root, /proc/PPID/root and /proc/self/root to the secrets")
def _():
    hits, seen = [], []
    for pid in ("1", str(os.getppid()), "self"):
        for s in ARGS["secret"]:
            ok, d = read_marker("/proc/%s/root%s" % (pid, s))
            (hits if ok else seen).append(d)
        ok, d = read_marker_any("/proc/%s/root/etc/shadow" % pid)
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen[:6])


@case("path-traversal", "the planted secrets by their host paths")
def _():
    hits, seen = [], []
    for s in ARGS["secret"]:
        ok, d = read_marker(s)
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen) or "no secrets given"


# ---- symlink escapes ------------------------------------------------------------------------------------
@case("symlink-escape", "a symlink in the workspace to the planted secrets, /proc/1/root and the host's /")
def _():
    hits, seen = [], []
    d = os.path.join(WORK, ".sbxadv-links")
    os.makedirs(d, exist_ok=True)
    targets = list(ARGS["secret"]) + ["/proc/1/root/etc/shadow", "/proc/%d/root/etc/shadow" % os.getppid()]
    for i, t in enumerate(targets):
        ln = os.path.join(d, "l%d" % i)
        try:
            os.unlink(ln)
        except FileNotFoundError:
            pass
        os.symlink(t, ln)
        ok, r = (read_marker if t in ARGS["secret"] else read_marker_any)(ln)
        (hits if ok else seen).append(r)
    return bool(hits), "; ".join(hits or seen)


@case("symlink-escape", "a hard link in the workspace to a file of another owner (/etc/passwd)")
def _():
    ln = os.path.join(WORK, ".sbxadv-hardlink")
    try:
        os.unlink(ln)
    except FileNotFoundError:
        pass
    try:
        os.link("/etc/passwd", ln)
    except OSError as e:
        return False, "link: %s" % ename(e.errno)
    os.unlink(ln)
    return True, "hard link to /etc/passwd made"


# ---- /proc/self/exe overwrite (runc CVE-2019-5736 class) --------------------------------------------------
@case("proc-exe", "open /proc/self/exe, /proc/PPID/exe and the helper's binary for writing")
def _():
    hits, seen = [], []
    paths = ["/proc/self/exe", "/proc/%d/exe" % os.getppid(), "/usr/libexec/sbx/sbx-exec",
             os.path.realpath(sys.executable)]
    for p in paths:
        ok, d = open_for_write(p)
        (hits if ok else seen).append(d)
    # the helper's descriptors and memory (it is not dumpable)
    for p in ("/proc/%d/mem" % os.getppid(), "/proc/%d/fd/0" % os.getppid()):
        ok, d = open_for_write(p)
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen)


# ---- terminal injection -----------------------------------------------------------------------------------
@case("terminal-injection", "TIOCSTI and TIOCLINUX on fds 0-2, /dev/tty and a terminal of the run's own")
def _():
    tries, hits = [], []
    fds = [0, 1, 2]
    try:
        fds.append(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError as e:
        tries.append("/dev/tty: %s" % ename(e.errno))
    # a pty that is this process's controlling terminal: there TIOCSTI works unless denied
    pid = os.fork()
    if pid == 0:
        import fcntl
        import termios
        os.setsid()
        m, s = os.openpty()
        fcntl.ioctl(s, termios.TIOCSCTTY, 0)
        c = ctypes.create_string_buffer(b"x")
        rc = 0
        for req in (0x5412, 0x5412 | (1 << 32), 0x541C):
            if libc.ioctl(s, req, c) == 0:
                rc |= 1
        os._exit(10 + rc)
    _, st = os.waitpid(pid, 0)
    child = os.waitstatus_to_exitcode(st)
    COUNTS["ioctl_denials"] += 3
    COUNTS["ioctl_calls"] += 3
    if child != 10:
        hits.append("own pty: TIOCSTI/TIOCLINUX went through (child %d)" % child)
    else:
        COUNTS["ioctl_refused"] += 3
    c = ctypes.create_string_buffer(b"\x02")   # TIOCLINUX subcode 2 would be a selection
    for fd in fds:
        for name, req in (("TIOCSTI", 0x5412), ("TIOCLINUX", 0x541C)):
            r = libc.ioctl(fd, req, c)
            COUNTS["ioctl_denials"] += 1
            COUNTS["ioctl_calls"] += 1
            COUNTS["ioctl_refused"] += r != 0
            e = ctypes.get_errno()
            tries.append("%s fd%d %s" % (name, fd, "ok" if r == 0 else ename(e)))
            if r == 0:
                hits.append(tries[-1])
    for fd in fds[3:]:
        os.close(fd)
    return bool(hits), "; ".join(hits or tries)


# ---- control plane: sockets -------------------------------------------------------------------------------
def try_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.3)
    try:
        s.connect(path)
        return True, "%s: CONNECTED" % path
    except OSError as e:
        if e.errno == errno.EPROTOTYPE:   # a datagram or seqpacket socket: try those kinds
            for kind in (socket.SOCK_DGRAM, socket.SOCK_SEQPACKET):
                try:
                    t = socket.socket(socket.AF_UNIX, kind)
                except OSError as e2:
                    return False, "%s: socket(%d) %s" % (path, kind, ename(e2.errno))
                try:
                    t.connect(path)
                    return True, "%s: CONNECTED (type %d)" % (path, kind)
                except OSError as e2:
                    if e2.errno != errno.EPROTOTYPE:
                        return False, "%s: %s" % (path, ename(e2.errno))
                finally:
                    t.close()
        return False, "%s: %s" % (path, ename(e.errno) if e.errno else e)
    finally:
        s.close()


NAMED_SOCKETS = ["/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private",
                 "/run/systemd/notify", "/run/systemd/journal/stdout", "/run/systemd/journal/socket",
                 "/dev/log", "/run/systemd/userdb/io.systemd.DynamicUser", "/run/docker.sock",
                 "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock",
                 "/run/sbx/broker.sock", "/run/user/0/bus", "\0/org/freedesktop/systemd1/private"]


@case("control-plane", "the system bus, systemd, journald, container runtimes, sbx's own sockets")
def _():
    hits, seen = [], []
    for p in NAMED_SOCKETS:
        ok, d = try_unix(p)
        (hits if ok else seen).append(d.replace("\0", "@"))
    return bool(hits), "; ".join(hits or seen)


@case("control-plane", "every path socket visible in the run's file system (all but /usr, /proc, /sys)")
def _():
    # /usr is the OS, read-only and sockets there are not made at run time; /proc and /sys are the kernel's
    found, hits, t0, cut = [], [], time.monotonic(), False
    for root, dirs, files in os.walk("/", topdown=True):
        if root == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr")]
        if time.monotonic() - t0 > 2:
            cut = True
            break
        for f in files + dirs:
            p = os.path.join(root, f)
            try:
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    found.append(p)
            except OSError:
                pass
    for p in found:
        ok, d = try_unix(p)
        if ok:
            hits.append(d)
    walked = "walk %s in %.1fs" % ("cut short" if cut else "complete", time.monotonic() - t0)
    return bool(hits), "%s; %d sockets found: %s; connected: %s" % (walked, len(found), found[:12], hits or "none")


# ---- network: metadata service and internal scans -----------------------------------------------------------
def try_tcp(host, port, timeout=0.4):
    """(connected, text): a non-blocking connect with a short wait"""
    try:
        infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except socket.gaierror:
        try:   # the classic inet_aton forms (decimal, hex, octal) glibc accepts outside AI_NUMERICHOST
            infos = [(socket.AF_INET, socket.SOCK_STREAM, 0, "", (socket.inet_ntoa(socket.inet_aton(host)), port))]
        except OSError as e:
            return False, "%s: not an address (%s)" % (host, e)
    fam, kind, proto, _, addr = infos[0]
    try:
        s = socket.socket(fam, kind, proto)
    except OSError as e:
        return False, "%s: socket %s" % (host, ename(e.errno))
    s.setblocking(False)
    t0 = time.monotonic()
    try:
        try:
            r = s.connect_ex(addr)
        except OSError as e:
            r = e.errno
        if r == errno.EINPROGRESS:
            import select
            _, w, _ = select.select([], [s], [], timeout)
            r = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) if w else errno.ETIMEDOUT
        ms = int((time.monotonic() - t0) * 1000)
        return r == 0, "%s:%d -> %s %s %dms" % (host, port, addr[0], "CONNECTED" if r == 0 else ename(r), ms)
    finally:
        s.close()


def try_udp(host, port):
    if ":" not in host:   # the inet_aton forms, as a resolver would read them
        host = socket.inet_ntoa(socket.inet_aton(host))
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", (host, port))
        return True, "udp %s:%d SENT" % (host, port)
    except OSError as e:
        return False, "udp %s:%d %s" % (host, port, ename(e.errno))
    finally:
        s.close()


METADATA = ["169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518",
            "0xa9.0xfe.0xa9.0xfe", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "fd00:ec2::254",
            "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "169.254.170.2", "100.100.100.200"]
TCP_EXPECTED = {}   # address -> port tried, for the test to look up in the record


@case("metadata", "the cloud metadata service in every encoding (TCP 80, UDP 80)")
def _():
    hits, seen = [], []
    for a in METADATA:
        ok, d = try_tcp(a, 80)
        (hits if ok else seen).append(d)
        ok, d = try_udp(a, 80)
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen)


SCAN = ["10.0.0.1", "10.0.2.2", "10.0.2.3", "172.16.0.1", "192.168.0.1", "192.168.1.1", "100.64.0.1",
        "169.254.1.1", "fe80::1", "fc00::1", "10.213.0.2"]
LOOPBACK_PORTS = [22, 25, 80, 111, 443, 631, 2375, 2376, 3306, 5432, 6379, 8080, 9090]


@case("internal-scan", "RFC 1918, shared, link-local and ULA addresses, the VM's gateway")
def _():
    hits, seen = [], []
    for a in SCAN:
        for port in (22, 80):
            ok, d = try_tcp(a, port, 0.25)
            (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen)


@case("internal-scan", "the host's loopback: its listener and common service ports")
def _():
    hits, seen = [], []
    ports = LOOPBACK_PORTS + ([int(ARGS["host_port"])] if ARGS["host_port"] else [])
    for host in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        for port in ports:
            ok, d = try_tcp(host, port, 0.25)
            (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen[:8] + ["..."])


# ---- cross-run access ---------------------------------------------------------------------------------------
def below(p, depth):
    """the paths DEPTH levels below P (those that can be listed)"""
    if depth == 0:
        return [p]
    try:
        return [q for x in sorted(os.listdir(p)) for q in below(os.path.join(p, x), depth - 1)]
    except OSError:
        return []


@case("cross-run", "other runs' records, spaces, cgroups, credentials and processes")
def _():
    hits, seen = [], []
    for d in ("/var/lib/sbx/runs", "/var/lib/sbx/figures", "/var/lib/sbx/secrets", "/var/lib/sbx/capture",
              "/run/sbx/space", "/run/sbx/credentials", "/run/sbx/grants", "/var/lib/private",
              "/var/lib/sbx-cache", "/run/systemd/transient", "/run/credentials"):
        try:
            names = os.listdir(d)
        except OSError as e:
            seen.append("%s: %s" % (d, ename(e.errno)))
            continue
        readable = []
        for n in names[:50]:
            p = os.path.join(d, n)
            # the names of tenants' cache directories and their profiles are visible by design (docs/
            # security.md, Known open points): look one level further, at the caches themselves
            subs = below(p, {"/var/lib/sbx-cache": 2, "/var/lib/private": 3}.get(d, 0))
            for q in subs:
                try:
                    if os.stat(q).st_uid == os.getuid():
                        continue   # the run's own (its cache, bound into its view)
                    if os.path.isdir(q):
                        os.listdir(q)
                    else:
                        open(q, "rb").close()
                    readable.append(q[len(d) + 1:])
                except OSError:
                    pass
        if readable:
            hits.append("%s: %d entries readable (%s)" % (d, len(readable), readable[:3]))
        else:
            seen.append("%s: %d names, none readable" % (d, len(names)))
    cg = [x for x in os.listdir("/sys/fs/cgroup") if x.startswith("sbx")] if os.path.isdir("/sys/fs/cgroup") else []
    mine = open("/proc/self/cgroup").read().strip().split(":")[-1]
    others = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in dirs:
            p = os.path.join(root, d)[len("/sys/fs/cgroup"):]
            if d.startswith("sbx-") and d.endswith(".service") and not mine.startswith(p):
                others.append(p)
    if others:
        hits.append("other runs' cgroups visible: %s" % others[:3])
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    foreign = []
    for p in pids:
        try:
            if os.stat("/proc/" + p).st_uid != os.getuid():
                foreign.append(p)
        except OSError:
            pass
    if foreign:
        hits.append("processes of other users visible: %s" % foreign[:5])
    seen.append("cgroup top: %s; %d processes visible, all the run's" % (cg, len(pids)))
    return bool(hits), "; ".join(hits or seen)


# ---- kernel attack surface: syscalls ------------------------------------------------------------------------
def syscall_case(name, nr, *args, ok_when=lambda r: r >= 0, cleanup=None):
    r, e = sc(nr, *args)
    if r >= 0 and cleanup:
        cleanup(r)
    return ok_when(r), "%s -> %d %s" % (name, r, e)


@case("syscalls", "io_uring_setup")
def _():
    return syscall_case("io_uring_setup", 425, 8, ctypes.create_string_buffer(120), cleanup=os.close)


@case("syscalls", "ptrace: PTRACE_ATTACH to the helper, PTRACE_TRACEME")
def _():
    a = syscall_case("PTRACE_ATTACH(ppid)", 101, 16, os.getppid(), 0, 0,
                     cleanup=lambda r: sc(101, 17, os.getppid(), 0, 0))   # PTRACE_DETACH at once
    pid = os.fork()
    if pid == 0:
        r = libc.syscall(ctypes.c_long(101), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
        os._exit(0 if r == 0 else 1)
    _, st = os.waitpid(pid, 0)
    traceme = os.waitstatus_to_exitcode(st) == 0
    return a[0] or traceme, "%s; PTRACE_TRACEME in a child %s" % (a[1], "ok" if traceme else "refused")


@case("syscalls", "userfaultfd handling kernel faults")
def _():
    # UFFD_USER_MODE_ONLY (faults of user space only) is what the kernel itself allows every user
    # (vm.unprivileged_userfaultfd=0): reported, not an escape; one that handles kernel faults is
    a = syscall_case("userfaultfd(O_CLOEXEC)", 323, os.O_CLOEXEC, cleanup=os.close)
    b = syscall_case("userfaultfd(UFFD_USER_MODE_ONLY)", 323, os.O_CLOEXEC | 1, cleanup=os.close)
    return a[0], "%s; %s (user faults only: the kernel's unprivileged mode)" % (a[1], b[1])


@case("syscalls", "bpf: BPF_PROG_LOAD of a socket filter, BPF_MAP_CREATE")
def _():
    insn = ctypes.create_string_buffer(struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0))
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(struct.pack("<IIQQ", 1, 2, ctypes.addressof(insn), ctypes.addressof(lic)), 128)
    a = syscall_case("bpf(BPF_PROG_LOAD)", 321, 5, attr, 128, cleanup=os.close)
    mattr = ctypes.create_string_buffer(struct.pack("<IIII", 2, 4, 4, 1), 128)   # ARRAY, 4, 4, 1
    b = syscall_case("bpf(BPF_MAP_CREATE)", 321, 0, mattr, 128, cleanup=os.close)
    return a[0] or b[0], "%s; %s" % (a[1], b[1])


@case("syscalls", "perf_event_open (a software counter of this process)")
def _():
    attr = ctypes.create_string_buffer(struct.pack("<IIQ", 1, 128, 0), 128)   # PERF_TYPE_SOFTWARE, cpu-clock
    return syscall_case("perf_event_open", 298, attr, 0, -1, -1, 0, cleanup=os.close)


KEY_SPEC_USER_KEYRING = -4


@case("syscalls", "keyctl, add_key to the user keyring (which outlives a run, per uid)")
def _():
    # the user keyring is keyed by uid: a dynamic uid used again by a later run would find what is left
    a = syscall_case("add_key(user, @u)", 248, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"sbxadv"),
                     ctypes.c_char_p(b"left-behind"), 11, KEY_SPEC_USER_KEYRING)
    b = syscall_case("keyctl(GET_KEYRING_ID, @u)", 250, 0, KEY_SPEC_USER_KEYRING, 0)
    return a[0], "%s; %s" % (a[1], b[1])


@case("syscalls", "unshare and setns: user, mount, network, pid, uts, ipc, cgroup namespaces")
def _():
    hits, seen = [], []
    for name, flag in (("NEWUSER", 0x10000000), ("NEWNS", 0x00020000), ("NEWNET", 0x40000000),
                       ("NEWPID", 0x20000000), ("NEWUTS", 0x04000000), ("NEWIPC", 0x08000000),
                       ("NEWCGROUP", 0x02000000), ("NEWUSER|NEWNS", 0x10020000)):
        pid = os.fork()
        if pid == 0:   # in a child: a namespace that did come would change this process only
            r = libc.syscall(ctypes.c_long(272), ctypes.c_long(flag))
            os._exit(0 if r == 0 else min(ctypes.get_errno(), 250))
        _, st = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(st)
        (hits if code == 0 else seen).append("unshare(%s) %s" % (name, "ok" if code == 0 else ename(code)))
    for ns in ("net", "mnt", "user"):
        try:
            fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
        except OSError as e:
            seen.append("open ns/%s %s" % (ns, ename(e.errno)))
            continue
        r, e = sc(308, fd, 0)
        os.close(fd)
        # joining one's own namespace is harmless but must not even be allowed where setns is denied;
        # EINVAL (own user namespace) is the kernel's, not a success
        (hits if r == 0 and ns == "user" else seen).append("setns(own %s) %d %s" % (ns, r, e))
    return bool(hits), "; ".join(hits or seen)


@case("syscalls", "personality: READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE")
def _():
    def current():
        # personality(PER_LINUX) returns the persona it replaces: the one call both tiers answer (the kernel
        # tier's filter lets only PER_LINUX through, gVisor has no /proc/self/personality)
        return sc(135, 0)[0]
    hits, seen = [], []
    before = current()   # -1 where no change is allowed at all (gVisor: EINVAL)
    for name, flag in (("READ_IMPLIES_EXEC", 0x0400000), ("ADDR_NO_RANDOMIZE", 0x0040000)):
        r, e = sc(135, max(before, 0) | flag)
        now = current()   # a set that went through returned the old persona, and the new one holds the flag
        (hits if r >= 0 or (now >= 0 and now & flag) else seen).append("%s -> %d %s (now %#x)" % (name, r, e, now))
        if now != before and before >= 0:
            sc(135, before)
    return bool(hits), "; ".join(hits or seen)


@case("syscalls", "kernel modules: init_module, finit_module, delete_module; kexec_load, kexec_file_load")
def _():
    img = ctypes.create_string_buffer(64)
    res = [syscall_case("init_module", 175, img, 64, ctypes.c_char_p(b"")),
           syscall_case("finit_module", 313, 0, ctypes.c_char_p(b""), 0),
           syscall_case("delete_module", 176, ctypes.c_char_p(b"sbxadv_none"), os.O_NONBLOCK),
           syscall_case("kexec_load", 246, 0, 0, 0, 0),
           syscall_case("kexec_file_load", 320, -1, -1, 0, ctypes.c_char_p(b""), 0)]
    return any(r[0] for r in res), "; ".join(r[1] for r in res)


@case("syscalls", "mount, umount2, pivot_root, chroot, swapon, sethostname, settimeofday")
def _():
    host = socket.gethostname().encode()
    now = ctypes.create_string_buffer(struct.pack("<qq", int(time.time()), 0))
    res = [syscall_case("mount(tmpfs)", 165, ctypes.c_char_p(b"none"), ctypes.c_char_p(HOME.encode()),
                        ctypes.c_char_p(b"tmpfs"), 0, 0),
           syscall_case("umount2(/usr)", 166, ctypes.c_char_p(b"/usr"), 2),   # MNT_DETACH
           syscall_case("pivot_root", 155, ctypes.c_char_p(b"/"), ctypes.c_char_p(b"/")),
           syscall_case("chroot", 161, ctypes.c_char_p(b"/")),
           syscall_case("swapon", 167, ctypes.c_char_p(b"/nonexistent-sbxadv"), 0),
           syscall_case("sethostname(same name)", 170, ctypes.c_char_p(host), len(host)),
           syscall_case("settimeofday(now)", 164, now, 0)]
    return any(r[0] for r in res), "; ".join(r[1] for r in res)


@case("sysctl", "writes to /proc/sys, /proc/sysrq-trigger, /sys (opened for writing only, nothing written)")
def _():
    hits, seen = [], []
    for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/kernel/hostname",
              "/proc/sys/vm/drop_caches", "/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/unprivileged_bpf_disabled",
              "/proc/sysrq-trigger", "/sys/kernel/uevent_helper", "/sys/module/printk/parameters/time",
              "/proc/1/oom_score_adj", "/sys/fs/cgroup/cgroup.procs"):
        ok, d = open_for_write(p)
        if ok and p.startswith("/proc/1/") and os.getpid() == 1:   # the run's own init is this process
            ok, d = False, d + " (pid 1 is this process: its own score)"
        (hits if ok else seen).append(d)
    # the run's own cgroup files: limits raised from inside would be an escape of the ceilings
    mine = open("/proc/self/cgroup").read().strip().split(":")[-1]
    for f in ("memory.max", "pids.max", "cpu.max", "cgroup.procs", "cgroup.subtree_control"):
        ok, d = open_for_write("/sys/fs/cgroup%s/%s" % (mine, f))
        (hits if ok else seen).append(d)
    return bool(hits), "; ".join(hits or seen)


# ---- kernel subsystems only a kernel in user space keeps from the command ------------------------------------
# Calls the profiles' allow-lists let through: in the kernel tier they reach the host's kernel (an fd, or the
# kernel's own answer to bad arguments: its code ran); gVisor has no such subsystem (ENOSYS), or refuses the
# call (EPERM: its filter does not know a call newer than its table, or gVisor wants a capability the
# command has not). What each tier's command sees is in docs/security.md ("Attacks tried"): an answer other
# than its tier's fails the case.
def reaches_host_kernel(name, nr, *args, kernel_answer=lambda r, e: r >= 0 or e not in ("EPERM", "ENOSYS"),
                        cleanup=os.close):
    r, e = sc(nr, *args)
    if r >= 0 and cleanup:
        cleanup(r)
    if GVISOR:
        documented = e in ("ENOSYS", "EPERM")
        return False, "%s -> %d %s (gVisor: %s)" % (
            name, r, e, "no such subsystem" if e == "ENOSYS" else "refused" if e == "EPERM" else "SERVED"), documented
    documented = kernel_answer(r, e)
    return False, "%s -> %d %s (the host's kernel: %s)" % (
        name, r, e, "reached, allowed by the profile" if documented else "NOT reached"), documented


@case("kernel-surface", "userfaultfd in user-fault mode (a common exploit primitive; the kernel lets any user)")
def _():
    return reaches_host_kernel("userfaultfd(UFFD_USER_MODE_ONLY)", 323, os.O_CLOEXEC | 1)


@case("kernel-surface", "pidfd_open of itself, then pidfd_send_signal(0) through it")
def _():
    ok, d, doc = reaches_host_kernel("pidfd_open(self)", 434, os.getpid(), 0, cleanup=None)
    r, e = sc(434, os.getpid(), 0)
    if r >= 0:
        r2, e2 = sc(424, r, 0, 0, 0)
        os.close(r)
        d += "; pidfd_send_signal(0) -> %d %s" % (r2, e2)
    return ok, d, doc


@case("kernel-surface", "process_madvise (MADV_COLD) on a bad pidfd: the kernel's mm code checks it")
def _():
    buf = ctypes.create_string_buffer(8192)
    iov = ctypes.create_string_buffer(struct.pack("<QQ", (ctypes.addressof(buf) + 4095) & ~4095, 4096))
    return reaches_host_kernel("process_madvise(-1, MADV_COLD)", 440, -1, iov, 1, 20, 0,
                               kernel_answer=lambda r, e: e == "EBADF")


@case("kernel-surface", "kcmp of its own descriptors (the kernel compares its file objects)")
def _():
    return reaches_host_kernel("kcmp(self, self, KCMP_FILE, 0, 0)", 312, os.getpid(), os.getpid(), 0, 0, 0,
                               cleanup=None)


@case("kernel-surface", "futex_waitv with no waiters (the kernel checks the vector)")
def _():
    return reaches_host_kernel("futex_waitv(NULL, 0)", 449, 0, 0, 0, 0, 0, kernel_answer=lambda r, e: e == "EINVAL")


@case("kernel-surface", "landlock_create_ruleset: the ABI version (the unit allows it for the helper)")
def _():
    return reaches_host_kernel("landlock_create_ruleset(VERSION)", 444, 0, 0, 1, cleanup=None)


# ---- fork bomb: last, it fills the task ceiling ----------------------------------------------------------------
def task_ceiling():
    mine = open("/proc/self/cgroup").read().strip().split(":")[-1]
    try:
        with open("/sys/fs/cgroup%s/pids.max" % mine) as f:
            v = f.read().strip()
        if v != "max":
            return int(v), "pids.max"
    except OSError:
        pass
    return (int(ARGS["tasks"]), "--tasks") if ARGS["tasks"] else (None, "none")


@case("fork-bomb", "threads and forks until refused; the task ceiling must stop them")
def _():
    # Tasks are threads and processes alike. Threads fill the ceiling quickly (a process per task would
    # take seconds each hundred); then fork() and clone() must fail with EAGAIN.
    import threading
    limit, src = task_ceiling()
    if limit is None:
        return True, "no task ceiling at all (pids.max is max, none given)"
    cap = limit + 64   # never more than this, whatever happens
    threading.stack_size(65536)
    stop = threading.Event()
    threads, t0, err = [], time.monotonic(), ""
    try:
        while len(threads) < cap and time.monotonic() - t0 < 20:
            t = threading.Thread(target=stop.wait, daemon=True)
            try:
                t.start()
            except RuntimeError as e:
                err = str(e)
                break
            threads.append(t)
        forks, refused = [], 0
        for _ in range(3):
            try:
                pid = os.fork()
            except OSError as e:
                refused += e.errno == errno.EAGAIN
                continue
            if pid == 0:
                os._exit(0)
            forks.append(pid)
        for pid in forks:
            os.waitpid(pid, 0)
    finally:
        stop.set()
        for t in threads:
            t.join()
    # In gVisor a thread of the command is a task of gVisor's kernel, not of the host's (the Sentry runs it
    # on a thread of its own only while it runs), so threads beyond the ceiling are no escape there; the
    # host's ceiling holds the Sentry and each address space's host process: it has escaped if everything
    # went through. (Where the ceiling refuses the Sentry a thread, the Sentry ends and this line is never
    # printed: the test then judges by the record.)
    if GVISOR:
        escaped = len(threads) >= cap and len(forks) == 3
    else:
        escaped = len(threads) >= limit or forks
    return escaped, "%d threads before '%s', then %d of 3 forks refused with EAGAIN, %d went; ceiling %d (%s), %.1fs" % (
        len(threads), err, refused, len(forks), limit, src, time.monotonic() - t0)


print(json.dumps({"class": "battery", "case": "end", "cases": COUNTS["cases"], "succeeded": COUNTS["succeeded"],
                  "ioctl_denials": COUNTS["ioctl_denials"], "ioctl_calls": COUNTS["ioctl_calls"],
                  "ioctl_refused": COUNTS["ioctl_refused"],
                  "cgroup": open("/proc/self/cgroup").read().strip().split(":")[-1]}), flush=True)
