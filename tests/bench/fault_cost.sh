#!/usr/bin/env bash
# make bench: what the file-fault tracepoint (filemap:mm_filemap_fault, bpf/offcpu.bpf.c's
# filemap_fault) costs a process the recording does not hold. It fires for every process's file
# faults and leaves at its first map lookup for those not recorded. A neighbour (faulter.c) makes
# one such fault after another (a private file mapping written page by page, ~100k faults a
# second), run BENCH_FAULT_REPS times (default 7), interleaved: alone; beside a recording (of a
# sleep); beside a recording without the tracepoint (GAPSCOPE_NO_FILEMAP_FAULT). Its CPU time a
# fault (what the load disturbs least) and faults a second, medians, and the ratios: the
# tracepoint's own cost is the second over the third. Prints a table last and appends it to
# tests/bench/results.txt.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$BUILD/gapscope
REPS=${BENCH_FAULT_REPS:-7}
SECS=2
RESULTS=tests/bench/results.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
${CC:-cc} -O2 -o "$TMP/faulter" tests/bench/faulter.c

# beside [ENV...]: the neighbour's line while a recording of a sleep runs (started, given a
# second to attach: a benchmark, not a test).
beside() {
	env "$@" "$GS" record -f -o "$TMP/r.gsc" -- sleep $((SECS + 3)) >/dev/null 2>&1 &
	local rec=$!
	sleep 1.5
	"$TMP/faulter" "$TMP/f.bin" "$SECS"
	wait "$rec"
}
for i in $(seq "$REPS"); do
	p=$("$TMP/faulter" "$TMP/f.bin" "$SECS")
	r=$(beside)
	n=$(beside GAPSCOPE_NO_FILEMAP_FAULT=1)
	echo "$p | $r | $n" | tee -a "$TMP/raw"
done
# The program's own mean run time a firing (kernel.bpf_stats_enabled), over one more run beside.
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
"$GS" record -f -o "$TMP/r.gsc" -- sleep $((SECS + 3)) >/dev/null 2>&1 &
rec=$!
sleep 1.5
"$TMP/faulter" "$TMP/f.bin" "$SECS" >/dev/null
bpftool -j prog show >"$TMP/p.json"
wait "$rec"
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
prog_ns=$(python3 - "$TMP/p.json" <<'PY'
import json, sys
t = n = 0
for p in json.load(open(sys.argv[1])):
    if p.get("name") == "filemap_fault":
        t += p.get("run_time_ns", 0)
        n += p.get("run_cnt", 0)
print("%.0f ns a firing over %d firings" % (t / n if n else 0, n))
PY
)
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { awk -F'|' -v c="$1" -v k="$2" '{ split($c, f, " "); for (i = 1; i < length(f); i++) if (f[i] == k) print f[i + 1] }' "$TMP/raw" | median; }
cp_=$(col 1 cpu_ns/fault); cr=$(col 2 cpu_ns/fault); cn=$(col 3 cpu_ns/fault)
rp=$(col 1 faults/s); rr=$(col 2 faults/s); rn=$(col 3 faults/s)
{
	echo "# fault_cost bench $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r), $REPS reps of ${SECS}s, load $(cut -d' ' -f1-3 /proc/loadavg)"
	awk -v a="$cp_" -v b="$cr" -v c="$cn" -v x="$rp" -v y="$rr" -v z="$rn" 'BEGIN {
		printf "the neighbour, CPU ns a file fault: alone %d, beside a recording %d, without the tracepoint %d\n", a, b, c
		printf "  ratio recorded/alone %.3f, with/without the tracepoint %.3f\n", b / a, b / c
		printf "the neighbour, faults a second: alone %d, beside a recording %d, without the tracepoint %d\n", x, y, z
		printf "  ratio recorded/alone %.3f, with/without the tracepoint %.3f\n", y / x, y / z
	}'
	echo "the tracepoint's program: $prog_ns"
} | tee -a "$RESULTS"
