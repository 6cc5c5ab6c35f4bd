#!/usr/bin/env bash
# Compatibility: real toolchains and a subset of CPython's own regression tests run unmodified in the
# coding profile. Each task in compat/ runs outside the sandbox (a plain transient unit as the
# unprivileged user nobody, no hardening, the same environment variables) and inside
# (sbxctl run --profile coding --network none --workspace DIR); both must pass. The regression tests
# are compared test id by test id; a test that passes outside but not inside must be listed in
# compat/known-differences.txt (with its reason, mirrored in docs/compat.md).
# The gVisor tier (docs/security.md "Isolation tiers"): each task and the regression tests run a third
# time, at the same time, inside a profile with process.isolation "gvisor" (default: the shipped
# untrusted), compared with the same outside run; what differs there must be in known-differences.txt
# or in compat/known-differences-gvisor.txt (what gVisor's kernel does differently, each with its
# reason, mirrored in docs/compat.md's gVisor column). Skipped, with the reason, where runsc is missing.
#
# env: SBX_COMPAT_PROFILE  profile to run inside (default: coding)
#      SBX_COMPAT_GVISOR   the gVisor tier's profile (default: untrusted; "none": the kernel tier only)
#      SBX_COMPAT_TASKS    task names to run (default: all but venv-pip and tar-zip, the two slowest
#                          after gcc-make, which are reported as skipped; "all": every task)
#      SBX_COMPAT_MODULES  CPython test modules to run instead of the default subset (7 modules;
#                          "standard": the 22 docs/compat.md reports on; "none": skip;
#                          "extended": the standard modules and slower ones, for a run by hand)
#      SBX_COMPAT_TIMEOUT  seconds the regression tests may take on each side (default 3000)
#      SBX_COMPAT_SERIAL=1 outside, then inside (default: both at once)
#      SBX_COMPAT_KEEP     directory to copy the logs and results into (default: none)
#      SBX_COMPAT_FULL=1   the tasks' slower extra steps too (COMPAT_FULL=1 in the tasks)
# lane: native
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sbx.sh"
t_require_systemd || t_summary

CDIR=$(cd "$(dirname "$0")/compat" && pwd)
PROFILE=${SBX_COMPAT_PROFILE:-coding}
GPROFILE=${SBX_COMPAT_GVISOR:-untrusted}
# --network none narrows a profile with network access (the tasks need none, and coding's registries
# are not reachable from the testbed); a profile whose network is already none (offline, untrusted)
# may refuse the option, and older sbxctl lack it
net_opts() {   # PROFILE: the options that narrow its network to none, one a line
  if sbxctl --help 2>&1 | grep -q -- '--network' &&
     ! sbxctl profile show "$1" 2>/dev/null | grep -Eq '^[[:space:]]*network:[[:space:]]+none'; then
    printf '%s\n' --network none
  fi
}
mapfile -t NET < <(net_opts "$PROFILE")
W=$(mktemp -d /var/tmp/sbxcompat.XXXXXX); chmod 755 "$W"; t_on_exit "rm -rf '$W'"
KEEP=${SBX_COMPAT_KEEP:-}
keep() { [ -n "$KEEP" ] && mkdir -p "$KEEP" && cp -r "$@" "$KEEP/" 2>/dev/null; return 0; }

now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

# fresh_dir NAME: a directory with a copy of compat/, owned by OWNER (root for the sandbox: the
# caller's tree is handed over to the run's user; nobody for the run outside)
fresh_dir() {   # NAME OWNER
  local d=$W/$1
  rm -rf "$d"; mkdir -p "$d/.home" && cp -r "$CDIR" "$d/compat" && chown -R "$2" "$d" && echo "$d"
}

# outside DIR SECONDS CMD...: a plain transient unit as nobody in DIR, HOME=DIR/.home, the sandbox's
# other variables; no hardening, no limits beyond the wall time. Output in DIR.log, exit status in
# DIR.rc, seconds in DIR.secs.
outside() {
  local d=$1 secs=$2 t0; shift 2
  t0=$(now)
  systemd-run --quiet --wait --pipe --collect -p User=nobody -p Group=nogroup \
    -p WorkingDirectory="$d" -p RuntimeMaxSec="$secs" \
    -E HOME="$d/.home" -E PATH=/usr/local/bin:/usr/bin:/bin -E LANG=C.UTF-8 -- "$@" < /dev/null > "$d.log" 2>&1
  echo $? > "$d.rc"; since "$t0" > "$d.secs"
}

# inside PROFILE DIR SECONDS CMD...: sbxctl run in PROFILE with DIR as the workspace; results as above.
inside() {
  local p=$1 d=$2 secs=$3 t0 net; shift 3
  if [ "$p" = "$PROFILE" ]; then net=("${NET[@]}"); else net=("${GNET[@]}"); fi
  t0=$(now)
  sbxctl run --profile "$p" "${net[@]}" --timeout "${secs}s" --workspace "$d" -- "$@" < /dev/null > "$d.log" 2>&1
  echo $? > "$d.rc"; since "$t0" > "$d.secs"
}

# sides ODIR IDIR GDIR SECONDS CMD...: outside in ODIR, inside the profile in IDIR and, with the gVisor
# tier, inside its profile in GDIR, all at the same time (they share the machine's load alike, which
# keeps the time ratios fair under emulation and cuts the wall time), or one after the other with
# SBX_COMPAT_SERIAL=1. Sets ORC OSECS IRC ISECS, and GRC GSECS with the gVisor tier.
sides() {
  local o=$1 i=$2 g=$3 secs=$4 pids=(); shift 4
  if [ "${SBX_COMPAT_SERIAL:-0}" = 1 ]; then
    outside "$o" "$secs" "$@"; inside "$PROFILE" "$i" "$secs" "$@"
    [ "$GVISOR" = 1 ] && inside "$GPROFILE" "$g" "$secs" "$@"
  else
    outside "$o" "$secs" "$@" & pids+=($!)
    if [ "$GVISOR" = 1 ]; then inside "$GPROFILE" "$g" "$secs" "$@" & pids+=($!); fi
    inside "$PROFILE" "$i" "$secs" "$@"
    wait "${pids[@]}"
  fi
  ORC=$(cat "$o.rc") OSECS=$(cat "$o.secs") IRC=$(cat "$i.rc") ISECS=$(cat "$i.secs") GRC="" GSECS=""
  if [ "$GVISOR" = 1 ]; then GRC=$(cat "$g.rc") GSECS=$(cat "$g.secs"); fi
}

t_begin "profile '$PROFILE' is available${NET[*]:+ (with ${NET[*]})}"
if ! assert_rc 0 sbxctl profile show "$PROFILE"; then
  t_fail "profile '$PROFILE' not available: $T_OUT"
  t_summary
fi
t_log "$(printf '%s\n' "$T_OUT" | grep -E 'SystemCall|Protect|Private|MemoryDeny|ProcSubset|Restrict' | tr '\n' ' ' | head -c 1500)"

# The gVisor tier: its differences are the kernel tier's (the same profile restrictions hold around
# it) plus gVisor's own
GVISOR=0 GNET=()
t_begin "the gVisor tier: profile '$GPROFILE'"
if [ "$GPROFILE" = none ]; then
  t_skip "SBX_COMPAT_GVISOR=none"
elif ! command -v runsc >/dev/null; then
  t_skip "runsc is not installed (apt-get install runsc): the tasks run in the kernel tier only"
elif ! assert_rc 0 sbxctl profile show "$GPROFILE"; then
  t_fail "profile '$GPROFILE' not available: $T_OUT"
elif ! sbxctl run --profile "$GPROFILE" -- uname -r 2>&1 | grep -qx '4.4.0'; then
  t_fail "profile '$GPROFILE' does not run its command in gVisor (uname -r is not gVisor's 4.4.0)"
else
  GVISOR=1
  mapfile -t GNET < <(net_opts "$GPROFILE")
  cat "$CDIR/known-differences.txt" "$CDIR/known-differences-gvisor.txt" > "$W/known-gvisor.txt"
  t_log "runsc: $(runsc --version | head -n 1)"
  t_pass
fi

# ---------------------------------------------------------------------------------------- tasks
# task -> commands it needs (skipped with a reason when one is missing)
declare -A NEEDS=(
  [gcc-make]="gcc make" [git]="git" [venv-pip]="/usr/bin/python3" [node]="node"
  [tar-zip]="tar gzip xz bzip2 zip unzip" [multiprocessing]="/usr/bin/python3"
  [procps]="ps free uptime vmstat top pgrep pkill" [shell]="bc taskset ionice chrt prlimit flock" [debug]="gcc"
)
ALL_TASKS="gcc-make git venv-pip node tar-zip multiprocessing procps shell debug"
# the suite's default leaves out the two slowest tasks after gcc-make (about a minute in the VM), for
# its time budget; each is reported as skipped, with the knob that runs it
DEFAULT_TASKS="gcc-make git node multiprocessing procps shell debug"
TASKS=${SBX_COMPAT_TASKS:-$DEFAULT_TASKS}
[ "$TASKS" = all ] && TASKS=$ALL_TASKS
if [ -z "${SBX_COMPAT_TASKS:-}" ]; then
  for task in $ALL_TASKS; do
    [[ " $DEFAULT_TASKS " == *" $task "* ]] && continue
    t_begin "task $task: outside and inside '$PROFILE'$([ "$GVISOR" = 1 ] && echo " and '$GPROFILE' (gVisor)")"
    t_skip "not in the suite's default set (SBX_COMPAT_TASKS=all runs every task)"
  done
fi
TASKCMD=(bash)
[ "${SBX_COMPAT_FULL:-0}" = 1 ] && TASKCMD=(env COMPAT_FULL=1 bash)
TIMES=()
# check_task TIER DIR KNOWN-FILE: the task's run in DIR (exit status, last line, its DIFF lines, the
# workspace handed back) against the outside run $o, with the differences KNOWN-FILE lists; TIER names
# it in the messages. The procps task's reports (memory, CPUs, boot time) must agree with outside, or
# be listed as task:procps:report-KEY.
check_task() {
  local tier=$1 d=$2 known=$3 rc last id reason left k ov iv ob ib diff
  rc=$(cat "$d.rc"); last=$(grep '^TASK ' "$d.log" | tail -n 1)
  t_log "$tier: exit $rc in $(cat "$d.secs")s: $last"
  if [ "$rc" != 0 ] || [ "$last" != "TASK $task OK" ]; then
    sed "s/^/  $tier| /" "$d.log" | tail -n 25
    _t_err "$tier: the task failed (exit $rc): $last"
  fi
  # what a task reports as working differently ("DIFF ID: ...") must be a known difference
  for id in $(sed -n 's/^DIFF \([^:]*\):.*/\1/p' "$d.log" | sort -u); do
    if grep -q "^DIFF $id:" "$o.log"; then t_log "$tier: same outside: $(grep -m1 "^DIFF $id:" "$d.log")"; continue; fi
    known_diff "$tier" "task:$task:$id" "$known" "$(grep -m1 "^DIFF $id:" "$d.log")"
  done
  # the workspace comes back owned by its owner
  left=$(find "$d" ! -user root -printf '%u %p\n' 2>/dev/null | head -n 3)
  assert_eq "" "$left" "$tier: files in the workspace not handed back to its owner"
  if [ "$task" = procps ]; then
    # the same machine seen from both sides: total memory, CPUs and boot time must agree
    for k in MemTotal_kB cpus; do
      ov=$(awk -v k=$k '$1=="REPORT" && $2==k {print $3}' "$o.log") iv=$(awk -v k=$k '$1=="REPORT" && $2==k {print $3}' "$d.log")
      [ "$ov" = "$iv" ] || known_diff "$tier" "task:procps:report-$k" "$known" "$k outside $ov, inside $iv"
    done
    ob=$(awk '$2=="boot_time"{print $3}' "$o.log") ib=$(awk '$2=="boot_time"{print $3}' "$d.log")
    diff=$(( ${ob:-0} - ${ib:-9999} )); diff=${diff#-}
    [ "$diff" -le 3 ] || known_diff "$tier" "task:procps:report-boot_time" "$known" "boot time outside ($ob) and inside ($ib) differ by ${diff}s"
    t_log "$tier: visible processes: outside $(awk '$2=="visible"{print $4}' "$o.log"), inside $(awk '$2=="visible"{print $4}' "$d.log")"
  fi
}
# known_diff TIER ID KNOWN-FILE WHAT: a difference; known (logged with its reason) or an error
known_diff() {
  local reason
  reason=$(awk -v k="$2" '$1 == k {$1 = ""; print substr($0, 2); exit}' "$3")
  if [ -n "$reason" ]; then t_log "$1: known difference $2: $reason"
  else _t_err "$1: a difference not in compat/known-differences$([ "$1" = gvisor ] && echo '{,-gvisor}').txt: $2 ($4)"; fi
}
for task in $TASKS; do
  t_begin "task $task: outside and inside '$PROFILE'$([ "$GVISOR" = 1 ] && echo " and '$GPROFILE' (gVisor)")"
  [ -f "$CDIR/task-$task.sh" ] || { t_fail "no such task: $CDIR/task-$task.sh"; continue; }
  miss=""
  for c in ${NEEDS[$task]:-}; do command -v "$c" >/dev/null 2>&1 || miss="$miss $c"; done
  if [ "$task" = venv-pip ] && ! /usr/bin/python3 -c 'import setuptools, wheel, venv, pip' 2>/dev/null; then
    miss="$miss python3-venv/python3-pip/python3-setuptools/python3-wheel"
  fi
  if [ -n "$miss" ]; then t_skip "not installed:$miss"; continue; fi

  o=$(fresh_dir "out-$task" nobody:nogroup) || { t_fail "cannot prepare the outside directory"; continue; }
  i=$(fresh_dir "in-$task" root:root) || { t_fail "cannot prepare the workspace"; continue; }
  g=$(fresh_dir "gv-$task" root:root) || { t_fail "cannot prepare the gVisor workspace"; continue; }
  sides "$o" "$i" "$g" 900 "${TASKCMD[@]}" "compat/task-$task.sh"
  keep "$o.log" "$i.log"; [ "$GVISOR" = 1 ] && keep "$g.log"
  t_log "outside: exit $ORC in ${OSECS}s: $(grep '^TASK ' "$o.log" | tail -n 1)"
  TIMES+=("$task $OSECS $ISECS ${GSECS:--}")
  if [ "$ORC" != 0 ] || [ "$(grep '^TASK ' "$o.log" | tail -n 1)" != "TASK $task OK" ]; then
    sed 's/^/  out| /' "$o.log" | tail -n 25
    _t_err "outside the sandbox the task failed (exit $ORC): $(tail -n 1 "$o.log")"
  fi
  check_task inside "$i" "$CDIR/known-differences.txt"
  [ "$GVISOR" = 1 ] && check_task gvisor "$g" "$W/known-gvisor.txt"
  t_pass
done

# ------------------------------------------------------------------- CPython regression subset
# Chosen for the OS interfaces a sandbox changes (files, processes, ptys, signals, polling, memory
# maps, resources, time, users, paths) and for finishing in a few minutes under TCG emulation; the
# measurements behind the choice are in docs/compat.md. "extended" adds slower modules (sockets,
# subprocess, signals, threading, ...), for a run by hand.
# The suite's default is the core of it (files, paths, processes, ptys, resources, users); "standard"
# is the 22 modules docs/compat.md reports on (about 2.5 more minutes in the VM).
DEFAULT_MODULES="test_os test_posix test_stat test_fcntl test_pty test_resource test_wait4"
STANDARD_MODULES="$DEFAULT_MODULES test_pathlib test_tempfile test_shutil test_pwd test_grp test_glob test_fileio test_select test_epoll test_mmap test_time
  test_threadsignals test_fork1 test_getpass test_platform"
EXTENDED_MODULES="test_poll test_openpty test_thread test_sysconfig test_socket test_subprocess
  test_signal test_selectors test_threading test_eintr test_faulthandler test_file_eintr test_json
  test_re test_sched test_uuid test_site test_hashlib test_multiprocessing_forkserver
  test_concurrent_futures test_venv test_asyncio test_logging"
MODULES=${SBX_COMPAT_MODULES:-$DEFAULT_MODULES}
[ "$MODULES" = standard ] && MODULES=$STANDARD_MODULES
[ "$MODULES" = extended ] && MODULES="$STANDARD_MODULES $EXTENDED_MODULES"
# Outside and inside run at the same time, each running the modules one after the other in one
# process (a worker process per module costs seconds of start-up under emulation); with
# SBX_COMPAT_SERIAL=1 one side after the other, two workers each.
REGR=(/usr/bin/python3 -m test --timeout 900)
[ "${SBX_COMPAT_SERIAL:-0}" = 1 ] && REGR=(/usr/bin/python3 -m test -j2 --timeout 900)
if [ "$MODULES" = none ]; then
  t_begin "CPython regression subset"; t_skip "SBX_COMPAT_MODULES=none"
elif [ ! -d /usr/lib/python3.11/test/libregrtest ]; then
  t_begin "CPython regression subset"; t_skip "CPython's test suite is not installed (libpython3.11-testsuite)"
else
  # shellcheck disable=SC2086
  set -- $MODULES
  t_begin "CPython regression subset ($# modules): outside and inside '$PROFILE'$([ "$GVISOR" = 1 ] && echo " and '$GPROFILE' (gVisor)")"
  o=$(fresh_dir out-regrtest nobody:nogroup) i=$(fresh_dir in-regrtest root:root) g=$(fresh_dir gv-regrtest root:root)
  sides "$o" "$i" "$g" "${SBX_COMPAT_TIMEOUT:-3000}" "${REGR[@]}" --junit-xml junit.xml "$@"
  t_log "outside: exit $ORC in ${OSECS}s: $(grep -E '^Tests result' "$o.log" | tail -n 1)"
  t_log "inside:  exit $IRC in ${ISECS}s: $(grep -E '^Tests result' "$i.log" | tail -n 1)"
  [ "$GVISOR" = 1 ] && t_log "gvisor:  exit $GRC in ${GSECS}s: $(grep -E '^Tests result' "$g.log" | tail -n 1)"
  [ -s "$o/junit.xml" ] || { tail -n 30 "$o.log"; _t_err "outside: no results (exit $ORC)"; }
  [ -s "$i/junit.xml" ] || { tail -n 30 "$i.log"; _t_err "inside: no results (exit $IRC)"; }
  [ "$GVISOR" = 0 ] || [ -s "$g/junit.xml" ] || { tail -n 30 "$g.log"; _t_err "gvisor: no results (exit $GRC)"; }
  keep "$o.log" "$i.log"; [ -n "$KEEP" ] && cp "$o/junit.xml" "$KEEP/out-junit.xml" && cp "$i/junit.xml" "$KEEP/in-junit.xml"
  [ "$GVISOR" = 1 ] && keep "$g.log" && [ -n "$KEEP" ] && cp "$g/junit.xml" "$KEEP/gv-junit.xml"
  TIMES+=("regrtest $OSECS $ISECS ${GSECS:--}")
  t_pass

  # compare_regr TIER DIR KNOWN-FILE: the regression tests' results in DIR against outside's ($o);
  # the tests that differ unexpectedly run once more, outside and in that tier only
  compare_regr() {
    local tier=$1 d=$2 known=$3 still mods o2 d2 id prof=$PROFILE
    [ "$tier" = gvisor ] && prof=$GPROFILE
    if [ ! -s "$o/junit.xml" ] || [ ! -s "$d/junit.xml" ]; then t_skip "no results to compare"; return; fi
    t_run /usr/bin/python3 "$CDIR/regrtest-compare.py" "$o/junit.xml" "$o.log" "$d/junit.xml" "$d.log" \
      "$known" --unexpected "$W/unexpected-$tier" --json "$W/compare-$tier.json"
    printf '%s\n' "$T_OUT" | sed 's/^/  /'
    keep "$W/compare-$tier.json"
    if [ "$T_RC" != 0 ] && [ -s "$W/unexpected-$tier" ]; then
      # a test that differed once may be flaky under emulation: run those again on both sides
      still=$(grep '^module:' "$W/unexpected-$tier" | tr '\n' ' ')
      grep -v '^module:' "$W/unexpected-$tier" > "$W/match" || true
      mods=$(cut -d. -f2 "$W/match" | sort -u | tr '\n' ' ')
      if [ -n "${mods// /}" ]; then
        t_log "running $(wc -l < "$W/match") differing test(s) again, outside and in '$prof': $mods"
        o2=$(fresh_dir out-rerun nobody:nogroup) d2=$(fresh_dir "$tier-rerun" root:root)
        cp "$W/match" "$o2/match"; chown nobody "$o2/match"; cp "$W/match" "$d2/match"
        # shellcheck disable=SC2086
        { outside "$o2" 1800 "${REGR[@]}" --matchfile match --junit-xml junit.xml $mods & }
        # shellcheck disable=SC2086
        inside "$prof" "$d2" 1800 "${REGR[@]}" --matchfile match --junit-xml junit.xml $mods
        wait
        t_run /usr/bin/python3 "$CDIR/regrtest-compare.py" "$o2/junit.xml" "$o2.log" "$d2/junit.xml" "$d2.log" \
          "$known" --unexpected "$W/unexpected2"
        printf '%s\n' "$T_OUT" | grep -E '^(DIFF|outside|inside)' | sed 's/^/  again: /'
        touch "$W/unexpected2"
        while read -r id; do
          if grep -qxF "$id" "$W/unexpected2"; then still="$still $id"
          else t_log "flaky (the same outside and in '$prof' when run again): $id"; fi
        done < "$W/match"
      fi
      if [ -n "${still// /}" ]; then
        # shellcheck disable=SC2086  # one id a word
        _t_err "$tier: differences not in compat/known-differences$([ "$tier" = gvisor ] && echo '{,-gvisor}').txt:$(printf ' %s' $still)"
      fi
    elif [ "$T_RC" != 0 ]; then
      _t_err "regrtest-compare.py exited $T_RC"
    fi
    t_pass
  }
  t_begin "CPython regression subset: every difference is known ('$PROFILE')"
  compare_regr inside "$i" "$CDIR/known-differences.txt"
  if [ "$GVISOR" = 1 ]; then
    t_begin "CPython regression subset: every difference is known ('$GPROFILE', gVisor)"
    compare_regr gvisor "$g" "$W/known-gvisor.txt"
  fi
fi

# -------------------------------------------------------------------------------- timings
t_begin "wall time inside / outside"
tot_o=0 tot_i=0 tot_g=0
ratio() { echo "scale=2; $1 / $2" | bc 2>/dev/null; }
for line in "${TIMES[@]}"; do
  read -r n a b c <<< "$line"
  gv=""
  if [ "$c" != - ]; then gv=$(printf '  gvisor %7.1fs  ratio %s' "$c" "$(ratio "$c" "$a")"); tot_g=$(echo "$tot_g + $c" | bc); fi
  t_log "$(printf '%-16s outside %7.1fs  inside %7.1fs  ratio %s%s' "$n" "$a" "$b" "$(ratio "$b" "$a")" "$gv")"
  tot_o=$(echo "$tot_o + $a" | bc) tot_i=$(echo "$tot_i + $b" | bc)
done
gv=""
[ "$GVISOR" = 1 ] && gv=$(printf '  gvisor %7.1fs  ratio %s' "$tot_g" "$(ratio "$tot_g" "$tot_o")")
[ "${#TIMES[@]}" -gt 0 ] && t_log "$(printf '%-16s outside %7.1fs  inside %7.1fs  ratio %s%s' all "$tot_o" "$tot_i" "$(ratio "$tot_i" "$tot_o")" "$gv")"
t_pass

t_begin "no units, cgroups or users left behind"
assert_clean "after the compatibility runs"
t_pass
t_summary
