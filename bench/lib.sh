# bench/lib.sh - sourced by the shell benches: their clock.
# shellcheck shell=bash

# stamp VAR: the time now, in nanoseconds, into VAR. From bash's EPOCHREALTIME, never from a `date`
# process or a subshell: each sample would count that process's own start-up too (35-40 ms for date
# under emulation), which pulls every ratio towards 1.
stamp() { printf -v "$1" '%s000' "${EPOCHREALTIME//[.,]/}"; }

# ms T0 T1: the milliseconds between two stamps
ms() { echo "scale=3; ($2 - $1) / 1000000" | bc; }
