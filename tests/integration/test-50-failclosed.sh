#!/usr/bin/env bash
# Fail closed: the exec helper refuses to run the command when a promised limit is not in force.
# These drive /usr/libexec/sbx/sbx-exec directly through systemd-run with a weakened unit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary
EXEC=/usr/libexec/sbx/sbx-exec
BASE=(-p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p SystemCallFilter=@system-service
      -p "SystemCallFilter=~io_uring_setup" -p SystemCallErrorNumber=EPERM
      -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -p PrivateNetwork=yes
      -p MemoryMax=100M -p MemorySwapMax=0 -p TasksMax=50)

# run_helper UNIT PROPS... -- HELPER-ARGS...: prints "rc=N status=TEXT marker=yes|no"
run_helper() {
  local unit=$1; shift
  local props=() ; while [ "$1" != -- ]; do props+=("$1"); shift; done; shift
  rm -f /var/tmp/sbx-failclosed-marker
  systemd-run -q --wait --unit="$unit" -p RemainAfterExit=yes "${props[@]}" "$EXEC" "$@" -- sh -c 'echo ran > /dev/null; exit 7' >/dev/null 2>&1
  local st rc
  st=$(systemctl show -p StatusText --value "$unit")
  rc=$(systemctl show -p ExecMainStatus --value "$unit")
  systemctl stop "$unit" >/dev/null 2>&1; systemctl reset-failed "$unit" >/dev/null 2>&1
  echo "rc=$rc status=$st"
}

t_begin "control: with every promise kept the helper runs the command"
out=$(run_helper sbxt-fc0 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=7 status=finished" "helper result"

t_begin "refuses when MemoryMax is not what was promised"
out=$(run_helper sbxt-fc1 "${BASE[@]}" -- --expect-memory-max=52428800 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=123 status=refused MemoryMax is 104857600 in the kernel, expected 52428800"

t_begin "refuses when TasksMax is not in force"
out=$(run_helper sbxt-fc2 "${BASE[@]}" -p TasksMax=infinity -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=123 status=refused TasksMax is"

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
out=$(run_helper sbxt-fc4 -p MemoryMax=100M -p NotifyAccess=main -- --expect-network=host)
assert_contains "$out" "rc=123 status=refused running as root"
out=$(run_helper sbxt-fc6 -p DynamicUser=yes -p NoNewPrivileges=yes -p SystemCallFilter=@system-service -p AmbientCapabilities=CAP_NET_BIND_SERVICE -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -- --expect-network=host)
assert_contains "$out" "rc=123 status=refused the capability bounding set is not empty"

t_begin "refuses without the promised syscall filter"
# DynamicUser= alone already installs a small seccomp filter (RestrictSUIDSGID=): the helper probes
# for sbx's own rules, not just for any filter
out=$(run_helper sbxt-fc7 -p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p ProtectHome=tmpfs -p "TemporaryFileSystem=/home/sbx:mode=0777" -p NotifyAccess=main -- --expect-network=host)
assert_contains "$out" "rc=123 status=refused the syscall filter is not the one promised"
out=$(run_helper sbxt-fc8 "${BASE[@]}" -- --expect-memory-max=104857600 --expect-tasks-max=50 --expect-network=none)
assert_contains "$out" "rc=7 status=finished" "with io_uring denied"

t_summary
