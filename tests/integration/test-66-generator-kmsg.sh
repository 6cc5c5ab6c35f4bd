#!/usr/bin/env bash
# sbx-generator before journald (early boot): its messages go to /dev/kmsg, where journald picks them up
# as kernel messages. The native lane's container has no /dev/kmsg (nor a kernel log of its own): the vm
# lane. test-65 has the generator at daemon-reload.
# lane: vm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxtest.XXXXXX); t_on_exit "rm -rf '$W'"
GEN=""
for d in /usr/lib/systemd/system-generators /lib/systemd/system-generators; do
  [ -x "$d/sbx-generator" ] && { GEN=$d/sbx-generator; break; }
done

t_begin "without journald (early boot) the generator logs to /dev/kmsg"
if [ -z "$GEN" ]; then
  t_fail "sbx-generator is not installed in a system-generators directory"
else
  t_add_profile brokenprof <<< "$INVALID_PROFILE"
  want="$RUNPROF/brokenprof.json: resources.memory"
  since=$(date '+%Y-%m-%d %H:%M:%S'); sleep 1
  out=$(mktemp -d "$W/gen.XXXXXX")
  # journald's socket hidden in a private mount namespace, as before journald starts at boot
  t_run unshare -m sh -c "mount -t tmpfs none /run/systemd/journal && SYSTEMD_SCOPE=system '$GEN' '$out' '$out' '$out'"
  assert_eq 0 "$T_RC" "the generator's exit status ($T_OUT)"
  assert_eq "" "$T_OUT" "the generator's stderr (its messages go to kmsg)"
  for i in $(seq 50); do dmesg --facility user --level err 2>/dev/null | grep sbx-generator | grep -qF "$want" && break; sleep 0.2; done
  assert_contains "$(dmesg --facility user --level err 2>/dev/null | grep sbx-generator)" "$want" "dmesg (user.err)"
  assert_contains "$(journalctl -b -k --no-pager -o cat --since "$since" 2>/dev/null)" "$want" "journalctl -k"
  t_pass
fi

t_summary
