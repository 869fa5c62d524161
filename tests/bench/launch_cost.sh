#!/usr/bin/env bash
# The recorder's cost per launch beside a count-only uprobe's, side by side in one run:
# tests/bench/launchloop.c makes LAUNCHES launches through the stand-in libcuda
# (tests/record/fakecuda.c, whose launch returns at once), unrecorded, under trapcount (a
# count-only BPF uprobe on cuLaunchKernel) and under `gapscope record`, in interleaved reps
# (REPS, default 5). Launches are decided in the kernel (only those that can end a gap go into
# the trace, every one is counted): the recorder's count is checked against the loop's. Prints
# the medians, the added cost of each and their ratio, and each BPF
# program's own run time per hit (kernel.bpf_stats_enabled): the trap itself is the same for
# both and, on a virtual machine, most of the cost.
#   tests/bench/launch_cost.sh [BUILD]
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$BUILD/gapscope
TC=$BUILD/bench/trapcount
REPS=${REPS:-5}
N=${LAUNCHES:-200000}
[ "$(id -u)" -eq 0 ] || { echo "launch_cost: needs root (BPF)" >&2; exit 1; }
[ -x "$GS" ] && [ -x "$TC" ] || { echo "launch_cost: build $GS and $TC first" >&2; exit 1; }
TMP=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats_was; rm -rf "$TMP"' EXIT
${CC:-cc} -O2 -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
${CC:-cc} -O2 -o "$TMP/launchloop" tests/bench/launchloop.c -ldl
LOOP=("$TMP/launchloop" "$TMP/libcuda.so.1" "$N")
per() { sed -n 's/^per_launch_us //p'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# A program's mean run time per hit, read while LOOP runs under CMD.
prog_ns() { # prog_ns NAME CMD...
	local name=$1
	shift
	sysctl -qw kernel.bpf_stats_enabled=1
	"$@" >/dev/null 2>&1 &
	local pid=$! ns=
	for _ in $(seq 100); do
		ns=$(bpftool prog show 2>/dev/null | awk -v n="$name" '$0 ~ "name " n " " {
			for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }
			if (c > 100000) printf "%.0f", t / c }')
		[ -n "$ns" ] && break
		sleep 0.1
	done
	wait "$pid" || true
	sysctl -qw kernel.bpf_stats_enabled=0
	echo "${ns:-?}"
}

for i in $(seq "$REPS"); do
	p=$("${LOOP[@]}" | per)
	t=$("$TC" "$TMP/libcuda.so.1" cuLaunchKernel "${LOOP[@]}" 2>/dev/null | per)
	r=$("$GS" record -f -o "$TMP/t.gsc" -- "${LOOP[@]}" 2>"$TMP/rec.err" | per)
	grep -q ' 0 lost$' "$TMP/rec.err" || { cat "$TMP/rec.err" >&2; exit 1; }
	echo "rep $i: unrecorded $p trapcount $t recorded $r us/launch"
	echo "$p $t $r" >>"$TMP/reps"
done
p=$(cut -d' ' -f1 "$TMP/reps" | median)
t=$(cut -d' ' -f2 "$TMP/reps" | median)
r=$(cut -d' ' -f3 "$TMP/reps" | median)
cn=$(prog_ns count_hit "$TC" "$TMP/libcuda.so.1" cuLaunchKernel "${LOOP[@]}")
rn=$(prog_ns cu_entry "$GS" record -f -o "$TMP/t.gsc" -- "${LOOP[@]}")
bytes=$(stat -c %s "$TMP/t.gsc")
# Exact counts: the recorder's (every launch, the trace holding those that can end a gap) against
# the loop's own N + 1000 warm-up launches; the trace's size a second of the recorded loop.
"$GS" script --no-stacks "$TMP/t.gsc" >"$TMP/t.txt" 2>/dev/null
counted=$(grep '^# launch-count ' "$TMP/t.txt" | sed 's/.* n=//' | awk '{ s += $1 } END { print s + 0 }')
inrec=$(grep -c 'cuda:cuLaunchKernel ' "$TMP/t.txt" || true)
[ "$counted" -eq $((N + 1000)) ] || { echo "launch_cost: $counted launches counted, the loop made $((N + 1000))" >&2; exit 1; }
echo "launches: the loop made $((N + 1000)), the recorder counted $counted, $inrec in the trace;" \
	"recorded loop $(awk -v r="$r" 'BEGIN { printf "%.0f", 1e6 / r }') launches/s," \
	"trace $(awk -v b="$bytes" -v r="$r" -v n="$N" 'BEGIN { printf "%.1f", b / (r * (n + 1000) / 1e6) / 1e3 }') KB/s"
echo "launch cost ($N launches, $REPS reps, medians): unrecorded $p us, count-only uprobe +$(awk -v a="$t" -v b="$p" 'BEGIN { printf "%.3f", a - b }') us, recorded +$(awk -v a="$r" -v b="$p" 'BEGIN { printf "%.3f", a - b }') us: ratio $(awk -v a="$r" -v b="$t" -v p="$p" 'BEGIN { printf "%.3f", (a - p) / (b - p) }')"
echo "BPF program per hit: count_hit ${cn} ns, cu_entry ${rn} ns; trace $((bytes / (N + 1000))) bytes a launch"
awk -v a="$r" -v b="$t" -v p="$p" 'BEGIN { q = (a - p) / (b - p); printf "recorded cost per launch %.2fx a count-only trap (bound 1.5x): %s\n", q, q <= 1.5 ? "within" : "OVER" }' 
