#!/usr/bin/python3
"""One method call to sbxd on the system bus, with file descriptors (which busctl cannot pass).

    bus-call.py PATH INTERFACE MEMBER SIGNATURE JSON_BODY

Values of type h in the body are fd numbers of this process. Variants in a{sv} are written as
["SIG", value]; an array of strings written "@seq:N" is the strings "1" to "N", "@long:N:SIZE" is N
strings of SIZE x's each. Prints the reply's body as JSON (exit 0), or "ERROR NAME: MESSAGE" (exit 1)."""
import asyncio
import json
import sys

from dbus_next import BusType, Message, MessageType, Variant
from dbus_next.aio import MessageBus
from dbus_next.signature import SignatureTree


def convert(t, v, fds):
    if t.token == "h":
        fds.append(v)
        return len(fds) - 1
    if t.token == "v":
        return Variant(v[0], v[1])
    if t.token == "a" and t.children[0].token == "{":
        kt, vt = t.children[0].children
        return {convert(kt, k, fds): convert(vt, x, fds) for k, x in v.items()}
    if t.token == "a":
        if isinstance(v, str) and v.startswith("@seq:"):  # "@seq:N": the strings "1" to "N"
            return [str(i) for i in range(1, int(v[5:]) + 1)]
        if isinstance(v, str) and v.startswith("@long:"):  # "@long:N:SIZE": N strings of SIZE x's
            n, size = v[6:].split(":")
            return ["x" * int(size)] * int(n)
        return [convert(t.children[0], x, fds) for x in v]
    return v


async def main(path, iface, member, sig, body):
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    fds = []
    types = SignatureTree(sig).types
    args = [convert(t, v, fds) for t, v in zip(types, body)]
    reply = await bus.call(Message(destination="org.sbx.Manager1", path=path, interface=iface, member=member,
                                   signature=sig, body=args, unix_fds=fds))
    if reply.message_type == MessageType.ERROR:
        print("ERROR %s: %s" % (reply.error_name, reply.body[0] if reply.body else ""))
        return 1
    print(json.dumps(reply.body, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:5], json.loads(sys.argv[5]))))
