#!/usr/bin/env bash
# The pipeline's six scenarios on the GPU machine (issue 3): every scenario at log2n 22 (LOG2N)
# with --verify and --truth; per-partition GPU time (CUDA events) and GPU busy %, a short table
# last.  Output goes to $OUT when set (else build/gpu-scenarios).
#
# Uses build/zkengine when GMP's header is present, else a carried build/zkengine-portable
# (`make zkengine-portable` here, carry build/ there), as tests/gpu/foundation.sh does.  Sizing
# that depends on the machine (synthesis threads, the oversubscribed pool) scales with nproc
# inside the engine.  Output of a run on the H200 is kept in tests/gpu/scenarios-h200/.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-scenarios}
LOG2N=${LOG2N:-22}
PARTITIONS=${PARTITIONS:-12}
BUDGET_S=${BUDGET_S:-330} # stop starting scenarios after this many seconds
DEVICE=${DEVICE:-cuda}     # DEVICE=sim tries the script on a machine without a GPU
VERIFY=${VERIFY:-1}        # VERIFY=0: the pipeline alone, without the GMP check of each result
# SCENARIOS="fixed ..." runs only those
verify_flag=--verify
[ "$VERIFY" = 1 ] || verify_flag=
mkdir -p "$OUT"
summary=$OUT/scenarios.txt
: >"$summary"
say() { echo "$@" | tee -a "$summary"; }

say "== machine"
say "kernel $(uname -r), $(nproc) CPUs"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true; } 2>&1 |
	tee -a "$summary"

if [ -f /usr/include/gmp.h ] || [ -f /usr/include/x86_64-linux-gnu/gmp.h ]; then
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	make -j"$(nproc)" CUDA_HOME="$(dirname "$(dirname "$nvcc")")" NVCC="$nvcc" \
		"$BUILD/zkengine" 2>&1 | tail -n 20
	ZK=$BUILD/zkengine
elif [ -x "$BUILD/zkengine-portable" ]; then
	ZK=$BUILD/zkengine-portable
else
	say "no GMP headers and no $BUILD/zkengine-portable: run 'make zkengine-portable' and carry build/"
	exit 1
fi
say "engine: $ZK"

t0=$(date +%s) status=0
ran=()
for s in ${SCENARIOS:-fixed tracker-trim gpu-lock-wide starved pageable oversubscribed}; do
	if [ $(($(date +%s) - t0)) -gt "$BUDGET_S" ]; then
		say "== $s: skipped (time budget of ${BUDGET_S}s spent)"
		continue
	fi
	say "== $s: --device $DEVICE --log2n $LOG2N --partitions $PARTITIONS $verify_flag"
	rc=0 start=$(date +%s%N)
	"$ZK" --device "$DEVICE" --scenario "$s" --log2n "$LOG2N" --partitions "$PARTITIONS" $verify_flag \
		--truth "$OUT/$s.truth.jsonl" >"$OUT/$s.txt" 2>&1 || rc=$?
	end=$(date +%s%N)
	tail -n 14 "$OUT/$s.txt"
	say "$s: exit $rc, $(((end - start) / 1000000)) ms wall"
	[ "$rc" -eq 0 ] || status=1
	ran+=("$s")
done

say ""
say "== per-partition GPU time (ms, CUDA events: h2d .. d2h); GPU busy from the truth: steady"
say "   state (first kernel to last), whole run, and the share of idle time (windows >= 1 ms) that"
say "   the scenario's own stall overlaps"
for s in "${ran[@]}"; do
	f=$OUT/$s.txt
	steady=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["kind"] == "gpu_steady" and r["gpu"] == 0:
        print("%5.1f%% %5.1f%% %4.2f" % (r["busy_pct"], r["whole_busy_pct"], r["own_share"]))
' "$OUT/$s.truth.jsonl" 2>/dev/null || echo "? ? ?")
	# columns of the engine's table: part gpu h2d intt coset_ntt quotient intt_h d2h total verify
	awk -v s="$s" -v st="$steady" '$1 ~ /^[0-9]+$/ && NF == 10 { n++; t += $9; k += $4 + $5 + $6 + $7;
		if ($10 == "ok") ok++ }
		/^throughput:/ { thr = $2 }
		/^malloc_trim ms:/ { trim = $4 " " $5 " " $6 }
		END { printf "%-15s parts %3d ok %3d  gpu ms/part %7.2f (kernels %7.2f)  steady/whole/own %s  %6s part/s  trim ms %s\n",
			s, n, ok, n ? t / n : 0, n ? k / n : 0, st, thr, trim }' "$f"
done | tee -a "$summary"

say ""
say "== ground truth per scenario (from --truth: stall kind, count, total ms)"
for s in "${ran[@]}"; do
	[ -s "$OUT/$s.truth.jsonl" ] || continue
	python3 - "$OUT/$s.truth.jsonl" "$s" <<'PY' 2>&1 | tee -a "$summary" || true
import collections, json, sys
n, ms = collections.Counter(), collections.Counter()
for l in open(sys.argv[1]):
    r = json.loads(l)
    k = r["kind"]
    if k == "malloc_trim":
        k += "(under tracker)" if r["tracker_lock_held"] else "(outside)"
    if k == "cond_wait_work" and r.get("startup"):
        continue
    if "ns" in r and k not in ("gpu_idle", "result_records"):
        n[k] += 1
        ms[k] += (r["runnable_ns"] if k == "preempted" else r["ns"]) / 1e6
print("%-15s " % sys.argv[2] + ", ".join("%s %d/%.0fms" % (k, n[k], ms[k]) for k in sorted(n)))
PY
done
exit "$status"
