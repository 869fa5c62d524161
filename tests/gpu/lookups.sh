#!/usr/bin/env bash
# On the GPU machine: the cuKernelGetFunction probe retired once kernel handles have shown their
# names (uprobes.h), on a PyTorch loop of 4096x4096 matmuls (tests/gpu/progs/torch_loop.py),
# recorded by default and with --keep-lookups: steps done, lookups and launches in the trace,
# launches left unnamed, the retired record and the handle-name checks; and --nvml on zkengine
# fixed: its utilization samples. Carry build/gapscope-portable, build/zkengine-portable.
#   OUT=DIR tests/gpu/lookups.sh
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RESULTS=${OUT:-$BUILD/gpu-lookups}
W=$(mktemp -d)
GS=$PWD/$BUILD/gapscope-portable
ZK=$PWD/$BUILD/zkengine-portable
mkdir -p "$RESULTS"
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RESULTS/lookups.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
c() { grep -c -- "$1" "$2"; }
for mode in retired kept; do
	opt=
	[ $mode = kept ] && opt=--keep-lookups
	"$GS" record -f -o "$W/$mode.gsc" --no-cupti $opt -- python3 tests/gpu/progs/torch_loop.py \
		--seconds 10 >"$W/$mode.out" 2>"$W/$mode.err"
	"$GS" script --no-stacks "$W/$mode.gsc" >"$W/$mode.script" 2>/dev/null
	say "$mode: $(tail -1 "$W/$mode.out"); cuKernelGetFunction $(c 'cuda:cuKernelGetFunction ' "$W/$mode.script"), launches $(c 'cuda:cuLaunchKernel' "$W/$mode.script"), unnamed $(c 'cuda:cuLaunchKernel[A-Za-z_]* kernel=? ' "$W/$mode.script"), retired records $(c 'cuKernelGetFunction retired-at' "$W/$mode.script")"
	say "  $(grep '^# kernel-names-from-handles' "$W/$mode.script" | tail -1)"
	grep 'cuKernelGetFunction retired-at' "$W/$mode.script" | head -1 | sed 's/^/  /' | tee -a "$table"
done
"$GS" record -f -o "$W/n.gsc" --nvml --no-cupti -- "$ZK" --device cuda --scenario fixed \
	--partitions 4 --log2n 22 >/dev/null 2>"$W/n.err"
grep -i nvml "$W/n.err" | tee -a "$table"
"$GS" script --no-stacks "$W/n.gsc" >"$W/n.script" 2>/dev/null
say "nvml records $(c '^# nvml ' "$W/n.script"); busiest: $(grep '^# nvml ' "$W/n.script" | sort -t= -k3 -n -r | head -1)"
grep '^# nvml ' "$W/n.script" | awk 'NR % 20 == 1' | head -12 | tee -a "$table"
cp "$W"/*.err "$RESULTS/" 2>/dev/null
cat "$table"
