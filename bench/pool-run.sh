#!/usr/bin/env bash
# bench/pool-run.sh - a run served by the warm pool against a cold run and against bubblewrap, measured
# side by side in one process; then concurrent runs.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. Two profiles are
# added under /run/sbx/profiles.d (removed at the end): sbxbench_pool, the shipped offline profile with
# pool.size P, and sbxbench_cold, the same without a pool (the same unit properties). Interleaves, N times:
#   A  sbxctl run -p sbxbench_pool -- /bin/true   (a waiting unit claimed; the pool is let refill
#                                                  between two samples, outside the timed part)
#   B  sbxctl run -p sbxbench_cold -- /bin/true   (a unit started for the run)
#   C  bwrap --unshare-all --ro-bind / / -- /bin/true
#   D  sbxctl run --wait-cleanup -p sbxbench_pool -- /bin/true   (A, answered once the cleanup is done
#                                                  too, at Finished instead of Exited: docs/dbus.md)
#   E  SBX_DIRECT_SOCKET=0 sbxctl run -p sbxbench_pool -- /bin/true   (A over the system bus instead of
#                                                  sbxd's own socket: what the socket buys)
# and reports p50 and p99 of each, the ratios of the medians A/C (target <= 1.0), B/C, A/B, D/A and E/A, how many
# A runs the pool served (record "start": "pool"), and the pool's idle cost: units waiting and the
# memory their cgroups hold. Then K cold runs at once, R rounds: runs per second and p99/p50. Prints one
# "BENCH key value" line per figure for scripts.
#   bench/pool-run.sh [N [P [K [R]]]]     (defaults 20, 2, 4, 3)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included); the concurrent runs are timed by stamps. The report's first line says which.
set -uo pipefail
N=${1:-20}
P=${2:-2}
K=${3:-4}
R=${4:-3}
export LC_ALL=C SYSTEMD_COLORS=0

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "bench: bwrap is not installed (scripts/install-deps.sh)" >&2; exit 2; }
BASE=/usr/lib/sbx/profiles.d/offline.json
[ -r "$BASE" ] || { echo "bench: $BASE is missing" >&2; exit 2; }

RUNPROF=/run/sbx/profiles.d
mkdir -p "$RUNPROF"
jq --argjson p "$P" '.pool = {"size": $p} | .description = "bench: offline with a warm pool"' "$BASE" \
  > "$RUNPROF/sbxbench_pool.json"
jq '.pool = {"size": 0} | .description = "bench: offline without a pool"' "$BASE" > "$RUNPROF/sbxbench_cold.json"
cleanup() {
  rm -f "$RUNPROF/sbxbench_pool.json" "$RUNPROF/sbxbench_cold.json"
  rmdir "$RUNPROF" /run/sbx 2>/dev/null
  systemctl daemon-reload
}
trap cleanup EXIT
systemctl start sbxd.service || { echo "bench: cannot start sbxd" >&2; exit 1; }
sbxctl profile reload || { echo "bench: profile reload failed" >&2; exit 1; }

wait_pool() {   # until P units wait (max 120 s)
  local end=$((SECONDS + 120))
  while [ "$(pool_waiting sbxbench_pool)" -lt "$P" ]; do
    [ "$SECONDS" -lt "$end" ] || { echo "bench: the pool did not fill within 120 s" >&2; exit 1; }
    sleep 0.1
  done
  sleep 0.2 # sbxd reads the helpers' READY a moment after they tell systemd
}

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
run_a() { "${T[@]}" sbxctl run -p sbxbench_pool -- /bin/true < /dev/null; }
run_b() { "${T[@]}" sbxctl run -p sbxbench_cold -- /bin/true < /dev/null; }
run_c() { "${T[@]}" bwrap --unshare-all --ro-bind / / -- /bin/true < /dev/null; }
run_d() { "${T[@]}" sbxctl run --wait-cleanup -p sbxbench_pool -- /bin/true < /dev/null; }
run_e() { SBX_DIRECT_SOCKET=0 "${T[@]}" sbxctl run -p sbxbench_pool -- /bin/true < /dev/null; }

wait_pool
for f in run_b run_c; do $f || { echo "bench: $f failed" >&2; exit 1; }; done   # warm up
rm -f "$TOOK_FILE"
# the pool's idle cost, with every unit waiting
wait_pool
idle_units=0 idle_mem=0
for u in $(systemctl list-units --all --no-legend --plain 'sbx-sbxbench_pool-*.service' | awk '/sbx pool unit/ {print $1}'); do
  cg=/sys/fs/cgroup$(systemctl show -P ControlGroup "$u")
  idle_units=$((idle_units + 1))
  idle_mem=$((idle_mem + $(cat "$cg/memory.current" 2>/dev/null || echo 0)))
done

A=() B=() C=() D=() E=() pooled=0
for _ in $(seq "$N"); do
  for f in run_a run_b run_c run_d run_e; do
    case $f in run_a|run_d|run_e) wait_pool ;; esac
    settle; stamp t0; $f || { echo "bench: $f failed" >&2; exit 1; }; stamp t1
    case $f in
      run_a) A+=("$(took "$t0" "$t1")")
             id=$(sbxctl list --no-legend | tail -n 1 | awk '{print $1}')
             [ "$(sbxctl show --json "$id" | jq -r .start)" = pool ] && pooled=$((pooled + 1)) ;;
      run_b) B+=("$(took "$t0" "$t1")") ;;
      run_c) C+=("$(took "$t0" "$t1")") ;;
      run_d) D+=("$(took "$t0" "$t1")") ;;
      run_e) E+=("$(took "$t0" "$t1")") ;;
    esac
  done
done
a50=$(pct 50 "${A[@]}"); a99=$(pct 99 "${A[@]}")
b50=$(pct 50 "${B[@]}"); b99=$(pct 99 "${B[@]}")
c50=$(pct 50 "${C[@]}"); c99=$(pct 99 "${C[@]}")
d50=$(pct 50 "${D[@]}"); d99=$(pct 99 "${D[@]}")
e50=$(pct 50 "${E[@]}"); e99=$(pct 99 "${E[@]}")
da=$(echo "scale=2; $d50 / $a50" | bc); ea=$(echo "scale=2; $e50 / $a50" | bc)
ac=$(echo "scale=2; $a50 / $c50" | bc); bc_=$(echo "scale=2; $b50 / $c50" | bc); ab=$(echo "scale=3; $a50 / $b50" | bc)
printf 'pool-run: %d samples each, kernel %s; clock: %s\n' "$N" "$(uname -r)" "$CLOCK"
printf '  A pooled run   p50 %8.1f ms  p99 %8.1f ms   (%d of %d served by the pool)\n' "$a50" "$a99" "$pooled" "$N"
printf '  B cold run     p50 %8.1f ms  p99 %8.1f ms\n' "$b50" "$b99"
printf '  C bwrap        p50 %8.1f ms  p99 %8.1f ms\n' "$c50" "$c99"
printf '  D pooled run, --wait-cleanup  p50 %8.1f ms  p99 %8.1f ms\n' "$d50" "$d99"
printf '  E pooled run, system bus      p50 %8.1f ms  p99 %8.1f ms\n' "$e50" "$e99"
printf '  A/C %s (target <= 1.0)   B/C %s   A/B %s   D/A %s   E/A %s\n' "$ac" "$bc_" "$ab" "$da" "$ea"
printf '  pool idle cost: %d units waiting, %d KiB in their cgroups\n' "$idle_units" "$((idle_mem / 1024))"
echo "BENCH pool_run_p50_ms $a50"
echo "BENCH pool_run_p99_ms $a99"
echo "BENCH cold_run_p50_ms $b50"
echo "BENCH cold_run_p99_ms $b99"
echo "BENCH bwrap_p50_ms $c50"
echo "BENCH bwrap_p99_ms $c99"
echo "BENCH pool_over_bwrap $ac"
echo "BENCH cold_over_bwrap $bc_"
echo "BENCH pool_over_cold $ab"
echo "BENCH pool_run_wait_cleanup_p50_ms $d50"
echo "BENCH pool_run_wait_cleanup_p99_ms $d99"
echo "BENCH pool_wait_cleanup_over_pool $da"
echo "BENCH pool_run_system_bus_p50_ms $e50"
echo "BENCH pool_run_system_bus_p99_ms $e99"
echo "BENCH pool_system_bus_over_direct $ea"
echo "BENCH pool_served $pooled/$N"
echo "BENCH pool_idle_units $idle_units"
echo "BENCH pool_idle_memory_kib $((idle_mem / 1024))"

# concurrent cold runs: K at once, R rounds; each one's latency, and the rounds' wall time
D=$(mktemp -d); L=()
stamp t_all
for _ in $(seq "$R"); do
  for k in $(seq "$K"); do
    ( T=(); stamp t0; run_b || touch "$D/fail"; stamp t1; ms "$t0" "$t1" > "$D/$k" ) &
  done
  wait
  for k in $(seq "$K"); do L+=("$(cat "$D/$k")"); done
done
stamp t_end
[ -e "$D/fail" ] && { rm -rf "$D"; echo "bench: a concurrent run failed" >&2; exit 1; }
rm -rf "$D"
l50=$(pct 50 "${L[@]}"); l99=$(pct 99 "${L[@]}")
persec=$(echo "scale=2; $K * $R * 1000 / $(ms "$t_all" "$t_end")" | bc)
cr=$(echo "scale=2; $l99 / $l50" | bc)
printf '  %d concurrent cold runs x %d rounds: %s runs/s, latency p50 %.1f ms p99 %.1f ms (p99/p50 %s)\n' \
  "$K" "$R" "$persec" "$l50" "$l99" "$cr"
echo "BENCH concurrent_runs_per_sec $persec"
echo "BENCH concurrent_runs_p99_over_p50 $cr"
