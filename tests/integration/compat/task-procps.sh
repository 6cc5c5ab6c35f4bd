#!/usr/bin/env bash
# procps: ps, pgrep/pkill, free, uptime, vmstat, top, and the /proc files they read. The values are
# checked against /proc; the caller compares the "REPORT" lines inside and outside.
. "$(dirname "$0")/lib-task.sh"
for c in ps free uptime vmstat top pgrep pkill; do command -v $c >/dev/null || fail "$c not installed"; done

step "ps sees this shell and its children"
sleep 300 & spid=$!
started "$spid" sleep
out=$(ps -ef) || fail "ps -ef exited $?"
echo "$out" | head -n 5
contains "$out" "sleep 300" "ps -ef"
expect "$$" "$(ps -o ppid= -p "$spid" | tr -d ' ')" "parent of the sleep as ps sees it"
expect "sleep" "$(ps -o comm= -p "$spid")" "ps -o comm"
out=$(ps aux) || fail "ps aux exited $?"
contains "$out" "sleep 300" "ps aux"
ps -o pid,ppid,uid,user,stat,rss,vsz,pcpu,etime,comm -p "$$,$spid" || fail "ps -o ... exited $?"
expect "$spid" "$(pgrep -f -u "$(id -u)" '^sleep 300$')" "pgrep"
run pkill -TERM -f '^sleep 300$'
wait "$spid" 2>/dev/null; expect 143 "$?" "exit status of the sleep killed by pkill"
echo "REPORT visible processes $(ps -e --no-headers | wc -l)"

step "free agrees with /proc/meminfo"
out=$(free -k) || fail "free exited $? (is /proc/meminfo readable?)"
echo "$out"
total=$(awk '/^Mem:/{print $2}' <<< "$out")
expect "$(awk '/^MemTotal:/{print $2}' /proc/meminfo)" "$total" "free's total (KiB)"
[ "${total:-0}" -gt 0 ] || fail "free reports no memory"
run free -h -w
echo "REPORT MemTotal_kB $total"

step "uptime agrees with /proc/uptime and /proc/loadavg"
out=$(uptime) || fail "uptime exited $? (is /proc/uptime readable?)"
echo "$out"
case $out in *" up "*"load average: "*) ;; *) fail "uptime's output: $out" ;; esac
# /proc/uptime and the clock read together, by the shell itself (a process start between the two
# readings would move the boot time by its own duration)
read -r up _ < /proc/uptime; now=$EPOCHSECONDS; up=${up%.*}
[ "${up:-0}" -gt 0 ] || fail "/proc/uptime says ${up:-nothing}"
boot_ps=$(date -d "$(uptime -s)" +%s) || fail "uptime -s"
boot_proc=$(( now - up ))
d=$(( boot_ps - boot_proc )); d=${d#-}
[ "$d" -le 2 ] || fail "uptime -s ($boot_ps) and /proc/uptime ($boot_proc) disagree by ${d}s"
run uptime -p
echo "REPORT boot_time $boot_proc"

step "vmstat, top, /proc/stat and /proc/cpuinfo"
if out=$(vmstat 1 2 2>&1); then
  echo "$out"
elif [ ! -e /proc/vmstat ]; then
  note_diff no-proc-vmstat "vmstat fails, there is no /proc/vmstat: $(head -n 1 <<< "$out")"
else
  fail "vmstat 1 2: $out"
fi
out=$(top -b -n 1 -w 200) || fail "top exited $?"
echo "$out" | head -n 8
contains "$out" "load average" "top's header"
contains "$out" "MiB Mem" "top's header"
expect "$(nproc)" "$(grep -c '^processor' /proc/cpuinfo)" "nproc and /proc/cpuinfo"
grep -q '^cpu ' /proc/stat || fail "/proc/stat has no cpu line"
echo "REPORT cpus $(grep -c '^processor' /proc/cpuinfo)"
ok
