#!/usr/bin/env bash
# examples/agent.py, the reference D-Bus client (python3-dbus-next), against the real sbxd on the
# system bus: it creates a sandbox, runs commands streaming their output, adapts to a time limit,
# reads the record and removes the sandbox. Run as an unprivileged user too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
REPO=$(cd "$(dirname "$0")/../.." && pwd)
AGENT=$REPO/examples/agent.py

t_begin "the installed introspection file is the interface sbxd serves"
XML=/usr/share/dbus-1/interfaces/org.sbx.Manager1.xml
assert_file "$XML" "the introspection file"
live=$(busctl introspect --xml-interface org.sbx.Manager1 /org/sbx/Manager1 2>&1) || _t_err "busctl introspect: $live"
# every method and signal with its arguments (type, name, direction), in order, from both
# shellcheck disable=SC2016
SHAPE='
import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read())
for i in root.iter("interface"):
    if i.get("name") != "org.sbx.Manager1":
        continue
    for m in i:
        print(m.tag, m.get("name"), " ".join("%s:%s:%s" % (a.get("type"), a.get("name"), a.get("direction", "")) for a in m.iter("arg")))
'
want=$(/usr/bin/python3 -c "$SHAPE" "$XML")
got=$(printf '%s' "$live" | /usr/bin/python3 -c "$SHAPE" -)
[ -n "$want" ] || _t_err "no org.sbx.Manager1 interface in $XML"
assert_eq "$want" "$got" "methods and signals of the installed file vs the running sbxd"

t_begin "examples/agent.py (root): every step as expected, output streamed, record and removal"
if ! /usr/bin/python3 -c 'import dbus_next' 2>/dev/null; then
  t_fail "python3-dbus-next is not installed (scripts/install-deps.sh)"
else
  assert_rc 0 /usr/bin/python3 "$AGENT"
  assert_contains "$T_OUT" "cmd 1| hello from " "the first command's output, streamed"
  assert_contains "$T_OUT" "cmd 1| warn" "its stderr"
  assert_contains "$T_OUT" "cmd 2| state" "the second command sees the first one's file"
  assert_contains "$T_OUT" "cmd 3| working" "output before the timeout"
  assert_contains "$T_OUT" "command 3 hit its time limit; retrying" "the agent adapted to the stop reason"
  assert_contains "$T_OUT" "cmd 4| smaller job done"
  assert_contains "$T_OUT" "command 5: exited output 50000 bytes, truncated True"
  assert_contains "$T_OUT" "record: 5 execs: exited exited timeout exited exited"
  assert_contains "$T_OUT" "removed; stop reason cancelled cleanup completed True"
  assert_contains "$T_OUT" "agent: all steps as expected"
  # the output ceiling held: 100 bytes of "y\n" at most reached the agent
  n=$(printf '%s\n' "$T_OUT" | grep -c '^cmd 5| y$')
  [ "$n" -le 50 ] || _t_err "command 5 passed $n lines, more than its 100-byte ceiling"
  assert_clean
fi

t_begin "examples/agent.py as an unprivileged user"
if id nobody >/dev/null 2>&1 && /usr/bin/python3 -c 'import dbus_next' 2>/dev/null; then
  assert_rc 0 runuser -u nobody -- /usr/bin/python3 "$AGENT"
  assert_contains "$T_OUT" "agent: all steps as expected"
  assert_clean
else
  t_skip "no user 'nobody', or python3-dbus-next missing"
fi

t_summary
