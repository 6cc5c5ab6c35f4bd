#!/usr/bin/env bash
# examples/agent.py, the reference D-Bus client (python3-dbus-next), against the real sbxd on the
# system bus: it creates a sandbox, runs commands streaming their output, adapts to a time limit,
# reads the record and removes the sandbox. Run as an unprivileged user too.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
REPO=$(cd "$(dirname "$0")/../.." && pwd)
AGENT=$REPO/examples/agent.py
OBJCLIENT=$REPO/tests/integration/objects-client.py
BUSCALL=$REPO/tests/integration/bus-call.py

# every method, signal and property with its arguments or type (and a property's change annotation),
# in order, of one interface (argv[2]) of an introspection document (argv[1], "-": stdin)
# shellcheck disable=SC2016
SHAPE='
import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read())
for i in root.iter("interface"):
    if i.get("name") != sys.argv[2]:
        continue
    for m in i:
        if m.tag == "property":
            ann = [a.get("value") for a in m.iter("annotation") if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal"]
            print("property", m.get("name"), m.get("type"), m.get("access"), ann[0] if ann else "true")
        elif m.tag in ("method", "signal"):
            print(m.tag, m.get("name"), " ".join("%s:%s:%s" % (a.get("type"), a.get("name"), a.get("direction", "")) for a in m.iter("arg")))
'
# check_interface IFACE PATH: the installed file of IFACE vs what sbxd introspects at PATH
check_interface() {
  local xml=/usr/share/dbus-1/interfaces/$1.xml live want got
  assert_file "$xml" "the introspection file of $1"
  live=$(busctl introspect --xml-interface org.sbx.Manager1 "$2" 2>&1) || { _t_err "busctl introspect $2: $live"; return; }
  want=$(/usr/bin/python3 -c "$SHAPE" "$xml" "$1")
  got=$(printf '%s' "$live" | /usr/bin/python3 -c "$SHAPE" - "$1")
  [ -n "$want" ] || _t_err "no $1 interface in $xml"
  assert_eq "$want" "$got" "members of $1: the installed file vs the running sbxd"
}

t_begin "the installed introspection files are the interfaces sbxd serves (manager, run and sandbox objects)"
check_interface org.sbx.Manager1 /org/sbx/Manager1
sid=$(sbxctl create --detach --name shape-check) || _t_err "create: $sid"
check_interface org.sbx.Run1 "/org/sbx/sandbox/$sid"
check_interface org.sbx.Sandbox1 "/org/sbx/sandbox/$sid"
assert_rc 0 sbxctl rm "$sid"
sb_gone "$sid"
assert_clean

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
  assert_contains "$T_OUT" "command 5: output-limit truncated True past the ceiling True"
  assert_contains "$T_OUT" "command 6: exited exit 0 on a terminal True" "a command on a terminal (tty)"
  assert_contains "$T_OUT" "cmd 6| 24 100" "its terminal's size"
  assert_contains "$T_OUT" "record: 6 execs: exited exited timeout exited output-limit exited"
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

t_begin "a sandbox through its object: properties, Exec, Subscribe and PropertiesChanged, Remove (root, then nobody)"
if ! /usr/bin/python3 -c 'import dbus_next' 2>/dev/null; then
  t_fail "python3-dbus-next is not installed (scripts/install-deps.sh)"
else
  assert_rc 0 /usr/bin/python3 "$OBJCLIENT" objects-root
  assert_not_contains "$T_OUT" "FAIL" "root's checks"
  assert_contains "$T_OUT" "ok State went stopping -> finished"
  if id nobody >/dev/null 2>&1; then
    assert_rc 0 runuser -u nobody -- /usr/bin/python3 "$OBJCLIENT" objects-nobody
    assert_not_contains "$T_OUT" "FAIL" "nobody's checks"
  fi
  assert_clean
fi

BUS=(busctl --system)
t_begin "tenants and objects: another user's run and sandbox objects are unknown to a caller, root may look but not exec"
if ! id nobody >/dev/null 2>&1; then
  t_skip "no user 'nobody' here"
else
  sid=$(sbxctl create --detach --name tenant-obj) || _t_err "create: $sid"
  p=/org/sbx/sandbox/$sid
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" get-property org.sbx.Manager1 "$p" org.sbx.Run1 State
  assert_contains "$T_OUT" "Unknown object" "nobody reads a property of root's sandbox"
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" call org.sbx.Manager1 "$p" org.sbx.Sandbox1 Remove
  assert_contains "$T_OUT" "Unknown object" "nobody calls Remove on root's sandbox"
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" call org.sbx.Manager1 "$p" org.sbx.Run1 Stop
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" call org.sbx.Manager1 "$p" org.sbx.Run1 Subscribe
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" call org.sbx.Manager1 /org/sbx/Manager1 org.sbx.Manager1 GetRun s "$sid"
  assert_contains "$T_OUT" "no run $sid" "GetRun of root's sandbox by nobody"
  assert_rc 0 runuser -u nobody -- "${BUS[@]}" introspect --xml-interface org.sbx.Manager1 /org/sbx/sandbox
  assert_not_contains "$T_OUT" "$sid" "the nodes nobody sees under /org/sbx/sandbox"
  assert_rc 1 runuser -u nobody -- "${BUS[@]}" call org.sbx.Manager1 /org/sbx/Manager1 org.sbx.Manager1 ListAll
  assert_contains "$T_OUT" "org.sbx.manage-all-runs" "ListAll without the grant"
  assert_eq running "$(busctl get-property org.sbx.Manager1 "$p" org.sbx.Run1 State | awk '{print $2}' | tr -d '"')" \
    "root's sandbox after nobody's attempts"
  # nobody's own sandbox: root sees and may remove it, but runs nothing in it
  nsid=$(runuser -u nobody -- sbxctl create --detach --name nobodys) || _t_err "create as nobody: $nsid"
  np=/org/sbx/sandbox/$nsid
  assert_rc 0 "${BUS[@]}" get-property org.sbx.Manager1 "$np" org.sbx.Run1 State
  assert_contains "$T_OUT" running "root reads nobody's sandbox's State"
  assert_rc 1 /usr/bin/python3 "$BUSCALL" "$np" org.sbx.Sandbox1 Exec 'a{sv}ashhh' '[{}, ["/bin/true"], 0, 1, 2]'
  assert_contains "$T_OUT" "ERROR org.sbx.Error.AccessDenied: sandbox $nsid: only its owner runs commands in it" \
    "root's Exec into nobody's sandbox object"
  assert_rc 0 "${BUS[@]}" call org.sbx.Manager1 "$np" org.sbx.Sandbox1 Remove
  assert_rc 0 sbxctl rm "$sid"
  sb_gone "$sid"
  sb_gone "$nsid"
  assert_eq 0 "$(record_get "$nsid" '.sandbox.execs_total')" "execs of nobody's sandbox"
  assert_clean
fi

t_begin "malformed calls: named one-line errors, nothing started, nothing left"
before=$(sbxctl list --no-legend | wc -l)
M=(org.sbx.Manager1 /org/sbx/Manager1 org.sbx.Manager1)
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 frob s x
assert_contains "$T_OUT" "request: unknown key 'frob'"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 memory s lots
assert_contains "$T_OUT" "memory: expected an unsigned 64-bit integer"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 2 memory t 100000000 memory t 200000000
assert_contains "$T_OUT" "request: key 'memory' given twice"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 idle_timeout_usec t 0
assert_contains "$T_OUT" "idle_timeout_usec: must be greater than 0"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 cpu_percent t 100001
assert_contains "$T_OUT" "cpu_percent: 100001 is too large"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 name s ../../etc
assert_contains "$T_OUT" "is not a sandbox name"
assert_rc 1 /usr/bin/python3 "$BUSCALL" /org/sbx/Manager1 org.sbx.Manager1 Run 'a{sv}ashhh' \
  '[{"detach": ["b", true]}, ["/bin/true"], 0, 1, 2]'
assert_contains "$T_OUT" "ERROR org.sbx.Error.InvalidRequest: request: unknown key 'detach'" "a sandbox's key in Run"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 1 term s xterm
assert_contains "$T_OUT" "request: unknown key 'term'" "a run's key in CreateSandbox"
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox s notadict
assert_contains "$T_OUT" "nvalid" "a wrong signature"
# a request of 20000 keys: refused at the first unknown one, sbxd still answers at once
keys=$(for i in $(seq 20000); do printf 'k%d s v ' "$i"; done)
# shellcheck disable=SC2086
assert_rc 1 "${BUS[@]}" call "${M[@]}" CreateSandbox 'a{sv}' 20000 $keys
assert_contains "$T_OUT" "unknown key 'k1'"
assert_rc 1 /usr/bin/python3 "$BUSCALL" /org/sbx/Manager1 org.sbx.Manager1 Run 'a{sv}ashhh' \
  "[{}, \"@long:25:100000\", 0, 1, 2]"
assert_contains "$T_OUT" "ERROR org.sbx.Error.InvalidRequest: command: 25 arguments and 0 environment entries take" \
  "a Run of 2.5 MB of arguments (more than execve() takes)"
sid=$(sbxctl create --detach --name malformed) || _t_err "create: $sid"
assert_rc 1 /usr/bin/python3 "$BUSCALL" "/org/sbx/sandbox/$sid" org.sbx.Sandbox1 Exec 'a{sv}ashhh' \
  "[{\"timeout_usec\": [\"s\", \"1s\"]}, [\"/bin/true\"], 0, 1, 2]"
assert_contains "$T_OUT" "ERROR org.sbx.Error.InvalidRequest: timeout_usec: expected an unsigned 64-bit integer"
assert_rc 1 /usr/bin/python3 "$BUSCALL" "/org/sbx/sandbox/$sid" org.sbx.Sandbox1 Exec 'a{sv}ashhh' '[{}, [], 0, 1, 2]'
assert_contains "$T_OUT" "ERROR org.sbx.Error.InvalidRequest: command: no command given"
assert_rc 1 /usr/bin/python3 "$BUSCALL" "/org/sbx/sandbox/$sid" org.sbx.Sandbox1 Exec 'a{sv}ashhh' \
  "[{}, \"@long:25:100000\", 0, 1, 2]"
assert_contains "$T_OUT" "ERROR org.sbx.Error.InvalidRequest: command: 25 arguments and 0 environment entries take"
assert_eq 0 "$(busctl get-property org.sbx.Manager1 "/org/sbx/sandbox/$sid" org.sbx.Sandbox1 ExecsTotal | awk '{print $2}')" \
  "execs started by the malformed calls"
assert_rc 0 sbxctl rm "$sid"
sb_gone "$sid"
before=$((before + 1))
for bad in /org/sbx/run/nothex /org/sbx/run/0123456789abcdef0123456789abcdef /org/sbx/sandbox/x/y /org/sbx/runx; do
  assert_rc 1 "${BUS[@]}" get-property org.sbx.Manager1 "$bad" org.sbx.Run1 State
  assert_contains "$T_OUT" "Unknown object" "a property of $bad"
done
assert_rc 1 "${BUS[@]}" call "${M[@]}" GetRun s ../x
assert_contains "$T_OUT" "is not a run id"
assert_rc 1 "${BUS[@]}" call "${M[@]}" GetSandbox s 'bad name'
assert_contains "$T_OUT" "neither a sandbox id nor a name"
assert_eq "$before" "$(sbxctl list --no-legend | wc -l)" "records after the malformed calls"
assert_rc 0 busctl call "${M[@]}" List
assert_clean

t_summary
