#!/usr/bin/env bash
# This batch's check on the GPU machine: the real driver under the recorder after the bounded
# stream tables, the device-thread hook (probed only where a libcuda exports it: the real one does
# not), the one pre-pass and gapscope diff. zkengine (carried build/zkengine-portable) records
# tracker-trim and fixed on the GPU; each report's root cause, its passes over the trace, the
# stream tables' losses, and diff of the two; then the real traces of ../shared/traces where
# present. Results in $OUT/batch.txt.
#   here:  make build/gapscope-portable zkengine-portable
#   there: OUT=$OUT tests/gpu/batch_dec07.sh   (carrying build/gapscope-portable, build/zkengine-portable)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu-batch}
GS=build/gapscope-portable
ZK=build/zkengine-portable
mkdir -p "$OUT"
log=$OUT/batch.txt
say() { echo "$@" | tee -a "$log"; }
say "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
for sc in tracker-trim fixed; do
	"$GS" record -o "$OUT/$sc.gsc" -- "$ZK" --device cuda --scenario "$sc" --partitions 16 \
		>"$OUT/$sc.out" 2>"$OUT/$sc.err"
	say "record $sc: exit $?; $(grep -o '[0-9]* CUDA probes[^;]*' "$OUT/$sc.err" | head -1)"
	grep -i "warn\|fail" "$OUT/$sc.err" | head -3 | tee -a "$log"
	"$GS" report -v "$OUT/$sc.gsc" -o "$OUT/$sc.rep" >"$OUT/$sc.txt" 2>"$OUT/$sc.rerr"
	say "report $sc: exit $?"
	grep -E '^device 0: busy|^gaps:' "$OUT/$sc.txt" | tee -a "$log"
	sed -n '/^root causes/,/^$/p' "$OUT/$sc.txt" | head -4 | tee -a "$log"
	grep -o 'stream_handles_let_go [0-9]*, stream_calls_refused [0-9]*' "$OUT/$sc.txt" | tee -a "$log"
	grep -i 'pass' "$OUT/$sc.rerr" | head -2 | tee -a "$log"
	"$GS" script "$OUT/$sc.gsc" 2>/dev/null | grep -c 'gapscope_device_thread' |
		sed 's/^/device-thread events (0 with a real driver): /' | tee -a "$log"
done
"$GS" diff "$OUT/tracker-trim.gsc" "$OUT/fixed.gsc" >"$OUT/diff.txt" 2>&1
say "diff: exit $?"; head -6 "$OUT/diff.txt" | tee -a "$log"
"$GS" diff --fail-if-grows 10 "$OUT/fixed.gsc" "$OUT/tracker-trim.gsc" >/dev/null 2>&1
say "diff --fail-if-grows 10 fixed -> tracker-trim: exit $? (1 expected)"
for t in ../shared/traces/*.gsc; do
	[ -f "$t" ] || continue
	/usr/bin/time -f "%e s %M KB" -o "$OUT/time" "$GS" report -v "$t" -o "$OUT/$(basename "$t").rep" \
		>/dev/null 2>"$OUT/shared.err"
	say "report $(basename "$t"): exit $?, $(cat "$OUT/time"), $(grep -io '[0-9]* pass[^,;]*' "$OUT/shared.err" | head -1)"
done
