#!/usr/bin/env bash
# Launch-bound cost on the GPU machine, in one run (carry build/gapscope-portable,
# build/bench/trapcount, build/zkengine-portable and build/libgapscope-cupti.so):
#   OUT=DIR PARTS="1 2 3" tests/gpu/launchbound.sh
# 1. A launch-bound PyTorch program (tests/gpu/progs/torch_cnn.py: resnet18 eager inference at
#    batch 1), interleaved reps (PAIRS, default 7) of: plain; under a count-only BPF uprobe on
#    cuLaunchKernel (tests/bench/trapcount); attached with `gapscope record -p` (default: launches
#    decided in the kernel). Steps a second in a window after warm-up, the recorder attached
#    before it starts. Per pair: recorded/plain and trapcount/plain; the median of each. From the
#    recordings: trace bytes a second, launches counted and in the trace, whether the
#    cuKernelGetFunction probe was retired.
# 2. A GPU-bound training step (resnet50, bf16, batch 64), plain against attached, PAIRS2 pairs.
# 3. zkengine fixed (launch mode, CUPTI on), plain against recorded, and every zkengine scenario
#    recorded with --all-launches: its report against the same trace read --decided-only.
# 4. The CNN of 1 in one process that runs on (torch_cnn.py's windows): PAIRS4 rounds of a plain
#    window, one under the count-only trap, one attached with `gapscope record -p` (order
#    alternating round by round), WIN seconds each; the medians of the ratios, the traces' rate,
#    launches counted and in the trace, and the lookup probe.
# 5. PyTorch lock+trim (tests/gpu/progs/torch_trim.py) attached with -p: the report's top cause.
# A short table last; OUT gets table.txt and log.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RES=${OUT:-$BUILD/gpu-launchbound}
W=$(mktemp -d)
mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
GS=$PWD/$BUILD/gapscope-portable
TC=$PWD/$BUILD/bench/trapcount
ZK=$PWD/$BUILD/zkengine-portable
export GAPSCOPE_CUPTI_LIB=$PWD/$BUILD/libgapscope-cupti.so
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RES/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(git rev-parse --short HEAD 2>/dev/null)"
libcuda=$(ldconfig -p | sed -n 's/^\s*libcuda.so.1 .* => //p' | head -1)
PROG=tests/gpu/progs/torch_cnn.py
SECS=${SECS:-6}
sps() { sed -n 's/^steps_per_s //p' "$1" | tail -1; }
med() { sort -g | awk '{v[NR]=$1} END {print (NR ? (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2) : "?")}'; }

# attached NAME MODE [RECORD-OPTS...]: the program waits; the recorder attaches; then it runs.
attached() {
	local name=$1 mode=$2 line pid rp
	shift 2
	coproc P { exec python3 "$PROG" "$SECS" "$mode" wait; }
	pid=$P_PID
	read -r -t 180 line <&"${P[0]}" || line=
	case $line in ready*) ;; *) echo "$name: no ready"; kill "$pid"; return 1 ;; esac
	"$GS" record -f -o "$W/$name.gsc" -p "$pid" "$@" 2>"$W/$name.rec" &
	rp=$!
	for _ in $(seq 300); do grep -q "recording pid" "$W/$name.rec" && break; sleep 0.1; done
	echo go >&"${P[1]}"
	cat <&"${P[0]}" >"$W/$name.out"
	wait "$pid" 2>/dev/null
	wait "$rp"
	cat "$W/$name.out" >>"$W/$name.all"
}

case " ${PARTS:-1 2 3} " in *" 1 "*)
	PAIRS=${PAIRS:-7}
	: >"$W/pairs1"
	for r in $(seq "$PAIRS"); do
		python3 "$PROG" "$SECS" infer >"$W/p.$r"
		"$TC" "$libcuda" cuLaunchKernel python3 "$PROG" "$SECS" infer >"$W/t.$r" 2>"$W/t.err"
		attached "r.$r" infer
		p=$(sps "$W/p.$r") t=$(sps "$W/t.$r") rr=$(sps "$W/r.$r.out")
		echo "pair $r: plain $p trapcount $t recorded $rr steps/s"
		echo "$p $t $rr" >>"$W/pairs1"
		bytes=$(stat -c %s "$W/r.$r.gsc")
		echo "  trace $bytes bytes; $(tail -1 "$W/r.$r.rec")"
	done
	rt=$(awk '{print $3 / $1}' "$W/pairs1" | med)
	tt=$(awk '{print $2 / $1}' "$W/pairs1" | med)
	say "resnet18 batch 1 eager, $PAIRS interleaved pairs: median recorded/plain $rt, trapcount/plain $tt"
	say "  raw steps/s (plain trapcount recorded): $(tr '\n' ';' <"$W/pairs1")"
	# The last recording: its size a second, its launches, the lookup probe.
	"$GS" script "$W/r.$PAIRS.gsc" >"$W/r.script" 2>/dev/null
	"$GS" report -f -o "$W/r.report" "$W/r.$PAIRS.gsc" >/dev/null 2>&1
	python3 - "$W/r.report/summary.json" "$(stat -c %s "$W/r.$PAIRS.gsc")" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
l = s.get("launches", {})
print("  trace %.2f MB/s over %.1f s; launches %s counted, %s in the trace (%s); gaps %d; top %s" % (
    int(sys.argv[2]) / 1e6 / (s["duration_ns"] / 1e9), s["duration_ns"] / 1e9, l.get("total"),
    l.get("in_trace"), l.get("by_function"), len(s["gaps"]),
    (s["causes"][0]["kind"] + " " + (s["causes"][0].get("function") or "")) if s["causes"] else "-"))
PY
	say "  CUDA records in the trace by call: $(grep -o ' cuda:[A-Za-z_0-9]*' "$W/r.script" | sort | uniq -c | sort -rn | head -8 | awk '{printf "%s %s, ", $2, $1}')"
	say "  records by kind: $(grep -v '^#' "$W/r.script" | grep -o ' [a-z]*:[a-z_]*' | sed 's/:.*//' | sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s, ", $2, $1}')"
	say "  cuKernelGetFunction: $(grep -c 'cuda:cuKernelGetFunction' "$W/r.script") calls in the trace; probe $(grep -o 'cuKernelGetFunction retired-at=[0-9.]*' "$W/r.script" | head -1 || true) ; $(grep '^# kernel-names-from-handles' "$W/r.script" | tail -1)"
	;;
esac

case " ${PARTS:-1 2 3} " in *" 2 "*)
	PAIRS2=${PAIRS2:-5}
	: >"$W/pairs2"
	for r in $(seq "$PAIRS2"); do
		python3 "$PROG" "$SECS" train >"$W/gp.$r"
		attached "g.$r" train
		echo "$(sps "$W/gp.$r") $(sps "$W/g.$r.out")" | tee -a "$W/pairs2"
	done
	say "resnet50 bf16 batch 64 training, $PAIRS2 pairs: median recorded/plain $(awk '{print $2 / $1}' "$W/pairs2" | med) (raw $(tr '\n' ';' <"$W/pairs2"))"
	;;
esac

case " ${PARTS:-1 2 3} " in *" 3 "*)
	: >"$W/pairs3"
	thr() { sed -n 's/^throughput: \([0-9.]*\) .*/\1/p' "$1"; }
	for r in 1 2 3; do
		"$ZK" --device cuda --scenario fixed --partitions 8 --log2n 22 >"$W/z.p.$r" 2>&1
		"$GS" record -f -o "$W/z.gsc" -- "$ZK" --device cuda --scenario fixed --partitions 8 \
			--log2n 22 >"$W/z.r.$r" 2>"$W/z.err"
		echo "$(thr "$W/z.p.$r") $(thr "$W/z.r.$r")" | tee -a "$W/pairs3"
	done
	say "zkengine fixed, CUPTI on, 3 pairs: median recorded/plain $(awk '{print $2 / $1}' "$W/pairs3" | med) (raw $(tr '\n' ';' <"$W/pairs3"))"
	for s in fixed tracker-trim gpu-lock-wide starved pageable oversubscribed; do
		"$GS" record -f --all-launches -o "$W/$s.gsc" -- "$ZK" --device cuda --scenario "$s" \
			--partitions 8 --log2n 22 >"$W/$s.out" 2>"$W/$s.err"
		for v in cupti api; do
			o=; [ $v = api ] && o=--api-only
			"$GS" report -f $o -o "$W/$s.$v.all" "$W/$s.gsc" >/dev/null 2>&1
			"$GS" report -f $o --decided-only -o "$W/$s.$v.dec" "$W/$s.gsc" >/dev/null 2>&1
		done
		python3 - "$W/$s" "$s" <<'PY' | tee -a "$table"
import json, sys
b, name = sys.argv[1:]
out = []
for v in ("cupti", "api"):
    a, d = (json.load(open("%s.%s.%s/summary.json" % (b, v, k))) for k in ("all", "dec"))
    ga = [(g["start_ns"], g["end_ns"]) for g in a["gaps"]]
    gd = [(g["start_ns"], g["end_ns"]) for g in d["gaps"]]
    edge = max([max(abs(x[0] - y[0]), abs(x[1] - y[1])) for x, y in zip(ga, gd)] or [0]) / 1e6
    top = lambda s: (s["causes"][0]["kind"] + ":" + (s["causes"][0].get("function") or "")) if s["causes"] else "-"
    out.append("%s gaps %d/%d max edge diff %.3f ms top %s / %s, launches %s of %s in decided view" % (
        v, len(ga), len(gd), edge, top(a), top(d), d["launches"]["in_trace"], d["launches"]["total"]))
print("%-14s %s" % (name, " | ".join(out)))
PY
	done
	;;
esac
case " ${PARTS:-1 2 3} " in *" 4 "*)
	PAIRS4=${PAIRS4:-9} WIN=${WIN:-4}
	coproc Q { exec python3 "$PROG" 0 infer windows; }
	qpid=$Q_PID
	read -r -t 180 line <&"${Q[0]}" || line=
	case $line in ready*) ;; *) say "windows: the program did not start"; kill "$qpid" ;; esac
	measure() { # LABEL: "steps/s cpu-us/step" over the next WIN seconds
		local l
		echo "measure $1 $WIN" >&"${Q[1]}"
		read -r -t 120 l <&"${Q[0]}" || l=
		echo "$l" | awk '{print $3, $5}'
	}
	mkfifo "$W/tc.fifo"
	: >"$W/pairs4"
	for r in $(seq "$PAIRS4"); do
		order="plain trap rec"
		[ $((r % 2)) = 0 ] && order="rec trap plain"
		for what in $order; do
			case $what in
			plain) p=$(measure "plain.$r") ;;
			trap)
				"$TC" "$libcuda" cuLaunchKernel sh -c "echo attached; read x <$W/tc.fifo" \
					>"$W/tc.$r.out" 2>&1 &
				tcp=$!
				for _ in $(seq 300); do grep -q attached "$W/tc.$r.out" && break; sleep 0.1; done
				t=$(measure "trap.$r")
				echo >"$W/tc.fifo"
				wait "$tcp"
				;;
			rec)
				"$GS" record -f -o "$W/w.$r.gsc" -p "$qpid" 2>"$W/w.$r.rec" &
				rp=$!
				for _ in $(seq 300); do grep -q "recording pid" "$W/w.$r.rec" && break; sleep 0.1; done
				t0=$(date +%s.%N)
				rr=$(measure "rec.$r")
				kill -INT "$rp"
				wait "$rp"
				t1=$(date +%s.%N)
				echo "  trace $(stat -c %s "$W/w.$r.gsc") bytes over $(awk "BEGIN {print $t1 - $t0}") s from the window's start; $(tail -1 "$W/w.$r.rec")"
				echo "$(stat -c %s "$W/w.$r.gsc") $t0 $t1" >>"$W/rate4"
				;;
			esac
		done
		echo "round $r ($order): plain $p trap $t recorded $rr (steps/s, main thread CPU us/step)"
		echo "$p $t $rr" >>"$W/pairs4"
	done
	echo quit >&"${Q[1]}"
	wait "$qpid" 2>/dev/null
	# pairs4: plain steps/s, cpu; trap steps/s, cpu; recorded steps/s, cpu
	say "resnet18 batch 1 eager, one process, $PAIRS4 rounds of ${WIN} s windows: median recorded/plain $(awk '{print $5 / $1}' "$W/pairs4" | med), trapcount/plain $(awk '{print $3 / $1}' "$W/pairs4" | med) (throughput)"
	say "  main thread CPU a step: median recorded/plain $(awk '{print $6 / $2}' "$W/pairs4" | med), trapcount/plain $(awk '{print $4 / $2}' "$W/pairs4" | med); plain windows' spread (max/min) $(awk 'NR == 1 || $1 > mx {mx = $1} NR == 1 || $1 < mn {mn = $1} END {print mx / mn}' "$W/pairs4")"
	say "  raw (plain trap recorded, steps/s cpu-us): $(tr '\n' ';' <"$W/pairs4")"
	# The recordings' rate, from the window's start to the recorder's exit (an upper bound: the
	# attach happened before), and the last one's contents.
	say "  trace rate: median $(awk '{print $1 / 1e6 / ($3 - $2)}' "$W/rate4" | med) MB/s (each: $(awk '{printf "%.2f ", $1 / 1e6 / ($3 - $2)}' "$W/rate4"))"
	"$GS" script "$W/w.$PAIRS4.gsc" >"$W/w.script" 2>/dev/null
	"$GS" report -f -o "$W/w.report" "$W/w.$PAIRS4.gsc" >/dev/null 2>&1
	python3 - "$W/w.report/summary.json" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
l = s.get("launches", {})
print("  last recording: %.1f s, launches %s counted, %s in the trace, async memsets %s counted; gaps %d" % (
    s["duration_ns"] / 1e9, l.get("total"), l.get("in_trace"), l.get("async_memsets"), len(s["gaps"])))
PY
	say "  records by kind: $(grep -v '^#' "$W/w.script" | grep -o ' [a-z]*:[a-z_]*' | sed 's/:.*//' | sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s, ", $2, $1}')"
	say "  CUDA records by call: $(grep -o ' cuda:[A-Za-z_0-9]*' "$W/w.script" | sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s, ", $2, $1}')"
	say "  lookup probe: $(grep -o 'cuKernelGetFunction retired-at=[0-9.]*' "$W/w.script" | head -1 || true) ; $(grep '^# kernel-names-from-handles' "$W/w.script" | tail -1)"
	;;
esac

case " ${PARTS:-1 2 3} " in *" 5 "*)
	coproc TT { exec python3 tests/gpu/progs/torch_trim.py 40; }
	tpid=$TT_PID
	read -r -t 120 line <&"${TT[0]}" || line=
	case $line in ready*)
		timeout 60 "$GS" record -f -o "$W/trim.gsc" -p "$tpid" --duration 10 >"$W/trim.rec" 2>&1
		kill "$tpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
		"$GS" report -f "$W/trim.gsc" -o "$W/trim.report" >"$W/trim.txt" 2>&1
		python3 - "$W/trim.report/summary.json" "$(stat -c %s "$W/trim.gsc")" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["causes"][:3]
print("torch lock+trim attached: %d gaps | causes %s | trace %.2f MB/s" % (len(s["gaps"]),
    "; ".join("%s %s %.2f" % (c["kind"], c.get("function") or "", c["share"]) for c in t),
    int(sys.argv[2]) / 1e6 / (s["duration_ns"] / 1e9)))
PY
		;;
	*) say "torch lock+trim: the loop did not start"; kill "$tpid" ;;
	esac
	;;
esac
echo
cat "$table"
