#!/usr/bin/env bash
# bench/load-run.sh - cold runs at concurrency 1, 8, 32 and 64: runs per second, latency p50 and p99.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. For each level K of
# LEVELS, starts K `sbxctl run -- /bin/true` at once, ROUNDS times, and measures each run's wall time
# (client start to exit) and the rounds' wall time. Reports runs/s, p50, p99 and p99/p50 per level
# (target: p99 <= 3x p50, no failures). Every run must exit 0 (sbxctl returns once sbxd has written the
# run's record); a failure ends the bench with its output. Prints one "BENCH key value" line per
# figure for scripts.
#   bench/load-run.sh [ROUNDS [LEVELS]]     (defaults 3, "1 8 32 64")
# Times come from bench/lib.sh's stamp (bash's EPOCHREALTIME, no process started).
set -uo pipefail
ROUNDS=${1:-3}
LEVELS=${2:-1 8 32 64}
export LC_ALL=C SYSTEMD_COLORS=0

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
systemctl start sbxd.service || { echo "bench: cannot start sbxd" >&2; exit 1; }
sbxctl run -- /bin/true < /dev/null || { echo "bench: a first run failed" >&2; exit 1; }   # warm up

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT

echo "sbx cold runs under load, $ROUNDS rounds per level (kernel $(uname -r), $(nproc) CPUs, $(systemd-detect-virt 2>/dev/null || echo no VM))"
worst=0
for K in $LEVELS; do
  L=()
  stamp t_all
  for _ in $(seq "$ROUNDS"); do
    rm -f "$D"/*
    for k in $(seq "$K"); do
      ( stamp t0
        sbxctl run -- /bin/true < /dev/null > "$D/out.$k" 2>&1 || { echo "exit $?" >> "$D/out.$k"; touch "$D/fail"; }
        stamp t1; ms "$t0" "$t1" > "$D/t.$k" ) &
    done
    wait
    [ -e "$D/fail" ] && { echo "bench: a run failed at concurrency $K:" >&2; cat "$D"/out.* >&2; exit 1; }
    for k in $(seq "$K"); do L+=("$(cat "$D/t.$k")"); done
  done
  stamp t_end
  p50=$(pct 50 "${L[@]}"); p99=$(pct 99 "${L[@]}")
  persec=$(echo "scale=2; $K * $ROUNDS * 1000 / $(ms "$t_all" "$t_end")" | bc)
  ratio=$(echo "scale=2; $p99 / $p50" | bc)
  [ "$(echo "$ratio > $worst" | bc)" = 1 ] && worst=$ratio
  printf '  concurrency %2d: %6s runs/s   p50 %8.1f ms   p99 %8.1f ms   p99/p50 %s (target <= 3)\n' \
    "$K" "$persec" "$p50" "$p99" "$ratio"
  echo "BENCH load_c${K}_runs_per_sec $persec"
  echo "BENCH load_c${K}_p50_ms $p50"
  echo "BENCH load_c${K}_p99_ms $p99"
  echo "BENCH load_c${K}_p99_over_p50 $ratio"
done
# every run left a complete record, and nothing is left running
left=$(systemctl list-units --no-legend --plain 'sbx-offline-*.service' | wc -l)
echo "  units of runs still loaded after the bench: $left"
echo "BENCH load_worst_p99_over_p50 $worst"
echo "BENCH load_units_left $left"
