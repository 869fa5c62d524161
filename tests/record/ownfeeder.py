# A Python program that feeds a (simulated) GPU through the CUDA driver API with ctypes and
# starves it in prepare(), its own function, whose time is all in library code: it calls
# crunch() of a small package installed in a site-packages folder (ownpkg.py, written by the
# test), which serialises a large object with the standard library's json.dumps. For
# tests/cases/report_own_code.sh: started first, it prints its pid and waits for a line on
# stdin (the recorder attached with -p), runs ITER iterations on a thread of its own and exits.
#
# usage: ownfeeder.py LIBCUDA SITE_PACKAGES ITER N
import os
import sys
import threading

import ctypes_cuda

sys.path.insert(0, sys.argv[2])
import ownpkg  # noqa: E402 (from the site-packages folder above)

ITER, N = int(sys.argv[3]), int(sys.argv[4])
batch = [{"id": i, "name": "row%d" % i, "values": [i, i * 2, i * 3]} for i in range(N)]


def prepare():
    """The batch the GPU waits for: library code, called from this one function."""
    return ownpkg.crunch(batch)


def feed():
    cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "ownfeeder")
    for _ in range(ITER):
        prepare()
        for _ in range(4):
            launch()
        sync()


print("ownfeeder: pid %d" % os.getpid(), flush=True)
sys.stdin.readline()
t = threading.Thread(target=feed, name="feeder")
t.start()
t.join()
