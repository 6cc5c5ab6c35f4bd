#!/usr/bin/python3
"""A desktop-agent-style client of sbx, written against sbxd's D-Bus API (org.sbx.Manager1).

It does what an agent does: creates a sandbox, runs a few commands in it one after another while
streaming their output, notices when one hits a limit and adapts, runs one on a terminal of its own,
reads the sandbox's record, and removes it. It uses python3-dbus-next (Debian's package): a pure-Python asyncio D-Bus library that
passes file descriptors (the commands' stdio) and needs no GLib main loop.

    examples/agent.py [--profile NAME] [--workspace DIR]

Every line it prints starts with "agent:" (its own) or "cmd N|" (a command's output, as it arrives).
Exit status 0 when every step went as the agent expected, 1 otherwise.
"""
import argparse
import asyncio
import json
import os
import socket
import sys

from dbus_next import BusType, DBusError, Variant
from dbus_next.aio import MessageBus

BUS_NAME = "org.sbx.Manager1"
OBJECT_PATH = "/org/sbx/Manager1"
INTERFACE = "org.sbx.Manager1"


def say(*args):
    print("agent:", *args, flush=True)


class Agent:
    def __init__(self, bus, manager):
        self.bus = bus
        self.manager = manager
        self.results = {}       # exec id -> future of its ExecFinished payload
        self.finished = {}      # sandbox id -> future of its final record
        manager.on_exec_finished(self._exec_finished)
        manager.on_finished(self._finished)

    def _exec_finished(self, sandbox_id, exec_id, exec_json):
        fut = self.results.setdefault(exec_id, asyncio.get_running_loop().create_future())
        if not fut.done():
            fut.set_result(json.loads(exec_json))

    def _finished(self, run_id, record_json):
        fut = self.finished.setdefault(run_id, asyncio.get_running_loop().create_future())
        if not fut.done():
            fut.set_result(json.loads(record_json))

    async def create(self, profile, workspace):
        request = {"name": Variant("s", "agent-demo-%d" % os.getpid()),
                   "idle_timeout_usec": Variant("t", 600 * 1000000)}
        if profile:
            request["profile"] = Variant("s", profile)
        if workspace:
            request["workspace"] = Variant("s", os.path.realpath(workspace))
        sandbox = await self.manager.call_create_sandbox(request)
        self.finished.setdefault(sandbox, asyncio.get_running_loop().create_future())
        return sandbox

    async def run(self, sandbox, n, argv, timeout_usec=None, output_max=None):
        """Runs argv in the sandbox, streaming its stdout and stderr; returns the exec's result."""
        loop = asyncio.get_running_loop()
        out_r, out_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        options = {}
        if timeout_usec:
            options["timeout_usec"] = Variant("t", timeout_usec)
        if output_max:
            options["output_max"] = Variant("t", output_max)
        eof = loop.create_future()
        buf = bytearray()

        def readable():
            data = os.read(out_r, 65536)
            if not data:
                loop.remove_reader(out_r)
                if buf:
                    print("cmd %d| %s" % (n, buf.decode(errors="replace")), flush=True)
                eof.set_result(True)
                return
            buf.extend(data)
            while b"\n" in buf:
                line, _, rest = bytes(buf).partition(b"\n")
                print("cmd %d| %s" % (n, line.decode(errors="replace")), flush=True)
                buf[:] = rest

        try:
            # stdout and stderr both into the one pipe, in the order the command writes them
            exec_id = await self.manager.call_exec(sandbox, options, argv, devnull, out_w, out_w)
        finally:
            os.close(out_w)
            os.close(devnull)
        fut = self.results.setdefault(exec_id, loop.create_future())
        loop.add_reader(out_r, readable)
        result = await fut
        # the command's group is gone once it is reported: the pipe reaches its end
        await asyncio.wait_for(eof, 30)
        os.close(out_r)
        return result

    async def run_on_terminal(self, sandbox, n, argv, rows, cols):
        """Runs argv in the sandbox on a terminal of its own (request key "tty"): stdin, stdout and stderr
        are one stream socket; what the terminal shows comes back on it as plain bytes (typed bytes and
        window sizes would go the other way as frames, src/shared/tty-proto.h). Returns the exec's
        result and what the terminal showed."""
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        tty = {"rows": Variant("q", rows), "cols": Variant("q", cols), "term": Variant("s", "xterm")}
        options = {"tty": Variant("a{sv}", tty)}
        try:
            exec_id = await self.manager.call_exec(sandbox, options, argv, theirs.fileno(), theirs.fileno(),
                                                   theirs.fileno())
        finally:
            theirs.close()
        fut = self.results.setdefault(exec_id, loop.create_future())
        ours.setblocking(False)
        shown = bytearray()
        while True:
            data = await asyncio.wait_for(loop.sock_recv(ours, 65536), 30)
            if not data:
                break
            shown.extend(data)
        ours.close()
        result = await fut
        for line in shown.decode(errors="replace").splitlines():
            print("cmd %d| %s" % (n, line.rstrip("\r")), flush=True)
        return result, shown.decode(errors="replace")

    async def remove(self, sandbox):
        await self.manager.call_remove_sandbox(sandbox)
        return await asyncio.wait_for(self.finished[sandbox], 60)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile")
    parser.add_argument("--workspace")
    args = parser.parse_args()

    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    introspection = await bus.introspect(BUS_NAME, OBJECT_PATH)
    manager = bus.get_proxy_object(BUS_NAME, OBJECT_PATH, introspection).get_interface(INTERFACE)
    agent = Agent(bus, manager)
    ok = True

    sandbox = await agent.create(args.profile, args.workspace)
    say("created sandbox", sandbox)
    try:
        # 1. a first command: write a file and report
        r = await agent.run(sandbox, 1, ["sh", "-c", "echo hello from $(id -u); echo state > notes.txt; echo warn >&2"])
        say("command 1:", r["result"], "exit", r["exit_code"], "output", r["output_bytes"], "bytes")
        ok &= r["result"] == "exited" and r["exit_code"] == 0

        # 2. the next command sees what the first one left
        r = await agent.run(sandbox, 2, ["cat", "notes.txt"])
        say("command 2:", r["result"], "exit", r["exit_code"])
        ok &= r["exit_code"] == 0

        # 3. a command that overruns its time limit: the agent reads the stop reason and adapts
        r = await agent.run(sandbox, 3, ["sh", "-c", "echo working; sleep 60"], timeout_usec=1000000)
        say("command 3:", r["result"])
        if r["result"] == "timeout":
            say("command 3 hit its time limit; retrying with a smaller job")
            r = await agent.run(sandbox, 4, ["sh", "-c", "echo smaller job done"], timeout_usec=5000000)
            say("command 4:", r["result"], "exit", r["exit_code"])
            ok &= r["result"] == "exited" and r["exit_code"] == 0
        else:
            say("expected a timeout, got", r["result"])
            ok = False

        # 4. too much output: the command is ended past its ceiling (a profile whose
        #    resources.output_action is "cut" lets it go on, its output cut and counted in full)
        r = await agent.run(sandbox, 5, ["sh", "-c", "yes | head -c 50000"], output_max=100)
        say("command 5:", r["result"], "truncated", r["output_truncated"], "past the ceiling", r["output_bytes"] > 100)
        ok &= r["result"] == "output-limit" and r["output_truncated"] is True and r["output_bytes"] > 100

        # 5. a command that wants a terminal: one of the sandbox's own, at the size asked for
        r, shown = await agent.run_on_terminal(sandbox, 6, ["sh", "-c", "tty; stty size; echo TERM=$TERM"], 24, 100)
        on_pts = "/dev/pts/" in shown and "24 100" in shown and "TERM=xterm" in shown
        say("command 6:", r["result"], "exit", r["exit_code"], "on a terminal", on_pts)
        ok &= r["result"] == "exited" and r["exit_code"] == 0 and on_pts

        # 6. the record so far: figures only
        record = json.loads(await manager.call_get(sandbox))
        execs = record["sandbox"]["execs"]
        say("record:", len(execs), "execs:", " ".join(e["result"] for e in execs))
        ok &= len(execs) == 6
    except DBusError as e:
        say("error:", e.type, e.text)
        ok = False
    finally:
        final = await agent.remove(sandbox)
        say("removed; stop reason", final["stop_reason"], "cleanup completed", final["cleanup"]["completed"])
        ok &= final["stop_reason"] == "cancelled" and final["cleanup"]["completed"] is True

    say("all steps as expected" if ok else "SOME STEPS FAILED")
    bus.disconnect()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
