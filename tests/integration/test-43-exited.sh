#!/usr/bin/env bash
# The answer before the cleanup (docs/dbus.md, "Exited"): sbxd signals Exited to a run's client as soon
# as the command has ended, with the outcome and an interim record ("exited", cleanup not completed),
# and Finished with the final record once the cleanup is done; sbxctl run answers at Exited, or at
# Finished with --wait-cleanup, with the same exit status and the same lines either way. The cleanup
# itself is not weakened: every run still ends with a complete record and nothing left.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=$REPO/tests/integration/exited-client.py
W=$(mktemp -d); t_on_exit "rm -rf '$W'"

t_begin "D-Bus: Exited before Finished, its interim record, wait_cleanup, unicast to the client"
if ! /usr/bin/python3 -c 'import dbus_next' 2>/dev/null; then
  t_skip "python3-dbus-next is not installed (scripts/install-deps.sh)"
else
  mkdir "$W/ws"
  t_run timeout 300 env SBX_EXITED_WORKSPACE="$W/ws" /usr/bin/python3 "$CLIENT"
  printf '%s\n' "$T_OUT" | sed 's/^/  # /'
  assert_eq 0 "$T_RC" "exited-client.py's exit status"
  assert_not_contains "$T_OUT" "FAIL" "exited-client.py's checks"
  n=$(printf '%s\n' "$T_OUT" | grep -c '^ok ')
  [ "$n" -ge 20 ] || _t_err "only $n of exited-client.py's checks passed"
fi

# same_answer WHAT CMD...: sbxctl run CMD, once as it is and once with --wait-cleanup: the same exit
# status, the same stdout, the same stderr (the stop-reason and limit lines), run ids aside
same_answer() {
  local what=$1 rc1 rc2; shift
  sbxctl run "$@" > "$W/o1" 2> "$W/e1"; rc1=$?
  sbxctl run --wait-cleanup "$@" > "$W/o2" 2> "$W/e2"; rc2=$?
  sed -i -E 's/[0-9a-f]{32}/RUN/g' "$W/e1" "$W/e2"
  assert_eq "$rc1" "$rc2" "$what: exit status without and with --wait-cleanup"
  assert_eq "$(cat "$W/o1")" "$(cat "$W/o2")" "$what: stdout"
  assert_eq "$(cat "$W/e1")" "$(cat "$W/e2")" "$what: stderr (stop-reason and limit lines)"
  [ -n "${WANT_RC:-}" ] && assert_eq "$WANT_RC" "$rc1" "$what: exit status"
  return 0
}

t_begin "sbxctl run: exit status, output and lines are the same with and without --wait-cleanup"
WANT_RC=0 same_answer "success" -- sh -c 'echo out; echo err >&2'
WANT_RC=7 same_answer "exit 7" -- sh -c 'exit 7'
WANT_RC=137 same_answer "SIGKILL" -- sh -c 'kill -KILL $$'
WANT_RC=143 same_answer "SIGTERM" -- sh -c 'kill -TERM $$'
WANT_RC=124 same_answer "wall-time ceiling" --timeout 1s -- sleep 30
grep -q . "$W/e1" || _t_err "the wall-time ceiling printed no line"
# The helper reports a command's end to sbxd directly (FINISHED), but never one that ended at a stop:
# a command that exits 0 when its wall time is up is still a run stopped at its ceiling.
WANT_RC=124 same_answer "exit 0 at the wall-time ceiling's SIGTERM" --timeout 1s -- \
  sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done'
assert_eq "timeout" "$(record_get "$(last_run_id)" .stop_reason)" "stop_reason of a command that exits 0 at its ceiling"
WANT_RC=127 same_answer "command not found" -- /nonexistent-command
WANT_RC=125 same_answer "refused request" -p no-such-profile -- true

t_begin "sbxctl run returns with its output drained: all of it is there"
sbxctl run -- sh -c 'seq 1 200000; seq 1 50000 >&2' > "$W/o" 2> "$W/e"
assert_eq 200000 "$(wc -l < "$W/o")" "stdout lines"
assert_eq 50000 "$(wc -l < "$W/e")" "stderr lines"

t_begin "--wait-cleanup: when sbxctl returns, the record is final and its cleanup complete"
for i in 1 2 3; do
  assert_rc 0 sbxctl run --wait-cleanup -- true
  id=$(last_run_id)
  # read at once, without record_final: it must be the final record already
  assert_eq "finished true" "$(jq -r '"\(.state) \(.cleanup.completed)"' "$SBX_RUNS_DIR/$id.json")" \
    "record right after sbxctl run --wait-cleanup ($i)"
done

t_begin "--wait-cleanup with a network: the record waits for the network namespace's unmount"
# the network unit unmounts the run's namespace after the run's and the space's units are gone; a
# record written before that said "remaining": ["mounts"] for most such runs
for i in 1 2 3 4 5; do
  assert_rc 0 sbxctl run --wait-cleanup -p browser -- true
  id=$(last_run_id)
  assert_eq "finished true" "$(jq -r '"\(.state) \(.cleanup.completed)"' "$SBX_RUNS_DIR/$id.json")" \
    "network run's record right after sbxctl run --wait-cleanup ($i; remaining: $(jq -c .cleanup.remaining "$SBX_RUNS_DIR/$id.json"))"
done

t_begin "without it: the record becomes final, the cleanup completes and nothing is left"
ids=()
for i in 1 2 3 4 5; do
  assert_rc 0 sbxctl run -- true
  ids+=("$(last_run_id).json")
done
st=$(jq -r .state "$SBX_RUNS_DIR/${ids[4]}")
case $st in exited|finished) t_log "state right after sbxctl run: $st" ;; *) _t_err "state right after sbxctl run: $st" ;; esac
records_complete "${ids[@]}"
assert_clean "after runs answered at Exited"

t_begin "a profile with caches: the answer waits for the cleanup, so the next run has the caches"
# caches are released with the unit; answered at Exited, the next run of the caller and profile would
# find them held and get ephemeral ones (docs/caches.md)
tok=$RANDOM$RANDOM
assert_rc 0 sbxctl run -p coding --network none -- sh -c "mkdir -p ~/.npm && echo $tok > ~/.npm/exited-test"
id=$(last_run_id)
assert_eq "finished" "$(jq -r .state "$SBX_RUNS_DIR/$id.json")" "record right after the run (no early answer)"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'cat ~/.npm/exited-test; rm -f ~/.npm/exited-test'
assert_eq "$tok" "$T_OUT" "the next run reads what the first left in its cache"

t_summary
