#!/usr/bin/env bash
# bench/gvisor-tier.sh - what the gVisor tier costs: the same workloads under `process.isolation: "kernel"`
# and `"gvisor"`, side by side.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed and runsc present.
# Writes two profiles that are the shipped `untrusted` profile with only `process.isolation` different
# (K: "kernel", G: "gvisor"), and interleaves, N times each, for three workloads:
#   true    sbxctl run -p P -- /bin/true                         (a cold run: the tier's start-up)
#   tar     a tar of the workspace: 1,000 small files in 10 directories, made before (file system calls)
#   python  python3: a loop of 2,000,000 additions and an import of json (user-space work and imports)
# Each sample is the whole `sbxctl run` as its caller waits for it. Reports p50 and p99 per workload and
# tier and the ratios G/K, and removes its profiles and workspaces. One "BENCH key value" line per figure.
#   bench/gvisor-tier.sh [N]      (default 15)
# Times come from bench/lib.sh's stamp (bash's EPOCHREALTIME, no process started).
set -uo pipefail
N=${1:-15}
export LC_ALL=C SYSTEMD_COLORS=0 SBX_TESTBED_QUIET=1
RUNPROF=/run/sbx/profiles.d

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside a testbed" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
command -v runsc >/dev/null || { echo "bench: runsc is not installed (Debian's package runsc)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 2; }

D=$(mktemp -d /var/tmp/sbxbench-gv.XXXXXX)
cleanup() {
  rm -f "$RUNPROF/sbxbench_kernel.json" "$RUNPROF/sbxbench_gvisor.json"
  sbxctl profile reload >/dev/null 2>&1
  rm -rf "$D"
}
trap cleanup EXIT
mkdir -p "$RUNPROF"
SHIPPED=$(cat /usr/lib/sbx/profiles.d/untrusted.json 2>/dev/null) ||
  { echo "bench: cannot read the shipped profile 'untrusted' (/usr/lib/sbx/profiles.d/untrusted.json)" >&2; exit 1; }
for tier in kernel gvisor; do
  jq --arg t "$tier" '{version, description: ("sbx bench: untrusted with isolation " + $t), files, process, network, resources}
                      | .process.isolation = $t' <<< "$SHIPPED" > "$RUNPROF/sbxbench_$tier.json" ||
    { echo "bench: cannot write the profile for $tier" >&2; exit 1; }
done
sbxctl profile reload >/dev/null || { echo "bench: profile reload failed" >&2; exit 1; }
sbxctl profile show sbxbench_gvisor 2>/dev/null | grep -qi gvisor ||
  { echo "bench: the gvisor profile does not say gvisor" >&2; exit 1; }

for t in kernel gvisor; do
  for d in $(seq 10); do
    mkdir -p "$D/ws-$t/d$d"
    for f in $(seq 100); do echo "file $d.$f" > "$D/ws-$t/d$d/f$f"; done
  done
done
TAR='set -e; tar -cf /tmp/ws.tar .; test "$(tar -tf /tmp/ws.tar | grep -c /f)" = 1000'
PY='import json
t = 0
for i in range(2000000):
    t += i
assert t == 1999999000000
print(json.dumps(t))'

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
work() {   # TIER WORKLOAD
  local p=sbxbench_$1 ws=$D/ws-$1
  case $2 in
    true) sbxctl run -p "$p" -- /bin/true ;;
    tar) sbxctl run -p "$p" --workspace "$ws" -- sh -c "$TAR" ;;
    python) [ "$(sbxctl run -p "$p" -- python3 -c "$PY")" = 1999999000000 ] ;;
  esac < /dev/null > /dev/null
}
WORKLOADS="true tar python"
# one warm-up each (runsc's binary and Python's files into the page cache)
for w in $WORKLOADS; do for t in kernel gvisor; do work $t $w || { echo "bench: $w under $t failed" >&2; exit 1; }; done; done

declare -A S
for i in $(seq "$N"); do
  for w in $WORKLOADS; do
    for t in kernel gvisor; do
      stamp t0; work $t $w || { echo "bench: $w under $t failed (sample $i)" >&2; exit 1; }; stamp t1
      S[$t.$w]+="$(ms "$t0" "$t1") "
    done
  done
done
echo "the gVisor tier against the kernel tier: profile 'untrusted' with isolation kernel (K) and gvisor (G), $N interleaved samples each, wall time of sbxctl run (kernel $(uname -r), runsc $(runsc --version 2>/dev/null | sed -n 's/^runsc version //p' | head -n 1), $(systemd-detect-virt 2>/dev/null || echo none))"
printf '  %-8s %12s %12s %12s %12s %9s %9s\n' workload "K p50 ms" "G p50 ms" "K p99 ms" "G p99 ms" "G/K p50" "G/K p99"
for w in $WORKLOADS; do
  # shellcheck disable=SC2086
  { k50=$(pct 50 ${S[kernel.$w]}); g50=$(pct 50 ${S[gvisor.$w]}); k99=$(pct 99 ${S[kernel.$w]}); g99=$(pct 99 ${S[gvisor.$w]}); }
  r50=$(echo "scale=2; $g50 / $k50" | bc); r99=$(echo "scale=2; $g99 / $k99" | bc)
  printf '  %-8s %12.1f %12.1f %12.1f %12.1f %9.2f %9.2f\n' "$w" "$k50" "$g50" "$k99" "$g99" "$r50" "$r99"
  echo "BENCH p50_ms_${w}_kernel $k50"
  echo "BENCH p50_ms_${w}_gvisor $g50"
  echo "BENCH p99_ms_${w}_kernel $k99"
  echo "BENCH p99_ms_${w}_gvisor $g99"
  echo "BENCH ratio_p50_${w}_gvisor_vs_kernel $r50"
  echo "BENCH ratio_p99_${w}_gvisor_vs_kernel $r99"
done
