#!/usr/bin/env bash
# make bench: the recorder's cost and limits, measured side by side in one run.
#   1. zkengine (sim) throughput with and without `gapscope record`, interleaved repetitions
#      (BENCH_REPS, default 15): the ratio of the medians (target >= 0.98), for the default tick
#      sampler and for --sampler timer; then where one recording's CPU time goes.
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
REPS=${BENCH_REPS:-15}
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

# 1. zkengine throughput at its defaults (16 partitions of 2^13, scenario fixed): plain, recorded
# (the default tick sampler) and recorded with --sampler timer, interleaved.
ZARGS=(--device sim --seed 1)
tput() { sed -n 's/^throughput: \([0-9.]*\).*/\1/p'; }
for i in $(seq "$REPS"); do
	p=$("$ZK" "${ZARGS[@]}" 2>/dev/null | tput)
	r=$("$GS" record -f -o "$TMP/zk.gsc" -- "$ZK" "${ZARGS[@]}" 2>"$TMP/zk.err" | tput)
	t=$("$GS" record -f -o "$TMP/zk.gsc" --sampler timer -- "$ZK" "${ZARGS[@]}" 2>/dev/null | tput)
	raw "zkengine rep $i: plain $p recorded $r recorded-timer $t partitions/s ($(tail -1 "$TMP/zk.err"))"
	echo "$p $r $t" >>"$TMP/zk"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
zp=$(cut -d' ' -f1 "$TMP/zk" | median)
zr=$(cut -d' ' -f2 "$TMP/zk" | median)
zt=$(cut -d' ' -f3 "$TMP/zk" | median)
zratio=$(awk -v a="$zr" -v b="$zp" 'BEGIN { printf "%.3f", a / b }')
tratio=$(awk -v a="$zt" -v b="$zp" 'BEGIN { printf "%.3f", a / b }')
# The same from the pairs (each recorded run over the plain run before it), geometric mean.
zpair=$(awk '{ l += log($2 / $1); n++ } END { printf "%.3f", exp(l / n) }' "$TMP/zk")
tpair=$(awk '{ l += log($3 / $1); n++ } END { printf "%.3f", exp(l / n) }' "$TMP/zk")
raw "zkengine median: plain $zp recorded $zr ratio $zratio (pairs $zpair);" \
    "recorded-timer $zt ratio $tratio (pairs $tpair)"

# Where a recording's CPU time goes: each BPF program's run time (kernel.bpf_stats_enabled, for
# this one run), and the recorder process's own CPU time (all of its time minus the target's).
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
# `times` in a subshell: the CPU time of its children, the recorder and the target it reaped.
( "$GS" record -f -o "$TMP/zk.gsc" -- "$ZK" "${ZARGS[@]}" >/dev/null 2>&1; times >"$TMP/gs.times" ) &
tpid=$!
while kill -0 "$tpid" 2>/dev/null; do
	bpftool -j prog show >"$TMP/progs.new" 2>/dev/null && mv "$TMP/progs.new" "$TMP/progs.json"
	sleep 0.2
done
wait "$tpid" || true
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
"$GS" script --no-stacks "$TMP/zk.gsc" >"$TMP/zk.txt" 2>/dev/null || true
tail -1 "$TMP/gs.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); printf "%.3f ", t[1] * 60 + t[2] } }' >"$TMP/gs.time"
python3 - "$TMP/progs.json" "$TMP/gs.time" "$TMP/zk.txt" <<'PY' | tee -a "$TMP/raw"
import json, re, sys
ours = {"proc_fork", "proc_exit", "proc_rename", "proc_exec", "mmap_sys_enter", "mmap_sys_exit",
        "futex_sys_enter", "futex_sys_exit", "sched_switch", "sched_waking", "tick_sample",
        "cpu_sample", "tick_taken", "cu_entry", "cu_return", "probe_entry", "probe_return", "lock_entry",
        "lock_return", "unlock_entry"}
total = 0
try:
    progs = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    progs = []
for p in sorted(progs, key=lambda p: -p.get("run_time_ns", 0)):
    if p.get("name") in ours and p.get("run_cnt"):
        total += p["run_time_ns"]
        print("bpf %-16s %8d runs %8.1f ms %7.2f us/run" % (p["name"], p["run_cnt"],
              p["run_time_ns"] / 1e6, p["run_time_ns"] / p["run_cnt"] / 1e3))
txt = open(sys.argv[3]).read()
m = re.search(r"^# exit .* utime_ns=(\d+) stime_ns=(\d+)", txt, re.M)
target = (int(m.group(1)) + int(m.group(2))) / 1e9 if m else 0
try:
    u, s = map(float, open(sys.argv[2]).read().split()[:2])
except (OSError, ValueError):
    u = s = 0
print("bpf total %.1f ms; target CPU %.2f s; recorder process CPU %.2f s (start-up, attach, "
      "draining, detach)" % (total / 1e6, target, u + s - target))
PY

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
printf '%-44s %-16s %s\n' "  same, --sampler timer" "$tratio" "-"
printf '%-44s %-16s %s\n' "storm: fastest lossless rate (events/s)" "$best_clean" ">= 1M or the fastest storm"
printf '%-44s %-16s %s\n' "storm: first loss at (events/s)" "$first_loss" "-"
printf '%-44s %-16s %s\n' "losses exact (generated = recorded + lost)" "$exact" "yes"
printf '%-44s %-16s %s\n' "recorder max RSS over ${SOAK}s (MB)" "$((max / 1024))" "< 100"
