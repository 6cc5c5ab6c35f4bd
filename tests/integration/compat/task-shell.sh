#!/usr/bin/env bash
# Everyday shell work: pipelines, xargs -P, sort, find, cp -a, a FIFO, flock, timeout, nice, renice,
# taskset, ionice, chrt (batch), prlimit, the temporary directories, and a pty.
. "$(dirname "$0")/lib-task.sh"
step "pipelines, xargs, sort, find"
expect 500500 "$(seq 1 1000 | paste -sd+ | bc)" "seq | paste | bc"
mkdir -p d && seq 1 40 | xargs -P 4 -I{} sh -c 'echo {} > d/f{}' || fail "xargs -P"
expect 40 "$(find d -type f | wc -l)" "files made by xargs -P"
expect "$(seq 1 40 | sort -n | sha256sum)" "$(cat d/* | sort -n -S 1M --parallel=2 | sha256sum)" "sort"
expect 820 "$(cat d/* | awk '{s+=$1} END {print s}')" "awk"
step "cp -a keeps modes, times and links; mv, ln, rm"
ln -s f1 d/link; chmod 640 d/f2; touch -d '2021-05-06 07:08:09' d/f3
run cp -a d e
expect "$(fstat '%a %Y' d/f2 d/f3)" "$(fstat '%a %Y' e/f2 e/f3)" "modes and times after cp -a"
expect "640" "$(fstat %a e/f2)" "mode after cp -a"
expect f1 "$(readlink e/link)" "symlink after cp -a"
run mv e e2; run rm -r e2
step "ls -l"
if out=$(ls -l d 2>&1); then
  contains "$out" "-rw-r----- " "ls -l shows f2's mode"
  contains "$out" "link -> f1" "ls -l shows the symlink"
elif [[ $out == *"Invalid argument"* ]]; then
  note_diff statx-einval "ls -l fails: $(head -n 1 <<< "$out")"
else
  fail "ls -l: $(head -c 300 <<< "$out")"
fi
step "FIFO, flock, timeout"
mkfifo p; (echo through-fifo > p &); expect through-fifo "$(cat p)" "a FIFO"
run flock lockfile true
expect 124 "$(timeout 0.5 sleep 5; echo $?)" "timeout's status"
step "temporary directories"
for t in /tmp /var/tmp "$HOME"; do f=$(mktemp -p "$t") && echo x > "$f" && rm "$f" || fail "cannot write in $t"; done
step "scheduling: nice, renice, taskset, ionice, chrt -b, prlimit"
expect 5 "$(nice -n 5 nice)" "nice"
sleep 30 & sp=$!
run renice -n 7 -p "$sp"
expect 7 "$(ps -o ni= -p "$sp" | tr -d ' ')" "niceness after renice"
kill "$sp"; wait "$sp" 2>/dev/null
expect 1 "$(taskset -c 0 sh -c 'taskset -p $$' | sed 's/.*: //')" "CPU mask under taskset -c 0"
if ! out=$(ionice -c 3 true 2>&1); then
  [[ $out == *"ioprio_set failed"* ]] || fail "ionice -c 3: $out"
  note_diff ioprio "ionice cannot set an I/O priority: $out"
fi
if ! out=$(chrt -b 0 true 2>&1); then
  [[ $out == *"policy: Invalid argument"* ]] || fail "chrt -b 0: $out"
  note_diff sched-batch "the SCHED_BATCH policy cannot be set: $out"
fi
expect 100 "$(prlimit --nofile=100:100 sh -c 'ulimit -n')" "prlimit --nofile"
step "a pseudo-terminal"
# the parent reads until the terminal hangs up (EIO once the child has gone); the read is bounded, and a
# terminal that stays silent 5 s after its child ended is reported ("no-hangup")
out=$($PY -c 'import pty, os, select; pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", "tty; stty size 2>/dev/null || true"])
data, ended = b"", None
while True:
    if not select.select([fd], [], [], 5)[0]:
        if os.waitpid(pid, os.WNOHANG)[0]: ended = "no-hangup"; break
        continue
    try: b = os.read(fd, 1024)
    except OSError: break
    if not b: break
    data += b
if not ended: os.waitpid(pid, 0)
print(data.decode().split()[0], ended or "")') || fail "pty.fork"
contains "$out" "/dev/pts/" "tty inside pty.fork"
if [[ $out == *no-hangup* ]]; then
  note_diff pty-no-hangup "reading a pseudo-terminal whose child ended blocks (no EIO): the read gave up after 5 s"
fi
ok
