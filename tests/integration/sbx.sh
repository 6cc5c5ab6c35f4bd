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
record_get() { sbxctl show --json "$1" | GOMAXPROCS=1 "$SBX_JQ" -r "$2"; }

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

# helper_unit UNIT COMMAND PROPERTY... -- HELPER-OPTION...: the installed helper (sbx-exec) alone in a
# transient unit UNIT with those properties and options, given `sh -c COMMAND` the way sbxd gives it a
# command (on the unit's stdin: helper-cmd.py). Prints "rc=N status=TEXT": the unit's exit status and
# the status text the helper left (what it refused, or that it ran the command).
SBX_EXEC=/usr/libexec/sbx/sbx-exec
helper_unit() {
  local unit=$1 cmd=$2 props=() st rc; shift 2
  while [ "$1" != -- ]; do props+=("$1"); shift; done; shift
  /usr/bin/python3 "${BASH_SOURCE[0]%/*}/helper-cmd.py" sh -c "$cmd" -- \
    systemd-run -q --wait --pipe --unit="$unit" -p RemainAfterExit=yes "${props[@]}" "$SBX_EXEC" "$@" >/dev/null 2>&1 </dev/null
  st=$(systemctl show -p StatusText --value "$unit")
  rc=$(systemctl show -p ExecMainStatus --value "$unit")
  systemctl stop "$unit" >/dev/null 2>&1; systemctl reset-failed "$unit" >/dev/null 2>&1
  echo "rc=$rc status=$st"
}
