# A PyTorch loop whose GPU feed stalls on a lock held across malloc_trim, and its twin without
# the trim, for tests/gpu/recover.sh: what the report predicts removing the trim gives back,
# against what the twin gave back.
#
# The feeder takes `feed_lock` for each step's upload and matmuls, then synchronizes. Twice a
# second a housekeeping thread fragments the C heap (64 KiB blocks, touched, every other one
# freed) and takes the same lock: with MODE trim it calls malloc_trim(0) under it (ctypes lets
# go of the GIL; the feeder waits), with MODE notrim it takes and lets go of the lock the same
# way without the call. Everything else is the same in both. Prints "ready PID" once the loop
# runs, "steps N" at the end.
#   usage: torch_recover.py trim|notrim SECONDS
import ctypes
import os
import sys
import threading
import time

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "trim"
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 20
if mode not in ("trim", "notrim"):
    sys.exit("usage: torch_recover.py trim|notrim SECONDS")

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.malloc_trim.argtypes = [ctypes.c_size_t]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

feed_lock = threading.Lock()
stop = False
BLOCKS = int(os.environ.get("TRIM_BLOCKS", "20000"))
BLOCK = 65536  # under glibc's mmap threshold: from the heap


def housekeeping():
    while not stop:
        time.sleep(0.5)
        blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
        for b in blocks:
            libc.memset(b, 1, BLOCK)
        for b in blocks[::2]:
            libc.free(b)
        with feed_lock:
            if mode == "trim":
                libc.malloc_trim(0)
        for b in blocks[1::2]:
            libc.free(b)


def main():
    global stop
    x = torch.randn(4096, 4096, device="cuda")
    host = torch.randn(4096, 4096).pin_memory()
    for _ in range(3):
        x @ x
    torch.cuda.synchronize()
    threading.Thread(target=housekeeping, name="housekeeping", daemon=True).start()
    print("ready %d" % os.getpid(), flush=True)
    steps, end = 0, time.monotonic() + secs
    while time.monotonic() < end:
        with feed_lock:
            x.copy_(host, non_blocking=True)
            for _ in range(4):
                y = x @ x
        torch.cuda.synchronize()
        steps += 1
    stop = True
    print("steps %d" % steps, flush=True)


main()
