#!/usr/bin/env bash
# GPU truth on the GPU machine, in one run (carry build/gapscope-portable, build/zkengine-portable
# and build/libgapscope-cupti.so):   OUT=DIR tests/gpu/truth.sh
#
# 1. Every zkengine scenario recorded in launch mode, where CUPTI is on by default: the report
#    under the CUPTI tier and, from the same trace, with --api-only; the agreement of the API
#    tier's gaps with CUPTI's (recall, precision, edge error p50/p99), the top cause and share
#    under each tier, and how complete the stacks on the chains are. The agreement again with
#    the API tier's copy model (report --copy-rate) at this machine's pinned copy rate, measured
#    first (tests/gpu/progs/copy_rate.cu).
# 2. A PyTorch training-like loop whose feeder stalls on a lock held during malloc_trim (ctypes),
#    attached with -p once it runs: its report's top cause (and the same with python -X perf:
#    Python function names from the perf map in the trace).
# 3. Overhead, interleaved reps: an empty-kernel launch loop unrecorded, under a count-only BPF
#    uprobe on cuLaunchKernel (tests/bench/trapcount.c: the trap's own cost), recorded without
#    and with CUPTI; a launch-bound PyTorch loop of 256x256 matmuls (cuBLASLt: a
#    cuKernelGetFunction before each cuLaunchKernelEx) likewise, recorded with that lookup's
#    probe retired (the default: one trap a launch) and kept (--keep-lookups: three);
#    zkengine fixed unrecorded and recorded, with and without CUPTI.
# PARTS (default "1 2 3") picks the parts. A short table last. OUT gets table.txt, log.txt and summaries.tgz (every report's summary.txt
# and summary.json, the traces' record logs); the traces themselves stay in WORK.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RESULTS=${OUT:-$BUILD/gpu-truth}
OUT=${WORK:-$(mktemp -d)}
mkdir -p "$RESULTS"
GS=$PWD/$BUILD/gapscope-portable
ZK=$PWD/$BUILD/zkengine-portable
DEVICE=${DEVICE:-cuda} # sim: a dry run of part 1 on a machine without a GPU
REPS=${REPS:-3}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$OUT/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
export GAPSCOPE_CUPTI_LIB=$PWD/$BUILD/libgapscope-cupti.so

# 1. Scenarios, both tiers.
row() { # row NAME: one line from NAME.cupti/summary.json and NAME.api/summary.json
	python3 - "$OUT/$1.cupti/summary.json" "$OUT/$1.api/summary.json" "$1" <<'PY' | tee -a "$table"
import json, sys
c, a = (json.load(open(p)) for p in sys.argv[1:3])
def top(s):
    t = s["causes"][0] if s["causes"] else {"kind": "-", "function": "", "share": 0}
    return "%s %s %.2f" % (t["kind"], (t.get("function") or "")[:20], t["share"])
cu = c.get("cupti") or {}
ag = (cu.get("agreement") or [{}])[0]
st = c.get("stacks", {})
busy = lambda s: s["devices"][0]["busy_pct"] if s["devices"] else 0
print("%-14s cupti %s k=%s drop=%s | gaps cupti %s api %s | recall %.3f precision %.3f | "
      "start p50/p99 %.3f/%.3f ms end p50/p99 %.3f/%.3f ms | busy %.1f%%/%.1f%% | top cupti: %s"
      " | top api: %s | stacks %s" % (
    sys.argv[3], cu.get("on"), cu.get("kernels"), cu.get("dropped"), ag.get("cupti_gaps"),
    ag.get("api_gaps"), ag.get("recall", 0), ag.get("precision", 0),
    ag.get("start_err_p50_ns", 0) / 1e6, ag.get("start_err_p99_ns", 0) / 1e6,
    ag.get("end_err_p50_ns", 0) / 1e6, ag.get("end_err_p99_ns", 0) / 1e6, busy(c), busy(a),
    top(c), top(a), json.dumps(st, separators=(",", ":"))))
PY
}
case " ${PARTS:-1 2 3} " in *" 1 "*) ;; *) SCENARIOS=none ;; esac
CR=
if [ "${SCENARIOS:-}" != none ] && [ "$DEVICE" = cuda ]; then
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	"$nvcc" -O2 -arch=sm_90 tests/gpu/progs/copy_rate.cu -o "$OUT/copy_rate" &&
		"$OUT/copy_rate" >"$OUT/copy_rate.txt" 2>&1
	grep '^copy_rate' "$OUT/copy_rate.txt" | tee -a "$table"
	CR=$(sed -n 's/^copy_rate both \([0-9.]*\) \([0-9.]*\)$/\1,\2/p' "$OUT/copy_rate.txt")
fi
model_row() { # model_row NAME: the agreement with the copy model
	python3 - "$OUT/$1.model/summary.json" "$1" <<'PY' | tee -a "$table"
import json, sys
c = json.load(open(sys.argv[1]))
ag = ((c.get("cupti") or {}).get("agreement") or [{}])[0]
print("%-14s copy model %s | gaps cupti %s api %s | recall %.3f precision %.3f | "
      "start p50/p99 %.3f/%.3f ms end p50/p99 %.3f/%.3f ms" % (
    sys.argv[2], json.dumps(c.get("copy_model")), ag.get("cupti_gaps"), ag.get("api_gaps"),
    ag.get("recall", 0), ag.get("precision", 0), ag.get("start_err_p50_ns", 0) / 1e6,
    ag.get("start_err_p99_ns", 0) / 1e6, ag.get("end_err_p50_ns", 0) / 1e6,
    ag.get("end_err_p99_ns", 0) / 1e6))
PY
}
for s in ${SCENARIOS:-fixed tracker-trim gpu-lock-wide starved pageable oversubscribed}; do
	[ "$s" = none ] && break
	timeout 120 "$GS" record -f -o "$OUT/$s.gsc" -- "$ZK" --device "$DEVICE" --scenario "$s" \
		--log2n "${LOG2N:-22}" --partitions "${PARTITIONS:-16}" --truth "$OUT/$s.truth" >"$OUT/$s.engine" 2>&1
	"$GS" report -f "$OUT/$s.gsc" -o "$OUT/$s.cupti" >"$OUT/$s.cupti.txt" 2>&1
	"$GS" report -f --api-only "$OUT/$s.gsc" -o "$OUT/$s.api" >"$OUT/$s.api.txt" 2>&1
	row "$s"
	if [ -n "$CR" ]; then
		"$GS" report -f "$OUT/$s.gsc" -o "$OUT/$s.model" --copy-rate "$CR" >"$OUT/$s.model.txt" 2>&1
		model_row "$s"
	fi
done

# 2. PyTorch, attached: a lock held during malloc_trim stalls the feeder.
torch_case() { # torch_case NAME PYTHON-ARGS...
	local name=$1 pid line
	shift
	coproc TORCH { exec python3 "$@" tests/gpu/progs/torch_trim.py 40; }
	pid=$TORCH_PID
	read -r -t 120 line <&"${TORCH[0]}" || line=
	case $line in ready*) ;; *) say "$name: the loop did not start"; kill $pid; return ;; esac
	timeout 60 "$GS" record -f -o "$OUT/$name.gsc" -p "$pid" --duration 10 \
		>"$OUT/$name.record.txt" 2>&1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	"$GS" report -f "$OUT/$name.gsc" -o "$OUT/$name.report" >"$OUT/$name.txt" 2>&1
	python3 - "$OUT/$name.report/summary.json" "$name" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["causes"][:3]
print("%-14s busy %.1f%% gaps %d | causes %s | stacks %s" % (
    sys.argv[2], s["devices"][0]["busy_pct"] if s["devices"] else 0, len(s["gaps"]),
    "; ".join("%s %s %.2f" % (c["kind"], c.get("function") or "", c["share"]) for c in t),
    json.dumps(s.get("stacks", {}), separators=(",", ":"))))
PY
	"$GS" script "$OUT/$name.gsc" >"$OUT/$name.script" 2>/dev/null
	say "$name: report gap stacks with Python names $(grep -c 'py::' "$OUT/$name.report/gaps/all.folded")," \
		"script frames $(grep -c "py::" "$OUT/$name.script"), perf-map records $(grep -c "^# perf-map" "$OUT/$name.script")"
}
case " ${PARTS:-1 2 3} " in *" 2 "*) torch=yes ;; *) torch=no ;; esac
if [ $torch = no ]; then
	:
elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	torch_case torch-trim
	torch_case torch-trim-xperf -X perf
else
	say "torch: no PyTorch with CUDA here"
fi

# 3. Overhead, interleaved.
overhead() {
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -O2 -arch=sm_90 tests/gpu/progs/empty_loop.cu -o "$OUT/empty_loop" || exit 1
N=100000 TN=${TN:-20000}
libcuda=$(ldconfig -p | sed -n 's/^\s*libcuda.so.1 .* => //p' | head -1)
per() { sed -n 's/^per_\(launch\|step\)_us \([0-9.]*\)$/\2/p' "$1" | tail -1; }
rec() { "$GS" record -f -o "$OUT/r.gsc" "$@" 2>>"$OUT/record.err"; }
trap_only() { "$PWD/$BUILD/bench/trapcount" "$libcuda" "$1" "${@:2}" 2>>"$OUT/trap.err"; }
# The engine's own throughput (partitions/s between its first and last partition: the
# recorder's start and end are not in it) into $1, the wall time into $1.wall.
wall() { /usr/bin/time -f '%e' -o "$1.wall" "${@:2}" 2>/dev/null |
	sed -n 's/^throughput: \([0-9.]*\) .*/\1/p' >"$1"; }
TL="python3 tests/gpu/progs/torch_launch.py $TN 256 mm"
for r in $(seq "$REPS"); do
	"$OUT/empty_loop" $N >"$OUT/e.plain.$r"
	trap_only cuLaunchKernel "$OUT/empty_loop" $N >"$OUT/e.trap.$r"
	rec --no-cupti -- "$OUT/empty_loop" $N >"$OUT/e.rec.$r"
	rec -- "$OUT/empty_loop" $N >"$OUT/e.cupti.$r"
	$TL >"$OUT/t.plain.$r"
	trap_only cuLaunchKernelEx $TL >"$OUT/t.trap.$r"
	rec --no-cupti -- $TL >"$OUT/t.rec.$r"
	rec --no-cupti --keep-lookups -- $TL >"$OUT/t.keep.$r"
	rec -- $TL >"$OUT/t.cupti.$r"
done
for r in $(seq "${ZREPS:-$REPS}"); do
	wall "$OUT/z.plain.$r" "$ZK" --device cuda --scenario fixed --partitions 8 --log2n 22
	wall "$OUT/z.rec.$r" "$GS" record -f -o "$OUT/z.gsc" --no-cupti -- "$ZK" --device cuda \
		--scenario fixed --partitions 8 --log2n 22
	wall "$OUT/z.cupti.$r" "$GS" record -f -o "$OUT/z.gsc" -- "$ZK" --device cuda \
		--scenario fixed --partitions 8 --log2n 22
done
med() { sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "?")}'; }
m() { for r in $(seq "$REPS"); do $1 "$OUT/$2.$r"; done | med; }
mz() { for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/$1.$r"; done | med; }
last() { tail -1 "$1"; }
say ""
say "$(printf '%-48s %10s' "overhead (median of $REPS interleaved reps)" value)"
ep=$(m per e.plain) et=$(m per e.trap) er=$(m per e.rec) ec=$(m per e.cupti)
tp=$(m per t.plain) tt=$(m per t.trap) tr=$(m per t.rec) tk=$(m per t.keep) tc=$(m per t.cupti)
zp=$(mz z.plain) zr=$(mz z.rec) zc=$(mz z.cupti)
# The pairs: each recorded run's throughput over the unrecorded run's of its rep, geometric mean.
pairs() { for r in $(seq "${ZREPS:-$REPS}"); do echo "$(last "$OUT/z.plain.$r") $(last "$OUT/$1.$r")"; done |
	awk '{ l += log($2 / $1); n++ } END { printf "%.3f", exp(l / n) }'; }
d() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f", b - a }'; }
q() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
x() { awk -v p="$1" -v r="$2" -v t="$3" 'BEGIN { printf "%.2f", (r - p) / (t - p) }'; }
# Launches and lookups per step, from a recorded run of the same loop.
"$GS" record -f -o "$OUT/tl.gsc" --no-cupti -- python3 tests/gpu/progs/torch_launch.py 2000 256 mm \
	>/dev/null 2>&1
"$GS" script "$OUT/tl.gsc" >"$OUT/tl.script" 2>/dev/null
"$GS" record -f -o "$OUT/tk.gsc" --no-cupti --keep-lookups -- \
	python3 tests/gpu/progs/torch_launch.py 2000 256 mm >/dev/null 2>&1
"$GS" script "$OUT/tk.gsc" >"$OUT/tk.script" 2>/dev/null
c() { grep -c "$1" "$2"; }
say "$(printf '%-48s %10s' 'empty kernel, us/launch unrecorded' "$ep")"
say "$(printf '%-48s %10s' '  + count-only BPF uprobe (trapcount), us' "$(d "$ep" "$et")")"
say "$(printf '%-48s %10s' '  + recorded, no CUPTI, us' "$(d "$ep" "$er")")"
say "$(printf '%-48s %10s' '  + recorded with CUPTI, us' "$(d "$ep" "$ec")")"
say "$(printf '%-48s %10s' '  recorded (no CUPTI) / count-only cost' "$(x "$ep" "$er" "$et")")"
say "$(printf '%-48s %10s' 'pytorch 256x256 mm, us/step unrecorded' "$tp")"
say "$(printf '%-48s %10s' '  + count-only uprobe on cuLaunchKernelEx, us' "$(d "$tp" "$tt")")"
say "$(printf '%-48s %10s' '  + recorded (lookups retired), us' "$(d "$tp" "$tr")")"
say "$(printf '%-48s %10s' '  + recorded --keep-lookups, us' "$(d "$tp" "$tk")")"
say "$(printf '%-48s %10s' '  + recorded with CUPTI, us' "$(d "$tp" "$tc")")"
say "$(printf '%-48s %10s' '  recorded (retired) / count-only cost' "$(x "$tp" "$tr" "$tt")")"
say "$(printf '%-48s %10s' '  recorded --keep-lookups / count-only cost' "$(x "$tp" "$tk" "$tt")")"
raw() { for r in $(seq "$REPS"); do per "$OUT/$1.$r"; done | xargs; }
say "  raw us/launch, empty kernel: plain $(raw e.plain) | trapcount $(raw e.trap) | recorded $(raw e.rec) | CUPTI $(raw e.cupti)"
say "  raw us/step, pytorch: plain $(raw t.plain) | trapcount $(raw t.trap) | recorded $(raw t.rec) | keep-lookups $(raw t.keep) | CUPTI $(raw t.cupti)"
say "  2000 steps recorded: launches $(c 'cuda:cuLaunchKernel' "$OUT/tl.script"), cuKernelGetFunction $(c 'cuda:cuKernelGetFunction ' "$OUT/tl.script") (retired: $(c 'cuKernelGetFunction retired-at' "$OUT/tl.script")), unnamed launches $(c 'cuda:cuLaunchKernel[A-Za-z_]* kernel=? ' "$OUT/tl.script"); with --keep-lookups: cuKernelGetFunction $(c 'cuda:cuKernelGetFunction ' "$OUT/tk.script")"
say "$(printf '%-48s %10s' 'zkengine fixed x8, partitions/s unrecorded' "$zp")"
say "$(printf '%-48s %10s' '  throughput recorded/unrecorded, no CUPTI' "$(q "$zr" "$zp")")"
say "$(printf '%-48s %10s' '  throughput recorded/unrecorded, CUPTI' "$(q "$zc" "$zp")")"
say "$(printf '%-48s %10s' '  same, geometric mean of pairs, no CUPTI' "$(pairs z.rec)")"
say "$(printf '%-48s %10s' '  same, geometric mean of pairs, CUPTI' "$(pairs z.cupti)")"
say "  zkengine wall s: plain $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.plain.$r.wall"; done | xargs) | no CUPTI $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.rec.$r.wall"; done | xargs) | CUPTI $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.cupti.$r.wall"; done | xargs)"
say "  zkengine partitions/s: plain $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.plain.$r"; done | xargs) | no CUPTI $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.rec.$r"; done | xargs) | CUPTI $(for r in $(seq "${ZREPS:-$REPS}"); do last "$OUT/z.cupti.$r"; done | xargs)"
}
case " ${PARTS:-1 2 3} " in *" 3 "*) overhead ;; esac
rm -f "$OUT"/*.gsc
(cd "$OUT" && tar czf "$RESULTS/summaries.tgz" --ignore-failed-read ./*/summary.txt \
	./*/summary.json ./*.txt ./*.engine ./record.err 2>/dev/null)
cp "$table" "$OUT/log.txt" "$RESULTS/"
echo
cat "$table"
