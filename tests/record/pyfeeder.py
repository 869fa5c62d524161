# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes, and
# starves it in a named Python function: its feeding thread runs augment() (pure-Python CPU work)
# between bursts of launches, so every GPU gap is on-CPU time in augment(). For
# tests/cases/record_pyframes.sh: started first, it prints its pid and waits for a line on stdin
# (the recorder attached with -p), then runs ITER iterations on a thread of its own and exits.
#
# usage: pyfeeder.py LIBCUDA ITER PERIOD_MS
import os
import sys
import threading
import time

import ctypes_cuda

ITER, PERIOD_MS = int(sys.argv[2]), int(sys.argv[3])


def augment(ms):
    """The CPU work the GPU waits for: pure Python, in this function's own lines."""
    end = time.monotonic() + ms / 1000.0
    acc = 0
    while time.monotonic() < end:
        for i in range(2000):
            acc += i * i
    return acc


def feed():
    cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "pyfeeder")
    for _ in range(ITER):
        augment(PERIOD_MS)
        for _ in range(4):
            launch()
        sync()


print("pyfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
t = threading.Thread(target=feed, name="feeder")
t.start()
t.join()
print("pyfeeder: %d iterations" % ITER, flush=True)
