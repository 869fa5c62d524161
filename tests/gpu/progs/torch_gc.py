# A PyTorch loop whose GPU waits for full collections of Python's cyclic garbage collector:
# parse_records() makes small reference cycles and collects them (gc.collect()), while KEEP
# long-lived lists (tracked, never freed) make each full collection walk them all, beside what
# PyTorch's own import keeps. Automatic collections are off: every collection is one of
# parse_records(), the bulk of its time by construction. For tests/gpu/pygc.sh: prints
# "ready PID" once the loop runs, then runs for SECONDS and prints its steps.
#   usage: torch_gc.py SECONDS [KEEP]
import gc, os, sys, time
import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 30
kept = [[i] for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 500000)]
gc.disable()


def parse_records(n):
    """The batch the GPU waits for: cycles made, and collected at once."""
    for i in range(n):
        a = [i]
        b = [a]
        a.append(b)
    return gc.collect()


x = torch.randn(2048, 2048, device="cuda")
w = torch.randn(2048, 2048, device="cuda")


def step():
    y = torch.relu(x @ w)
    torch.cuda.synchronize()
    return y


for _ in range(3):
    parse_records(10)
    step()
print("ready %d" % os.getpid(), flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < secs:
    parse_records(1000)
    step()
    n += 1
print("steps %d" % n, flush=True)
