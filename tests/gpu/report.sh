#!/usr/bin/env bash
# gapscope report on the GPU machine: every zkengine scenario recorded in launch mode and
# reported, a PyTorch loop attached with -p and reported, and a short table last: the engine's
# own steady-state busy (its truth), the report's busy and gaps, its top cause and share, and how
# many of the truth's idle windows (>= 1 ms) the report found with both edges within 1 ms.
#
# Needs a carried build/gapscope-portable and build/zkengine-portable (`make gapscope-portable
# zkengine-portable` on a build machine; carry build/); OUT (default build/gpu-report) gets the
# traces' reports, the truth and the table.  Run as root.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-report}
GS=${GS:-$BUILD/gapscope-portable}
ZK=${ZK:-$BUILD/zkengine-portable}
LOG2N=${LOG2N:-22}
PARTITIONS=${PARTITIONS:-16}
mkdir -p "$OUT"
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
table=$OUT/table.txt
: >"$table"

judge() { # judge NAME TRUTH|-: one line of the table from NAME.report/summary.json
	python3 - "$OUT/$1.report/summary.json" "$2" "$1" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
name = sys.argv[3]
dev = s["devices"][0] if s["devices"] else {"busy_pct": 0}
top = s["causes"][0] if s["causes"] else {"kind": "-", "function": "", "share": 0}
gap_ms = sum(g["duration_ns"] for g in s["gaps"]) / 1e6
line = "%-15s report busy %5.1f%%  gaps %4d (%7.1f ms)  top %-12s %-24s share %4.2f" % (
    name, dev["busy_pct"], len(s["gaps"]), gap_ms, top["kind"], (top.get("function") or "")[:24],
    top["share"])
if sys.argv[2] != "-":
    t = [json.loads(l) for l in open(sys.argv[2])]
    steady = [r for r in t if r["kind"] == "gpu_steady" and r["gpu"] == 0]
    idle = [r for r in t if r["kind"] == "gpu_idle" and r["gpu"] == 0]
    gaps = [g for g in s["gaps"] if g["device"] == 0]
    found = sum(1 for w in idle if any(abs(g["start_ns"] - w["start_ns"]) <= 1e6 and
                                        abs(g["end_ns"] - w["end_ns"]) <= 1e6 for g in gaps))
    true = sum(1 for g in gaps if any(g["start_ns"] < w["end_ns"] and w["start_ns"] < g["end_ns"]
                                      for w in idle))
    line += "  | truth busy %5.1f%%, idle windows found %d/%d, gaps true %d/%d" % (
        steady[0]["busy_pct"] if steady else 0, found, len(idle), true, len(gaps))
print(line)
PY
}

echo "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')" | tee -a "$table"
for s in ${SCENARIOS:-fixed tracker-trim gpu-lock-wide starved pageable oversubscribed}; do
	"$GS" record -f -o "$OUT/$s.gsc" -- "$ZK" --device cuda --scenario "$s" --log2n "$LOG2N" \
		--partitions "$PARTITIONS" --truth "$OUT/$s.truth.jsonl" >"$OUT/$s.engine.txt" 2>&1
	"$GS" report -f "$OUT/$s.gsc" -o "$OUT/$s.report" >"$OUT/$s.summary.txt"
	judge "$s" "$OUT/$s.truth.jsonl"
done

# A PyTorch loop, attached while it runs: matmuls, a synchronize per step, and a data-loading
# stand-in that sleeps (the host feeding the GPU late).
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	cat >"$OUT/loop.py" <<'EOF'
import time, torch
x = torch.randn(4096, 4096, device="cuda")
for step in range(100000):
    for _ in range(8):
        y = x @ x
    torch.cuda.synchronize()
    time.sleep(0.02)  # the next batch arrives late
EOF
	python3 "$OUT/loop.py" &
	pid=$!
	sleep 8 # torch's start-up (import, context, cuBLAS) before the attach
	"$GS" record -f -o "$OUT/torch.gsc" -p "$pid" --duration 8 >"$OUT/torch.record.txt" 2>&1 || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	"$GS" report -f "$OUT/torch.gsc" -o "$OUT/torch.report" >"$OUT/torch.summary.txt"
	judge torch -
else
	echo "torch: no PyTorch with CUDA here" | tee -a "$table"
fi
