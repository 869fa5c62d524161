# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes and
# starves it in full collections of the cyclic garbage collector: parse_records() makes a few
# small reference cycles and collects them with gc.collect(), while KEEP long-lived lists (tracked
# by the collector, never freed) make each full collection walk them all. Automatic collections
# are off, so every collection is one of parse_records(), and the collections, not the cycles'
# making, are the bulk of its time by construction (300000 lists: about 30 ms a collection, the
# cycles 0.02 ms). Beside it a thread of its own, at SCHED_OTHER, compresses a buffer in one call
# of zlib's through ctypes, which runs without the GIL: it is not the collector (its tid is
# printed). The feeder runs ITER iterations and on until the packer is done, so that all of the
# packer's CPU time (about 0.3 s) comes while the feeder collects, however little of a loaded
# machine's CPU it gets. For tests/cases/report_gc.sh: started first, it prints its pid and
# waits for a line on stdin (the recorder attached with -p).
#
# usage: gcfeeder.py LIBCUDA ITER KEEP
import ctypes
import gc
import os
import sys
import threading

import ctypes_cuda

ITER, KEEP = int(sys.argv[2]), int(sys.argv[3])
kept = [[i] for i in range(KEEP)]
gc.disable()

zlib = ctypes.CDLL("libz.so.1")
blob = b"".join(b"row %d value %d;" % (i, i * i % 977) for i in range(60000)) * 2
packed = ctypes.create_string_buffer(len(blob) + len(blob) // 100 + 64)
started, go, done = threading.Event(), threading.Event(), threading.Event()
tids = []


def pack():
    """Compression without the GIL: one call for the whole buffer. tids: its tid, its result."""
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    tids.append(threading.get_native_id())
    started.set()
    go.wait()
    size = ctypes.c_ulong(len(packed))
    tids.append(zlib.compress2(packed, ctypes.byref(size), blob, ctypes.c_ulong(len(blob)), 9))
    done.set()


def parse_records(n):
    """The batch the GPU waits for: cycles made, and collected at once."""
    for i in range(n):
        a = [i]
        b = [a]
        a.append(b)
    return gc.collect()


packer = threading.Thread(target=pack, daemon=True)
packer.start()
started.wait()
print("gcfeeder: packer tid %d" % tids[0], flush=True)
print("gcfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "gcfeeder")
go.set()
freed = n = 0
while n < ITER or not done.is_set():
    n += 1
    freed += parse_records(200)
    for _ in range(4):
        launch()
    sync()
if tids[1] != 0:
    sys.exit("gcfeeder: compress2: error %d" % tids[1])
if freed < n * 400:
    sys.exit("gcfeeder: %d objects collected, expected %d or more" % (freed, n * 400))
