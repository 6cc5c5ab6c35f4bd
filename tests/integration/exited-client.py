#!/usr/bin/python3
"""A run's end as a D-Bus client sees it (python3-dbus-next): Exited(run_id, record_json) comes before
Finished, as soon as the command has ended, with the command's outcome and a record that says "exited"
and that its cleanup has not completed; Finished then brings the final record. With the request key
wait_cleanup, only Finished comes. Without a workspace to hand back, Exited does not wait for the unit's
end (its figures reader, the cgroup's removal); with one (SBX_EXITED_WORKSPACE: a directory of the
caller's), it comes after the hand-back, when the unit is inactive.

    exited-client.py

Prints one line per check ("ok ..." or "FAIL ..."); exit status 0 when all passed."""
import asyncio
import datetime
import json
import os
import sys

from dbus_next import BusType, Message, Variant
from dbus_next.errors import DBusError
from dbus_next.aio import MessageBus

NAME = "org.sbx.Manager1"
failures = 0


def check(cond, what):
    global failures
    print(("ok " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


async def one_run(manager, argv, request, signals):
    """Starts a run and returns its id and the signals it got, in order: [(member, record), ...]."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    ours = []
    waiting = {"id": None}

    def on(member):
        def handler(run_id, record_json):
            signals.append((member, run_id, json.loads(record_json)))
            if waiting["id"] == run_id and member == "Finished" and not done.done():
                done.set_result(True)
        return handler

    handlers = {"Exited": on("Exited"), "Finished": on("Finished")}
    manager.on_exited(handlers["Exited"])
    manager.on_finished(handlers["Finished"])
    null = os.open(os.devnull, os.O_RDWR)
    try:
        run_id = await manager.call_run(request, argv, null, null, null)
    finally:
        os.close(null)
    waiting["id"] = run_id
    if any(m == "Finished" and i == run_id for m, i, _ in signals):
        done.set_result(True)
    await asyncio.wait_for(done, 60)
    manager.off_exited(handlers["Exited"])
    manager.off_finished(handlers["Finished"])
    for m, i, rec in signals:
        if i == run_id:
            ours.append((m, rec))
    return run_id, ours


async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    intro = await bus.introspect(NAME, "/org/sbx/Manager1")
    manager = bus.get_proxy_object(NAME, "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")

    # 1. the default: Exited, then Finished
    signals = []
    run_id, got = await one_run(manager, ["sh", "-c", "exit 7"], {}, signals)
    members = [m for m, _ in got]
    check(members == ["Exited", "Finished"], "Exited comes before Finished, once each: %s" % members)
    if members == ["Exited", "Finished"]:
        ex, fin = got[0][1], got[1][1]
        check(ex.get("run_id") == run_id, "Exited's record is the run's")
        check(ex.get("state") == "exited", "Exited's record: state \"exited\": %r" % ex.get("state"))
        check(ex.get("cleanup", {}).get("completed") is False,
              "Exited's record: cleanup.completed false: %r" % ex.get("cleanup"))
        check("remaining" not in ex.get("cleanup", {}), "Exited's record: no cleanup.remaining (not final yet)")
        check(ex.get("stop_reason") == "exit-code", "Exited's record: stop_reason exit-code: %r" % ex.get("stop_reason"))
        check(ex.get("exit", {}).get("code") == 7, "Exited's record: exit code 7: %r" % ex.get("exit"))
        check(ex.get("ended_at") is not None, "Exited's record: ended_at set")
        check(fin.get("state") == "finished", "Finished's record: state \"finished\": %r" % fin.get("state"))
        check(fin.get("cleanup", {}).get("completed") is True,
              "Finished's record: cleanup completed: %r" % fin.get("cleanup"))
        for k in ("stop_reason", "exit", "ended_at", "started_at", "profile", "policy_digest", "limits", "resources",
                  "limit_events", "disk"):
            check(ex.get(k) == fin.get(k), "Exited's and Finished's records agree on %s" % k)
        check(ex.get("cleanup", {}).get("unit_gone") is False, "Exited's record: the unit is not gone yet")

    # 2. wait_cleanup: Finished only
    signals = []
    run_id, got = await one_run(manager, ["sh", "-c", "exit 3"], {"wait_cleanup": Variant("b", True)}, signals)
    members = [m for m, _ in got]
    check(members == ["Finished"], "with wait_cleanup, Finished only: %s" % members)
    if members == ["Finished"]:
        check(got[0][1].get("exit", {}).get("code") == 3, "with wait_cleanup: exit code 3")

    # 3. a command killed by a signal: Exited says so too
    signals = []
    run_id, got = await one_run(manager, ["sh", "-c", "kill -TERM $$"], {}, signals)
    members = [m for m, _ in got]
    check(members == ["Exited", "Finished"], "killed by a signal: Exited, then Finished: %s" % members)
    if members == ["Exited", "Finished"]:
        ex, fin = got[0][1], got[1][1]
        check(ex.get("stop_reason") == fin.get("stop_reason") == "signal",
              "killed by a signal: stop_reason %r at Exited, %r at Finished" % (ex.get("stop_reason"), fin.get("stop_reason")))
        check(ex.get("exit", {}).get("signal") == 15, "killed by a signal: exit.signal 15 at Exited")

    # 4. Exited goes to the run's client only: another connection gets neither signal
    other = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    oman = other.get_proxy_object(NAME, "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")
    seen = []
    oman.on_exited(lambda i, j: seen.append(("Exited", i)))
    oman.on_finished(lambda i, j: seen.append(("Finished", i)))
    signals = []
    run_id, got = await one_run(manager, ["true"], {}, signals)
    await asyncio.sleep(0.5)
    check(not [s for s in seen if s[1] == run_id], "another connection gets no Exited or Finished of the run: %s" % seen)
    other.disconnect()

    # 5. the answer does not wait for the unit's end: without a workspace to hand back, Exited comes at
    #    the unit's stop-post, before systemd says the unit is inactive (its figures reader, the cgroup's
    #    removal: cleanup); with a workspace, after it (the hand-back is an ExecStopPost= and part of the
    #    answer). Seen as this connection receives them: systemd's PropertiesChanged of the unit, then or
    #    after sbxd's Exited. sbxd answered at inactive before, which this client always saw second.
    order = []

    def on_message(msg):
        if msg.member == "PropertiesChanged" and msg.path.startswith("/org/freedesktop/systemd1/unit/sbx_2d") \
                and msg.body and msg.body[0] == "org.freedesktop.systemd1.Unit":
            st = msg.body[1].get("ActiveState")
            if st is not None:
                order.append((st.value, msg.path))
            sub = msg.body[1].get("SubState")
            if sub is not None and sub.value == "stop-post":
                order.append(("stop-post", msg.path))
        elif msg.member == "Exited" and msg.interface == NAME:
            order.append(("Exited", msg.body[0]))
        return None

    rule = ("type='signal',sender='org.freedesktop.systemd1',interface='org.freedesktop.DBus.Properties',"
            "member='PropertiesChanged',path_namespace='/org/freedesktop/systemd1/unit'")
    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                           interface="org.freedesktop.DBus", member="AddMatch", signature="s", body=[rule]))
    bus.add_message_handler(on_message)

    def unit_path(unit):
        return "/org/freedesktop/systemd1/unit/" + "".join(
            c if c.isalnum() else "_%02x" % ord(c) for c in unit)

    async def answered_first(request):
        """Of 5 runs, how many were answered before their unit was inactive."""
        first = 0
        for _ in range(5):
            signals = []
            run_id, got = await one_run(manager, ["true"], request, signals)
            await asyncio.sleep(0.2)
            ex = [r for m, r in got if m == "Exited"]
            if not ex:
                continue
            p = unit_path(ex[0]["unit"])
            # the unit's end: inactive (or failed) once it had been active; before its start it is
            # inactive too
            kinds, began = [], False
            for k, v in order:
                if v == run_id and k == "Exited":
                    kinds.append(k)
                elif v == p and k in ("active", "deactivating"):
                    began = True
                elif v == p and k in ("inactive", "failed") and began:
                    kinds.append("inactive")
            if kinds[:1] == ["Exited"]:
                first += 1
        return first

    n = await answered_first({})
    check(n >= 3, "without a workspace, Exited came before the unit was inactive in %d of 5 runs (>= 3)" % n)
    ws = os.environ.get("SBX_EXITED_WORKSPACE")
    if ws:
        n = await answered_first({"workspace": Variant("s", ws)})
        check(n == 0, "with a workspace, Exited came after the unit was inactive (its hand-back) in all 5 runs: "
              "%d came first" % n)

    # 7. earlier still: a command that exits is answered at its helper's report, once sbxd has seen that
    #    nothing but the helper is left in the cgroup, before systemd has even reaped the helper (the
    #    unit's stop-post); one a signal ended waits for stop-post; a command that forges the helper's
    #    report (sd_notify from its own process) is not believed, and its run is answered at its end.
    async def answered_before_stop_post(argv):
        """Of 5 runs of argv: how many were answered before their unit's stop-post, and the records."""
        first, recs = 0, []
        for _ in range(5):
            signals = []
            run_id, got = await one_run(manager, argv, {}, signals)
            await asyncio.sleep(0.2)
            ex = [r for m, r in got if m == "Exited"]
            fin = [r for m, r in got if m == "Finished"]
            if not ex or not fin:
                continue
            recs.append((ex[0], fin[0]))
            p = unit_path(ex[0]["unit"])
            kinds = [k for k, v in order if (v == run_id and k == "Exited") or (v == p and k == "stop-post")]
            if kinds[:1] == ["Exited"]:
                first += 1
        return first, recs

    n, recs = await answered_before_stop_post(["sh", "-c", "sleep 30 & exit 4"])
    check(n >= 3, "a command that exits: answered before the unit's stop-post in %d of 5 runs (>= 3)" % n)
    check(len(recs) == 5 and all(e.get("exit", {}).get("code") == 4 and e.get("stop_reason") == "exit-code" and
                                 e.get(k) == f.get(k) for e, f in recs
                                 for k in ("exit", "stop_reason", "resources", "limit_events")),
          "a command that exits (leaving a process behind): exit code 4 at Exited, as at Finished, in all 5 runs")
    check(all(f.get("cleanup", {}).get("completed") is True for _, f in recs),
          "a command that exits: every cleanup completed")
    n, recs = await answered_before_stop_post(["sh", "-c", "kill -KILL $$"])
    check(n == 0, "a command a signal ended: answered at the unit's stop-post, not before, in all 5 runs: "
          "%d came first" % n)
    check(len(recs) == 5 and all(e.get("exit", {}).get("signal") == 9 == f.get("exit", {}).get("signal")
                                 for e, f in recs),
          "a command a signal ended: exit.signal 9 at Exited and at Finished in all 5 runs")
    signals = []
    forge = ("for s in /run/systemd/notify \"$NOTIFY_SOCKET\"; do "
             "NOTIFY_SOCKET=$s systemd-notify --status='finished exit_status=0' 2>/dev/null; done; sleep 1.5; exit 5")
    run_id, got = await one_run(manager, ["sh", "-c", forge], {}, signals)
    ex = [r for m, r in got if m == "Exited"]
    check(len(ex) == 1 and ex[0].get("exit", {}).get("code") == 5 and ex[0].get("stop_reason") == "exit-code",
          "a forged report (STATUS=finished exit_status=0 from the command): Exited says exit code 5 all the same: %s"
          % [e.get("exit") for e in ex])

    def stamp(t):
        return datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() if t else 0

    took = stamp(ex[0].get("ended_at")) - stamp(ex[0].get("started_at")) if len(ex) == 1 else 0
    check(took >= 1.4, "a forged report: the run was answered at its command's end, 1.5 s on, not at the "
          "forgery: %.2f s" % took)

    # The helper's direct report (FINISHED on the run's control channel, sandbox-proto.h): the command
    # looks for the channel among the descriptors it inherited and takes its parent's with
    # pidfd_getfd(), sends the packet on every socket it finds, exits 5 after 1.5 s, 6 if a send worked.
    forge = r'''
import ctypes, os, socket, struct, sys, time
pkt = struct.pack("=II33s7x", 5, 0, b"") + b"finished exit_status=0".ljust(512, b"\0")
sent = 0
def try_send(fd):
    global sent
    try:
        s = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return
    try:
        s.send(pkt)
        sent += 1
    except OSError:
        pass
    s.close()
for fd in range(3, 256):
    try:
        try_send(os.dup(fd))
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
try:
    pidfd = os.pidfd_open(os.getppid())
    for n in range(64):
        fd = libc.syscall(438, pidfd, n, 0)
        if fd >= 0:
            try_send(fd)
except (OSError, AttributeError):
    pass
time.sleep(1.5)
sys.exit(6 if sent else 5)
'''
    run_id, got = await one_run(manager, ["python3", "-c", forge], {}, signals)
    ex = [r for m, r in got if m == "Exited"]
    check(len(ex) == 1 and ex[0].get("exit", {}).get("code") == 5 and ex[0].get("stop_reason") == "exit-code",
          "a forged FINISHED (from the command, on every socket it has or can take from its parent): none "
          "reached a channel, Exited says exit code 5: %s" % [e.get("exit") for e in ex])
    took = stamp(ex[0].get("ended_at")) - stamp(ex[0].get("started_at")) if len(ex) == 1 else 0
    check(took >= 1.4, "a forged FINISHED: the run was answered at its command's end, 1.5 s on: %.2f s" % took)
    bus.remove_message_handler(on_message)

    # 6. wait_cleanup is a run's key: CreateSandbox refuses it
    try:
        sid = await manager.call_create_sandbox({"wait_cleanup": Variant("b", True), "detach": Variant("b", True)})
        check(False, "CreateSandbox refuses wait_cleanup")
        await manager.call_remove_sandbox(sid)
    except DBusError as e:
        check(e.type == "org.sbx.Error.InvalidRequest", "CreateSandbox refuses wait_cleanup: " + e.type)
    bus.disconnect()


asyncio.run(main())
sys.exit(1 if failures else 0)
