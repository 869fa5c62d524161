#!/usr/bin/env bash
# Recoverable time on the real driver: a PyTorch loop whose feeder waits on a lock a
# housekeeping thread holds across malloc_trim (tests/gpu/progs/torch_recover.py trim), and the
# same loop without the trim (notrim), each recorded from its start for SECS seconds of loop.
# The report of the first predicts what removing malloc_trim gives back (its row's
# recoverable_ns, and the lock's hop); the twin shows what it gave back: the first's gap time
# less the twin's, the twin's put on the first's loop length (the devices' first to last GPU
# work). One RESULT line: predicted, actual, their ratio, and the trim's share for contrast.
# Under 120 s (two loops of 20 s with PyTorch's start, at most 45 s each; two reports, 15 s).
#   here:  make build/gapscope-portable
#   there: OUT=$OUT tests/gpu/recover.sh   (carrying build/gapscope-portable; PyTorch 2.11 in
#          /opt/torch/.venv, or PY=python3)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu-recover}
BUILD=${BUILD:-build}
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
SECS=${SECS:-20}
. tests/gpu/lib.sh
"$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ say "RESULT recover: no PyTorch with CUDA ($PY): nothing run"; exit 1; }

for m in trim notrim; do
	timeout 45 "$GS" record -o "$OUT/$m.gsc" -- "$PY" tests/gpu/progs/torch_recover.py "$m" "$SECS" \
		>"$OUT/$m.out" 2>"$OUT/$m.err"
	say "record $m: exit $?, $(grep -h '^steps' "$OUT/$m.out")"
	timeout 15 "$GS" report "$OUT/$m.gsc" -o "$OUT/$m.rep" >"$OUT/$m.txt" 2>"$OUT/$m.rerr"
	say "report $m: exit $?"
	grep -E '^gaps:' "$OUT/$m.txt" | tee -a "$table"
	sed -n '/^root causes/,/^$/p' "$OUT/$m.txt" | head -6 | tee -a "$table"
done

"$PY" - "$OUT" <<'PY' | tee -a "$table"
import json, sys
o = sys.argv[1]
try:
    a = json.load(open(o + "/trim.rep/summary.json"))
    b = json.load(open(o + "/notrim.rep/summary.json"))
except (OSError, ValueError) as e:
    print("RESULT recover: no report (%s)" % e)
    sys.exit(1)
def span(s):
    return sum(d["active_end_ns"] - d["active_start_ns"] for d in s["devices"]) or s["duration_ns"]
trim = [c for c in a["causes"] if c["kind"] == "malloc_trim"]
pred = sum(c["recoverable_ns"] for c in trim)
share = sum(c["ns"] for c in trim)
hi = sum(c["recoverable_range_ns"][1] for c in trim)
hops = sorted(a["hops"], key=lambda h: -h["recoverable_ns"])[:1]
actual = a["gap_ns"] - b["gap_ns"] * span(a) / span(b)
ratio = pred / actual if actual > 0 else float("inf")
print("RESULT recover: predicted %.0f ms (range to %.0f), actual %.0f ms, ratio %.2f (%s 25%%); "
      "malloc_trim's gap time %.0f ms; top hop %s; gaps %.0f ms -> %.0f ms" % (
          pred / 1e6, hi / 1e6, actual / 1e6, ratio,
          "within" if abs(ratio - 1) <= 0.25 else "beyond", share / 1e6,
          ", ".join("%s %s %.0f ms" % (h["kind"], h["name"], h["recoverable_ns"] / 1e6)
                    for h in hops) or "none",
          a["gap_ns"] / 1e6, b["gap_ns"] / 1e6))
PY
