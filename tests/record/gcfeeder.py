# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes and
# starves it in full collections of the cyclic garbage collector: parse_records() makes a few
# small reference cycles and collects them with gc.collect(), while KEEP long-lived lists (tracked
# by the collector, never freed) make each full collection walk them all. Automatic collections
# are off, so every collection is one of parse_records(), and the collections, not the cycles'
# making, are the bulk of its time by construction (300000 lists: about 30 ms a collection, the
# cycles 0.02 ms). For tests/cases/report_gc.sh: started first, it prints its pid and waits for a
# line on stdin (the recorder attached with -p), runs ITER iterations and exits.
#
# usage: gcfeeder.py LIBCUDA ITER KEEP
import gc
import os
import sys

import ctypes_cuda

ITER, KEEP = int(sys.argv[2]), int(sys.argv[3])
kept = [[i] for i in range(KEEP)]
gc.disable()


def parse_records(n):
    """The batch the GPU waits for: cycles made, and collected at once."""
    for i in range(n):
        a = [i]
        b = [a]
        a.append(b)
    return gc.collect()


print("gcfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "gcfeeder")
freed = 0
for _ in range(ITER):
    freed += parse_records(200)
    for _ in range(4):
        launch()
    sync()
if freed < ITER * 400:
    sys.exit("gcfeeder: %d objects collected, expected %d or more" % (freed, ITER * 400))
