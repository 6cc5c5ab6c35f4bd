#!/usr/bin/env bash
# Per-destination egress of runs (BPF programs at sbx.slice, a network namespace of each run's own
# connected by slirp4netns, DNS through sbxd's resolver), attacked from inside the run: neighbouring ports
# and addresses, other protocols, names resolved elsewhere, DNS rebinding, encoded forms of the
# metadata address, raw sockets, the host's loopback and unix sockets, inbound connections, a killed
# sbxd, a concurrent run's allowances. Runs against a test network made here (testnet.sh).
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/testnet.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
RUNPROF=/run/sbx/profiles.d
SHARE=/srv/sbxt-egress          # the test profiles' one writable host directory (flags between run and test)
W=$(mktemp -d /var/tmp/sbxt-egress.XXXXXX); t_on_exit "rm -rf '$W'"
T0=$(date +%s)
HOST_NETNS=$(stat -L -c %i /proc/self/ns/net)

# ---- helpers ---------------------------------------------------------------------------------------------
# probe_line PREFIX [N]: the N-th (default 1st) line of T_OUT that starts with "PREFIX "
probe_line() { printf '%s\n' "$T_OUT" | awk -v p="$1 " -v n="${2:-1}" 'index($0, p) == 1 && ++k == n { print; exit }'; }
# assert_denied "KIND ADDR:PORT" [N]: that probe failed with EPERM, in under a second
assert_denied() {
  local l t; l=$(probe_line "$1" "${2:-1}")
  case $l in
    "$1 ERR EPERM "*) t=${l##* }; [ "$t" -lt 1000 ] 2>/dev/null || _t_err "$1: EPERM took $t ms (not at once)" ;;
    *) _t_err "$1${2:+ (#$2)}: expected EPERM at once, got '${l:-no such line}'" ;;
  esac
}
# assert_reached "KIND ADDR:PORT" [N] [REPLY]: that probe connected and got the server's reply
assert_reached() {
  local l; l=$(probe_line "$1" "${2:-1}")
  case $l in "$1 OK ${3:-hello}"*) ;; *) _t_err "$1${2:+ (#$2)}: expected '${3:-hello}', got '${l:-no such line}'" ;; esac
}
# assert_errno "KIND ADDR:PORT" ERRNO [N]
assert_errno() {
  local l; l=$(probe_line "$1" "${3:-1}")
  case $l in "$1 ERR $2 "*|"$1 ERR $2") ;; *) _t_err "$1: expected $2, got '${l:-no such line}'" ;; esac
}
# probe PROFILE CMD...: sbxctl run -p PROFILE -- python3 -c "$TN_PY" CMD... (sets T_OUT, T_RC, RUNID)
probe() {
  local p=$1; shift
  assert_rc 0 sbxctl run -p "$p" -- $PY -c "$TN_PY" "$@"
  RUNID=$(last_run_id)
}
add_profile() {   # NAME DESTINATIONS-JSON [FILES-JSON [ISOLATION]]
  local files=${3:-"{}"}
  mkdir -p "$RUNPROF"
  cat > "$RUNPROF/$1.json" <<EOF
{
  "version": 1,
  "description": "egress test profile $1",
  "files": $files,
  "process": { "isolation": "${4:-kernel}" },
  "network": { "mode": "allowlist", "destinations": $2 },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "5min" }
}
EOF
}
# the run's cgroup id (the inode of its cgroup directory), while it runs
run_cgroup_id() { stat -c %i "/sys/fs/cgroup$(systemctl show -P ControlGroup "$(record_get "$1" .unit)")" 2>/dev/null; }
# map_has_cgroup MAP CGID: the pinned map holds a key of that cgroup (bpftool's JSON; with or without BTF)
map_has_cgroup() {
  bpftool -j map dump pinned "/sys/fs/bpf/sbx/egress/$1" 2>/dev/null | $PY -c '
import json, sys
want = int(sys.argv[1]); n = 0
for e in json.load(sys.stdin):
    k = e.get("formatted", {}).get("key")
    if isinstance(k, dict) and "cgroup" in k:
        c = int(k["cgroup"])
    elif isinstance(k, int):          # the runs map: keyed by the cgroup id alone
        c = k
    else:
        raw = bytes(int(b, 16) for b in e["key"])
        c = int.from_bytes(raw[4:12] if len(raw) > 8 else raw[:8], "little")
    n += c == want
sys.exit(0 if n else 1)' "$2"
}
journal_values() {   # FIELD: values of FIELD in the journal since the test started
  journalctl -b --since "@$T0" -o json --no-pager 2>/dev/null | jq -r --arg f "$1" 'select(.[$f] != null) | .[$f]' 2>/dev/null
}
# wait_file PATH [TENTHS] [PID]: until PATH exists (default 60 s; gives up once PID, a run's client, is gone)
wait_file() {
  local i
  for i in $(seq "${2:-600}"); do
    [ -e "$1" ] && return 0
    [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && { sleep 0.5; [ -e "$1" ]; return; }
    sleep 0.1
  done
  return 1
}

# ---- the test network, sbxd's upstream, the test profiles ---------------------------------------------------
t_begin "setup: test network, dnsmasq as sbxd's upstream, test profiles"
for c in slirp4netns dnsmasq bpftool; do command -v $c >/dev/null || _t_err "$c is not installed (scripts/install-deps.sh)"; done
t_on_exit testnet_down
if ! testnet_up; then
  t_fail "$TN_ERROR"; t_summary
fi
t_on_exit testnet_sbxd_restore
testnet_sbxd_upstream || { t_fail "cannot restart sbxd with SBX_DNS_UPSTREAM"; t_summary; }
assert_contains "$(systemctl show -P Environment sbxd.service)" "SBX_DNS_UPSTREAM=$TN_DNS:53" "sbxd's environment"
mkdir -p "$SHARE" && chmod 1777 "$SHARE"; t_on_exit "rm -rf $SHARE"
# a host interface that is not the default route's: no run may see it
ip link add sbxtdummy1 type dummy 2>/dev/null; t_on_exit "ip link del sbxtdummy1 2>/dev/null"
add_profile sbxtegress '[
    { "address": "203.0.113.10", "ports": [443] },
    { "address": "203.0.113.10", "ports": [5353], "protocol": "udp" },
    { "address": "198.51.100.10", "ports": ["22-80"], "protocol": "tcp" },
    { "address": "198.51.100.10", "ports": [5353], "protocol": "tcp" },
    { "host": "allowed.test", "ports": [8443] },
    { "host": "*.wild.test", "ports": [22] },
    { "host": "long.test", "ports": [80] },
    { "host": "rebind.test", "ports": [22] }
  ]' "{ \"read_write\": [\"$SHARE\"] }"
add_profile sbxtcname '[ { "host": "alias.test", "ports": [8443] } ]'
add_profile sbxtother '[ { "address": "198.51.100.10", "ports": [8443] } ]' "{ \"read_write\": [\"$SHARE\"] }"
add_profile sbxtpriv '[ { "address": "10.213.0.2", "ports": [22], "private": true } ]'
# the gVisor tier (docs/security.md "Isolation tiers"): the same destinations as sbxtegress
add_profile sbxtgvisor '[ { "address": "203.0.113.10", "ports": [443] }, { "host": "allowed.test", "ports": [8443] } ]' "{}" gvisor
t_on_exit "rm -f $RUNPROF/sbxtegress.json $RUNPROF/sbxtcname.json $RUNPROF/sbxtother.json $RUNPROF/sbxtpriv.json $RUNPROF/sbxtgvisor.json; rmdir $RUNPROF /run/sbx 2>/dev/null; systemctl daemon-reload"
assert_rc 0 sbxctl profile reload
for p in sbxtegress sbxtcname sbxtother sbxtpriv sbxtgvisor; do assert_rc 0 sbxctl profile check "$RUNPROF/$p.json"; done
MOUNTS_BEFORE=$(findmnt -rn -o TARGET,FSTYPE | sort)
# control: from the host (no sbx) the neighbouring port is refused by the server, not EPERM
T_OUT=$($PY -c "$TN_PY" tcp:203.0.113.10:444 tcp:10.213.0.2:22 2>&1)
assert_errno "tcp 203.0.113.10:444" ECONNREFUSED
assert_reached "tcp 10.213.0.2:22"

# ---- addresses, ports, protocols -------------------------------------------------------------------------
t_begin "allowlist: the allowed address:port works; the next port and the next address fail with EPERM at once"
probe sbxtegress tcp:203.0.113.10:443 tcp:203.0.113.10:444 tcp:203.0.113.11:443 tcp:203.0.113.10:8443
assert_reached "tcp 203.0.113.10:443"
assert_denied "tcp 203.0.113.10:444"
assert_denied "tcp 203.0.113.11:443"
assert_denied "tcp 203.0.113.10:8443"   # a name's port: only once the name is resolved
assert_eq allowlist "$(record_get "$RUNID" .network.mode)" "record: network.mode"

t_begin "allowlist: UDP sendto and connected UDP are judged; a tcp-only rule denies UDP and a udp-only rule TCP"
probe sbxtegress udp:203.0.113.10:5353 udp:203.0.113.10:5354 udp:198.51.100.10:5353 cudp:203.0.113.10:5353 \
  cudp:198.51.100.10:5353 cudpto:203.0.113.10:5353/198.51.100.10:5353 cudpto:203.0.113.10:5353/203.0.113.10:5353 \
  tcp:198.51.100.10:5353 tcp:203.0.113.10:5353
assert_reached "udp 203.0.113.10:5353" 1 "echo ping"
assert_denied "udp 203.0.113.10:5354"
assert_denied "udp 198.51.100.10:5353"                 # its rule is tcp only
assert_reached "cudp 203.0.113.10:5353" 1 "echo ping"
assert_denied "cudp 198.51.100.10:5353"                # connect() of a UDP socket is judged
assert_denied "cudpto 203.0.113.10:5353/198.51.100.10:5353"   # sendto() past the connected address too
assert_contains "$(probe_line "cudpto 203.0.113.10:5353/203.0.113.10:5353")" "SENT" "sendto the connected address"
assert_reached "tcp 198.51.100.10:5353"                # the tcp rule
assert_denied "tcp 203.0.113.10:5353"                  # the udp-only rule

t_begin "allowlist: a port range is inclusive at both ends and no wider"
probe sbxtegress tcp:198.51.100.10:22 tcp:198.51.100.10:80 tcp:198.51.100.10:21 tcp:198.51.100.10:81 tcp:198.51.100.10:443
assert_reached "tcp 198.51.100.10:22"
assert_reached "tcp 198.51.100.10:80"
assert_denied "tcp 198.51.100.10:21"
assert_denied "tcp 198.51.100.10:81"
assert_denied "tcp 198.51.100.10:443"

t_begin "allowlist: a private address opened by the administrator (private: true), that port only"
probe sbxtpriv tcp:10.213.0.2:22 tcp:10.213.0.2:80 tcp:169.254.169.254:80 tcp:10.213.0.3:22
assert_reached "tcp 10.213.0.2:22"
assert_denied "tcp 10.213.0.2:80"
assert_denied "tcp 169.254.169.254:80"
assert_denied "tcp 10.213.0.3:22"

# ---- names -------------------------------------------------------------------------------------------
t_begin "allowlist: a name's addresses open only once resolved through sbx, only for its port, until its TTL"
assert_rc 0 sbxctl run -p sbxtegress -- sh -c "$PY -c '$TN_PY' tcp:203.0.113.10:8443 resolve:allowed.test \
  tcp:203.0.113.10:8443 tcp:203.0.113.10:8444 tcp:198.51.100.10:8443 sleep:3.5 tcp:203.0.113.10:8443; getent ahostsv4 allowed.test"
RUNID=$(last_run_id)
assert_denied "tcp 203.0.113.10:8443" 1                 # before the name was resolved
assert_eq "resolve allowed.test OK 203.0.113.10" "$(probe_line "resolve allowed.test")" "getaddrinfo"
assert_reached "tcp 203.0.113.10:8443" 2                # after
assert_denied "tcp 203.0.113.10:8444"                   # not the name's port
assert_denied "tcp 198.51.100.10:8443"                  # not the name's address
assert_denied "tcp 203.0.113.10:8443" 3                 # the TTL (2 s) has passed
assert_match "$T_OUT" "^203\.0\.113\.10 +STREAM allowed\.test" "getent ahostsv4 allowed.test"
assert_eq allowed "$(record_get "$RUNID" '.network.names[] | select(.name == "allowed.test") | .verdict')" "record: names[allowed.test].verdict"
assert_contains "$(record_get "$RUNID" '.network.names[] | select(.name == "allowed.test") | .addresses | join(",")')" "203.0.113.10" "record: names[allowed.test].addresses"

t_begin "allowlist: *.wild.test matches a name below it, never wild.test itself"
probe sbxtegress tcp:203.0.113.10:22 resolve:wild.test tcp:203.0.113.10:22 dns:198.51.100.99:wild.test \
  resolve:pkg.wild.test tcp:203.0.113.10:22
assert_denied "tcp 203.0.113.10:22" 1
assert_match "$(probe_line "resolve wild.test")" "^resolve wild\.test ERR EAI_" "the bare domain is not resolved"
assert_denied "tcp 203.0.113.10:22" 2
assert_match "$(probe_line "dns wild.test")" "^dns wild\.test REFUSED " "a raw query for the bare domain"
assert_eq "resolve pkg.wild.test OK 203.0.113.10" "$(probe_line "resolve pkg.wild.test")" "getaddrinfo pkg.wild.test"
assert_reached "tcp 203.0.113.10:22" 3

t_begin "allowlist: a CNAME chain is followed (alias.test -> allowed.test), for the allowed alias only"
probe sbxtcname tcp:203.0.113.10:8443 resolve:allowed.test tcp:203.0.113.10:8443 resolve:alias.test tcp:203.0.113.10:8443
assert_denied "tcp 203.0.113.10:8443" 1
assert_match "$(probe_line "resolve allowed.test")" "^resolve allowed\.test ERR EAI_" "allowed.test is not in this profile"
assert_denied "tcp 203.0.113.10:8443" 2
assert_eq "resolve alias.test OK 203.0.113.10" "$(probe_line "resolve alias.test")" "getaddrinfo alias.test"
assert_reached "tcp 203.0.113.10:8443" 3

t_begin "allowlist: DNS to a server of the program's own choice (UDP and TCP) is answered by sbx"
probe sbxtegress dns:198.51.100.99:evil.test dns:198.51.100.99:evil.test:tcp tcp:203.0.113.10:8443 \
  dns:198.51.100.99:allowed.test tcp:203.0.113.10:8443 dns:192.0.2.53:allowed.test:tcp
assert_eq "dns evil.test REFUSED - from 198.51.100.99:53 udp" "$(probe_line "dns evil.test" 1)" "raw UDP query, a name not allowed"
assert_eq "dns evil.test REFUSED - from 198.51.100.99:53 tcp" "$(probe_line "dns evil.test" 2)" "raw TCP query, a name not allowed"
assert_denied "tcp 203.0.113.10:8443" 1
assert_eq "dns allowed.test NOERROR 203.0.113.10 from 198.51.100.99:53 udp" "$(probe_line "dns allowed.test" 1)" "raw UDP query, an allowed name"
assert_reached "tcp 203.0.113.10:8443" 2
assert_eq "dns allowed.test NOERROR 203.0.113.10 from 192.0.2.53:53 tcp" "$(probe_line "dns allowed.test" 2)" "raw TCP query, an allowed name"
# what sbx recorded and printed
assert_contains "$T_OUT" "sbx: dns refused: evil.test (not in profile sbxtegress)" "sbxctl's end-of-run lines"
assert_eq refused "$(record_get "$RUNID" '.network.names[] | select(.name == "evil.test") | .verdict')" "record: names[evil.test].verdict"
n=$(record_get "$RUNID" '.network.names[] | select(.name == "evil.test") | .count')
[ "${n:-0}" -ge 2 ] 2>/dev/null || _t_err "record: names[evil.test].count is '$n', expected at least 2"
n=$(record_get "$RUNID" .network.dns_refused)
[ "${n:-0}" -ge 2 ] 2>/dev/null || _t_err "record: network.dns_refused is '$n', expected at least 2"

t_begin "allowlist: a name answered with a private address (DNS rebinding) does not open it; the denial is recorded"
probe sbxtegress resolve:rebind.test tcp:10.213.0.2:22 tcp:10.213.0.2:22 tcp:10.213.0.2:22
assert_denied "tcp 10.213.0.2:22" 1
assert_denied "tcp 10.213.0.2:22" 3
assert_contains "$T_OUT" "sbx: egress denied: 10.213.0.2:22/tcp (private range), 3 attempts" "sbxctl's end-of-run lines"
d='.network.destinations[] | select(.address == "10.213.0.2" and .port == 22)'
assert_eq "denied tcp 3" "$(record_get "$RUNID" "$d | \"\(.verdict) \(.protocol) \(.count)\"")" "record: the destination's verdict, protocol, count"
assert_contains "$(record_get "$RUNID" "$d | .reason")" "private" "record: the destination's reason"
assert_contains "$(record_get "$RUNID" '.network.names[] | select(.name == "rebind.test") | .blocked_addresses | join(",")')" "10.213.0.2" "record: names[rebind.test].blocked_addresses"
n=$(record_get "$RUNID" .network.denied)
[ "${n:-0}" -ge 3 ] 2>/dev/null || _t_err "record: network.denied is '$n', expected at least 3"
assert_eq 0 "$(record_get "$RUNID" .network.events_lost)" "record: network.events_lost"

t_begin "the journal has the denied destination and the refused name"
for i in $(seq 50); do journal_values SBX_NAME | grep -q 'evil\.test' && break; sleep 0.2; done
assert_contains "$(journal_values SBX_NAME)" "evil.test" "SBX_NAME in the journal"
assert_contains "$(journal_values SBX_DESTINATION)" "10.213.0.2" "SBX_DESTINATION in the journal"

# ---- what is always denied ---------------------------------------------------------------------------
t_begin "always denied, whatever the profile: metadata in every encoding, private, shared, multicast, broadcast, unspecified"
ALWAYS4="169.254.169.254 2852039166 0xa9fea9fe 0251.0376.0251.0376 169.254.43518 169.254.1.1
  10.213.0.2 10.0.0.1 172.16.0.1 172.31.255.254 192.168.1.1 100.64.0.1 100.127.255.254
  224.0.0.251 239.255.255.250 255.255.255.255 0.0.0.0 0.1.2.3 240.0.0.1"
ALWAYS6="::ffff:169.254.169.254 ::ffff:a9fe:a9fe 64:ff9b::a9fe:a9fe 2002:a9fe:a9fe::1 ::a9fe:a9fe
  fd00:ec2::254 fc00::1 fe80::1 ff02::1 :: ::ffff:10.213.0.2 64:ff9b::a00:1 2002:a00:1::1"
cmds=()
for a in $ALWAYS4; do cmds+=("tcp:$a:80"); done
for a in $ALWAYS6; do cmds+=("tcp:[$a]:80"); done
UDP_ALWAYS="169.254.169.254:123 10.213.0.2:5353 100.64.0.1:5353 224.0.0.251:5353 255.255.255.255:67 [ff02::1]:5353 [::ffff:169.254.169.254]:123 [fd00:ec2::254]:123"
for a in $UDP_ALWAYS; do cmds+=("udp:$a"); done
# the same through a profile that allows the most: the browser's public mode
for p in sbxtegress browser; do
  probe $p "${cmds[@]}"
  for a in $ALWAYS4; do assert_denied "tcp $a:80"; done
  for a in $ALWAYS6; do assert_denied "tcp [$a]:80"; done
  for a in $UDP_ALWAYS; do assert_denied "udp $a"; done
done
assert_match "$T_OUT" "sbx: egress denied: 169\.254\.169\.254:80/tcp \(" "sbxctl's end-of-run line for the metadata address"

t_begin "raw, ICMP (ping) and packet sockets are refused"
assert_rc 0 sbxctl run -p browser -- $PY -c '
import errno, socket
for name, args in [("raw4", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("raw4udp", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)),
                   ("raw6", (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)),
                   ("ping4", (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)),
                   ("ping6", (socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6)),
                   ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0)),
                   ("packetdgram", (socket.AF_PACKET, socket.SOCK_DGRAM, 0))]:
    try:
        s = socket.socket(*args)
    except OSError as e:
        print("socket", name, "ERR", errno.errorcode.get(e.errno, e.errno)); continue
    try:
        s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", ("203.0.113.10", 0)); print("socket", name, "SENT")
    except OSError as e:
        print("socket", name, "CREATED-NOT-SENT", errno.errorcode.get(e.errno, e.errno))
'
assert_not_contains "$T_OUT" " SENT" "a raw or ICMP packet left the run"
assert_not_contains "$T_OUT" "CREATED" "a raw, ICMP or packet socket was created"
for s in raw4 raw4udp raw6; do assert_eq "socket $s ERR EPERM" "$(probe_line "socket $s")" "$s"; done
for s in ping4 ping6; do assert_match "$(probe_line "socket $s")" "^socket $s ERR (EPERM|EACCES)$" "$s"; done
for s in packet packetdgram; do assert_match "$(probe_line "socket $s")" "^socket $s ERR (EPERM|EAFNOSUPPORT)$" "$s"; done

t_begin "the host's loopback listeners, its abstract unix socket and its own address are out of reach"
$PY - <<'PYEOF' &
import socket, time
ls = []
for fam, addr in [(socket.AF_INET, ("127.0.0.1", 18080)), (socket.AF_INET6, ("::1", 18080)), (socket.AF_INET, ("0.0.0.0", 18081))]:
    s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(addr); s.listen(); ls.append(s)
a = socket.socket(socket.AF_UNIX); a.bind("\0sbxt-egress-abstract"); a.listen(); ls.append(a)
time.sleep(120)
PYEOF
hpid=$!; t_on_exit "kill $hpid 2>/dev/null"
for i in $(seq 100); do ss -Htln | grep -q '127.0.0.1:18080' && ss -Hxl | grep -q 'sbxt-egress-abstract' && break; sleep 0.2; done
T_OUT=$($PY -c "$TN_PY" tcp:127.0.0.1:18080 'tcp:[::1]:18080' tcp:203.0.113.1:18081 unix:@sbxt-egress-abstract 2>&1)
assert_contains "$T_OUT" "tcp 127.0.0.1:18080 OK" "control: the host reaches its loopback listener"
assert_contains "$T_OUT" "tcp 203.0.113.1:18081 OK" "control: the host reaches its own address"
assert_contains "$T_OUT" "unix @sbxt-egress-abstract OK" "control: the host reaches its abstract socket"
probe sbxtegress tcp:127.0.0.1:18080 'tcp:[::1]:18080' tcp:203.0.113.1:18081 unix:@sbxt-egress-abstract
assert_errno "tcp 127.0.0.1:18080" ECONNREFUSED          # the run's own loopback: nothing listens there
assert_errno "tcp [::1]:18080" ECONNREFUSED
assert_not_contains "$T_OUT" "tcp 203.0.113.1:18081 OK" "the host's own address"
t_log "$(probe_line "tcp 203.0.113.1:18081")"
assert_errno "unix @sbxt-egress-abstract" ECONNREFUSED
kill $hpid 2>/dev/null

t_begin "a run's own loopback works in every mode; network mode none has only lo"
SELF='
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); port = s.getsockname()[1]
c = socket.create_connection(("127.0.0.1", port), 2); a, _ = s.accept(); a.sendall(b"self-ok"); print(c.recv(16).decode())
print("ifaces", sorted(n for _, n in socket.if_nameindex()))
'
assert_rc 0 sbxctl run -- $PY -c "$SELF"
assert_contains "$T_OUT" "self-ok" "offline: own loopback"
assert_contains "$T_OUT" "ifaces ['lo']" "offline: if_nameindex() over netlink"
assert_rc 0 sbxctl run -p browser --network none -- $PY -c "$SELF"
assert_contains "$T_OUT" "self-ok" "browser --network none: own loopback"
assert_contains "$T_OUT" "ifaces ['lo']" "browser --network none"
assert_eq none "$(record_get "$(last_run_id)" .network.mode)" "record: network.mode of browser --network none"
probe offline tcp:203.0.113.10:443
assert_match "$(probe_line "tcp 203.0.113.10:443")" "^tcp 203\.0\.113\.10:443 ERR (EPERM|ENETUNREACH) " "offline: no way out"
assert_rc 0 sbxctl run -p sbxtegress -- $PY -c "$SELF"
assert_contains "$T_OUT" "self-ok" "allowlist: own loopback"

t_begin "netlink works in a run and shows the run's own interfaces and namespace only"
assert_rc 0 sbxctl run -p sbxtegress -- sh -c "ip -o link | cut -d: -f2 | tr -d ' ' | tr '\n' ' '; echo; stat -L -c 'netns %i' /proc/self/ns/net; $PY -c 'import socket; print(\"ifaces\", sorted(n for _, n in socket.if_nameindex()))'"
assert_contains "$T_OUT" "ifaces ['lo'" "if_nameindex()"
assert_not_contains "$T_OUT" "sbxtdummy1" "a host interface"
assert_not_contains "$T_OUT" "netns $HOST_NETNS" "the host's network namespace"
assert_match "$T_OUT" "netns [0-9]+" "stat of /proc/self/ns/net"
assert_match "$T_OUT" "(^|[[:space:]])lo " "ip -o link"

t_begin "nothing can connect into a run"
rm -f "$SHARE/listening" "$SHARE/inbound-done"
if ss -Htln | grep -q ':8080 '; then
  t_skip "something on the host listens on port 8080"
else
  sbx_run_bg "$W/in.out" -p sbxtegress -- $PY -c '
import os, socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", 8080)); s.listen()
c = socket.create_connection(("127.0.0.1", 8080), 2); a, _ = s.accept(); a.sendall(b"hi"); print("self", c.recv(8).decode())
s.settimeout(0.2); got = []
open("/srv/sbxt-egress/listening", "w").close()
for _ in range(300):
    if os.path.exists("/srv/sbxt-egress/inbound-done"): break
    try: x, peer = s.accept(); got.append(peer[0]); x.close()
    except OSError: pass
print("inbound", got or "none")
'
  cpid=$CPID
  wait_file "$SHARE/listening" 600 "$cpid" || _t_err "the run never listened: $(cat "$W/in.out")"
  T_OUT=$(ip netns exec "$TN_NS" $PY -c "$TN_PY" tcp:203.0.113.1:8080 2>&1)
  assert_errno "tcp 203.0.113.1:8080" ECONNREFUSED
  T_OUT=$($PY -c "$TN_PY" tcp:127.0.0.1:8080 tcp:203.0.113.1:8080 2>&1)
  assert_errno "tcp 127.0.0.1:8080" ECONNREFUSED
  assert_errno "tcp 203.0.113.1:8080" ECONNREFUSED
  touch "$SHARE/inbound-done"
  wait "$cpid"
  assert_contains "$(cat "$W/in.out")" "self hi" "control: the run's listener works from inside"
  assert_contains "$(cat "$W/in.out")" "inbound none" "connections the run accepted"
fi

# ---- the browser and coding profiles -------------------------------------------------------------------
t_begin "browser: names resolve through sbx, public addresses are reachable, private ones are not"
probe browser resolve:allowed.test resolve:evil.test tcp:203.0.113.10:443 tcp:198.51.100.10:80 udp:203.0.113.10:5353 \
  dns:198.51.100.99:evil.test resolve:rebind.test tcp:10.213.0.2:22 tcp:10.213.0.2:80 tcp:127.0.0.1:18080 tcp:203.0.113.1:18081
assert_eq "resolve allowed.test OK 203.0.113.10" "$(probe_line "resolve allowed.test")" "getaddrinfo allowed.test"
assert_eq "resolve evil.test OK 203.0.113.10" "$(probe_line "resolve evil.test")" "public mode forwards every name"
assert_reached "tcp 203.0.113.10:443"
assert_reached "tcp 198.51.100.10:80"
assert_reached "udp 203.0.113.10:5353" 1 "echo ping"
assert_eq "dns evil.test NOERROR 203.0.113.10 from 198.51.100.99:53 udp" "$(probe_line "dns evil.test")" "a raw query to another server"
assert_denied "tcp 10.213.0.2:22"
assert_denied "tcp 10.213.0.2:80"
assert_errno "tcp 127.0.0.1:18080" ECONNREFUSED
assert_not_contains "$T_OUT" "tcp 203.0.113.1:18081 OK" "the host's own address"
assert_eq public "$(record_get "$RUNID" .network.mode)" "record: network.mode"
assert_not_contains "$T_OUT" "sbx: dns refused" "public mode refuses no name"
assert_rc 0 sbxctl run -p browser -- sh -c "ip -o link | cut -d: -f2 | tr -d ' ' | tr '\n' ' '; stat -L -c 'netns %i' /proc/self/ns/net"
assert_not_contains "$T_OUT" "sbxtdummy1" "a host interface"
assert_not_contains "$T_OUT" "netns $HOST_NETNS" "the host's network namespace"

t_begin "coding: runs with its registry allowlist; a registry name is forwarded, another name refused"
probe coding tcp:203.0.113.10:443 resolve:pypi.org tcp:203.0.113.10:443 resolve:evil.test tcp:203.0.113.10:80
assert_denied "tcp 203.0.113.10:443" 1
assert_eq "resolve pypi.org OK 203.0.113.10" "$(probe_line "resolve pypi.org")" "a registry name (answered by the test upstream)"
assert_reached "tcp 203.0.113.10:443" 2
assert_match "$(probe_line "resolve evil.test")" "^resolve evil\.test ERR EAI_" "a name not in the profile"
assert_denied "tcp 203.0.113.10:80"
assert_contains "$T_OUT" "sbx: dns refused: evil.test (not in profile coding)" "sbxctl's end-of-run lines"
assert_eq allowed "$(record_get "$RUNID" '.network.names[] | select(.name == "pypi.org") | .verdict')" "record: names[pypi.org].verdict"
assert_eq refused "$(record_get "$RUNID" '.network.names[] | select(.name == "evil.test") | .verdict')" "record: names[evil.test].verdict"

# ---- concurrency, map entries, a killed sbxd ------------------------------------------------------------
t_begin "two concurrent runs do not see each other's allowances; their map entries go with them"
rm -f "$SHARE"/a-* "$SHARE"/b-*
sbx_run_bg "$W/a.out" -p sbxtegress -- $PY -c "$TN_PY" resolve:long.test tcp:203.0.113.10:80 touch:$SHARE/a-ready \
  wait:$SHARE/b-ready tcp:198.51.100.10:8443 tcp:203.0.113.10:80 touch:$SHARE/a-done
if [ -z "${RUN:-}" ] || ! kill -0 "$CPID" 2>/dev/null; then
  t_fail "run A did not start: $(cat "$W/a.out")"
else
cpid=$CPID runa=$RUN
cga=$(run_cgroup_id "$runa")
wait_file "$SHARE/a-ready" 600 "$cpid" || _t_err "run A never got ready: $(cat "$W/a.out")"
if [ -n "$cga" ] && [ -e /sys/fs/bpf/sbx/egress/rules4 ]; then
  map_has_cgroup rules4 "$cga" || _t_err "control: rules4 has no entry of the running run A (cgroup $cga)"
fi
probe sbxtother tcp:203.0.113.10:80 tcp:203.0.113.10:443 tcp:198.51.100.10:8443 touch:$SHARE/b-ready wait:$SHARE/a-done
runb=$RUNID
assert_denied "tcp 203.0.113.10:80"           # A's allowance through long.test (TTL 300 s)
assert_denied "tcp 203.0.113.10:443"          # A's address rule
assert_reached "tcp 198.51.100.10:8443"       # B's own
wait "$cpid"
T_OUT=$(cat "$W/a.out")
assert_eq "resolve long.test OK 203.0.113.10" "$(probe_line "resolve long.test")" "run A: getaddrinfo long.test"
assert_reached "tcp 203.0.113.10:80" 1
assert_denied "tcp 198.51.100.10:8443"        # B's address rule, while B runs
assert_reached "tcp 203.0.113.10:80" 2
for r in "$runa" "$runb"; do
  assert_eq true "$(record_get "$r" .network.entries_removed)" "record of $r: network.entries_removed"
done
if [ -z "$cga" ]; then
  t_log "map check skipped: run A's cgroup id could not be read"
elif [ ! -e /sys/fs/bpf/sbx/egress/rules4 ]; then
  _t_err "no pinned map /sys/fs/bpf/sbx/egress/rules4 ($(ls /sys/fs/bpf/sbx/egress 2>&1 | tr '\n' ' '))"
else
  for m in rules4 rules6 runs; do
    [ -e /sys/fs/bpf/sbx/egress/$m ] || continue
    map_has_cgroup $m "$cga" && _t_err "map $m still has an entry of run A (cgroup $cga) after it ended"
  done
fi
fi

t_begin "the bridge: slirp4netns in a mount namespace of its own, no capabilities it could misuse, the host's mounts untouched"
rm -f "$SHARE"/b-*
sbx_run_bg "$W/b.out" -p sbxtegress -- sh -c "$PY -c '$TN_PY' wait:$SHARE/b-go tcp:203.0.113.10:443 > $SHARE/b-result 2>&1"
if [ -z "${RUN:-}" ] || ! kill -0 "$CPID" 2>/dev/null; then
  t_fail "the run did not start: $(cat "$W/b.out")"
else
cpid=$CPID runb=$RUN
bpid=$(systemctl show -P MainPID "sbx-net@$RUN.service")
if [ -z "$bpid" ] || [ "$bpid" = 0 ]; then
  t_fail "sbx-net@$RUN.service has no main process"
else
  assert_eq slirp4netns "$(cat /proc/$bpid/comm)" "the network unit's main process"
  assert_ne "$(readlink /proc/1/ns/mnt)" "$(readlink /proc/$bpid/ns/mnt)" "the bridge's mount namespace"
  # --enable-sandbox: everything dropped but CAP_NET_BIND_SERVICE (bit 10)
  capeff=$(awk '/^CapEff:/ {print $2}' /proc/$bpid/status)
  assert_eq 0000000000000400 "$capeff" "the bridge's effective capabilities"
  args=$(tr '\0' ' ' < /proc/$bpid/cmdline)
  assert_contains "$args" "--disable-host-loopback" "the bridge's command line"
  assert_not_contains "$args" "--api-socket" "the bridge's command line"
fi
touch "$SHARE/b-go"
wait "$cpid" 2>/dev/null
T_OUT=$(cat "$SHARE/b-result" 2>/dev/null)
assert_reached "tcp 203.0.113.10:443"
# until the network unit has stopped, not only left "active" (its namespace's mount goes while it is
# deactivating)
for i in $(seq 100); do
  case $(systemctl show -P ActiveState "sbx-net@$runb.service" 2>/dev/null) in inactive|failed|"") break ;; esac
  sleep 0.1
done
assert_eq "$MOUNTS_BEFORE" "$(findmnt -rn -o TARGET,FSTYPE | sort)" "the host's mounts after runs with a bridge"
fi

t_begin "sbxd killed during a run: the run still reaches what it may and nothing else"
rm -f "$SHARE"/k-*
sbx_run_bg "$W/k.out" -p sbxtegress -- sh -c "$PY -c '$TN_PY' wait:$SHARE/k-go tcp:203.0.113.10:443 tcp:10.213.0.2:22 \
  tcp:198.51.100.10:8443 tcp:203.0.113.11:443 > $SHARE/k-result.tmp 2>&1; mv $SHARE/k-result.tmp $SHARE/k-result"
if [ -z "${RUN:-}" ] || ! kill -0 "$CPID" 2>/dev/null; then
  t_fail "the run did not start: $(cat "$W/k.out")"
else
cpid=$CPID runk=$RUN unitk=$(record_get "$RUN" .unit)
cgk=$(run_cgroup_id "$runk")
assert_rc 0 systemctl kill -s KILL sbxd.service
for i in $(seq 50); do systemctl is-active -q sbxd.service || break; sleep 0.1; done
assert_ne active "$(systemctl is-active sbxd.service)" "sbxd after the kill"
touch "$SHARE/k-go"
wait_file "$SHARE/k-result" 300 || _t_err "the run wrote no result: $(cat "$W/k.out")"
[ "$(systemctl is-active sbxd.service)" = active ] && t_log "note: sbxd was started again (bus activation) before the run's checks"
T_OUT=$(cat "$SHARE/k-result" 2>/dev/null)
assert_reached "tcp 203.0.113.10:443"
assert_denied "tcp 10.213.0.2:22"
assert_denied "tcp 198.51.100.10:8443"
assert_denied "tcp 203.0.113.11:443"
assert_rc 0 systemctl start sbxd.service
for i in $(seq 300); do systemctl is-active -q "$unitk" || break; sleep 0.1; done
wait "$cpid" 2>/dev/null
# once sbxd is back and the run is over, nothing of the run may stay in the kernel
if [ -n "$cgk" ] && [ -e /sys/fs/bpf/sbx/egress/rules4 ]; then
  for i in $(seq 100); do map_has_cgroup rules4 "$cgk" || break; sleep 0.2; done
  for m in rules4 rules6 runs; do
    [ -e /sys/fs/bpf/sbx/egress/$m ] || continue
    map_has_cgroup $m "$cgk" && _t_err "map $m still has an entry of the run sbxd missed the end of (cgroup $cgk)"
  done
fi
fi

t_begin "a source route (IPv4 options) cannot send a datagram to another host than the one judged"
# 203.0.113.10:5353/udp is allowed, 198.51.100.10:5353/udp is not; a loose source route through
# 198.51.100.10 would make the kernel send the allowed datagram there (its first hop) without the
# programs that judge connect() and sendmsg() seeing it
T_OUT=$(sbxctl run -p sbxtegress -- $PY -c '
import errno, socket
hop = socket.inet_aton("198.51.100.10")
lsrr = bytes([1, 0x83, 7, 4]) + hop          # NOP; LSRR, length 7, pointer 4, the first hop
def name(e): return errno.errorcode.get(e.errno, str(e.errno))
for how in ("setsockopt", "cmsg"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
    try:
        if how == "setsockopt":
            s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, lsrr)
            s.sendto(b"ping", ("203.0.113.10", 5353))
        else:
            s.sendmsg([b"ping"], [(socket.IPPROTO_IP, 7, lsrr)], 0, ("203.0.113.10", 5353))  # IP_RETOPTS
        print(how, "sent")
        print(how, "reply from", s.recvfrom(100)[1])
    except socket.timeout:
        print(how, "no reply")
    except OSError as e:
        print(how, "ERR", name(e))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
s.sendto(b"ping", ("203.0.113.10", 5353)); print("control reply from", s.recvfrom(100)[1])
' 2>&1)
t_log "$T_OUT"
assert_contains "$T_OUT" "setsockopt ERR EPERM" "a source route set with IP_OPTIONS"
assert_contains "$T_OUT" "cmsg ERR EPERM" "a source route given per datagram (IP_RETOPTS)"
assert_not_contains "$T_OUT" "reply from ('198.51.100.10'"
assert_contains "$T_OUT" "control reply from ('203.0.113.10', 5353)" "the same datagram without options"

t_begin "a run cannot move itself out of its cgroup (its policy is keyed by it)"
T_OUT=$(sbxctl run -p sbxtegress -- sh -c 'echo $$ > /sys/fs/cgroup/cgroup.procs 2>&1 && echo moved-root;
  echo $$ > /sys/fs/cgroup/sbx.slice/cgroup.procs 2>&1 && echo moved-slice;
  mkdir /sys/fs/cgroup/sbx.slice/sbxt-escape 2>&1 && echo made-cgroup; cat /proc/self/cgroup' 2>&1)
assert_not_contains "$T_OUT" "moved-root"
assert_not_contains "$T_OUT" "moved-slice"
assert_not_contains "$T_OUT" "made-cgroup"
assert_match "$T_OUT" "sbx.slice/sbx-sbxtegress.slice/sbx-sbxtegress-[0-9a-f]+.service" "the run's cgroup"
rmdir /sys/fs/cgroup/sbx.slice/sbxt-escape 2>/dev/null

t_begin "sbx.slice stopped and started again (new cgroup id, old links defunct): sbxd attaches anew before the next run"
old=$(stat -c %i /sys/fs/cgroup/sbx.slice 2>/dev/null)
assert_rc 0 systemctl stop sbx.slice
assert_rc 0 systemctl start sbx.slice
new=$(stat -c %i /sys/fs/cgroup/sbx.slice 2>/dev/null)
assert_ne "$old" "$new" "sbx.slice's cgroup id after the restart"
T_OUT=$(sbxctl run -p sbxtegress -- $PY -c "$TN_PY" tcp:203.0.113.10:443 tcp:10.213.0.2:22 tcp:203.0.113.10:444 2>&1); T_RC=$?
assert_eq 0 "$T_RC" "a run after the slice's restart"
assert_reached "tcp 203.0.113.10:443"
assert_denied "tcp 10.213.0.2:22"
assert_denied "tcp 203.0.113.10:444"
# the links now point at the slice's new cgroup
if command -v bpftool >/dev/null; then
  ids=$(bpftool -j link show 2>/dev/null | jq -r '.[] | select(.cgroup_id != null) | .cgroup_id' | sort -u | tr '\n' ' ')
  assert_contains " $ids" " $new " "cgroups the BPF links are attached to"
fi

t_begin "a link's pin removed, or another link moved onto it: sbxd pins and attaches anew before the next run"
PINS=/sys/fs/bpf/sbx/egress
mapfile -t links < <(ls "$PINS" 2>/dev/null | grep '^link_')
if [ "${#links[@]}" -lt 2 ]; then
  t_fail "fewer than two link pins in $PINS: ${links[*]}"
else
  for how in removed moved; do
    a=$PINS/${links[0]} b=$PINS/${links[1]}
    ino_a=$(stat -c %i "$a")
    if [ "$how" = removed ]; then rm "$a"; else mv "$b" "$a"; fi
    T_OUT=$(sbxctl run -p sbxtegress -- $PY -c "$TN_PY" tcp:203.0.113.10:443 tcp:203.0.113.10:444 2>&1); T_RC=$?
    assert_eq 0 "$T_RC" "a run after a pin was $how"
    assert_reached "tcp 203.0.113.10:443"
    assert_denied "tcp 203.0.113.10:444"
    for l in "${links[@]}"; do
      [ -e "$PINS/$l" ] || _t_err "$l is not pinned again after a pin was $how"
    done
    assert_ne "$ino_a" "$(stat -c %i "$a" 2>/dev/null)" "${links[0]}'s pin after a pin was $how (a new one)"
    if command -v bpftool >/dev/null; then
      # each pin holds the link of its own program (link_NAME: the program NAME), attached to the slice
      for l in "${links[@]}"; do
        prog=$(bpftool -j link show pinned "$PINS/$l" 2>/dev/null | jq -r '.prog_id')
        name=$(bpftool -j prog show id "$prog" 2>/dev/null | jq -r '.name')
        assert_eq "${l#link_}" "$name" "the program of $l's link after a pin was $how"
      done
    fi
  done
fi

t_begin "the gVisor tier: the same answers, the same record and the same lines for an allowed, a denied and a refused destination"
# runsc's Sentry makes the command's sockets as host sockets of the unit, in the run's namespace
# (--network=host there): sbx's programs judge them as any other run's
if [ "$(t_lane)" = vm ]; then
  t_skip "compared in the native lane (a runsc start takes many seconds under this lane's emulation)"
elif ! command -v runsc >/dev/null; then
  t_fail "runsc is not installed (scripts/install-deps.sh)"
else
  PROBES=(tcp:203.0.113.10:443 tcp:203.0.113.10:444 dns:198.51.100.99:evil.test resolve:allowed.test
          tcp:203.0.113.10:8443 tcp:10.213.0.2:22)
  probe sbxtgvisor "${PROBES[@]}"
  gv_out=$T_OUT gv_id=$RUNID
  assert_eq gvisor "$(record_get "$gv_id" .isolation)" "record: isolation"
  assert_reached "tcp 203.0.113.10:443"
  assert_denied "tcp 203.0.113.10:444"
  assert_eq "dns evil.test REFUSED - from 198.51.100.99:53 udp" "$(probe_line "dns evil.test" 1)" "raw UDP query, a name not allowed"
  assert_eq "resolve allowed.test OK 203.0.113.10" "$(probe_line "resolve allowed.test")" "getaddrinfo through sbx's resolver"
  assert_reached "tcp 203.0.113.10:8443"
  assert_denied "tcp 10.213.0.2:22"
  assert_match "$gv_out" "sbx: egress denied: 203\\.0\\.113\\.10:444/tcp \\(.*\\), 1 attempt" "sbxctl's end-of-run lines"
  assert_contains "$gv_out" "sbx: dns refused: evil.test (not in profile sbxtgvisor)" "sbxctl's end-of-run lines"
  # the kernel tier's run of the same probes under the same destinations says the same, but for the name
  probe sbxtegress "${PROBES[@]}"
  kernel_lines=$(printf '%s\n' "$T_OUT" | grep '^sbx: \(egress denied\|dns refused\)' | sed 's/sbxtegress/P/' | sort)
  gv_lines=$(printf '%s\n' "$gv_out" | grep '^sbx: \(egress denied\|dns refused\)' | sed 's/sbxtgvisor/P/' | sort)
  assert_eq "$kernel_lines" "$gv_lines" "the end-of-run lines of both tiers"
  assert_eq "$(record_get "$RUNID" '[.network.destinations[] | "\(.address):\(.port) \(.verdict) \(.count)"] | sort | join(" ")')" \
            "$(record_get "$gv_id" '[.network.destinations[] | "\(.address):\(.port) \(.verdict) \(.count)"] | sort | join(" ")')" \
            "the records' destinations of both tiers"
fi

t_begin "after all runs: no units, namespaces or network units left"
assert_clean
assert_eq "" "$(ls -A /run/sbx/netns 2>/dev/null)" "files in /run/sbx/netns"
assert_eq "" "$(systemctl list-units --all --no-legend --plain 'sbx-net@*' 2>/dev/null)" "sbx-net@ units"

t_summary
