#!/usr/bin/env bash
# scripts/fuzz.sh - builds the libFuzzer harnesses of tests/fuzz in the sanitizer build (clang, -Dfuzz=true:
# ASan, UBSan; shared with scripts/sanitize.sh) and runs each for a bounded time, starting from its seed corpus
# (tests/fuzz/corpus/NAME) and the inputs of bugs it found before (tests/fuzz/regressions/NAME, each run
# first). Any crash, sanitizer report, leak, timeout or broken contract fails it; the input is left in
# $SBX_FUZZ_OUT/NAME/ (crash-*, leak-*, timeout-*).
#   scripts/fuzz.sh [NAME...]        (default: every harness; NAME: tests/fuzz/fuzz-NAME.c)
# Last line: "N passed, N failed, 0 skipped" (one per harness). Exit status 0 only if all passed.
# env: SBX_FUZZ_SECONDS   seconds each harness fuzzes (default 20; 0: only the corpus and regressions,
#                         each input once)
#      SBX_FUZZ_JOBS      harnesses run at once (default 2)
#      SBX_FUZZ_TIMEOUT   seconds (wall clock) one input may take before it counts as a hang (default 10;
#                         scripts/test.sh gives 60: there the fuzzers run at nice 19 beside a busy VM and
#                         get a few percent of a core at times)
#      SBX_FUZZ_BUILD     the build dir (default <repo>/build-fuzz)
#      SBX_FUZZ_OUT       new corpus entries and failing inputs (default $SBX_FUZZ_BUILD/out); keep it
#                         between runs to go on from what earlier runs found
set -uo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
DIR=${SBX_FUZZ_BUILD:-$REPO/build-fuzz}
OUT=${SBX_FUZZ_OUT:-$DIR/out}
SECONDS_EACH=${SBX_FUZZ_SECONDS:-20}
JOBS=${SBX_FUZZ_JOBS:-2}
TIMEOUT=${SBX_FUZZ_TIMEOUT:-10}
FUZZ=$REPO/tests/fuzz

NAMES=("$@")
if [ "$#" = 0 ]; then
  for f in "$FUZZ"/fuzz-*.c; do f=${f##*/fuzz-}; NAMES+=("${f%.c}"); done
fi

if ! sanitizer_setup "$DIR" || ! ninja -C "$DIR" "${NAMES[@]/#/tests/fuzz/fuzz-}"; then
  echo "0 passed, ${#NAMES[@]} failed, 0 skipped"
  exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# one harness: its log in $OUT/NAME.log, its status in $OUT/NAME.rc
run_one() {
  local name=$1 bin=$DIR/tests/fuzz/fuzz-$1 out=$OUT/$1 seeds=() rc
  rm -rf "$out/crash-"* "$out/leak-"* "$out/timeout-"* "$out/oom-"*
  mkdir -p "$out/corpus"
  for d in "$FUZZ/corpus/$name" "$FUZZ/regressions/$name"; do [ -d "$d" ] && seeds+=("$d"); done
  {
    # the regressions and seeds first, each once (a crash there is a bug come back)
    if [ "${#seeds[@]}" -gt 0 ]; then
      find "${seeds[@]}" -type f -print0 | xargs -0 -r "$bin" -timeout="$TIMEOUT" -rss_limit_mb=2048 -artifact_prefix="$out/"
    fi &&
    if [ "$SECONDS_EACH" -gt 0 ]; then
      "$bin" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/" "$out/corpus" "${seeds[@]}"
    fi
  } >"$OUT/$name.log" 2>&1
  rc=$?
  echo "$rc" >"$OUT/$name.rc"
}

mkdir -p "$OUT"
for name in "${NAMES[@]}"; do
  [ -x "$DIR/tests/fuzz/fuzz-$name" ] || { echo "fuzz: no harness fuzz-$name"; exit 1; }
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_one "$name" &
done
wait

P=0 F=0
for name in "${NAMES[@]}"; do
  rc=$(cat "$OUT/$name.rc" 2>/dev/null || echo 125)
  replayed=$(grep -c '^Executed ' "$OUT/$name.log")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$OUT/$name.log" | tail -n 1)
  if [ "$rc" = 0 ]; then
    P=$((P + 1)); printf 'fuzz-%-20s ok    %s inputs replayed, %s runs%s\n' "$name" "$replayed" "${runs:-0}" "${cov:+, $cov edges}"
  else
    F=$((F + 1)); printf 'fuzz-%-20s FAIL  exit status %s; log %s\n' "$name" "$rc" "$OUT/$name.log"
    # what failed: the sanitizer's or libFuzzer's lines, or else the end of the log
    why=$(grep -E 'ERROR|SUMMARY|contract broken|runtime error|Test unit written|ALARM' "$OUT/$name.log" | head -n 8)
    printf '%s\n' "${why:-$(tail -n 8 "$OUT/$name.log")}" | cut -c1-300 | sed 's/^/    /'
  fi
done
echo "$P passed, $F failed, 0 skipped"
[ "$F" = 0 ]
