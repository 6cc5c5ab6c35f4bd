#!/usr/bin/env bash
# bench/sandbox-exec.sh - a command in a running sandbox against a cold run, measured side by side.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. Interleaves, N times:
#   A  sbxctl run -- /bin/true                 (a cold run: a unit set up and torn down)
#   B  sbxctl exec SANDBOX -- /bin/true        (a sandbox made once, before the loop; on sbxd's own socket)
#   E  B over the system bus                   (SBX_DIRECT_SOCKET=0: sbxctl-bus and dbus-daemon on its way)
#   W  sbxctl run --wait-cleanup -- /bin/true  (A answered once its cleanup is done too, at Finished
#                                               instead of Exited: docs/dbus.md)
# and reports p50 and p99 of each and the ratio of the medians B/A (target <= 0.1), B/W and E/B. Then C concurrent
# execs at once, R rounds: execs per second and p99/p50 of their latencies. Prints one "BENCH key
# value" line per figure for scripts.
#   bench/sandbox-exec.sh [N [C [R]]]      (defaults 20, 4, 5)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included); the concurrent execs are timed by stamps. The report's first line says which.
set -uo pipefail
N=${1:-20}
C=${2:-4}
R=${3:-5}
export LC_ALL=C SYSTEMD_COLORS=0

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }

SB=$(sbxctl create --detach --name sbx-bench-exec) || { echo "bench: cannot create a sandbox" >&2; exit 1; }
trap 'sbxctl rm "$SB" >/dev/null 2>&1' EXIT

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
run_a() { "${T[@]}" sbxctl run -- /bin/true < /dev/null; }
run_b() { "${T[@]}" sbxctl exec "$SB" -- /bin/true < /dev/null; }
run_w() { "${T[@]}" sbxctl run --wait-cleanup -- /bin/true < /dev/null; }
run_e() { SBX_DIRECT_SOCKET=0 "${T[@]}" sbxctl exec "$SB" -- /bin/true < /dev/null; }

for f in run_a run_b run_w run_e; do $f || { echo "bench: $f failed" >&2; exit 1; }; done   # warm up
rm -f "$TOOK_FILE"
A=() B=() W=() E=()
for _ in $(seq "$N"); do
  for f in run_a run_b run_w run_e; do
    settle; stamp t0; $f || { echo "bench: $f failed" >&2; exit 1; }; stamp t1
    case $f in
      run_a) A+=("$(took "$t0" "$t1")") ;; run_b) B+=("$(took "$t0" "$t1")") ;;
      run_w) W+=("$(took "$t0" "$t1")") ;; run_e) E+=("$(took "$t0" "$t1")") ;;
    esac
  done
done
a50=$(pct 50 "${A[@]}"); a99=$(pct 99 "${A[@]}"); b50=$(pct 50 "${B[@]}"); b99=$(pct 99 "${B[@]}")
w50=$(pct 50 "${W[@]}"); w99=$(pct 99 "${W[@]}"); e50=$(pct 50 "${E[@]}"); e99=$(pct 99 "${E[@]}")
ratio=$(echo "scale=3; $b50 / $a50" | bc); ratio_w=$(echo "scale=3; $b50 / $w50" | bc)
ratio_e=$(echo "scale=3; $e50 / $b50" | bc)

# concurrent execs: C at once, R rounds; each one's latency, and the rounds' wall time
D=$(mktemp -d); trap 'sbxctl rm "$SB" >/dev/null 2>&1; rm -rf "$D"' EXIT
L=() total=0
stamp T0
for r in $(seq "$R"); do
  for k in $(seq "$C"); do
    ( stamp t0; sbxctl exec "$SB" -- /bin/true < /dev/null || echo fail > "$D/fail"; stamp t1
      ms "$t0" "$t1" > "$D/$r.$k" ) &
  done
  wait
done
stamp T1
[ -e "$D/fail" ] && { echo "bench: a concurrent exec failed" >&2; exit 1; }
for f in "$D"/*.*; do L+=("$(cat "$f")"); done
total=$(( C * R ))
persec=$(echo "scale=1; $total * 1000 / $(ms "$T0" "$T1")" | bc)   # (seconds at scale 1 would round a native round to 0)
c50=$(pct 50 "${L[@]}"); c99=$(pct 99 "${L[@]}")
cr=$(echo "scale=2; $c99 / $c50" | bc)

echo "sbx sandbox exec (kernel $(uname -r), $(systemd-detect-virt 2>/dev/null || echo bare metal)); $N interleaved rounds; clock: $CLOCK"
printf '  A cold run    -- /bin/true   p50 %8.1f ms   p99 %8.1f ms\n' "$a50" "$a99"
printf '  B exec        -- /bin/true   p50 %8.1f ms   p99 %8.1f ms   B/A %.3f (target <= 0.1)\n' "$b50" "$b99" "$ratio"
printf '  W cold run, --wait-cleanup   p50 %8.1f ms   p99 %8.1f ms   B/W %.3f\n' "$w50" "$w99" "$ratio_w"
printf '  E exec over the system bus   p50 %8.1f ms   p99 %8.1f ms   E/B %.3f\n' "$e50" "$e99" "$ratio_e"
printf '  %d concurrent execs x %d rounds: %.1f execs/s, latency p50 %.1f ms p99 %.1f ms (p99/p50 %.2f)\n' \
  "$C" "$R" "$persec" "$c50" "$c99" "$cr"
echo "BENCH p50_ms_run $a50"
echo "BENCH p99_ms_run $a99"
echo "BENCH p50_ms_exec $b50"
echo "BENCH p99_ms_exec $b99"
echo "BENCH ratio_exec_vs_run $ratio"
echo "BENCH p50_ms_run_wait_cleanup $w50"
echo "BENCH p99_ms_run_wait_cleanup $w99"
echo "BENCH ratio_exec_vs_run_wait_cleanup $ratio_w"
echo "BENCH p50_ms_exec_system_bus $e50"
echo "BENCH p99_ms_exec_system_bus $e99"
echo "BENCH ratio_exec_system_bus_vs_socket $ratio_e"
echo "BENCH concurrent_execs_per_sec $persec"
echo "BENCH concurrent_p99_over_p50 $cr"
