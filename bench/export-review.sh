#!/usr/bin/env bash
# bench/export-review.sh - the throughput of the export review (sbx-export --review, docs/export.md)
# against a plain copy of the same trees, side by side in one run:
#   small  N files of S bytes in 100 directories (default 10000 of 1 KiB): files/s
#   large  L files of 16 MiB (default 8): MB/s
# For each tree: R rounds (default 3) of `cp -a` into a fresh directory, then of the review (copy to
# staging, libmagic, sha256, delivery) into a fresh destination; the median of each, and the ratio
# review/copy. Prints one "BENCH key value" line per figure.
#   bench/export-review.sh [BUILD-DIR [N [L [R]]]]      (BUILD-DIR default: build; its export/sbx-export)
# Needs no systemd: runs the reviewer directly (as root, as the export unit would, or as any user
# exporting into a directory of its own). The trees are made below $TMPDIR (default /var/tmp).
set -euo pipefail
BUILD=${1:-build}
N=${2:-10000}
L=${3:-8}
R=${4:-3}
S=1024
export LC_ALL=C

REVIEWER=$BUILD/export/sbx-export
[ -x "$REVIEWER" ] || { echo "bench: $REVIEWER not found (build first: meson setup $BUILD && ninja -C $BUILD)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/sbxbench-export.XXXXXX")
trap 'rm -rf "$W"' EXIT

mkdir -p "$W/small/out" "$W/large/out"
python3 - "$W/small/out" "$N" "$S" "$W/large/out" "$L" <<'PY'
import os, sys
small, n, s, large, l = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
body = (line * (s // len(line) + 1))[:s]
for i in range(n):
    d = os.path.join(small, f"d{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.txt"), "wb") as f:
        f.write(body)
chunk = line * (1 << 20 // len(line))
for i in range(l):
    with open(os.path.join(large, f"big{i}.csv"), "wb") as f:
        for _ in range(16):
            f.write(chunk[: 1 << 20])
PY

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench TREE: sets CP and RV (median seconds)
bench() {
  local tree=$1 cps=() rvs=() i t0 t1 dest st
  for i in $(seq "$R"); do
    rm -rf "$W/cp"; t0=$(now); cp -a "$W/$tree/out" "$W/cp"; sync -f "$W/cp"; t1=$(now)
    cps+=("$(echo "$t1 - $t0" | bc)")
    dest=$W/dest-$tree-$i st=$W/staging-$tree-$i
    mkdir -p "$dest" "$st"
    t0=$(now)
    "$REVIEWER" --review --source-root="$W/$tree" --source=out --staging="$st" --report="$st/report.json" \
      --dest="$dest" --dest-id="$(stat -c %d:%i "$dest")" --owner="$(id -u):$(id -g)" \
      --max-files=$((N + 200)) --max-bytes=$((1 << 40)) --max-file-bytes=$((1 << 30)) \
      --allow-type='text/*'
    sync -f "$dest"; t1=$(now)
    rvs+=("$(echo "$t1 - $t0" | bc)")
    got=$(find "$dest" -type f | wc -l)
    want=$(find "$W/$tree/out" -type f | wc -l)
    [ "$got" = "$want" ] || { echo "bench: the review of $tree delivered $got of $want files" >&2; exit 1; }
    rm -rf "$dest" "$st"
  done
  CP=$(printf '%s\n' "${cps[@]}" | median)
  RV=$(printf '%s\n' "${rvs[@]}" | median)
}

bench small
echo "BENCH small_files $N"
echo "BENCH small_copy_s $CP"
echo "BENCH small_review_s $RV"
echo "BENCH small_review_files_per_s $(echo "scale=0; $N / $RV" | bc)"
echo "BENCH small_review_mb_per_s $(echo "scale=1; $N * $S / 1000000 / $RV" | bc)"
echo "BENCH small_ratio_review_copy $(echo "scale=2; $RV / $CP" | bc)"
bench large
echo "BENCH large_files $L"
echo "BENCH large_copy_s $CP"
echo "BENCH large_review_s $RV"
echo "BENCH large_review_mb_per_s $(echo "scale=1; $L * 16777216 / 1000000 / $RV" | bc)"
echo "BENCH large_ratio_review_copy $(echo "scale=2; $RV / $CP" | bc)"
