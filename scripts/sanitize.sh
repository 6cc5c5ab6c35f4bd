#!/usr/bin/env bash
# scripts/sanitize.sh - the cmocka unit tests (tests/unit) built with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, any report failing the test: in the sanitizer build that scripts/fuzz.sh uses
# too (clang, -Dfuzz=true); only the unit tests and what they link are compiled.
#   scripts/sanitize.sh [TEST...]   (default: every unit test)
# Last line: "N passed, N failed, N skipped". Exit status 0 only if every test passed.
# env: SBX_FUZZ_BUILD   the build dir (default <repo>/build-fuzz)
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
DIR=${SBX_FUZZ_BUILD:-$REPO/build-fuzz}
# the first report ends the test (UBSan's too: -fno-sanitize-recover=all)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

sanitizer_setup "$DIR" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
if [ "$#" -gt 0 ]; then TESTS=("$@"); else mapfile -t TESTS < <(unit_test_names "$DIR"); fi
[ "${#TESTS[@]}" -gt 0 ] || { echo "sanitize: no unit tests found"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
ninja -C "$DIR" "${TESTS[@]/#/tests/unit/}" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
rm -f "$DIR/meson-logs/testlog.json"
meson test -C "$DIR" --no-rebuild --print-errorlogs "${TESTS[@]}"; rc=$?
jq -rs '[.[] | .result] |
  "\(map(select(. == "OK")) | length) passed, \(map(select(. != "OK" and . != "SKIP")) | length) failed, \(map(select(. == "SKIP")) | length) skipped"' \
  "$DIR/meson-logs/testlog.json" 2>/dev/null || echo "0 passed, 1 failed, 0 skipped"
exit "$rc"
