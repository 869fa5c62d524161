#!/usr/bin/env bash
# The API tier against CUPTI on the GPU machine, for the frameworks whose completion it must
# infer (carry build/gapscope-portable and build/libgapscope-cupti.so):   OUT=DIR tests/gpu/apitier.sh
#   jax        tests/gpu/progs/jax_prep.py: XLA's graph launches, waited for in a futex woken
#              through the driver's event thread (no driver synchronize in the loop);
#   torch-free tests/gpu/progs/torch_free.py: empty_cache() each step, whose cuMemFree waits for
#              the device and then unmaps for ms (no other synchronize);
#   torch-loop tests/gpu/progs/torch_loop.py: matmuls and synchronizes (the programs the tier
#              already held: they keep their recall).
# Each launched under the recorder with CUPTI: the report's API-vs-CUPTI agreement (recall,
# precision, start-edge error) and both tiers' busy. Then each started alone and attached with
# -p (no CUPTI there): the API tier's busy and gaps a second beside the launched run's CUPTI.
# A table last; OUT gets table.txt, log.txt and every report's summary.txt and summary.json.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
RES=${OUT:-$BUILD/gpu-apitier}
W=${WORK:-$(mktemp -d)}
mkdir -p "$RES" "$W"
exec > >(tee "$RES/log.txt") 2>&1
GS=$PWD/$BUILD/gapscope-portable
export GAPSCOPE_CUPTI_LIB=$PWD/$BUILD/libgapscope-cupti.so
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RES/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(python3 -c 'import sys; print(sys.version.split()[0])' 2>&1)"
SECS=${SECS:-8}

report() { # report NAME [OPTS]: NAME.gsc reported into NAME.report (summary files kept in RES)
	local name=$1
	shift
	"$GS" report -f "$@" -o "$W/$name.report" "$W/$name.gsc" >"$W/$name.txt" 2>&1
	cp "$W/$name.txt" "$RES/$name.summary.txt"
	cp "$W/$name.report/summary.json" "$RES/$name.summary.json" 2>/dev/null
}

row() { # row NAME: launched (CUPTI, API) and attached (API) side by side
	python3 - "$W" "$1" <<'PY' | tee -a "$table"
import json, os, sys
w, name = sys.argv[1:3]
def load(s):
    p = os.path.join(w, "%s.report" % s, "summary.json")
    return json.load(open(p)) if os.path.exists(p) else None
c, a, t = load(name + ".launch"), load(name + ".api"), load(name + ".attach")
def busy(s):
    if not s or not s["devices"]:
        return "-"
    d = s["devices"][0]
    lo = d.get("busy_min_pct")
    return ("%.1f-%.1f%%" % (lo, d["busy_pct"])) if lo is not None else "%.1f%%" % d["busy_pct"]
def rate(s):
    return len(s["gaps"]) / (s["duration_ns"] / 1e9) if s and s["duration_ns"] else 0
ag = (((c or {}).get("cupti") or {}).get("agreement") or [{}])[0]
print("%-10s launched: cupti busy %s gaps %s | api busy %s gaps %s | recall %.3f precision %.3f"
      " start p50/p99 %.2f/%.2f ms || attached: api busy %s, %.1f gaps/s (cupti launched %.1f/s)"
      % (name, busy(c), ag.get("cupti_gaps"), busy(a), ag.get("api_gaps"), ag.get("recall", 0),
         ag.get("precision", 0), ag.get("start_err_p50_ns", 0) / 1e6,
         ag.get("start_err_p99_ns", 0) / 1e6, busy(t), rate(t), rate(c)))
PY
}

attach() { # attach NAME PROG ARGS...: the program runs until it says "ready PID" (or writes
	# its pid into $W/NAME.ready, given as --ready); recorded -p SECS s
	local name=$1 pid="" _
	shift
	python3 "$@" >"$W/$name.attach.out" 2>&1 &
	local bg=$!
	for _ in $(seq 480); do
		pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$W/$name.attach.out" | head -1)
		[ -z "$pid" ] && [ -s "$W/$name.ready" ] && pid=$(cat "$W/$name.ready")
		[ -n "$pid" ] && break
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.5
	done
	if [ -z "$pid" ]; then
		say "$name: the program did not start: $(tail -3 "$W/$name.attach.out")"
		kill "$bg" 2>/dev/null
		return 1
	fi
	timeout 120 "$GS" record -f -o "$W/$name.attach.gsc" -p "$pid" --duration "$SECS" \
		>"$W/$name.attach.record.txt" 2>&1
	kill "$bg" 2>/dev/null
	wait "$bg" 2>/dev/null
	report "$name.attach"
}

case1() { # case1 NAME PROG ARGS-FOR-LAUNCH... -- ARGS-FOR-ATTACH...
	local name=$1 prog=$2 la=() aa=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do la+=("$1"); shift; done
	shift
	aa=("$@")
	timeout 300 "$GS" record -f -o "$W/$name.launch.gsc" -- python3 "$prog" "${la[@]}" \
		>"$W/$name.launch.record.txt" 2>&1
	report "$name.launch"
	cp "$W/$name.launch.gsc" "$W/$name.api.gsc"
	report "$name.api" --api-only
	attach "$name" "$prog" "${aa[@]}"
	row "$name"
}

if python3 -c 'import jax; assert jax.devices("gpu")' 2>/dev/null; then
	case1 jax tests/gpu/progs/jax_prep.py "$SECS" -- $((SECS + 30))
else
	say "jax: no JAX with a GPU here"
fi
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	case1 torch-free tests/gpu/progs/torch_free.py "$SECS" -- $((SECS + 30))
	case1 torch-loop tests/gpu/progs/torch_loop.py --seconds "$SECS" -- \
		--seconds $((SECS + 30)) --ready "$W/torch-loop.ready"
else
	say "torch: no PyTorch with CUDA here"
fi
echo
cat "$table"
