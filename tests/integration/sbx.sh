# tests/integration/sbx.sh - sbx-specific helpers for the integration tests (sourced after lib.sh).
# shellcheck shell=bash

SBX_STATEDIR=/var/lib/sbx
SBX_RUNS_DIR=$SBX_STATEDIR/runs

# A fork bomb for `bash -c`: forks until refused, then exits 2 (sbx ends what is left). Its sleep is
# started before the bomb: forked after it, it would compete with the bomb for a task slot, and bash
# gives up a fork after ~30 s of retries (exit 254). limits-client.py has the same string.
SBX_FORK_BOMB='sleep 2 & s=$!; b() { b | b & }; b; wait "$s"; exit 2'

# Profiles a test adds for its runs: t_add_profile NAME puts its stdin into $RUNPROF/NAME.json (the
# runtime profile directory; again: replaced). At exit, or at t_remove_profiles, they are removed, with
# /run/sbx when that is left empty, and systemd reloaded (the generator's units of them go too).
RUNPROF=/run/sbx/profiles.d
T_PROFILES=()
t_add_profile() {
  mkdir -p "$RUNPROF" && cat > "$RUNPROF/$1.json" || return 1
  [ "${#T_PROFILES[@]}" -gt 0 ] || t_on_exit t_remove_profiles
  [[ " ${T_PROFILES[*]} " == *" $RUNPROF/$1.json "* ]] || T_PROFILES+=("$RUNPROF/$1.json")
}
# a profile the generator and sbxd refuse: its memory is not a size (test-65, test-66)
INVALID_PROFILE='{
  "version": 1,
  "description": "invalid on purpose: memory is not a size",
  "network": { "mode": "none" },
  "resources": { "memory": true, "tasks": 8, "wall_time": "1min" }
}'
t_remove_profiles() {
  [ "${#T_PROFILES[@]}" -gt 0 ] || return 0
  rm -f "${T_PROFILES[@]}"
  T_PROFILES=()
  rmdir "$RUNPROF" /run/sbx 2>/dev/null
  systemctl daemon-reload
}

# the id of the newest run visible to the caller
last_run_id() { sbxctl list --no-legend | { local id last=""; while read -r id _; do last=$id; done; echo "$last"; }; }

# record_get RUN JQ-EXPR: one field of a run's record (as root: sees all runs). With gojq where it is
# installed: the tests call this hundreds of times, and under the VM's emulation gojq (one static
# program) takes ~0.1 s where jq 1.6 takes ~0.45 s to compile its builtins. Both print fields and
# strings alike (gojq sorts an object's keys: compare fields, not whole objects).
if command -v gojq >/dev/null 2>&1; then SBX_JQ=gojq; else SBX_JQ=jq; fi
record_get() { record_final "$1"; sbxctl show --json "$1" | GOMAXPROCS=1 "$SBX_JQ" -r "$2"; }

# record_final RUN: until the run's record on disk is no longer the interim one sbxd writes when the
# command has ended ("state": "exited", written again with the cleanup's facts at Finished): sbxctl run
# returns at that point, and a test that reads the record's cleanup or its final fields waits here.
# Shell builtins only; returns at once for a running or finished run and for one without a record.
record_final() {
  local f=$SBX_RUNS_DIR/$1.json i
  for ((i = 0; i < 300; i++)); do
    [ -e "$f" ] && [[ $(< "$f") =~ \"state\":\ *\"exited\" ]] || return 0
    sleep 0.05
  done
  _t_err "run $1: its record still says \"exited\" after 15 s (cleanup not finished)"
}

# number of records on disk (like every helper here that a test calls in a loop, with shell builtins
# only: under emulation each program started costs 50 ms or more)
record_count() ( shopt -s nullglob dotglob; f=("$SBX_RUNS_DIR"/*.json); echo "${#f[@]}" )

# _sbx_paths WHAT PATTERN...: "WHAT PATH" for each existing path the patterns match (dot files too)
_sbx_paths() {
  local what=$1 f; shift
  for f in "$@"; do [ -e "$f" ] && echo "$what $f"; done
  return 0
}

# sbx units still loaded (runs' units and their network and space units sbx-net@RUN.service,
# sbx-space@RUN.service), cgroups still present, credentials and grants, dynamic users still allocated,
# runs' network namespaces and spaces still there (sbx-bpffs.service, sbx-gc.service and
# sbx-broker.service are sbx's own units, not a run's)
# (a base image's mount outlives its runs on purpose, for a while: sbx_image_leftovers lists it)
sbx_leftovers() (
  shopt -s nullglob dotglob
  local u _ d
  systemctl list-units --all --no-legend --plain 'sbx-*.service' | while read -r u _; do
    case $u in sbx-bpffs.service|sbx-gc.service|sbx-broker.service|sbx-image@*|sbx-image-hold@*) ;; *) echo "unit $u" ;; esac
  done
  for d in /sys/fs/cgroup/sbx.slice/sbx-*.service /sys/fs/cgroup/sbx.slice/*/sbx-*.service; do
    case ${d##*/} in sbx-image@*|sbx-image-hold@*) ;; *) [ -d "$d" ] && echo "cgroup $d" ;; esac
  done
  for d in /sys/fs/cgroup/sbx-net@*.service /sys/fs/cgroup/*/sbx-net@*.service /sys/fs/cgroup/*/*/sbx-net@*.service; do
    [ -d "$d" ] && echo "cgroup $d"
  done
  _sbx_paths netns /run/sbx/netns/*
  _sbx_paths space /run/sbx/space/*
  # runs' credentials given by value (encrypted), grant files and the broker's operations logs
  _sbx_paths credentials /run/sbx/credentials/* /run/sbx/grants/*
  # the reviews of runs' exports (a run's stays only while the caller has items held: tests reject them)
  _sbx_paths export "$SBX_STATEDIR"/exports/*
  for d in /run/systemd/dynamic-uid/direct:sbx-* /run/systemd/dynamic-uid/direct:_du*; do
    [ -e "$d" ] && echo "dynamic-user ${d##*direct:}"
  done
  _sbx_paths temp-record "$SBX_RUNS_DIR"/.#*
  _sbx_paths figures "$SBX_STATEDIR"/figures/*
  true
)

# sbx_image_leftovers: what keeps a base image mounted (docs/images.md): its units, mounts, dm-verity and
# loop devices
sbx_image_leftovers() {
  systemctl list-units --all --no-legend --plain 'sbx-image@*.service' 'sbx-image-hold@*.service' | awk '{print "unit " $1}'
  find /run/sbx/images -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/image-mount /'
  dmsetup ls 2>/dev/null | awk '/-verity/ {print "dm-verity " $1}'
  losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v s="$SBX_STATEDIR/images/" 'index($2, s) == 1 {print "loop " $1 " " $2}'
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

# sb_gone ID: until sbxd no longer follows the sandbox (its record is final)
sb_gone() { for _ in $(seq 100); do [ "$(record_get "$1" .state 2>/dev/null)" = finished ] && return 0; sleep 0.2; done; _t_err "sandbox $1 did not end"; }

# can_run SBXCTL-RUN-OPTIONS...: a quick run with these options works (else the case records why)
can_run() {
  t_run sbxctl run "$@" -- true
  [ "$T_RC" = 0 ] && return 0
  _t_err "'sbxctl run $* -- true' exited $T_RC: $(printf '%s' "$T_OUT" | head -c 400)"
  return 1
}
# size string of a profile ("8G", 1024, "0") -> what systemctl show prints for it
show_size() { if [ "$1" = 0 ] || [ "$1" = null ]; then echo infinity; else numfmt --from=iec "${1%B}"; fi; }

# ms: milliseconds now (no process)
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
records() { find "$SBX_RUNS_DIR" -maxdepth 1 -name '*.json' -printf '%f\n' | sort; }
# record_complete FILE: the record on disk is valid JSON, finished, with a stop reason, an end and a
# completed cleanup (prints what is wrong otherwise)
record_complete() {
  record_final "$(basename "$1" .json)"
  jq -e '.state == "finished" and .stop_reason != null and .ended_at != null and .cleanup.completed == true' \
    "$1" > /dev/null 2>&1 && return 0
  echo "$(basename "$1"): $(jq -c '{state, stop_reason, ended_at, cleanup, error}' "$1" 2>&1 | head -c 300)"
  return 1
}
# records_complete NAME.json...: each record complete; one whose cleanup was still under way when it was
# written (a space not yet removed after 5 s on a loaded host) must be completed by the reaper's next pass
records_complete() {
  local f bad=() files=()
  # one jq over all of them first (every program started costs under emulation)
  for f in "$@"; do files+=("$SBX_RUNS_DIR/$f"); record_final "${f%.json}"; done
  f=$(jq -r 'select((.state == "finished" and .stop_reason != null and .ended_at != null and .cleanup.completed == true) | not)
             | input_filename' "${files[@]}" 2>&1) && [ -z "$f" ] && return 0
  for f in "$@"; do record_complete "$SBX_RUNS_DIR/$f" > /dev/null || bad+=("$f"); done
  [ "${#bad[@]}" = 0 ] && return 0
  t_log "records with a cleanup still under way when written: ${bad[*]}; the reaper measures them again"
  sbxctl gc > /dev/null
  for f in "${bad[@]}"; do
    why=$(record_complete "$SBX_RUNS_DIR/$f") || _t_err "record not complete: $why"
  done
}

# sbx_wait_active RUN: until the run's unit is active (max ~30 s)
sbx_wait_active() {
  local i unit
  unit=$(record_get "$1" .unit)
  for ((i = 0; i < 300; i++)); do
    systemctl is-active -q "$unit" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# sbx_wait_new_run BEFORE_COUNT [CLIENT_PID]: id of the newest run whose record says running, once there are more
# records than BEFORE_COUNT (polls, max ~30 s)
sbx_wait_new_run() {
  local i id
  for ((i = 0; i < 300; i++)); do
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

# helper_unit UNIT COMMAND PROPERTY... -- HELPER-OPTION...: the installed helper (sbx-exec) alone in a
# transient unit UNIT with those properties and options, given `sh -c COMMAND` the way sbxd gives it a
# command (on the unit's stdin: helper-cmd.py). Prints "rc=N status=TEXT": the unit's exit status and
# the status text the helper left (what it refused, or that it ran the command).
SBX_EXEC=/usr/libexec/sbx/sbx-exec
# In the native lane (a testbed build) the helper is told, as sbxd tells it, which ceilings have no controller
# here (--unenforced-ceilings): the cases about those ceilings run in the vm lane.
helper_unit() {
  local unit=$1 cmd=$2 props=() st rc missing=(); shift 2
  while [ "$1" != -- ]; do props+=("$1"); shift; done; shift
  if [ "$(t_lane)" = native ]; then
    grep -qw memory /sys/fs/cgroup/cgroup.controllers || missing+=(memory)
    grep -qw pids /sys/fs/cgroup/cgroup.controllers || missing+=(tasks)
    grep -qw cpu /sys/fs/cgroup/cgroup.controllers || missing+=(cpu)
    [ "${#missing[@]}" = 0 ] || set -- "--unenforced-ceilings=$(IFS=,; echo "${missing[*]}")" "$@"
  fi
  /usr/bin/python3 "${BASH_SOURCE[0]%/*}/helper-cmd.py" sh -c "$cmd" -- \
    systemd-run -q --wait --pipe --unit="$unit" -p RemainAfterExit=yes "${props[@]}" "$SBX_EXEC" "$@" >/dev/null 2>&1 </dev/null
  st=$(systemctl show -p StatusText --value "$unit")
  rc=$(systemctl show -p ExecMainStatus --value "$unit")
  systemctl stop "$unit" >/dev/null 2>&1; systemctl reset-failed "$unit" >/dev/null 2>&1
  echo "rc=$rc status=$st"
}
