# A Python program whose GPU feeder is fed by multiprocessing workers, as a training loop's data
# workers feed it: two worker processes (forked first) compute each item in augment(), pure
# Python, and put it on a multiprocessing.Queue; the feeding thread takes the next item and
# launches kernels on it through the CUDA driver API (ctypes, simcuda). For
# tests/cases/record_pyworkers.sh: it prints its pid once the workers exist and waits for a line
# on stdin (the recorder attached with -p), then runs ITER items and exits.
#
# usage: pyworkers.py LIBCUDA ITER PERIOD_MS
import ctypes
import multiprocessing as mp
import os
import sys
import time

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


class ScaleArgs(ctypes.Structure):  # engine/kernels.h: struct fr_scale_args
    _fields_ = [("data", ctypes.c_void_p), ("c", ctypes.c_uint64 * 4), ("n", ctypes.c_uint64)]


def feed(q):
    lib = ctypes.CDLL(sys.argv[1])

    def cu(name, *args):
        r = getattr(lib, name)(*args)
        if r:
            sys.exit("pyworkers: %s: error %d" % (name, r))

    dev, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
    func, stream, mem = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    fatbin = (ctypes.c_uint32 * 4)(0xBA55ED50)  # the fatbin header's magic
    cu("cuInit", 0)
    cu("cuDeviceGet", ctypes.byref(dev), 0)
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)
    cu("cuModuleLoadData", ctypes.byref(mod), fatbin)
    cu("cuModuleGetFunction", ctypes.byref(func), mod, b"fr_scale")
    cu("cuStreamCreate", ctypes.byref(stream), 1)
    cu("cuMemAlloc_v2", ctypes.byref(mem), ctypes.c_size_t(256 * 32))
    args = ScaleArgs(mem.value, (ctypes.c_uint64 * 4)(1, 0, 0, 0), 256)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(args), ctypes.c_void_p))
    for _ in range(ITER):
        q.get()
        for _ in range(4):
            cu("cuLaunchKernel", func, 1, 1, 1, 256, 1, 1, 0, stream, params, None)
        cu("cuStreamSynchronize", stream)


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
