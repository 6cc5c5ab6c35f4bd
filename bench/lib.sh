# bench/lib.sh - sourced by the shell benches: their clock and their percentiles.
# shellcheck shell=bash

# stamp VAR: the time now, in nanoseconds, into VAR. From bash's EPOCHREALTIME, never from a `date`
# process or a subshell: each sample would count that process's own start-up too (35-40 ms for date
# under emulation), which pulls every ratio towards 1.
stamp() { printf -v "$1" '%s000' "${EPOCHREALTIME//[.,]/}"; }

# ms T0 T1: the milliseconds between two stamps
ms() { echo "scale=3; ($2 - $1) / 1000000" | bc; }

# T: what a sample puts before the command it times ("${T[@]}" sbxctl run ...), and took T0 T1 the
# sample's milliseconds after it. With the build's bench/spawn-time (SBX_BUILD: the testbed payload
# bench/lanes.sh runs sets it), the command is started by posix_spawn() and timed from its start to its reaping, without the
# fork of bash itself: a copy of the shell's page tables and then of each page either side writes, the
# same ~3 ms natively here on both sides of every ratio, which pulls a short command's ratio to a long
# one towards 1 (bench/spawn-time.c). Without it (a bench run by hand without a build), T is empty and
# took gives the stamps' difference, bash's fork included; CLOCK says which. SBX_BENCH_CLOCK=bash asks
# for the stamps anyway (to compare with figures taken before spawn-time).
TOOK_FILE=${TMPDIR:-/tmp}/sbx-bench-took.$$
# shellcheck disable=SC2034 # CLOCK: for the benches' reports
if [ -x "${SBX_BUILD:-}/bench/spawn-time" ] && [ "${SBX_BENCH_CLOCK:-}" != bash ]; then
  T=("$SBX_BUILD/bench/spawn-time" "$TOOK_FILE") CLOCK="posix_spawn (bench/spawn-time)"
else
  T=() CLOCK="bash (stamps around the command, its fork included)"
fi
rm -f "$TOOK_FILE"
# took T0 T1: the milliseconds of the sample just taken (spawn-time's figure, read once, else the stamps')
took() {
  if [ ${#T[@]} -gt 0 ] && [ -s "$TOOK_FILE" ]; then cat "$TOOK_FILE"; rm -f "$TOOK_FILE"; else ms "$1" "$2"; fi
}

# pct P VALUES...: the P-th percentile of VALUES (nearest rank)
pct() {
  local p=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v p="$p" '{a[NR]=$1} END {i=int((p*NR+99)/100); if (i<1) i=1; print a[i]}'
}

# pool_waiting PROFILE: how many of PROFILE's pooled units wait for a run
pool_waiting() {
  local u n=0
  for u in $(systemctl list-units --all --no-legend --plain "sbx-$1-*.service" | awk '/sbx pool unit/ {print $1}'); do
    [ "$(systemctl show -P StatusText "$u")" = "waiting for a run" ] && n=$((n + 1))
  done
  echo "$n"
}

# settle: until no run of sbx's is between its answer and the end of its cleanup (no "exited" row in
# `sbxctl list --all`; at most 10 s), and no unit of a run is still going away. A run answers at Exited and
# its cleanup (the figures reader, the unit's and the space's removal) goes on after: called before each
# timed sample, so that no sample pays for the one before it. Not timed.
settle() {
  local i
  for ((i = 0; i < 500; i++)); do
    if ! sbxctl --no-legend list --all 2>/dev/null | awk '$3 == "exited" { f = 1 } END { exit !f }' &&
       ! systemctl list-units --no-legend --plain --state=deactivating 'sbx-*' 2>/dev/null | grep -q .; then
      return 0
    fi
    sleep 0.02
  done
}
