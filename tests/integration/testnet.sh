# tests/integration/testnet.sh - a test network inside the testbed, for the egress tests
# (test-55-egress.sh) and bench/egress-run.sh. Sourced (bash), as root, with systemd as PID 1.
# shellcheck shell=bash
#
# What testnet_up builds (and testnet_down removes, whatever testnet_up got to):
#   network namespace sbxt-net, veth pair sbxt-h0 (host) <-> sbxt-n0 (namespace)
#     host side       203.0.113.1/24
#     namespace side  203.0.113.10/24 (the "public" test server), 203.0.113.53/32 (its DNS server),
#                     198.51.100.10/32 (a second public server), 10.213.0.2/32 (a private one)
#   host routes to 198.51.100.10 and 10.213.0.2 via 203.0.113.10; a default route via 203.0.113.10
#   only if the host has none (the VM testbed has no network device at all; a default route keeps the
#   host's own view of "the internet" like a real machine's)
#   in the namespace: TCP listeners on every address, ports 443 8443 22 80 5353, answering "hello";
#   a UDP echo on 5353; dnsmasq on 203.0.113.53:53 with the names below (TTL 2 s unless said)
# Only documentation ranges and one private /32 are used, all of them inside namespaces the test made.
#
#   testnet_up            0 when everything answers (a control probe from the host), else 1 with a
#                         reason in TN_ERROR
#   testnet_down          removes all of it (idempotent)
#   testnet_sbxd_upstream points sbxd's resolver at the test DNS server (a runtime drop-in, sbxd restarted)
#   testnet_sbxd_restore  removes that drop-in and restarts sbxd
#   TN_PY                 a probe program (python3 -c "$TN_PY" CMD...), usable inside runs: see below

TN_NS=sbxt-net
TN_HIF=sbxt-h0 TN_NIF=sbxt-n0
TN_HOST=203.0.113.1 TN_SRV=203.0.113.10 TN_DNS=203.0.113.53 TN_SRV2=198.51.100.10 TN_PRIV=10.213.0.2
TN_PORTS="443 8443 22 80 5353"
TN_LIFETIME=${TN_LIFETIME:-1500}   # seconds the listeners and dnsmasq live at most
TN_DIR=""
TN_ERROR=""
TN_DROPIN=/run/systemd/system/sbxd.service.d/50-sbxt-dns.conf
# the names the test DNS server knows (anything else: REFUSED, it has no upstream)
TN_DNSMASQ_NAMES=(
  "--host-record=allowed.test,$TN_SRV"          # TTL: --local-ttl (2 s)
  "--cname=alias.test,allowed.test"             # alias.test CNAME allowed.test
  "--host-record=long.test,$TN_SRV,300"         # a long TTL (concurrent runs)
  "--address=/rebind.test/$TN_PRIV"             # a public name with a private address (DNS rebinding)
  "--address=/wild.test/$TN_SRV"                # wild.test and every name below it
  "--address=/evil.test/$TN_SRV"                # answered here: a REFUSED for it can only come from sbx
  "--address=/pypi.org/$TN_SRV"                 # one of the coding profile's registries
  "--host-record=other.test,$TN_SRV2"
)

_tn_had_default="" _tn_had_netns_dir=""

testnet_up() {
  local i ok
  TN_ERROR=""
  testnet_down
  TN_DIR=$(mktemp -d /run/sbxt-net.XXXXXX)
  _tn_had_netns_dir=$([ -e /run/netns ] && echo yes)
  if ! { ip netns add $TN_NS &&
         ip link add $TN_HIF type veth peer name $TN_NIF &&
         ip link set $TN_NIF netns $TN_NS &&
         ip addr add $TN_HOST/24 dev $TN_HIF && ip link set $TN_HIF up &&
         ip -n $TN_NS link set lo up &&
         ip -n $TN_NS addr add $TN_SRV/24 dev $TN_NIF &&
         ip -n $TN_NS addr add $TN_DNS/32 dev $TN_NIF &&
         ip -n $TN_NS addr add $TN_SRV2/32 dev $TN_NIF &&
         ip -n $TN_NS addr add $TN_PRIV/32 dev $TN_NIF &&
         ip -n $TN_NS link set $TN_NIF up &&
         ip route add $TN_SRV2/32 via $TN_SRV dev $TN_HIF &&
         ip route add $TN_PRIV/32 via $TN_SRV dev $TN_HIF; } > "$TN_DIR/setup.log" 2>&1; then
    TN_ERROR="network setup failed: $(tr '\n' ' ' < "$TN_DIR/setup.log")"; return 1
  fi
  # the host's default route: ours only if there is none
  if [ -z "$(ip route show default)" ]; then
    ip route add default via $TN_SRV dev $TN_HIF || { TN_ERROR="cannot add a default route"; return 1; }
    _tn_had_default=no
  else
    _tn_had_default=yes
  fi
  # servers: TCP "hello" on every address, UDP echo on 5353
  cat > "$TN_DIR/servers.py" <<'EOF'
import socket, sys, threading, time
def tcp(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(64)
    while True:
        c, _ = s.accept()
        try: c.sendall(b"hello\n")
        except OSError: pass
        c.close()
def udp(addr, port):   # one socket per address: a reply comes from the address asked
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((addr, port))
    while True:
        d, a = s.recvfrom(2048); s.sendto(b"echo " + d, a)
for p in sys.argv[2:]:
    threading.Thread(target=tcp, args=(int(p),), daemon=True).start()
for a in ("203.0.113.10", "198.51.100.10", "10.213.0.2"):
    threading.Thread(target=udp, args=(a, 5353), daemon=True).start()
time.sleep(int(sys.argv[1]))
EOF
  ip netns exec $TN_NS timeout -k 5 "$TN_LIFETIME" /usr/bin/python3 "$TN_DIR/servers.py" "$TN_LIFETIME" $TN_PORTS \
    > "$TN_DIR/servers.log" 2>&1 &
  echo $! > "$TN_DIR/servers.pid"
  ip netns exec $TN_NS timeout -k 5 "$TN_LIFETIME" dnsmasq --keep-in-foreground --log-facility=- --log-queries \
    --no-resolv --no-hosts --conf-file=/dev/null --bind-interfaces --listen-address=$TN_DNS \
    --user=root --group=root --pid-file= --local-ttl=2 "${TN_DNSMASQ_NAMES[@]}" \
    > "$TN_DIR/dnsmasq.log" 2>&1 &
  echo $! > "$TN_DIR/dnsmasq.pid"
  # control probe from the host: every listener and the DNS server answer (TCG: python is slow to start)
  ok=0
  for i in $(seq 150); do
    if [ "$(ip netns exec $TN_NS ss -Htln 2>/dev/null | grep -c ':\(443\|8443\|22\|80\|5353\) ')" -ge 5 ] &&
       ip netns exec $TN_NS ss -Huln 2>/dev/null | grep -q "$TN_DNS:53 " &&
       [ "$(ip netns exec $TN_NS ss -Huln 2>/dev/null | grep -c ':5353 ')" -ge 3 ]; then ok=1; break; fi
    sleep 0.2
  done
  [ "$ok" = 1 ] || { TN_ERROR="listeners did not come up: $(cat "$TN_DIR/servers.log" "$TN_DIR/dnsmasq.log" | tail -n 5 | tr '\n' ' ')"; return 1; }
  local out
  out=$(/usr/bin/python3 -c "$TN_PY" tcp:$TN_SRV:443 tcp:$TN_SRV2:80 tcp:$TN_PRIV:22 udp:$TN_SRV:5353 \
        dns:$TN_DNS:allowed.test dns:$TN_DNS:alias.test 2>&1)
  case $out in
    *"tcp $TN_SRV:443 OK hello"*"tcp $TN_SRV2:80 OK hello"*"tcp $TN_PRIV:22 OK hello"*"udp $TN_SRV:5353 OK echo"*"dns allowed.test NOERROR $TN_SRV"*"dns alias.test NOERROR $TN_SRV"*) ;;
    *) TN_ERROR="control probe from the host failed: $(printf '%s' "$out" | tr '\n' ' ')"; return 1 ;;
  esac
  return 0
}

testnet_down() {
  local f
  if [ -n "$TN_DIR" ] && [ -d "$TN_DIR" ]; then
    for f in "$TN_DIR"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  fi
  [ "$_tn_had_default" = no ] && ip route del default via $TN_SRV dev $TN_HIF 2>/dev/null
  _tn_had_default=""
  ip route del $TN_SRV2/32 2>/dev/null; ip route del $TN_PRIV/32 2>/dev/null
  ip link del $TN_HIF 2>/dev/null
  ip netns pids $TN_NS 2>/dev/null | while read -r p; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  ip netns del $TN_NS 2>/dev/null
  # ip makes /run/netns (a bind mount of itself) for the first namespace: if it was ours, it goes too
  if [ -n "$TN_DIR" ] && [ -z "$_tn_had_netns_dir" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    umount /run/netns 2>/dev/null; rmdir /run/netns 2>/dev/null
  fi
  [ -n "$TN_DIR" ] && rm -rf "$TN_DIR"
  TN_DIR=""
  return 0
}

# sbxd forwards allowed names to the test DNS server instead of /etc/resolv.conf's
testnet_sbxd_upstream() {
  mkdir -p "${TN_DROPIN%/*}"
  printf '[Service]\nEnvironment=SBX_DNS_UPSTREAM=%s:53\n' "$TN_DNS" > "$TN_DROPIN"
  systemctl daemon-reload && systemctl restart sbxd.service
}
testnet_sbxd_restore() {
  [ -e "$TN_DROPIN" ] || return 0
  rm -f "$TN_DROPIN"; rmdir "${TN_DROPIN%/*}" 2>/dev/null
  systemctl daemon-reload; systemctl try-restart sbxd.service
  return 0
}

# The probe: python3 -c "$TN_PY" CMD... runs each CMD in order, one line each:
#   tcp:ADDR:PORT        connect (3 s timeout), read the greeting: "tcp A:P OK hello MS" | "tcp A:P ERR ERRNO MS"
#   udp:ADDR:PORT        sendto, wait 2 s for the echo: "udp A:P OK echo ping MS" | "udp A:P ERR ERRNO MS"
#   cudp:ADDR:PORT       the same through a connected UDP socket (connect, then send)
#   cudpto:ADDR:PORT/ADDR2:PORT2   a UDP socket connected to the first, then sendto() the second
#   resolve:NAME         getaddrinfo (IPv4): "resolve N OK A,B" | "resolve N ERR EAI_..."
#   dns:SERVER:NAME[:tcp]  a raw DNS query (type A) to SERVER:53: "dns N RCODE A,B from S:P" | "dns N ERR ..."
#   unix:PATH            connect to a unix socket (@NAME: abstract): "unix P OK" | "unix P ERR ERRNO MS"
#   sleep:SECONDS        wait:PATH (until PATH exists, max 60 s)   touch:PATH   say:TEXT
# ADDR may be any form the C library accepts (2852039166, 0xa9fea9fe, ...) or an IPv6 address in [].
# ERRNO is the errno name (EPERM, ECONNREFUSED...) or TIMEOUT; MS the milliseconds the call took.
# shellcheck disable=SC2016
TN_PY='
import errno, os, random, socket, struct, sys, time
EAI = {getattr(socket, n): n for n in dir(socket) if n.startswith("EAI_")}
def en(e):
    if isinstance(e, socket.timeout): return "TIMEOUT"
    if isinstance(e, socket.gaierror): return EAI.get(e.errno, "EAI_%d" % e.errno)
    return errno.errorcode.get(e.errno, str(e.errno))
def split(a):
    host, port = a.rsplit(":", 1)
    host = host.strip("[]")
    return (socket.AF_INET6 if ":" in host else socket.AF_INET), host, int(port)
def ms(t0): return "%d" % ((time.monotonic() - t0) * 1000)
def query(name):
    q = struct.pack(">HHHHHH", random.randint(0, 65535), 0x0100, 1, 0, 0, 0)
    for l in name.split("."): q += bytes([len(l)]) + l.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
def parse(r):
    flags, qd, an = struct.unpack(">HHH", r[2:8])
    i = 12
    for _ in range(qd):
        while r[i]: i += r[i] + 1
        i += 5
    out = []
    for _ in range(an):
        if r[i] & 0xc0 == 0xc0: i += 2
        else:
            while r[i]: i += r[i] + 1
            i += 1
        t, c, ttl, n = struct.unpack(">HHIH", r[i:i + 10]); i += 10
        if t == 1: out.append(socket.inet_ntoa(r[i:i + 4]))
        i += n
    return RCODES.get(flags & 0xf, str(flags & 0xf)), out
for cmd in sys.argv[1:]:
    kind, _, arg = cmd.partition(":")
    t0 = time.monotonic()
    try:
        if kind == "tcp":
            fam, h, p = split(arg)
            s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3)
            t0 = time.monotonic()
            try: s.connect((h, p))
            except OSError as e: print("tcp", arg, "ERR", en(e), ms(t0)); continue
            t1 = ms(t0)
            try: g = s.recv(64).decode(errors="replace").strip()
            except OSError as e: g = "(no greeting: %s)" % en(e)
            print("tcp", arg, "OK", g, t1); s.close()
        elif kind in ("udp", "cudp"):
            fam, h, p = split(arg)
            s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(2)
            t0 = time.monotonic()
            try:
                if kind == "cudp": s.connect((h, p)); s.send(b"ping")
                else: s.sendto(b"ping", (h, p))
            except OSError as e: print(kind, arg, "ERR", en(e), ms(t0)); continue
            t1 = ms(t0)
            try: print(kind, arg, "OK", s.recv(2048).decode(errors="replace"), t1)
            except OSError as e: print(kind, arg, "SENT-NO-REPLY", en(e), t1)
        elif kind == "cudpto":
            a, b = arg.split("/")
            fam, h, p = split(a); fam2, h2, p2 = split(b)
            s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(2)
            try: s.connect((h, p))
            except OSError as e: print(kind, arg, "ERR connect", en(e)); continue
            t0 = time.monotonic()
            try: s.sendto(b"ping", (h2, p2)); print(kind, arg, "SENT", ms(t0))
            except OSError as e: print(kind, arg, "ERR", en(e), ms(t0))
        elif kind == "resolve":
            try:
                ai = socket.getaddrinfo(arg, 80, socket.AF_INET, socket.SOCK_STREAM)
                print("resolve", arg, "OK", ",".join(sorted({a[4][0] for a in ai})))
            except socket.gaierror as e: print("resolve", arg, "ERR", en(e))
        elif kind == "dns":
            parts = arg.split(":")
            server, name, tcp = parts[0], parts[1], len(parts) > 2 and parts[2] == "tcp"
            q = query(name)
            if tcp:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(3)
                s.connect((server, 53)); s.sendall(struct.pack(">H", len(q)) + q)
                n = struct.unpack(">H", s.recv(2))[0]; r = b""
                while len(r) < n:
                    c = s.recv(n - len(r))
                    if not c: break
                    r += c
                frm = s.getpeername()
            else:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
                s.sendto(q, (server, 53)); r, frm = s.recvfrom(4096)
            rc, addrs = parse(r)
            print("dns", name, rc, ",".join(addrs) or "-", "from %s:%d" % frm[:2], "tcp" if tcp else "udp")
        elif kind == "unix":
            s = socket.socket(socket.AF_UNIX)
            try: s.connect("\0" + arg[1:] if arg.startswith("@") else arg); print("unix", arg, "OK")
            except OSError as e: print("unix", arg, "ERR", en(e), ms(t0))
        elif kind == "sleep": time.sleep(float(arg))
        elif kind == "wait":
            for _ in range(600):
                if os.path.exists(arg): break
                time.sleep(0.1)
            else: print("wait", arg, "TIMEOUT")
        elif kind == "touch": open(arg, "w").close()
        elif kind == "say": print(arg)
        else: print("unknown command", cmd)
    except OSError as e:
        print(kind, arg, "ERR", en(e), ms(t0))
    sys.stdout.flush()
'
