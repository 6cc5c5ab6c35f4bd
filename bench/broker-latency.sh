#!/usr/bin/env bash
# bench/broker-latency.sh - the latency the credential broker adds to a request: the same HTTPS GET made
# directly from the host and through the broker from inside a run, side by side in one process.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. It starts an HTTPS
# server on 127.0.0.1 (a test CA of its own, /etc/sbx/broker.conf pointing the broker at it, restored
# at the end), stores a secret "sbxbench" and adds a profile with one grant for it. Then, R rounds of:
#   D  N GETs from the host, each a new TLS connection (as a client that makes one request per process,
#      like sbx-fetch, would without the broker)
#   K  N GETs from the host over one TLS connection kept open (HTTP/1.1 keep-alive)
#   B  N GETs through the broker from one run (one request per broker connection, as sbx-fetch does;
#      the broker keeps its connection to the server open for the run's tenant)
# all timed by the same Python loop, and reports p50 and p99 of each, the added median latency over the
# kept connection B - K (what the broker itself adds: target under 2 ms on loopback), B - D, and the
# ratios. Prints one "BENCH key value" line per figure.
#   bench/broker-latency.sh [N [R]]     (defaults 50, 3)
# SBX_BENCH_CALLER=unit: B's loop runs in a transient unit started by systemd-run where a run's unit
# would be (sbx.slice/sbx-PROFILE.slice/sbx-PROFILE-ID.service: the generator's drop-in gives it the
# profile's hardening), with the grant file sbxd would write, instead of an sbx run: for a testbed where
# runs cannot start (nspawn: no memory controller, every run is refused). The broker's side
# (identification, checks, the request) is the same.
set -uo pipefail
N=${1:-50}
R=${2:-3}
export LC_ALL=C SYSTEMD_COLORS=0

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
command -v openssl >/dev/null || { echo "bench: openssl is not installed (scripts/install-deps.sh)" >&2; exit 2; }

D=$(mktemp -d /run/sbxbench-broker.XXXXXX)
chmod 0755 "$D"
RUNPROF=/run/sbx/profiles.d
PROF=sbxbench_broker
BCONF=/etc/sbx/broker.conf
PORT=18443
SRVPID=""
[ -d /etc/sbx ] || MADE_ETC=1
[ -e "$BCONF" ] && cp "$BCONF" "$D/broker.conf.saved"
cleanup() {
  [ -n "$SRVPID" ] && kill "$SRVPID" 2>/dev/null
  sbxctl secret rm sbxbench >/dev/null 2>&1
  if [ -e "$D/broker.conf.saved" ]; then cp "$D/broker.conf.saved" "$BCONF"; else rm -f "$BCONF"; fi
  [ "${MADE_ETC:-0}" = 1 ] && rmdir /etc/sbx 2>/dev/null
  rm -f "$RUNPROF/$PROF.json"
  rmdir "$RUNPROF" 2>/dev/null
  systemctl stop sbx-broker.service 2>/dev/null
  rm -rf "$D"
  systemctl daemon-reload
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$D/key.pem" -out "$D/cert.pem" >/dev/null 2>&1 || { echo "bench: openssl failed" >&2; exit 1; }
python3 - "$D" "$PORT" > "$D/server.out" 2>&1 <<'EOF' & SRVPID=$!
import ssl, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
d, port = sys.argv[1], int(sys.argv[2])
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as HTTPS servers set it on kept connections: the headers and the body are two writes,
    # and with Nagle the second waits for the client to acknowledge the first, which it delays (40 ms
    # on Linux) on a connection past its first packets; a new connection each is not held up
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
    def do_GET(self):
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = ThreadingHTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.serve_forever()
EOF

mkdir -p /etc/sbx "$RUNPROF"
printf 'ca_file=%s\n' "$D/cert.pem" > "$BCONF"
cat > "$RUNPROF/$PROF.json" <<EOF
{
  "version": 1,
  "description": "bench: one broker grant",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "10min" },
  "credentials": { "grants": { "bench": { "credential": "sbxbench", "methods": [ "GET" ],
                                          "url_prefix": "https://127.0.0.1:$PORT/" } } }
}
EOF
systemctl daemon-reload
systemctl stop sbx-broker.service 2>/dev/null
systemctl start sbx-broker.socket || { echo "bench: cannot start sbx-broker.socket" >&2; exit 1; }
printf 'bench-secret' | sbxctl secret add --replace sbxbench || { echo "bench: secret add failed" >&2; exit 1; }

# one loop for both: MODE direct (TLS from here) or broker (the protocol over $SBX_BROKER); prints one
# latency in microseconds per line
LOOP='
import json, os, socket, ssl, sys, time
mode, n, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
url = "https://127.0.0.1:%d/x" % port
if mode in ("direct", "kept"):
    ctx = ssl.create_default_context(cafile=sys.argv[4])
if mode == "kept":
    import http.client
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
def once():
    if mode == "kept":
        conn.request("GET", "/x", headers={"Authorization": "Bearer bench-secret"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
    elif mode == "direct":
        with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer bench-secret\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                k = s.recv(65536)
                if not k:
                    break
                data += k
            assert b" 200 " in data.split(b"\r\n", 1)[0], data[:80]
    else:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(os.environ["SBX_BROKER"])
            s.sendall((json.dumps({"grant": "bench", "method": "GET", "url": url}) + "\n").encode())
            data = b""
            while True:
                k = s.recv(65536)
                if not k:
                    break
                data += k
            head = json.loads(data.split(b"\n", 1)[0])
            assert head.get("status") == 200, head
once()  # warm-up
for _ in range(n):
    t = time.perf_counter_ns()
    once()
    print((time.perf_counter_ns() - t) // 1000)
'
: > "$D/direct.us"; : > "$D/kept.us"; : > "$D/broker.us"
for r in $(seq "$R"); do
  python3 -c "$LOOP" direct "$N" "$PORT" "$D/cert.pem" >> "$D/direct.us" || { echo "bench: the direct loop failed" >&2; exit 1; }
  python3 -c "$LOOP" kept "$N" "$PORT" "$D/cert.pem" >> "$D/kept.us" || { echo "bench: the kept loop failed" >&2; exit 1; }
  if [ "${SBX_BENCH_CALLER:-run}" = unit ]; then
    id=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    tenant=$(sbxctl secret list --json >/dev/null && ls /var/lib/sbx/secrets/*/sbxbench.cred | head -n 1 | xargs dirname | xargs basename)
    mkdir -p /run/sbx/grants
    printf '{"run":"%s","tenant":"%s","cgroup":"/sbx.slice/sbx-%s.slice/sbx-%s-%s.service","grants":{"bench":{"credential":"sbxbench","methods":["GET"],"url_prefix":"https://127.0.0.1:%s/","header":"Authorization","value_prefix":"Bearer ","max_body":1048576}}}' \
      "$id" "$tenant" $PROF $PROF "$id" "$PORT" > "/run/sbx/grants/$id.json"
    chmod 0600 "/run/sbx/grants/$id.json"
    # (the generator's drop-in for the profile's units applies to it too: the profile's hardening, /run
    # empty; the broker's directory is bound in as for a run)
    systemd-run --quiet --wait --pipe --unit "sbx-$PROF-$id.service" --slice "sbx-$PROF.slice" \
      -p BindReadOnlyPaths=/run/sbx/broker -E SBX_BROKER=/run/sbx/broker/socket \
      python3 -c "$LOOP" broker "$N" "$PORT" >> "$D/broker.us"
    rc=$?
    rm -f "/run/sbx/grants/$id.json" "/run/sbx/grants/$id.ops"
    [ "$rc" = 0 ] || { echo "bench: the brokered loop failed" >&2; exit 1; }
  else
    sbxctl run --quiet -p $PROF -- python3 -c "$LOOP" broker "$N" "$PORT" >> "$D/broker.us" ||
      { echo "bench: the brokered loop failed" >&2; exit 1; }
  fi
done

pct() {   # FILE PERCENT: the value at that percentile (nearest rank), in microseconds
  sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; print v[i] }'
}
d50=$(pct "$D/direct.us" 50) d99=$(pct "$D/direct.us" 99)
k50=$(pct "$D/kept.us" 50) k99=$(pct "$D/kept.us" 99)
b50=$(pct "$D/broker.us" 50) b99=$(pct "$D/broker.us" 99)
n_d=$(wc -l < "$D/direct.us") n_k=$(wc -l < "$D/kept.us") n_b=$(wc -l < "$D/broker.us")
added=$((b50 - k50)) added_new=$((b50 - d50))
ratio=$(echo "scale=2; $b50 / $k50" | bc)
ratio_new=$(echo "scale=2; $b50 / $d50" | bc)
ms() { echo "scale=3; $1 / 1000" | bc; }
printf 'direct   (host, new TLS connection each):  %5d requests, p50 %6.2f ms, p99 %6.2f ms\n' "$n_d" "$(ms "$d50")" "$(ms "$d99")"
printf 'direct   (host, one TLS connection kept):  %5d requests, p50 %6.2f ms, p99 %6.2f ms\n' "$n_k" "$(ms "$k50")" "$(ms "$k99")"
printf 'brokered (run -> sbx-broker -> server):    %5d requests, p50 %6.2f ms, p99 %6.2f ms\n' "$n_b" "$(ms "$b50")" "$(ms "$b99")"
printf 'added median latency over the kept connection: %.2f ms (target < 2 ms), brokered/kept %sx\n' "$(ms "$added")" "$ratio"
printf 'over a new connection each: %.2f ms, brokered/direct %sx\n' "$(ms "$added_new")" "$ratio_new"
echo "BENCH direct_p50_us $d50"
echo "BENCH direct_p99_us $d99"
echo "BENCH kept_p50_us $k50"
echo "BENCH kept_p99_us $k99"
echo "BENCH broker_p50_us $b50"
echo "BENCH broker_p99_us $b99"
echo "BENCH broker_added_p50_us $added"
echo "BENCH broker_ratio $ratio"
echo "BENCH broker_added_new_p50_us $added_new"
echo "BENCH broker_ratio_new $ratio_new"
