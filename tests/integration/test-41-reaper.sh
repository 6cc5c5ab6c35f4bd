#!/usr/bin/env bash
# The reaper (sbxctl gc, sbx-gc.timer; docs/reaper.md): who may run it, a cleanup measured again and
# written into the record, records past their retention removed (running ones never), a bad
# /etc/sbx/sbxd.conf named by line.
# lane: native
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
record_final "$base"
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

t_begin "a mount naming the run at its end: listed in cleanup.remaining; gc clears it once unmounted"
# what sbx measures is the mount table: a mount point with the run's id in it, here one of the test's
if sbx_run_bg "$W/m.out" -- sleep 2; then
  mp=/run/sbxt41-mount-$RUN
  mkdir -p "$mp" && mount -t tmpfs -o size=64k sbxt41 "$mp" && t_on_exit "umount '$mp' 2>/dev/null; rmdir '$mp' 2>/dev/null"
  wait "$CPID"
  for _ in $(seq 50); do [ "$(record_get "$RUN" .state)" = finished ] && break; sleep 0.2; done
  assert_eq false "$(record_get "$RUN" .cleanup.mounts_gone)" "cleanup.mounts_gone with the mount there"
  assert_eq false "$(record_get "$RUN" .cleanup.completed)" "cleanup.completed with the mount there"
  assert_eq '["mounts"]' "$(sbxctl show --json "$RUN" | jq -c .cleanup.remaining)" "cleanup.remaining"
  umount "$mp"; rmdir "$mp"
  assert_rc 0 sbxctl gc
  assert_eq true "$(record_get "$RUN" .cleanup.mounts_gone)" "cleanup.mounts_gone after the unmount and a pass"
  assert_eq true "$(record_get "$RUN" .cleanup.completed)" "cleanup.completed after the pass"
fi

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

# why the report of the last pass ($T_OUT) removes cache $1 ("" if it does not)
removed_reason() { printf '%s' "$T_OUT" | jq -r --arg c "$1" '.caches.removed[] | select(.cache == $c) | .reason'; }

t_begin "gc removes caches unused past CacheRetentionSec, never one in use; a run's symlinks do not steer it"
CACHES=/var/lib/private/sbx-cache
IMAGES=/var/lib/private/sbx-cache-images   # each cache's file system (docs/caches.md), unmounted between runs
mkdir -p "$W/victim"; echo precious > "$W/victim/file"; chmod 0755 "$W" "$W/victim"
assert_rc 0 sbxctl run -p coding --network none -- sh -c "mkdir -p ~/.cache/pip ~/.npm && echo kept > ~/.cache/pip/marker &&
  echo n > ~/.npm/m && ln -s '$W/victim' ~/.cache/pip/dirlink && ln -s '$W/victim/file' ~/.cache/pip/filelink"
owner=$(find "$IMAGES" -mindepth 3 -maxdepth 3 -path '*/coding/pip.img' -newer "$W/victim/file" | head -n 1 | cut -d/ -f6)
case "$owner" in [0-9a-f]*) ;; *) _t_err "no pip cache written by the run below $IMAGES" ;; esac
stamp=/var/lib/sbx/caches/$owner.coding.pip
[ -f "$stamp" ] || _t_err "no note of the cache's last use ($stamp)"
touch -d '40 days ago' "$stamp"
printf 'CacheRetentionSec=30d\nCacheMaxSize=0\n' > "$CONF"
assert_rc 0 sbxctl gc --json
assert_eq "unused" "$(removed_reason "$owner/coding/pip")" "the stale cache in the report"
assert_eq "" "$(removed_reason "$owner/coding/npm")" "the fresh cache in the report"
# removed by a one-shot unit: the cache first, then systemd's link to it
for i in $(seq 150); do [ -e "$CACHES/$owner/coding/pip" ] || [ -L "/var/lib/sbx-cache/$owner/coding/pip" ] || break; sleep 0.2; done
[ -e "$CACHES/$owner/coding/pip" ] && _t_err "the stale cache is still there: $(ls -la "$CACHES/$owner/coding/pip")"
[ -e "$IMAGES/$owner/coding/pip.img" ] && _t_err "the stale cache's file system is still there"
[ -L "/var/lib/sbx-cache/$owner/coding/pip" ] && _t_err "systemd's link to the removed cache is still there"
[ -e "$IMAGES/$owner/coding/npm.img" ] || _t_err "the fresh cache was removed too"
assert_eq "precious" "$(cat "$W/victim/file" 2>/dev/null)" "a file the run's symlinks pointed at"
[ -f "$stamp" ] && _t_err "the removed cache's last-use note is still there"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'cat ~/.cache/pip/marker 2>/dev/null || echo none'
assert_eq "none" "$T_OUT" "a new run's pip cache"
# in use: never removed, however old its note
sbx_run_bg "$W/o" -p coding --network none -- sleep 30
touch -d '40 days ago' "/var/lib/sbx/caches/$owner.coding.npm"
assert_rc 0 sbxctl gc --json
assert_eq "" "$(removed_reason "$owner/coding/npm")" "a cache in use in the report"
sbxctl stop "$RUN" >/dev/null 2>&1; wait "$CPID" 2>/dev/null
[ -e "$IMAGES/$owner/coding/npm.img" ] || _t_err "a cache in use was removed"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'cat ~/.npm/m'
rm -f "$CONF"
assert_clean

t_begin "gc keeps the caches under CacheMaxSize, the least recently used going first"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'mkdir -p ~/.cache/pip ~/.npm &&
  head -c 2097152 /dev/urandom > ~/.cache/pip/big && head -c 1048576 /dev/urandom > ~/.npm/big'
touch -d '2 days ago' "/var/lib/sbx/caches/$owner.coding.npm"
touch -d '1 day ago' "/var/lib/sbx/caches/$owner.coding.pip"
# the cap: all the caches but half of the least recently used one (sizes are what their file systems
# take; every coding run makes all four of its caches)
total=$(sbxctl cache list --json | jq '[.[].bytes] | add')
npm_bytes=$(sbxctl cache list --json | jq '.[] | select(.profile == "coding" and .name == "npm") | .bytes')
cap=$(( ${total:-0} - ${npm_bytes:-0} / 2 ))
printf 'CacheRetentionSec=0\nCacheMaxSize=%s\n' "$cap" > "$CONF"
assert_rc 0 sbxctl gc --json
assert_eq "size" "$(removed_reason "$owner/coding/npm")" "the least recently used cache"
assert_eq "" "$(removed_reason "$owner/coding/pip")" "the more recent one"
kept=$(printf '%s' "$T_OUT" | jq -r .caches.kept_bytes)
[ "${kept:-0}" -le "$cap" ] || _t_err "caches kept: $kept bytes, above the cap of $cap"
for i in $(seq 150); do [ -e "$IMAGES/$owner/coding/npm.img" ] || break; sleep 0.2; done
[ -e "$IMAGES/$owner/coding/npm.img" ] && _t_err "the least recently used cache is still there"
[ -s "$IMAGES/$owner/coding/pip.img" ] || _t_err "the more recent cache was removed"
printf 'CacheMaxSize=lots\n' > "$CONF"
t_run sbxctl gc
assert_contains "$T_OUT" "/etc/sbx/sbxd.conf: line 1: CacheMaxSize: 'lots' is not a size"
rm -f "$CONF"
assert_clean

t_begin "sbx-gc.timer is installed and its service runs a pass"
assert_rc 0 systemctl cat sbx-gc.timer
assert_rc 0 systemctl start sbx-gc.service
assert_eq "success" "$(systemctl show -P Result sbx-gc.service)" "Result of sbx-gc.service"
journalctl --sync 2>/dev/null || true
assert_contains "$(journalctl -u sbx-gc.service -o cat --no-pager -n 20)" "records removed" "its output in the journal"

t_summary
