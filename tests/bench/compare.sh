#!/usr/bin/env bash
# Two gapscope binaries side by side, interleaved in one run, on the figures of run.sh:
#   1. zkengine (sim) throughput: plain, recorded by A, recorded by B, BENCH_REPS times (default
#      7) in turn; the recorded/plain ratio of the medians and of the pairs, for each; and the
#      recorder process's own CPU time in each recording (its CPU time and its target's, less the
#      target's from the trace's exit record), which a loaded machine disturbs far less.
#   2. The storm at full rate (2 threads, 3 s): achieved rate, recorded, lost, A and B in turn,
#      BENCH_STORMS times (default 3).
#   3. Recorder RSS over a BENCH_SOAK_S (default 20) recording of a 100k events/s storm: max
#      VmRSS and VmHWM, A then B.
# B's `script` reads the traces of both (the older binary may predate a reader change). Appends
# the raw numbers to tests/bench/results.txt.
#
#   tests/bench/compare.sh OLD_GAPSCOPE NEW_GAPSCOPE [BUILD]
#
# To compare a change with the commit before it:
#   git worktree add DIR HEAD~1 && make -C DIR -j2 BUILD=build build/gapscope
#   tests/bench/compare.sh DIR/build/gapscope build/gapscope
#   git worktree remove DIR
set -eu
[ $# -ge 2 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
A=$(realpath "$1")
B=$(realpath "$2")
BUILD=${3:-build}
cd "$(dirname "$0")/../.."
ZK=$BUILD/zkengine
REPS=${BENCH_REPS:-7}
STORMS=${BENCH_STORMS:-3}
SOAK=${BENCH_SOAK_S:-20}
RESULTS=tests/bench/results.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "compare: needs root (BPF)" >&2; exit 1; }
${CC:-cc} -O2 -pthread -o "$TMP/storm" tests/bench/storm.c

raw() { echo "$*" | tee -a "$TMP/raw"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
raw "# gapscope compare $(date -u +%Y-%m-%dT%H:%M:%SZ) host $(uname -n) kernel $(uname -r)" \
    "$(nproc) CPUs"
raw "# A: ${BENCH_A_NAME:-$1}; B: ${BENCH_B_NAME:-$2}"
raw "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. zkengine throughput, plain / A / B in turn.
ZARGS=(--device sim --seed 1)
tput() { sed -n 's/^throughput: \([0-9.]*\).*/\1/p'; }
# recorded GAPSCOPE: "throughput recorder_cpu_seconds" of one recording.
recorded() {
	# `times` in a subshell: the CPU time of its children, the recorder and the target it reaped.
	( "$1" record -f -o "$TMP/zk.gsc" -- "$ZK" "${ZARGS[@]}" >"$TMP/zk.out" 2>"$TMP/zk.err"
	  times >"$TMP/zk.times" )
	local tp all target
	tp=$(tput <"$TMP/zk.out")
	if [ -z "$tp" ]; then
		# Said, and left out of the medians: a failed run has no throughput to compare.
		raw "recording by $1 failed: $(tail -2 "$TMP/zk.err" | tr '\n' ' ')" >&2
		echo "fail fail"
		return
	fi
	all=$(tail -1 "$TMP/zk.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/)
		s += t[1] * 60 + t[2] } } END { print s }')
	target=$("$B" script --no-stacks "$TMP/zk.gsc" 2>/dev/null |
		sed -n 's/^# exit .* utime_ns=\([0-9]*\) stime_ns=\([0-9]*\).*/\1 \2/p' |
		awk '{ print ($1 + $2) / 1e9 }')
	awk -v tp="$tp" -v a="$all" -v t="${target:-0}" 'BEGIN { printf "%s %.3f\n", tp, a - t }'
}
for i in $(seq "$REPS"); do
	p=$("$ZK" "${ZARGS[@]}" 2>/dev/null | tput)
	read -r a acpu < <(recorded "$A")
	read -r b bcpu < <(recorded "$B")
	raw "zkengine rep $i: plain $p A $a B $b partitions/s; recorder CPU A $acpu s B $bcpu s"
	if [ "$a" = fail ] || [ "$b" = fail ] || [ -z "$p" ]; then
		raw "zkengine rep $i: left out (a run failed)"
		continue
	fi
	echo "$p $a $b $acpu $bcpu" >>"$TMP/zk"
done
zp=$(cut -d' ' -f1 "$TMP/zk" | median)
za=$(cut -d' ' -f2 "$TMP/zk" | median)
zb=$(cut -d' ' -f3 "$TMP/zk" | median)
ra=$(awk -v a="$za" -v b="$zp" 'BEGIN { printf "%.3f", a / b }')
rb=$(awk -v a="$zb" -v b="$zp" 'BEGIN { printf "%.3f", a / b }')
pa=$(awk '{ l += log($2 / $1); n++ } END { printf "%.3f", exp(l / n) }' "$TMP/zk")
pb=$(awk '{ l += log($3 / $1); n++ } END { printf "%.3f", exp(l / n) }' "$TMP/zk")
raw "zkengine median: plain $zp; A $za ratio $ra (pairs $pa); B $zb ratio $rb (pairs $pb)"
raw "recorder CPU per recording, median: A $(cut -d' ' -f4 "$TMP/zk" | median) s" \
    "B $(cut -d' ' -f5 "$TMP/zk" | median) s"

# 2. The storm at full rate. storm_run GAPSCOPE: "achieved generated recorded lost_total".
storm_run() {
	"$1" record -f -o "$TMP/s.gsc" -- "$TMP/storm" --threads 2 --rate 0 --seconds 3 \
		>"$TMP/s.out" 2>"$TMP/s.err"
	local calls uaddr achieved rec lost
	calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/s.out")
	uaddr=$(sed -n 's/.*uaddr=\(0x[0-9a-f]*\).*/\1/p' "$TMP/s.out")
	achieved=$(sed -n 's/.* rate=\([0-9]*\).*/\1/p' "$TMP/s.out")
	"$B" script --no-stacks "$TMP/s.gsc" >"$TMP/s.txt" 2>/dev/null
	rec=$(grep -c "futex:wait uaddr=$uaddr " "$TMP/s.txt" || true)
	lost=$(sed -n 's/^# losses total=\([0-9]*\).*/\1/p' "$TMP/s.txt" | tail -1)
	echo "$achieved $calls $rec ${lost:-?}"
}
for i in $(seq "$STORMS"); do
	for who in A B; do
		bin=$A
		[ "$who" = B ] && bin=$B
		read -r ach gen rec lost < <(storm_run "$bin")
		raw "storm rep $i $who: achieved $ach/s generated $gen recorded $rec lost $lost"
		echo "$ach" >>"$TMP/storm.$who"
	done
done
raw "storm median achieved: A $(median <"$TMP/storm.A")/s B $(median <"$TMP/storm.B")/s"

# 3. RSS over a soak, A then B.
for who in A B; do
	bin=$A
	[ "$who" = B ] && bin=$B
	"$TMP/storm" --threads 1 --rate 100000 --seconds "$SOAK" >"$TMP/soak.out" &
	spid=$!
	"$bin" record -f -o "$TMP/soak.gsc" -p "$spid" 2>"$TMP/soak.err" &
	gpid=$!
	max=0 hwm=0
	while kill -0 "$gpid" 2>/dev/null; do
		v=$(sed -n 's/^VmRSS:\s*\([0-9]*\).*/\1/p' "/proc/$gpid/status" 2>/dev/null || true)
		h=$(sed -n 's/^VmHWM:\s*\([0-9]*\).*/\1/p' "/proc/$gpid/status" 2>/dev/null || true)
		[ -n "$v" ] && [ "$v" -gt "$max" ] && max=$v
		[ -n "$h" ] && hwm=$h
		sleep 1
	done
	wait "$spid" || true
	wait "$gpid" || true
	raw "soak ${SOAK}s at 100k events/s, $who: recorder max VmRSS $((max / 1024)) MB," \
	    "VmHWM $((hwm / 1024)) MB ($(tail -1 "$TMP/soak.err"))"
done
raw "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	echo
	cat "$TMP/raw"
} >>"$RESULTS"
