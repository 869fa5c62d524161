#!/usr/bin/env bash
# The recorder's cost per launch on the GPU machine, interleaved reps (carry build/ with
# build/gapscope-portable and build/zkengine-portable):  OUT=$OUT tests/gpu/launch_cost.sh
# (a) empty kernels through the runtime API: unrecorded against recorded, per-launch added cost;
# (b) a launch-bound PyTorch loop: unrecorded against recorded;
# (c) zkengine fixed: throughput recorded against unrecorded (goal >= 0.99).
# Results under $OUT; a short table last.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-launch-cost}
GS=$PWD/$BUILD/gapscope-portable
ZK=$PWD/$BUILD/zkengine-portable
REPS=${REPS:-5}
N=${N:-100000}
TN=${TN:-20000}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing || true
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -O2 -arch=sm_90 tests/gpu/progs/empty_loop.cu -o "$OUT/empty_loop" || exit 1
per() { sed -n 's/^per_launch_us \([0-9.]*\)$/\1/p' "$1" | tail -1; }
rec() { "$GS" record -f -o "$OUT/t.gsc" -- "$@" 2>>"$OUT/record.err"; }
med() { sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "?")}'; }

for r in $(seq "$REPS"); do
	"$OUT/empty_loop" "$N" >"$OUT/e.plain.$r"
	rec "$OUT/empty_loop" "$N" >"$OUT/e.rec.$r"
	python3 tests/gpu/progs/torch_launch.py "$TN" >"$OUT/t.plain.$r"
	rec python3 tests/gpu/progs/torch_launch.py "$TN" >"$OUT/t.rec.$r"
	/usr/bin/time -f '%e' "$ZK" --device cuda --scenario fixed --partitions 8 --log2n 22 \
		>/dev/null 2>"$OUT/z.plain.$r"
	/usr/bin/time -f '%e' "$GS" record -f -o "$OUT/z.gsc" -- "$ZK" --device cuda \
		--scenario fixed --partitions 8 --log2n 22 >/dev/null 2>"$OUT/z.rec.$r"
done
ep=$(for r in $(seq "$REPS"); do per "$OUT/e.plain.$r"; done | med)
er=$(for r in $(seq "$REPS"); do per "$OUT/e.rec.$r"; done | med)
tp=$(for r in $(seq "$REPS"); do per "$OUT/t.plain.$r"; done | med)
tr=$(for r in $(seq "$REPS"); do per "$OUT/t.rec.$r"; done | med)
zp=$(for r in $(seq "$REPS"); do tail -1 "$OUT/z.plain.$r"; done | med)
zr=$(for r in $(seq "$REPS"); do tail -1 "$OUT/z.rec.$r"; done | med)
{
	printf '%-34s %12s %12s %12s\n' case unrecorded recorded result
	printf '%-34s %12s %12s %12s\n' "empty kernel, us/launch" "$ep" "$er" \
		"+$(awk -v a="$ep" -v b="$er" 'BEGIN{printf "%.2f", b-a}')"
	printf '%-34s %12s %12s %12s\n' "pytorch loop, us/launch" "$tp" "$tr" \
		"+$(awk -v a="$tp" -v b="$tr" 'BEGIN{printf "%.2f", b-a}')"
	printf '%-34s %12s %12s %12s\n' "zkengine fixed, s (throughput)" "$zp" "$zr" \
		"$(awk -v a="$zp" -v b="$zr" 'BEGIN{printf "%.3f", a/b}')"
} | tee "$OUT/table.txt"
