#!/usr/bin/env bash
# The package's life cycle (runs last: it removes sbx): removal with a run in progress ends the run and
# leaves no unit; purge leaves the system as it was before the package was installed (compared with
# what the payload saved then); a fresh install of an earlier build works at once; an upgrade to this
# build with a run in progress keeps the run going, restarts sbxd, and the run's record is completed
# (and its client, re-attached to the new sbxd, gets the result), and the upgraded package works.
# Each dpkg call reads dpkg's whole database: about a minute in the VM testbed (TCG over 9p), so the
# cases share them. Needs $SBX_DEB (this build) and $SBX_DEB_PREV (an earlier build of the package, a lower version).
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
if [ -z "${SBX_DEB:-}" ] || [ -z "${SBX_DEB_PREV:-}" ] || [ ! -f /var/tmp/pkg-baseline.txt ]; then
  t_begin "package install, upgrade and removal"
  t_skip "needs SBX_DEB and SBX_DEB_PREV (packages built by scripts/test.sh) and the payload's baseline"
  t_summary
fi
W=$(mktemp -d /var/tmp/pkgtest.XXXXXX); t_on_exit "rm -rf '$W'"
STATE=$(dirname "$0")/pkg-state.sh
V_NEW=$(dpkg-deb -f "$SBX_DEB" Version)
V_PREV=$(dpkg-deb -f "$SBX_DEB_PREV" Version)

# assert_as_before WHAT: the system state equals the payload's baseline (before sbx was installed)
assert_as_before() {
  local d
  d=$(diff /var/tmp/pkg-baseline.txt <("$STATE") | grep '^[<>]')
  [ -z "$d" ] || _t_err "$1: differences from before the install: $(printf '%s\n' "$d" | head -n 20 | tr '\n' ' ')"
}

t_begin "the versions under test"
dpkg --compare-versions "$V_PREV" lt "$V_NEW" || _t_err "earlier build $V_PREV is not older than $V_NEW"
assert_eq "$V_NEW" "$(dpkg-query -W -f='${Version}' sbx)" "installed version"

t_begin "dpkg -r with a run in progress: the run is ended, its record completed, nothing of sbx runs"
sbx_run_bg "$W/o1" -- sleep 300
cpid=$CPID id=$RUN
unit=$(record_get "$id" .unit)
t_run dpkg -r sbx
assert_eq 0 "$T_RC" "dpkg -r exit status ($T_OUT)"
wait "$cpid"; rc=$?
assert_eq 143 "$rc" "the client's exit status (the run ended by SIGTERM)"
assert_match "$(jq -r .stop_reason "$SBX_RUNS_DIR/$id.json")" '^(signal|cancelled)$' "stop_reason in the record kept on disk"
assert_eq true "$(jq -r .cleanup.completed "$SBX_RUNS_DIR/$id.json")" "cleanup.completed"
# (sbxd.service, sbx-gc.timer and sbx-broker.socket may still be listed, "not-found": their enablement
# symlinks stay until purge, as for every removed Debian service)
assert_eq "" "$(systemctl list-units --all --plain --no-legend 'sbx*' | awk '$1 != "sbxd.service" && $1 != "sbx-gc.timer" && $1 != "sbx-broker.socket" {print $1}')" \
  "sbx units (runs, slices) after removal"
assert_ne active "$(systemctl is-active "$unit")" "the run's unit"
[ -e /sys/fs/cgroup/sbx.slice ] && _t_err "/sys/fs/cgroup/sbx.slice is still there"
[ -e /usr/bin/sbxctl ] && _t_err "/usr/bin/sbxctl is still there"
assert_eq inactive "$(systemctl is-active sbxd.service)" "sbxd"
assert_eq "" "$(ps -eo args= | grep '/libexec/sbx/' | grep -v grep)" "sbx processes"
ls /run/systemd/generator/sbx-* >/dev/null 2>&1 && _t_err "generator output still there after removal"
assert_eq "" "$(busctl --system --acquired --activatable list --no-legend | awk '$1 ~ /sbx/')" "sbx bus names"
assert_file "$SBX_RUNS_DIR/$id.json" "records are state: kept until purge"

t_begin "dpkg --purge: nothing is left that was not there before the install"
t_run dpkg --purge sbx
assert_eq 0 "$T_RC" "dpkg --purge exit status ($T_OUT)"
[ -e /var/lib/sbx ] && _t_err "/var/lib/sbx is still there"
assert_as_before "after purge"

t_begin "a fresh install of the earlier build works at once"
t_run dpkg -i "$SBX_DEB_PREV"
assert_eq 0 "$T_RC" "dpkg -i $SBX_DEB_PREV ($T_OUT)"
assert_rc 0 sbxctl run -- id
assert_match "$T_OUT" '^uid=[0-9]+(\([^)]*\))? gid=[0-9]+' "id's output"
assert_eq active "$(systemctl is-active sbxd.service)" "sbxd"
assert_clean

t_begin "upgrade with a run in progress: the run goes on and its record is completed"
pid_before=$(systemctl show -p MainPID --value sbxd.service)
# the command runs until the test says so: it is still running when the upgrade is over, however long
# dpkg takes
mkdir -p "$W/ws"
sbx_run_bg "$W/o2" --workspace "$W/ws" -- sh -c 'while [ ! -e go ]; do sleep 0.2; done; echo survived-the-upgrade; exit 7'
cpid=$CPID id=$RUN
unit=$(record_get "$id" .unit)
t_run dpkg -i "$SBX_DEB"
assert_eq 0 "$T_RC" "dpkg -i $SBX_DEB ($T_OUT)"
assert_eq "$V_NEW" "$(dpkg-query -W -f='${Version}' sbx)" "version after the upgrade"
pid_after=$(systemctl show -p MainPID --value sbxd.service)
assert_ne "$pid_before" "$pid_after" "sbxd's main PID (restarted by the upgrade)"
assert_eq active "$(systemctl is-active "$unit")" "the run's unit right after the upgrade"
kill -0 "$cpid" 2>/dev/null || _t_err "the client did not wait through the upgrade: $(cat "$W/o2")"
touch "$W/ws/go"
wait "$cpid"; rc=$?
assert_eq 7 "$rc" "the client's exit status (the command's)"
assert_contains "$(cat "$W/o2")" "survived-the-upgrade" "the command's output"
assert_eq exit-code "$(record_get "$id" .stop_reason)" "stop_reason"
assert_eq 7 "$(record_get "$id" .exit.code)" "exit.code"
assert_eq true "$(record_get "$id" .cleanup.completed)" "cleanup.completed"
assert_contains "$(journalctl -q -u sbxd.service -o cat --no-pager)" "Run $id: adopted running unit" "sbxd's journal"
assert_clean

t_begin "the upgraded package works"
assert_rc 0 sbxctl run -- true
assert_eq "Result=success" "$(systemctl show -p Result sbxd.service)" "sbxd Result"
assert_clean

t_summary
