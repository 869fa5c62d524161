#!/usr/bin/env bash
# The causes table names on-CPU time by the frame a user can act on (reports/analysis/actionable.c):
# tests/record/prepfeeder.py (Debian's python3, its interpreter stripped) feeds a simcuda
# device through ctypes and starves it in prepare(), a Python function that calls three C
# functions of a small library (tests/record/prepwork.c, stripped: its exported functions
# named by their dynamic symbols, its static ones unnamed), prep_light and prep_heavy in about
# 1:3 and prep_hidden, whose work is in a static function. Attached with -p, SCHED_FIFO (on a
# loaded machine its bursts are on-CPU, not preempted). Checked:
# - summary.json's top cause is on_cpu "prepare (prepfeeder.py)" with share >= 0.8;
# - its leaves are prep_heavy, prep_light and the library's unnamed code as one leaf,
#   "libprepwork.so (stripped)", each share within 10 points of the CPU time the program
#   measured in each function (on its thread's own clock);
# - no row carries time not its own: the rows' ns sum to the gaps' total within 1%;
# - summary.txt's row and its leaves line, and pprof's cause_function label, say the same.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
PY=/usr/bin/python3
[ -x "$PY" ] || die "$PY missing (make deps)"
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
[ -f "$LIBCUDA" ] || die "$LIBCUDA not built"
command -v go >/dev/null || die "go not installed (make deps: golang-go)"
export HOME=$TMP # go tool pprof keeps nothing, but wants a home

cd "$GAPSCOPE_ROOT"
${CC:-cc} -shared -fPIC -O1 -g -fno-omit-frame-pointer tests/record/prepwork.c \
	-o "$TMP/libprepwork.so" || die "cannot build tests/record/prepwork.c"
strip --strip-unneeded "$TMP/libprepwork.so"
python3 - "$TMP" "$PY" "$LIBCUDA" <<'PY'
import json, os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, py, libcuda = sys.argv[1:4]
src = os.path.realpath("tests/record/prepfeeder.py")
trace = os.path.join(tmp, "prep.gsc")
out, _ = record_gated(["chrt", "-f", "1", py, src, libcuda, os.path.join(tmp, "libprepwork.so"),
                       "40", "6000000"], "prepfeeder", trace)
cpu = dict(kv.split("=") for kv in out.lines[-1].split()[2:])
cpu = {k: float(v) for k, v in cpu.items()}
want = {"prep_light": cpu["prep_light"], "prep_heavy": cpu["prep_heavy"],
        "libprepwork.so (stripped)": cpu["prep_hidden"]}
total_cpu = sum(want.values())
print("the program's own CPU time: %s" % ", ".join("%s %.1f ms (%.1f%%)" % (
    k, 1e3 * v, 100 * v / total_cpu) for k, v in want.items()))

rep = os.path.join(tmp, "rep")
pb = os.path.join(tmp, "gaps.pb.gz")
r = subprocess.run([GS, "report", "-f", "-o", rep, "--pprof", pb, trace], capture_output=True,
                   text=True)
if r.returncode != 0:
    die("report failed: %s" % r.stderr)
txt = r.stdout
print(txt[:txt.find("longest gaps")])
s = json.load(open(os.path.join(rep, "summary.json")))
if not s["causes"]:
    die("no causes")
top = s["causes"][0]
row = "prepare (prepfeeder.py)"
if (top["kind"], top["function"]) != ("on_cpu", row) or top["share"] < 0.8:
    die("top cause %s %s %.3f, expected on_cpu %s >= 0.8" % (top["kind"], top["function"],
                                                           top["share"], row))
leaves = {p["name"]: p["share"] for p in top.get("leaves", [])}
for name, ns in want.items():
    got, exp = leaves.get(name), ns / total_cpu
    print("leaf %-28s report %s, program %.3f" % (name, "%.3f" % got if got else "-", exp))
    if got is None or abs(got - exp) > 0.10:
        die("leaf %s: %s in the report, %.3f by the program's clock" % (name, got, exp))
gap_ns = sum(g["duration_ns"] for g in s["gaps"])
rows_ns = sum(c["ns"] for c in s["causes"])
print("%d rows: %d ns, gaps %d ns; shares sum to %.4f" % (len(s["causes"]), rows_ns, gap_ns,
                                                        sum(c["share"] for c in s["causes"])))
if abs(rows_ns - gap_ns) > 0.01 * gap_ns:
    die("the rows hold %d ns, the gaps %d ns" % (rows_ns, gap_ns))

# summary.txt: the same row, and its leaves under it.
lines = txt.split("\n")
k = next((i for i, l in enumerate(lines) if re.match(r"^\s+[0-9.]+%\s+on_cpu\s+" +
                                                     re.escape(row) + r"\s", l)), None)
under = lines[k + 1:k + 3] if k is not None else []
if not any(re.match(r"^\s+leaves: [0-9.]+% prep_heavy, ", l) for l in under):
    die("summary.txt has no row %s with prep_heavy its first leaf" % row)

# pprof: the gaps' samples by cause_function, prepare's ones most of them.
tags = subprocess.run(["go", "tool", "pprof", "-unit", "ns", "-tags", pb], capture_output=True,
                      text=True).stdout
block = tags[tags.find("cause_function:"):]
fn = re.search(r"^\s+([0-9.]+)ns \(\s*([0-9.]+)%\): " + re.escape(row) + r"$", block, re.M)
print("pprof cause_function %s: %s" % (row, fn.group(0).strip() if fn else "none"))
if not fn or float(fn.group(2)) < 80:
    die("pprof's cause_function label does not give %s most of the time:\n%s" % (row, block))
print("ok: prepare named with its leaves in every output")
PY
