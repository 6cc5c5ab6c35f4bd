#!/usr/bin/env bash
# bench/run-overhead.sh - what sbx adds to a systemd run, measured side by side in one process.
#
# Runs INSIDE a systemd testbed (or on a systemd host) as root, with sbx installed. Interleaves, N times:
#   A  systemd-run --wait --pipe  with sbx's exact property set (from `sbxctl profile show`), /bin/true
#   B  the same, with sbx's exec helper running /bin/true (what sbx's unit really runs), the command given
#      on the helper's standard input by tests/integration/helper-cmd.py as sbxd gives it
#   D  B with sbx's privileged figures reader as ExecStopPost= (what every run's unit ends with: peaks,
#      limit events, the space's use, read from the cgroup into /var/lib/sbx/figures)
#   E  B with an ExecStopPost= that does nothing (/bin/true) instead: what any process systemd starts
#      after the command costs, whatever it does
#   H  a plain hardened systemd-run --wait --pipe of /bin/true: DynamicUser, ProtectSystem=strict,
#      PrivateTmp/Devices/Network, SystemCallFilter=@system-service, MemoryMax, TasksMax, RuntimeMaxSec
#      (what one would write by hand without sbx)
#   C  sbxctl run -- /bin/true     (client -> sbxd -> StartTransientUnit -> record -> reply: its answer)
# and reports medians and the ratios C/A (sbx against its own property set through systemd-run, target
# <= 1.05), C/H (against the plain hardened unit, target <= 1.15) and D/B (the figures' cost on a cold
# run, target < 1.05) with E/B and D/E (that cost split into the extra process and the reading),
# then sbxd's idle resident memory (target < 8 MiB). Prints one "BENCH key value"
# line per figure for scripts.
#   bench/run-overhead.sh [N]      (default 20)
# Times come from bench/lib.sh's clock: bench/spawn-time where the build has it (the command alone, from
# its posix_spawn() to its reaping), else stamps around the command (bash's EPOCHREALTIME, its fork
# included). The report's first line says which.
set -uo pipefail
N=${1:-20}
EXEC=${SBX_EXEC:-/usr/libexec/sbx/sbx-exec}
export LC_ALL=C SYSTEMD_COLORS=0

[ -d /run/systemd/system ] || { echo "bench: systemd is not PID 1 here; run inside testbed/vm.sh" >&2; exit 2; }
command -v sbxctl >/dev/null || { echo "bench: sbxctl is not installed" >&2; exit 2; }

# The property set names each run's own places with RUN (its space, its cgroup): every systemd-run
# below is a unit of that name with a fresh id, and a space of plain directories with the space's
# modes (the helper is not asked to check that it is one tmpfs).
mapfile -t PROPS < <(sbxctl --no-legend profile show offline | grep .)
props=("${PROPS[@]}")
[ "${#props[@]}" -gt 20 ] || { echo "bench: could not read the property set" >&2; exit 2; }
mapfile -t SPACE_DIRS < <(printf '%s\n' "${PROPS[@]}" | grep -o '/run/sbx/space/RUN/[a-z-]*:' | sed 's|.*/||; s|:$||' | sort -u)
[[ " ${SPACE_DIRS[*]} " = *" home "* ]] || { echo "bench: the property set binds no space" >&2; exit 2; }
mem=$(sbxctl --no-legend profile show offline | sed -n 's/^MemoryMax=//p')
tasks=$(sbxctl --no-legend profile show offline | sed -n 's/^TasksMax=//p')
helper=("$EXEC" "--expect-memory-max=$mem" "--expect-tasks-max=$tasks" --expect-network=none --workspace=private)
# a testbed build on a host without some controllers (the native lane) is told which, as sbxd tells it
missing=()
grep -qw memory /sys/fs/cgroup/cgroup.controllers || missing+=(memory)
grep -qw pids /sys/fs/cgroup/cgroup.controllers || missing+=(tasks)
[ "${#missing[@]}" = 0 ] || helper+=("--unenforced-ceilings=$(IFS=,; echo "${missing[*]}")")
helper+=(--)
# the helper takes its command on its standard input, as sbxd gives it (src/shared/sandbox-proto.h):
# helper-cmd.py does that for B, D and E (a Python start-up each, so their ratios are among themselves)
HCMD=$(cd "$(dirname "$0")/.." && pwd)/tests/integration/helper-cmd.py
[ -f "$HCMD" ] || { echo "bench: $HCMD is missing" >&2; exit 2; }

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# prep: a fresh id (ID) and its unit's property set (ARGS), with the directories of the space it binds
# (home, tmp, var-tmp, shm, pts: the space unit mounts a devpts on pts; a plain directory does for
# /bin/true), modes as the space unit makes them; tidy removes them. Neither is timed: their processes
# (mkdir, chmod, rm) would cost more than what is measured.
prep() {
  local p
  ID=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  ARGS=()
  mkdir -p "${SPACE_DIRS[@]/#//run/sbx/space/$ID/}" && chmod 1777 "${SPACE_DIRS[@]/#//run/sbx/space/$ID/}" &&
    chmod 0777 "/run/sbx/space/$ID/home" || return 1
  for p in "${PROPS[@]}"; do ARGS+=(-p "${p//RUN/$ID}"); done
}
tidy() { rm -rf "/run/sbx/space/$ID" "/var/lib/sbx/figures/sbx-offline-$ID.service"; }
# srun ARGS...: systemd-run of the unit sbx-offline-ID.service with prep's property set; with HELPER set,
# through helper-cmd.py, which gives the unit's helper /bin/true as its command
srun() {
  if [ -n "${HELPER:-}" ]; then
    "${T[@]}" /usr/bin/python3 "$HCMD" /bin/true -- \
      systemd-run --quiet --wait --pipe --unit="sbx-offline-$ID.service" --slice=sbx-offline.slice "${ARGS[@]}" "$@"
  else
    "${T[@]}" systemd-run --quiet --wait --pipe --unit="sbx-offline-$ID.service" --slice=sbx-offline.slice "${ARGS[@]}" "$@" < /dev/null
  fi
}
run_a() { srun /bin/true; }
run_b() { HELPER=1 srun "${helper[@]}"; }
run_c() { "${T[@]}" sbxctl run -- /bin/true < /dev/null; }
run_d() { HELPER=1 srun -p PermissionsStartOnly=yes -p "ExecStopPost=-$EXEC --figures=/var/lib/sbx/figures" \
            "${helper[@]}"; }
run_e() { HELPER=1 srun -p PermissionsStartOnly=yes -p "ExecStopPost=-/bin/true" "${helper[@]}"; }
run_h() { "${T[@]}" systemd-run --quiet --wait --pipe -p DynamicUser=yes -p ProtectSystem=strict -p PrivateTmp=yes \
            -p PrivateDevices=yes -p PrivateNetwork=yes -p SystemCallFilter=@system-service -p "MemoryMax=$mem" \
            -p "TasksMax=$tasks" -p RuntimeMaxSec=3600 /bin/true < /dev/null; }

# warm up every path (first D-Bus activation of sbxd, page cache)
for f in run_a run_b run_d run_e run_h run_c; do prep && $f || { echo "bench: $f failed" >&2; exit 1; }; tidy; done
rm -f "$TOOK_FILE"

A=() B=() C=() D=() E=() H=()
for i in $(seq "$N"); do
  for f in run_a run_b run_d run_e run_h run_c; do
    prep || { echo "bench: cannot make a space's directories" >&2; exit 1; }
    settle; stamp t0; $f || { echo "bench: $f failed" >&2; exit 1; }; stamp t1
    tidy
    case $f in
      run_a) A+=("$(took "$t0" "$t1")") ;; run_b) B+=("$(took "$t0" "$t1")") ;;
      run_c) C+=("$(took "$t0" "$t1")") ;; run_d) D+=("$(took "$t0" "$t1")") ;;
      run_e) E+=("$(took "$t0" "$t1")") ;; run_h) H+=("$(took "$t0" "$t1")") ;;
    esac
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
mA=$(median "${A[@]}"); mB=$(median "${B[@]}"); mC=$(median "${C[@]}"); mD=$(median "${D[@]}")
mE=$(median "${E[@]}"); mH=$(median "${H[@]}")
rCA=$(echo "scale=3; $mC / $mA" | bc); rCH=$(echo "scale=3; $mC / $mH" | bc)
rDB=$(echo "scale=3; $mD / $mB" | bc); rEB=$(echo "scale=3; $mE / $mB" | bc); rDE=$(echo "scale=3; $mD / $mE" | bc)

# sbxd idle: let it settle, then read its resident set
sleep 2
pid=$(systemctl show -p MainPID --value sbxd.service)
rss_kb=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status")
pss_kb=$(awk '/^Pss:/{print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null)

echo "sbx run overhead, $N interleaved runs each, median wall time of /bin/true (kernel $(uname -r), $(systemd-detect-virt --vm 2>/dev/null || echo no VM)); clock: $CLOCK"
printf '  A systemd-run, same properties        %9.1f ms\n' "$mA"
printf '  B systemd-run, same properties+helper %9.1f ms   (and a Python start-up: helper-cmd.py)\n' "$mB"
printf '  D B + the figures reader             %9.1f ms   D/B %.3f (target < 1.05)\n' "$mD" "$rDB"
printf '  E B + an ExecStopPost=/bin/true       %9.1f ms   E/B %.3f, D/E %.3f (the process; the reading)\n' "$mE" "$rEB" "$rDE"
printf '  H systemd-run, plain hardened         %9.1f ms\n' "$mH"
printf '  C sbxctl run                          %9.1f ms   C/A %.3f (target <= 1.05), C/H %.3f (target <= 1.15)\n' "$mC" "$rCA" "$rCH"
printf '  sbxd idle resident memory             %9.1f MiB (Pss %s KiB; target < 8 MiB)\n' "$(echo "scale=2; $rss_kb/1024" | bc)" "${pss_kb:-?}"
echo "BENCH median_ms_systemd_run $mA"
echo "BENCH median_ms_systemd_run_helper $mB"
echo "BENCH median_ms_sbxctl $mC"
echo "BENCH ratio_sbxctl_vs_systemd_run $rCA"
echo "BENCH median_ms_systemd_run_hardened $mH"
echo "BENCH ratio_sbxctl_vs_hardened $rCH"
echo "BENCH median_ms_systemd_run_helper_figures $mD"
echo "BENCH ratio_figures_vs_helper $rDB"
echo "BENCH median_ms_systemd_run_helper_empty_stoppost $mE"
echo "BENCH ratio_empty_stoppost_vs_helper $rEB"
echo "BENCH sbxd_idle_rss_kib $rss_kb"
