#!/usr/bin/env bash
# The shipped profiles, each attacked where it says no: requests that try to loosen them, the
# network a profile forbids, the files it hides, and the search path's own rules (masking, invalid
# files). The offline profile's own boundary is test-20's.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
RUNTIME_DIR=/run/sbx/profiles.d
mkdir -p "$RUNTIME_DIR"; t_on_exit "rm -f $RUNTIME_DIR/sbxt*.json $RUNTIME_DIR/data.json; rmdir $RUNTIME_DIR /run/sbx 2>/dev/null"

# ---- requests may only tighten, and only what the profile lets them set ------------------------------
t_begin "request above a profile's limit is refused (125) with the limit named"
assert_rc 125 sbxctl run -p offline --memory 3G -- true
assert_contains "$T_OUT" "memory: 3G is above the limit of profile 'offline' (2G)"
assert_rc 125 sbxctl run -p offline --timeout 2h -- true
assert_contains "$T_OUT" "timeout: 7200s is above the limit of profile 'offline' (3600s)"
assert_rc 125 sbxctl run -p offline --cpu 300% -- true
assert_contains "$T_OUT" "cpu: 300% is above the limit of profile 'offline' (200%)"

t_begin "request below a profile's floor, or an option the profile does not offer, is refused"
assert_rc 125 sbxctl run -p offline --memory 8M -- true
assert_contains "$T_OUT" "memory: 8M is below the lowest profile 'offline' accepts (16M)"
assert_rc 125 sbxctl run -p browser --cpu 50% -- true
assert_contains "$T_OUT" "cpu: profile 'browser' does not let a run set it"
assert_rc 125 sbxctl run -p offline --network public -- true
assert_contains "$T_OUT" "network: profile 'offline' does not let a run choose 'public'"
ws=$(mktemp -d /var/tmp/sbxt-ws.XXXXXX); t_on_exit "rm -rf $ws"
assert_rc 125 sbxctl run -p browser -w "$ws" -- true
assert_contains "$T_OUT" "workspace: profile 'browser' does not let a run bind a workspace"
assert_eq "" "$(sbx_leftovers)" "nothing started"

# ---- coding --------------------------------------------------------------------------------------------
t_begin "coding with --network none runs offline"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'ls /sys/class/net | tr "\n" " "'
assert_eq "lo " "$T_OUT"
assert_eq none "$(record_get "$(last_run_id)" .network.mode)" "record: network.mode"

t_begin "coding --network none: the live unit reads the profile's drop-in and has PrivateNetwork=yes"
sbx_run_bg /tmp/sbxt-coding-bg.out -p coding --network none -- sleep 30
assert_contains "$(systemctl cat "$(record_get "$RUN" .unit)")" "sbx-coding-.service.d/50-sbx-profile.conf" "the live unit reads it"
assert_eq "yes" "$(systemctl show -P PrivateNetwork "$(record_get "$RUN" .unit)")"
sbxctl stop "$RUN" >/dev/null 2>&1; wait "$CPID" 2>/dev/null

t_begin "coding: named caches persist for the same caller, and only for it"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'mkdir -p ~/.cache/pip && echo kept > ~/.cache/pip/marker && ls -ld ~/.cache/pip'
assert_rc 0 sbxctl run -p coding --network none -- cat /home/sbx/.cache/pip/marker
assert_eq "kept" "$T_OUT" "second run of the same caller sees the cache"
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'touch /home/sbx/.npm-outside 2>/dev/null; ls -A /home/sbx/.cache 2>&1'
if id nobody >/dev/null 2>&1; then
  out=$(cd / && runuser -u nobody -- sbxctl run -p coding --network none -- sh -c 'cat ~/.cache/pip/marker 2>&1; echo rc=$?' 2>&1)
  assert_contains "$out" "rc=1" "another caller does not see the first caller's cache"
  assert_not_contains "$out" "kept"
fi

t_begin "coding: a second concurrent run of the same caller gets ephemeral caches"
sbx_run_bg /tmp/sbxt-cache-bg.out -p coding --network none -- sleep 30
assert_rc 0 sbxctl run -p coding --network none -- sh -c 'cat ~/.cache/pip/marker 2>&1 || echo none'
assert_contains "$T_OUT" "none" "the busy cache is not shared"
sbxctl stop "$RUN" >/dev/null 2>&1; wait "$CPID" 2>/dev/null
assert_rc 0 sbxctl run -p coding --network none -- cat /home/sbx/.cache/pip/marker
assert_eq "kept" "$T_OUT" "the cache is back once the first run ended"

t_begin "privacy: what every local user sees of a run does not name its tenant id"
# The unit's properties (systemctl show), the transient unit files, the cache directories' names under
# /var/lib and sbx's /run: a tenant id there would link it to the uid of the workspace beside it.
WS=$(mktemp -d /var/tmp/sbxws.XXXXXX); t_on_exit "rm -rf '$WS'"
sbx_run_bg /tmp/sbxt-privacy.out -p coding --network none -w "$WS" -- sleep 30
id=$RUN tenant=$(record_get "$RUN" .tenant) unit=$(record_get "$RUN" .unit)
case "$tenant" in [0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) ;; *) _t_err "no tenant id in the record: '$tenant'" ;; esac
state=$(systemctl show -P StateDirectory "$unit")
assert_contains "$state" "sbx-cache/" "the run's caches"
seen=$(systemctl show "$unit" "sbx-space@$id.service"; cat /run/systemd/transient/*"$id"* 2>/dev/null
       find /var/lib/sbx-cache /var/lib/private/sbx-cache /run/sbx /run/systemd/transient 2>/dev/null)
[ -n "$tenant" ] && assert_not_contains "$seen" "$tenant" "the unit, its files and sbx's directories"
sbxctl stop "$id" >/dev/null 2>&1; wait "$CPID" 2>/dev/null
assert_clean

# ---- browser -------------------------------------------------------------------------------------------
# The test network of testnet.sh: "public" servers at 203.0.113.10 and 198.51.100.10, a private one at
# 10.213.0.2 (documentation ranges are not denied). Runs of network mode public have a namespace of
# their own, connected by slirp4netns; sbx's egress programs refuse
# a denied destination at once (EPERM).
. "$(dirname "$0")/testnet.sh"
t_on_exit testnet_down
testnet_up || echo "  # test network: $TN_ERROR"

# (a run of mode allowlist needs the host to have a network: the test network gives the VM one)
t_begin "coding: its allowlist is enforced, so a run is not refused; it has a network namespace of its own"
assert_rc 0 sbxctl run -p coding -- sh -c 'stat -L -c "netns %i" /proc/self/ns/net; ls /sys/class/net | grep -c .'
assert_not_contains "$T_OUT" "netns $(stat -L -c %i /proc/self/ns/net)" "the host's network namespace"
assert_eq allowlist "$(record_get "$(last_run_id)" .network.mode)" "record: network.mode"

$PY -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 18080)); s.listen()
s6 = socket.socket(socket.AF_INET6); s6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s6.bind(("::1", 18080)); s6.listen()
time.sleep(120)
' & HPID=$!
t_on_exit "kill $HPID 2>/dev/null"
for i in $(seq 100); do ss -Htln | grep -q '127.0.0.1:18080' && break; sleep 0.2; done
# line PREFIX: the probe's line for PREFIX (e.g. "tcp 10.213.0.2:80")
line() { printf '%s\n' "$T_OUT" | awk -v p="$1 " 'index($0, p) == 1 { print; exit }'; }

t_begin "browser: a public address is reachable; private ranges fail with EPERM at once; the host's loopback is not the run's"
[ -z "$TN_ERROR" ] || _t_err "test network: $TN_ERROR"
# control: from outside the sandbox every listener answers
T_OUT=$($PY -c "$TN_PY" tcp:198.51.100.10:80 tcp:10.213.0.2:80 tcp:127.0.0.1:18080 2>&1)
assert_contains "$(line "tcp 198.51.100.10:80")" "OK hello" "control: public listener"
assert_contains "$(line "tcp 10.213.0.2:80")" "OK hello" "control: private listener"
assert_contains "$(line "tcp 127.0.0.1:18080")" "OK" "control: loopback listener"
assert_rc 0 sbxctl run -p browser -- $PY -c "$TN_PY" tcp:198.51.100.10:80 tcp:10.213.0.2:80 tcp:127.0.0.1:18080 \
  'tcp:[::1]:18080' 'tcp:[::ffff:10.213.0.2]:80' 'tcp:[::ffff:127.0.0.1]:18080'
assert_contains "$(line "tcp 198.51.100.10:80")" "OK hello" "public listener"
assert_match "$(line "tcp 10.213.0.2:80")" "ERR EPERM [0-9]{1,3}$" "private range (EPERM within a second)"
assert_match "$(line "tcp [::ffff:10.213.0.2]:80")" "ERR EPERM [0-9]{1,3}$" "IPv4-mapped private"
# the run's loopback is its own namespace's: the host's listeners are not there
assert_match "$(line "tcp 127.0.0.1:18080")" "ERR ECONNREFUSED " "loopback"
assert_match "$(line "tcp [::1]:18080")" "ERR ECONNREFUSED " "IPv6 loopback"
assert_match "$(line "tcp [::ffff:127.0.0.1]:18080")" "ERR (ECONNREFUSED|EPERM) " "IPv4-mapped loopback"
assert_not_contains "$T_OUT" "10.213.0.2:80 OK"
assert_not_contains "$T_OUT" "18080 OK"

t_begin "browser: UDP to private, link-local and multicast addresses is refused"
# (port 53 would go to the run's own resolver: sbx redirects every DNS query there)
assert_rc 0 sbxctl run -p browser -- $PY -c '
import socket
for a in ("10.213.0.2", "169.254.169.254", "224.0.0.251", "100.64.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", (a, 5353)); print("SENT", a)
    except OSError as e:
        print("refused", a, e.errno)
'
assert_not_contains "$T_OUT" "SENT"
assert_contains "$T_OUT" "refused 169.254.169.254 1" "the cloud metadata address"
assert_contains "$T_OUT" "refused 10.213.0.2 1" "a private address"

t_begin "browser: host files outside the OS are hidden"
mkdir -p /srv/sbxt-secret && echo SRV-SECRET > /srv/sbxt-secret/f; t_on_exit "rm -rf /srv/sbxt-secret"
assert_rc 0 sbxctl run -p browser -- sh -c 'cat /srv/sbxt-secret/f 2>&1; ls /var/lib 2>&1; echo end'
assert_not_contains "$T_OUT" "SRV-SECRET"
assert_not_contains "$T_OUT" "dpkg" "/var/lib is hidden"

t_begin "browser: the helper refuses to run in the host's network namespace"
# The same profile with the run's namespace taken away by a drop-in of higher priority than the
# generator's and than the transient unit: the run would share the host's network, and must be refused.
mkdir -p /run/systemd/system/sbx-browser-.service.d
printf '[Service]\nNetworkNamespacePath=\nPrivateNetwork=no\n' > /run/systemd/system/sbx-browser-.service.d/90-sbxt-weaken.conf
t_on_exit "rm -rf /run/systemd/system/sbx-browser-.service.d; systemctl daemon-reload"
systemctl daemon-reload
assert_rc 123 sbxctl run -p browser -- true
assert_contains "$T_OUT" "the run is in the host's network namespace, not one of its own"
assert_eq refused "$(record_get "$(last_run_id)" .stop_reason)" "stop_reason"
rm -rf /run/systemd/system/sbx-browser-.service.d; systemctl daemon-reload
assert_rc 0 sbxctl run -p browser -- true

# ---- data ----------------------------------------------------------------------------------------------
t_begin "data: one dataset read-only, the workspace writable, no network"
ds=$(mktemp -d /srv/sbxt-ds.XXXXXX); echo "1,2,3" > "$ds/table.csv"; chmod -R o+rX "$ds"
t_on_exit "rm -rf $ds"
ws2=$(mktemp -d /var/tmp/sbxt-ws2.XXXXXX); t_on_exit "rm -rf $ws2"
assert_rc 0 sbxctl run -p data --dataset "$ds" -w "$ws2" -- sh -c \
  'cat ~/dataset/table.csv; touch ~/dataset/x 2>&1 | grep -o "Read-only file system"; cp ~/dataset/table.csv ~/workspace/out.csv; ls /sys/class/net | tr "\n" " "'
assert_contains "$T_OUT" "1,2,3"
assert_contains "$T_OUT" "Read-only file system"
assert_contains "$T_OUT" "lo " "no network"
assert_file "$ws2/out.csv" "result written to the workspace"
[ -e "$ds/x" ] && _t_err "the dataset was written"

t_begin "data: a dataset outside the allowed places, or not the caller's, is refused"
assert_rc 125 sbxctl run -p data --dataset /etc -- true
assert_contains "$T_OUT" "dataset: '/etc' is a system directory"
mkdir -p /opt/sbxt-ds; t_on_exit "rm -rf /opt/sbxt-ds"
assert_rc 125 sbxctl run -p data --dataset /opt/sbxt-ds -- true
assert_contains "$T_OUT" "is not below a directory profile 'data' allows"
assert_rc 125 sbxctl run -p offline --dataset "$ds" -- true
assert_contains "$T_OUT" "dataset: profile 'offline' does not let a run bind a dataset"
if id nobody >/dev/null 2>&1; then
  out=$(cd / && runuser -u nobody -- sbxctl run -p data --dataset "$ds" -- true 2>&1); rc=$?
  assert_eq 125 "$rc" "another user's dataset"
  assert_contains "$out" "is not owned by the caller"
fi

# ---- the search path -----------------------------------------------------------------------------------
t_begin "an invalid profile is refused with its error, and other profiles still work"
printf '{ "version": 1, "description": "broken", "network": {"mode": "none"},\n  "resources": {"memory": "1G", "tasks": 8, "wall_time": "1min", "bogus": 1} }\n' \
  > $RUNTIME_DIR/sbxtbroken.json
t_on_exit "rm -f $RUNTIME_DIR/sbxtbroken.json"
assert_rc 123 sbxctl run -p sbxtbroken -- true
assert_contains "$T_OUT" "$RUNTIME_DIR/sbxtbroken.json"
assert_contains "$T_OUT" "bogus"
assert_rc 0 sbxctl run -p offline -- true
assert_rc 123 sbxctl profile list
assert_contains "$T_OUT" "invalid"
rm -f $RUNTIME_DIR/sbxtbroken.json

t_begin "a runtime file masks the vendor profile of the same name"
ln -sf /dev/null $RUNTIME_DIR/data.json; t_on_exit "rm -f $RUNTIME_DIR/data.json"
assert_rc 125 sbxctl run -p data -- true
assert_contains "$T_OUT" "'data' is masked by $RUNTIME_DIR/data.json"
rm -f $RUNTIME_DIR/data.json

t_begin "/dev/shm is the run's own, not the host's"
echo HOST-SHM-SECRET > /dev/shm/sbxt-shm; chmod 0644 /dev/shm/sbxt-shm
t_on_exit "rm -f /dev/shm/sbxt-shm /dev/shm/sbxt-mine"
assert_rc 0 sbxctl run -- sh -c 'cat /dev/shm/sbxt-shm 2>&1; echo x > /dev/shm/sbxt-mine && echo wrote'
assert_not_contains "$T_OUT" "HOST-SHM-SECRET"
assert_contains "$T_OUT" "wrote" "the run can use its own /dev/shm"
[ -e /dev/shm/sbxt-mine ] && _t_err "the run's /dev/shm file appeared on the host"
assert_rc 0 sbxctl run -- /usr/bin/python3 -c 'from multiprocessing import shared_memory, Semaphore; m = shared_memory.SharedMemory(create=True, size=4096); s = Semaphore(1); s.acquire(); m.close(); m.unlink(); print("shm ok")'
assert_contains "$T_OUT" "shm ok" "POSIX shared memory and semaphores work"

t_begin "after all of it: nothing left behind"
assert_clean

t_summary
