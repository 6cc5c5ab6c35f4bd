#!/usr/bin/env bash
# The output ceiling (resources.output): stdout and stderr together are cut exactly at the limit, the
# rest is drained so the command does not block, the record says how much was written and that it was
# cut; a terminal stays a terminal; a reader that goes away still ends the command with SIGPIPE.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
RUNPROF=/run/sbx/profiles.d
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
ADDED=()
cleanup_profiles() {
  [ "${#ADDED[@]}" -gt 0 ] || return 0
  rm -f "${ADDED[@]}"
  rmdir "$RUNPROF" /run/sbx 2>/dev/null
  systemctl daemon-reload
}
t_on_exit cleanup_profiles
mkdir -p "$RUNPROF"
cat > "$RUNPROF/sbxtest_output.json" <<'EOF'
{
  "version": 1,
  "description": "sbx test: at most 1000 bytes of output",
  "network": { "mode": "none" },
  "resources": { "memory": "512M", "tasks": 64, "wall_time": "5min", "output": 1000 }
}
EOF
ADDED+=("$RUNPROF/sbxtest_output.json")
P=(-p sbxtest_output)

t_begin "the test profile loads"
assert_rc 0 sbxctl profile reload

t_begin "stdout and stderr together are cut exactly at the limit; the record says so"
assert_rc 0 sbxctl run "${P[@]}" -- sh -c 'head -c 5000 /dev/zero | tr "\0" a; echo; echo done >&2'
assert_eq 1000 "${#T_OUT}" "bytes the caller got"
assert_eq "" "$(printf '%s' "$T_OUT" | tr -d a)" "what the caller got (only the first 1000 bytes)"
run=$(last_run_id)
assert_eq true "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_eq 5006 "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes (all the command wrote)"

t_begin "under the limit nothing is cut; stdout and stderr still reach their own files"
sbxctl run "${P[@]}" -- sh -c 'echo to-stdout; echo to-stderr >&2' > "$W/out" 2> "$W/err"
assert_eq 0 "$?" "exit status"
assert_eq to-stdout "$(cat "$W/out")" "stdout"
assert_eq to-stderr "$(cat "$W/err")" "stderr"
run=$(last_run_id)
assert_eq false "$(record_get "$run" '.output_truncated')" "output_truncated"
assert_eq 20 "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes"

t_begin "far more than the limit: the rest is drained, the command ends with its own status"
assert_rc 3 timeout 300 sbxctl run "${P[@]}" -- sh -c 'head -c 3000000 /dev/zero | tr "\0" b; exit 3'
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
  script -qec "sbxctl run ${P[*]} -- $PY -c 'import os; print(\"tty\", os.isatty(1), os.isatty(2))'" /dev/null > "$W/tty" 2>&1
  assert_contains "$(cat "$W/tty")" "tty True True" "isatty() of stdout and stderr inside"
  script -qec "sbxctl run ${P[*]} -- $PY -c 'import sys; sys.stdout.write(\"a\" * 5000)'" /dev/null > "$W/tty" 2>&1
  assert_eq 1000 "$(tr -cd a < "$W/tty" | wc -c)" "bytes through the terminal"
  assert_eq true "$(record_get "$(last_run_id)" '.output_truncated')" "output_truncated"
fi

t_begin "a profile without an output limit: the output is not relayed or counted"
assert_rc 0 sbxctl run -- sh -c 'head -c 5000 /dev/zero | tr "\0" a'
assert_eq 5000 "${#T_OUT}" "bytes the caller got"
run=$(last_run_id)
assert_eq null "$(record_get "$run" '.resources.output_bytes')" "resources.output_bytes"
assert_eq false "$(record_get "$run" '.output_truncated')" "output_truncated"

assert_clean "after all runs"
t_summary
