#!/usr/bin/env bash
# The native lane runs a testbed build (docs/testbed.md): its runs start although this machine's cgroup2
# tree has no memory, pids or cpu controller, and say so. Here, in the same container, the package's own
# programs (the .deb, $SBX_DEB, installed over the testbed build) must refuse every run as they do on any
# host where a ceiling cannot be enforced: exit 123, the helper's message, nothing left. Then the testbed
# build goes back. Last file of the lane: it changes what is installed.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary

t_begin "the testbed build: a run starts without its ceilings, and its record, sbxctl and the journal say so"
if [ "$(t_lane)" != native ]; then
  t_skip "runs in the native lane only (SBX_LANE=native), on the testbed build"
else
  assert_match "$(sbxctl --version)" '^sbxctl [0-9.]+ \(testbed build: testbed-unenforced-limits\)$' "sbxctl --version"
  t0=$(date '+%Y-%m-%d %H:%M:%S')
  # the line, which the other cases go without (SBX_TESTBED_QUIET, lib.sh)
  out=$(env -u SBX_TESTBED_QUIET sbxctl run --quiet -- true 2>&1); rc=$?
  assert_eq 0 "$rc" "exit status"
  assert_eq "sbx: ceilings not enforced: memory, tasks, cpu (a testbed build, on a host without their cgroup controllers)" \
    "$out" "the one line sbxctl printed"
  id=$(last_run_id)
  assert_eq false "$(record_get "$id" .limits.enforced)" "limits.enforced"
  assert_eq "memory tasks cpu" "$(record_get "$id" '.limits.unenforced | join(" ")')" "limits.unenforced"
  assert_eq null "$(record_get "$id" .resources.memory_peak_bytes)" "memory peak (no controller to read it from)"
  ev=$(journalctl -q --no-pager -o cat --since "$t0" SBX_RUN_ID="$id" SBX_LIMITS_UNENFORCED=memory,tasks,cpu | wc -l)
  assert_eq 2 "$ev" "journal events (started, finished) with SBX_LIMITS_UNENFORCED"
  t_pass
fi

t_begin "the package's programs refuse every run here: 123, the message of every production build, nothing left"
if [ "$(t_lane)" != native ]; then
  t_skip "runs in the native lane only (SBX_LANE=native), where no ceiling can be enforced"
elif [ -z "${SBX_DEB:-}" ]; then
  t_skip "needs the package (SBX_DEB, built by scripts/test.sh)"
else
  # back to the testbed build at the end, whatever happened (the build dir's files, as payload.sh did)
  t_on_exit 'dpkg --purge sbx >/dev/null 2>&1; meson install -C "$SBX_BUILD" --no-rebuild --quiet >/dev/null 2>&1;
    systemctl daemon-reload; systemctl restart sbxd.service'
  before=$(record_count)
  assert_rc 0 dpkg -i "$SBX_DEB"
  # the container's root forbids maintainer scripts to start services (policy-rc.d): sbxd by hand
  systemctl daemon-reload
  assert_rc 0 systemctl restart sbxd.service
  assert_match "$(sbxctl --version)" '^sbxctl [0-9][0-9.~a-z]*$' "the package's sbxctl --version"
  assert_match "$(/usr/libexec/sbx/sbx-exec --version)" '^sbx-exec [0-9][0-9.~a-z]*$' "the package's sbx-exec --version"
  assert_rc 123 sbxctl run -- true
  assert_match "$T_OUT" "^sbxctl: run [0-9a-f]{32} did not start: MemoryMax cannot be enforced: /sys/fs/cgroup/sbx\\.slice/sbx-offline\\.slice/sbx-offline-[0-9a-f]{32}\\.service/memory\\.max: No such file or directory \\(no memory controller\\?\\)$" \
    "sbxctl's one line"
  id=$(last_run_id)
  assert_eq refused "$(record_get "$id" .stop_reason)" "stop reason"
  assert_eq true "$(record_get "$id" .limits.enforced)" "limits.enforced (a production build claims every ceiling)"
  assert_eq $((before + 1)) "$(record_count)" "records: one more"
  # a sandbox goes the same way
  assert_rc 123 sbxctl create --name prod-refused
  assert_contains "$T_OUT" "MemoryMax cannot be enforced" "sbxctl create's message"
  # nor can the package's helper be told that a ceiling may go unenforced: helper_unit (sbx.sh) passes
  # --unenforced-ceilings in this lane, as a testbed sbxd would, and the helper stops at its arguments
  # (no status: it refused before any check)
  assert_eq "rc=123 status=" "$(helper_unit sbxt-prod-helper 'exit 7' -p DynamicUser=yes -- \
    --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)" "the package's helper told a ceiling may go unenforced"
  assert_clean
  t_pass
fi

t_summary
