#!/usr/bin/env bash
# Fail closed: the exec helper refuses to run the command when a promised limit is not in force.
# These drive /usr/libexec/sbx/sbx-exec directly through systemd-run with a weakened unit.
# lane: both
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
BASE=(-p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p SystemCallFilter=@system-service
      -p "SystemCallFilter=~io_uring_setup" -p SystemCallErrorNumber=EPERM
      -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -p PrivateNetwork=yes
      -p MemoryMax=100M -p MemorySwapMax=0 -p TasksMax=50)

# run_helper UNIT PROPS... -- HELPER-ARGS...: helper_unit (sbx.sh) with a command that exits 7
run_helper() { helper_unit "$1" 'exit 7' "${@:2}"; }

t_begin "control: with every promise kept the helper runs the command"
out=$(run_helper sbxt-fc0 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=7 status=finished" "helper result"

t_begin "refuses when MemoryMax is not what was promised"
if t_require_controller memory; then
  out=$(run_helper sbxt-fc1 "${BASE[@]}" -- --expect-memory-max=52428800 --expect-tasks-max=50 --expect-network=none)
  assert_contains "$out" "rc=123 status=refused MemoryMax is 104857600 in the kernel, expected 52428800"
fi

t_begin "refuses when TasksMax is not in force"
if t_require_controller pids; then
  out=$(run_helper sbxt-fc2 "${BASE[@]}" -p TasksMax=infinity -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
  assert_contains "$out" "rc=123 status=refused TasksMax is"
fi

t_begin "refuses when the network namespace is not private"
# give the host namespace an interface besides lo, so that a shared namespace is visible as one
ip link show sbxtdummy0 >/dev/null 2>&1 || ip link add sbxtdummy0 type dummy 2>/dev/null
t_on_exit "ip link del sbxtdummy0 2>/dev/null"
if [ "$(ls /sys/class/net | grep -vc '^lo$')" -gt 0 ]; then
  out=$(run_helper sbxt-fc3 "${BASE[@]}" -p PrivateNetwork=no -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
  assert_contains "$out" "rc=123 status=refused the network namespace is not private"
else
  t_skip "this testbed has no network interface besides lo, so a shared namespace looks private"
fi

t_begin "refuses to run as root or with capabilities"
out=$(run_helper sbxt-fc4 -p MemoryMax=100M -p NotifyAccess=main -- --expect-network=none)
assert_contains "$out" "rc=123 status=refused running as root"
out=$(run_helper sbxt-fc6 -p DynamicUser=yes -p NoNewPrivileges=yes -p SystemCallFilter=@system-service -p AmbientCapabilities=CAP_NET_BIND_SERVICE -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -- --expect-network=none)
assert_contains "$out" "rc=123 status=refused the capability bounding set is not empty"

t_begin "only the network modes none and egress exist for the helper"
for m in host public; do
  out=$(run_helper sbxt-fc5$m "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=$m)
  assert_contains "$out" "rc=123 status=" "--expect-network=$m"
  assert_not_contains "$out" "status=finished" "--expect-network=$m"
done

t_begin "refuses when the run's egress policy is not in place (a unit sbxd never registered)"
# a plain unit in a profile's slice below sbx.slice: sbx's egress programs judge its sockets but no
# policy of a run was put in place for it, so everything is denied and the helper gives up after 10 s
start=$(date +%s)
out=$(run_helper sbxt-fc16 "${BASE[@]}" --slice=sbx-offline.slice -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-egress)
took=$(( $(date +%s) - start ))
assert_contains "$out" "rc=123 status=refused the run's egress policy was not put in place within 10s"
[ "$took" -ge 9 ] || _t_err "refused after ${took}s, before the 10 s wait was over"
# the same outside sbx.slice: nothing judges its sockets at all
out=$(run_helper sbxt-fc17 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-egress)
assert_contains "$out" "rc=123 status=refused sbx's egress programs are not in force (a connect() to 169.254.169.254 was"

t_begin "refuses a run of network mode egress in the host's network namespace"
HOST_NETNS=$(stat -L -c %i /proc/self/ns/net)
out=$(run_helper sbxt-fc18 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=egress --expect-netns-not=$HOST_NETNS)
assert_contains "$out" "rc=7 status=finished" "control: a namespace of its own"
out=$(run_helper sbxt-fc19 "${BASE[@]}" -p PrivateNetwork=no -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=egress --expect-netns-not=$HOST_NETNS)
assert_contains "$out" "rc=123 status=refused the run is in the host's network namespace, not one of its own"

t_begin "refuses without the promised syscall filter"
# DynamicUser= alone already installs a small seccomp filter (RestrictSUIDSGID=): the helper probes
# for sbx's own rules, not just for any filter
out=$(run_helper sbxt-fc7 -p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -- --expect-network=none)
assert_contains "$out" "rc=123 status=refused the syscall filter is not the one promised"
out=$(run_helper sbxt-fc8 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=7 status=finished" "with io_uring denied"

t_begin "refuses when the CPU quota is not what was promised"
if t_require_controller cpu; then
  out=$(run_helper sbxt-fc9 "${BASE[@]}" -p CPUQuota=50% -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-cpu-quota=50)
  assert_contains "$out" "rc=7 status=finished" "control: 50% promised and set"
  out=$(run_helper sbxt-fc10 "${BASE[@]}" -p CPUQuota=80% -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-cpu-quota=50)
  assert_contains "$out" "rc=123 status=refused CPUQuota is '80000 100000' in the kernel, expected 50%"
  out=$(run_helper sbxt-fc10b "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-cpu-quota=50)
  assert_contains "$out" "rc=123 status=refused CPUQuota cannot be enforced" "no quota at all"
fi

t_begin "refuses when the bound directory is not the one sbxd checked"
# sbxd checks the workspace and binds it by path; a parent swapped for a symlink in between would
# bind another directory. The helper compares device and inode with what sbxd saw.
d=$(mktemp -d /var/tmp/sbxt-bound.XXXXXX); t_on_exit "rm -rf $d"
other=$(mktemp -d /var/tmp/sbxt-other.XXXXXX); t_on_exit "rm -rf $other"
chmod 0777 "$d" "$other"
want=$(stat -c '%d:%i' "$d")
out=$(run_helper sbxt-fc11 "${BASE[@]}" -p "BindPaths=$d:/home/sbx/workspace" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --workspace=bound "--expect-dir=/home/sbx/workspace:$want")
assert_contains "$out" "rc=7 status=finished" "control: the checked directory is bound"
out=$(run_helper sbxt-fc12 "${BASE[@]}" -p "BindPaths=$other:/home/sbx/workspace" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --workspace=bound "--expect-dir=/home/sbx/workspace:$want")
assert_contains "$out" "rc=123 status=refused /home/sbx/workspace is not the directory sbxd checked"

t_begin "refuses without the profile's drop-in, or with a stale one"
out=$(run_helper sbxt-fc13 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-profile-digest=sha256:00)
assert_contains "$out" "rc=123 status=refused the profile's drop-in is missing"
out=$(run_helper sbxt-fc14 "${BASE[@]}" -p Environment=SBX_PROFILE_DIGEST=sha256:11 -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-profile-digest=sha256:00)
assert_contains "$out" "rc=123 status=refused the profile changed since the last daemon-reload"
out=$(run_helper sbxt-fc15 "${BASE[@]}" -p Environment=SBX_PROFILE_DIGEST=sha256:00 -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none --expect-profile-digest=sha256:00)
assert_contains "$out" "rc=7 status=finished" "control: the digests match"

t_summary
