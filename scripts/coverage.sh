#!/usr/bin/env bash
# scripts/coverage.sh - what the cmocka unit tests cover of the policy core (src/plan and the libraries below it): lines and
# branches, with clang's source-based coverage (llvm-profdata, llvm-cov) in a build dir of its own; only
# the unit tests and what they link are compiled.
#   scripts/coverage.sh [DIR...]     (default: the policy core's folders; any source directories of the repo)
# Prints llvm-cov's table per file, then one line per directory:
#   "coverage src/plan: lines 91.2% (5000/5482), branches 80.1% (2000/2497)"
# env: SBX_COVERAGE_BUILD   the build dir (default <repo>/build-cov)
#      SBX_COVERAGE_HTML=1  also an HTML report in $SBX_COVERAGE_BUILD/coverage-html
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
DIR=${SBX_COVERAGE_BUILD:-$REPO/build-cov}
[ "$#" -gt 0 ] && SOURCES=("$@") || SOURCES=(src/plan src/record src/profile src/image src/grant src/export-policy src/command src/net src/proptable src/json)
flags='-fprofile-instr-generate -fcoverage-mapping'

# programs the build itself runs write their profiles aside
export LLVM_PROFILE_FILE=$DIR/build-profiles/%p-%m.profraw
if [ ! -f "$DIR/meson-private/coredata.dat" ]; then
  out=$(CC=clang meson setup "$DIR" "$REPO" -Dc_args="$flags" -Dc_link_args="$flags" -Dman=disabled 2>&1) ||
    { echo "$out"; exit 1; }
fi
ninja -C "$DIR" build.ninja >/dev/null
mapfile -t TESTS < <(unit_test_names "$DIR")
ninja -C "$DIR" "${TESTS[@]/#/tests/unit/}" || exit 1
rm -rf "$DIR/profiles"
LLVM_PROFILE_FILE="$DIR/profiles/%p-%m.profraw" meson test -C "$DIR" --no-rebuild "${TESTS[@]}" >"$DIR/coverage-tests.log" 2>&1 ||
  { tail -n 30 "$DIR/coverage-tests.log"; echo "coverage: unit tests failed (log: $DIR/coverage-tests.log)"; exit 1; }
llvm-profdata merge -sparse "$DIR"/profiles/*.profraw -o "$DIR/unit.profdata" || exit 1
OBJECTS=("$DIR/tests/unit/${TESTS[0]}")   # llvm-cov: the first program, then -object for each other
for t in "${TESTS[@]:1}"; do OBJECTS+=(-object "$DIR/tests/unit/$t"); done
# file names are as the compiler was given them (relative to the build dir): filtered here, not by llvm-cov
REL=()
for s in "${SOURCES[@]}"; do REL+=("$(realpath -m --relative-to="$DIR" "$REPO/$s")/"); done
llvm-cov report -instr-profile="$DIR/unit.profdata" "${OBJECTS[@]}" >"$DIR/coverage-report.txt" || exit 1
head -n 2 "$DIR/coverage-report.txt"
for r in "${REL[@]}"; do grep -F -- "$r" "$DIR/coverage-report.txt" | grep -v '\.h ' ; done
if [ -n "${SBX_COVERAGE_HTML:-}" ]; then
  llvm-cov show -format=html -output-dir="$DIR/coverage-html" -instr-profile="$DIR/unit.profdata" "${OBJECTS[@]}" &&
    echo "coverage: $DIR/coverage-html/index.html"
fi
llvm-cov export -summary-only -instr-profile="$DIR/unit.profdata" "${OBJECTS[@]}" >"$DIR/coverage.json" || exit 1
for i in "${!SOURCES[@]}"; do
  jq -r --arg s "${SOURCES[$i]}" --arg p "${REL[$i]}" --arg d "$DIR" '
    [.data[0].files[] | select(.filename | ltrimstr($d + "/") | startswith($p)) | .summary] as $f |
    ($f | map(.lines.covered) | add) as $lc | ($f | map(.lines.count) | add) as $ln |
    ($f | map(.branches.covered) | add) as $bc | ($f | map(.branches.count) | add) as $bn |
    def pct(a; b): if b > 0 then (a * 1000 / b | round / 10) else 0 end;
    "coverage \($s): lines \(pct($lc; $ln))% (\($lc)/\($ln)), branches \(pct($bc; $bn))% (\($bc)/\($bn))"' \
    "$DIR/coverage.json"
done
