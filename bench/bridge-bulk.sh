#!/usr/bin/env bash
# bench/bridge-bulk.sh - bulk TCP from a run's network namespace, through the user-mode bridge that
# connects it, against the same transfer without one; on the machine itself (no systemd, no VM).
#
# bench/egress-run.sh measures whole runs in the systemd testbed; under software emulation its bulk
# figure says more about the emulator than about the bridge, whose cost is user-space copying. This
# script needs root, ip(8), python3 and slirp4netns (pasta too, for its column), and builds
# everything in namespaces of its own, removed at exit:
#   sbxb-up    plays the host: 203.0.113.1/24 on a veth to sbxb-srv, default route through it
#   sbxb-srv   the test host: 203.0.113.10, a sink that reads and discards
#   sbxb-slirp a run's namespace, connected by slirp4netns with the flags of sbx's network unit
#   sbxb-pasta the same, connected by pasta with the flags sbx used before (column left out if pasta
#              is not installed)
# Both bridges run in sbxb-up. ROUNDS rounds, each one transfer of M MiB per path, alternating;
# median MiB/s, the ratio bridge/host (target >= 0.9) and the transfers that failed (a reset or a
# stall of 20 s), which the median leaves out.
#   bench/bridge-bulk.sh [M [ROUNDS]]    (defaults 512 and 5)
set -uo pipefail
M=${1:-512}
ROUNDS=${2:-5}
export LC_ALL=C
[ "$(id -u)" = 0 ] || { echo "bench: must run as root" >&2; exit 2; }
for c in ip slirp4netns python3 bc; do command -v $c >/dev/null || { echo "bench: $c is not installed" >&2; exit 2; }; done
HAVE_PASTA=$(command -v pasta >/dev/null && echo yes)

UP=sbxb-up SRV=sbxb-srv
NSS="$UP $SRV sbxb-slirp${HAVE_PASTA:+ sbxb-pasta}"
DIR=$(mktemp -d /tmp/sbxb.XXXXXX)
cleanup() {
  [ -n "${sink_pid:-}" ] && kill "$sink_pid" 2>/dev/null
  for f in "$DIR"/*.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  for n in $NSS; do ip netns del "$n" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{ for n in $NSS; do ip netns add "$n" || exit 1; done
  ip -n $UP link add sbxb0 type veth peer name sbxb1 netns $SRV &&
  ip -n $UP link set lo up && ip -n $SRV link set lo up &&
  ip -n $UP addr add 203.0.113.1/24 dev sbxb0 && ip -n $UP link set sbxb0 up &&
  ip -n $SRV addr add 203.0.113.10/24 dev sbxb1 && ip -n $SRV link set sbxb1 up &&
  ip -n $UP route add default via 203.0.113.10; } > "$DIR/setup.log" 2>&1 ||
  { echo "bench: namespace setup failed: $(tr '\n' ' ' < "$DIR/setup.log")" >&2; exit 1; }

# slirp4netns: the network unit's command line (src/plan/policy.c), waiting for its ready byte as
# sbx-exec --netns=serve does
mkfifo "$DIR/ready"
ip netns exec $UP slirp4netns --configure --mtu=65520 --disable-host-loopback --disable-dns --enable-ipv6 \
  --enable-sandbox --enable-seccomp --ready-fd=3 --netns-type=path /run/netns/sbxb-slirp tap0 \
  3> "$DIR/ready" > "$DIR/slirp.log" 2>&1 &
echo $! > "$DIR/slirp.pid"
timeout 10 head -c1 "$DIR/ready" > /dev/null ||
  { echo "bench: slirp4netns did not get ready: $(tr '\n' ' ' < "$DIR/slirp.log")" >&2; exit 1; }
if [ -n "$HAVE_PASTA" ]; then
  ip netns exec $UP pasta --config-net --quiet --netns-only --runas 0:0 --no-map-gw --no-dhcp --no-dhcpv6 \
    --no-icmp -t none -u none -T none -U none --pid "$DIR/pasta.pid" --netns /run/netns/sbxb-pasta \
    > "$DIR/pasta.log" 2>&1 || { echo "bench: pasta failed: $(tr '\n' ' ' < "$DIR/pasta.log")" >&2; exit 1; }
fi

# shellcheck disable=SC2016
SINK='
import socket, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("203.0.113.10", 9009)); l.listen(8)
def drain(c):
    c.settimeout(60)
    try:
        while c.recv(1 << 20):
            pass
    except OSError:
        pass
    c.close()
while True:
    c, _ = l.accept()
    threading.Thread(target=drain, args=(c,), daemon=True).start()
'
# prints MiB/s, or "fail:REASON:MiB-sent"
# shellcheck disable=SC2016
SEND='
import socket, sys, time
n = int(sys.argv[1]) << 20
buf = b"x" * (1 << 20)
sent = 0
try:
    s = socket.create_connection(("203.0.113.10", 9009), timeout=20)
    t0 = time.perf_counter()
    while sent < n:
        sent += s.send(buf)
    s.shutdown(socket.SHUT_WR); s.recv(1); s.close()
    print("%.1f" % (sent / (1 << 20) / (time.perf_counter() - t0)))
except OSError as e:
    print("fail:%s:%d" % (type(e).__name__, sent >> 20))
'
ip netns exec $SRV python3 -c "$SINK" & sink_pid=$!
sleep 0.5
median() { [ $# -gt 0 ] || { echo 0; return; }; printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
PATHS="host slirp${HAVE_PASTA:+ pasta}"
declare -A OK FAIL
for _ in $(seq "$ROUNDS"); do
  for p in $PATHS; do
    case $p in host) ns=$UP ;; *) ns=sbxb-$p ;; esac
    v=$(ip netns exec "$ns" python3 -c "$SEND" "$M")
    case $v in fail:*) FAIL[$p]="${FAIL[$p]:-}${FAIL[$p]:+ }${v#fail:}" ;; *) OK[$p]="${OK[$p]:-} $v" ;; esac
  done
done
# shellcheck disable=SC2086
mH=$(median ${OK[host]:-})
[ "$mH" != 0 ] || { echo "bench: every transfer from the host namespace failed: ${FAIL[host]:-}" >&2; exit 1; }
echo "bulk TCP through a run's bridge (kernel $(uname -r), $(nproc) CPUs; $ROUNDS rounds of $M MiB per path, median of those that completed)"
for p in $PATHS; do
  # shellcheck disable=SC2086
  m=$(median ${OK[$p]:-}); r=$(echo "scale=3; $m / $mH" | bc)
  case $p in
    host) label="host namespace -> test host" ;;
    slirp) label="slirp4netns (sbx) -> test host" ;;
    pasta) label="pasta (before) -> test host" ;;
  esac
  printf '  %-32s %8.1f MiB/s  ratio %.3f  failed %d  (each:%s%s)\n' "$label" "$m" "$r" \
    "$(wc -w <<< "${FAIL[$p]:-}")" "${OK[$p]:-}" "${FAIL[$p]:+; failed type:MiB ${FAIL[$p]}}"
  echo "BENCH bulk_mibs_$p $m" >> "$DIR/bench"
  echo "BENCH bulk_failed_$p $(wc -w <<< "${FAIL[$p]:-}")" >> "$DIR/bench"
  [ $p = host ] || echo "BENCH ratio_bulk_${p}_vs_host $r" >> "$DIR/bench"
done
echo "  target: slirp4netns/host >= 0.9, no failed transfer"
cat "$DIR/bench"
