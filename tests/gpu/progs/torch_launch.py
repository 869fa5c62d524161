# A launch-bound PyTorch loop: tiny tensors, many elementwise and matmul launches, one
# synchronize at the end; prints the wall time per launch (4 launches a step).
import sys, time
import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
x = torch.randn(8, 8, device="cuda")
w = torch.randn(8, 8, device="cuda")
for _ in range(100):
    y = torch.relu(x @ w) + x
torch.cuda.synchronize()
t0 = time.monotonic()
for _ in range(n):
    y = torch.relu(x @ w) * 0.5 + x
torch.cuda.synchronize()
t1 = time.monotonic()
print("per_launch_us %.3f" % ((t1 - t0) * 1e6 / (4 * n)), flush=True)
