# A PyTorch training loop fed by a DataLoader whose two worker processes do slow CPU work in the
# dataset's __getitem__ (numpy augmentation): the GPU waits for batches, and the cause is the
# workers' Python code. Persistent workers: they exist before a recorder attaches with -p.
# Prints "ready PID" once the workers run and batches flow, then trains for SECONDS.
#   usage: torch_dataloader.py SECONDS
import os, sys, time
import numpy as np
import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 30


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        return augment(i)


def augment(i):
    # CPU work a sample: a few ms of numpy per item, in a function of its own.
    rng = np.random.default_rng(i)
    x = rng.standard_normal((3, 64, 64)).astype(np.float32)
    for _ in range(60):
        x = np.sqrt(np.abs(np.fft.ifft2(np.fft.fft2(x)).real)) + 0.1
    return torch.from_numpy(x), i % 10


loader = torch.utils.data.DataLoader(Slow(), batch_size=16, num_workers=2,
                                     persistent_workers=True, prefetch_factor=2)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=4), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 16 * 16, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
it = iter(loader)
for _ in range(3):
    x, y = next(it)
print("ready %d" % os.getpid(), flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < secs:
    x, y = next(it)
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    loss.item()  # the loss logged each step, as training loops do (a synchronize)
    n += 1
torch.cuda.synchronize()
print("steps %d" % n, flush=True)
