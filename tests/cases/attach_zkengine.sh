#!/usr/bin/env bash
# Issue 5, "what it must show" 1: attach to a running zkengine (simcuda) mid-run, detach after
# --duration 2. While attached, every probed address in the target holds a breakpoint; after the
# detach it holds the library file's bytes again, and none of the recorder's BPF programs, links
# or pinned objects is left. The engine finishes with verified results and the same result as
# an unattached run of the same seed; the trace is valid and holds what ran before the attach
# (threads, maps). Readiness comes from output lines (the engine's first result row, the
# recorder's "recording pid" line), never from a sleep.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
command -v bpftool >/dev/null || die "bpftool missing (make deps)"
[ -x "$BUILD/zkengine" ] || die "$BUILD/zkengine not built"

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" <<'PY'
import os, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp = sys.argv[1]
trace = os.path.join(tmp, "zk.gsc")
args = ["--device", "sim", "--partitions", "80", "--log2n", "12", "--verify", "--seed", "11"]
pins_before = pinned()

engine, out = start_engine(args)
rec, err = start_record(engine.pid, trace, ["--duration", "2", "--all-launches"])
# Attached: the probes are in the target now.
rc, txt, warn = script(trace)
open(os.path.join(tmp, "live.txt"), "w").write(txt)
if not probe_bytes(engine.pid, os.path.join(tmp, "live.txt"), "int3"):
    die("a probed address holds no breakpoint while attached")
ours = bpf_ids(rec.pid)
if not ours["prog"] or not ours["link"] or not ours["prog"] <= bpf_listed("prog"):
    die("the recorder's programs/links are not visible: the check below would prove nothing")
print("while attached: the recorder holds %d programs, %d links, %d maps" %
      (len(ours["prog"]), len(ours["link"]), len(ours["map"])))

rec.wait()
rec_lines = err.join()
for l in rec_lines:
    print("recorder: " + l)
if rec.returncode != 0:
    die("the recorder exited %d" % rec.returncode)
if engine.poll() is not None:
    die("the engine finished before the detach, before its release")

# Detached, the engine still running: nothing of ours left in it or in the kernel.
rc, txt, warn = script(trace)
open(os.path.join(tmp, "script.txt"), "w").write(txt)
if not probe_bytes(engine.pid, os.path.join(tmp, "script.txt"), "clean"):
    die("a breakpoint stayed behind in the target")
for kind in ("prog", "link", "map"):
    left = ours[kind] & bpf_listed(kind)
    if left:
        die("BPF %s(s) of the recorder left after detach: %s" % (kind, sorted(left)))
if {("prog", p) for p in ours["prog"]} & bpf_listed("link"):
    die("a link still holds one of the recorder's programs")
if pinned() != pins_before:
    die("pinned objects changed: %s" % sorted(set(pinned()) ^ set(pins_before)))

release(engine)
engine.wait()
lines = out.join()
if engine.returncode != 0 or not any(l.startswith("verification passed") for l in lines):
    die("the engine did not finish verified (exit %d):\n%s" % (engine.returncode, "\n".join(lines)))
h_att, n = result_hash(lines)

# The trace: valid, finished, the attach mode, what ran before the attach, events of the 2 s.
if rc != 0 or warn.strip():
    die("gapscope script failed or warned: %s" % warn)
need = {
    "target attach": r"^# target pid=%d attach" % engine.pid,
    "end record": r"^# end events=",
    "no losses": r"^# losses total=0 ",
    "libcuda map present at attach": r"^# map pid=%d .* r-x .*simcuda/libcuda\.so\.1" % engine.pid,
    "threads present at attach": r"gpu-worker",
    "cuLaunchKernel": r"cuda:cuLaunchKernel kernel=\S+ func=0x[0-9a-f]+",
    "futex waits": r"futex:wait ",
    "samples": r" sample:tick ",
    "sampler record": r"^# sampler tick freq=499 ",
}
for what, rx in need.items():
    if not re.search(rx, txt, re.M):
        die("trace lacks %s (%s)" % (what, rx))
if re.search(r"stopped-for-attach", txt):
    die("a thread of a process we attached to was stopped")

# The events the recorder says it wrote are those the report reads: with the thread names it
# read from /proc at the attach (the engine's threads, all there by then) among them.
said = [int(m.group(1)) for m in (re.match(r"gapscope: (\d+) events, ", l) for l in rec_lines) if m]
rep = subprocess.run([GS, "report", "-f", trace, "-o", os.path.join(tmp, "report")],
                     capture_output=True, text=True)
read = re.findall(r"^duration \d+ ms, (\d+) events,", rep.stdout, re.M)
if len(said) != 1 or len(read) != 1 or said[0] != int(read[0]):
    die("the recorder wrote %s events, the report read %s" % (said, read))
names = len(re.findall(r"^\s*\S+\s+\d+/\d+\s+\[\d+\] [0-9.]+: comm ", txt, re.M))
print("events: recorder %d, report %s (%d thread names)" % (said[0], read[0], names))
print("launches in 2 s: %d" % len(re.findall(r"cuda:cuLaunchKernel ", txt)))

# Kernel names: the engine looked its kernels up before the attach, so every launch is named
# from its handle (simcuda lays CUfunction out as driver 580 does), kernel=NAME(handle), one
# name per handle, and the names are the engine's kernels: all of ZK_KERNELS but fr_powers,
# which only builds the tables before any worker starts (engine/gpu.c).
src = open("engine/kernels.h").read()
zk = set(re.findall(r"^\s*X\((\w+)\)", src[src.index("#define ZK_KERNELS(X)"):], re.M))
by_func = {}
for m in re.finditer(r"cuda:cuLaunchKernel kernel=(\S+) func=(0x[0-9a-f]+)", txt):
    by_func.setdefault(m.group(2), set()).add(m.group(1))
names = set().union(*by_func.values())
unnamed = [f for f, n in by_func.items() if any(not x.endswith("(handle)") for x in n)]
if unnamed:
    die("launches not named from their handle: %s" % {f: by_func[f] for f in unnamed})
if any(len(n) != 1 for n in by_func.values()):
    die("a handle with several names: %s" % by_func)
names = {n[:-len("(handle)")] for n in names}
if names != zk - {"fr_powers"}:
    die("kernel names from handles %s, the engine's kernels %s" % (sorted(names), sorted(zk)))
if not re.search(r"^# kernel-names-from-handles checked=0 .* named=%d rejected=0 libs=1 off=0$" %
                 len(by_func), txt, re.M):
    die("kernel-names-from-handles line: %s" % re.findall(r"^# kernel-names.*", txt, re.M))
print("kernel names from handles: %d handles, %s" % (len(by_func), " ".join(sorted(names))))

# Same seed, unattached: the same result.
ref = subprocess.run([ZK] + args, capture_output=True, text=True)
h_ref, n_ref = result_hash(ref.stdout.splitlines())
print("result hash attached %s (%d lines), unattached %s (%d lines)" % (h_att, n, h_ref, n_ref))
if h_att != h_ref:
    die("the attached run computed something else than the unattached one")
print("ok")
PY
