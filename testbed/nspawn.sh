#!/usr/bin/env bash
# testbed/nspawn.sh - fast dev testbed: boot this machine's own root (under a tmpfs overlay) in
# systemd-nspawn, with systemd as PID 1, a cgroup2-only view and bpf() allowed. Ready in ~1 s.
#
# NOT ENFORCED HERE: MemoryMax=, TasksMax=, CPUQuota= (and anything else needing the memory, pids or
# cpu controllers): on our build machines those controllers are bound to cgroup v1 hierarchies, so
# the container's cgroup2 tree has none of them. Test resource limits in the VM (testbed/vm.sh).
#
#   nspawn.sh start            boot, wait until 'systemctl is-system-running' answers
#   nspawn.sh exec CMD...      run CMD inside as root (all namespaces of the container's PID 1),
#                              in the caller's directory if it exists inside, else /
#   nspawn.sh shell            an interactive shell inside
#   nspawn.sh status           is it running?
#   nspawn.sh stop             power off, wait, remove the cgroups and mounts it created
#
# env: SBX_NSPAWN_NAME  machine name, also the name of its parent cgroups   default sbx-nspawn
#      SBX_STATE        state dir (pid files, console log, overlay)        default /run/$SBX_NSPAWN_NAME
#      SBX_BIND         host dirs (space-separated) bind-mounted read-write at the same path
#                       (default: the current directory)
#      SBX_NSPAWN_ENV   names of host environment variables passed to 'exec' (default none)
# Several containers can run at once with different SBX_NSPAWN_NAME (and so SBX_STATE).
# Commands run by 'exec' get SBX_TESTBED=nspawn and a clean environment.
set -uo pipefail
NAME=${SBX_NSPAWN_NAME:-sbx-nspawn}
STATE=${SBX_STATE:-/run/$NAME}
CG="unified systemd"   # host hierarchies nspawn writes to; each container gets its own parent group
LANDLOCK_CALLS="landlock_create_ruleset landlock_add_rule landlock_restrict_self"
die() { echo "sbx-nspawn[$NAME]: $*" >&2; exit 1; }
case $NAME in ''|*[!A-Za-z0-9_-]*) die "SBX_NSPAWN_NAME must be [A-Za-z0-9_-]+" ;; esac

inner() {   # runs in a private mount namespace (unshare -m): everything mounted here dies with it
  set -e
  local D=$STATE/root h b rc
  mkdir -p "$STATE/rw" "$D"
  mount -t tmpfs -o mode=755 sbxrw "$STATE/rw"
  mkdir -p "$STATE/rw/upper" "$STATE/rw/work"
  mount -t overlay -o "lowerdir=/,upperdir=$STATE/rw/upper,workdir=$STATE/rw/work" sbxroot "$D"
  for u in postgresql.service getty@tty1.service console-getty.service systemd-timesyncd.service \
           e2scrub_reap.service apt-daily.timer apt-daily-upgrade.timer man-db.timer \
           docker.service docker.socket containerd.service ssh.service cron.service; do
    ln -sf /dev/null "$D/etc/systemd/system/$u"
  done
  local binds=()
  for b in ${SBX_BIND:-$PWD}; do binds+=("--bind=$b"); done
  for h in $CG; do
    [ -d "/sys/fs/cgroup/$h" ] || continue
    mkdir -p "/sys/fs/cgroup/$h/$NAME"; echo "$BASHPID" > "/sys/fs/cgroup/$h/$NAME/cgroup.procs"
  done
  set +e
  # SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1: the container gets a cgroup2-only /sys/fs/cgroup (needed for
  #   BPFProgram=). --system-call-filter=bpf is essential: without it nspawn's seccomp filter gives
  #   PID 1 EPERM on bpf() and systemd silently disables IPAddressAllow/Deny.
  #   The Landlock calls: nspawn's own filter (systemd 252) denies them, and sbx's profiles require Landlock.
  #   @memlock: nspawn's filter denies mlock() to a container without CAP_IPC_LOCK (EPERM, whatever
  #   RLIMIT_MEMLOCK says), where a host allows it up to the limit; sbx-broker holds secrets in mlock()ed
  #   memory.
  # --console=read-only: 'passive' lets PID 1 block forever on a full console pty.
  SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --directory="$D" --machine="$NAME" \
     --register=no --keep-unit --private-network --console=read-only \
     --capability=CAP_BPF,CAP_PERFMON --system-call-filter="bpf @memlock $LANDLOCK_CALLS" --setenv=SBX_TESTBED=nspawn \
     "${binds[@]}" -b systemd.firstboot=off systemd.unit=multi-user.target &
  echo $! > "$STATE/nspawn.pid"
  wait $!; rc=$?
  echo "sbx-nspawn: systemd-nspawn exited with status $rc"
  for h in $CG; do
    [ -d "/sys/fs/cgroup/$h/$NAME" ] || continue
    echo "$BASHPID" > "/sys/fs/cgroup/$h/cgroup.procs"
    find "/sys/fs/cgroup/$h/$NAME" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  umount "$D" "$STATE/rw" 2>/dev/null; rmdir "$D" "$STATE/rw" 2>/dev/null
  rm -f "$STATE/nspawn.pid" "$STATE/leader.pid"
}

leader() { cat "$STATE/leader.pid" 2>/dev/null; }
running() { local l; l=$(leader) && [ -n "$l" ] && kill -0 "$l" 2>/dev/null; }

now() { date +%s.%N; }

# the whole command is read before it runs (an edit of this file cannot reach a container's _inner)
main() {
case ${1:-} in
  _inner) inner ;;
  start)
    [ -e "$STATE/nspawn.pid" ] && die "already running (pid $(cat "$STATE/nspawn.pid")) or stale state in $STATE"
    [ -d "/sys/fs/cgroup/unified/$NAME" ] && die "cgroup /sys/fs/cgroup/unified/$NAME exists: another container with this name?"
    command -v systemd-nspawn >/dev/null || die "systemd-nspawn missing (scripts/install-deps.sh)"
    mkdir -p "$STATE"
    t0=$(now)
    SBX_STATE=$STATE SBX_NSPAWN_NAME=$NAME setsid unshare -m --propagation private "$(realpath "$0")" _inner \
      > "$STATE/console.log" 2>&1 < /dev/null &
    L=
    for _ in $(seq 300); do
      [ -s "$STATE/nspawn.pid" ] && L=$(pgrep -P "$(cat "$STATE/nspawn.pid")" -x systemd) && break
      sleep 0.1
    done
    [ -n "$L" ] || { tail -20 "$STATE/console.log" >&2; die "container did not start; see $STATE/console.log"; }
    echo "$L" > "$STATE/leader.pid"
    for _ in $(seq 100); do nsenter -t "$L" -a test -S /run/systemd/private && break; sleep 0.1; done
    # a BPF file system of the container's own (a new instance) at /sys/fs/bpf, where systemd mounts one
    # on a real boot: nspawn's /sys has no such directory, so it is made on its read-only tmpfs first
    # Also securityfs (/sys/kernel/security/lsm names Landlock), and nodes for the host's loop devices
    # (caches are file systems on loop devices; nspawn's /dev has none, and no udev makes them): the
    # kernel's loop devices are the host's, so a test's leftover would show on the host too.
    nsenter -t "$L" -a sh -c 'mount -o remount,rw /sys && mkdir -p /sys/fs/bpf && mount -o remount,ro /sys &&
      mount -t bpf -o mode=700 bpf /sys/fs/bpf && mount -t securityfs securityfs /sys/kernel/security &&
      mknod -m 660 /dev/loop-control c 10 237 && for i in $(seq 0 127); do mknod -m 660 /dev/loop$i b 7 $i; done' ||
      die "cannot mount /sys/fs/bpf or /sys/kernel/security, or make /dev/loop*"
    st=$(timeout 120 nsenter -t "$L" -a systemctl is-system-running --wait)
    echo "sbx-nspawn[$NAME]: leader pid $L, state '$st', ready after $(echo "$(now) - $t0" | bc)s"
    ;;
  exec|shell)
    running || die "not running"
    L=$(leader)
    [ "$1" = shell ] && set -- exec bash -l
    shift
    pass=()
    for v in ${SBX_NSPAWN_ENV:-}; do [ -n "${!v+x}" ] && pass+=("$v=${!v}"); done
    # shellcheck disable=SC2016
    exec nsenter -t "$L" -a env -i SBX_TESTBED=nspawn HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${pass[@]}" \
      bash -c 'cd "$0" 2>/dev/null || cd /; exec "$@"' "$PWD" "$@" ;;
  status)
    if running; then echo "sbx-nspawn[$NAME]: running, leader pid $(leader), state $(nsenter -t "$(leader)" -a systemctl is-system-running)"
    else echo "sbx-nspawn[$NAME]: not running"; exit 3; fi ;;
  stop)
    L=$(leader) || die "not running"
    P=$(cat "$STATE/nspawn.pid" 2>/dev/null)
    nsenter -t "$L" -a systemctl poweroff 2>/dev/null
    for _ in $(seq 150); do kill -0 "$P" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$P" 2>/dev/null; then echo "sbx-nspawn[$NAME]: forcing"; kill -KILL "$L"; sleep 2; fi
    for _ in $(seq 100); do [ -e "$STATE/nspawn.pid" ] || break; sleep 0.1; done
    tail -1 "$STATE/console.log" ;;
  *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
}
main "$@"; exit $?
