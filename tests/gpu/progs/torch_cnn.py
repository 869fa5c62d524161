# A launch-bound PyTorch program: eager inference of a small torchvision CNN at batch 1 (tens of
# thousands of kernel launches a second), or with "train" a GPU-bound bf16 training step of a
# larger one. Warms up, prints "ready", waits for a line on stdin when GO is "wait" (so that a
# recorder can attach first), then runs for SECONDS and prints "steps_per_s X".
# With "windows" it runs until told "quit" on stdin, and a line "measure LABEL SECS" makes it
# print "LABEL steps_per_s X cpu_us_per_step Y" over the next SECS seconds (Y: the main thread's
# CPU time a step, which a probe's trap adds to, and which the machine's other tenants move far
# less than throughput): plain and attached windows of one process.
#   usage: torch_cnn.py SECONDS [infer|train] [go|wait|windows]
import select, sys, time
import torch
import torchvision

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 6
mode = sys.argv[2] if len(sys.argv) > 2 else "infer"
wait = len(sys.argv) > 3 and sys.argv[3] == "wait"
windows = len(sys.argv) > 3 and sys.argv[3] == "windows"
torch.backends.cudnn.benchmark = False

if mode == "train":
    model = torchvision.models.resnet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (64,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
else:
    model = torchvision.models.resnet18().cuda().eval()
    x = torch.randn(1, 3, 64, 64, device="cuda")

    def step():
        with torch.no_grad():
            return model(x)

for _ in range(30):
    step()
torch.cuda.synchronize()
print("ready", flush=True)
if windows:
    n, label, until, t0, c0 = 0, None, 0.0, 0.0, 0.0
    while True:
        out = step()
        n += 1
        if n % 20:
            continue
        out.float().sum().item()
        now = time.monotonic()
        if label and now >= until:
            print("%s steps_per_s %.3f cpu_us_per_step %.2f" % (label, (n - n0) / (now - t0),
                  (time.thread_time() - c0) * 1e6 / (n - n0)), flush=True)
            label = None
        if not label and select.select([sys.stdin], [], [], 0)[0]:
            cmd = sys.stdin.readline().split()
            if not cmd or cmd[0] == "quit":
                break
            label, until, n0, t0, c0 = cmd[1], now + float(cmd[2]), n, now, time.thread_time()
    torch.cuda.synchronize()
    sys.exit(0)
if wait:
    sys.stdin.readline()
n, t0 = 0, time.monotonic()
while True:
    out = step()
    n += 1
    if n % 20 == 0:
        out.float().sum().item()  # a synchronize, as a real loop reads its outputs
        if time.monotonic() - t0 >= secs:
            break
torch.cuda.synchronize()
print("steps_per_s %.3f" % (n / (time.monotonic() - t0)), flush=True)
