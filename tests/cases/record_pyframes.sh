#!/usr/bin/env bash
# Python frames from a live CPython, attached with -p and no -X perf: tests/record/pyfeeder.py
# (Debian's python3, its interpreter stripped) feeds a simcuda device through ctypes from a
# thread of its own, and starves it in augment(), a pure-Python function. Started first, it waits
# for the recorder ("recording pid"), then runs. Checked:
# - the recorder finds the interpreter and its version, and names the code objects
#   (script's "# pycode" lines: augment's qualified name, file and first line, from the process);
# - the report's gap stacks hold "feed (pyfeeder.py:L1);augment (pyfeeder.py:L2)" in place of
#   the interpreter's _PyEval_EvalFrameDefault, L1 the line of feed's call of augment and L2 a
#   line of augment's body, and the chains of most of the gap time name augment with its file
#   and line; summary.json counts the pystack and pycode losses;
# - with --no-python, no Python frames at all.
# The program runs SCHED_FIFO, so that on a loaded machine its bursts are on-CPU, not preempted.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
PY=/usr/bin/python3
[ -x "$PY" ] || die "$PY missing (make deps)"
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
[ -f "$LIBCUDA" ] || die "$LIBCUDA not built"

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" "$PY" "$LIBCUDA" <<'PY'
import json, os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, py, libcuda = sys.argv[1:4]
src = os.path.realpath("tests/record/pyfeeder.py")
lines = open(src).read().split("\n")
def_line = next(i + 1 for i, l in enumerate(lines) if l.startswith("def augment("))
body = range(def_line + 1, next(i + 1 for i, l in enumerate(lines) if l.startswith("def feed(")))
call_line = next(i + 1 for i, l in enumerate(lines) if l.strip() == "augment(PERIOD_MS)")


def run(name, extra):
    trace = os.path.join(tmp, name + ".gsc")
    t = subprocess.Popen(["chrt", "-f", "1", py, src, libcuda, "25", "25"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = Lines(t.stdout)
    i = out.wait(r"^pyfeeder: pid \d+$")
    if i is None:
        die("pyfeeder never started: %s" % out.join())
    pid = int(out.lines[i].split()[-1])
    rec, err = start_record(pid, trace, extra)
    t.stdin.write(b"go\n")
    t.stdin.close()
    t.wait()
    rec.wait()
    if t.returncode != 0 or rec.returncode != 0:
        die("pyfeeder exit %s, recorder exit %s:\n%s" % (t.returncode, rec.returncode,
                                                         "\n".join(err.join())))
    return trace, "\n".join(err.join())


trace, err = run("py", [])
print(err)
if not re.search(r"^gapscope: pid \d+: Python 3\.\d+ \(.*python3[.0-9]*\): frames read, offsets "
                 r"from (the table|its debug offsets)$", err, re.M):
    die("the recorder did not find the interpreter")
rc, txt, warn = script(trace)
if rc != 0:
    die("script failed: %s" % warn)
want = r"^# pycode pid=\d+ code=0x[0-9a-f]+ augment \(%s:%d\) lines=\d+$" % (re.escape(src),
                                                                          def_line)
if not re.search(want, txt, re.M):
    die("no code record of augment at line %d: %s" % (def_line, re.findall(r"^# pycode.*", txt,
                                                                             re.M)[:8]))
n = len(re.findall(r"^\s+\S+\s+\d+/\d+\s+\[\d+\] [0-9.]+: pystack of=", txt, re.M))
if n < 10:
    die("only %d records of Python frames" % n)
rep = os.path.join(tmp, "rep")
r = subprocess.run([GS, "report", "-f", "-o", rep, trace], capture_output=True, text=True)
if r.returncode != 0:
    die("report failed: %s" % r.stderr)
print("\n".join(r.stdout.split("\n")[:14]))
folded = open(os.path.join(rep, "gaps/all.folded")).read()
pair = re.compile(r";feed \(pyfeeder\.py:%d\);augment \(pyfeeder\.py:(\d+)\)" % call_line)
found = [int(m.group(1)) for m in pair.finditer(folded)]
if not found or any(l not in body for l in found):
    die("gap stacks without feed;augment at its lines (%s): %s" % (found, folded[:600]))
if "_PyEval_EvalFrameDefault" in folded:
    die("an interpreter frame left in place of Python frames")
s = json.load(open(os.path.join(rep, "summary.json")))
if "pystack" not in s["losses"] or "pycode" not in s["losses"]:
    die("summary.json lacks the Python losses: %s" % s["losses"])
total = sum(g["duration_ns"] for g in s["gaps"])
named = sum(g["duration_ns"] for g in s["gaps"]
            if any(re.match(r"augment \(pyfeeder\.py:\d+\)$", f)
                   for c in g["chain"] for f in c.get("frames", [])))
print("%d gaps, %.0f%% of their time with augment in the chain, lines %s" %
      (len(s["gaps"]), 100.0 * named / max(total, 1), sorted(set(found))))
if not s["gaps"] or named < 0.5 * total:
    die("augment named in the chains of %d of %d ns of gap time" % (named, total))

trace, err = run("nopy", ["--no-python"])
rc, txt, warn = script(trace)
if rc != 0 or re.search(r": pystack of=|^# pycode", txt, re.M) or "frames read" in err:
    die("Python frames recorded with --no-python")
print("ok: Python frames named in the gap stacks of a process attached with -p")
PY
