#!/usr/bin/env bash
# The installed bash completion of sbxctl against the real sbx: the profile names it offers come from
# the real search path, the run ids from the real sbxd, and nothing reaches the terminal when sbxd
# cannot be reached. Each completion runs in a fresh bash, with bash-completion's helpers loaded (as
# in an interactive shell) and without them.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"

COMPLETION=/usr/share/bash-completion/completions/sbxctl
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
HELPER=$(cd "$(dirname "$0")/../completion" && pwd)/complete.sh
SHIPPED="browser coding data offline untrusted"
MODES="helpers plain"

# complete_line MODE LINE: what the completion offers at the end of LINE, sorted, on one line.
# MODE helpers: bash-completion loaded first; plain: without it. Its stderr goes to $W/stderr.
complete_line() {
  bash --norc --noprofile -c '
    if [ "$1" = helpers ]; then . "$2" || exit 1; fi
    . "$3" && . "$4" || exit 1
    sbx_complete _sbxctl "$5"
    sbx_reply' complete "$1" "$BASH_COMPLETION" "$HELPER" "$COMPLETION" "$2" 2> "$W/stderr"
}

# assert_quiet MODE LINE: the completion of LINE wrote nothing to stderr
assert_quiet() {
  [ -s "$W/stderr" ] || return 0
  _t_err "'$2<TAB>' ($1) wrote to stderr: $(head -c 300 "$W/stderr")"
}

t_begin "the completion is installed where bash-completion finds it"
assert_file "$COMPLETION" "the completion"
if [ -r "$BASH_COMPLETION" ]; then
  # bash-completion loads completions/NAME on the first TAB after NAME
  t_run bash --norc --noprofile -c ". '$BASH_COMPLETION'; __load_completion sbxctl && complete -p sbxctl"
  assert_eq 0 "$T_RC" "loading it through bash-completion ($T_OUT)"
  assert_contains "$T_OUT" "complete -F _sbxctl sbxctl" "complete -p sbxctl"
else
  t_log "bash-completion is not installed here: only the plain mode is checked"
  MODES=plain
fi
assert_file "$HELPER" "tests/completion/complete.sh"

t_begin "the profile names offered are the shipped profiles"
shipped=$(find /usr/lib/sbx/profiles.d -maxdepth 1 -name '*.json' -printf '%f\n' | sed 's/\.json$//' | sort | paste -sd ' ')
assert_eq "$SHIPPED" "$shipped" "profiles in /usr/lib/sbx/profiles.d"
others=$(find /etc/sbx/profiles.d /run/sbx/profiles.d -maxdepth 1 -name '*.json' 2>/dev/null | paste -sd ' ')
if [ -n "$others" ]; then
  # left by an earlier test or an administrator: then the valid profiles sbxctl lists
  t_log "profiles besides the shipped ones: $others"
  want=$(sbxctl --no-legend profile list 2>/dev/null | awk '$3 == "ok" { print $1 }' | sort | paste -sd ' ')
else
  want=$SHIPPED
fi
for mode in $MODES; do
  assert_eq "$want" "$(complete_line "$mode" "sbxctl run --profile ")" "sbxctl run --profile <TAB> ($mode)"
  assert_quiet "$mode" "sbxctl run --profile "
  assert_eq "$want" "$(complete_line "$mode" "sbxctl -p ")" "sbxctl -p <TAB> ($mode)"
  assert_eq "offline" "$(complete_line "$mode" "sbxctl run --profile=off")" "sbxctl run --profile=off<TAB> ($mode)"
  assert_contains " $(complete_line "$mode" "sbxctl profile show ") " " coding " "sbxctl profile show <TAB> ($mode)"
done

t_begin "a running run's id is offered for show and stop"
sbx_run_bg "$W/out" -- sleep 30   # sets CPID and RUN (from sbxctl list --no-legend)
t_on_exit "sbxctl stop '$RUN' > /dev/null 2>&1"
assert_match "$RUN" '^[0-9a-f]{32}$' "run id"
for mode in $MODES; do
  assert_contains " $(complete_line "$mode" "sbxctl stop ") " " $RUN " "sbxctl stop <TAB> ($mode)"
  assert_quiet "$mode" "sbxctl stop "
  assert_eq "$RUN" "$(complete_line "$mode" "sbxctl show ${RUN:0:12}")" "sbxctl show ${RUN:0:12}<TAB> ($mode)"
  assert_quiet "$mode" "sbxctl show ${RUN:0:12}"
done
ids=$(sbxctl list --no-legend | awk '{ print $1 }' | sort | paste -sd ' ')
assert_eq "$ids" "$(complete_line helpers "sbxctl show ")" "sbxctl show <TAB>: every run of sbxctl list"
assert_rc 0 sbxctl stop "$RUN"
wait "$CPID"; rc=$?
assert_eq 143 "$rc" "exit status of the stopped run's sbxctl"

t_begin "a finished run is offered for show, not for stop"
assert_eq "finished" "$(record_get "$RUN" .state)" "state"
for mode in $MODES; do
  assert_contains " $(complete_line "$mode" "sbxctl show ") " " $RUN " "sbxctl show <TAB> ($mode)"
  assert_not_contains " $(complete_line "$mode" "sbxctl stop ") " " $RUN " "sbxctl stop <TAB> ($mode)"
done
assert_clean "after the stopped run"

t_begin "sbxd unreachable: no run ids, and nothing on the terminal"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$W/no-bus"
assert_rc 123 sbxctl list   # the control: sbxctl itself fails here, and says so
assert_contains "$T_OUT" "system bus"
for mode in $MODES; do
  assert_eq "" "$(complete_line "$mode" "sbxctl show ")" "sbxctl show <TAB> ($mode)"
  assert_quiet "$mode" "sbxctl show "
done
unset DBUS_SYSTEM_BUS_ADDRESS

t_summary
