# tests/integration/sbx.sh - sbx-specific helpers for the integration tests (sourced after lib.sh).
# shellcheck shell=bash

SBX_STATEDIR=/var/lib/sbx
SBX_RUNS_DIR=$SBX_STATEDIR/runs

# the id of the newest run visible to the caller
last_run_id() { sbxctl list --no-legend | tail -n 1 | awk '{print $1}'; }

# record_get RUN JQ-EXPR: one field of a run's record (as root: sees all runs)
record_get() { sbxctl show --json "$1" | jq -r "$2"; }

# number of records on disk
record_count() { find "$SBX_RUNS_DIR" -maxdepth 1 -name '*.json' | wc -l; }

# sbx units still loaded (runs' units and their network and space units sbx-net@RUN.service,
# sbx-space@RUN.service), cgroups still present, credentials and grants, dynamic users still allocated,
# runs' network namespaces and spaces still there (sbx-bpffs.service, sbx-gc.service and
# sbx-broker.service are sbx's own units, not a run's)
# (a base image's mount outlives its runs on purpose, for a while: sbx_image_leftovers lists it)
sbx_leftovers() {
  systemctl list-units --all --no-legend --plain 'sbx-*.service' | awk '$1 != "sbx-bpffs.service" && $1 != "sbx-gc.service" && $1 != "sbx-broker.service" && $1 !~ /^sbx-image(-hold)?@/ {print "unit " $1}'
  find /sys/fs/cgroup/sbx.slice -mindepth 1 -maxdepth 2 -type d -name 'sbx-*.service' ! -name 'sbx-image@*' ! -name 'sbx-image-hold@*' 2>/dev/null | sed 's/^/cgroup /'
  find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'sbx-net@*.service' 2>/dev/null | sed 's/^/cgroup /'
  find /run/sbx/netns -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/netns /'
  find /run/sbx/space -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/space /'
  # runs' credentials given by value (encrypted), grant files and the broker's operations logs
  find /run/sbx/credentials /run/sbx/grants -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/credentials /'
  # the reviews of runs' exports (a run's stays only while the caller has items held: tests reject them)
  find "$SBX_STATEDIR/exports" -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/export /'
  for f in /run/systemd/dynamic-uid/direct:sbx-* /run/systemd/dynamic-uid/direct:_du*; do
    [ -e "$f" ] && echo "dynamic-user ${f##*direct:}"
  done
  find "$SBX_RUNS_DIR" -maxdepth 1 -name '.#*' 2>/dev/null | sed 's/^/temp-record /'
  find "$SBX_STATEDIR/figures" -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/figures /'
  true
}

# sbx_image_leftovers: what keeps a base image mounted (docs/images.md): its units, mounts, devices
sbx_image_leftovers() {
  systemctl list-units --all --no-legend --plain 'sbx-image@*.service' 'sbx-image-hold@*.service' | awk '{print "unit " $1}'
  find /run/sbx/images -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/image-mount /'
  dmsetup ls 2>/dev/null | awk '/-verity/ {print "dm-verity " $1}'
  true
}

# assert_clean [WHAT]: nothing of any run is left (units, cgroups, users, temp records). systemd
# collects units asynchronously; give it a moment.
assert_clean() {
  local left i
  for i in $(seq 50); do
    left=$(sbx_leftovers)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  _t_err "${1:-after the run} leftovers: $(echo "$left" | tr '\n' ' ')"
}

# sbx_wait_active RUN: until the run's unit is active (max ~30 s)
sbx_wait_active() {
  local i unit
  unit=$(record_get "$1" .unit)
  for i in $(seq 300); do
    systemctl is-active -q "$unit" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# sbx_wait_new_run BEFORE_COUNT [CLIENT_PID]: id of the newest run whose record says running, once there are more
# records than BEFORE_COUNT (polls, max ~30 s)
sbx_wait_new_run() {
  local i id
  for i in $(seq 300); do
    # the client already gave up (the run was refused or failed to start): no point waiting
    [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
    if [ "$(record_count)" -gt "$1" ]; then
      id=$(sbxctl list --no-legend | awk '$3=="running"{print $1}' | tail -n 1)
      [ -n "$id" ] && { echo "$id"; return 0; }
    fi
    sleep 0.1
  done
  return 1
}

# sbx_run_bg OUTFILE SBXCTL-RUN-ARGS...: start "sbxctl run ARGS" in the background (output to OUTFILE)
# and wait until its unit is active; sets CPID (the client) and RUN (the run id). Not in a $(...).
sbx_run_bg() {
  local out=$1 before; shift
  before=$(record_count)
  sbxctl run "$@" > "$out" 2>&1 & CPID=$!
  RUN=$(sbx_wait_new_run "$before" "$CPID") || { _t_err "no running run appeared: $(cat "$out")"; return 1; }
  sbx_wait_active "$RUN" || { _t_err "the unit of run $RUN never became active"; return 1; }
}
