#!/usr/bin/env bash
# tokengine (the engine on tokio, engine/tokio/) on the GPU machine: each scenario run on the
# real device (the driver's libcuda.so.1) under the recorder in launch mode, reported, and a
# table of each scenario's top cause and share last.  The table also gives the top cause among
# those other than preemption, the share of malloc_trim's gap time whose chains pass the async
# tracker lock (`async tokengine::TRACKER`), the task hops the chains made, and the engine's own
# steady-state busy share and the share of its idle time its scenario's mechanism explains.
#
# Needs only build/tokengine and build/gapscope-portable (carried from a build machine; no
# cargo or CUDA toolkit here); build/libgapscope-cupti.so, where carried too, adds CUPTI's
# kernel times (else the API-inferred tier alone).  Run as root.  OUT (default
# build/gpu-tokio) gets the traces, reports, truth files, engine output and table.txt.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-tokio}
GS=${GS:-$BUILD/gapscope-portable}
TK=${TK:-$BUILD/tokengine}
PARTITIONS=${PARTITIONS:-16}
DEVICE=${DEVICE:-cuda} # DEVICE=sim tries the script on a machine without a GPU (simcuda next to TK)
mkdir -p "$OUT"
table=$OUT/table.txt
: >"$table"
for f in "$GS" "$TK"; do
	[ -x "$f" ] || { echo "tokio.sh: $f missing: carry it from a build machine" >&2; exit 1; }
done
cuda=simcuda
if [ "$DEVICE" = cuda ]; then
	cuda=$(ldconfig -p | awk '/libcuda\.so\.1 / { print $NF; exit }')
	[ -n "$cuda" ] || { echo "tokio.sh: no libcuda.so.1 in the ldconfig cache" >&2; exit 1; }
fi
cupti=
[ -r "$BUILD/libgapscope-cupti.so" ] || cupti=--no-cupti
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true

{
	echo "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version \
		--format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
	echo "== driver $cuda (-> $(readlink -f "$cuda")), ${cupti:-with CUPTI}"
} | tee -a "$table"

status=0
ran=()
for s in ${SCENARIOS:-fixed tracker-trim starved}; do
	echo "== $s"
	rc=0
	"$GS" record -f $cupti -o "$OUT/$s.gsc" -- "$TK" --device "$DEVICE" --scenario "$s" \
		--partitions "$PARTITIONS" --truth "$OUT/$s.truth.jsonl" >"$OUT/$s.engine.txt" 2>&1 || rc=$?
	tail -n 6 "$OUT/$s.engine.txt"
	if [ "$rc" -ne 0 ]; then
		echo "$s: record exit $rc" | tee -a "$table"
		status=1
		continue
	fi
	"$GS" report -f "$OUT/$s.gsc" -o "$OUT/$s.report" >"$OUT/$s.summary.txt" 2>&1 || {
		echo "$s: report failed" | tee -a "$table"
		status=1
		continue
	}
	sed -n '1,/^losses/p' "$OUT/$s.summary.txt"
	ran+=("$s")
done

echo | tee -a "$table"
for s in "${ran[@]}"; do
	python3 - "$OUT/$s.report/summary.json" "$OUT/$s.truth.jsonl" "$s" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2])]
name = sys.argv[3]
st = [r for r in t if r["kind"] == "gpu_steady" and r["gpu"] == 0]
dev = s["devices"][0] if s["devices"] else {"busy_pct": 0}
gap_ns = sum(g["duration_ns"] for g in s["gaps"])
causes = s["causes"]
top = causes[0] if causes else {"kind": "-", "function": "", "share": 0}
rest = [c for c in causes if c["kind"] != "preempted"]
pre = sum(c["share"] for c in causes if c["kind"] == "preempted")
top2 = rest[0] if rest else {"kind": "-", "function": "", "share": 0}
trim = [g for g in s["gaps"] if g["cause"] and g["cause"]["kind"] == "malloc_trim"]
via = sum(g["duration_ns"] for g in trim if any(l["kind"] == "lock" and "TRACKER" in (l.get("lock") or "")
                                               for l in g["chain"]))
trim_ns = sum(g["duration_ns"] for g in trim)
hops = sum(1 for g in s["gaps"] for l in g["chain"] if (l.get("detail") or "").startswith("task 0x"))
print("%-13s busy %5.1f%% of the run (truth: steady %5.1f%%, own %4.2f)  gaps %4d %8.1f ms  top %-11s %-22s %4.2f"
      "  | not preempted: %-7s %-22s %4.2f  | trim via TRACKER %s  task hops %d" % (
          name, dev["busy_pct"], st[0]["busy_pct"] if st else 0, st[0]["own_share"] if st else 0,
          len(s["gaps"]), gap_ns / 1e6, top["kind"], (top.get("function") or "")[:22], top["share"],
          top2["kind"], (top2.get("function") or "")[:22], top2["share"] / (1 - pre) if pre < 1 else 0,
          "%.2f" % (via / trim_ns) if trim_ns else "-", hops))
PY
done
exit "$status"
