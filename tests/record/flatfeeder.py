# A flat script (no functions of its own) that feeds a (simulated) GPU through the CUDA driver
# API with ctypes, its time in two lines of its top level: one sorts a list (the interpreter's
# C sort), the other compresses a buffer (zlib's C code). For tests/cases/report_gc.sh: the two
# lines are told apart, "<module> (flatfeeder.py:N)" each. Started first, it prints its pid, the
# two lines' numbers, and waits for a line on stdin (the recorder attached with -p).
#
# usage: flatfeeder.py LIBCUDA ITER
import os
import sys
import zlib

import ctypes_cuda

ITER = int(sys.argv[2])
rows = [((i * 7919) % 100003, i) for i in range(80000)]
blob = b"".join(b"row %d value %d;" % (i, i * i % 977) for i in range(12000))
src = open(__file__).read().split("\n")
lines = [n + 1 for n, s in enumerate(src) if s.endswith("# hot")]
print("flatfeeder: pid %d" % os.getpid(), flush=True)
print("flatfeeder: hot lines %d %d" % tuple(lines), flush=True)
sys.stdin.readline()
cu, launch, sync = ctypes_cuda.open_driver(sys.argv[1], "flatfeeder")
for _ in range(ITER):
    ordered = sorted(rows)  # hot
    packed = zlib.compress(blob, 9)  # hot
    for _ in range(4):
        launch()
    sync()
