#!/usr/bin/env bash
# bench/unit-properties.sh - where the start-up of a run's unit goes, by property: what bench/run-overhead.sh
# calls A (sbx's exact property set, through systemd-run) against H (a plain hardened set), and the cost of
# each group of A's properties, measured both ways in one process: A without the group, and H with it.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. Each sample is one
# `systemd-run --wait --pipe ... /bin/true` of a unit sbxbench-props-ID.service in sbx-offline.slice: a
# name the generator's drop-in for the profile (sbx-offline-.service.d) does not apply to, so that a
# property left out is really out; the property set's bind of the run's own cgroup names this unit's. The
# space's directories are made before each sample and removed after it, untimed (as run-overhead.sh).
# Every round runs each variant once, in a new random order:
#   A, H                      the two sets
#   A-GROUP, H+GROUP          A without, H with, one group of A's properties:
#     kernel-tunables   ProtectKernelTunables=  (about 20 read-only mounts over /proc and /sys)
#     kernel-other      ProtectKernelModules=, ProtectKernelLogs=, ProtectClock=, ProtectHostname=
#     inaccessible      InaccessiblePaths=      (the host's backup user lists and subuid/subgid)
#     ro-binds          BindReadOnlyPaths=      (the identity files, the notify socket, the own cgroup)
#     archs             SystemCallArchitectures=native  (one seccomp architecture instead of three)
#     mounts            the first four together
# and reports per variant the median and p90, per group the two estimates of its cost (A minus A-GROUP,
# H+GROUP minus H), and A against H with A's read-only mounts (H+mounts). Prints one "BENCH key value"
# line per figure for scripts.
#   bench/unit-properties.sh [N]      (default 15 rounds)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included). The report says which.
set -uo pipefail
N=${1:-15}
export LC_ALL=C SYSTEMD_COLORS=0
[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside a testbed" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }
command -v shuf >/dev/null || { echo "bench: shuf (coreutils) is missing" >&2; exit 2; }
mapfile -t A_SET < <(sbxctl --no-legend profile show offline | grep .)
[ "${#A_SET[@]}" -gt 20 ] || { echo "bench: could not read the property set" >&2; exit 2; }
mem=$(printf '%s\n' "${A_SET[@]}" | sed -n 's/^MemoryMax=//p')
tasks=$(printf '%s\n' "${A_SET[@]}" | sed -n 's/^TasksMax=//p')
H_SET=(DynamicUser=yes ProtectSystem=strict PrivateTmp=yes PrivateDevices=yes PrivateNetwork=yes
       SystemCallFilter=@system-service "MemoryMax=$mem" "TasksMax=$tasks" RuntimeMaxSec=3600)
SPACE_DIRS=(home tmp var-tmp shm pts)
declare -A GROUP=(
  [kernel-tunables]='^ProtectKernelTunables='
  [kernel-other]='^(ProtectKernelModules|ProtectKernelLogs|ProtectClock|ProtectHostname)='
  [inaccessible]='^InaccessiblePaths='
  [ro-binds]='^BindReadOnlyPaths='
  [archs]='^SystemCallArchitectures='
  [mounts]='^(ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectClock|ProtectHostname|InaccessiblePaths|BindReadOnlyPaths)='
)
GROUPS_ORDER=(kernel-tunables kernel-other inaccessible ro-binds archs mounts)
for g in "${GROUPS_ORDER[@]}"; do
  printf '%s\n' "${A_SET[@]}" | grep -Eq "${GROUP[$g]}" || { echo "bench: the property set has no $g" >&2; exit 2; }
done

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# the property lines of a variant, RUN still in them
props() {
  case $1 in
    A) printf '%s\n' "${A_SET[@]}" ;;
    H) printf '%s\n' "${H_SET[@]}" ;;
    A-*) printf '%s\n' "${A_SET[@]}" | grep -Ev "${GROUP[${1#A-}]}" ;;
    H+*) printf '%s\n' "${H_SET[@]}"; printf '%s\n' "${A_SET[@]}" | grep -E "${GROUP[${1#H+}]}" ;;
  esac
}
prep() {   # prep VARIANT: a fresh ID, its unit, its space's directories, ARGS (not timed)
  local p
  ID=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  UNIT=sbxbench-props-$ID.service
  mkdir -p "${SPACE_DIRS[@]/#//run/sbx/space/$ID/}" && chmod 1777 "${SPACE_DIRS[@]/#//run/sbx/space/$ID/}" &&
    chmod 0777 "/run/sbx/space/$ID/home" || return 1
  ARGS=()
  while IFS= read -r p; do
    p=${p//sbx-offline-RUN.service/$UNIT}
    ARGS+=(-p "${p//RUN/$ID}")
  done < <(props "$1")
}
tidy() { rm -rf "/run/sbx/space/$ID"; }
srun() { "${T[@]}" systemd-run --quiet --wait --pipe --unit="$UNIT" --slice=sbx-offline.slice "${ARGS[@]}" /bin/true < /dev/null; }

VARIANTS=(A H)
for g in "${GROUPS_ORDER[@]}"; do VARIANTS+=("A-$g" "H+$g"); done
declare -A S=()
t0=0 t1=0
for v in "${VARIANTS[@]}"; do   # warm up each (page cache, the slice)
  if ! prep "$v" || ! srun; then echo "bench: variant $v failed" >&2; tidy; exit 1; fi
  tidy
done
for ((i = 1; i <= N; i++)); do
  for v in $(printf '%s\n' "${VARIANTS[@]}" | shuf); do
    prep "$v" || { echo "bench: cannot make a space's directories" >&2; exit 1; }
    stamp t0; srun; rc=$?; stamp t1
    tidy
    [ "$rc" = 0 ] || { echo "bench: variant $v failed ($rc)" >&2; exit 1; }
    S[$v]+="$(took "$t0" "$t1") "
  done
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
declare -A M=()
echo "unit start-up by property, $N interleaved rounds, median (p90) of systemd-run --wait --pipe /bin/true"
echo "(kernel $(uname -r), $(systemctl --version | head -n 1); clock: $CLOCK)"
for v in "${VARIANTS[@]}"; do
  # shellcheck disable=SC2086
  M[$v]=$(median ${S[$v]}); p90=$(pct 90 ${S[$v]})
  printf '  %-20s %8.1f ms (%.1f)\n' "$v" "${M[$v]}" "$p90"
done
echo "cost of each group: A minus A-GROUP, H+GROUP minus H (ms)"
for g in "${GROUPS_ORDER[@]}"; do
  a=$(echo "${M[A]} - ${M[A-$g]}" | bc); h=$(echo "${M[H+$g]} - ${M[H]}" | bc)
  printf '  %-20s %+8.1f %+8.1f\n' "$g" "$a" "$h"
  echo "BENCH cost_ms_${g//-/_}_from_a $a"
  echo "BENCH cost_ms_${g//-/_}_on_h $h"
done
echo "BENCH median_ms_a ${M[A]}"
echo "BENCH median_ms_h ${M[H]}"
echo "BENCH ratio_a_vs_h $(echo "scale=3; ${M[A]} / ${M[H]}" | bc)"
echo "BENCH ratio_a_vs_h_with_mounts $(echo "scale=3; ${M[A]} / ${M[H+mounts]}" | bc)"
