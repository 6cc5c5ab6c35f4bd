# bench/lib.sh - sourced by the shell benches: their clock and their percentiles.
# shellcheck shell=bash

# stamp VAR: the time now, in nanoseconds, into VAR. From bash's EPOCHREALTIME, never from a `date`
# process or a subshell: each sample would count that process's own start-up too (35-40 ms for date
# under emulation), which pulls every ratio towards 1.
stamp() { printf -v "$1" '%s000' "${EPOCHREALTIME//[.,]/}"; }

# ms T0 T1: the milliseconds between two stamps
ms() { echo "scale=3; ($2 - $1) / 1000000" | bc; }

# pct P VALUES...: the P-th percentile of VALUES (nearest rank)
pct() {
  local p=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v p="$p" '{a[NR]=$1} END {i=int((p*NR+99)/100); if (i<1) i=1; print a[i]}'
}
