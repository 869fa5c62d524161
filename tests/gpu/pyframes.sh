#!/usr/bin/env bash
# On the GPU machine: Python frames from a live CPython (the PyTorch venv's python3, 3.12), no
# -X perf, attached with -p to programs already running:
#   torch_pyframes.py  its GPU waits for prepare_batch(), pure-Python CPU work: the gap stacks
#                      and the top cause's chains must name prepare_batch (torch_pyframes.py:N);
#   torch_loop.py      matmuls and synchronizes: its stacks name <module> (torch_loop.py:N).
# For each: the recorder's interpreter line, Python-frame records and code objects in the trace,
# the pystack and pycode losses, the top cause, and whether the Python names are there; the
# recorder's cost with Python frames on and off (--no-python) on the same loop: steps done.
# Carry build/gapscope-portable.
#   OUT=DIR tests/gpu/pyframes.sh
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RESULTS=${OUT:-$BUILD/gpu-pyframes}
W=$(mktemp -d)
GS=$PWD/$BUILD/gapscope-portable
mkdir -p "$RESULTS"
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RESULTS/pyframes.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }

# attach NAME PROG SECONDS [record options]: start PROG, attach once it runs, record 8 s.
attach() {
	local name=$1 prog=$2 secs=$3
	shift 3
	rm -f "$W/$name.ready"
	python3 "$prog" --seconds "$secs" --ready "$W/$name.ready" >"$W/$name.out" 2>&1 &
	local ppid=$!
	for _ in $(seq 600); do [ -s "$W/$name.ready" ] && break; sleep 0.1; done
	"$GS" record -f -o "$W/$name.gsc" -p "$(cat "$W/$name.ready")" --duration 8 "$@" \
		>/dev/null 2>"$W/$name.err"
	wait $ppid
	"$GS" script "$W/$name.gsc" >"$W/$name.script" 2>/dev/null
	"$GS" report -f -o "$W/$name.rep" "$W/$name.gsc" >"$W/$name.report" 2>&1
	cp "$W/$name.err" "$W/$name.report" "$W/$name.out" "$RESULTS/" 2>/dev/null
	cp "$W/$name.rep/summary.json" "$RESULTS/$name.summary.json" 2>/dev/null
	cp "$W/$name.rep/gaps/all.folded" "$RESULTS/$name.folded" 2>/dev/null
}

# check NAME WANT: one line of what the trace and the report hold.
check() {
	local name=$1 want=$2 n c top named
	n=$(grep -c ': pystack of=' "$W/$name.script")
	c=$(grep -c '^# pycode ' "$W/$name.script")
	top=$(sed -n '/^root causes/{n;p}' "$W/$name.report" | sed 's/  */ /g')
	named=$(grep -c -- "$want" "$W/$name.rep/gaps/all.folded" 2>/dev/null)
	say "$name: $(grep -o 'Python [0-9.]* ([^)]*): frames read, offsets from [a-z ]*' "$W/$name.err" | head -1)"
	say "  records $n, code objects $c, $(grep '^losses' "$W/$name.report" | grep -o 'pystack [0-9]*, pycode [0-9]*')"
	say "  top cause:$top"
	say "  gap stacks naming $want: $named of $(wc -l <"$W/$name.rep/gaps/all.folded" 2>/dev/null)"
	grep -m3 -o "[^;]*$want[^;]*" "$W/$name.rep/gaps/all.folded" 2>/dev/null | sort | uniq -c |
		sed 's/^/    /' | tee -a "$table"
}

attach feeder tests/gpu/progs/torch_pyframes.py 20
check feeder 'prepare_batch (torch_pyframes.py:'
attach loop tests/gpu/progs/torch_loop.py 20
check loop '(torch_loop.py:'
attach nopy tests/gpu/progs/torch_pyframes.py 20 --no-python
say "cost: steps of torch_pyframes in 20 s: Python frames on $(grep -o '[0-9]* steps' "$W/feeder.out"), off $(grep -o '[0-9]* steps' "$W/nopy.out")"
say "  --no-python: records $(grep -c ': pystack of=' "$W/nopy.script") (want 0)"
echo
cat "$table"
