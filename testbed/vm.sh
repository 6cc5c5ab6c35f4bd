#!/usr/bin/env bash
# testbed/vm.sh - a qemu VM with systemd as PID 1, for machines whose own PID 1 is not systemd.
#
# The guest boots Debian's stock kernel (downloaded with apt-get download, unpacked with dpkg -x, never
# installed) and a tiny busybox initramfs. Its root filesystem is THIS machine's own / exported
# read-only over virtio-9p with a tmpfs overlay on top, so the guest has exactly the host's packages
# and nothing is built; the initramfs then switch_root's into the host's /lib/systemd/systemd.
# Writes to the guest's root land in guest memory and vanish at power-off. Pure cgroup v2 inside.
#
#   vm.sh setup                     install deps, fetch + unpack the kernel, build the initramfs
#                                   (all cached in SBX_VM_DIR; work already done is skipped)
#   vm.sh run PAYLOAD [TIMEOUT]     boot, run PAYLOAD with bash as root once multi-user.target is
#                                   reached, stream its output, power off; exit with PAYLOAD's exit
#                                   status, or 125 if there is no result (boot failure, timeout)
#   vm.sh start                     boot a persistent VM and wait until it takes commands
#   vm.sh exec CMD [ARG...]         run CMD inside it as root (bash, in the caller's directory if it
#                                   exists in the guest, else /); exit with its status
#   vm.sh stop                      power it off
#
# env: SBX_VM_DIR    cache + state dir (kernel, initrd, io)             default /var/tmp/sbx-vm
#      SBX_VM_IO     host dir the guest sees as /io (payload, logs, rc) default $SBX_VM_DIR/io
#      SBX_SHARE     host dirs (space-separated, absolute, no spaces or colons in them) shared
#                    read-write and uncached at the same path in the guest, e.g. the repo
#      SBX_VM_ENV    names of host environment variables to pass to the payload / exec'd commands
#      SBX_VM_MEM (4G)  SBX_VM_CPUS (2)  SBX_VM_APPEND (extra kernel command line)
#      SBX_VM_ACCEL  tcg (default) | kvm (only where nested KVM really works; see docs/testbed.md)
#      SBX_VM_CPU_MODEL  the CPU model under TCG (default max)
#      SBX_VM_STALL  'run' ends the VM when neither the payload's output nor the guest's console has
#                    grown for this many seconds (default 1020; 0 = never): a wedged guest then costs
#                    that long, not the whole TIMEOUT. Before it ends the VM it asks the guest's kernel, with magic SysRq keys
#                    over the qemu monitor, for every CPU's backtrace and the blocked tasks, which
#                    land in the console log it shows
#
# Inside the guest, the payload sees: SBX_TESTBED=vm, SBX_PAYLOAD (its host path), SBX_SHARE,
# SBX_HOST_CWD, and the variables named in SBX_VM_ENV. Its working directory is the host's current
# directory when that exists in the guest (it does when it is shared, or exists on the host root).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=${SBX_VM_DIR:-/var/tmp/sbx-vm}
IO=${SBX_VM_IO:-$W/io}
KX=$W/kernel
die() { echo "sbx-vm: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc | sed 's/^\./0./; s/\(\.[0-9]\)[0-9]*$/\1/'; }

# ---------------------------------------------------------------------------------------------------
# The initramfs's /init (busybox sh). Kept free of anything run-specific: what the guest runs is
# decided by /io/boot.sh, written by the host before each boot.
INIT=$(cat <<'EOI'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.list); do insmod /mods/$m || echo "sbx-init: insmod $m failed"; done
MODS=; SHARE=
for a in $(cat /proc/cmdline); do
  case $a in sbx.modules=*) MODS=${a#*=};; sbx.share=*) SHARE=${a#*=};; esac
done
O="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o $O,cache=loose,ro hostroot /lower || { echo "sbx-init: 9p root mount failed"; exec sh; }
mount -t tmpfs -o mode=755 sbxrw /rw; mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work sbxroot /newroot \
  || { echo "sbx-init: overlay mount failed"; exec sh; }
R=/newroot
mkdir -p $R/io; mount -t 9p -o $O io $R/io || echo "sbx-init: io mount failed"
i=0
for s in $(echo "$SHARE" | tr ':' ' '); do
  mkdir -p "$R$s" && mount -t 9p -o $O "share$i" "$R$s" || echo "sbx-init: share $s mount failed"
  i=$((i+1))
done
# the guest kernel's modules (a host dir): bind, not symlink, so ProtectKernelModules= units work
[ -n "$MODS" ] && { mkdir -p $R/usr/lib/modules; mount -o bind "/lower$MODS" $R/usr/lib/modules; }
# turn the host's root into a quiet throw-away guest
echo "# sbx-vm: root is 9p + overlay" > $R/etc/fstab
# a container host's policy-rc.d (exit 101: "start no services") is not part of a Debian system: in
# the guest, packages' maintainer scripts start and stop their services as on a real machine
rm -f $R/usr/sbin/policy-rc.d
# nor is a container host's /.dockerenv: with it, systemd takes the VM for a container and leaves the
# mount tree private (no mount propagation into services' namespaces) and /sys/fs/bpf unmounted
rm -f $R/.dockerenv $R/run/.containerenv
# a host 'D /tmp' rule would wipe /tmp over 9p (slowly): keep /tmp, just make sure it exists
mkdir -p $R/etc/tmpfiles.d; echo "d /tmp 1777 root root -" > $R/etc/tmpfiles.d/tmp.conf
for u in postgresql.service systemd-timesyncd.service e2scrub_reap.service getty@tty1.service \
         serial-getty@ttyS0.service console-getty.service apt-daily.timer apt-daily-upgrade.timer \
         man-db.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer systemd-firstboot.service \
         docker.service docker.socket containerd.service ssh.service nginx.service redis-server.service \
         memcached.service cron.service exim4.service; do
  ln -sf /dev/null $R/etc/systemd/system/$u
done
# generators the guest has no use for (the host's postgres and SysV scripts, gettys, encrypted, integrity
# or GPT-discovered disks, hibernation, boot counting, debug shells): each costs ~0.3 s under emulation
# at boot and at every daemon-reload, which the suite does about sixty times (sbx's own generator stays)
mkdir -p $R/etc/systemd/system-generators
for g in postgresql-generator systemd-sysv-generator systemd-getty-generator systemd-cryptsetup-generator \
         systemd-gpt-auto-generator systemd-integritysetup-generator systemd-hibernate-resume-generator \
         systemd-bless-boot-generator systemd-system-update-generator systemd-debug-generator \
         systemd-run-generator; do
  ln -sf /dev/null $R/etc/systemd/system-generators/$g
done
cat > $R/etc/systemd/system/testbed-payload.service <<'EOU'
[Unit]
Description=sbx VM testbed payload (/io/boot.sh)
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=simple
TimeoutStopSec=30
StandardOutput=journal+console
ExecStart=/bin/bash /io/boot.sh
EOU
mkdir -p $R/etc/systemd/system/multi-user.target.wants
ln -sf ../testbed-payload.service $R/etc/systemd/system/multi-user.target.wants/
echo "sbx-init: switching to systemd"
exec switch_root $R /lib/systemd/systemd
EOI
)
MODULES="virtio_pci 9pnet_virtio 9p overlay"

kver() { local d; for d in "$KX"/lib/modules/*/; do [ -d "$d" ] && { basename "$d"; return; }; done; }

mkinitrd() {
  local kver tmp stamp
  kver=$(kver); [ -n "$kver" ] || die "no kernel modules in $KX"
  stamp="$kver $(printf '%s\n%s\n' "$INIT" "$MODULES" | sha256sum | cut -c1-16) $(stat -c %s /usr/bin/busybox)"
  if [ -e "$W/initrd.gz" ] && [ "$(cat "$W/initrd.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "sbx-vm: initramfs up to date"; return 0
  fi
  [ -e "$KX/lib/modules/$kver/modules.dep" ] || depmod -b "$KX" "$kver" || die "depmod failed"
  busybox --list 2>/dev/null | grep -qx switch_root || die "/usr/bin/busybox must be busybox-static"
  tmp=$(mktemp -d)
  mkdir -p "$tmp"/{bin,proc,sys,dev,lower,rw,newroot,mods}
  cp /usr/bin/busybox "$tmp/bin/busybox"
  for a in sh mount mkdir ln cat echo insmod switch_root sleep tr; do ln -s busybox "$tmp/bin/$a"; done
  local m ko
  for m in $MODULES; do
    modprobe -d "$KX" -S "$kver" --show-depends "$m" || die "module $m not found for $kver"
  done | awk '$1=="insmod"{print $2}' | awk '!seen[$0]++' > "$tmp/ko.list"
  : > "$tmp/modules.list"
  while read -r ko; do
    case $ko in
      *.ko.xz) xz -dc "$ko" > "$tmp/mods/$(basename "${ko%.xz}")"; ko=${ko%.xz} ;;
      *.ko.zst) zstd -qdc "$ko" > "$tmp/mods/$(basename "${ko%.zst}")"; ko=${ko%.zst} ;;
      *) cp "$ko" "$tmp/mods/" ;;
    esac
    basename "$ko" >> "$tmp/modules.list"
  done < "$tmp/ko.list"
  rm -f "$tmp/ko.list"
  printf '%s\n' "$INIT" > "$tmp/init"; chmod +x "$tmp/init"
  (cd "$tmp" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$W/initrd.gz.tmp" \
    || die "initramfs build failed"
  mv "$W/initrd.gz.tmp" "$W/initrd.gz"; echo "$stamp" > "$W/initrd.stamp"
  rm -rf "$tmp"
  echo "sbx-vm: initramfs built ($(du -h "$W/initrd.gz" | cut -f1), kernel $kver)"
}

fetch_kernel() {
  compgen -G "$KX/boot/vmlinuz-*" >/dev/null && { echo "sbx-vm: kernel $(kver) cached"; return 0; }
  local pkg
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  if [ -z "$pkg" ]; then
    apt-get -o DPkg::Lock::Timeout=600 -q update >/dev/null || die "apt-get update failed"
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
  fi
  [ -n "$pkg" ] || die "cannot resolve linux-image-amd64"
  echo "sbx-vm: fetching $pkg"
  rm -rf "$W/dl"; mkdir -p "$W/dl"; chown _apt "$W/dl" 2>/dev/null
  (cd "$W/dl" && apt-get -q download "$pkg") || die "kernel download failed"
  rm -rf "$KX.tmp"; dpkg -x "$W"/dl/linux-image-*.deb "$KX.tmp" || die "dpkg -x failed"
  rm -rf "$KX" "$W/dl"; mv "$KX.tmp" "$KX"
  echo "sbx-vm: kernel $(kver) unpacked"
}

setup() {
  local t0; t0=$(now)
  mkdir -p "$W" "$IO" || die "cannot create $W"
  "$HERE/../scripts/install-deps.sh" || die "dependency install failed"
  fetch_kernel
  mkinitrd
  echo "sbx-vm: ready in $W ($(du -sh "$W" | cut -f1), setup took $(since "$t0")s)"
}

accel() {   # KVM is opt-in: /dev/kvm exists on our build machines but a guest hangs or qemu aborts there
  case ${SBX_VM_ACCEL:-tcg} in
    tcg) echo "-accel tcg,thread=multi -cpu ${SBX_VM_CPU_MODEL:-max}" ;;
    kvm) echo "-accel kvm -cpu host" ;;
    *) die "SBX_VM_ACCEL must be tcg or kvm" ;;
  esac
}

# write_boot: what the guest runs (as /io/boot.sh) once multi-user.target is reached
write_boot() {   # $1 = the command line to run (already quoted for bash)
  local v
  {
    echo "# written by testbed/vm.sh"
    echo "export SBX_TESTBED=vm HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    printf 'export SBX_SHARE=%q SBX_HOST_CWD=%q SBX_PAYLOAD=%q\n' "${SBX_SHARE:-}" "$PWD" "${PAYLOAD_PATH:-}"
    for v in ${SBX_VM_ENV:-}; do
      [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
    done
  } > "$IO/env"
  cat > "$IO/boot.sh" <<EOB
# written by testbed/vm.sh: runs inside the guest as root from testbed-payload.service
. /io/env
echo "sbx-vm: payload starting, uptime \$(cut -d' ' -f1 /proc/uptime)s" > /dev/console
cd "\$SBX_HOST_CWD" 2>/dev/null || cd /
$1
rc=\$?
echo \$rc > /io/rc.tmp && mv /io/rc.tmp /io/rc
echo "sbx-vm: payload exited with status \$rc" > /dev/console
sync
EOB
}

QEMU_PID=   # the pid of 'timeout' running qemu: signalling it forwards the signal to qemu
boot() {   # $1 = timeout in seconds; boots in the background, sets QEMU_PID
  local tmo=$1 vmlinuz share=() append="" s i=0 list=""
  vmlinuz=$(compgen -G "$KX/boot/vmlinuz-*" | head -1)
  if [ -z "$vmlinuz" ] || [ ! -e "$W/initrd.gz" ]; then die "not set up: run '$0 setup' first"; fi
  for s in ${SBX_SHARE:-}; do
    case $s in /*:*|/*,*) die "SBX_SHARE: $s: no colons or commas, please" ;; /*) ;; *) die "SBX_SHARE: $s is not an absolute path" ;; esac
    [ -d "$s" ] || die "SBX_SHARE: $s is not a directory"
    share+=(-fsdev "local,id=share$i,path=$s,security_model=passthrough,multidevs=remap"
            -device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
    list="${list:+$list:}$s"; i=$((i+1))
  done
  [ -n "$list" ] && append="sbx.share=$list"
  rm -f "$IO/rc" "$IO/rc.tmp" "$IO/run.log" "$IO/qemu.pid" "$IO/qmp.sock" "$IO/stalled"
  : > "$IO/console.log"
  # shellcheck disable=SC2046
  timeout -k 10 "$tmo" qemu-system-x86_64 \
    -nodefaults -no-user-config -machine q35 $(accel) \
    -smp "${SBX_VM_CPUS:-2}" -m "${SBX_VM_MEM:-4G}" \
    -kernel "$vmlinuz" -initrd "$W/initrd.gz" \
    -append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off sysrq_always_enabled sbx.modules=$KX/lib/modules systemd.unit=multi-user.target systemd.firstboot=off systemd.show_status=1 $append ${SBX_VM_APPEND:-}" \
    -fsdev local,id=hostroot,path=/,security_model=passthrough,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=io,path="$IO",security_model=passthrough,multidevs=remap \
    -device virtio-9p-pci,fsdev=io,mount_tag=io "${share[@]}" \
    -display none -serial file:"$IO/console.log" -no-reboot \
    -qmp unix:"$IO/qmp.sock",server=on,wait=off \
    -pidfile "$IO/qemu.pid" < /dev/null > "$IO/qemu.log" 2>&1 &
  QEMU_PID=$!
}

console_tail() {   # $1 = how many lines (40)
  echo "sbx-vm: ---- last ${1:-40} lines of the guest console ($IO/console.log) ----" >&2
  tail -n "${1:-40}" "$IO/console.log" | tr -d '\r' | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' >&2
  [ -s "$IO/qemu.log" ] && { echo "sbx-vm: ---- qemu ----" >&2; grep -v 'host doesn.t support requested feature' "$IO/qemu.log" >&2; }
  echo "sbx-vm: ----" >&2
}

monitor() {   # $@ = human monitor commands, one per argument, sent to the running qemu over QMP
  python3 - "$IO/qmp.sock" "$@" <<'EOP'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rw")
def answer():
    while True:   # skip events: the answer is the next line with "return" or "error"
        m = json.loads(f.readline())
        if "return" in m or "error" in m:
            return m
def call(cmd, args=None):
    f.write(json.dumps({"execute": cmd, **({"arguments": args} if args else {})}) + "\n")
    f.flush()
    return answer()
json.loads(f.readline())   # the greeting
call("qmp_capabilities")
for c in sys.argv[2:]:
    m = call("human-monitor-command", {"command-line": c})
    sys.stdout.write("%s: %s\n" % (c, m["error"]) if "error" in m else m["return"])
EOP
}

# watch_progress: ends the VM when neither the payload's output nor the guest's console has grown for
# $1 seconds, after asking the guest's kernel for its CPUs' backtraces (SysRq l) and its blocked tasks
# (SysRq w) at console log level 9, and qemu for its CPUs' state
watch_progress() {
  local limit=$1 size last=-1 idle=0 step=10
  while kill -0 "$QEMU_PID" 2>/dev/null; do
    sleep "$step"
    size=$(( $(stat -c %s "$IO/run.log" 2>/dev/null || echo 0) + $(stat -c %s "$IO/console.log") ))
    if [ "$size" != "$last" ]; then last=$size idle=0; continue; fi
    idle=$((idle + step))
    [ "$idle" -ge "$limit" ] || continue
    [ -e "$IO/rc" ] && return 0   # the payload ended; qemu is powering off
    touch "$IO/stalled"
    echo "sbx-vm: nothing from the guest for ${idle}s: it looks wedged; asking it for its state" >&2
    monitor "info status" "info cpus" "sendkey alt-sysrq-9" "sendkey alt-sysrq-l" "sendkey alt-sysrq-w" >&2 \
      || echo "sbx-vm: qemu's monitor did not answer" >&2
    sleep 30   # the dumps go out over an emulated serial line
    monitor "info registers -a" 2>/dev/null | grep -E '^(CPU#|RIP)' >&2
    kill "$QEMU_PID" 2>/dev/null
    return 0
  done
}

lock() {   # one VM per io dir at a time
  exec 9> "$IO/.lock"
  flock -n 9 || die "a VM using $IO is already running (stop it first, or set SBX_VM_IO)"
}

cmd_run() {
  local payload=${1:-} tmo=${2:-3600} stall=${SBX_VM_STALL:-1020} t0 q tailpid watchpid= rc
  [ -r "$payload" ] || die "usage: $0 run PAYLOAD [TIMEOUT]"
  mkdir -p "$IO"; lock
  PAYLOAD_PATH=$(realpath "$payload")
  cp "$payload" "$IO/run.sh"
  write_boot 'bash /io/run.sh > /io/run.log 2>&1 < /dev/null'
  t0=$(now)
  trap '[ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null; exit 130' INT TERM
  boot "$tmo"
  : > "$IO/run.log"
  tail -n +1 -F --pid="$QEMU_PID" "$IO/run.log" 2>/dev/null & tailpid=$!
  [ "$stall" -gt 0 ] && { watch_progress "$stall" & watchpid=$!; }
  wait "$QEMU_PID"; q=$?
  wait "$tailpid" 2>/dev/null
  [ -n "$watchpid" ] && { kill "$watchpid" 2>/dev/null; wait "$watchpid" 2>/dev/null; }
  trap - INT TERM
  if [ ! -e "$IO/rc" ]; then
    if [ -e "$IO/stalled" ]; then echo "sbx-vm: ended the VM: nothing came from the guest for ${stall}s" >&2
      console_tail 400; exit 125
    elif [ "$q" = 124 ]; then echo "sbx-vm: timed out after ${tmo}s with no result" >&2
    else echo "sbx-vm: no result (qemu exit status $q)" >&2; fi
    console_tail; exit 125
  fi
  rc=$(cat "$IO/rc")
  echo "sbx-vm: payload exit status $rc; boot to payload $(boot_time)s; total $(since "$t0")s" >&2
  [ "$rc" = 0 ] || console_tail
  exit "$rc"
}

boot_time() {   # the guest's uptime when the payload started, from the console
  tr -d '\r' < "$IO/console.log" | sed -n 's/.*payload starting, uptime \([0-9.]*\)s.*/\1/p' | head -1
}

cmd_start() {
  local t0 i
  mkdir -p "$IO"; lock
  mkdir -p "$IO/jobs"; rm -f "$IO"/jobs/*
  cat > "$IO/run.sh" <<'EOA'
# job agent: runs /io/jobs/<id>.sh one at a time, writes <id>.out and <id>.rc; /io/jobs/STOP ends it
touch /io/jobs/READY
while [ ! -e /io/jobs/STOP ]; do
  for j in /io/jobs/*.sh; do
    [ -e "$j" ] || continue; id=${j%.sh}; mv "$j" "$id.run"
    (bash "$id.run" > "$id.out" 2>&1 < /dev/null; echo $? > "$id.rc.tmp"; mv "$id.rc.tmp" "$id.rc")
  done
  sleep 1   # each look is a 9p readdir and an exec under emulation: at 0.2 s an idle VM took half a core
done
EOA
  PAYLOAD_PATH=
  write_boot 'cd / && bash /io/run.sh > /io/run.log 2>&1 < /dev/null'
  t0=$(now)
  # the subshell holds the lock (fd 9) for as long as the VM runs
  ( boot 86400; echo "$QEMU_PID" > "$IO/vm.pid"; wait "$QEMU_PID"; rm -f "$IO/vm.pid" "$IO/jobs/READY" ) &
  for i in $(seq 1200); do
    [ -e "$IO/jobs/READY" ] && break
    [ "$i" -gt 20 ] && [ ! -e "$IO/vm.pid" ] && { echo "sbx-vm: VM died" >&2; console_tail; exit 1; }
    sleep 0.5
  done
  [ -e "$IO/jobs/READY" ] || { echo "sbx-vm: not ready after 600s" >&2; console_tail; exit 1; }
  echo "sbx-vm: ready after $(since "$t0")s (guest uptime at payload start $(boot_time)s)"
}

cmd_exec() {
  local id rc v
  [ "$#" -gt 0 ] || die "usage: $0 exec CMD [ARG...]"
  if [ ! -e "$IO/jobs/READY" ] || [ ! -e "$IO/vm.pid" ]; then die "not running (use '$0 start')"; fi
  id=$IO/jobs/j$$.$RANDOM
  {
    for v in ${SBX_VM_ENV:-}; do [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"; done
    printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
    printf '%q ' "$@"; echo
  } > "$id.tmp"
  mv "$id.tmp" "$id.sh"
  while [ ! -e "$id.rc" ]; do
    sleep 0.1
    [ -e "$IO/vm.pid" ] || die "the VM went away"
  done
  cat "$id.out"; rc=$(cat "$id.rc"); rm -f "$id".*
  exit "$rc"
}

cmd_stop() {
  local p i
  [ -e "$IO/vm.pid" ] || die "not running"
  p=$(cat "$IO/vm.pid")
  touch "$IO/jobs/STOP"
  for i in $(seq 600); do [ -e "$IO/vm.pid" ] || break; sleep 0.1; done
  if [ -e "$IO/vm.pid" ]; then
    echo "sbx-vm: no clean power-off after 60s; killing qemu (pid $p)" >&2
    kill "$p" 2>/dev/null
    for i in $(seq 100); do [ -e "$IO/vm.pid" ] || break; sleep 0.1; done
  fi
  rm -f "$IO"/jobs/*
  echo "sbx-vm: stopped"
}

case ${1:-} in
  setup) setup ;;
  run) shift; cmd_run "$@" ;;
  start) cmd_start ;;
  exec) shift; cmd_exec "$@" ;;
  stop) cmd_stop ;;
  *) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
