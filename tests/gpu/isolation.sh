#!/usr/bin/env bash
# A recording costs only the processes it records (DESIGN.md, "Uprobes belong to the recorded
# processes"), on the GPU machine. Carry the directory BUILD (default build/gpu-iso) holding
# gapscope-portable and bench/trapcount; BEFORE (optional) names a second one whose
# gapscope-portable is an earlier build, measured beside it in the same windows.
#   OUT=DIR BUILD=build/gpu-iso BEFORE=build/gpu-iso-before tests/gpu/isolation.sh
# 1. A launch-bound PyTorch neighbour (tests/gpu/progs/torch_cnn.py windows: resnet18 eager,
#    batch 1) runs on while another process, which has initialised CUDA (libcuda mapped, a
#    context) and idles, is recorded with `gapscope record -p`: ROUNDS rounds of a plain window
#    and a recorded one (and one recorded by BEFORE's build), WIN seconds each, the order turned
#    round by round. The target idles so that slowing it could not free GPU time for the
#    neighbour. Per round the neighbour's recorded/plain throughput and main-thread CPU a step;
#    the medians (goal: throughput ratio >= 0.99).
# 2. The recorder's cost on its own target: launchbound.sh part 4 (PAIRS4 rounds, WIN s), for
#    each build: unchanged is the goal.
# A short table last; OUT gets table.txt and log.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/gpu-iso}
OUT=${OUT:-$BUILD/gpu-isolation}
. tests/gpu/lib.sh
ROUNDS=${ROUNDS:-6} WIN=${WIN:-3}
W=$(mktemp -d)
med() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ say "no PyTorch with CUDA: nothing run"; exit 1; }
builds=("$GS")
[ -n "${BEFORE:-}" ] && builds+=("$PWD/$BEFORE/gapscope-portable")

# The recorded process: CUDA initialised, then idle until its stdin ends.
mkfifo "$W/idle.in"
python3 -c 'import sys, torch
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
print("ready", flush=True); sys.stdin.read()' <"$W/idle.in" >"$W/idle.out" 2>&1 &
idle=$!
exec {idle_in}>"$W/idle.in"
for _ in $(seq 600); do grep -q ready "$W/idle.out" && break; sleep 0.1; done
grep -q ready "$W/idle.out" || { say "the idle CUDA process did not start"; exit 1; }

coproc Q { exec python3 tests/gpu/progs/torch_cnn.py 0 infer windows; }
qpid=$Q_PID
read -r -t 180 line <&"${Q[0]}" || line=
case $line in ready*) ;; *) say "the neighbour did not start"; exit 1 ;; esac
measure() { # LABEL: "steps/s cpu-us/step" of the neighbour over the next WIN seconds
	local l
	echo "measure $1 $WIN" >&"${Q[1]}"
	read -r -t 120 l <&"${Q[0]}" || l=
	echo "$l" | awk '{print $3, $5}'
}

: >"$W/rounds"
for r in $(seq "$ROUNDS"); do
	kinds="plain"
	for b in "${!builds[@]}"; do kinds="$kinds rec$b"; done
	[ $((r % 2)) = 0 ] && kinds=$(echo "$kinds" | tr ' ' '\n' | tac | tr '\n' ' ')
	declare -A got=()
	for k in $kinds; do
		case $k in
		plain) got[plain]=$(measure "plain.$r") ;;
		rec*)
			"${builds[${k#rec}]}" record -f -o "$W/$k.$r.gsc" -p "$idle" 2>"$W/$k.$r.err" &
			rp=$!
			for _ in $(seq 300); do grep -q "recording pid" "$W/$k.$r.err" && break; sleep 0.1; done
			got[$k]=$(measure "$k.$r")
			kill -INT "$rp"
			wait "$rp"
			;;
		esac
	done
	line="${got[plain]}"
	for b in "${!builds[@]}"; do line="$line ${got[rec$b]}"; done
	echo "round $r ($kinds): plain, then recorded by each build: $line (steps/s, cpu-us/step)"
	echo "$line" >>"$W/rounds"
	unset got
done
echo quit >&"${Q[1]}"
wait "$qpid" 2>/dev/null
# rounds: plain steps cpu; rec0 steps cpu; [rec1 steps cpu]
say "neighbour resnet18 batch 1 eager, $ROUNDS rounds of $WIN s windows, another process recorded:"
say "  this build: median throughput recorded/plain $(awk '{print $3 / $1}' "$W/rounds" | med), main-thread CPU a step $(awk '{print $4 / $2}' "$W/rounds" | med) (each: $(awk '{printf "%.3f ", $3 / $1}' "$W/rounds"))"
[ ${#builds[@]} -gt 1 ] &&
	say "  before:     median throughput recorded/plain $(awk '{print $5 / $1}' "$W/rounds" | med), main-thread CPU a step $(awk '{print $6 / $2}' "$W/rounds" | med) (each: $(awk '{printf "%.3f ", $5 / $1}' "$W/rounds"))"
say "  plain windows' spread (max/min) $(awk 'NR == 1 || $1 > mx {mx = $1} NR == 1 || $1 < mn {mn = $1} END {print mx / mn}' "$W/rounds")"
say "  the recorded process's probes: $(grep -h 'CUDA probes' "$W"/rec0.1.err | head -1)"
exec {idle_in}>&-
wait "$idle" 2>/dev/null

# 2: the recorder's cost on its target, per build.
for b in "${!builds[@]}"; do
	bdir=$BUILD
	[ "$b" = 1 ] && bdir=$BEFORE
	OUT=$W/lb$b BUILD=$bdir PARTS=4 PAIRS4=${PAIRS4:-5} WIN=$WIN tests/gpu/launchbound.sh >/dev/null 2>&1
	say "own target ($([ "$b" = 0 ] && echo "this build" || echo before)): $(grep -A1 'one process' "$W/lb$b/table.txt" | tr '\n' ' ')"
done
cat "$table"
