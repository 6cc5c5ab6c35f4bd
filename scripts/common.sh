# scripts/common.sh - shared by scripts/test.sh and scripts/demo.sh (sourced, not run).
# shellcheck shell=bash
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$REPO/build
export LC_ALL=C.UTF-8 SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat

now() { date +%s.%N; }
secs() { printf '%.0f' "$(echo "$(now) - $1" | bc)"; }
say() { printf '\n==== %s\n' "$*"; }

# host_has_systemd: true when this machine's PID 1 is systemd (then no testbed is needed)
host_has_systemd() {
  [ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]
}

# where payloads run: SBX_TESTBED_KIND = vm | nspawn | host, default host when PID 1 is systemd, else vm
testbed_kind() {
  case ${SBX_TESTBED_KIND:-} in
    vm|nspawn|host) echo "$SBX_TESTBED_KIND" ;;
    "") if host_has_systemd; then echo host; else echo vm; fi ;;
    *) echo "SBX_TESTBED_KIND must be vm, nspawn or host" >&2; echo invalid ;;
  esac
}

# configure (or reconfigure) and compile a build dir ($1, default $BUILD; more meson options after it);
# returns non-zero on failure
build() {
  local dir=${1:-$BUILD}
  [ "$#" -gt 0 ] && shift
  if [ -f "$dir/meson-private/coredata.dat" ]; then
    meson configure "$dir" -Dprefix=/usr -Dwerror=true "$@" || return 1
  else
    meson setup "$dir" "$REPO" --prefix=/usr -Dwerror=true "$@" || return 1
  fi
  meson compile -C "$dir"
}

# The native lane's build (docs/testbed.md): a testbed build, whose runs start without the memory, pids and
# cpu controllers this machine's cgroup2 tree lacks, and say so. Never packaged.
BUILD_TESTBED=$REPO/build-testbed
build_testbed() {
  build "$BUILD_TESTBED" -Dtestbed-unenforced-limits=true -Dman=disabled
}

# The native lane: a throw-away nspawn container on this machine's kernel runs payload.sh with SBX_LANE=native
# on the testbed build (installed with meson install). $1 timeout (seconds). Exit status: the payload's.
run_native_lane() {
  SBX_TESTBED_KIND=nspawn SBX_LANE=native BUILD=$BUILD_TESTBED run_payload "$REPO/tests/integration/payload.sh" "$1"
}

# run a payload (a bash script) as root with systemd as PID 1: in the VM testbed, with the repo
# shared at its own path, or directly on the host when its PID 1 is systemd. $1 payload, $2 timeout.
# Variables named in SBX_PASS_ENV are passed to the payload too.
run_payload() {
  local payload=$1 tmo=$2 rc name pass="SBX_BUILD SBX_TESTS SBX_TEST_TIMEOUT SBX_RESULTS SBX_LANE ${SBX_PASS_ENV:-}"
  payload=$(realpath "$payload")
  case $(testbed_kind) in
    host)
      [ "$(id -u)" = 0 ] || { echo "must run as root to install and test"; return 125; }
      SBX_TESTBED=host SBX_PAYLOAD=$payload SBX_BUILD=$BUILD timeout -k 10 "$tmo" bash "$payload" ;;
    vm)   # a guest that shows nothing for longer than a test file may take is ended (testbed/vm.sh)
      SBX_SHARE=$REPO SBX_BUILD=$BUILD SBX_VM_ENV="$pass" SBX_VM_STALL=${SBX_VM_STALL:-$((${SBX_TEST_TIMEOUT:-900} + 120))} \
        "$REPO/testbed/vm.sh" run "$payload" "$tmo" ;;
    nspawn)   # a throw-away container of its own (resource limits are not enforced there)
      name=sbx-test-$$
      export SBX_NSPAWN_NAME=$name SBX_STATE=/run/$name SBX_BIND=$REPO
      "$REPO/testbed/nspawn.sh" start || return 125
      SBX_BUILD=$BUILD SBX_PAYLOAD=$payload SBX_NSPAWN_ENV="SBX_PAYLOAD $pass" \
        timeout -k 10 "$tmo" "$REPO/testbed/nspawn.sh" exec bash "$payload"; rc=$?
      "$REPO/testbed/nspawn.sh" stop >/dev/null
      rm -rf "/run/$name"
      return "$rc" ;;
    *) return 125 ;;
  esac
}

# The sanitizer build (-Dfuzz=true: clang, ASan and UBSan, the fuzzer's instrumentation), shared by
# scripts/sanitize.sh (the unit tests) and scripts/fuzz.sh (the harnesses): configured once; each builds
# only its own targets. $1: the build dir. Returns non-zero (with meson's output) on failure.
sanitizer_setup() {
  local dir=$1 out
  if [ ! -f "$dir/meson-private/coredata.dat" ]; then
    out=$(CC=clang meson setup "$dir" "$REPO" -Dfuzz=true -Dtests=true -Dman=disabled 2>&1) ||
      { echo "$out"; return 1; }
  fi
  ninja -C "$dir" build.ninja >/dev/null   # regenerated if meson.build changed (so is the test list)
}

# The cmocka unit tests of a configured build dir (their programs are built in tests/unit), one a line.
unit_test_names() {
  meson introspect --tests "$1" | jq -r '.[] | select(.cmd[0] | test("/tests/unit/[^/]+$")) | .name'
}
