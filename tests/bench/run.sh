#!/usr/bin/env bash
# make bench: the recorder's cost and limits, measured side by side in one run.
#   1. zkengine (sim) throughput with and without `gapscope record`, interleaved repetitions
#      (BENCH_REPS, default 5): the ratio of the medians (target >= 0.98).
#   2. A futex storm (tests/bench/storm.c) stepped up in rate until it goes as fast as it can:
#      the rate reached before the first loss (target: no loss up to 1M events/s or the fastest
#      storm this machine makes).
#   3. Above it (a 1 MiB ring buffer and a recorder stopped for a second force losses):
#      generated = recorded + lost, exactly.
#   4. Recorder RSS over a BENCH_SOAK_S (default 60; the target is 600) recording of a steady
#      storm: max VmRSS sampled every second, and VmHWM (target < 100 MB).
# Prints a table last and writes the raw numbers to tests/bench/results.txt.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$BUILD/gapscope
ZK=$BUILD/zkengine
REPS=${BENCH_REPS:-5}
SOAK=${BENCH_SOAK_S:-60}
RESULTS=tests/bench/results.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
${CC:-cc} -O2 -pthread -o "$TMP/storm" tests/bench/storm.c

raw() { echo "$*" | tee -a "$TMP/raw"; }
raw "# gapscope bench $(date -u +%Y-%m-%dT%H:%M:%SZ) host $(uname -n) kernel $(uname -r)" \
    "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
raw "# git $(git rev-parse --short HEAD 2>/dev/null || echo ?)$(git diff --quiet 2>/dev/null || echo +dirty)"
raw "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. zkengine throughput, plain and recorded, interleaved.
ZARGS=(--device sim --partitions 24 --log2n 12 --seed 1)
for i in $(seq "$REPS"); do
	p=$("$ZK" "${ZARGS[@]}" 2>/dev/null | sed -n 's/^throughput: \([0-9.]*\).*/\1/p')
	r=$("$GS" record -f -o "$TMP/zk.gsc" -- "$ZK" "${ZARGS[@]}" 2>"$TMP/zk.err" |
		sed -n 's/^throughput: \([0-9.]*\).*/\1/p')
	raw "zkengine rep $i: plain $p recorded $r partitions/s ($(tail -1 "$TMP/zk.err"))"
	echo "$p $r" >>"$TMP/zk"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
zp=$(cut -d' ' -f1 "$TMP/zk" | median)
zr=$(cut -d' ' -f2 "$TMP/zk" | median)
zratio=$(awk -v a="$zr" -v b="$zp" 'BEGIN { printf "%.3f", a / b }')
raw "zkengine median: plain $zp recorded $zr ratio $zratio"

# 2/3. Storms. storm_run RATE RINGBUF_MB [STALL]: one recording of a storm; prints
# "rate_target achieved generated recorded lost_futex lost_total". STALL: the recorder is
# stopped for a second mid-storm (a consumer that cannot keep up), so the ring buffer overflows.
storm_run() {
	"$GS" record -f -o "$TMP/s.gsc" --ringbuf-mb "$2" -- "$TMP/storm" --threads 2 --rate "$1" \
		--seconds 3 >"$TMP/s.out" 2>"$TMP/s.err" &
	local g=$!
	if [ -n "${3:-}" ]; then
		sleep 1.5; kill -STOP "$g"; sleep 1; kill -CONT "$g"
	fi
	wait "$g"
	local calls uaddr achieved rec lost_f lost_t
	calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/s.out")
	uaddr=$(sed -n 's/.*uaddr=\(0x[0-9a-f]*\).*/\1/p' "$TMP/s.out")
	achieved=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' "$TMP/s.out")
	"$GS" script --no-stacks "$TMP/s.gsc" >"$TMP/s.txt" 2>/dev/null
	rec=$(grep -c "futex:wait uaddr=$uaddr " "$TMP/s.txt" || true)
	lost_f=$(sed -n 's/^# lost-by-type .* futex=\([0-9]*\).*/\1/p' "$TMP/s.txt" | tail -1)
	lost_t=$(sed -n 's/^# losses total=\([0-9]*\).*/\1/p' "$TMP/s.txt" | tail -1)
	echo "$1 $achieved $calls $rec $lost_f $lost_t"
}
first_loss=none best_clean=0
for rate in 100000 250000 500000 1000000 2000000 0; do
	read -r t a g rc lf lt < <(storm_run "$rate" 32)
	raw "storm rate $t (0 = max): achieved $a/s generated $g recorded $rc lost_futex $lf lost_total $lt"
	if [ "$lt" -eq 0 ] && [ "$rc" -eq "$g" ]; then
		[ "$a" -gt "$best_clean" ] && best_clean=$a
	elif [ "$first_loss" = none ]; then
		first_loss=$a
	fi
done
raw "storm: fastest lossless rate $best_clean/s; first loss at ${first_loss}/s"
read -r t a g rc lf lt < <(storm_run 0 1 stall)
exact=no
[ "$lf" -gt 0 ] && [ $((rc + lf)) -eq "$g" ] && exact=yes
raw "storm, 1 MiB ring buffer, recorder stopped 1 s: achieved $a/s generated $g recorded $rc lost_futex $lf" \
    "(recorded + lost = $((rc + lf))) exact=$exact"

# 4. RSS over a soak: a steady 100k events/s storm recorded for SOAK seconds.
"$TMP/storm" --threads 1 --rate 100000 --seconds "$SOAK" >"$TMP/soak.out" &
spid=$!
"$GS" record -f -o "$TMP/soak.gsc" -p "$spid" 2>"$TMP/soak.err" &
gpid=$!
max=0
while kill -0 "$gpid" 2>/dev/null; do
	v=$(sed -n 's/^VmRSS:\s*\([0-9]*\).*/\1/p' "/proc/$gpid/status" 2>/dev/null || true)
	hwm=$(sed -n 's/^VmHWM:\s*\([0-9]*\).*/\1/p' "/proc/$gpid/status" 2>/dev/null || echo "$hwm")
	[ -n "$v" ] && [ "$v" -gt "$max" ] && max=$v
	sleep 1
done
wait "$spid" || true
wait "$gpid" || true
raw "soak ${SOAK}s at 100k events/s: recorder max VmRSS $((max / 1024)) MB, VmHWM $((${hwm:-0} / 1024)) MB" \
    "($(tail -1 "$TMP/soak.err"))"
raw "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	echo
	cat "$TMP/raw"
} >>"$RESULTS"
echo
echo "== gapscope bench (raw numbers appended to $RESULTS)"
printf '%-44s %-16s %s\n' "measure" "value" "target"
printf '%-44s %-16s %s\n' "zkengine recorded/plain throughput" "$zratio" ">= 0.98"
printf '%-44s %-16s %s\n' "storm: fastest lossless rate (events/s)" "$best_clean" ">= 1M or the fastest storm"
printf '%-44s %-16s %s\n' "storm: first loss at (events/s)" "$first_loss" "-"
printf '%-44s %-16s %s\n' "losses exact (generated = recorded + lost)" "$exact" "yes"
printf '%-44s %-16s %s\n' "recorder max RSS over ${SOAK}s (MB)" "$((max / 1024))" "< 100"
