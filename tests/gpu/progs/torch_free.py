# A PyTorch loop that frees between steps: each step allocates a large tensor, runs a few ms of
# matmuls into it, drops it and calls torch.cuda.empty_cache(), whose cuMemFree waits for the
# device inside the call and then unmaps for several ms; then ~5 ms of host work. No explicit
# synchronize: the free is the only one. Prints "ready PID" after a warm-up, runs for SECONDS.
#   usage: torch_free.py SECONDS
import os, sys, time
import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 15
w = torch.randn(4096, 4096, device="cuda")


def host_work():
    t = time.monotonic()
    s = 0
    while time.monotonic() - t < 0.005:
        s += 1
    return s


def one():
    x = torch.empty(16384, 4096, device="cuda")  # 256 MiB, its own cuMemAlloc each step
    x[:4096].copy_(w)
    for _ in range(4):
        x[:4096] = torch.tanh(x[:4096] @ w)
    del x
    torch.cuda.empty_cache()
    host_work()


for _ in range(3):
    one()
print("ready %d" % os.getpid(), flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < secs:
    one()
    n += 1
print("steps %d" % n, flush=True)
