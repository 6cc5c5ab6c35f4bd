#!/usr/bin/env bash
# bench/image-start.sh - starting a run on a base image against one on the host's OS, side by side.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. Builds a small image
# from the host's static busybox (a directory imported with sbxctl image import), writes two profiles
# that differ only in files.base, and interleaves, N times:
#   H  sbxctl run -p sbxbench_host  -- /bin/true    (the host's OS)
#   I  sbxctl run -p sbxbench_image -- /bin/true    (the image, on its shared mount: sbx-image@DIGEST)
# then, COLD times (default 3), a run on the image whose mount is gone first (its hold and mount units
# stopped): C includes the loop device, the dm-verity device and the mount.
# Reports the medians and the ratios I/H (target <= 1.2) and C/H, and removes the profiles and the image.
# Prints one "BENCH key value" line per figure for scripts.
#   bench/image-start.sh [N [COLD]]      (default 20 3)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included). The report says which.
set -uo pipefail
N=${1:-20}
COLD=${2:-3}
export LC_ALL=C SYSTEMD_COLORS=0
RUNPROF=/run/sbx/profiles.d
NAME=sbxbench-busybox

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
BB=$(command -v busybox) && file -L "$BB" | grep -q 'statically linked' ||
  { echo "bench: needs a static busybox (busybox-static)" >&2; exit 2; }

D=$(mktemp -d /var/tmp/sbxbench-img.XXXXXX)
cleanup() {
  sbxctl image rm "$NAME" >/dev/null 2>&1
  rm -f "$RUNPROF/sbxbench_host.json" "$RUNPROF/sbxbench_image.json"
  rm -rf "$D"
  systemctl daemon-reload
}
trap cleanup EXIT
mkdir -p "$D/root/bin" "$D/root/etc"
cp "$BB" "$D/root/bin/busybox"
for a in sh true; do ln -s busybox "$D/root/bin/$a"; done
sbxctl image import "$NAME" "$D/root" >/dev/null || { echo "bench: image import failed" >&2; exit 1; }

mkdir -p "$RUNPROF"
for base in host image; do
  files='"base": "host"'
  [ $base = image ] && files="\"base\": \"image\", \"image\": \"$NAME\""
  cat > "$RUNPROF/sbxbench_$base.json" <<EOF2
{ "version": 1, "description": "sbx bench: a run on the $base",
  "files": { $files }, "network": { "mode": "none" },
  "resources": { "memory": "128M", "tasks": 32, "wall_time": "60s" } }
EOF2
done
sbxctl profile reload >/dev/null || { echo "bench: profile reload failed" >&2; exit 1; }

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
run_h() { "${T[@]}" sbxctl run -p sbxbench_host -- /bin/true < /dev/null; }
run_i() { "${T[@]}" sbxctl run -p sbxbench_image -- /bin/true < /dev/null; }
for f in run_h run_i; do $f || { echo "bench: $f failed" >&2; exit 1; }; done
rm -f "$TOOK_FILE"

H=() I=()
for i in $(seq "$N"); do
  for f in run_h run_i; do
    stamp t0; $f || { echo "bench: $f failed" >&2; exit 1; }; stamp t1
    case $f in run_h) H+=("$(took "$t0" "$t1")") ;; run_i) I+=("$(took "$t0" "$t1")") ;; esac
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
DIG=$(sbxctl image list --json | jq -r ".[] | select(.name == \"$NAME\") | .digest")
unmount_image() {
  systemctl stop "sbx-image-hold@$DIG.service" "sbx-image@$DIG.service"
  for _ in $(seq 100); do [ -e "/run/sbx/images/$DIG" ] || return 0; sleep 0.1; done
  echo "bench: the image's mount did not go" >&2; exit 1
}
C=()
for i in $(seq "$COLD"); do
  unmount_image
  stamp t0; run_i || { echo "bench: cold run_i failed" >&2; exit 1; }; stamp t1
  C+=("$(took "$t0" "$t1")")
done
mH=$(median "${H[@]}"); mI=$(median "${I[@]}")
rIH=$(echo "scale=3; $mI / $mH" | bc)
mC=$(median "${C[@]}"); rCH=$(echo "scale=3; $mC / $mH" | bc)
echo "run start on a base image, $N interleaved runs each, median wall time of sbxctl run -- /bin/true (kernel $(uname -r), $(systemd-detect-virt --vm 2>/dev/null || echo no VM)); clock: $CLOCK"
printf '  H the host OS                 %9.1f ms\n' "$mH"
printf '  I a base image (dm-verity)    %9.1f ms   I/H %.3f (target <= 1.2)\n' "$mI" "$rIH"
printf '  C the same, mount made first  %9.1f ms   C/H %.3f (%s runs)\n' "$mC" "$rCH" "$COLD"
echo "BENCH median_ms_run_host $mH"
echo "BENCH median_ms_run_image $mI"
echo "BENCH ratio_image_vs_host $rIH"
echo "BENCH median_ms_run_image_cold $mC"
echo "BENCH ratio_image_cold_vs_host $rCH"
