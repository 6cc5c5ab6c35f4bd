#!/usr/bin/env bash
# scripts/test.sh - THE test command (run as root, from anywhere; works from a clean clone):
#   1. scripts/install-deps.sh                      (no-op when everything is installed)
#   2. meson setup build --prefix=/usr -Dwerror=true (or reconfigure), meson compile -C build
#   3. meson test -C build --print-errorlogs        (unit tests, cmocka; man pages, catalog, completion)
#   4. the .deb: packaging/deb/build.sh (lintian-clean; its own run of the unit tests is skipped: step 3
#      ran them on this tree), and the same package relabelled with a lower version (VERSION~prev1) as
#      the "earlier build" of the upgrade test
#   5. integration tests in two lanes (docs/testbed.md), started in the background: the vm lane
#      (testbed/vm.sh setup, then testbed/vm.sh run tests/integration/payload.sh with the repo shared into
#      the VM; the payload installs the .deb there with dpkg -i and runs the files of lanes vm and both),
#      and beside it the native lane (the testbed build build-testbed, -Dtestbed-unenforced-limits=true,
#      then an nspawn container on this machine's kernel runs the files of lanes native and both). When
#      this machine's PID 1 is systemd, payload.sh runs every file directly here instead: it installs
#      sbx into this system! Each lane's output is shown when it ends.
#   6. while they run: packaging/rpm/build.sh with check-files.sh (the RPM, and its file list against
#      what meson installs from the same rpmbuild's folder), packaging/check-production.sh on the .deb
#      and the RPM (never a testbed build, and the check tells the testbed build apart), then the unit
#      tests again with ASan and UBSan (scripts/sanitize.sh) and each fuzzer of tests/fuzz for
#      SBX_FUZZ_SECONDS (scripts/fuzz.sh), both in one clang build of their own (build-fuzz), at the
#      lowest priority.
#   7. a summary; the last line is "N passed, N failed, N skipped" (unit, sanitizer, fuzzer, package and
#      integration cases)
# Exit status: 0 only if every step passed.
# env: SBX_SKIP_INTEGRATION=1  stop after the unit tests (reported as skipped)
#      SBX_SKIP_PACKAGES=1     build no packages; the integration tests use the build tree (meson install)
#      SBX_SKIP_FUZZ=1         no sanitizer build: neither the unit tests with ASan and UBSan nor the
#                              fuzzers (reported as skipped)
#      SBX_FUZZ_SECONDS        seconds each fuzzer runs (default 20; 0: its seeds and regressions only)
#      SBX_TESTBED_KIND        host: every file on this machine, whose PID 1 must be systemd (the default
#                              there); otherwise the lanes run
#      SBX_LANES               the lanes to run: "native vm" (default), "native" or "vm"
#      SBX_VM_TIMEOUT          seconds for the whole vm lane (default 5100: the 90 minutes CI allows less the ~2 min of build and packages before it)
#      SBX_NATIVE_TIMEOUT      seconds for the whole native lane (default 2400)
#      SBX_AUTOGROUP_NICE      this session's scheduling autogroup while the vm lane runs (default -6;
#                              empty: left as it is; needs root)
#      SBX_TESTS, SBX_TEST_TIMEOUT: passed to payload.sh (which test files; per-file timeout)
#      SBX_VM_STALL            end the VM when the guest has shown nothing for this many seconds (default
#                              SBX_TEST_TIMEOUT + 120; testbed/vm.sh)
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
cd "$REPO" || exit 1

T0=$(now)
RESULTS=()        # "name|status|seconds|detail"
FAILURES=()       # what steps printed of their failures, shown again in the summary
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

# ---- 4. the .deb
say "deb"
PKG=$BUILD/packages
DEB_OK=0
PKG_ON=0
if [ -n "${SBX_SKIP_PACKAGES:-}" ]; then
  record packages skipped "$(now)" "SBX_SKIP_PACKAGES set"
elif [ "$BUILD_OK" != 1 ]; then
  record packages skipped "$(now)" "build failed"
else
  PKG_ON=1
  t=$(now)
  rm -rf "$PKG" "$PKG-prev"
  version=$(meson introspect --projectinfo "$REPO/meson.build" | jq -r .version)
  # the earlier build for the upgrade test: this package, relabelled VERSION~prev1 (sorts before VERSION)
  relabel() {   # DEB VERSION OUTDIR
    local d; d=$(mktemp -d /var/tmp/sbx-relabel.XXXXXX)
    dpkg-deb -R "$1" "$d/root" && sed -i "s/^Version: .*/Version: $2/" "$d/root/DEBIAN/control" &&
      mkdir -p "$3" && dpkg-deb --root-owner-group -Zxz -b "$d/root" "$3/" >/dev/null; local rc=$?
    rm -rf "$d"; return "$rc"
  }
  if SBX_DEB_NOCHECK=1 packaging/deb/build.sh "$PKG" &&
     relabel "$(ls "$PKG"/sbx_"$version"_*.deb)" "$version~prev1" "$PKG-prev"; then
    DEB_OK=1
    export SBX_DEB SBX_DEB_PREV
    SBX_DEB=$(ls "$PKG"/sbx_"$version"_*.deb) SBX_DEB_PREV=$(ls "$PKG-prev"/sbx_"$version~prev1"_*.deb)
    record "deb + lintian" ok "$t" "$(basename "$SBX_DEB"), $(grep -c '^O: ' "$PKG/lintian.txt") lintian override(s)"
    counts "1 passed, 0 failed, 0 skipped"
  else
    record "deb + lintian" FAIL "$t" "packaging/deb/build.sh or its relabelling failed"; counts "0 passed, 1 failed, 0 skipped"
  fi
fi

# ---- 5. integration tests, in two lanes (docs/testbed.md), started in the background; step 6 runs meanwhile.
# Each test file says which lane runs it ("# lane: native|vm|both"):
#   vm      testbed/vm.sh boots Debian's kernel under qemu (every cgroup controller); payload.sh installs the
#           .deb there (dpkg -i) and runs the files of lanes vm and both
#   native  an nspawn container on this machine's kernel, at its own speed, with the testbed build
#           (build-testbed: the memory, pids and cpu controllers this machine's cgroup2 tree lacks go
#           unenforced, and its runs say so); payload.sh runs the files of lanes native and both
# On a machine whose PID 1 is systemd (SBX_TESTBED_KIND=host) one run there takes every file instead.
say "integration tests (started)"
INT_PIDS=()       # "lane|pid|t0|output|results"
start_lane() {    # LANE COMMAND...: in the background, its output and results files named after the lane
  local lane=$1 out=$BUILD/integration-$1.out res=$BUILD/integration-$1.log
  shift
  rm -f "$out" "$res" "$out.end"
  # (its end time in OUT.end: the lanes are waited for one after the other)
  { SBX_RESULTS=$res "$@"; rc=$?; now > "$out.end"; exit "$rc"; } > "$out" 2>&1 &
  INT_PIDS+=("$lane|$!|$(now)|$out|$res")
  echo "integration tests running ($lane lane), output in $out; shown when they end"
}
if [ -n "${SBX_SKIP_INTEGRATION:-}" ]; then
  record integration skipped "$(now)" "SBX_SKIP_INTEGRATION set"
elif [ "$BUILD_OK" != 1 ]; then
  record integration skipped "$(now)" "build failed"
else
  where=$(testbed_kind)
  [ "$DEB_OK" = 1 ] && export SBX_PASS_ENV="${SBX_PASS_ENV:-} SBX_DEB SBX_DEB_PREV"
  LANES=${SBX_LANES:-native vm}
  # The VM's emulated CPUs are the suite's long pole. nice(1) orders processes only within their
  # session's scheduling autogroup (sched(7)); each unit the native lane's container starts is a session
  # of its own, so each weighs as much as this whole session, the VM included. This session's autogroup
  # (qemu, the host's niced steps, the lanes' test scripts) is raised to weigh ~4 such sessions while
  # the suite runs (SBX_AUTOGROUP_NICE, -6; "" leaves it), and set back at the end.
  ag_nice=${SBX_AUTOGROUP_NICE--6}
  if [[ " $LANES " = *" vm "* ]] && [ -n "$ag_nice" ] && [ -w /proc/self/autogroup ]; then
    ag_old=$(sed -n 's/.* nice \(-\{0,1\}[0-9]*\)$/\1/p' /proc/self/autogroup)
    if [ -n "$ag_old" ] && echo "$ag_nice" 2>/dev/null > /proc/self/autogroup; then
      trap 'echo "$ag_old" > /proc/self/autogroup 2>/dev/null' EXIT
      echo "scheduling: this session's autogroup at nice $ag_nice (was $ag_old)"
    fi
  fi
  if [ "$where" = invalid ]; then
    record integration FAIL "$(now)" "bad SBX_TESTBED_KIND"; counts "0 passed, 1 failed, 0 skipped"
  elif [ "$where" = host ]; then
    start_lane host run_payload tests/integration/payload.sh "${SBX_VM_TIMEOUT:-5100}"
  else
    if [[ " $LANES " = *" vm "* ]]; then
      t=$(now)
      if testbed/vm.sh setup; then
        record "vm setup" ok "$t"
        SBX_TESTBED_KIND=vm SBX_LANE=vm start_lane vm run_payload tests/integration/payload.sh "${SBX_VM_TIMEOUT:-5100}"
      else
        record "vm setup" FAIL "$t"; counts "0 passed, 1 failed, 0 skipped"
      fi
    fi
    if [[ " $LANES " = *" native "* ]]; then
      t=$(now)
      # at the lowest priority: the VM, booting and installing the .deb meanwhile, is the long pole
      if nice -n 19 bash -c ". '$REPO/scripts/common.sh' && build_testbed" > "$BUILD/build-testbed.log" 2>&1; then
        record "testbed build" ok "$t" "$BUILD_TESTBED (-Dtestbed-unenforced-limits=true)"
        start_lane native run_native_lane "${SBX_NATIVE_TIMEOUT:-2400}"
      else
        tail -n 30 "$BUILD/build-testbed.log"
        record "testbed build" FAIL "$t" "log: $BUILD/build-testbed.log"; counts "0 passed, 1 failed, 0 skipped"
      fi
    fi
  fi
fi

# ---- 6. the RPM, while the integration tests run. The VM's emulated CPUs are the suite's long pole:
# what the host does meanwhile runs at the lowest priority (nice 19), so that it takes only idle time.
NICE=""
[ "${#INT_PIDS[@]}" -gt 0 ] && NICE="nice -n 19"
if [ "$PKG_ON" = 1 ]; then
  say "rpm"
  t=$(now)
  # the file list is checked against the build folder of the RPM's own rpmbuild (nothing compiled twice)
  if SBX_RPM_NOCHECK=1 SBX_RPM_CHECK_FILES=1 $NICE packaging/rpm/build.sh "$PKG/rpm"; then
    record "rpm + file list" ok "$t" "$(cd "$PKG/rpm" && ls ./*.rpm 2>/dev/null | grep -v src.rpm | head -n 1)"
    counts "1 passed, 0 failed, 0 skipped"
  else
    record "rpm + file list" FAIL "$t" "packaging/rpm/build.sh (with check-files.sh) failed"
    counts "0 passed, 1 failed, 0 skipped"
  fi
fi

# ---- 6a. the packages are production builds (never -Dtestbed-unenforced-limits=true: docs/testbed.md); the
# check must tell the native lane's testbed build apart, or it proves nothing
if [ "$DEB_OK" = 1 ]; then
  say "production builds"
  t=$(now)
  pkgs=("$SBX_DEB")
  for r in "$PKG"/rpm/sbx-[0-9]*.rpm; do [ -f "$r" ] && [[ $r != *.src.rpm ]] && pkgs+=("$r"); done
  if ! packaging/check-production.sh "${pkgs[@]}"; then
    record "production builds" FAIL "$t" "a package is a testbed build"; counts "0 passed, 1 failed, 0 skipped"
  elif [ -x "$BUILD_TESTBED/sbxd/sbxd" ] && packaging/check-production.sh "$BUILD_TESTBED" >/dev/null 2>&1; then
    record "production builds" FAIL "$t" "the check did not tell the testbed build apart"; counts "0 passed, 1 failed, 0 skipped"
  else
    record "production builds" ok "$t" "${#pkgs[@]} package(s)$([ -x "$BUILD_TESTBED/sbxd/sbxd" ] && echo '; the testbed build told apart')"
    counts "1 passed, 0 failed, 0 skipped"
  fi
fi

# ---- 6b. sanitizers and fuzzing, while the integration tests run: the unit tests built with ASan and
# UBSan (scripts/sanitize.sh), then each libFuzzer harness for SBX_FUZZ_SECONDS (scripts/fuzz.sh); one
# clang build of their own, build-fuzz. One fuzzer at a time: the VM has the other core.
counted_step() {   # NAME COMMAND...: a script whose last line is "N passed, N failed, N skipped"
  local name=$1 t out rc line fails
  shift
  t=$(now) out=$(mktemp)
  "$@" 2>&1 | tee "$out"; rc=${PIPESTATUS[0]}
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
  # what failed (also a failure a retry got past), again in the summary: the lines naming it and the
  # indented lines under them
  fails=$(awk '/FAIL|retried:/ { keep = 1; n = 0; print; next } keep && /^ / && n++ < 12 { print; next } { keep = 0 }' "$out" |
    cut -c1-300 | head -n 40 | sed 's/^/  /')
  rm -f "$out"
  if [ "$rc" = 0 ] && [ -n "$line" ]; then counts "$line"; record "$name" ok "$t" "$line"
  else counts "${line:-0 passed, 1 failed, 0 skipped}" failed; record "$name" FAIL "$t" "exit status $rc; ${line:-no summary line}"; fi
  [ -z "$fails" ] || FAILURES+=("$name:" "$fails")
}
say "sanitizers and fuzzing"
if [ -n "${SBX_SKIP_FUZZ:-}" ]; then
  record "unit (ASan, UBSan)" skipped "$(now)" "SBX_SKIP_FUZZ set"; record fuzz skipped "$(now)" "SBX_SKIP_FUZZ set"
elif [ "$BUILD_OK" != 1 ]; then
  record "unit (ASan, UBSan)" skipped "$(now)" "build failed"; record fuzz skipped "$(now)" "build failed"
else
  counted_step "unit (ASan, UBSan)" $NICE scripts/sanitize.sh
  # at nice 19 beside the VM's two busy vCPUs a fuzzer gets ~1.5% of a core at times: an input's time
  # limit (the hang check) is wall clock, so it is longer here than alone
  export SBX_FUZZ_SECONDS=${SBX_FUZZ_SECONDS:-20} SBX_FUZZ_JOBS=${SBX_FUZZ_JOBS:-1} SBX_FUZZ_TIMEOUT=${SBX_FUZZ_TIMEOUT:-60}
  counted_step "fuzz (${SBX_FUZZ_SECONDS} s each)" $NICE scripts/fuzz.sh
fi

# ---- 5. (end) each lane's result, the figures to plan the suite's time with and what failed, where the end
# of the output shows them
for l in "${INT_PIDS[@]}"; do
  IFS='|' read -r lane pid t0 out res <<< "$l"
  wait "$pid"; rc=$?
  # the lane's own time, from its start to its end (record counts from T0 to now)
  [ -s "$out.end" ] && t0=$(echo "$t0 + $(now) - $(cat "$out.end")" | bc)
  say "integration tests ($lane lane)"
  cat "$out"
  if [ -f "$res" ]; then
    say "integration tests ($lane lane): time per file (slowest first), failed cases"
    sed -n 's/^==== \(test-[^:]*\): exit status \([0-9]*\), \([0-9.]*\)s$/\3 \1 \2/p' "$res" |
      sort -rn | awk '{ printf "%7.1fs  %-28s exit %s\n", $1, $2, $3 }'
    grep -E '^FAIL ' "$res" | cut -c1-200
  fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$res" 2>/dev/null | tail -n 1)
  files=$(sed -n 's/^== payload: \([0-9]*\) test file(s).*/\1/p' "$res" 2>/dev/null | tail -n 1)
  what="$lane$([ "$lane" = vm ] && [ "$DEB_OK" = 1 ] && echo ", .deb")$([ "$lane" = native ] && echo ", testbed build")"
  if [ "$rc" = 0 ] && [ -n "$line" ]; then
    counts "$line"; record "integration ($what)" ok "$t0" "${files:-?} files: $line"
  else
    counts "${line:-0 passed, 1 failed, 0 skipped}" failed
    record "integration ($what)" FAIL "$t0" "exit status $rc$([ "$rc" = 125 ] && echo ' (no result)'); ${line:-no summary line}; log: $res"
  fi
done

# ---- 7. summary
say "summary"
[ "${#FAILURES[@]}" -gt 0 ] && printf '%s\n' "${FAILURES[@]}"
for r in "${RESULTS[@]}"; do
  IFS='|' read -r name st sec detail <<< "$r"
  printf '%-22s %-8s %5ss  %s\n' "$name" "$st" "$sec" "$detail"
done
printf '%-22s %-8s %5ss\n' total "$([ "$FAILED" = 0 ] && echo ok || echo FAIL)" "$(secs "$T0")"
echo "$P passed, $F failed, $S skipped"
[ "$FAILED" = 0 ]
