# The launch counts of tests/record/launchmix.c, exact per kernel and stream, through every way a
# count leaves a thread's launch cache (bpf/cuda.bpf.c, cu_thread): taken by another kernel,
# folded when its thread exits, and folded by the recorder at the end while the threads live.
# The counts written while the recording goes on hold what the caches hold too.
# Run by tests/cases/record_launch_cache.sh.
# usage: launch_cache.py TMP LIBCUDA
import collections, os, re, signal, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attach import *

tmp, libcuda = sys.argv[1:3]
MIX = os.path.join(tmp, "launchmix")
THREADS, KERNELS, STREAMS, N = 6, 300, 3, 5000


def expected():
    want = collections.Counter()
    for t in range(THREADS):
        for i in range(N):
            want[("mix_%d" % ((i * 7 + t) % KERNELS), i % STREAMS + 1)] += 1
    return want


def counted(trace):
    rc, txt, warn = script(trace, "--no-stacks")
    if rc:
        die("script %s: %s" % (trace, warn))
    got = collections.Counter()
    for m in re.finditer(r"^# launch-count .* kernel=(\w+)\S* .*stream=(0x[0-9a-f]+) n=(\d+)$",
                         txt, re.M):
        got[(m.group(1), int(m.group(2), 16))] += int(m.group(3))
    records = len(re.findall(r"cuda:cuLaunchKernel\b", txt))
    return got, records


def check(what, trace, decided=True, got=None):
    if got is None:
        got, records = counted(trace)
    else:
        records = counted(trace)[1]
    want = expected()
    total = sum(got.values())
    print("%s: %d launches counted over %d kernel and stream pairs (made %d over %d), %d in "
          "the trace" % (what, total, len(got), sum(want.values()), len(want), records))
    if got != want:
        diff = sorted(set(got) ^ set(want)) or \
            sorted(k for k in want if got[k] != want[k])
        die("%s: counts differ at %s: got %s, made %s" %
            (what, diff[:3], [got.get(k) for k in diff[:3]], [want.get(k) for k in diff[:3]]))
    if decided and not 0 < records < total / 10:
        die("%s: %d launch records for %d launches: not decided in the kernel" %
            (what, records, total))
    if not decided and records != total:
        die("%s: %d launch records for %d launches: without caches every launch is streamed" %
            (what, records, total))


# Launched: the threads exit as they finish, and the process with them; and the same where the
# kernel gives uprobes no task storage (no caches: every launch streamed, counted in the map).
for name, env in (("exit", {}), ("nocache", {"GAPSCOPE_NO_LAUNCH_CACHES": "1"})):
    trace = os.path.join(tmp, name + ".gsc")
    r = subprocess.run([GS, "record", "-o", trace, "--", MIX, libcuda, str(THREADS),
                        str(KERNELS), str(STREAMS), str(N)], capture_output=True, text=True,
                       env=dict(os.environ, **env))
    if r.returncode or not re.search(r" 0 lost$", r.stderr, re.M):
        die("record launchmix: exit %d\n%s" % (r.returncode, r.stderr))
    check("threads that exit" + (", no caches" if env else ""), trace, not env)

# Attached, and stopped while every thread lives with its cache.
trace = os.path.join(tmp, "live.gsc")
t = subprocess.Popen([MIX, libcuda, str(THREADS), str(KERNELS), str(STREAMS), str(N), "hold"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = Lines(t.stdout)
if out.wait(r"^ready ") is None:
    die("launchmix never got ready")
rec, err = start_record(t.pid, trace)
t.stdin.write(b"go\n")
t.stdin.flush()
if out.wait(r"^launched %d$" % (THREADS * N)) is None:
    die("launchmix did not finish its launches")
# The trace while it is written: its counts (written every second) hold the caches' too, read
# without taking them: once written after the launches, they are all of them.
import time
deadline, got = time.monotonic() + 30, None
while time.monotonic() < deadline:
    rc, txt, warn = script(trace, "--no-stacks")
    got = collections.Counter()
    for m in re.finditer(r"^# launch-count .* kernel=(\w+)\S* .*stream=(0x[0-9a-f]+) n=(\d+)$",
                         txt, re.M):
        got[(m.group(1), int(m.group(2), 16))] += int(m.group(3))
    if got == expected():
        break
    time.sleep(0.2)
check("threads alive, read while recording", trace, got=got)
rec.send_signal(signal.SIGINT)
rec.wait()
t.stdin.close()
t.wait()
if rec.returncode or t.returncode:
    die("recorder exit %s, target exit %s:\n%s" % (rec.returncode, t.returncode,
                                                   "\n".join(err.join())))
check("threads alive at the end", trace)
print("ok")
