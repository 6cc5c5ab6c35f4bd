#!/usr/bin/env bash
# scripts/fuzz.sh - builds the libFuzzer harnesses of tests/fuzz in the sanitizer build (clang, -Dfuzz=true:
# ASan, UBSan; shared with scripts/sanitize.sh) and runs each for a bounded time, starting from its seed corpus
# (tests/fuzz/corpus/NAME) and the inputs of bugs it found before (tests/fuzz/regressions/NAME, each run
# first). Any crash, sanitizer report, leak, timeout or broken contract fails it; the input is left in
# $SBX_FUZZ_OUT/NAME/ (crash-*, leak-*, timeout-*) and replayed: if it fails again, the harness failed (the
# input is printed in base64 when small); if no input was written or it passes when replayed, the failure
# was the machine's (a harness is a function of its input), and the harness runs once more: that second
# run decides, and the first one's lines are printed under a "retried:" line either way.
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

# why LOG: what failed, indented: the sanitizer's or libFuzzer's lines, or else the end of the log
why() {
  local w
  w=$(grep -E 'ERROR|SUMMARY|contract broken|runtime error|Test unit written|ALARM' "$1" | head -n 8)
  printf '%s\n' "${w:-$(tail -n 8 "$1")}" | cut -c1-300 | sed 's/^/    /'
}

# A failure is judged by its input: the harnesses are functions of their input, so an input that fails
# again is a bug (reported with the input, in base64 when small, to put into tests/fuzz/regressions/NAME/).
# A failure no input reproduces (none was written, or it passes when replayed) is of the machine, not
# of the code: the harness runs once more, and the first attempt's lines are shown either way.
P=0 F=0
for name in "${NAMES[@]}"; do
  rc=$(cat "$OUT/$name.rc" 2>/dev/null || echo 125)
  note=
  if [ "$rc" != 0 ]; then
    bin=$DIR/tests/fuzz/fuzz-$name
    input=$(find "$OUT/$name" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
      -o -name 'oom-*' \) -print -quit)
    if [ -n "$input" ] && ! "$bin" -timeout="$TIMEOUT" -rss_limit_mb=2048 "$input" >"$OUT/$name.replay.log" 2>&1; then
      note=reproduced
    else
      cp "$OUT/$name.log" "$OUT/$name.first.log"
      run_one "$name"
      rc=$(cat "$OUT/$name.rc")
      note=${input:+"not reproduced by its input ${input##*/}"}
      note="first attempt failed, ${note:-no input written}; run again: $([ "$rc" = 0 ] && echo passed || echo failed)"
    fi
  fi
  replayed=$(grep -c '^Executed ' "$OUT/$name.log")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$OUT/$name.log" | tail -n 1)
  if [ "$rc" = 0 ]; then
    P=$((P + 1)); printf 'fuzz-%-20s ok    %s inputs replayed, %s runs%s\n' "$name" "$replayed" "${runs:-0}" "${cov:+, $cov edges}"
  else
    F=$((F + 1)); printf 'fuzz-%-20s FAIL  exit status %s; log %s\n' "$name" "$rc" "$OUT/$name.log"
  fi
  if [ "$note" = reproduced ]; then
    why "$OUT/$name.log"
    size=$(stat -c %s "$input")
    printf '    the input %s fails again (%s bytes)' "${input##*/}" "$size"
    if [ "$size" -le 600 ]; then echo ', base64:'; base64 -w 200 "$input" | sed 's/^/    /'; else echo; fi
  elif [ -n "$note" ]; then
    # "retried" marks these lines for scripts/test.sh's summary, also when the second run passed
    echo "    retried: fuzz-$name: $note; the first attempt's log $OUT/$name.first.log:"
    why "$OUT/$name.first.log"
    [ "$rc" = 0 ] || { echo "    the second run's:"; why "$OUT/$name.log"; }
  fi
done
echo "$P passed, $F failed, 0 skipped"
[ "$F" = 0 ]
