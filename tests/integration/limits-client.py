#!/usr/bin/python3
"""A sandbox that meets its task ceiling, followed through its D-Bus object (python3-dbus-next): the
LimitEvents property it carries in its last PropertiesChanged must name the event as the record does.

    limits-client.py NAME

Prints one line per check ("ok ..." or "FAIL ..."); exit status 0 when all passed."""
import asyncio
import json
import os
import sys

from dbus_next import BusType, Variant
from dbus_next.aio import MessageBus

UINT64_MAX = (1 << 64) - 1
NAME = "org.sbx.Manager1"
failures = 0

# forks until refused, then exits 2 (the helper ends what is left); sleep is started first, so that the
# shell's own last fork never competes with the bomb for a slot
BOMB = 'sleep 2 & s=$!; b() { b | b & }; b; wait "$s"; exit 2'


def check(cond, what):
    global failures
    print(("ok " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


async def main(name):
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    intro = await bus.introspect(NAME, "/org/sbx/Manager1")
    manager = bus.get_proxy_object(NAME, "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")

    request = {"name": Variant("s", name), "detach": Variant("b", True), "tasks": Variant("t", 32)}
    sid = await manager.call_create_sandbox(request)
    path = await manager.call_get_sandbox(name)
    obj = bus.get_proxy_object(NAME, path, await bus.introspect(NAME, path))
    run = obj.get_interface("org.sbx.Run1")
    sbx = obj.get_interface("org.sbx.Sandbox1")
    props = obj.get_interface("org.freedesktop.DBus.Properties")
    check(await run.get_limit_events() == [], "LimitEvents is empty while the sandbox runs")
    mem = await run.get_memory_current()
    check(0 < mem < UINT64_MAX, "MemoryCurrent is read from its cgroup while it runs: %d" % mem)

    changes = []
    got = asyncio.Event()

    def on_changed(iface, changed, invalidated):
        changes.append({k: v.value for k, v in changed.items()})
        got.set()

    props.on_properties_changed(on_changed)
    await run.call_subscribe()

    done = asyncio.get_running_loop().create_future()

    def on_exec_finished(sandbox_id, exec_id, exec_json):
        if not done.done():
            done.set_result(exec_json)

    manager.on_exec_finished(on_exec_finished)
    null = os.open(os.devnull, os.O_RDWR)
    await sbx.call_exec({"timeout_usec": Variant("t", 60 * 10**6)}, ["bash", "-c", BOMB], null, null, null)
    result = json.loads(await asyncio.wait_for(done, 90))
    check(result.get("exit_code") == 2, "the fork bomb's exec ended with its own status: %s" % result)

    await sbx.call_remove()
    for _ in range(300):
        if any(c.get("State") == "finished" for c in changes):
            break
        got.clear()
        try:
            await asyncio.wait_for(got.wait(), 0.2)
        except asyncio.TimeoutError:
            pass
    final = [c for c in changes if c.get("State") == "finished"]
    check(bool(final), "the sandbox finished")
    events = final[-1].get("LimitEvents", []) if final else []
    forks = [e for e in events if e[0] == "fork-refused"]
    check(len(forks) == 1, "LimitEvents of the finished sandbox has fork-refused: %s" % events)
    if forks:
        event, limit, value, used, count, raise_to, stopped, message = forks[0]
        check(limit == "tasks" and value == 32 and count > 0 and not stopped,
              "fork-refused: limit tasks, value 32, count %d > 0, did not stop it" % count)
        check(used == 32, "used (tasks peak) is the ceiling: %d" % used)
        check(raise_to == 512, "raise_to is the profile's ceiling: %d" % raise_to)
        check(message.startswith("fork refused %d time" % count) and "task limit 32 reached" in message,
              "message: " + message)
    print("sandbox " + sid, flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(1 if asyncio.run(main(sys.argv[1])) else 0)
