#!/usr/bin/env bash
# Interpreter work named as such, and a flat script's lines told apart (Debian's python3, its
# interpreter stripped), each program attached with -p, SCHED_FIFO (on a loaded machine its
# bursts are on-CPU, not preempted):
# - tests/record/gcfeeder.py starves a simcuda device in full collections of Python's cyclic
#   garbage collector, called from parse_records(): the top cause is on_cpu
#   "gc (in parse_records, gcfeeder.py)" with share >= 0.6, its leaf the interpreter's native
#   code; summary.txt's row says the same words in one line, and so does the page's data;
#   no row is parse_records' own with more than a tenth of the collector's time; `script`
#   shows the CPU samples' Python frames marked " gc", 80% or more of them (the program is in
#   a collection for all but a few percent of its CPU time), and none of those of its packer
#   thread, which runs zlib without the GIL meanwhile (20 samples or more: the feeder collects
#   until it is done): the collector's flag is the interpreter's, the GIL's last holder says
#   whose;
# - tests/record/flatfeeder.py, a flat script, spends its gaps in two lines of its top level:
#   each is a row of its own, on_cpu "<module> (flatfeeder.py:N)" with N the line the program
#   says, each share >= 0.2 and both >= 0.7; no row is the module's as a whole; at most 5% of
#   its samples' Python frames are marked " gc" (its automatic collections are short).
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


def marked(trace, tid=None):
    """The trace's CPU samples' records of Python frames (tid > 0: that thread's; tid < 0:
    every thread's but -tid's), and those read in a collection."""
    r = subprocess.run([GS, "script", "--no-stacks", trace], capture_output=True, text=True)
    if r.returncode != 0:
        die("script %s failed: %s" % (trace, r.stderr))
    py = [m for m in (re.search(r" (\d+)/\d+ .* pystack of=sample frames=\d+( gc)?$", l)
                      for l in r.stdout.split("\n")) if m]
    if tid is not None:
        py = [m for m in py if (int(m.group(1)) == abs(tid)) == (tid > 0)]
    return len(py), sum(1 for m in py if m.group(2))


def report(trace, name):
    rep = os.path.join(tmp, name)
    r = subprocess.run([GS, "report", "-f", "-o", rep, trace], capture_output=True, text=True)
    if r.returncode != 0:
        die("report %s failed: %s" % (trace, r.stderr))
    s = json.load(open(os.path.join(rep, "summary.json")))
    if not s["causes"]:
        die("%s: no causes" % trace)
    for c in s["causes"][:6]:
        print("  %5.1f%% %-8s %-40s leaves %s" % (100 * c["share"], c["kind"], c["function"],
              ", ".join("%s %.0f%%" % (p["name"], 100 * p["share"])
                        for p in c.get("leaves", [])[:3])))
    return rep, s


# The collector, under the function that called it.
trace = os.path.join(tmp, "gc.gsc")
out, err = record_gated(["chrt", "-f", "1", py, "tests/record/gcfeeder.py", libcuda, "40",
                         "300000"], "gcfeeder", trace)
packer = int(next(l for l in out.lines if l.startswith("gcfeeder: packer tid")).split()[-1])
if not any(re.search(r"Python 3\.\d+ .*frames read, offsets from [a-z ]*$", l)
           for l in err.lines):
    die("the collector's state is not read: %s" % "\n".join(err.lines))
rep, s = report(trace, "rep-gc")
row = "gc (in parse_records, gcfeeder.py)"
top = s["causes"][0]
if (top["kind"], top["function"]) != ("on_cpu", row) or top["share"] < 0.6:
    die("top cause %s %s %.3f, expected on_cpu %s >= 0.6" % (top["kind"], top["function"],
                                                              top["share"], row))
leaves = top.get("leaves", [])
if not leaves or ".py" in leaves[0]["name"]:
    die("row %s: its first leaf is %s, not the interpreter's code" % (
        row, leaves[0]["name"] if leaves else "none"))
own = sum(c["ns"] for c in s["causes"] if c["function"] == "parse_records (gcfeeder.py)")
if own * 10 > top["ns"]:
    die("parse_records' own time %d ns against the collector's %d ns" % (own, top["ns"]))
txt = open(os.path.join(rep, "summary.txt")).read()
if not re.search(r"^\s+[0-9.]+%\s+on_cpu\s+" + re.escape(row) + r"\s+\S", txt, re.M):
    die("summary.txt has no row %s" % row)
page = "".join(open(os.path.join(rep, f), errors="replace").read()
               for f in os.listdir(rep) if f.endswith((".html", ".js")))
if row not in page:
    die("the page does not say %s" % row)
print("ok: %s %.1f%%, leaf %s; parse_records' own %d ns" % (
    row, 100 * top["share"], leaves[0]["name"], own))
n, gc = marked(trace, -packer)
if not n or gc * 10 < n * 8:
    die("%d of %d samples' Python frames marked gc, expected 80%% or more" % (gc, n))
print("ok: %d of %d samples' Python frames marked gc" % (gc, n))
n, gc = marked(trace, packer)
if n < 20 or gc:
    die("the packer: %d of %d samples' Python frames marked gc, expected none of 20 or more" % (
        gc, n))
print("ok: the packer, without the GIL meanwhile: %d of %d samples marked gc" % (gc, n))
print(re.search(r"^root causes.*\n(.*\n){3}", txt, re.M).group(0))

# A flat script's time, by line.
trace = os.path.join(tmp, "flat.gsc")
out, _ = record_gated(["chrt", "-f", "1", py, "tests/record/flatfeeder.py", libcuda, "12"],
                      "flatfeeder", trace)
hot = next(l for l in out.lines if l.startswith("flatfeeder: hot lines")).split()[-2:]
rep, s = report(trace, "rep-flat")
rows = ["<module> (flatfeeder.py:%s)" % n for n in hot]
share = {c["function"]: c["share"] for c in s["causes"] if c["kind"] == "on_cpu"}
if "<module> (flatfeeder.py)" in share:
    die("a row is the module's as a whole")
for r in rows:
    if share.get(r, 0) < 0.2:
        die("row %s: share %.3f, expected >= 0.2" % (r, share.get(r, 0)))
if sum(share[r] for r in rows) < 0.7:
    die("the two lines hold %.3f of the gaps, expected >= 0.7" % sum(share[r] for r in rows))
print("ok: %s" % ", ".join("%s %.1f%%" % (r, 100 * share[r]) for r in rows))
n, gc = marked(trace, -1)
if not n or gc * 20 > n:
    die("%d of %d samples' Python frames marked gc in a program that hardly collects" % (gc, n))
print("ok: %d of %d samples' Python frames marked gc" % (gc, n))
PY
