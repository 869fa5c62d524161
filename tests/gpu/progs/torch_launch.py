# A launch-bound PyTorch loop: small tensors, many launches, one synchronize at the end; prints
# the wall time per step. With SIZE 8 (the default) elementwise kernels and a small matmul; with
# SIZE 256 and "mm" the matmuls alone, through cuBLASLt, which calls cuKernelGetFunction before
# each cuLaunchKernelEx.   usage: torch_launch.py STEPS [SIZE] [mm]
import sys, time
import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
size = int(sys.argv[2]) if len(sys.argv) > 2 else 8
mm_only = len(sys.argv) > 3 and sys.argv[3] == "mm"
x = torch.randn(size, size, device="cuda")
w = torch.randn(size, size, device="cuda")


def step():
    if mm_only:
        return x @ w
    return torch.relu(x @ w) * 0.5 + x


for _ in range(100):
    y = step()
torch.cuda.synchronize()
t0 = time.monotonic()
for _ in range(n):
    y = step()
torch.cuda.synchronize()
t1 = time.monotonic()
print("per_step_us %.3f" % ((t1 - t0) * 1e6 / n), flush=True)
