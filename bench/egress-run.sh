#!/usr/bin/env bash
# bench/egress-run.sh - what per-destination egress costs a run, measured side by side in one process.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed, on the test network
# of tests/integration/testnet.sh (made here, removed at exit; sbxd's resolver is pointed at its DNS
# server for the time of the benchmark). Two figures:
#   1. run start-up: interleaved, N times, cold runs of
#        A  sbxctl run --profile browser --network none -- /bin/true   (own namespace with lo only)
#        B  sbxctl run --profile browser -- /bin/true                  (network unit, slirp4netns, resolver,
#                                                                       egress map entries)
#      medians and the ratio B/A (target <= 1.2)
#   2. DNS: Q queries (type A, a new name each, so nothing is answered from a cache) to the test DNS
#      server, sent from the host straight to it, and from inside a browser run, where sbx redirects
#      them to the run's resolver, which forwards them; rounds alternate; the median added latency
#      (target < 1 ms)
#   3. bulk TCP: M MiB sent to a sink on the test host, from the host and from inside a browser run
#      (through its namespace and slirp4netns), alternating, ROUNDS each; median MiB/s and the ratio
#      (target >= 0.9)
# Prints one "BENCH key value" line per figure for scripts.
#   bench/egress-run.sh [N [Q [M]]]      (defaults 20, 200 and 256)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included). The report says which.
set -uo pipefail
N=${1:-20}
Q=${2:-200}
M=${3:-256}
ROUNDS=3
export LC_ALL=C SYSTEMD_COLORS=0
REPO=$(cd "$(dirname "$0")/.." && pwd)

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench: must run as root" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
for c in slirp4netns dnsmasq; do command -v $c >/dev/null || { echo "bench: $c is not installed" >&2; exit 2; }; done
# shellcheck source=tests/integration/testnet.sh
. "$REPO/tests/integration/testnet.sh"

trap 'testnet_sbxd_restore; testnet_down' EXIT
trap 'exit 130' INT TERM
testnet_up || { echo "bench: test network: $TN_ERROR" >&2; exit 1; }
testnet_sbxd_upstream || { echo "bench: cannot point sbxd at the test DNS server" >&2; exit 1; }

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
run_a() { "${T[@]}" sbxctl run --profile browser --network none -- /bin/true < /dev/null; }
run_b() { "${T[@]}" sbxctl run --profile browser -- /bin/true < /dev/null; }

# ---- 1. run start-up
for f in run_a run_b; do $f || { echo "bench: $f failed" >&2; exit 1; }; done   # warm up both paths
rm -f "$TOOK_FILE"
A=() B=()
for _ in $(seq "$N"); do
  for f in run_a run_b; do
    stamp t0; $f || { echo "bench: $f failed" >&2; exit 1; }; stamp t1
    case $f in run_a) A+=("$(took "$t0" "$t1")") ;; run_b) B+=("$(took "$t0" "$t1")") ;; esac
  done
done
mA=$(median "${A[@]}"); mB=$(median "${B[@]}")
rBA=$(echo "scale=3; $mB / $mA" | bc)

# ---- 2. DNS latency: one line per query, its round trip in microseconds ("fail" if no NOERROR answer)
# shellcheck disable=SC2016
DNSLAT='
import random, socket, struct, sys, time
server, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
def q(name):
    tid = random.randint(0, 65535)
    p = struct.pack(">HHHHHH", tid, 0x0100, 1, 0, 0, 0)
    for l in name.split("."): p += bytes([len(l)]) + l.encode()
    return tid, p + b"\0" + struct.pack(">HH", 1, 1)
out = []
for i in range(count):
    tid, p = q("%s%d.wild.test" % (prefix, i))
    t0 = time.perf_counter_ns()
    try:
        s.sendto(p, (server, 53))
        while True:
            r = s.recv(4096)
            if struct.unpack(">H", r[:2])[0] == tid: break
        t1 = time.perf_counter_ns()
        out.append("%d" % ((t1 - t0) // 1000) if r[3] & 0xf == 0 and struct.unpack(">H", r[6:8])[0] > 0 else "fail")
    except OSError:
        out.append("fail")
print("\n".join(out))
'
H=() R=() HF=0 RF=0
for r in $(seq "$ROUNDS"); do
  tag=$RANDOM
  out=$(/usr/bin/python3 -c "$DNSLAT" "$TN_DNS" "$Q" "h$tag-$r-") || { echo "bench: host queries failed" >&2; exit 1; }
  mapfile -t -O "${#H[@]}" H < <(grep -E '^[0-9]+$' <<< "$out"); HF=$((HF + $(grep -c fail <<< "$out")))
  out=$(sbxctl run --profile browser -- /usr/bin/python3 -c "$DNSLAT" "$TN_DNS" "$Q" "r$tag-$r-" < /dev/null) ||
    { echo "bench: queries from a run failed: $out" >&2; exit 1; }
  mapfile -t -O "${#R[@]}" R < <(grep -E '^[0-9]+$' <<< "$out"); RF=$((RF + $(grep -c fail <<< "$out")))
done
[ "${#H[@]}" -gt 0 ] && [ "${#R[@]}" -gt 0 ] || { echo "bench: no DNS answers (host failed $HF, run failed $RF)" >&2; exit 1; }
mH=$(median "${H[@]}"); mR=$(median "${R[@]}")
added_ms=$(echo "scale=3; ($mR - $mH) / 1000" | bc)

# ---- 3. bulk TCP throughput: a sink in the test host's namespace, fed from the host and from a run
SINK_PORT=9009
# shellcheck disable=SC2016
SINK='
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2]))); l.listen(8); l.settimeout(600)
deadline = time.monotonic() + 900
while time.monotonic() < deadline:
    try:
        c, _ = l.accept()
    except OSError:
        break
    while c.recv(1 << 20):
        pass
    c.close()
'
# shellcheck disable=SC2016
SEND='
import socket, sys, time
n = int(sys.argv[3]) << 20
buf = b"x" * (1 << 20)
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
t0 = time.perf_counter()
sent = 0
while sent < n:
    sent += s.send(buf)
s.shutdown(socket.SHUT_WR); s.recv(1); s.close()
print("%.1f" % (sent / (1 << 20) / (time.perf_counter() - t0)))
'
ip netns exec "$TN_NS" /usr/bin/python3 -c "$SINK" "$TN_SRV" "$SINK_PORT" & sink_pid=$!
trap 'kill "$sink_pid" 2>/dev/null; testnet_sbxd_restore; testnet_down' EXIT
sleep 0.5
TH=() TR=()
for _ in $(seq "$ROUNDS"); do
  v=$(/usr/bin/python3 -c "$SEND" "$TN_SRV" "$SINK_PORT" "$M") || { echo "bench: bulk from the host failed" >&2; exit 1; }
  TH+=("$v")
  v=$(sbxctl run --profile browser -- /usr/bin/python3 -c "$SEND" "$TN_SRV" "$SINK_PORT" "$M" < /dev/null) ||
    { echo "bench: bulk from a run failed: $v" >&2; exit 1; }
  TR+=("$v")
done
kill "$sink_pid" 2>/dev/null
mTH=$(median "${TH[@]}"); mTR=$(median "${TR[@]}")
rT=$(echo "scale=3; $mTR / $mTH" | bc)

echo "sbx egress overhead (kernel $(uname -r), $(systemd-detect-virt --vm 2>/dev/null || echo no VM))"
echo "  run start-up, $N interleaved cold runs each, median wall time of /bin/true (clock: $CLOCK)"
printf '    A browser --network none          %9.1f ms\n' "$mA"
printf '    B browser (egress, own namespace) %9.1f ms   B/A %.3f (target <= 1.2)\n' "$mB" "$rBA"
echo "  DNS, $ROUNDS alternating rounds of $Q queries (a new name each), median round trip"
printf '    host -> test DNS server           %9.3f ms (%d failed)\n' "$(echo "scale=3; $mH / 1000" | bc)" "$HF"
printf '    run -> sbx resolver -> server      %9.3f ms (%d failed)   added %.3f ms (target < 1 ms)\n' \
  "$(echo "scale=3; $mR / 1000" | bc)" "$RF" "$added_ms"
echo "  bulk TCP, $ROUNDS alternating transfers of $M MiB to the test host, median"
printf '    host -> test host                 %9.1f MiB/s\n' "$mTH"
printf '    run (namespace, bridge) -> host   %9.1f MiB/s   run/host %.3f (target >= 0.9)\n' "$mTR" "$rT"
echo "BENCH median_ms_run_none $mA"
echo "BENCH median_ms_run_egress $mB"
echo "BENCH ratio_egress_vs_none $rBA"
echo "BENCH median_us_dns_host $mH"
echo "BENCH median_us_dns_run $mR"
echo "BENCH dns_added_ms $added_ms"
echo "BENCH dns_failed_host $HF"
echo "BENCH dns_failed_run $RF"
echo "BENCH bulk_mibs_host $mTH"
echo "BENCH bulk_mibs_run $mTR"
echo "BENCH ratio_bulk_run_vs_host $rT"
