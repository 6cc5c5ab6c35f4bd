#!/usr/bin/python3
"""A client of sbxd's own socket (/run/sbx/bus, D-Bus peer to peer) that writes its messages itself, byte
by byte, so that it can put in them what sd-bus would not: a SENDER header naming someone else, signals
to sbxd. Used by test-48 as an attacker.

    direct-client.py stop RUN_ID [SENDER]   Stop(RUN_ID), with a forged SENDER header if given
    direct-client.py signalexec SB OP [SENDER]  SignalExec(SB, OP, SIGTERM), SENDER header as for stop
    direct-client.py call METHOD            METHOD() of org.sbx.Manager1, without arguments
    direct-client.py pipelined METHOD       the same, written in one piece with the handshake's BEGIN
                                            (sbxd must read a message that came with it)
    direct-client.py signals UNIT CLIENT    systemd's JobRemoved for UNIT ("failed") and the bus's
                                            NameOwnerChanged for CLIENT (gone), under several senders, then
                                            a Ping (answered: the connection is still served)
    direct-client.py flood N RELEASE        N connections, each through its handshake; prints
                                            "accepted K refused M", then holds them until RELEASE exists
    direct-client.py badstring KEY          Run() with the request's KEY a string that is not UTF-8
                                            (sbxctl never sends one); prints "error NAME: MESSAGE"
    direct-client.py silent N SECS          N connections that send nothing, and one through its
                                            handshake; prints "open N", then waits (at most SECS) until
                                            sbxd has closed the N, and prints "closed K of N after S s;
                                            handshaken: ok" (the one with its handshake still served)

Prints one line: "ok", "error NAME", or the flood's counts. Exit status 0 unless the socket could not be
used at all (2)."""
import os
import socket
import struct
import sys
import time

PATH = "/run/sbx/bus"
OBJ, IFACE, NAME = "/org/sbx/Manager1", "org.sbx.Manager1", "org.sbx.Manager1"


def pad(buf, n):
    return buf + b"\0" * ((-len(buf)) % n)


def put(buf, sig, value):
    """buf with value of the basic type sig (y u i s o g) appended, aligned as D-Bus says (little-endian)."""
    if sig == "y":
        return buf + bytes([value])
    if sig == "u":
        return pad(buf, 4) + struct.pack("<I", value)
    if sig == "i":
        return pad(buf, 4) + struct.pack("<i", value)
    if sig in "so":
        raw = value.encode()
        return pad(buf, 4) + struct.pack("<I", len(raw)) + raw + b"\0"
    if sig == "g":
        raw = value.encode()
        return buf + bytes([len(raw)]) + raw + b"\0"
    raise ValueError(sig)


def message(kind, serial, fields, sig="", args=()):
    """A message: kind 1 call, 4 signal; fields [(code, type, value)]; the body of basic types sig."""
    body = b""
    for t, v in zip(sig, args):
        body = put(body, t, v)
    if sig:
        fields = fields + [(8, "g", sig)]
    return frame(kind, serial, fields, body)


def frame(kind, serial, fields, body):
    """The message of kind with the header fields [(code, type, value)] and the body's bytes."""
    arr = b""
    for code, t, v in fields:
        arr = pad(arr, 8)
        arr = put(arr, "y", code)
        arr = put(arr, "g", t)
        arr = put(arr, t, v)
    head = b"l" + bytes([kind, 0, 1]) + struct.pack("<III", len(body), serial, len(arr))
    return pad(head + arr, 8) + body


def call(method, serial, sig="", args=(), sender=None):
    fields = [(1, "o", OBJ), (2, "s", IFACE), (3, "s", method), (6, "s", NAME)]
    if sender:
        fields.append((7, "s", sender))
    return message(1, serial, fields, sig, args)


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_message(s, want_body=False):
    """(kind, reply_serial, error_name) of the next message; with want_body, its body too."""
    head = recv_exact(s, 16)
    body_len, _, arr_len = struct.unpack("<III", head[4:16])
    rest = recv_exact(s, ((arr_len + 7) // 8) * 8 + body_len)
    arr, i, reply, err = rest[:arr_len], 0, None, None
    while i < len(arr):
        i = (i + 7) // 8 * 8
        code = arr[i]
        slen = arr[i + 1]
        t = arr[i + 2:i + 2 + slen].decode()
        i += 3 + slen
        if t in "so":
            i = (i + 3) // 4 * 4
            n = struct.unpack("<I", arr[i:i + 4])[0]
            v = arr[i + 4:i + 4 + n].decode()
            i += 5 + n
        elif t == "g":
            n = arr[i]
            v = arr[i + 1:i + 1 + n].decode()
            i += 2 + n
        elif t == "u":
            i = (i + 3) // 4 * 4
            v = struct.unpack("<I", arr[i:i + 4])[0]
            i += 4
        else:
            raise ValueError("header field of type " + t)
        if code == 4:
            err = v
        elif code == 5:
            reply = v
    if want_body:
        return head[1], reply, err, rest[((arr_len + 7) // 8) * 8:]
    return head[1], reply, err


def bad_run(key):
    """Run(a{sv} {key: <s "caf\\xe9">}, as [], h h h) with this process's stdio: a string of Latin-1 bytes."""
    entry = put(b"", "s", key)
    entry = put(entry, "g", "s")
    raw = "caf\u00e9".encode("latin-1")
    entry = pad(entry, 4) + struct.pack("<I", len(raw)) + raw + b"\0"
    body = struct.pack("<I", len(entry)) + b"\0" * 4 + entry  # a{sv}: its length, padding to 8, one entry
    body = pad(body, 4) + struct.pack("<I", 0)                  # as: empty
    for i in range(3):
        body = pad(body, 4) + struct.pack("<I", i)              # h: the descriptors' indexes
    return frame(1, 1, [(1, "o", OBJ), (2, "s", IFACE), (3, "s", "Run"), (6, "s", NAME),
                        (8, "g", "a{sv}ashhh"), (9, "u", 3)], body)


def readline(s):
    line = b""
    while not line.endswith(b"\r\n"):
        c = s.recv(1)
        if not c:
            raise EOFError
        line += c
    return line


def connect(first=b""):
    """A connection through its handshake (EXTERNAL with our uid, fds agreed), or EOFError; first: what
    to write in one piece with BEGIN."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(PATH)
    s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not readline(s).startswith(b"OK "):
        raise EOFError
    # NEGOTIATE_UNIX_FD and BEGIN in one piece, as sbxctl sends them, and AGREE_UNIX_FD read after: once it
    # came, sbxd has read BEGIN too. A message with descriptors that reached sd-bus before it had read
    # BEGIN would end the connection (descriptors during the handshake: EIO)
    s.sendall(b"NEGOTIATE_UNIX_FD\r\nBEGIN\r\n" + first)
    if not readline(s).startswith(b"AGREE_UNIX_FD"):
        raise EOFError
    return s


def answer(s, serial):
    while True:
        kind, reply, err = read_message(s)
        if reply == serial and kind in (2, 3):
            return "ok" if kind == 2 else "error " + str(err)


def silent(n, secs):
    quiet = []
    for _ in range(n):
        q = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        q.connect(PATH)
        q.setblocking(False)
        quiet.append(q)
    done = connect()
    start = time.monotonic()
    print(f"open {n}", flush=True)
    closed, elapsed = set(), 0.0
    while len(closed) < n and time.monotonic() - start < secs:
        for i, q in enumerate(quiet):
            if i in closed:
                continue
            try:
                if q.recv(1) == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        elapsed = time.monotonic() - start
        time.sleep(0.1)
    done.sendall(message(1, 30, [(1, "o", OBJ), (2, "s", "org.freedesktop.DBus.Peer"), (3, "s", "Ping")]))
    print(f"closed {len(closed)} of {n} after {int(elapsed)} s; handshaken: {answer(done, 30)}", flush=True)
    return 0


def main():
    what = sys.argv[1]
    if what == "silent":
        return silent(int(sys.argv[2]), float(sys.argv[3]))
    if what == "flood":
        n, release = int(sys.argv[2]), sys.argv[3]
        held, refused = [], 0
        for _ in range(n):
            try:
                held.append(connect())
            except (EOFError, ConnectionResetError, BrokenPipeError):
                refused += 1
        print(f"accepted {len(held)} refused {refused}", flush=True)
        for _ in range(600):
            if os.path.exists(release):
                break
            time.sleep(0.1)
        return 0
    try:
        s = connect(call(sys.argv[2], 1) if what == "pipelined" else b"")
    except (OSError, EOFError) as e:
        print("cannot connect:", e)
        return 2
    if what == "stop":
        s.sendall(call("Stop", 1, "s", [sys.argv[2]], sender=sys.argv[3] if len(sys.argv) > 3 else None))
        print(answer(s, 1))
    elif what == "signalexec":
        s.sendall(call("SignalExec", 1, "ssi", [sys.argv[2], sys.argv[3], 15],
                       sender=sys.argv[4] if len(sys.argv) > 4 else None))
        print(answer(s, 1))
    elif what == "badstring":
        s.sendmsg([bad_run(sys.argv[2])], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))])
        while True:
            kind, reply, err, body = read_message(s, want_body=True)
            if reply == 1 and kind in (2, 3):
                break
        if kind == 2:
            print("ok")
        else:
            n = struct.unpack("<I", body[:4])[0]
            print(f"error {err}: {body[4:4 + n].decode()}")
    elif what == "call":
        s.sendall(call(sys.argv[2], 1))
        print(answer(s, 1))
    elif what == "pipelined":
        try:
            print(answer(s, 1))
        except TimeoutError:
            print("no answer within 20 s")
    elif what == "signals":
        unit, client = sys.argv[2], sys.argv[3]
        for sender in ("org.freedesktop.systemd1", ":1.1", "org.freedesktop.DBus", None):
            extra = [(7, "s", sender)] if sender else []
            s.sendall(message(4, 10, [(1, "o", "/org/freedesktop/systemd1"),
                                      (2, "s", "org.freedesktop.systemd1.Manager"), (3, "s", "JobRemoved")] + extra,
                              "uoss", [1, "/org/freedesktop/systemd1/job/1", unit, "failed"]))
            s.sendall(message(4, 12, [(1, "o", "/org/freedesktop/DBus"), (2, "s", "org.freedesktop.DBus"),
                                      (3, "s", "NameOwnerChanged")] + extra, "sss", [client, client, ""]))
        s.sendall(message(1, 20, [(1, "o", OBJ), (2, "s", "org.freedesktop.DBus.Peer"), (3, "s", "Ping")]))
        print(answer(s, 20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
