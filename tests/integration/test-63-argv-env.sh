#!/usr/bin/env bash
# A command runs in sbx as it would outside: any argv execve() takes (count, size, bytes that are not
# UTF-8), environment variables by request (-E/--setenv, --env-file; names the profile refuses refused),
# no signal ignored, blocked or caught at its start, and an output cap that ends the run (stop reason
# output-limit, exit status 122).
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
t_add_profile sbxtest_argv <<'EOF'
{
  "version": 1,
  "description": "sbx test: output cap 1M (stop); CI_* and LANG only",
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "wall_time": "2min", "output": "1M" },
  "environment": { "allow": ["CI_*", "LANG"] }
}
EOF
P=(-p sbxtest_argv)
hex() { od -An -tx1 | tr -d ' \n'; }
sb_gone() { for _ in $(seq 100); do [ "$(record_get "$1" .state 2>/dev/null)" = finished ] && return 0; sleep 0.2; done; _t_err "sandbox $1 did not end"; }

t_begin "the test profile loads"
assert_rc 0 sbxctl profile reload

t_begin "20000 arguments: the same as outside (once refused at 4096)"
out=$(sbxctl run --quiet -- $PY -c 'import sys; print(len(sys.argv), sys.argv[-1])' $(seq 20000))
assert_eq 0 "$?" "exit status"
assert_eq "$($PY -c 'import sys; print(len(sys.argv), sys.argv[-1])' $(seq 20000))" "$out" "inside and outside"

t_begin "an argument that is not UTF-8 arrives byte for byte"
arg=$(printf '\xff\xfe-Latin1-\xe9')   # the issue's example, and a Latin-1 name
assert_eq "$(printf '%s' "$arg" | hex)" "$(sbxctl run --quiet -- printf '%s' "$arg" | hex)" "printf's output inside"

t_begin "-E and --env-file: values of any bytes arrive byte for byte; -E wins over the file"
printf 'CI_FILE=from file\n# a comment\n\nCI_BOTH=file\n' > "$W/env"
val=$(printf 'a\xffb c')
out=$(sbxctl run --quiet --env-file "$W/env" -E CI_BOTH=flag -E "CI_V=$val" -- \
  sh -c 'printf "%s|%s|%s" "$CI_V" "$CI_FILE" "$CI_BOTH"')
assert_eq "$(printf '%s|from file|flag' "$val" | hex)" "$(printf '%s' "$out" | hex)" "the three variables"
CI_OWN=mine assert_rc 0 sbxctl run --quiet "${P[@]}" -E CI_OWN -E LANG=C.UTF-8 -- sh -c 'echo "$CI_OWN $LANG"'
assert_eq "mine C.UTF-8" "$T_OUT" "-E NAME takes sbxctl's own value; the profile allows CI_* and LANG"

t_begin "-E replaces a variable the unit sets: one entry, the caller's value; sbx's own are not there"
assert_rc 0 sbxctl run --quiet "${P[@]}" -E LANG=C -- sh -c 'env | grep -c "^LANG="; echo "$LANG"; env | grep -c "^NOTIFY_SOCKET=\|^SBX_PROFILE_DIGEST="; exit 0'
assert_eq "$(printf '1\nC\n0')" "$T_OUT" "LANG's entries, its value, NOTIFY_SOCKET and SBX_PROFILE_DIGEST"

t_begin "a name the profile refuses: a clear error, exit 125, nothing started"
before=$(record_count)
assert_rc 125 sbxctl run -E LD_PRELOAD=/tmp/x.so -- true
assert_contains "$T_OUT" "does not let a run set 'LD_PRELOAD' (environment.allow, environment.deny)"
assert_rc 125 sbxctl run "${P[@]}" -E HOME=/tmp -- true
assert_contains "$T_OUT" "environment: profile 'sbxtest_argv' does not let a run set 'HOME'"
assert_rc 125 sbxctl run -E 1X=y -- true
assert_contains "$T_OUT" "--setenv: '1X' is not a variable name"
assert_rc 125 sbxctl create -E CI=1
assert_contains "$T_OUT" "create: -E/--setenv and --env-file are given to each command (exec)"
assert_rc 125 sbxctl run --env-file "$W/nonexistent" -- true
assert_contains "$T_OUT" "--env-file: '$W/nonexistent': No such file or directory"
assert_eq "$before" "$(record_count)" "records after the refused requests"

t_begin "over the kernel's limit: sbxctl refuses (exit 125, the limit named), so does sbxd over D-Bus"
before=$(record_count)
# an environment of 3 MiB: execve() takes at most a quarter of the 8M stack
$PY -c 'import sys; [sys.stdout.write("CI_%d=%s\n" % (i, "x" * 100000)) for i in range(30)]' > "$W/big.env"
assert_rc 125 sbxctl run --env-file "$W/big.env" -- true
assert_contains "$T_OUT" "more than execve() takes here (ARG_MAX:"
assert_rc 0 $PY - <<'PYEOF'
import asyncio, sys
from dbus_next import BusType, DBusError, Variant
from dbus_next.aio import MessageBus

async def call(m, request, argv):
    try:
        await m.call_run(request, argv, 0, 1, 2)
        return "started"
    except DBusError as e:
        return e.type + ": " + e.text

async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    intro = await bus.introspect("org.sbx.Manager1", "/org/sbx/Manager1")
    m = bus.get_proxy_object("org.sbx.Manager1", "/org/sbx/Manager1", intro).get_interface("org.sbx.Manager1")
    ok = True
    big = [b"true"] + [b"\xff" * 100000] * 30
    r = await call(m, {"argv_bytes": Variant("aay", big)}, [])
    print(r)
    ok &= r.startswith("org.sbx.Error.InvalidRequest: command: 31 arguments and 0 environment entries take")
    r = await call(m, {"argv_bytes": Variant("aay", [b"true"])}, ["true"])
    print(r)
    ok &= r == "org.sbx.Error.InvalidRequest: argv_bytes: given with a command line in argv too"
    r = await call(m, {"argv_bytes": Variant("aay", [b"tr\0ue"])}, [])
    print(r)
    ok &= r == "org.sbx.Error.InvalidRequest: argv_bytes: entry 0 contains a NUL byte"
    r = await call(m, {"argv_bytes": Variant("aay", [b"true"]), "environment": Variant("aay", [b"SBX_X=1"])}, [])
    print(r)
    ok &= "does not let a run set 'SBX_X'" in r
    return 0 if ok else 1

sys.exit(asyncio.run(main()))
PYEOF
t_log "$T_OUT"
assert_eq "$before" "$(record_count)" "records after the refused requests"

t_begin "the environment stays out of the record and the journal"
since=$(date +%s)
assert_rc 0 sbxctl run --quiet -E CI_TOKEN=s3cr3t-v4lue -- sh -c 'test "$CI_TOKEN" = s3cr3t-v4lue'
run=$(last_run_id)
assert_not_contains "$(sbxctl show --json "$run")" "s3cr3t" "the record"
journalctl --flush 2>/dev/null
assert_eq 0 "$(journalctl -q --since "@$since" -o verbose 2>/dev/null | grep -c s3cr3t)" "journal lines naming the value"

t_begin "the output cap ends the run: stop reason output-limit, exit 122, exactly 1 MiB passed"
start=$SECONDS
timeout 100 sbxctl run "${P[@]}" -- yes > "$W/yes.out" 2> "$W/yes.err"
rc=$?
took=$((SECONDS - start))
t_log "took $took s"
assert_eq 122 "$rc" "sbxctl's exit status"
assert_eq 1048576 "$(stat -c %s "$W/yes.out")" "bytes the caller got"
[ "$took" -le 30 ] || _t_err "yes ran $took s past its output cap (the wall time is 2min)"
assert_contains "$(cat "$W/yes.err")" "sbx: stopped: output limit 1M reached" "the line"
run=$(last_run_id)
assert_eq output-limit "$(record_get "$run" '.stop_reason')" "stop_reason"
assert_eq true "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_rc 0 busctl --json=short call org.sbx.Manager1 /org/sbx/Manager1 org.sbx.Manager1 Get s "$run"
assert_eq output-limit "$(printf '%s' "$T_OUT" | jq -r '.data[0]' | jq -r .stop_reason)" "Get over D-Bus"
assert_contains "$(journalctl -q -b -o cat SBX_RUN_ID="$run" 2>/dev/null)" "output-limit" "the journal's end-of-run event"
assert_clean

t_begin "the command starts with no signal ignored, blocked or caught: a run, an exec from the spare, one forked"
# The unit's helper has SIGPIPE ignored (systemd's IgnoreSIGPIPE=), SIGCHLD caught and signals blocked;
# none of it may reach the command (helper/spawn-child.c resets what it noted, the rest is the default).
# cat catches nothing itself (grep would: GNU grep handles SIGSEGV for its stack).
zero="SigBlk:	0000000000000000 SigIgn:	0000000000000000 SigCgt:	0000000000000000"
sigs() { grep -E '^Sig(Blk|Ign|Cgt):' | tr '\n' ' ' | sed 's/ $//'; }
assert_eq "$zero" "$(sbxctl run --quiet -- cat /proc/self/status | sigs)" "a run's command"
sid=$(sbxctl create --detach "${P[@]}") || _t_err "create: $sid"
assert_eq "$zero" "$(sbxctl exec "$sid" -- cat /proc/self/status | sigs)" "an exec (the spare's)"
sbxctl exec "$sid" -- sleep 20 > /dev/null 2>&1 &
long=$!
for _ in $(seq 100); do [ "$(record_get "$sid" '[.sandbox.execs[] | select(.result == "running")] | length')" = 1 ] && break; sleep 0.1; done
assert_eq "$zero" "$(sbxctl exec "$sid" -- cat /proc/self/status | sigs)" "an exec while another runs (forked)"
kill "$long" 2>/dev/null; wait "$long" 2>/dev/null
assert_rc 0 sbxctl rm "$sid"
sb_gone "$sid"

t_begin "a sandbox's exec: -E bytes arrive, the output cap ends the command (exit 122)"
sid=$(sbxctl create --detach "${P[@]}") || _t_err "create: $sid"
assert_eq "$(printf '%s' "$val" | hex)" "$(sbxctl exec -E "CI_V=$val" "$sid" -- sh -c 'printf %s "$CI_V"' | hex)" "CI_V"
assert_eq "$(printf '%s' "$arg" | hex)" "$(sbxctl exec "$sid" -- printf '%s' "$arg" | hex)" "an argument"
start=$SECONDS
timeout 60 sbxctl exec --output-max=100K "$sid" -- yes > "$W/exec.out" 2> "$W/exec.err"
assert_eq 122 "$?" "exec's exit status"
assert_eq 102400 "$(stat -c %s "$W/exec.out")" "bytes the caller got"
assert_contains "$(cat "$W/exec.err")" "was stopped at its output limit"
t_log "took $((SECONDS - start)) s"
assert_rc 0 sbxctl rm "$sid"
sb_gone "$sid"

t_summary
