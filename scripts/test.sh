#!/usr/bin/env bash
# scripts/test.sh - THE test command (run as root, from anywhere; works from a clean clone):
#   1. scripts/install-deps.sh                      (no-op when everything is installed)
#   2. meson setup build --prefix=/usr -Dwerror=true (or reconfigure), meson compile -C build
#   3. meson test -C build --print-errorlogs        (unit tests, cmocka)
#   4. integration tests: testbed/vm.sh setup, then testbed/vm.sh run tests/integration/payload.sh
#      with the repo shared into the VM (or, when this machine's PID 1 is systemd, payload.sh runs
#      directly here: it meson-installs the build into this system!)
#   5. a summary; the last line is "N passed, N failed, N skipped" (unit + integration cases)
# Exit status: 0 only if every step passed.
# env: SBX_SKIP_INTEGRATION=1  stop after the unit tests (reported as skipped)
#      SBX_TESTBED_KIND        vm | nspawn | host: where the integration tests run (default: host
#                              when this machine's PID 1 is systemd, else vm; nspawn is quick but
#                              does not enforce MemoryMax/TasksMax/CPUQuota)
#      SBX_VM_TIMEOUT          seconds for the whole VM run (default 2700)
#      SBX_TESTS, SBX_TEST_TIMEOUT: passed to payload.sh (which test files; per-file timeout)
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
cd "$REPO" || exit 1

T0=$(now)
RESULTS=()        # "name|status|seconds|detail"
P=0 F=0 S=0       # cases over unit and integration tests
FAILED=0
record() {   # name status t0 [detail]
  RESULTS+=("$1|$2|$(secs "$3")|${4:-}")
  [ "$2" = FAIL ] && FAILED=1
  return 0
}
counts() {   # LINE [failed]: add "N passed, N failed, N skipped" to the totals; with "failed",
  local p f s  # count at least one failure (a step failed although its cases did not say so)
  read -r p _ f _ s _ <<< "$1"
  [ "${2:-}" = failed ] && [ "${f:-0}" = 0 ] && f=1
  P=$((P + ${p:-0})) F=$((F + ${f:-0})) S=$((S + ${s:-0}))
}

# ---- 1. dependencies
say "dependencies"
t=$(now)
if scripts/install-deps.sh; then record deps ok "$t"
else record deps FAIL "$t"; counts "0 passed, 1 failed, 0 skipped"; fi

# ---- 2. build
say "build"
t=$(now)
BUILD_OK=0
if build; then
  BUILD_OK=1; record build ok "$t"
else
  record build FAIL "$t" "configure or compile failed"; counts "0 passed, 1 failed, 0 skipped"
fi

# ---- 3. unit tests
say "unit tests"
t=$(now)
if [ "$BUILD_OK" = 1 ]; then
  rm -f "$BUILD/meson-logs/testlog.json"
  meson test -C "$BUILD" --print-errorlogs; rc=$?
  u=$(jq -rs '[.[] | .result] |
        "\(map(select(. == "OK" or . == "EXPECTEDFAIL")) | length) passed, \(map(select(. != "OK" and . != "EXPECTEDFAIL" and . != "SKIP")) | length) failed, \(map(select(. == "SKIP")) | length) skipped"' \
      "$BUILD/meson-logs/testlog.json" 2>/dev/null) || u=""
  [ -n "$u" ] || u="0 passed, 0 failed, 0 skipped"
  if [ "$rc" = 0 ]; then counts "$u"; record "unit tests" ok "$t" "$u"
  else counts "$u" failed; record "unit tests" FAIL "$t" "meson test exit status $rc; $u"; fi
else
  record "unit tests" skipped "$t" "build failed"
fi

# ---- 4. integration tests
say "integration tests"
t=$(now)
if [ -n "${SBX_SKIP_INTEGRATION:-}" ]; then
  record integration skipped "$t" "SBX_SKIP_INTEGRATION set"
elif [ "$BUILD_OK" != 1 ]; then
  record integration skipped "$t" "build failed"
else
  where=$(testbed_kind)
  if [ "$where" = invalid ]; then where=""; record integration FAIL "$t" "bad SBX_TESTBED_KIND"; counts "0 passed, 1 failed, 0 skipped"
  elif [ "$where" != vm ]; then :
  elif testbed/vm.sh setup; then record "vm setup" ok "$t"
  else where=""; record "vm setup" FAIL "$t"; counts "0 passed, 1 failed, 0 skipped"; fi
  if [ -n "$where" ]; then
    t=$(now)
    rm -f "$BUILD/integration.log"
    run_payload tests/integration/payload.sh "${SBX_VM_TIMEOUT:-2700}"; rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$BUILD/integration.log" 2>/dev/null | tail -n 1)
    if [ "$rc" = 0 ] && [ -n "$line" ]; then
      counts "$line"; record "integration ($where)" ok "$t" "$line"
    else
      counts "${line:-0 passed, 1 failed, 0 skipped}" failed
      record "integration ($where)" FAIL "$t" "exit status $rc$([ "$rc" = 125 ] && echo ' (no result)'); ${line:-no summary line}; log: $BUILD/integration.log"
    fi
  fi
fi

# ---- 5. summary
say "summary"
for r in "${RESULTS[@]}"; do
  IFS='|' read -r name st sec detail <<< "$r"
  printf '%-22s %-8s %5ss  %s\n' "$name" "$st" "$sec" "$detail"
done
printf '%-22s %-8s %5ss\n' total "$([ "$FAILED" = 0 ] && echo ok || echo FAIL)" "$(secs "$T0")"
echo "$P passed, $F failed, $S skipped"
[ "$FAILED" = 0 ]
