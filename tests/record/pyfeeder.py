# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes, and
# starves it in a named Python function: its feeding thread runs augment() (pure-Python CPU work)
# between bursts of launches, so every GPU gap is on-CPU time in augment(). For
# tests/cases/record_pyframes.sh: started first, it prints its pid and waits for a line on stdin
# (the recorder attached with -p), then runs ITER iterations on a thread of its own and exits.
#
# usage: pyfeeder.py LIBCUDA ITER PERIOD_MS
import ctypes
import os
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
ITER, PERIOD_MS = int(sys.argv[2]), int(sys.argv[3])


def cu(name, *args):
    r = getattr(lib, name)(*args)
    if r:
        sys.exit("pyfeeder: %s: error %d" % (name, r))


class ScaleArgs(ctypes.Structure):  # engine/kernels.h: struct fr_scale_args
    _fields_ = [("data", ctypes.c_void_p), ("c", ctypes.c_uint64 * 4), ("n", ctypes.c_uint64)]


def augment(ms):
    """The CPU work the GPU waits for: pure Python, in this function's own lines."""
    end = time.monotonic() + ms / 1000.0
    acc = 0
    while time.monotonic() < end:
        for i in range(2000):
            acc += i * i
    return acc


def feed():
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
    args = ScaleArgs(mem.value, (ctypes.c_uint64 * 4)(0x1FFFFFFFE, 0x5884B7FA00034802,
                                                      0x998C4FEFECBC4FF5, 0x1824B159ACC5056F),
                     256)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(args), ctypes.c_void_p))
    for _ in range(ITER):
        augment(PERIOD_MS)
        for _ in range(4):
            cu("cuLaunchKernel", func, 1, 1, 1, 256, 1, 1, 0, stream, params, None)
        cu("cuStreamSynchronize", stream)


print("pyfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
t = threading.Thread(target=feed, name="feeder")
t.start()
t.join()
print("pyfeeder: %d iterations" % ITER, flush=True)
