#!/usr/bin/python3
"""Follows one sandbox through its D-Bus object (org.sbx.Run1, org.sbx.Sandbox1) with python3-dbus-next,
as an agent would: finds it by name, subscribes, runs a command through the object, and checks the
properties and the PropertiesChanged it is sent until the sandbox is gone.

    objects-client.py NAME

Prints one line per check ("ok ..." or "FAIL ..."); exit status 0 when all passed."""
import asyncio
import os
import sys

from dbus_next import BusType, DBusError, Message, MessageType, Variant
from dbus_next.aio import MessageBus

NAME = "org.sbx.Manager1"
UINT64_MAX = 2**64 - 1
failures = 0


def check(cond, what):
    global failures
    print(("ok " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


async def main(name):
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    intro = await bus.introspect(NAME, "/org/sbx/Manager1")
    manager = bus.get_proxy_object(NAME, "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")

    request = {"name": Variant("s", name), "detach": Variant("b", True)}
    sid = await manager.call_create_sandbox(request)
    path = await manager.call_get_sandbox(name)
    check(path == "/org/sbx/sandbox/" + sid, "GetSandbox(name) is /org/sbx/sandbox/ID: " + path)
    check(await manager.call_get_run(sid) == path, "GetRun(id) of a sandbox is the same object")

    node = await bus.introspect(NAME, "/org/sbx/sandbox")
    check(sid in [n.name for n in node.nodes], "the sandbox is listed under /org/sbx/sandbox")

    obj = bus.get_proxy_object(NAME, path, await bus.introspect(NAME, path))
    run = obj.get_interface("org.sbx.Run1")
    sbx = obj.get_interface("org.sbx.Sandbox1")
    props = obj.get_interface("org.freedesktop.DBus.Properties")

    check(await run.get_id() == sid, "Id")
    check(await run.get_state() == "running", "State of a ready sandbox is running")
    check(await run.get_stop_reason() == "", "no StopReason while it runs")
    check((await run.get_unit()).startswith("sbx-"), "Unit")
    check(await sbx.get_name() == name, "Name")
    check(await sbx.get_detach() is True, "Detach")
    mem = await run.get_memory_current()
    if os.environ.get("SBX_LANE") == "native":
        # a testbed build without the memory controller: none to read (limits-client.py, in the vm lane,
        # reads it)
        check(mem == UINT64_MAX, "MemoryCurrent is unknown without a memory controller: %d" % mem)
    else:
        check(0 < mem < UINT64_MAX, "MemoryCurrent is read from its cgroup while it runs: %d" % mem)

    changes = []
    got = asyncio.Event()

    def on_changed(iface, changed, invalidated):
        changes.append((iface, {k: v.value for k, v in changed.items()}))
        got.set()

    props.on_properties_changed(on_changed)
    await run.call_subscribe()

    done = asyncio.get_running_loop().create_future()

    def on_exec_finished(sandbox_id, exec_id, exec_json):
        if not done.done():
            done.set_result(exec_json)

    manager.on_exec_finished(on_exec_finished)
    r, w = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    op = await sbx.call_exec({"timeout_usec": Variant("t", 30 * 10**6)}, ["sh", "-c", "echo via-object"], null, w, w)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        out += chunk
    check(out == b"via-object\n", "Exec on the object runs the command with the caller's fds: %r" % out)
    await asyncio.wait_for(done, 30)
    for _ in range(50):
        if any(i == "org.sbx.Sandbox1" and c.get("ExecsRunning") == 0 and c.get("ExecsTotal") == 1 for i, c in changes):
            break
        got.clear()
        try:
            await asyncio.wait_for(got.wait(), 0.2)
        except asyncio.TimeoutError:
            pass
    check(any(i == "org.sbx.Sandbox1" and c.get("ExecsRunning") == 1 for i, c in changes),
          "PropertiesChanged: ExecsRunning 1 while the command ran")
    check(any(i == "org.sbx.Sandbox1" and c.get("ExecsRunning") == 0 and c.get("ExecsTotal") == 1 for i, c in changes),
          "PropertiesChanged: ExecsRunning 0, ExecsTotal 1 after it")
    check(await sbx.get_execs_total() == 1, "ExecsTotal")

    try:
        await sbx.call_signal_exec(op, 99)
        check(False, "SignalExec with signal 99 is refused")
    except DBusError as e:
        check(e.type == "org.sbx.Error.InvalidRequest", "SignalExec with signal 99: " + e.type)

    changes.clear()
    await sbx.call_remove()
    for _ in range(150):
        if any(c.get("State") == "finished" for i, c in changes):
            break
        got.clear()
        try:
            await asyncio.wait_for(got.wait(), 0.2)
        except asyncio.TimeoutError:
            pass
    states = [c["State"] for i, c in changes if "State" in c]
    check("stopping" in states and states[-1:] == ["finished"], "State went stopping -> finished: %s" % states)
    final = [c for i, c in changes if c.get("State") == "finished"]
    check(bool(final) and final[-1].get("StopReason") == "cancelled" and final[-1].get("EndedAt", 0) > 0,
          "the last PropertiesChanged carries StopReason cancelled and EndedAt")
    await asyncio.sleep(0.5)
    try:
        await manager.call_get_run(sid)
        check(False, "after Finished the object is gone")
    except DBusError as e:
        check(e.type == "org.sbx.Error.NoSuchRun", "after Finished GetRun says " + e.type)
    reply = await bus.call(Message(destination=NAME, path=path, interface="org.freedesktop.DBus.Properties",
                                   member="Get", signature="ss", body=["org.sbx.Run1", "State"]))
    check(reply.message_type == MessageType.ERROR and reply.error_name == "org.freedesktop.DBus.Error.UnknownObject",
          "a property of the gone object: %s" % reply.error_name)
    return failures


if __name__ == "__main__":
    sys.exit(1 if asyncio.run(main(sys.argv[1])) else 0)
