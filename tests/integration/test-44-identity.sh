#!/usr/bin/env bash
# The run's user has a name (docs/sandboxes.md, "The run's user"): inside a run and a sandbox the run's
# uid and gid resolve through the ordinary NSS calls to "sbx" (home /home/sbx), root and nobody as
# usual, and nothing else: not a concurrent run's dynamic user, not the host's users. USER and LOGNAME
# say sbx. ssh starts and reaches an sshd's authentication (on a test network of this file's own).
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
. "$(dirname "$0")/testnet.sh"
t_require_systemd || t_summary
W=$(mktemp -d /var/tmp/sbxt-ident.XXXXXX); t_on_exit "rm -rf '$W'"
SBS=()
t_on_exit 'for s in "${SBS[@]}"; do sbxctl rm "$s" >/dev/null 2>&1; done'
# line N of T_OUT
line() { printf '%s\n' "$T_OUT" | sed -n "${1}p"; }

t_begin "whoami, id, Python's pwd and grp, the environment: the run's uid and gid are sbx"
assert_rc 0 sbxctl run -- sh -c 'whoami; id -un; id -gn; id -u; id -g; echo "HOME=$HOME USER=$USER LOGNAME=$LOGNAME"
python3 -c "import grp, os, pwd; p = pwd.getpwuid(os.getuid()); print(p.pw_name, p.pw_uid, p.pw_gid, p.pw_dir, p.pw_shell); print(grp.getgrgid(os.getgid()).gr_name, pwd.getpwnam(\"sbx\").pw_uid)"'
uid=$(line 4)
assert_match "$uid" '^[0-9]+$' "the run's uid"
[ "${uid:-0}" -ge 61184 ] && [ "${uid:-0}" -le 65519 ] || _t_err "uid $uid is not a dynamic user's"
assert_eq "sbx" "$(line 1)" "whoami"
assert_eq "sbx" "$(line 2)" "id -un"
assert_eq "sbx" "$(line 3)" "id -gn"
assert_eq "$uid" "$(line 5)" "a dynamic user's gid is its uid"
assert_eq "HOME=/home/sbx USER=sbx LOGNAME=sbx" "$(line 6)" "HOME, USER, LOGNAME"
assert_eq "sbx $uid $uid /home/sbx /bin/sh" "$(line 7)" "pwd.getpwuid(os.getuid())"
assert_eq "sbx $uid" "$(line 8)" "grp.getgrgid(os.getgid()), pwd.getpwnam('sbx')"
assert_not_contains "$T_OUT" "no name" "a name for every id asked"

t_begin "root and nobody resolve as usual; other ids do not"
assert_rc 0 sbxctl run -- sh -c 'getent passwd root 0 nobody 65534; getent group root nogroup; getent passwd 1000 daemon; echo "rc=$?"; getent group 1000 sbx-nonexistent; echo "rc=$?"'
assert_contains "$T_OUT" "root:x:0:0:root:/root:"
assert_contains "$T_OUT" "nobody:x:65534:65534:"
assert_contains "$T_OUT" "root:x:0:"
assert_contains "$T_OUT" "nogroup:x:65534:"
assert_eq "rc=2" "$(printf '%s\n' "$T_OUT" | grep '^rc=' | head -n 1)" "uid 1000 and daemon are unknown"
assert_eq "rc=2" "$(printf '%s\n' "$T_OUT" | grep '^rc=' | tail -n 1)" "gid 1000 is unknown"

t_begin "Node's os.userInfo()"
if command -v node >/dev/null 2>&1; then
  assert_rc 0 sbxctl run -- node -e 'const u = require("os").userInfo(); console.log(u.username, u.uid, u.homedir, u.shell)'
  assert_match "$T_OUT" "^sbx [0-9]+ /home/sbx /bin/sh" "os.userInfo()"
else
  t_skip "node is not installed (scripts/install-deps.sh)"
fi

t_begin "getent passwd and group inside a run list root, nobody and sbx: no concurrent run's user, no host user"
sbx_run_bg "$W/other.out" -- sh -c 'id -u; exec sleep 60'
other_uid=""
for _ in $(seq 100); do other_uid=$(sed -n '1{/^[0-9][0-9]*$/p}' "$W/other.out"); [ -n "$other_uid" ] && break; sleep 0.1; done
assert_match "$other_uid" '^[0-9]+$' "the concurrent run's uid"
other_unit=$(record_get "$RUN" .unit)
other_user=$(systemctl show -P User "$other_unit" 2>/dev/null)
t_log "concurrent run $RUN: uid $other_uid, dynamic user '${other_user:-?}'"
# a host user the runs would see in the host's /etc/passwd (not root or nobody)
host_user=$(awk -F: '$1 != "root" && $1 != "nobody" { print $1; exit }' /etc/passwd)
assert_rc 0 sbxctl run -- sh -c 'getent passwd; echo --; getent group; echo --; id -u; getent passwd '"$other_uid"'; echo "rc=$?"'
mine=$(printf '%s\n' "$T_OUT" | sed -n '/^--$/,$p' | grep -E '^[0-9]+$' | head -n 1)
assert_ne "$other_uid" "$mine" "two concurrent runs have two users"
assert_eq "root nobody sbx" "$(printf '%s\n' "$T_OUT" | sed -n '1,/^--$/p' | grep -v '^--$' | cut -d: -f1 | tr '\n' ' ' | sed 's/ $//')" "getent passwd"
assert_eq "root nogroup nobody sbx" "$(printf '%s\n' "$T_OUT" | sed -n '/^--$/,/^--$/p' | grep -v '^--$' | cut -d: -f1 | tr '\n' ' ' | sed 's/ $//')" "getent group"
assert_contains "$T_OUT" "sbx:!*:$mine:$mine:sbx:/home/sbx:/bin/sh" "the run's own entry"
assert_not_contains "$T_OUT" ":$other_uid:" "the concurrent run's uid"
assert_eq "rc=2" "$(printf '%s\n' "$T_OUT" | grep '^rc=')" "getent passwd of the concurrent run's uid"
assert_not_contains "$T_OUT" "$RUN" "the concurrent run's id"
[ -n "$other_user" ] && assert_not_contains "$T_OUT" "$other_user" "the concurrent run's dynamic user name"
[ -n "$host_user" ] && assert_not_contains "$T_OUT" "$host_user:" "the host's user $host_user"
# the host's other files that list its users are hidden too
assert_rc 0 sbxctl run -- sh -c 'for f in /etc/passwd- /etc/group- /etc/subuid /etc/subgid; do cat "$f" 2>/dev/null; done; echo end'
assert_eq "end" "$T_OUT" "/etc/passwd-, /etc/group-, /etc/subuid, /etc/subgid read nothing"
kill "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null

t_begin "a sandbox's commands are sbx too, every exec"
assert_rc 0 sbxctl create --detach --name sbt-ident
sb=$T_OUT; SBS+=("$sb")
assert_rc 0 sbxctl exec "$sb" -- sh -c 'whoami; id -gn; echo "$USER $LOGNAME $HOME"; getent passwd | cut -d: -f1 | tr "\n" " "'
assert_eq "sbx
sbx
sbx sbx /home/sbx
root nobody sbx " "$T_OUT" "whoami, id -gn, the environment, getent passwd"
assert_rc 0 sbxctl exec "$sb" -- whoami
assert_eq "sbx" "$T_OUT" "a second exec"
assert_rc 0 sbxctl rm "$sb"

t_begin "the gVisor tier: the command is uid 0 of gVisor's kernel, named root, and USER says so"
if command -v runsc >/dev/null 2>&1 && [ -e /usr/lib/sbx/profiles.d/untrusted.json ]; then
  assert_rc 0 sbxctl run -p untrusted -- sh -c 'whoami; id -gn; echo "$USER $LOGNAME $HOME"; getent passwd | cut -d: -f1 | tr "\n" " "'
  assert_eq "root
root
root root /home/sbx
root nobody " "$T_OUT" "whoami, id -gn, the environment, getent passwd"
else
  t_skip "runsc or the untrusted profile is not installed"
fi

# ---- ssh: the client starts, and reaches an sshd's authentication ----------------------------------------
t_begin "ssh -V and ssh to an sshd on a test network: the key stage, never 'No user exists'"
SSHD=/usr/sbin/sshd
if ! command -v ssh >/dev/null 2>&1 || [ ! -x "$SSHD" ]; then
  t_skip "ssh or sshd is not installed (scripts/install-deps.sh: openssh-server)"
elif ! testnet_up; then
  t_on_exit testnet_down
  t_fail "the test network: $TN_ERROR"
else
  t_on_exit testnet_down
  assert_rc 0 sbxctl run -- ssh -V
  assert_contains "$T_OUT" "OpenSSH" "ssh -V"
  # sshd in the test network's namespace, on a port of its own, with a host key made here
  made_privsep=""
  [ -d /run/sshd ] || { mkdir -m 0755 /run/sshd && made_privsep=1; }
  [ -n "$made_privsep" ] && t_on_exit "rmdir /run/sshd 2>/dev/null"
  ssh-keygen -q -t ed25519 -N '' -f "$W/host_key" >/dev/null
  cat > "$W/sshd_config" <<EOF
Port 2222
ListenAddress $TN_SRV
HostKey $W/host_key
PidFile none
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
AuthorizedKeysFile none
EOF
  ip netns exec "$TN_NS" timeout -k 5 300 "$SSHD" -D -e -f "$W/sshd_config" > "$W/sshd.log" 2>&1 &
  SSHD_PID=$!
  t_on_exit "kill $SSHD_PID 2>/dev/null"
  for _ in $(seq 100); do ip netns exec "$TN_NS" ss -Htln 2>/dev/null | grep -q ":2222 " && break; sleep 0.1; done
  ip netns exec "$TN_NS" ss -Htln 2>/dev/null | grep -q ":2222 " || _t_err "sshd did not listen: $(tail -n 5 "$W/sshd.log")"
  t_add_profile sbxtident <<EOF
{
  "version": 1,
  "description": "identity test profile: ssh to the test network's sshd",
  "network": { "mode": "allowlist", "destinations": [ { "address": "$TN_SRV", "ports": [2222] } ] },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "5min" }
}
EOF
  assert_rc 0 sbxctl profile reload
  # BatchMode: no password prompt, so the server's answer to the key stage ends it
  assert_rc 255 sbxctl run -p sbxtident -- ssh -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 "sbx@$TN_SRV" true
  assert_not_contains "$T_OUT" "No user exists" "ssh knows the run's user"
  assert_contains "$T_OUT" "Permission denied (publickey" "ssh reached the server's authentication"
  # and without a user on the command line: ssh takes the name of the run's uid
  assert_rc 255 sbxctl run -p sbxtident -- ssh -v -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 "$TN_SRV" true
  assert_contains "$T_OUT" "Authenticating to $TN_SRV:2222 as 'sbx'" "ssh's default user"
  assert_contains "$T_OUT" "Permission denied (publickey"
  assert_contains "$(cat "$W/sshd.log")" "Invalid user sbx from" "sshd saw the user sbx"
fi

t_summary
