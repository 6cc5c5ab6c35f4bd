#!/usr/bin/env bash
# Credentials (docs/credentials.md): secrets stored encrypted per tenant (sbxctl secret), delivered to a
# run only as a file of its credentials directory, gone with the run; and the broker, which performs
# HTTPS requests for a run with a secret the run never holds, checking every request against the run's
# grants. The HTTPS servers live in a network namespace of this test's own (192.0.2.10 the grant's host,
# 192.0.2.20 another one), with a test CA the broker is configured to trust. In both lanes: the VM has the
# packages and a pure cgroup v2 host; the native lane a host with cgroup v1 hierarchies mounted beside the
# unified one (the broker then identifies a caller by the last line of its /proc/PID/cgroup).
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
t_require_cmd openssl || t_summary

RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_creds
NOGRANT=sbxtest_credsnone
NS=sbxt-brk HIF=sbxt-bh0 NIF=sbxt-bn0
SRV=192.0.2.10 OTHER=192.0.2.20
SECRET="sbxtest-SeCrEt-$RANDOM$RANDOM$RANDOM"
INLINE="sbxtest-InLiNe-$RANDOM$RANDOM$RANDOM"
NB_SECRET="sbxtest-NoBoDy-$RANDOM$RANDOM$RANDOM"
BCONF=/etc/sbx/broker.conf
T0=$(date '+%Y-%m-%d %H:%M:%S')
D=$(mktemp -d /run/sbxt-brk.XXXXXX)
chmod 0755 "$D"
[ -d /etc/sbx ] || MADE_ETC=1
SRVPID=""

cleanup() {
  [ -n "$SRVPID" ] && kill "$SRVPID" 2>/dev/null
  ip netns del $NS 2>/dev/null
  ip link del $HIF 2>/dev/null
  sbxctl secret rm tok >/dev/null 2>&1
  runuser -u nobody -- sbxctl secret rm tok >/dev/null 2>&1
  rm -f "$BCONF" "$RUNPROF/$PROF.json" "$RUNPROF/$NOGRANT.json"
  # /etc/sbx gone again if this test made it (test-90 compares /etc)
  [ "${MADE_ETC:-0}" = 1 ] && rmdir /etc/sbx 2>/dev/null
  rmdir "$RUNPROF" 2>/dev/null
  systemctl stop sbx-broker.service 2>/dev/null
  rm -rf "$D"
  systemctl daemon-reload
}
t_on_exit cleanup

mkdir -p "$RUNPROF"
cat > "$RUNPROF/$PROF.json" <<EOF
{
  "version": 1,
  "description": "sbx test: credentials and broker grants",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "60s" },
  "credentials": {
    "files": [ "tok", "inline" ],
    "grants": {
      "repo-read": { "credential": "tok", "methods": [ "GET", "HEAD" ],
                     "url_prefix": "https://$SRV:8443/api/repos/acme/" },
      "repo-write": { "credential": "tok", "methods": [ "POST" ],
                      "url_prefix": "https://$SRV:8443/api/repos/acme/upload", "max_body": "4K" }
    }
  }
}
EOF
cat > "$RUNPROF/$NOGRANT.json" <<EOF
{
  "version": 1,
  "description": "sbx test: no credentials",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "60s" }
}
EOF
systemctl daemon-reload

# ---- the test's HTTPS servers, with a CA of the test's own ----
net_up() {
  ip netns add $NS && ip link add $HIF type veth peer name $NIF && ip link set $NIF netns $NS &&
    ip addr add 192.0.2.1/24 dev $HIF && ip link set $HIF up && ip -n $NS link set lo up &&
    ip -n $NS addr add $SRV/24 dev $NIF && ip -n $NS addr add $OTHER/32 dev $NIF && ip -n $NS link set $NIF up &&
    ip route replace $OTHER/32 via $SRV 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=sbxtest-ca -keyout "$D/ca.key" -out "$D/ca.pem" \
    >/dev/null 2>&1 &&
    openssl req -newkey rsa:2048 -nodes -subj /CN=$SRV -keyout "$D/srv.key" -out "$D/srv.csr" >/dev/null 2>&1 &&
    printf 'subjectAltName=IP:%s,IP:%s\n' $SRV $OTHER > "$D/san.ext" &&
    openssl x509 -req -in "$D/srv.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" -CAcreateserial -days 2 \
      -extfile "$D/san.ext" -out "$D/srv.pem" >/dev/null 2>&1 || return 1
  ip netns exec $NS timeout 1200 python3 "$(dirname "$0")/broker-test-server.py" "$D/srv.pem" "$D/srv.key" \
    "$D/server.log" $SRV:8443 $OTHER:8443 > "$D/server.out" 2>&1 & SRVPID=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('$SRV', 8443), 1)" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# the broker trusts the test CA (and is started anew to read that)
mkdir -p /etc/sbx
printf '# sbx test\nca_file=%s\n' "$D/ca.pem" > "$BCONF"
systemctl stop sbx-broker.service 2>/dev/null
systemctl start sbx-broker.socket

server_saw() {   # how many requests with this Authorization value arrived, at server $1 (or any: "")
  [ -e "$D/server.log" ] || { echo 0; return; }
  jq -r --arg s "${1:-}" --arg a "Bearer $SECRET" \
    'select(($s == "" or .server == $s) and .authorization == $a) | .path' "$D/server.log" | wc -l
}

# ---------------------------------------------------------------------------------------------------
t_begin "secret add, list and rm: encrypted at rest, per tenant, never shown"
printf '%s' "$SECRET" | sbxctl secret add tok
assert_eq 0 $? "secret add"
t_run sbxctl secret add tok < /dev/null
assert_eq 125 "$T_RC" "a second add without --replace, or an empty value (refused)"
printf '%s' "$SECRET" | sbxctl secret add --replace tok
assert_eq 0 $? "secret add --replace"
printf 'second' | sbxctl secret add atok
t_run sbxctl secret list --json
assert_eq '["atok","tok"]' "$(jq -c '[.[].name]' <<<"$T_OUT")" "the list names the secrets, sorted"
assert_not_contains "$T_OUT" "$SECRET" "the list shows no value"
assert_rc 0 sbxctl secret rm atok
f=$(ls /var/lib/sbx/secrets/*/tok.cred 2>/dev/null | head -n 1)
assert_ne "" "$f" "the encrypted file exists"
[ -n "$f" ] && ! grep -qF "$SECRET" "$f" || _t_err "the stored file holds the value in clear"
assert_eq "700" "$(stat -c %a "$(dirname "$f")" 2>/dev/null)" "the tenant's directory mode"
t_run runuser -u nobody -- sbxctl secret list
assert_not_contains "$T_OUT" "tok" "another tenant does not see it"
t_run runuser -u nobody -- sbxctl secret rm tok
assert_eq 1 "$T_RC" "another tenant cannot remove it (NoSuchSecret)"
assert_contains "$T_OUT" "no secret named 'tok'"
t_run sbxctl secret add 'Bad/Name' < /dev/null
assert_eq 125 "$T_RC" "a bad name is refused"
t_pass

# ---------------------------------------------------------------------------------------------------
t_begin "--credential: only as a file, gone with the run; names in the record, no value anywhere"
printf '%s' "$INLINE" > "$D/inline.txt"
t_run sbxctl run -p $PROF --credential tok --credential "inline=@$D/inline.txt" -- sh -c '
  printf "file=%s\n" "$(cat "$CREDENTIALS_DIRECTORY/tok")"
  printf "inline=%s\n" "$(cat "$CREDENTIALS_DIRECTORY/inline")"
  if grep -qaF -- "$(cat "$CREDENTIALS_DIRECTORY/tok")" /proc/self/environ; then echo IN-ENVIRON; fi
  ls -l "$CREDENTIALS_DIRECTORY" | grep -c "^-r--------"
  echo "dir=$CREDENTIALS_DIRECTORY"'
assert_eq 0 "$T_RC" "the run"
assert_contains "$T_OUT" "file=$SECRET" "the stored secret as a file"
assert_contains "$T_OUT" "inline=$INLINE" "the value given by file descriptor"
assert_not_contains "$T_OUT" "IN-ENVIRON" "not in the environment"
run=$(last_run_id)
record_final "$run"   # sbxctl returned at Exited: the cleanup's facts come with the final record
rec=$(sbxctl show --json "$run")
assert_eq '["inline","tok"]' "$(jq -c .credentials.files <<<"$rec")" "the record names them"
assert_eq true "$(jq -r .cleanup.credentials_gone <<<"$rec")" "credentials_gone"
assert_eq true "$(jq -r .cleanup.completed <<<"$rec")" "cleanup completed"
assert_not_contains "$rec" "$SECRET" "the record has no value"
assert_not_contains "$rec" "$INLINE" "the record has no inline value"
unit=$(jq -r .unit <<<"$rec")
[ ! -e "/run/credentials/$unit" ] || _t_err "/run/credentials/$unit is still there"
[ -z "$(ls -A /run/sbx/credentials 2>/dev/null)" ] || _t_err "staged credentials left: $(ls /run/sbx/credentials)"
[ -z "$(ls -A /run/sbx/grants 2>/dev/null)" ] || _t_err "grant files left: $(ls /run/sbx/grants)"
assert_clean
t_pass

t_begin "--credential refusals: a name the profile does not allow, a secret that does not exist; nothing left"
t_run sbxctl run -p $NOGRANT --credential tok -- true
assert_eq 125 "$T_RC" "not in the profile's credentials.files"
assert_contains "$T_OUT" "does not let a run receive credential 'tok'"
t_run runuser -u nobody -- sbxctl run -p $PROF --credential tok -- true
assert_eq 125 "$T_RC" "another tenant has no secret 'tok'"
assert_contains "$T_OUT" "no secret named 'tok'"
t_run sbxctl run -p $PROF --credential "inline=@/nonexistent" -- true
assert_eq 125 "$T_RC" "an unreadable file"
t_run sbxctl run -p $PROF --credential tok --credential tok -- true
assert_eq 125 "$T_RC" "a name twice"
[ -z "$(ls -A /run/sbx/credentials 2>/dev/null)" ] || _t_err "staged credentials left"
assert_clean
t_pass

# ---------------------------------------------------------------------------------------------------
t_begin "the test's HTTPS servers (a network namespace of the test's own)"
if ! net_up; then
  t_fail "the test network did not come up: $(cat "$D/server.out" 2>/dev/null | tail -n 3)"
  t_summary
fi
t_pass

# fetch ARGS...: sbx-fetch inside a run of $PROF; output in T_OUT, the run's status in T_RC
fetch() { t_run sbxctl run -p $PROF -- sbx-fetch "$@"; }

t_begin "broker: a granted GET is performed with the secret; the response has no secret and no cookie"
fetch -i --grant repo-read "https://$SRV:8443/api/repos/acme/app?q=sbxtestquery"
assert_eq 0 "$T_RC" "sbx-fetch's status"
assert_contains "$T_OUT" "app ok" "the body"
assert_contains "$T_OUT" "200" "the status line"
assert_contains "$T_OUT" "X-Plain" "an ordinary header is kept"
assert_not_contains "$T_OUT" "$SECRET" "the secret echoed back is redacted (body and headers)"
assert_not_contains "$T_OUT" "Set-Cookie" "Set-Cookie is stripped"
assert_not_contains "$T_OUT" "X-Echo-Auth" "a header echoing the secret is dropped"
assert_eq 1 "$(server_saw $SRV:8443)" "the server got the secret once, in Authorization"
run=$(last_run_id)
record_final "$run"   # sbxctl returned at Exited: the cleanup's facts come with the final record
rec=$(sbxctl show --json "$run")
assert_eq '["repo-read","repo-write"]' "$(jq -c .credentials.grants <<<"$rec")" "the record names the grants"
assert_eq 1 "$(jq '.credentials.brokered | length' <<<"$rec")" "one operation in the record"
assert_eq "repo-read GET $SRV 8443 /api/repos/acme/ done 200" \
  "$(jq -r '.credentials.brokered[0] | "\(.grant) \(.method) \(.host) \(.port) \(.path_prefix) \(.verdict) \(.status)"' <<<"$rec")" \
  "the operation's fields"
assert_eq 16 "$(jq -r '.credentials.brokered[0].id | length' <<<"$rec")" "an opaque operation id"
assert_not_contains "$rec" "sbxtestquery" "no query string in the record"
assert_not_contains "$rec" "$SECRET" "no secret in the record"
assert_eq true "$(jq -r .cleanup.completed <<<"$rec")" "cleanup completed"
t_pass

t_begin "broker: a POST within the upload grant; its body cap"
t_run sbxctl run -p $PROF -- sh -c 'head -c 1000 /dev/zero > /tmp/b; sbx-fetch --grant repo-write -X POST --data-file /tmp/b https://'$SRV':8443/api/repos/acme/upload'
assert_eq 0 "$T_RC" "the POST"
assert_contains "$T_OUT" "got 1000 bytes"
t_run sbxctl run -p $PROF -- sh -c 'head -c 5000 /dev/zero > /tmp/b; sbx-fetch --grant repo-write -X POST --data-file /tmp/b https://'$SRV':8443/api/repos/acme/upload'
assert_eq 3 "$T_RC" "a body above max_body is refused"
assert_contains "$T_OUT" "refused (too-large)"
t_pass

t_begin "broker: refuses a method, a path, a host, a port, a grant outside the profile; .. and %2e"
n0=$(server_saw "")
for c in "POST|method|--grant repo-read -X POST https://$SRV:8443/api/repos/acme/app" \
         "path|url|--grant repo-read https://$SRV:8443/api/repos/other/app" \
         "host|url|--grant repo-read https://$OTHER:8443/api/repos/acme/app" \
         "port|url|--grant repo-read https://$SRV:443/api/repos/acme/app" \
         "scheme|url|--grant repo-read http://$SRV:8443/api/repos/acme/app" \
         "dotdot|url|--grant repo-read https://$SRV:8443/api/repos/acme/../other/app" \
         "pct|url|--grant repo-read https://$SRV:8443/api/repos/acme/%2e%2e/other/app" \
         "userinfo|url|--grant repo-read https://x@$SRV:8443/api/repos/acme/app" \
         "grant|no-grant|--grant admin https://$SRV:8443/api/repos/acme/app" \
         "header|header|--grant repo-read -H Authorization:x https://$SRV:8443/api/repos/acme/app"; do
  IFS='|' read -r what reason args <<<"$c"
  # shellcheck disable=SC2086
  fetch $args
  assert_eq 3 "$T_RC" "$what: refused"
  assert_contains "$T_OUT" "refused ($reason)" "$what: the reason"
done
assert_eq "$n0" "$(server_saw "")" "no refused request reached a server"
t_pass

t_begin "broker: a redirect to another host is returned, never followed with the secret"
fetch -i --grant repo-read "https://$SRV:8443/api/repos/acme/redirect"
assert_contains "$T_OUT" "302" "the redirect itself"
assert_eq 0 "$(server_saw $OTHER:8443)" "the other host never got the secret"
[ "$(jq -r 'select(.server == "'$OTHER':8443") | .path' "$D/server.log" | wc -l)" = 0 ] ||
  _t_err "the other host got a request at all"
t_pass

t_begin "broker: the secret of the run's own tenant; another tenant's run cannot use it"
printf '%s' "$NB_SECRET" | runuser -u nobody -- sbxctl secret add tok
t_run runuser -u nobody -- sbxctl run -p $PROF -- sbx-fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app"
assert_eq 0 "$T_RC" "nobody's run"
assert_not_contains "$T_OUT" "$SECRET" "nobody's run never sees root's secret"
assert_eq 1 "$(jq -r --arg a "Bearer $NB_SECRET" 'select(.authorization == $a) | .path' "$D/server.log" | wc -l)" \
  "nobody's request carried nobody's own secret"
runuser -u nobody -- sbxctl secret rm tok
t_run runuser -u nobody -- sbxctl run -p $PROF -- sbx-fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app"
assert_eq 3 "$T_RC" "without a secret of its own: refused"
assert_contains "$T_OUT" "refused (no-secret)"
t_pass

t_begin "broker: a tenant's next request goes over the connection its last one left open, another tenant's never"
# (the server logs each request's client port: one connection, one port)
peer() { jq -r --arg p "/api/repos/acme/app?conn=$1" 'select(.path == $p) | .peer' "$D/server.log"; }
fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app?conn=1"
assert_eq 0 "$T_RC" "root's first request"
t_run sbxctl run -p $PROF -- sh -c "sbx-fetch --grant repo-read 'https://$SRV:8443/api/repos/acme/app?conn=2' &&
  sbx-fetch --grant repo-read 'https://$SRV:8443/api/repos/acme/app?conn=3'"
assert_eq 0 "$T_RC" "root's next run, two requests"
printf '%s' "$NB_SECRET" | runuser -u nobody -- sbxctl secret add tok
t_run runuser -u nobody -- sbxctl run -p $PROF -- sbx-fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app?conn=4"
assert_eq 0 "$T_RC" "nobody's request"
runuser -u nobody -- sbxctl secret rm tok
fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app?conn=5"
assert_eq 0 "$T_RC" "root's request after nobody's"
p1=$(peer 1)
assert_match "$p1" '^[0-9.]+:[0-9]+$' "the first request's connection is in the server's log"
assert_eq "$p1" "$(peer 2)" "another run of the same tenant: the connection the first request left open"
assert_eq "$p1" "$(peer 3)" "and its next request too"
assert_ne "$p1" "$(peer 4)" "another tenant's request: a connection of its own"
assert_eq "$p1" "$(peer 5)" "root's connection, still root's after nobody's request"
assert_eq 1 "$(jq -r --arg a "Bearer $NB_SECRET" 'select(.path == "/api/repos/acme/app?conn=4" and .authorization == $a) | .path' \
  "$D/server.log" | wc -l)" "nobody's request carried nobody's secret"
assert_eq 4 "$(jq -r --arg a "Bearer $SECRET" 'select((.path | startswith("/api/repos/acme/app?conn=")) and .authorization == $a) | .path' \
  "$D/server.log" | wc -l)" "root's four requests carried root's secret"
t_pass

t_begin "broker: a process outside any run, and after the run ended, is refused"
# a request from the host itself (not in a run's cgroup), while a run with grants is running
sbx_run_bg "$D/bg.out" -p $PROF -- sleep 30
grants_file=/run/sbx/grants/$RUN.json
[ -e "$grants_file" ] || _t_err "the running run has no grant file"
t_run env SBX_BROKER=/run/sbx/broker/socket sbx-fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app"
assert_eq 3 "$T_RC" "the host's request is refused"
assert_contains "$T_OUT" "refused (no-run)"
kill -INT "$CPID"; wait "$CPID" 2>/dev/null
[ ! -e "$grants_file" ] || _t_err "the grant file outlived the run"
# a handle kept: a process of a run connects, and sends its request only after the broker can no longer
# find the run's grants (as after the run's end); the broker checks at the request, not at the connect
sbx_run_bg "$D/bg3.out" -p $PROF -- python3 -c '
import json, os, socket, time
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["SBX_BROKER"])
print("connected", flush=True)
time.sleep(8)
s.sendall((json.dumps({"grant": "repo-read", "method": "GET", "url": "https://'$SRV':8443/api/repos/acme/app"}) + "\n").encode())
print("reply", s.recv(4096).decode().strip(), flush=True)'
for _ in $(seq 100); do grep -q connected "$D/bg3.out" && break; sleep 0.1; done
mv "/run/sbx/grants/$RUN.json" "$D/held.json"
wait "$CPID"
assert_contains "$(cat "$D/bg3.out")" '"reason":"no-run"' "a request on a connection made before is judged when it arrives"
cp_before=$(jq -s 'length' "$D/server.log")
# replay: the grant file of an ended run put back does not make the host a run
grants_file=/run/sbx/grants/$RUN.json
cp "$D/held.json" "$grants_file" && chmod 0600 "$grants_file"
t_run env SBX_BROKER=/run/sbx/broker/socket sbx-fetch --grant repo-read "https://$SRV:8443/api/repos/acme/app"
assert_eq 3 "$T_RC" "a replayed grant file does not help a process outside the run"
rm -f "$grants_file"
assert_eq "$cp_before" "$(jq -s 'length' "$D/server.log")" "nothing reached the server"
assert_clean
t_pass

t_begin "broker down: the workload gets a clear error, the run goes on"
systemctl stop sbx-broker.socket sbx-broker.service
t_run sbxctl run -p $PROF -- sh -c 'sbx-fetch --grant repo-read https://'$SRV':8443/api/repos/acme/app; echo "fetch=$?"; echo still-running'
assert_eq 0 "$T_RC" "the run"
assert_contains "$T_OUT" "fetch=4" "sbx-fetch: broker unreachable"
assert_contains "$T_OUT" "cannot reach the broker" "its message"
assert_contains "$T_OUT" "still-running"
systemctl start sbx-broker.socket
t_run sbxctl run -p $NOGRANT -- sh -c 'echo "broker=${SBX_BROKER:-unset}"; sbx-fetch --grant x https://'$SRV':8443/; echo "fetch=$?"'
assert_contains "$T_OUT" "broker=unset" "a run without grants has no broker"
assert_contains "$T_OUT" "fetch=4"
t_pass

t_begin "no secret in the journal, any process's environment or command line, or sbxctl's output"
t_run journalctl --since "$T0" -o cat
assert_not_contains "$T_OUT" "$SECRET" "journal"
assert_not_contains "$T_OUT" "$INLINE" "journal (inline value)"
sbx_run_bg "$D/bg2.out" -p $PROF --credential tok -- sleep 30
# (the pattern from a file: grep's own command line must not hold it)
printf '%s\n' "$SECRET" > "$D/pattern"
if grep -laF -f "$D/pattern" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -q .; then
  _t_err "a process's environment or command line holds the secret"
fi
assert_eq 0 "$(systemctl show -P LimitCORE "$(record_get "$RUN" .unit)")" "no core dump of the run"
assert_eq 0 "$(systemctl show -P LimitCORE sbx-broker.service)" "no core dump of the broker"
tf=/run/systemd/transient/$(record_get "$RUN" .unit)
[ -e "$tf" ] && grep -qF -- "$SECRET" "$tf" && _t_err "the unit's file holds the secret"
kill -INT "$CPID"; wait "$CPID" 2>/dev/null
assert_clean
t_pass

t_summary
