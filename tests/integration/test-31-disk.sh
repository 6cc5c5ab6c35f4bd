#!/usr/bin/env bash
# The disk cap (resources.disk): HOME, /tmp, /var/tmp and /dev/shm of a run are directories of one tmpfs
# of that size, its space, mounted on the host by sbx-space@RUN.service (docs/security.md). Writing past
# the cap in all four together fails with ENOSPC, the record says the space was full, and nothing of the
# space is left after the run: not after a failed start, not for a sandbox, not for a pooled run.
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
PY=/usr/bin/python3
RUNPROF=/run/sbx/profiles.d
PROF=sbxtest_disk
POOLED=sbxtest_diskpool
BAD=sbxtest_diskbad
CAP=$((16 << 20))
cleanup_profiles() {
  rm -f "$RUNPROF/$PROF.json" "$RUNPROF/$POOLED.json" "$RUNPROF/$BAD.json"
  rmdir "$RUNPROF" 2>/dev/null
  systemctl daemon-reload
}
t_on_exit cleanup_profiles
mkdir -p "$RUNPROF"

# write_profile NAME [EXTRA-JSON]: no network, a disk cap of 16M, memory well above it
write_profile() {
  cat > "$RUNPROF/$1.json" <<EOF
{
  "version": 1,
  "description": "sbx test: a small disk",
  "network": { "mode": "none" },
  "resources": { "memory": "256M", "tasks": 64, "wall_time": "60s", "disk": "16M" }${2:+, $2}
}
EOF
}
write_profile "$PROF"
write_profile "$BAD" '"files": { "read_only": [ "/nonexistent-sbxtest-disk" ] }'
systemctl daemon-reload

# fills /tmp, /var/tmp, HOME and /dev/shm in turn, 1 MiB at a time, until a write fails
FILL='
import errno, os
total, err = 0, None
chunk = b"x" * (1 << 20)
for d in ("/tmp", "/var/tmp", os.environ["HOME"], "/dev/shm"):
    with open(os.path.join(d, "fill"), "wb", buffering=0) as f:
        for i in range(6):
            try:
                total += f.write(chunk)
            except OSError as e:
                err = e.errno
                break
    if err:
        break
print("TOTAL", total, "ERRNO", err, errno.errorcode.get(err))
'

# no space, no mount of one, no space unit left on the host
space_leftovers() {
  find /run/sbx/space -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/space /'
  findmnt -rn -o TARGET | grep '^/run/sbx/space' | sed 's/^/mount /'
  systemctl list-units --all --no-legend --plain 'sbx-space@*' | awk '{print "unit " $1}'
  true
}
assert_no_space() {
  local i left
  for i in $(seq 50); do
    left=$(space_leftovers)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  _t_err "${1:-after the run} space leftovers: $(echo "$left" | tr '\n' ' ')"
}

t_begin "one cap for HOME, /tmp, /var/tmp and /dev/shm together: past it ENOSPC; the record says it was full"
assert_rc 0 sbxctl run -p "$PROF" -- $PY -c "$FILL"
assert_contains "$T_OUT" "ERRNO 28 ENOSPC"
total=$(printf '%s' "$T_OUT" | sed -n 's/^TOTAL \([0-9]*\).*/\1/p')
# all four places could take 6 MiB each (24 MiB) were each its own tmpfs of 16 MiB
[ -n "$total" ] && [ "$total" -le "$CAP" ] && [ "$total" -gt $((CAP - (2 << 20))) ] ||
  _t_err "wrote '$total' bytes, expected just under $CAP"
id=$(last_run_id)
assert_eq "$CAP" "$(record_get "$id" .disk.max_bytes)" "disk.max_bytes"
assert_eq true "$(record_get "$id" .disk.full)" "disk.full"
used=$(record_get "$id" .disk.used_bytes)
[ "$used" -gt $((CAP - (2 << 20))) ] && [ "$used" -le "$CAP" ] || _t_err "disk.used_bytes $used"
assert_eq true "$(record_get "$id" .cleanup.space_gone)" "cleanup.space_gone"
assert_eq true "$(record_get "$id" .cleanup.completed)" "cleanup.completed"
assert_rc 0 sbxctl show "$id"
assert_contains "$T_OUT" "full"
assert_no_space
assert_clean

t_begin "the four places are one tmpfs of the cap, the run's space on the host, not the host's disk"
assert_rc 0 sbxctl run -p "$PROF" -- sh -c 'stat -f -c "%T %b %S" /tmp /var/tmp "$HOME" /dev/shm; stat -c %d /tmp /var/tmp "$HOME" /dev/shm | sort -u | wc -l'
assert_eq "tmpfs 4096 4096
tmpfs 4096 4096
tmpfs 4096 4096
tmpfs 4096 4096
1" "$T_OUT" "statfs of the four, and their number of devices"
id=$(last_run_id)
assert_eq false "$(record_get "$id" .disk.full)" "disk.full of a run that wrote nothing"
# while it runs, what it writes is in its space on the host (and nowhere else)
sbx_run_bg /var/tmp/sbxtest-disk.out -p "$PROF" -- sh -c 'echo mark > /tmp/m; echo mark > /var/tmp/v; echo mark > ~/h; sleep 30'
sleep 1
assert_eq mark "$(cat "/run/sbx/space/$RUN/tmp/m" 2>&1)" "/tmp in the space"
assert_eq mark "$(cat "/run/sbx/space/$RUN/var-tmp/v" 2>&1)" "/var/tmp in the space"
assert_eq mark "$(cat "/run/sbx/space/$RUN/home/h" 2>&1)" "HOME in the space"
assert_eq "tmpfs $CAP" "$(findmnt -rn -o FSTYPE,SIZE -b "/run/sbx/space/$RUN")" "the space's mount"
assert_eq active "$(systemctl is-active "sbx-space@$RUN.service")" "the space unit"
assert_eq 700 "$(stat -c %a /run/sbx/space)" "mode of /run/sbx/space (no one else enters)"
# systemd 252 still makes the PrivateTmp= directories DynamicUser= implies, but the binds win: nothing
# of the run is in them
left=$(find /tmp/systemd-private-*"sbx-$PROF-$RUN"*/tmp /var/tmp/systemd-private-*"sbx-$PROF-$RUN"*/tmp \
       -mindepth 1 2>/dev/null)
[ -z "$left" ] || _t_err "the run wrote to its PrivateTmp= directories on the host: $left"
sbxctl stop "$RUN" >/dev/null 2>&1
wait "$CPID" 2>/dev/null
assert_eq true "$(record_get "$RUN" .cleanup.space_gone)" "space_gone after a stopped run"
rm -f /var/tmp/sbxtest-disk.out
assert_no_space
assert_clean

t_begin "a failed start leaves nothing: the space cannot be made, or the unit fails after it was"
mkdir -p /run/sbx/space
mount -t tmpfs -o ro,size=1M tmpfs /run/sbx/space
assert_rc 123 sbxctl run -p "$PROF" -- true
umount /run/sbx/space
id=$(last_run_id)
assert_eq start-failed "$(record_get "$id" .stop_reason)" "stop reason"
assert_contains "$(record_get "$id" .error)" "the run's space could not be set up"
assert_no_space "after a space that could not be made"
assert_clean
assert_rc 123 sbxctl run -p "$BAD" -- true
id=$(last_run_id)
assert_eq start-failed "$(record_get "$id" .stop_reason)" "stop reason"
assert_eq true "$(record_get "$id" .cleanup.space_gone)" "cleanup.space_gone"
assert_no_space "after a unit that failed with its space made"
assert_clean

t_begin "the helper refuses a run whose four places are not one tmpfs of the cap"
# a unit of the profile (its drop-in: the fixed hardening) without its space, then with a sized tmpfs
# HOME only (what systemd 252 makes of a TemporaryFileSystem= per place: /tmp stays PrivateTmp=)
helper_status() {   # UNIT SYSTEMD-RUN-OPTIONS...: the helper's status text in a unit of the profile
  local unit=$1 i; shift
  systemd-run -q --unit "$unit" "$@" /usr/libexec/sbx/sbx-exec --expect-disk-max="$CAP"
  for i in $(seq 300); do
    [ "$(systemctl show -P ActiveState "$unit")" = failed ] && break
    sleep 0.1
  done
  systemctl show -P StatusText "$unit"
  systemctl reset-failed "$unit" 2>/dev/null
}
st=$(helper_status "sbx-$PROF-00000000000000000000000000000001.service")
assert_contains "$st" "refused the disk cap is not in force: /home/sbx: No such file or directory"
st=$(helper_status "sbx-$PROF-00000000000000000000000000000002.service" \
     -p "TemporaryFileSystem=/home/sbx:mode=0777,size=$CAP")
assert_contains "$st" "refused the disk cap is not in force: /tmp "
assert_clean

t_begin "a daemon-reload while a run has its space: the space still goes with the run"
sbx_run_bg /var/tmp/sbxtest-disk.out -p "$PROF" -- sleep 30
systemctl daemon-reload
assert_eq active "$(systemctl is-active "sbx-space@$RUN.service")" "the space unit after the reload"
sbxctl stop "$RUN" >/dev/null 2>&1
wait "$CPID" 2>/dev/null
rm -f /var/tmp/sbxtest-disk.out
assert_no_space "after a run across a daemon-reload"
assert_clean

t_begin "a sandbox has its space; its commands share it; it goes with the sandbox"
assert_rc 0 sbxctl create --detach -p "$PROF"
sb=$T_OUT
t_on_exit "sbxctl rm '$sb' >/dev/null 2>&1"
assert_rc 0 sbxctl exec "$sb" -- $PY -c "$FILL"
assert_contains "$T_OUT" "ERRNO 28 ENOSPC"
assert_rc 0 sbxctl exec "$sb" -- sh -c 'rm /tmp/fill; df -B1 --output=size /var/tmp | tail -n 1'
assert_eq "$CAP" "$(echo $T_OUT)" "size of the sandbox's space"
assert_rc 0 sbxctl rm "$sb"
for i in $(seq 100); do [ "$(record_get "$sb" .state)" = finished ] && break; sleep 0.1; done
assert_eq "$CAP" "$(record_get "$sb" .disk.max_bytes)" "disk.max_bytes"
assert_eq true "$(record_get "$sb" .cleanup.space_gone)" "cleanup.space_gone"
assert_no_space "after the sandbox"
assert_clean

t_begin "a pooled unit has its space before its run; the run's record has it"
write_profile "$POOLED" '"pool": { "size": 1 }'
systemctl daemon-reload
assert_rc 0 sbxctl profile reload
end=$((SECONDS + 120)); pooled=; pid=
while [ "$SECONDS" -lt "$end" ]; do
  pooled=$(systemctl list-units --all --no-legend --plain "sbx-$POOLED-*.service" | grep 'sbx pool unit' |
           awk '{print $1}' | head -n 1)
  pid=${pooled#sbx-$POOLED-}; pid=${pid%.service}
  [ -n "$pooled" ] && [ "$(systemctl show -P StatusText "$pooled")" = "waiting for a run" ] && break
  sleep 0.5
done
[ -n "$pid" ] || _t_err "no pooled unit waits"
assert_eq active "$(systemctl is-active "sbx-space@$pid.service")" "the pooled unit's space unit"
assert_eq "tmpfs $CAP" "$(findmnt -rn -o FSTYPE,SIZE -b "/run/sbx/space/$pid")" "the pooled unit's space"
sleep 0.5
assert_rc 0 sbxctl run -p "$POOLED" -- $PY -c "$FILL"
assert_contains "$T_OUT" "ERRNO 28 ENOSPC"
id=$(last_run_id)
assert_eq pool "$(record_get "$id" .start)" "record start"
assert_eq "$pid" "$id" "the run took the pooled unit's id, and its space"
assert_eq true "$(record_get "$id" .disk.full)" "disk.full"
assert_eq true "$(record_get "$id" .cleanup.space_gone)" "cleanup.space_gone"
# the pool off: its waiting unit and space go
write_profile "$POOLED" '"pool": { "size": 0 }'
assert_rc 0 sbxctl profile reload
end=$((SECONDS + 120))
while systemctl list-units --all --no-legend --plain "sbx-$POOLED-*.service" | grep -q .; do
  [ "$SECONDS" -lt "$end" ] || { _t_err "the pooled unit did not stop"; break; }
  sleep 0.5
done
assert_no_space "after the pool was turned off"
assert_clean "after the pool"

t_begin "sbxd removes a space left without its unit when it starts"
left=0123456789abcdef0123456789abcdef
mkdir -p "/run/sbx/space/$left"
mount -t tmpfs -o size=1M tmpfs "/run/sbx/space/$left"
systemctl restart sbxd
assert_no_space "after sbxd's start"
t_summary
