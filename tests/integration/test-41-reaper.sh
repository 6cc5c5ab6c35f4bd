#!/usr/bin/env bash
# The reaper (sbxctl gc, sbx-gc.timer; docs/reaper.md): who may run it, a cleanup measured again and
# written into the record, records past their retention removed (running ones never), a bad
# /etc/sbx/sbxd.conf named by line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
CONF=/etc/sbx/sbxd.conf
[ -e "$CONF" ] && cp "$CONF" "$W/sbxd.conf.orig"
[ -d /etc/sbx ] || MADE_ETC=1
# the file as it was, and /etc/sbx gone again if this test made it (test-90 compares /etc)
restore_conf() {
  if [ -e "$W/sbxd.conf.orig" ]; then cp "$W/sbxd.conf.orig" "$CONF"; else rm -f "$CONF"; fi
  [ "${MADE_ETC:-0}" = 1 ] && rmdir /etc/sbx 2>/dev/null
  true
}
t_on_exit restore_conf
mkdir -p /etc/sbx

t_begin "gc: root runs a pass and gets counts; another user is refused"
rm -f "$CONF"
assert_rc 0 sbxctl gc
assert_match "$T_OUT" 'stopped, [0-9]+ measured again, [0-9]+ with something left, [0-9]+ records removed, [0-9]+ kept$' "summary"
assert_rc 0 sbxctl gc --json
assert_eq "2592000000000" "$(printf '%s' "$T_OUT" | jq -r .record_retention_usec)" "default retention (30d)"
if id nobody >/dev/null 2>&1; then
  t_run runuser -u nobody -- sbxctl gc
  [ "$T_RC" != 0 ] || _t_err "gc as nobody succeeded"
  assert_contains "$T_OUT" "collecting garbage needs root or polkit's org.sbx.manage-all-runs"
fi

t_begin "gc measures again a cleanup a record says was incomplete, and writes what it found"
assert_rc 0 sbxctl run -- true
base=$(last_run_id)
fake=0123456789abcdef0123456789abcde0
jq --arg id "$fake" '.run_id = $id | .unit = "sbx-offline-\($id).service" | .cleanup.unit_gone = false |
  .cleanup.completed = false' "$SBX_RUNS_DIR/$base.json" > "$SBX_RUNS_DIR/$fake.json"
t_on_exit "rm -f '$SBX_RUNS_DIR/$fake.json'"
assert_eq "false" "$(record_get "$fake" .cleanup.completed)" "the planted record before"
assert_eq '["unit"]' "$(sbxctl show --json "$fake" | jq -c .cleanup.remaining)" "cleanup.remaining before"
assert_rc 0 sbxctl gc --json
v=$(printf '%s' "$T_OUT" | jq -r .verified)
[ "${v:-0}" -ge 1 ] || _t_err "verified $v"
assert_eq "false" "$(printf '%s' "$T_OUT" | jq --arg id "$fake" '.incomplete | index($id) != null')" "listed as incomplete"
assert_eq "true" "$(record_get "$fake" .cleanup.completed)" "cleanup.completed after the pass (the unit is unknown)"
assert_eq "null" "$(record_get "$fake" .cleanup.remaining)" "cleanup.remaining after"

t_begin "gc removes records past RecordRetentionSec, never a running run's"
assert_rc 0 sbxctl run -- true
old=$(last_run_id)
sbx_run_bg "$W/o" -- sleep 10
cpid=$CPID running=$RUN
printf '# test\nRecordRetentionSec=1s\n' > "$CONF"
sleep 2
assert_rc 0 sbxctl gc --json
r=$(printf '%s' "$T_OUT" | jq -r .removed)
[ "${r:-0}" -ge 2 ] || _t_err "removed $r records (expected at least the two finished above)"
assert_rc 1 sbxctl show "$old"
assert_eq "running" "$(record_get "$running" .state)" "the running run's record"
wait "$cpid"
assert_eq "finished" "$(record_get "$running" .state)" "its record once it ended"
rm -f "$CONF"
assert_clean

t_begin "a bad /etc/sbx/sbxd.conf: the pass fails, naming the file and line"
printf 'RecordRetentionSec=30d\nRecordRetentionSec=soon\n' > "$CONF"
t_run sbxctl gc
[ "$T_RC" != 0 ] || _t_err "gc with a bad config succeeded"
assert_contains "$T_OUT" "/etc/sbx/sbxd.conf: line 2: RecordRetentionSec: 'soon' is not a duration"
printf 'Retention=1d\n' > "$CONF"
t_run sbxctl gc
assert_contains "$T_OUT" "line 1: unknown key 'Retention'"
rm -f "$CONF"

t_begin "sbx-gc.timer is installed and its service runs a pass"
assert_rc 0 systemctl cat sbx-gc.timer
assert_rc 0 systemctl start sbx-gc.service
assert_eq "success" "$(systemctl show -P Result sbx-gc.service)" "Result of sbx-gc.service"
journalctl --sync 2>/dev/null || true
assert_contains "$(journalctl -u sbx-gc.service -o cat --no-pager -n 20)" "records removed" "its output in the journal"

t_summary
