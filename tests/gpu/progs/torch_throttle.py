# A PyTorch feeder for CPU-quota runs (tests/gpu/throttle.sh): each step does about --work ms of
# Python on the CPU (its own CPU time, so a quota stretches it, not shortens it), then a 4096^2
# matmul and a synchronize. Prints "ready PID" once the loop runs, then runs for --seconds.
import argparse, os, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=20.0)
ap.add_argument("--work", type=float, default=3.0)
args = ap.parse_args()


def prepare(ms):
    end = time.thread_time() + ms / 1000
    x = 0
    while time.thread_time() < end:
        for i in range(200):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    return x


x = torch.randn(4096, 4096, device="cuda")
w = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
print("ready %d" % os.getpid(), flush=True)
end = time.monotonic() + args.seconds
steps = 0
while time.monotonic() < end:
    prepare(args.work)
    y = x @ w
    torch.cuda.synchronize()
    steps += 1
print("torch_throttle: %d steps" % steps, flush=True)
