#!/usr/bin/env bash
# The output ceiling (resources.output, here with output_action "cut"; test-63 has "stop", the default):
# stdout and stderr together are cut exactly at the limit, the
# rest is drained so the command does not block, the record says how much was written and that it was
# cut; a terminal stays a terminal; a reader that goes away still ends the command with SIGPIPE.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
t_add_profile sbxtest_output <<'EOF'
{
  "version": 1,
  "description": "sbx test: at most 1000 bytes of output",
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "wall_time": "5min", "output": 1000, "output_action": "cut" }
}
EOF
P=(-p sbxtest_output)

t_begin "the test profile loads"
assert_rc 0 sbxctl profile reload

t_begin "stdout and stderr together are cut exactly at the limit; the record says so"
assert_rc 0 sbxctl run --quiet "${P[@]}" -- sh -c 'head -c 5000 /dev/zero | tr "\0" a; echo; echo done >&2'
assert_eq 1000 "${#T_OUT}" "bytes the caller got"
assert_eq "" "$(printf '%s' "$T_OUT" | tr -d a)" "what the caller got (only the first 1000 bytes)"
run=$(last_run_id)
assert_eq true "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_eq 5006 "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes (all the command wrote)"

t_begin "output cut: one line on sbxctl's stderr says so (after the command's output), none with --quiet"
err=$(sbxctl run "${P[@]}" -- sh -c 'head -c 5000 /dev/zero | tr "\0" a' 2>&1 >/dev/null)
assert_eq "sbx: output cut at the limit 1000B (4.9K written) — write less to stdout and stderr" \
  "$(printf '%s' "$err" | grep '^sbx: ')" "the line"
assert_eq "output-cut output 1000" \
  "$(sbxctl run --json "${P[@]}" -- sh -c 'head -c 5000 /dev/zero' 2>&1 >/dev/null | grep '"event"' | jq -r '"\(.event) \(.limit) \(.value)"')" \
  "--json"

t_begin "under the limit nothing is cut; stdout and stderr still reach their own files"
sbxctl run "${P[@]}" -- sh -c 'echo to-stdout; echo to-stderr >&2' > "$W/out" 2> "$W/err"
assert_eq 0 "$?" "exit status"
assert_eq to-stdout "$(cat "$W/out")" "stdout"
assert_eq to-stderr "$(cat "$W/err")" "stderr"
run=$(last_run_id)
assert_eq false "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_eq 20 "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes"

t_begin "far more than the limit: the rest is drained, the command ends with its own status"
assert_rc 3 timeout 300 sbxctl run --quiet "${P[@]}" -- sh -c 'head -c 3000000 /dev/zero | tr "\0" b; exit 3'
assert_eq 1000 "${#T_OUT}" "bytes the caller got"
run=$(last_run_id)
assert_eq 3000000 "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes"
assert_eq true "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_eq exit-code "$(record_get "$run" '.stop_reason')" "stop_reason"

t_begin "a reader that goes away ends the command with SIGPIPE, also past the limit"
start=$SECONDS
timeout 300 sbxctl run "${P[@]}" -- yes | head -c 10 > "$W/head"
rcs=("${PIPESTATUS[@]}")
assert_eq "y y y y y " "$(tr '\n' ' ' < "$W/head")" "what head read"
assert_eq 141 "${rcs[0]}" "sbxctl's status (128 + SIGPIPE)"
assert_eq signal "$(record_get "$(last_run_id)" '.stop_reason')" "stop_reason"
t_log "took $((SECONDS - start)) s"

t_begin "a terminal stays a terminal for the command, and the limit holds there too"
if t_require_cmd script; then
  script -qec "sbxctl run -T ${P[*]} -- $PY -c 'import os; print(\"tty\", os.isatty(1), os.isatty(2))'" /dev/null > "$W/tty" 2>&1
  assert_contains "$(cat "$W/tty")" "tty True True" "isatty() of stdout and stderr inside"
  script -qec "sbxctl run -T --quiet ${P[*]} -- $PY -c 'import sys; sys.stdout.write(\"a\" * 5000)'" /dev/null > "$W/tty" 2>&1
  assert_eq 1000 "$(tr -cd a < "$W/tty" | wc -c)" "bytes through the terminal"
  assert_eq true "$(record_get "$(last_run_id)" '.output_truncated')" "output_truncated"
fi

t_begin "a terminal as stdin is no way around the limit: sbxctl passes it read-only, sbxd refuses it writable"
if t_require_cmd script; then
  script -qec "sbxctl run -T --quiet ${P[*]} -- sh -c 'if echo X >&0; then echo WROTE-FD0; else echo FD0-READ-ONLY; fi' 2>/dev/null" \
    /dev/null > "$W/tty0" 2>&1
  assert_contains "$(cat "$W/tty0")" "FD0-READ-ONLY" "writing to fd 0 inside"
  assert_not_contains "$(cat "$W/tty0")" "WROTE-FD0" "writing to fd 0 inside"
  # a client that passes its terminal open for writing is refused, with the reason
  assert_rc 0 /usr/bin/python3 - <<'PYEOF'
import asyncio, os, sys
from dbus_next import BusType, DBusError
from dbus_next.aio import MessageBus
from dbus_next import Variant

async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    intro = await bus.introspect("org.sbx.Manager1", "/org/sbx/Manager1")
    m = bus.get_proxy_object("org.sbx.Manager1", "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")
    master, slave = os.openpty()
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        await m.call_run({"profile": Variant("s", "sbxtest_output")}, ["true"], slave, null, null)
        print("FAIL: a writable terminal as stdin was accepted")
        return 1
    except DBusError as e:
        ok = e.type == "org.sbx.Error.InvalidRequest" and e.text.startswith("stdin: a terminal open for writing")
        print(("ok " if ok else "FAIL ") + e.type + ": " + e.text)
        return 0 if ok else 1

sys.exit(asyncio.run(main()))
PYEOF
  assert_contains "$T_OUT" "ok org.sbx.Error.InvalidRequest: stdin: a terminal open for writing"
  assert_clean
fi

t_begin "a profile without an output limit: the output is not relayed or counted"
assert_rc 0 sbxctl run -- sh -c 'head -c 5000 /dev/zero | tr "\0" a'
assert_eq 5000 "${#T_OUT}" "bytes the caller got"
run=$(last_run_id)
assert_eq null "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes"
assert_eq false "$(record_get "$run" '.output_truncated')" "output_truncated"

assert_clean "after all runs"
t_summary
