#!/usr/bin/env bash
# The installed package, right after `dpkg -i` and nothing else (the payload installs it): a run works,
# sbxd is enabled and clean, the documentation, completion and catalog are in place, and sbx's journal
# events carry their MESSAGE_IDs. Skipped when sbx was installed from a build tree ($SBX_DEB unset).
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
if [ -z "${SBX_DEB:-}" ]; then
  t_begin "the installed package"
  t_skip "sbx was installed from a build tree, not from a package (SBX_DEB is not set)"
  t_summary
fi

ID_STARTED=12a5a0d873ff486bbfa5e2baa96431ab
ID_FINISHED=1b119a621fc64a57a51b268bcd1b4319
ID_REFUSED=d73fcca357cf4d3090b10e1c85b68dec

# journal_wait JOURNALCTL-MATCHES...: the matching entries as JSON lines, once there is one (max ~10 s)
journal_wait() {
  local i out
  for i in $(seq 50); do
    out=$(journalctl -q -o json --no-pager "$@" 2>/dev/null)
    [ -n "$out" ] && { printf '%s\n' "$out"; return 0; }
    sleep 0.2
  done
  return 1
}

t_begin "dpkg -i alone: sbxctl run -- id works"
assert_eq "install ok installed" "$(dpkg-query -W -f='${Status}' sbx)" "dpkg status"
assert_rc 0 sbxctl run -- id
assert_match "$T_OUT" '^uid=[0-9]+(\([^)]*\))? gid=[0-9]+' "id's output"
assert_clean

t_begin "sbxd is enabled, active and its status is clean"
assert_eq enabled "$(systemctl is-enabled sbxd.service)" "is-enabled"
# the reaper's timer is enabled by the package (the suite stops it: payload.sh)
assert_eq enabled "$(systemctl is-enabled sbx-gc.timer)" "is-enabled of sbx-gc.timer"
assert_eq active "$(systemctl is-active sbxd.service)" "is-active"
assert_eq "Result=success" "$(systemctl show -p Result sbxd.service)" "Result"
assert_eq "NRestarts=0" "$(systemctl show -p NRestarts sbxd.service)" "NRestarts"
t_run systemctl status --no-pager sbxd.service
assert_eq 0 "$T_RC" "systemctl status exit status"
warn=$(journalctl -q -b -u sbxd.service -p warning --no-pager -o cat)
assert_eq "" "$warn" "warnings or errors in sbxd's journal"
assert_eq "" "$(systemctl --failed --plain --no-legend 'sbx*')" "failed sbx units"

t_begin "the generator ran: every shipped profile has its slice and drop-in"
for p in offline coding browser data untrusted; do
  assert_file "/run/systemd/generator/sbx-$p.slice" "slice of $p"
  assert_file "/run/systemd/generator/sbx-$p-.service.d/50-sbx-profile.conf" "drop-in of $p"
done

t_begin "man pages, completion, catalog and D-Bus files are installed"
for m in man1/sbxctl.1 man8/sbxd.8 man8/sbx-generator.8 man5/sbx-profile.5; do
  ls /usr/share/man/"$m"* >/dev/null 2>&1 || _t_err "no /usr/share/man/$m"
done
t_run man -w sbxctl
assert_eq 0 "$T_RC" "man -w sbxctl"
assert_file /usr/share/bash-completion/completions/sbxctl
assert_file /usr/share/dbus-1/system-services/org.sbx.Manager1.service
assert_file /usr/share/dbus-1/system.d/org.sbx.Manager1.conf
cat=$(journalctl --list-catalog 2>/dev/null | awk '$2 == "sbx:" {print $1}' | sort | tr '\n' ' ')
assert_contains "$cat" "$ID_STARTED" "catalog database (journalctl --update-catalog ran from the trigger)"
assert_contains "$cat" "$ID_FINISHED" "catalog database"
assert_eq "$(sbxctl --version | head -n 1 | awk '{print $NF}')" "$(dpkg-query -W -f='${Version}' sbx)" \
  "sbxctl --version vs. the package version"

t_begin "journal: a run's start and end are events with MESSAGE_IDs, explained by the catalog"
assert_rc 3 sbxctl run -- sh -c 'exit 3'
id=$(last_run_id)
s=$(journal_wait MESSAGE_ID=$ID_STARTED SBX_RUN_ID="$id") || _t_err "no 'started' event for run $id"
assert_eq "offline" "$(printf '%s\n' "$s" | jq -r .SBX_PROFILE | tail -n 1)" "SBX_PROFILE of the started event"
assert_eq "$(record_get "$id" .unit)" "$(printf '%s\n' "$s" | jq -r .SBX_UNIT | tail -n 1)" "SBX_UNIT"
f=$(journal_wait MESSAGE_ID=$ID_FINISHED SBX_RUN_ID="$id") || _t_err "no 'finished' event for run $id"
assert_eq "exit-code" "$(printf '%s\n' "$f" | jq -r .SBX_STOP_REASON | tail -n 1)" "SBX_STOP_REASON"
assert_eq "3" "$(printf '%s\n' "$f" | jq -r .SBX_EXIT_CODE | tail -n 1)" "SBX_EXIT_CODE"
assert_eq "completed" "$(printf '%s\n' "$f" | jq -r .SBX_CLEANUP | tail -n 1)" "SBX_CLEANUP"
assert_eq "6" "$(printf '%s\n' "$f" | jq -r .PRIORITY | tail -n 1)" "PRIORITY (info)"
x=$(journalctl -q -x --no-pager MESSAGE_ID=$ID_FINISHED SBX_RUN_ID="$id")
assert_contains "$x" "sbx run $id finished: exit-code" "the catalog's subject, with the run's fields"
assert_contains "$x" "Cleanup: completed" "the catalog's text"
assert_clean

t_begin "journal: a refused request is an event naming the caller and the reason"
since=$(date '+%Y-%m-%d %H:%M:%S')
assert_rc 125 sbxctl run --memory 100T -- true
r=$(journal_wait --since "$since" MESSAGE_ID=$ID_REFUSED) || _t_err "no 'refused' event"
assert_eq "0" "$(printf '%s\n' "$r" | jq -r .SBX_CALLER_UID | tail -n 1)" "SBX_CALLER_UID"
assert_eq "org.sbx.Error.InvalidRequest" "$(printf '%s\n' "$r" | jq -r .SBX_ERROR_NAME | tail -n 1)" "SBX_ERROR_NAME"
assert_contains "$(printf '%s\n' "$r" | jq -r .SBX_ERROR | tail -n 1)" "memory" "SBX_ERROR"
assert_clean

t_summary
