# A Python program whose GPU feeder is fed by multiprocessing workers, as a training loop's data
# workers feed it: two worker processes (forked first) compute each item in augment(), pure
# Python, and put it on a multiprocessing.Queue; the feeding thread takes the next item and
# launches kernels on it through the CUDA driver API (ctypes, simcuda). For
# tests/cases/record_pyworkers.sh: it prints its pid once the workers exist and waits for a line
# on stdin (the recorder attached with -p), then runs ITER items and exits.
#
# usage: pyworkers.py LIBCUDA ITER PERIOD_MS
import multiprocessing as mp
import os
import sys
import time

import ctypes_cuda

ITER, PERIOD_MS = int(sys.argv[2]), int(sys.argv[3])


def augment(ms):
    """An item's CPU work: pure Python, in this function's own lines."""
    end = time.monotonic() + ms / 1000.0
    acc = 0
    while time.monotonic() < end:
        for i in range(2000):
            acc += i * i
    return acc


def worker(q, go, n):
    go.wait()
    for i in range(n):
        q.put(augment(PERIOD_MS))


def feed(q):
    cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "pyworkers")
    for _ in range(ITER):
        q.get()
        for _ in range(4):
            launch()
        sync()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q, go = ctx.Queue(), ctx.Event()
    ws = [ctx.Process(target=worker, args=(q, go, ITER // 2 + (k < ITER % 2)), name="worker")
          for k in range(2)]
    for w in ws:
        w.start()
    print("pyworkers: pid %d" % os.getpid(), flush=True)
    sys.stdin.readline()
    go.set()
    feed(q)
    for w in ws:
        w.join()
    print("pyworkers: %d items" % ITER, flush=True)
