#!/usr/bin/env bash
# Issue 5, "what it must show" 2: 50 attach/detach cycles on one running zkengine. Each cycle
# starts `gapscope record -p`, waits for its "recording pid" line, sends SIGINT (Ctrl-C) and
# waits for it to exit cleanly with a finished trace. The engine then completes with the same
# verified result as an unattached run of the same seed (compared by a hash of its verdicts and
# counts), and the last detach left every probed address as the library file has it.
# The engines run at nice 19, the reference run beside it: the recorders get the CPU they need.
# The attached engine holds its last partition until the cycles are done (--hold-last), so the
# 50 cycles fall inside its run however slow the machine; 300 partitions (~70 s of simcuda
# device time at SIMCUDA_TIME_SCALE=4) keep it proving through the cycles on a fresh 2-CPU
# machine (a cycle takes 0.5-0.8 s there), and the count of cycles made while it still proved
# is printed. The engine ending before the release is a failure.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
[ -x "$BUILD/zkengine" ] || die "$BUILD/zkengine not built"

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" <<'PY'
import os, signal, sys, time
sys.path.insert(0, "tests/record")
from attach import *

tmp = sys.argv[1]
CYCLES = int(os.environ.get("ATTACH_CYCLES", "50"))
args = ["--device", "sim", "--partitions", os.environ.get("ATTACH_PARTITIONS", "300"),
        "--log2n", "10", "--verify", "--seed", "23"]
nice = ["nice", "-n", "19"]

# simcuda's device time x4: 300 partitions then take ~70 s of modelled GPU time
env = dict(os.environ, SIMCUDA_TIME_SCALE="4")
ref = subprocess.Popen(nice + [ZK] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
p = subprocess.Popen(nice + [ZK] + args + ["--hold-last"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
out = Lines(p.stdout)
if out.wait(r"^\s*\d+\s+\d+\s+[0-9.]+ ") is None:
    die("the engine ended before its first partition")
engine = p

t0 = time.monotonic()
rows = lambda: sum(1 for l in out.lines if re.match(r"^\s*\d+\s+\d+\s+[0-9.]+ ", l))
proving = 0
for i in range(CYCLES):
    trace = os.path.join(tmp, "c.gsc")
    rec, err = start_record(engine.pid, trace)
    rec.send_signal(signal.SIGINT)
    rec.wait()
    lines = err.join()
    if rec.returncode != 0:
        die("cycle %d: the recorder exited %d:\n%s" % (i + 1, rec.returncode, "\n".join(lines)))
    if engine.poll() is not None:
        die("the engine finished after %d cycles, before its release" % (i + 1))
    if rows() < int(args[3]) - 1:
        proving += 1
    rc, txt, warn = script(trace, "--no-stacks")
    # A record that came later than the reader's window is put out of order, counted and said:
    # a BPF program preempted between its timestamp and its reserve (uprobe and system-call
    # programs run preemptibly) on a loaded machine, not damage. Anything else is.
    warn = "\n".join(l for l in warn.splitlines() if "arrived too late to be put in time order" not in l)
    if rc != 0 or warn.strip() or "# end events=" not in txt:
        die("cycle %d: trace not valid: %s" % (i + 1, warn))
    if i == CYCLES - 1:
        open(os.path.join(tmp, "last.txt"), "w").write(txt)
        if not probe_bytes(engine.pid, os.path.join(tmp, "last.txt"), "clean"):
            die("a breakpoint stayed behind after the last detach")
    print("cycle %d: %.1f s" % (i + 1, time.monotonic() - t0), flush=True)

release(engine)
engine.wait()
lines = out.join()
print("%d of %d cycles while the engine still proved" % (proving, CYCLES))
h, n = result_hash(lines)
ref_out = ref.communicate()[0]
h_ref, n_ref = result_hash(ref_out.splitlines())
print("%d cycles in %.1f s; result hash attached %s (%d lines), unattached %s (%d lines)" %
      (CYCLES, time.monotonic() - t0, h, n, h_ref, n_ref))
if engine.returncode != 0 or not any(l.startswith("verification passed") for l in lines):
    die("the engine did not finish verified (exit %d)" % engine.returncode)
if ref.returncode != 0 or h != h_ref:
    die("the attached run's result differs from the unattached run's")
print("ok")
PY
