# A PyTorch training-like loop whose GPU waits for a named Python function: prepare_batch() does
# pure-Python CPU work (the kind a dataset's __getitem__ does) before each step's matmuls. For
# tests/gpu/pyframes.sh: attached with gapscope record -p, no -X perf, the gap stacks must name
# prepare_batch with its file and line. Runs until killed or for --seconds.
import argparse, os, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=30.0)
ap.add_argument("--ready", help="file to create once the loop runs")
ap.add_argument("--work-ms", type=float, default=20.0)
args = ap.parse_args()


def prepare_batch(ms):
    end = time.monotonic() + ms / 1000.0
    acc = 0
    while time.monotonic() < end:
        for i in range(1000):
            acc += i * i
    return acc


def step(x, w):
    y = torch.relu(x @ w)
    torch.cuda.synchronize()
    return y


x = torch.randn(4096, 4096, device="cuda")
w = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
if args.ready:
    open(args.ready, "w").write(str(os.getpid()))
end = time.monotonic() + args.seconds
steps = 0
while time.monotonic() < end:
    prepare_batch(args.work_ms)
    step(x, w)
    steps += 1
print(f"torch_pyframes: {steps} steps", flush=True)
