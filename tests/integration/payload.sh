#!/usr/bin/env bash
# tests/integration/payload.sh - runs INSIDE a systemd testbed (or on a host whose PID 1 is systemd)
# as root: installs sbx, then runs every tests/integration/test-*.sh in order.
#
#   payload.sh [--install-only] [BUILD_DIR]
#
# What is installed: the Debian package $SBX_DEB when it is set, but in the native lane (dpkg -i, nothing else: the package
# must work on its own), else the build tree BUILD_DIR (meson install, then what a package's scripts
# would do). BUILD_DIR: argument, else $SBX_BUILD, else <repo>/build (configured with --prefix=/usr and
# already compiled on the host: nothing is rebuilt here); tests that run built test programs
# (render-check) take them from there either way. Installing into the VM's root is harmless: the
# guest's root is a tmpfs overlay that vanishes at power-off.
# Output goes to stdout and to the results file ($SBX_RESULTS, default BUILD_DIR/integration.log).
# The last line is "N passed, N failed, N skipped"; the exit status is 0 only if nothing failed
# and at least one test file ran.
# env: SBX_DEB           the .deb to install (test-90 also needs SBX_DEB_PREV, an older build of it)
#      SBX_TEST_TIMEOUT  seconds one test file may take (default 900)
#      SBX_TESTS         space-separated test file names to run instead of all (e.g. test-00-harness.sh)
#      SBX_LANE          native | vm: only the files whose "# lane:" line names this lane or "both"
#                        (docs/testbed.md); a file without a valid lane line fails. Unset: every file
set -uo pipefail
export LC_ALL=C SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat

INSTALL_ONLY=0
[ "${1:-}" = --install-only ] && { INSTALL_ONLY=1; shift; }

# the repo: the folder two levels above this script. Under testbed/vm.sh this script runs from a copy
# in /io, and SBX_PAYLOAD names the original (same path in the guest, the repo being shared).
SELF=${SBX_PAYLOAD:-$0}
REPO=${SBX_REPO:-$(cd "$(dirname "$SELF")/../.." && pwd)}
BUILD=${1:-${SBX_BUILD:-$REPO/build}}
export SBX_BUILD=$BUILD   # tests that run built test programs (render-check) find them here
TDIR=$REPO/tests/integration
RESULTS=${SBX_RESULTS:-$BUILD/integration.log}

[ "$(id -u)" = 0 ] || { echo "payload: must run as root" >&2; exit 2; }
[ -d "$BUILD" ] || { echo "payload: build dir $BUILD missing" >&2; exit 2; }
[ -d "$TDIR" ] || { echo "payload: $TDIR missing" >&2; exit 2; }

now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

main() {
echo "== payload: testbed=${SBX_TESTBED:-host} lane=${SBX_LANE:-all} kernel=$(uname -r) repo=$REPO build=$BUILD"
echo "== payload: system state: $(systemctl is-system-running 2>&1)"

# ---- install: the native lane runs a testbed build (docs/testbed.md), never the package (its one file
# about the package, test-98, installs it to see it refuse runs there)
INSTALL_DEB=${SBX_DEB:-}
[ "${SBX_LANE:-}" = native ] && INSTALL_DEB=""
t0=$(now)
if [ -n "$INSTALL_DEB" ] && [ "${SBX_TESTBED:-}" = vm ] && [ -e /var/lib/man-db/auto-update ]; then
  # man-db's trigger re-indexes every manual page on each dpkg call that installs or removes one:
  # 80 s under emulation, five times in a run. The guest's root is a throw-away overlay; switching
  # the index off there (the flag file man-db reads) changes nothing sbx's package does.
  rm -f /var/lib/man-db/auto-update && echo "== payload: man-db's index update is off in this guest"
fi
if [ -n "$INSTALL_DEB" ]; then
  # what test-90 compares against after the package is purged
  "$TDIR/pkg-state.sh" > /var/tmp/pkg-baseline.txt 2>/dev/null || echo "== payload: no baseline of the system state"
  if ! dpkg -i "$SBX_DEB"; then
    echo "== payload: dpkg -i $SBX_DEB failed"
    [ "$INSTALL_ONLY" = 1 ] && exit 1
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
  fi
  echo "== payload: installed $(dpkg-query -W -f='${Package} ${Version}' sbx) from $SBX_DEB in $(secs "$t0")s"
  [ "$INSTALL_ONLY" = 1 ] && exit 0
else
  if ! meson install -C "$BUILD" --no-rebuild --quiet; then
    echo "== payload: meson install failed"
    [ "$INSTALL_ONLY" = 1 ] && exit 1
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
  fi
  # the journal's catalog, with sbx's (dpkg's trigger does this for the package)
  journalctl --update-catalog || echo "== payload: journalctl --update-catalog failed"
  systemctl daemon-reload || echo "== payload: daemon-reload failed"
  # a daemon still running from an earlier install would serve the tests with its old code
  systemctl try-restart sbxd.service || echo "== payload: restarting sbxd failed"
  # dbus-daemon rereads its policy (the new org.sbx.Manager1.conf) on reload
  systemctl try-reload-or-restart dbus.service || echo "== payload: dbus reload failed"
  # create what the installed tmpfiles.d snippets ask for (only ours: others may touch the shared root)
  mapfile -t TMPF < <(grep -E '/tmpfiles\.d/[^/]+\.conf$' "$BUILD/meson-logs/install-log.txt" 2>/dev/null)
  if [ "${#TMPF[@]}" -gt 0 ]; then
    systemd-tmpfiles --create "${TMPF[@]}" || echo "== payload: systemd-tmpfiles --create failed"
  fi
  echo "== payload: installed the build tree in $(secs "$t0")s ($(grep -vc '^#' "$BUILD/meson-logs/install-log.txt" 2>/dev/null || echo '?') files)"
  [ "$INSTALL_ONLY" = 1 ] && exit 0
fi

# The reaper's timer (the package enables it) would run a pass at a moment of its own, in the middle of
# a test (activating sbxd while test-40 checks that it stays stopped): the suite runs the reaper itself
# (test-41).
systemctl stop sbx-gc.timer 2>/dev/null || true

# ---- tests
P=0 F=0 S=0 N=0
if [ -n "${SBX_TESTS:-}" ]; then
  FILES=(); for f in $SBX_TESTS; do FILES+=("$TDIR/${f##*/}"); done
else
  FILES=("$TDIR"/test-*.sh)
fi
for t in "${FILES[@]}"; do
  [ -e "$t" ] || { echo "== payload: no test files in $TDIR"; continue; }
  name=${t##*/}
  if [ -n "${SBX_LANE:-}" ]; then
    lane=$(sed -n 's/^# lane: \([a-z]*\)$/\1/p' "$t" | head -n 1)
    case $lane in
      native|vm|both) [ "$lane" = both ] || [ "$lane" = "$SBX_LANE" ] || continue ;;
      *) echo "FAIL $name: no '# lane: native|vm|both' line: no lane runs it"; F=$((F + 1)); continue ;;
    esac
  fi
  N=$((N + 1)); t1=$(now)
  echo "==== $name"
  # output to a file, not a pipe: a process a test leaves behind cannot hold up the run
  (cd / && exec timeout -k 10 "${SBX_TEST_TIMEOUT:-900}" bash "$t" < /dev/null > "$TOUT" 2>&1) & tpid=$!
  tail -n +1 -f --pid="$tpid" "$TOUT" & tailpid=$!
  wait "$tpid"; rc=$?
  wait "$tailpid"
  out=$(cat "$TOUT")
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n 1)
  if [ -n "$line" ]; then
    read -r p _ f _ s _ <<< "$line"
    P=$((P + p)) F=$((F + f)) S=$((S + s))
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
      echo "FAIL $name: exited with status $rc although no case failed"; F=$((F + 1))
    fi
  else
    [ "$rc" = 124 ] && echo "FAIL $name: timed out after ${SBX_TEST_TIMEOUT:-900}s" \
                    || echo "FAIL $name: exited with status $rc without a summary line"
    F=$((F + 1))
  fi
  echo "==== $name: exit status $rc, $(secs "$t1")s"
done

echo "== payload: $N test file(s)${SBX_LANE:+ of the $SBX_LANE lane}, results in $RESULTS"
[ "$N" -gt 0 ] || { echo "== payload: no test ran"; F=$((F + 1)); }
echo "$P passed, $F failed, $S skipped"
[ "$F" = 0 ]
}

if [ "$INSTALL_ONLY" = 1 ]; then main; exit $?; fi
: > "$RESULTS" || { echo "payload: cannot write $RESULTS" >&2; exit 2; }
TOUT=$(mktemp /run/sbx-test-out.XXXXXX)
main 2>&1 | tee -a "$RESULTS"
rc=${PIPESTATUS[0]}
rm -f "$TOUT"
exit "$rc"
