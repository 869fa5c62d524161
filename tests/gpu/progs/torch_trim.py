# A training-like PyTorch loop whose GPU feed stalls on a lock held during malloc_trim, for
# tests/gpu/truth.sh (recorded by attaching with -p after it started).
#
# The feeder thread takes `feed_lock` for each step's batch, uploads it and launches the step's
# matmuls, then synchronizes. A housekeeping thread, twice a second, fragments the C heap (many
# malloc'ed blocks, every other one freed) and calls malloc_trim(0) through ctypes while holding
# the same lock: the feeder waits for it and the GPU goes idle. The blocks are 64 KiB and
# touched (memset, outside the GIL), so the trim has pages to give back; the Python loop around
# them holds the GIL for a small part of that. Prints "ready PID" once the loop
# runs, then a line per second with the steps done.
import ctypes
import os
import sys
import threading
import time

import torch

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
            libc.malloc_trim(0)  # ctypes lets go of the GIL: the feeder waits on feed_lock
        for b in blocks[1::2]:
            libc.free(b)


def main():
    global stop
    x = torch.randn(4096, 4096, device="cuda")
    host = torch.randn(4096, 4096).pin_memory()
    for _ in range(3):
        y = x @ x
    torch.cuda.synchronize()
    threading.Thread(target=housekeeping, name="housekeeping", daemon=True).start()
    print("ready %d" % os.getpid(), flush=True)
    steps, t0 = 0, time.monotonic()
    end = t0 + float(sys.argv[1]) if len(sys.argv) > 1 else t0 + 30
    while time.monotonic() < end:
        with feed_lock:
            x.copy_(host, non_blocking=True)
            for _ in range(4):
                y = x @ x
        torch.cuda.synchronize()
        steps += 1
        if time.monotonic() - t0 >= 1:
            print("steps %d" % steps, flush=True)
            steps, t0 = 0, time.monotonic()
    stop = True


main()
