#!/usr/bin/env bash
# A terminal when the caller has one (sbxctl -t/-T, docs/sandboxes.md "A terminal"): driven through a
# real terminal (tmux: send-keys, capture-pane, resize-window), `sbxctl run` and `sbxctl exec` give the
# command a pty of the run's own devpts as its controlling terminal: job control, Ctrl-C and Ctrl-Z to
# the foreground job, the window size at start and after a resize, TERM; the caller's terminal modes
# are the same afterwards. Refused under the gVisor tier when asked for (-t), plain stdio with a note
# when it was only detected. Without a terminal nothing changes.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd tmux || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
chmod 755 "$W"
TM=(tmux -L "sbxtest71-$$" -f /dev/null)
t_on_exit "${TM[*]} kill-server 2>/dev/null"
# a session that stays: tx_start kills its last window's session, and a server left with none exits, which
# raced with the next new-session ("server exited unexpectedly")
"${TM[@]}" new-session -d -s keep "sleep 3600"
SBS=()
t_on_exit 'for s in "${SBS[@]}"; do sbxctl rm "$s" >/dev/null 2>&1; done'

# tx_start CMD: a new window of 80x24 running CMD as the caller's shell line would, between two records of
# the terminal's modes (stty -g, before and after), then the status; the pane stays for capture-pane.
tx_start() {
  "${TM[@]}" kill-session -t t71 2>/dev/null
  rm -f "$W/modes.before" "$W/modes.after"
  "${TM[@]}" new-session -d -x 80 -y 24 -s t71 \
    "stty -g > '$W/modes.before'; $1; echo \"RC=\$?\"; stty -g > '$W/modes.after'; sleep 600"
}
tx_pane() { "${TM[@]}" capture-pane -p -t t71 2>/dev/null; }
# tx_wait ERE [SECONDS]: until the pane shows a line matching ERE (false, with the pane logged, if not)
tx_wait() {
  local i
  for ((i = 0; i < ${2:-30} * 5; i++)); do
    tx_pane | grep -Eq -- "$1" && return 0
    sleep 0.2
  done
  t_log "no '$1' on the pane:"; tx_pane | sed 's/^/  | /' | grep -v '^  | $'
  return 1
}
tx_keys() { "${TM[@]}" send-keys -t t71 "$@"; }
tx_line() { tx_keys -l "$1"; tx_keys Enter; }
assert_wait() { tx_wait "$1" "${3:-30}" || _t_err "${2:-the pane}: no line matching '$1'"; }
assert_modes_kept() {
  tx_wait '^RC=' 60 >/dev/null
  local i; for ((i = 0; i < 25; i++)); do [ -s "$W/modes.after" ] && break; sleep 0.2; done
  assert_eq "$(cat "$W/modes.before" 2>/dev/null)" "$(cat "$W/modes.after" 2>/dev/null)" \
    "the caller's terminal modes (stty -g) before and after"
  assert_ne "" "$(cat "$W/modes.before" 2>/dev/null)" "stty -g before"
}

t_begin "bash -i: a controlling terminal of the run's own, job control, Ctrl-C and Ctrl-Z to the foreground job"
tx_start "sbxctl run --quiet -- bash --norc --noprofile -i"
if assert_wait '^bash.*[$#] ?$' "bash's prompt"; then
  tx_line 'echo tty=$(ps -o tty= -p $$) size=$(stty size) term=$TERM'
  assert_wait '^tty=pts/[0-9]+ size=24 80 term=.+' "ps -o tty=, stty size, TERM inside"
  tx_line 'sleep 30 &'
  tx_line 'jobs'
  assert_wait '^\[1\]\+ +Running +sleep 30 &' "jobs"
  tx_line 'fg'
  assert_wait '^sleep 30$' "fg"
  sleep 1
  tx_keys C-c
  tx_line 'echo alive-$((6*7)) jobs=$(jobs | wc -l)'
  assert_wait '^alive-42 jobs=0' "the shell after Ctrl-C of its foreground job"
  tx_line 'sleep 40'
  sleep 1
  tx_keys C-z
  assert_wait '^\[1\]\+ +Stopped +sleep 40' "Ctrl-Z"
  tx_line 'bg'
  assert_wait '^\[1\]\+ sleep 40 &' "bg"
  tx_line 'jobs; kill %1'
  assert_wait '^\[1\]\+ +Running +sleep 40 &' "the job after bg"
  tx_line 'exit 3'
  assert_wait '^RC=3$' "sbxctl's status after exit 3" 60
  assert_not_contains "$(tx_pane)" "no job control" "bash's complaints"
  assert_modes_kept
  run=$(last_run_id)
  assert_eq exit-code "$(record_get "$run" .stop_reason)" "stop_reason"
  out=$(record_get "$run" .resources.output_bytes)
  if [ "${out:-0}" -gt 100 ] 2>/dev/null; then t_log "output_bytes $out"; else _t_err "output_bytes '$out': what the terminal carried is not counted"; fi
fi

t_begin "the run's own devpts: its terminal and nothing of the host's"
assert_rc 0 sbxctl run --quiet -T -- ls /dev/pts
assert_eq "ptmx" "$T_OUT" "/dev/pts of a run without a terminal"
tx_start "sbxctl run --quiet -- ls /dev/pts"
assert_wait '^0 +ptmx *$' "/dev/pts of a run with a terminal"
assert_wait '^RC=0$' "sbxctl's status"

t_begin "less of a workspace file draws at the window's size and redraws after a resize"
seq -f 'line-%03g' 1 200 > "$W/lines.txt"
chmod 644 "$W/lines.txt"
tx_start "sbxctl run --quiet -w '$W' -- less /home/sbx/workspace/lines.txt"
if assert_wait '^line-023$' "less at 80x24"; then
  assert_not_contains "$(tx_pane)" "line-024" "less at 80x24 (23 lines and its prompt)"
  "${TM[@]}" resize-window -t t71 -x 100 -y 40
  assert_wait '^line-039$' "less after the window grew to 100x40"
  assert_not_contains "$(tx_pane)" "line-040" "less at 100x40"
  tx_keys q
  assert_wait '^RC=0$' "sbxctl after q"
  assert_modes_kept
fi

t_begin "stty size follows a resize made while the command runs (SIGWINCH pushed to the run)"
tx_start "sbxctl run --quiet -- bash --norc --noprofile -i"
if assert_wait '^bash.*[$#] ?$' "bash's prompt"; then
  "${TM[@]}" resize-window -t t71 -x 120 -y 30
  sleep 0.5
  tx_line 'echo size=$(stty size)'
  assert_wait '^size=30 120$' "stty size after resize-window"
  tx_line 'exit'
  assert_wait '^RC=0$' "sbxctl's status"
fi

t_begin "the caller's terminal comes back from a command killed with SIGKILL"
tx_start "sbxctl run --quiet -- bash --norc --noprofile -i"
if assert_wait '^bash.*[$#] ?$' "bash's prompt"; then
  tx_line 'stty -echo -icanon; kill -9 $$'
  assert_wait '^RC=137$' "sbxctl's status (128 + SIGKILL)"
  assert_modes_kept
fi

t_begin "exec -t into a sandbox: a terminal of its own there, its size, resize, its exit status"
if assert_rc 0 sbxctl create --detach --name "t71-$$" --idle-timeout 10min; then
  SBS+=("t71-$$")
  tx_start "sbxctl exec -t t71-$$ -- bash --norc --noprofile -i"
  if assert_wait '^bash.*[$#] ?$' "bash's prompt"; then
    tx_line 'echo tty=$(ps -o tty= -p $$) size=$(stty size)'
    assert_wait '^tty=pts/[0-9]+ size=24 80' "ps -o tty=, stty size inside the sandbox"
    tx_line 'sleep 40'
    sleep 1
    tx_keys C-c
    tx_line 'echo alive-$((6*7))'
    assert_wait '^alive-42' "the shell after Ctrl-C of its foreground job"
    "${TM[@]}" resize-window -t t71 -x 90 -y 20
    sleep 0.5
    tx_line 'echo size=$(stty size)'
    assert_wait '^size=20 90$' "stty size after resize-window"
    tx_line 'exit 4'
    assert_wait '^RC=4$' "sbxctl exec's status" 60
    assert_modes_kept
  fi
fi

t_begin "-t without a terminal: the command still gets one; -T and no terminal: byte-exact stdio"
assert_rc 0 sbxctl run --quiet -t -- sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-three' < /dev/null
assert_match "$T_OUT" '/dev/pts/0' "tty"
assert_contains "$T_OUT" "all-three" "stdin, stdout and stderr"
out=$(printf 'a\r\nb\n\0c' | sbxctl run --quiet -- sh -c 'cat; test -t 0 || echo no-terminal >&2' 2>"$W/err" | od -An -c | tr -s ' \n' ' ')
assert_eq "$(printf 'a\r\nb\n\0c' | od -An -c | tr -s ' \n' ' ')" "$out" "stdin to stdout, byte for byte"
assert_eq "no-terminal" "$(cat "$W/err")" "stderr apart"

t_begin "gVisor tier: -t is refused (org.sbx.Error.NoTerminal), a detected terminal becomes plain stdio with a note"
if ! sbxctl profile show untrusted >/dev/null 2>&1; then
  t_skip "no profile 'untrusted' (process.isolation \"gvisor\") installed"
else
  assert_rc 125 sbxctl run --quiet -p untrusted -t -- true < /dev/null
  assert_contains "$T_OUT" "gets no terminal" "the refusal"
  tx_start "sbxctl run --quiet -p untrusted -- echo ran-plain"
  assert_wait '^sbxctl: no terminal: ' "the note"
  if command -v runsc >/dev/null; then
    assert_wait '^RC=0$' "sbxctl's status" 120
    assert_wait '^ran-plain' "the command's output"
  else
    t_log "runsc not installed: the run itself is not checked"
  fi
fi

t_summary
