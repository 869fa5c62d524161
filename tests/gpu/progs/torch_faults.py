# A PyTorch loop whose feeder gathers rows from a memory-mapped dataset whose pages are not cached,
# for tests/gpu/faults.sh: argv[1] a file it makes (256 MiB of data, written and flushed), mapped
# for random reads (MADV_RANDOM: one page a fault). Each step drops the file's pages (its mapping
# and the page cache's copies of this file only), gathers ROWS rows of 64 bytes at random pages
# (gather: each read a major fault waiting for the disk), copies them to the GPU, runs a matmul
# and synchronizes. Runs argv[2] seconds (default 20) and prints the steps done.
import mmap
import os
import random
import sys
import time

import torch

PATH = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
SIZE = 256 << 20
ROWS = 256
PAGES = SIZE // 4096

with open(PATH, "wb") as f:
    chunk = bytes(range(256)) * 4096  # 1 MiB of data: a hole would read with no I/O
    for _ in range(SIZE >> 20):
        f.write(chunk)
    f.flush()
    os.fsync(f.fileno())
fd = os.open(PATH, os.O_RDONLY)
mm = mmap.mmap(fd, SIZE, prot=mmap.PROT_READ)
mm.madvise(mmap.MADV_RANDOM)
rng = random.Random(7)
a = torch.randn(2048, 2048, device="cuda")


def drop():
    mm.madvise(mmap.MADV_DONTNEED)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def gather():
    # Each slice copies 64 bytes out of the mapping: the copy faults the page in.
    return b"".join(mm[p * 4096:p * 4096 + 64] for p in (rng.randrange(PAGES) for _ in range(ROWS)))


steps, end = 0, time.monotonic() + SECONDS
while time.monotonic() < end:
    drop()
    rows = torch.frombuffer(bytearray(gather()), dtype=torch.uint8).float().cuda()
    b = a @ a + rows.sum()
    torch.cuda.synchronize()
    steps += 1
print("steps %d" % steps, flush=True)
