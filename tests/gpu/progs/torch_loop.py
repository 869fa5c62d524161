# A PyTorch loop for attach-mode recording (gapscope record -p PID): matmuls, a device-wide
# synchronize and a stream synchronize per step, until killed or for --seconds.
import argparse, os, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=30.0)
ap.add_argument("--ready", help="file to create once the loop runs")
args = ap.parse_args()

x = torch.randn(4096, 4096, device="cuda")
w = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
if args.ready:
    open(args.ready, "w").write(str(os.getpid()))
end = time.monotonic() + args.seconds
steps = 0
while time.monotonic() < end:
    y = x @ w
    y = torch.relu(y)
    torch.cuda.synchronize()
    s = y.sum().item()
    steps += 1
print(f"torch_loop: {steps} steps", flush=True)
