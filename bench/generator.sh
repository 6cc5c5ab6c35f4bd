#!/usr/bin/env bash
# bench/generator.sh - how long sbx-generator takes over many profiles (it runs at every boot and
# every daemon-reload, in parallel with systemd's own generators: target under 50 ms for 100 profiles).
#
#   bench/generator.sh [BUILD_DIR]
#
# Makes PROFILES profiles (copies of the shipped profiles/*.json under new names), runs the built
# generator RUNS times, each into a fresh output directory (as systemd does), and prints the median,
# minimum and maximum wall time. Needs no root.
# The output goes to a tmpfs, like systemd's /run/systemd/generator: each file is written atomically
# with fsync, which costs nothing on tmpfs but ~150 ms for 100 profiles on an ext4 disk.
# env: SBX_BENCH_PROFILES (100)  SBX_BENCH_RUNS (21)  SBX_BENCH_TARGET_MS (50)
#      SBX_BENCH_OUT (a tmpfs directory for the output: /dev/shm, else the temporary directory)
set -euo pipefail
export LC_ALL=C
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-${SBX_BUILD:-$REPO/build}}
GEN=$BUILD/generator/sbx-generator
PROFILES=${SBX_BENCH_PROFILES:-100}
RUNS=${SBX_BENCH_RUNS:-21}
TARGET=${SBX_BENCH_TARGET_MS:-50}

[ -x "$GEN" ] || { echo "bench/generator.sh: $GEN not built (ninja -C $BUILD)" >&2; exit 2; }
shipped=("$REPO"/profiles/*.json)
[ -e "${shipped[0]}" ] || { echo "bench/generator.sh: no profiles in $REPO/profiles" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-gen.XXXXXX")
OUTBASE=${SBX_BENCH_OUT:-}
if [ -z "$OUTBASE" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then OUTBASE=/dev/shm; fi
O=$(mktemp -d "${OUTBASE:-$T}/sbx-bench-gen-out.XXXXXX")
trap 'rm -rf "$T" "$O"' EXIT
mkdir "$T/profiles"
for ((i = 0; i < PROFILES; i++)); do
  src=${shipped[i % ${#shipped[@]}]}
  name=$(basename "$src" .json)
  cp "$src" "$T/profiles/$(printf '%s_%03d' "$name" "$i").json"
done
export SBX_PROFILES_PATH=$T/profiles

# one run first: it must work, and it warms the page cache like a real boot's second reload
"$GEN" "$O/warm" || { echo "bench/generator.sh: the generator failed" >&2; exit 1; }
written=$(find "$O/warm" -name '*.slice' | wc -l)
[ "$written" = "$PROFILES" ] || { echo "bench/generator.sh: $written slices written for $PROFILES profiles" >&2; exit 1; }

times=()
for ((r = 0; r < RUNS; r++)); do
  out=$O/out.$r
  t0=$EPOCHREALTIME
  "$GEN" "$out" "$out" "$out"
  t1=$EPOCHREALTIME
  times+=("$(echo "($t1 - $t0) * 1000" | bc -l)")
  rm -rf "$out"
done

sorted=$(printf '%s\n' "${times[@]}" | sort -g)
median=$(sed -n "$(((RUNS + 1) / 2))p" <<< "$sorted")
min=$(head -n 1 <<< "$sorted")
max=$(tail -n 1 <<< "$sorted")
verdict=$(echo "$median < $TARGET" | bc -l)
printf 'sbx-generator: %d profiles, %d runs, output on %s: median %.1f ms (min %.1f, max %.1f); target < %d ms: %s\n' \
  "$PROFILES" "$RUNS" "$(stat -f -c %T "$O")" "$median" "$min" "$max" "$TARGET" \
  "$([ "$verdict" = 1 ] && echo met || echo MISSED)"
