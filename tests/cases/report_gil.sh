#!/usr/bin/env bash
# The GIL named as such: tests/record/gilsort.py (Debian's python3, its interpreter stripped)
# feeds a simcuda device through ctypes from one thread while another sorts a large list in
# sort_rows(), holding the GIL for each whole sort; the feeder waits for the GIL each time its
# synchronize returns. Attached with -p, SCHED_FIFO (on a loaded machine the threads run, not
# wait for a CPU). The longest gap's chain (of those not ended waiting for a CPU) waits on
# "GIL (python3.N)", not on _PyRuntime, and ends on-CPU in "sort_rows (gilsort.py)"; the causes
# table's top row other than preemption is that function.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
PY=/usr/bin/python3
[ -x "$PY" ] || die "$PY missing (make deps)"
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
need_built "$LIBCUDA"

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" "$PY" "$LIBCUDA" <<'PY'
import json, os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, py, libcuda = sys.argv[1:4]
trace = os.path.join(tmp, "gil.gsc")
record_gated(["chrt", "-f", "1", py, "tests/record/gilsort.py", libcuda, "15"], "gilsort", trace)
rep = os.path.join(tmp, "rep")
r = subprocess.run([GS, "report", "-f", "-o", rep, trace], capture_output=True, text=True)
if r.returncode != 0:
    die("report failed: %s" % r.stderr)
print(r.stdout[:r.stdout.find("\nlosses")])
s = json.load(open(os.path.join(rep, "summary.json")))
row = "sort_rows (gilsort.py)"
causes = [c for c in s["causes"] if c["kind"] != "preempted"]
if not causes or (causes[0]["kind"], causes[0]["function"]) != ("on_cpu", row):
    die("top cause other than preemption %s, expected on_cpu %s" % (causes[:1], row))
# The longest gap not ended by preemption or a wait for a CPU: SCHED_FIFO's threads get 95% of
# each second (sched_rt_runtime_us); for the rest a loaded machine's other processes run, or the
# CPU idles while they wait ("runnable, CPU idle": a gap it stretched is often the longest), and
# such a gap ends rightly there.
g = max((g for g in s["gaps"]
         if g["chain"] and g["chain"][-1]["kind"] not in ("preempted", "runnable")),
        key=lambda g: g["duration_ns"])
chain = " <- ".join("%s %s" % (l["kind"], l.get("lock") or l.get("function") or "")
                    for l in g["chain"])
print("gap %d: %s" % (g["id"], chain))
if any("_PyRuntime" in (l.get("lock") or "") for gap in s["gaps"] for l in gap["chain"]):
    die("a chain waits on _PyRuntime")
if not any(re.match(r"^GIL \((lib)?python3[.0-9]*", l.get("lock") or "") for l in g["chain"]):
    die("the longest gap's chain does not wait on the GIL: %s" % chain)
if g["chain"][-1].get("function") != row:
    die("the longest gap's chain ends in %s, not %s" % (g["chain"][-1].get("function"), row))
print("ok: the feeder waits on the GIL, held by %s" % row)
PY
