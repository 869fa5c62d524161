#!/usr/bin/env bash
# Issue 5 on the GPU machine (H200), with the portable binaries carried from a dev machine:
#   here:  make -j2 all zkengine-portable      (carry build/)
#   there: OUT=$OUT tests/gpu/record.sh
# Cases: zkengine --device cuda under record; a runtime-API loop built here by nvcc (static
# cudart), default stream and --default-stream per-thread; a PyTorch loop attached with -p; the
# overhead ratio on zkengine (interleaved: plain, recorded, recorded with --sampler timer); CPU
# samples at the tick. Each case's trace text and
# logs go to $OUT; a short table is printed last. Output of a run is kept in tests/gpu/record-h200/.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-record}
GS=$PWD/$BUILD/gapscope-portable
ZK=$PWD/$BUILD/zkengine-portable
REPS=${REPS:-7}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
T=$OUT/table.txt
: >"$T"
row() { printf '%-26s %-34s %-14s %-14s %s\n' "$@" | tee -a "$T"; }
count() { grep -c -- "$1" "$2" 2>/dev/null || true; }

echo "== machine"
uname -r; nproc; nvidia-smi -L 2>&1 | head -2; ldconfig -p | grep 'libcuda\.so\.1 ' | head -1
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing || true
ls -la "$GS" "$ZK" || exit 1
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
row case metric trace expected ok

# -- 1. zkengine --device cuda, launched under record.
"$GS" record -f -o "$OUT/zk.gsc" -- "$ZK" --device cuda --partitions 4 --log2n 22 --verify \
	>"$OUT/zk.out" 2>"$OUT/zk.err"
echo "zkengine under record: exit $?"; cat "$OUT/zk.out" "$OUT/zk.err" | tail -25
"$GS" script --no-stacks "$OUT/zk.gsc" >"$OUT/zk.txt" 2>"$OUT/zk.script.err"
l=$(sed -n 's/^launches: \([0-9]*\)$/\1/p' "$OUT/zk.out")
lt=$(count 'cuda:cuLaunchKernel ' "$OUT/zk.txt")
row zkengine cuLaunchKernel "$lt" "${l:-?}" "$([ "$lt" = "$l" ] && echo yes || echo NO)"
row zkengine "launches without kernel name" "$(count 'cuLaunchKernel kernel=? ' "$OUT/zk.txt")" 0 -
# Every lookup the recorder sees checks the kernel name at *(handle + 8) (record -p's fallback).
hn=$(sed -n 's/^# kernel-names-from-handles \(.*\)$/\1/p' "$OUT/zk.txt" | tail -1)
row zkengine "handle names checked" "$hn" "disagreed=0" "$(echo "$hn" | grep -q ' disagreed=0 ' && echo yes || echo NO)"
row zkengine verified "$(grep -c '^verification passed' "$OUT/zk.out")" 1 -
for s in cuStreamSynchronize cuEventSynchronize; do
	e=$(sed -n "s/^sync calls $s: \([0-9]*\)$/\1/p" "$OUT/zk.out")
	t=$(count "cuda:$s " "$OUT/zk.txt")
	row zkengine "$s" "$t" "${e:-?}" "$([ "$t" = "$e" ] && echo yes || echo NO)"
done
row zkengine losses "$(sed -n 's/^# losses total=\([0-9]*\).*/\1/p' "$OUT/zk.txt" | tail -1)" 0 -
# CPU samples at the scheduler tick: the engine's CPU time over the period one sample stands for.
sl=$(sed -n 's/^# sampler \(.*\)$/\1/p' "$OUT/zk.txt" | tail -1)
period=$(sed -n 's/.* period_ns=\([0-9]*\)$/\1/p' <<<"$sl")
cpu=$(sed -n 's/^# exit .* utime_ns=\([0-9]*\) stime_ns=\([0-9]*\)/\1 \2/p' "$OUT/zk.txt" |
	awk '{print $1 + $2}')
ns=$(count ' sample:tick ' "$OUT/zk.txt")
exp=$(awk -v c="${cpu:-0}" -v p="${period:-0}" 'BEGIN { if (p > 0) printf "%d", c / p; else print "?" }')
row zkengine "sampler" "$sl" "tick" -
row zkengine "samples at the tick" "$ns" "$exp" "$(awk -v n="$ns" -v e="$exp" 'BEGIN { print (e > 0 && n >= 0.8 * e && n <= 1.2 * e) ? "yes" : "NO" }')"

# -- 2. runtime-API loop, nvcc-built, static cudart.
for mode in default per-thread; do
	flags=""; sfx=""
	[ "$mode" = per-thread ] && { flags="--default-stream per-thread"; sfx=_ptsz; }
	"$nvcc" -O2 -arch=sm_90 $flags tests/gpu/progs/rt_loop.cu -o "$OUT/rt_loop_$mode" \
		>"$OUT/rt_$mode.build" 2>&1 || { echo "nvcc failed"; cat "$OUT/rt_$mode.build"; }
	"$GS" record -f -o "$OUT/rt_$mode.gsc" -- "$OUT/rt_loop_$mode" 200 >"$OUT/rt_$mode.out" \
		2>"$OUT/rt_$mode.err"
	cat "$OUT/rt_$mode.out"; tail -3 "$OUT/rt_$mode.err"
	"$GS" script --no-stacks "$OUT/rt_$mode.gsc" >"$OUT/rt_$mode.txt" 2>/dev/null
	f=$OUT/rt_$mode.txt
	ln=$(count "cuda:cuLaunchKernel$sfx kernel=[^?]*saxpy" "$f")
	row "rt_loop $mode" "cuLaunchKernel$sfx (named saxpy)" "$ln" 200 "$([ "$ln" = 200 ] && echo yes || echo NO)"
	c=$(count "cuda:cuMemcpyHtoDAsync_v2$sfx " "$f")
	row "rt_loop $mode" "cuMemcpyHtoDAsync_v2$sfx" "$c" 200 "$([ "$c" = 200 ] && echo yes || echo NO)"
	c=$(count "cuda:cuStreamSynchronize$sfx " "$f")
	row "rt_loop $mode" "cuStreamSynchronize$sfx" "$c" 100 "$([ "$c" = 100 ] && echo yes || echo NO)"
	c=$(count "cuda:cuEventSynchronize " "$f")
	row "rt_loop $mode" "cuEventSynchronize" "$c" 100 "$([ "$c" = 100 ] && echo yes || echo NO)"
	c=$(count "cuda:cuEventRecord$sfx " "$f")
	row "rt_loop $mode" "cuEventRecord$sfx" "$c" 200 "$([ "$c" = 200 ] && echo yes || echo NO)"
	grep -o 'cuda:cu[A-Za-z0-9_]*' "$f" | sort | uniq -c | sort -rn >"$OUT/rt_$mode.hits"
done

# -- 3. PyTorch loop, attached with -p once it runs.
rm -f "$OUT/torch.ready"
python3 tests/gpu/progs/torch_loop.py --seconds 25 --ready "$OUT/torch.ready" >"$OUT/torch.out" 2>&1 &
tp=$!
for _ in $(seq 600); do [ -s "$OUT/torch.ready" ] && break; kill -0 $tp 2>/dev/null || break; sleep 0.2; done
if [ -s "$OUT/torch.ready" ]; then
	"$GS" record -f -o "$OUT/torch.gsc" -p "$tp" --duration 5 2>"$OUT/torch.err"
	echo "torch record: exit $?"; cat "$OUT/torch.err"
	wait $tp; echo "torch exit $?"; cat "$OUT/torch.out"
	"$GS" script --no-stacks "$OUT/torch.gsc" >"$OUT/torch.txt" 2>/dev/null
	f=$OUT/torch.txt
	grep -o 'cuda:cu[A-Za-z0-9_]*' "$f" | sort | uniq -c | sort -rn >"$OUT/torch.hits"
	cat "$OUT/torch.hits" | head -20
	row torch "cuLaunchKernelEx" "$(count 'cuda:cuLaunchKernelEx ' "$f")" ">0" -
	# Attached after torch looked its kernels up: names from lookups after the attach, names
	# read from the handles (kernel=NAME(handle)), none (kernel=?).
	all=$(count 'cuda:cuLaunchKernel\(Ex\)\? kernel=' "$f")
	byh=$(count 'cuda:cuLaunchKernel\(Ex\)\? kernel=[^ ]*(handle) ' "$f")
	unn=$(count 'cuda:cuLaunchKernel\(Ex\)\? kernel=? ' "$f")
	row torch "launches named via lookup" "$((all - byh - unn))" - -
	row torch "launches named via handle" "$byh" ">0" "$([ "$byh" -gt 0 ] && echo yes || echo NO)"
	row torch "launches unnamed (kernel=?)" "$unn" - -
	row torch "handles named / rejected" "$(count 'cuda:kernel-name ' "$f") / $(sed -n 's/^# kernel-names-from-handles .* rejected=\([0-9]*\) .*/\1/p' "$f" | tail -1)" - -
	hn=$(sed -n 's/^# kernel-names-from-handles \(.*\)$/\1/p' "$f" | tail -1)
	row torch "handle names checked" "$hn" "disagreed=0" "$(echo "$hn" | grep -q ' disagreed=0 ' && echo yes || echo NO)"
	grep -o 'kernel=[^ ]*(handle)' "$f" | sort | uniq -c | sort -rn | head -10
	row torch "cuCtxSynchronize_v2" "$(count 'cuda:cuCtxSynchronize_v2 ' "$f")" ">0" -
	row torch "cuStreamSynchronize" "$(count 'cuda:cuStreamSynchronize ' "$f")" ">0" -
	row torch "target still ran after detach" "$(grep -c 'torch_loop: [0-9]* steps' "$OUT/torch.out")" 1 -
else
	echo "torch_loop never became ready"; cat "$OUT/torch.out"; kill $tp 2>/dev/null
	row torch ready no yes NO
fi

# -- 4. Overhead on zkengine (no --verify: GPU throughput only), interleaved after one warm-up
# run of each (the first run of a process on the GPU pays for the driver's caches): plain,
# recorded (tick sampler, the default) and recorded with --sampler timer.
: >"$OUT/overhead.txt"
ZA=(--device cuda --partitions 8 --log2n 22 --seed 1)
tput() { sed -n 's/^throughput: \([0-9.]*\).*/\1/p'; }
"$ZK" "${ZA[@]}" >/dev/null 2>&1
"$GS" record -f -o "$OUT/ovh.gsc" -- "$ZK" "${ZA[@]}" >/dev/null 2>&1
for i in $(seq "$REPS"); do
	p=$("$ZK" "${ZA[@]}" 2>/dev/null | tput)
	r=$("$GS" record -f -o "$OUT/ovh.gsc" -- "$ZK" "${ZA[@]}" 2>/dev/null | tput)
	t=$("$GS" record -f -o "$OUT/ovh.gsc" --sampler timer -- "$ZK" "${ZA[@]}" 2>/dev/null | tput)
	echo "rep $i plain $p recorded $r recorded-timer $t" | tee -a "$OUT/overhead.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(awk '{print $4}' "$OUT/overhead.txt" | median)
mr=$(awk '{print $6}' "$OUT/overhead.txt" | median)
mt=$(awk '{print $8}' "$OUT/overhead.txt" | median)
ratio() { awk -v p="$mp" -v r="$1" 'BEGIN { if (p > 0) printf "%.3f", r / p; else print "?" }'; }
row zkengine-overhead "recorded/plain (median of $REPS)" "$(ratio "$mr")" ">=0.98" -
row zkengine-overhead "same, --sampler timer" "$(ratio "$mt")" - -
# Few files come back from the machine: the small ones in one archive, the traces' text cut.
for f in zk rt_default rt_per-thread torch; do
	[ -f "$OUT/$f.txt" ] && { echo "==== $f"; head -n 400 "$OUT/$f.txt"; } >>"$OUT/script-heads.txt"
done
(cd "$OUT" && rm -f ./*.gsc rt_loop_* &&
	small=$(ls | grep -v -x -e outputs.tar.gz -e log.txt -e table.txt -e script-heads.txt) &&
	tar czf outputs.tar.gz $small && rm -f $small) || echo "packing the outputs failed"
echo
echo "== gapscope record on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
cat "$T"
