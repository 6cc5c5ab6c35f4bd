#!/usr/bin/env bash
# The warm pool (docs/pool.md): units of a profile kept waiting in the exec helper, each serving exactly
# one run. A run is served by one only if the unit was made from the same plan; the run's lower ceilings
# are set on it (they hold in the kernel: test-32); its wall time counts from the claim; its record says so and has
# the policy digest a unit started for it would have; units of an edited profile, of an earlier sbxd or
# whose helper died are replaced; nothing is left when the pool is turned off.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/pool.sh"
t_require_systemd || t_summary
RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_pool
COLD=sbxtest_nopool
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
t_on_exit pool_remove_profiles
mkdir -p "$RUNPROF"

t_begin "pool.size is refused for a profile whose runs get a network, or that has caches"
jq '.pool = {"size": 1}' /usr/lib/sbx/profiles.d/offline.json > "$W/ok.json"
assert_rc 0 sbxctl profile check "$W/ok.json"
jq '.network = {"mode": "public"} | .pool = {"size": 1}' /usr/lib/sbx/profiles.d/offline.json > "$W/net.json"
assert_rc 125 sbxctl profile check "$W/net.json"
assert_contains "$T_OUT" 'pool.size: a pool serves only profiles whose network mode is "none"'
jq '.lifetime = {"caches": [{"name": "pip", "path": ".cache/pip"}]} | .pool = {"size": 1}' \
  /usr/lib/sbx/profiles.d/offline.json > "$W/cache.json"
assert_rc 125 sbxctl profile check "$W/cache.json"
assert_contains "$T_OUT" "pool.size: a pool cannot serve a profile with caches"
jq '.pool = {"size": 17}' /usr/lib/sbx/profiles.d/offline.json > "$W/big.json"
assert_rc 125 sbxctl profile check "$W/big.json"
assert_contains "$T_OUT" "pool.size: expected at most 16, got 17"

t_begin "with pool.size 2, two units wait, each with only its helper, owned by no one"
write_profile "$PROF" 2
write_profile "$COLD" 0
# the pool is kept while sbxd runs: from boot when it is enabled (as the packages do), else from the
# first request; a reload makes a running sbxd read the profiles again
assert_rc 0 systemctl start sbxd.service
assert_rc 0 sbxctl profile reload
wait_pool 2
for u in $(pool_units); do
  id=${u#sbx-$PROF-}; id=${id%.service}
  assert_eq 1 "$(wc -l < "/sys/fs/cgroup/sbx.slice/sbx-$PROF.slice/$u/cgroup.procs")" "processes in $u"
  assert_not_contains "$(sbxctl list --all --no-legend)" "$id" "the list of all runs"
  assert_rc 1 sbxctl show "$id"
done

t_begin "a run is served by a waiting unit: its stdio and exit status; the record says start pool"
before=$(pool_waiting)
out=$(echo "from stdin" | sbxctl run -p "$PROF" -- sh -c 'cat; echo to-stderr >&2; exit 7' 2>&1); rc=$?
assert_eq 7 "$rc" "exit status"
assert_contains "$out" "from stdin"
assert_contains "$out" "to-stderr"
id=$(last_run_id); unit=$(record_get "$id" .unit)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_contains "$before" "$unit" "the run's unit was a waiting one"
assert_eq exit-code "$(record_get "$id" .stop_reason)" "stop reason"
assert_eq 7 "$(record_get "$id" .exit.code)" "exit code"
assert_eq true "$(record_get "$id" .cleanup.completed)" "cleanup"
assert_rc 0 sbxctl show "$id"
assert_contains "$T_OUT" "Start:         pool"
assert_rc 137 sbxctl run -p "$PROF" -- sh -c 'kill -9 $$'
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_eq signal "$(record_get "$id" .stop_reason)" "stop reason of a command killed by a signal"
assert_eq 9 "$(record_get "$id" .exit.signal)" "its signal"

t_begin "another user's run is served by the pool: the run and its record are that user's alone"
wait_pool 2
before=$(pool_waiting)
assert_rc 0 runuser -u nobody -- sbxctl run -p "$PROF" -- sh -c 'id -u'
nb=$(runuser -u nobody -- sbxctl list --no-legend | tail -n 1 | awk '{print $1}')
assert_match "$nb" '^[0-9a-f]{32}$' "the user's own list"
assert_eq pool "$(record_get "$nb" .start)" "record start"
assert_contains "$before" "$(record_get "$nb" .unit)" "the run's unit was a waiting one"
assert_ne "$(record_get "$id" .tenant)" "$(record_get "$nb" .tenant)" "tenant of root's run and of nobody's"
assert_not_contains "$(runuser -u nobody -- sbxctl list --no-legend)" "$id" "root's run in nobody's list"
assert_rc 1 runuser -u nobody -- sbxctl show "$id"

t_begin "a pooled unit serves one run: its unit is gone after it, and new units wait"
assert_rc 0 unit_gone "$unit"
wait_pool 2
assert_not_contains "$(pool_units)" "$unit" "units waiting now"

# (that the run's lower ceilings hold in the kernel: test-32, in the vm lane)

t_begin "its policy digest is the one of a unit started for the same request"
wait_pool 2
assert_rc 0 sbxctl run --quiet -p "$PROF" --memory 64M --tasks 8 --cpu 50% -- true
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start of the profile with a pool"
pooled_digest=$(record_get "$id" .policy_digest)
assert_rc 0 sbxctl run -p "$COLD" --memory 64M --tasks 8 --cpu 50% -- true
id=$(last_run_id)
assert_eq cold "$(record_get "$id" .start)" "record start of the profile without a pool"
assert_eq "$pooled_digest" "$(record_get "$id" .policy_digest)" "policy digest, pooled and cold"
assert_rc 0 sbxctl run -p "$COLD" -- true
assert_ne "$pooled_digest" "$(record_get "$(last_run_id)" .policy_digest)" "policy digest of another request"

t_begin "the wall time counts from the claim, not from when the unit started"
wait_pool 2
sleep 5 # longer than the profile's wall time: the waiting units are older than that now
assert_rc 0 sbxctl run -p "$PROF" -- sleep 1
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_eq success "$(record_get "$id" .stop_reason)" "stop reason"
t0=$(date +%s)
assert_rc 124 sbxctl run -p "$PROF" -- sleep 60
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_eq timeout "$(record_get "$id" .stop_reason)" "stop reason"
[ $(($(date +%s) - t0)) -lt 40 ] || _t_err "the timeout took $(($(date +%s) - t0)) s"
# its helper reports the command's end to sbxd directly, never one that ended at a stop (docs/design.md)
wait_pool 2
assert_rc 124 sbxctl run -p "$PROF" -- sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done'
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_eq timeout "$(record_get "$id" .stop_reason)" "stop reason of a command that exits 0 at its ceiling's SIGTERM"

t_begin "runs a pooled unit cannot serve start units of their own: a workspace, their own wall time"
wait_pool 2
mkdir -p "$W/ws"
assert_rc 0 sbxctl run -p "$PROF" --workspace "$W/ws" -- sh -c 'echo hi > out.txt'
assert_eq cold "$(record_get "$(last_run_id)" .start)" "record start with a workspace"
assert_eq hi "$(cat "$W/ws/out.txt")" "the workspace"
assert_rc 0 sbxctl run -p "$PROF" --timeout 3s -- true
assert_eq cold "$(record_get "$(last_run_id)" .start)" "record start with its own wall time"
assert_eq 2 "$(pool_waiting | wc -l)" "units still waiting"

t_begin "a profile edited without a reload: its waiting units, made from the old file, are not used"
old=$(pool_units)
write_profile "$PROF" 2 "sbx test: a warm pool, edited"
# a unit of its own, under the new file: refused, as every run is until the drop-in is made again
assert_rc 123 sbxctl run -p "$PROF" -- true
assert_contains "$T_OUT" "the profile changed since the last daemon-reload"
id=$(last_run_id)
assert_eq cold "$(record_get "$id" .start)" "record start"
assert_eq refused "$(record_get "$id" .stop_reason)" "stop reason"
assert_eq "sha256:$(sha256sum < "$RUNPROF/$PROF.json" | cut -d' ' -f1)" "$(record_get "$id" .profile_digest)" "profile digest"
assert_rc 0 sbxctl profile reload
wait_pool 2
for u in $old; do assert_not_contains "$(pool_units)" "$u" "units waiting after the edit"; done
assert_rc 0 sbxctl run -p "$PROF" -- true
assert_eq pool "$(record_get "$(last_run_id)" .start)" "record start after the reload"

t_begin "a waiting unit whose helper died is replaced"
wait_pool 2
victim=$(pool_waiting | sed -n 1p)
kill -9 "$(systemctl show -P MainPID "$victim")"
assert_rc 0 unit_gone "$victim"
wait_pool 2
assert_not_contains "$(pool_units)" "$victim"

t_begin "sbxd restarted: the units its predecessor left waiting are stopped, and new ones wait"
old=$(pool_units)
assert_rc 0 systemctl restart sbxd.service
wait_pool 2
for u in $old; do assert_rc 0 unit_gone "$u"; done
assert_rc 0 sbxctl run -p "$PROF" -- true
assert_eq pool "$(record_get "$(last_run_id)" .start)" "record start"

t_begin "pool.size 0: the waiting units stop; the profile gone: nothing of the pool is left"
pool_off

t_summary
