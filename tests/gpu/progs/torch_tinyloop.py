# A launch-bound PyTorch loop, as a new user writes one: a 4096-element add launched LAUNCHES
# times (default 200) between synchronizes, each launch through PyTorch's Python operator call
# in launch_one(); the GPU runs each kernel in a few microseconds and idles between them, in
# windows far under a millisecond. Warms up, prints "ready", waits for a line on stdin when GO is
# "wait" (a recorder attaches first), then runs for SECONDS and prints "launches N in S s".
#   usage: torch_tinyloop.py SECONDS [LAUNCHES] [go|wait]
import sys, time
import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 8
per_sync = int(sys.argv[2]) if len(sys.argv) > 2 else 200
wait = len(sys.argv) > 3 and sys.argv[3] == "wait"
x = torch.randn(4096, device="cuda")
y = torch.randn(4096, device="cuda")


def launch_one(a, b):
    return torch.add(a, b)


def batch():
    z = x
    for _ in range(per_sync):
        z = launch_one(z, y)
    torch.cuda.synchronize()
    return z


for _ in range(20):
    batch()
print("ready", flush=True)
if wait:
    sys.stdin.readline()
n = 0
t0 = time.monotonic()
while time.monotonic() - t0 < secs:
    batch()
    n += per_sync
wall = time.monotonic() - t0
print("launches %d in %.3f s" % (n, wall), flush=True)
