#!/usr/bin/env bash
# Python multiprocessing: Pool with the fork, spawn and forkserver start methods, Process with Queue
# and Pipe, locks, semaphores, events, shared ctypes, a Manager, shared_memory (/dev/shm), and
# concurrent.futures' process pool. POSIX semaphores and shared memory live in /dev/shm; SysV and
# POSIX message queues in the IPC namespace (private in the sandbox).
. "$(dirname "$0")/lib-task.sh"
cat > mp.py <<'PY'
import concurrent.futures as cf
import multiprocessing as mp
import os
import sys
from multiprocessing import shared_memory


def square(x):
    return x * x


def worker(q, lock, counter, arr, ev):
    ev.wait(10)
    for _ in range(100):
        with lock:
            counter.value += 1
    arr[os.getpid() % len(arr)] += 0  # touch the shared array
    q.put(os.getpid())


def child_pipe(conn):
    conn.send(conn.recv() * 2)
    conn.close()


def shm_writer(name):
    s = shared_memory.SharedMemory(name=name)
    s.buf[:5] = b"hello"
    s.close()


def main():
    print("cpu_count", os.cpu_count(), "sched_getaffinity", len(os.sched_getaffinity(0)))
    for method in ("fork", "spawn", "forkserver"):
        ctx = mp.get_context(method)
        with ctx.Pool(3) as pool:
            assert pool.map(square, range(50)) == [x * x for x in range(50)], method
            assert pool.apply_async(square, (12,)).get(60) == 144
        print("pool", method, "ok")

    ctx = mp.get_context("fork")
    q, lock, ev = ctx.Queue(), ctx.Lock(), ctx.Event()
    counter, arr = ctx.Value("i", 0), ctx.Array("d", 8)
    procs = [ctx.Process(target=worker, args=(q, lock, counter, arr, ev)) for _ in range(4)]
    for p in procs:
        p.start()
    ev.set()
    pids = sorted(q.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0, p.exitcode
    assert counter.value == 400, counter.value
    assert pids == sorted(p.pid for p in procs)
    print("process queue lock value event ok")

    a, b = ctx.Pipe()
    p = ctx.Process(target=child_pipe, args=(b,))
    p.start()
    a.send(21)
    assert a.recv() == 42
    p.join(60)
    print("pipe ok")

    sem = ctx.BoundedSemaphore(2)
    assert sem.acquire(timeout=1) and sem.acquire(timeout=1) and not sem.acquire(timeout=0.1)
    sem.release(); sem.release()
    print("semaphore ok")

    with ctx.Manager() as m:
        d, lst = m.dict(), m.list()
        ps = [ctx.Process(target=d.__setitem__, args=(i, i * i)) for i in range(4)]
        for p in ps:
            p.start()
        for p in ps:
            p.join(60)
        lst.extend(range(3))
        assert dict(d) == {i: i * i for i in range(4)} and list(lst) == [0, 1, 2]
    print("manager ok")

    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
    try:
        p = mp.get_context("spawn").Process(target=shm_writer, args=(shm.name,))
        p.start()
        p.join(60)
        assert bytes(shm.buf[:5]) == b"hello"
        print("shared_memory ok", "/dev/shm/" + shm.name, os.path.exists("/dev/shm/" + shm.name))
    finally:
        shm.close()
        shm.unlink()
    sl = shared_memory.ShareableList([1, 2.5, "three"])
    assert list(shared_memory.ShareableList(name=sl.shm.name)) == [1, 2.5, "three"]
    sl.shm.close(); sl.shm.unlink()
    print("shareable_list ok")

    for method in ("fork", "spawn"):
        with cf.ProcessPoolExecutor(2, mp_context=mp.get_context(method)) as ex:
            assert sum(ex.map(square, range(100))) == sum(x * x for x in range(100))
    print("process pool executor ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
PY
out=$($PY mp.py 2>&1); rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "mp.py exited $rc"
for w in "pool fork ok" "pool spawn ok" "pool forkserver ok" "process queue lock value event ok" "pipe ok" \
         "semaphore ok" "manager ok" "shared_memory ok" "shareable_list ok" "process pool executor ok"; do
  contains "$out" "$w" "mp.py's output"
done
step "leftovers in /dev/shm"
left=$(find /dev/shm -mindepth 1 -maxdepth 1 -user "$(id -u)" 2>/dev/null)
expect "" "$left" "objects this task left in /dev/shm"
ok
