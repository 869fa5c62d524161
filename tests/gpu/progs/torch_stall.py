# A steady PyTorch loop (GPU-bound matmul steps, a synchronize each) into which one stall is
# injected from outside, for tests/gpu/flight.sh: on SIGUSR2 a housekeeping thread fragments
# the C heap and calls malloc_trim(0) through ctypes while holding the feeder's lock, once. The
# feeder waits for the lock and the GPU goes idle. Prints "ready PID" once the loop runs,
# "stall START_NS END_NS" (CLOCK_MONOTONIC, the recorder's clock) after the stall, and a line
# per 10 s with the steps done. Runs argv[1] seconds (default 300).
import ctypes
import os
import signal
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
go = threading.Event()
BLOCKS = int(os.environ.get("STALL_BLOCKS", "20000"))
BLOCK = 65536  # under glibc's mmap threshold: from the heap


def housekeeping():
    go.wait()
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    for b in blocks:
        libc.memset(b, 1, BLOCK)
    for b in blocks[::2]:
        libc.free(b)
    with feed_lock:
        t0 = time.monotonic_ns()
        libc.malloc_trim(0)  # ctypes lets go of the GIL: the feeder waits on feed_lock
        t1 = time.monotonic_ns()
    for b in blocks[1::2]:
        libc.free(b)
    print("stall %d %d" % (t0, t1), flush=True)


def main():
    x = torch.randn(4096, 4096, device="cuda")
    host = torch.randn(4096, 4096).pin_memory()
    for _ in range(3):
        y = x @ x
    torch.cuda.synchronize()
    signal.signal(signal.SIGUSR2, lambda *_: go.set())
    threading.Thread(target=housekeeping, name="housekeeping", daemon=True).start()
    print("ready %d" % os.getpid(), flush=True)
    steps, t0 = 0, time.monotonic()
    end = t0 + (float(sys.argv[1]) if len(sys.argv) > 1 else 300)
    while time.monotonic() < end:
        with feed_lock:
            x.copy_(host, non_blocking=True)
            for _ in range(4):
                y = x @ x
        torch.cuda.synchronize()
        steps += 1
        if time.monotonic() - t0 >= 10:
            print("steps %d" % steps, flush=True)
            steps, t0 = 0, time.monotonic()


main()
