#!/usr/bin/env python3
# bench/pool-stages.py EVENTS: the stages of each pooled run in a `perf script -F comm,pid,time,event,trace`
# listing (bench/pool-stages.sh); their p50 and minimum, in ms.
import re
import statistics
import sys

LINE = re.compile(r'\s*(\S+)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)')
STAGES = ['exec', 'connect', 'accept', 'run_sent', 'claim', 'ready', 'true', 'true_exit', 'finished', 'exited',
          'end']


def events(path):
    out = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                out.append((m.group(1), int(m.group(2)), float(m.group(3)) * 1000, m.group(4), m.group(5)))
    return out


def one_run(ev, i):
    """The stages of the run whose sbxctl exec is ev[i], or None if it was not a pooled /bin/true."""
    pid, t0 = ev[i][1], ev[i][2]
    st = {'exec': t0}
    last_sbxd, sbxd_after_accept = None, 0
    for comm, p, t, name, args in ev[i + 1:]:
        if t - t0 > 300:
            return None
        send = name.endswith('sys_enter_sendmsg')
        if p == pid and name.endswith('sys_enter_connect') and 'connect' not in st:
            st['connect'] = t
        elif comm == 'sbxd' and name.endswith('sys_enter_accept4') and 'connect' in st and 'accept' not in st:
            st['accept'] = t
        if comm == 'sbxd' and send:
            last_sbxd = t
            sbxd_after_accept += 'accept' in st
        if p == pid and send and sbxd_after_accept and 'run_sent' not in st:
            st['run_sent'] = t
        if comm == 'sbx-exec' and send and 'run_sent' in st and 'ready' not in st:
            st['claim'], st['ready'] = last_sbxd, t
        if name == 'sched:sched_process_exec' and comm == 'true' and 'true' not in st:
            st['true'] = t
        if name == 'sched:sched_process_exit' and 'comm=true' in args and 'true' in st and 'true_exit' not in st:
            st['true_exit'] = t
        # FINISHED goes with send() (sendto), the helper's notifications with sendmsg
        if comm == 'sbx-exec' and name.endswith('sys_enter_sendto') and 'true_exit' in st and 'finished' not in st:
            st['finished'] = t
        if comm == 'sbxd' and send and 'finished' in st and 'exited' not in st:
            st['exited'] = t
        if p == pid and name.endswith('sys_enter_exit_group'):
            st['end'] = t
            return st if 'ready' in st and 'true' in st else None
    return None


def main():
    ev = events(sys.argv[1])
    runs = [r for r in (one_run(ev, i) for i, e in enumerate(ev)
                        if e[3] == 'sched:sched_process_exec' and e[0] == 'sbxctl') if r]
    if not runs:
        print("bench: no pooled run found in the trace", file=sys.stderr)
        return 1
    print(f"{len(runs)} pooled runs, sbxctl's execve to its exit")
    for a, b in zip(STAGES, STAGES[1:]):
        d = [r[b] - r[a] for r in runs if r.get(a) is not None and r.get(b) is not None]
        if d:
            print(f"  {a:>9} -> {b:<9} p50 {statistics.median(d):6.3f} ms  min {min(d):6.3f}  (n={len(d)})")
            print(f"BENCH stage_{a}_{b}_p50_ms {statistics.median(d):.3f}")
    print(f"BENCH total_p50_ms {statistics.median([r['end'] - r['exec'] for r in runs]):.3f}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
