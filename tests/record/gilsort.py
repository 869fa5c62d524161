# A Python program whose GPU feeder waits for the GIL: its feeding thread drives a (simulated)
# GPU through ctypes (which lets the GIL go around each call), while another thread sorts a
# large list in sort_rows(), holding the GIL for the whole sort (one C call, no bytecode to
# switch at). Each time the feeder's synchronize returns it needs the GIL back and waits for the
# sort: every GPU gap is the feeder's wait for the GIL, the sorting thread's on-CPU time in
# sort_rows() its cause. For tests/cases/report_gil.sh: started first, it prints its pid and
# waits for a line on stdin (the recorder attached with -p), then runs ITER iterations.
#
# usage: gilsort.py LIBCUDA ITER
import os
import random
import sys
import threading

import ctypes_cuda

ITER = int(sys.argv[2])
done = threading.Event()
rows = list(range(200000))
random.Random(1).shuffle(rows)


def sort_rows():
    """Holds the GIL for a whole sort of a large list, again and again."""
    n = 0
    while not done.is_set():
        n += len(sorted(rows))
    return n


def feed():
    cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "gilsort")
    for _ in range(ITER):
        for _ in range(4):
            launch()
        sync()
    done.set()


print("gilsort: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
sorter = threading.Thread(target=sort_rows, name="sorter")
feeder = threading.Thread(target=feed, name="feeder")
sorter.start()
feeder.start()
feeder.join()
sorter.join()
print("gilsort: %d iterations" % ITER, flush=True)
