#!/usr/bin/env bash
# On the GPU machine (carry build/gapscope-portable; the PyTorch venv's python3, 3.12): time that
# is the interpreter's or a library's, named under the user's function. Each program attached
# with -p once it runs, recorded 8 s, reported; one RESULT line per program with its top cause
# and what it should be:
#   torch_gc.py          its GPU waits for full collections of the cyclic garbage collector,
#                        called from parse_records(): want "gc (in parse_records, torch_gc.py)";
#   torch_dataloader.py  two DataLoader workers whose dataset's __getitem__ calls augment(),
#                        which runs numpy's FFT: want "augment (torch_dataloader.py)", a numpy
#                        or libm frame its leaf, never a row of numpy's own Python.
# The recorder's interpreter line says whether the collector's state is read ("its collector
# not seen" where not). About 60 s.
#   OUT=DIR tests/gpu/pygc.sh
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-pygc}
. tests/gpu/lib.sh
say "python: $(python3 -c 'import sys; print(sys.version.split()[0])' 2>&1)"

# attach NAME WANT PROG ARGS...: the program runs until "ready PID"; recorded -p for 8 s.
attach() {
	local name=$1 want=$2 line pid
	shift 2
	coproc P { exec python3 "$@"; }
	read -r -t 120 line <&"${P[0]}" || line=
	case $line in ready*) ;; *) say "RESULT $name: the program did not start"; kill "$P_PID"; return 1 ;; esac
	pid=${line#ready }
	timeout 60 "$GS" record -f -o "$OUT/$name.gsc" -p "$pid" --duration 8 >"$OUT/$name.record.txt" 2>&1
	kill "$pid" 2>/dev/null
	wait "$P_PID" 2>/dev/null
	"$GS" report -f -o "$OUT/$name.report" "$OUT/$name.gsc" >"$OUT/$name.summary.txt" 2>&1
	say "$name: $(grep -o 'Python [0-9.]* ([^)]*): frames read.*' "$OUT/$name.record.txt" | head -1)"
	python3 - "$OUT/$name.report/summary.json" "$name" "$want" <<'PY' | tee -a "$table"
import json, sys
path, name, want = sys.argv[1:4]
try:
    s = json.load(open(path))
except (OSError, ValueError) as e:
    print("RESULT %s: no report (%s)" % (name, e))
    sys.exit()
for c in s["causes"][:4]:
    print("  %5.1f%% %-10s %s; leaves %s" % (100 * c["share"], c["kind"], c.get("function"),
          ", ".join("%s %.0f%%" % (p["name"], 100 * p["share"]) for p in c.get("leaves", [])[:2])))
top = next((c for c in s["causes"] if c["kind"] != "preempted"), None)
if not top:
    print("RESULT %s: no cause" % name)
    sys.exit()
print("RESULT %s: top %s %s %.2f, want %s: %s" % (
    name, top["kind"], top.get("function"), top["share"], want,
    "yes" if top.get("function") == want else "NO"))
PY
}

attach torch_gc "gc (in parse_records, torch_gc.py)" tests/gpu/progs/torch_gc.py 25
attach dataloader "augment (torch_dataloader.py)" tests/gpu/progs/torch_dataloader.py 25
echo
cat "$table"
