#!/usr/bin/env bash
# bench/pool-stages.sh - where a pooled run's time goes, stage by stage, in the native lane: N paced
# `sbxctl run -- /bin/true` served by the warm pool, traced from the host with perf's scheduler and
# syscall tracepoints (no per-syscall tracing of the processes, which would slow them down many times),
# and the p50 and minimum of each stage between:
#   exec       sbxctl's execve                     connect    its connect() to sbxd's own socket
#   accept     sbxd's accept()                     run_sent   the Run call sent (after the handshake)
#   claim      sbxd's last send before the pooled helper's first (the command handed over)
#   ready      the helper's READY=1 to systemd     true       /bin/true's exec in the run
#   true_exit  its exit                            finished   the helper's FINISHED to sbxd
#   exited     sbxd's Exited to the client         end        sbxctl's exit_group
# Runs ON THE HOST, as root, with perf, against a running nspawn testbed with sbx installed:
#   export SBX_NSPAWN_NAME=dev SBX_BIND=$PWD; testbed/nspawn.sh start
#   testbed/nspawn.sh exec bash tests/integration/payload.sh --install-only build-testbed
#   bench/pool-stages.sh [N]      (default 16; the profile sbxbench_stages, a pool of 2, added and removed)
# A diagnostic, not a target: pool-run.sh holds the comparison with bubblewrap. Prints one
# "BENCH stage_FROM_TO_p50_ms value" line per stage.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

# --runs N, inside the testbed: the paced runs, each after two waiting units and half a second of quiet
if [ "${1:-}" = --runs ]; then
  N=$2 PROFILE=sbxbench_stages
  mkdir -p /run/sbx/profiles.d
  jq '.pool = {"size": 2}' /usr/lib/sbx/profiles.d/offline.json > "/run/sbx/profiles.d/$PROFILE.json"
  trap 'rm -f "/run/sbx/profiles.d/$PROFILE.json"; sbxctl profile reload > /dev/null' EXIT
  systemctl start sbxd.service || { echo "bench: cannot start sbxd" >&2; exit 1; }
  sbxctl profile reload > /dev/null || { echo "bench: profile reload failed" >&2; exit 1; }
  for ((i = 0; i < N; i++)); do
    end=$((SECONDS + 120))
    while [ "$(pool_waiting "$PROFILE")" -lt 2 ]; do
      [ "$SECONDS" -lt "$end" ] || { echo "bench: the pool did not fill within 120 s" >&2; exit 1; }
      sleep 0.1
    done
    sleep 0.5
    sbxctl run -p "$PROFILE" -- /bin/true < /dev/null > /dev/null 2>&1
  done
  exit 0
fi

N=${1:-16}
command -v perf >/dev/null || { echo "bench: perf is not installed (Debian: linux-perf)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench: must run as root" >&2; exit 2; }
TMP=$(mktemp -d /var/tmp/sbx-stages.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# the testbed sees the repo at its own path (SBX_BIND): this script runs there with --runs
perf record -q -o "$TMP/perf.data" -a -e sched:sched_process_exec -e sched:sched_process_exit \
  -e syscalls:sys_enter_connect -e syscalls:sys_enter_accept4 -e syscalls:sys_enter_sendmsg \
  -e syscalls:sys_enter_sendto -e syscalls:sys_enter_exit_group \
  -- "$REPO/testbed/nspawn.sh" exec bash "$REPO/bench/pool-stages.sh" --runs "$N" > /dev/null 2>&1 ||
  { echo "bench: perf record or the runs failed" >&2; exit 1; }
perf script -i "$TMP/perf.data" -F comm,pid,time,event,trace 2> /dev/null > "$TMP/events.txt"
python3 "$REPO/bench/pool-stages.py" "$TMP/events.txt"
