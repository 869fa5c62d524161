# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes and
# starves it in prepare(): between bursts of launches its feeding thread prepares the next
# batch by calling three C functions of a small library (tests/record/prepwork.c) through
# ctypes, prep_light and prep_heavy in about 1:3, and prep_hidden, whose work is in a function
# the stripped library does not name. Every GPU gap is on-CPU time under prepare(). For
# tests/cases/report_actionable.sh: started first, it prints its pid and waits for a line on
# stdin (the recorder attached with -p), runs ITER iterations on a thread of its own, prints the
# CPU time each C function ran (on its thread's own clock) and exits.
#
# usage: prepfeeder.py LIBCUDA LIBPREPWORK ITER N
import ctypes
import os
import sys
import threading

import ctypes_cuda

ITER, N = int(sys.argv[3]), int(sys.argv[4])
work = ctypes.CDLL(sys.argv[2])
for fn in ("prep_light", "prep_heavy", "prep_hidden"):
    getattr(work, fn).restype = ctypes.c_double
    getattr(work, fn).argtypes = [ctypes.c_ulong]
cpu = {"prep_light": 0.0, "prep_heavy": 0.0, "prep_hidden": 0.0}


def prepare(n):
    """The batch the GPU waits for: C work, called from this one Python function."""
    cpu["prep_light"] += work.prep_light(n)
    cpu["prep_heavy"] += work.prep_heavy(3 * n)
    cpu["prep_hidden"] += work.prep_hidden(n)


def feed():
    cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "prepfeeder")
    for _ in range(ITER):
        prepare(N)
        for _ in range(4):
            launch()
        sync()


print("prepfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
t = threading.Thread(target=feed, name="feeder")
t.start()
t.join()
print("prepfeeder: cpu " + " ".join("%s=%.6f" % kv for kv in cpu.items()), flush=True)
