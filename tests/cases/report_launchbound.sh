#!/usr/bin/env bash
# Idle time no single gap explains, on a launch-bound program (tests/report/launchbound.c on
# simcuda: 20 batches of 200 launches of a ~70 us kernel, 150 us of host time in prepare_launch
# before each, a synchronize and a 5 ms sleep after each batch): the GPU idles mostly in windows
# far under the 1 ms floor.
#   CUPTI tier: the launch-mode trace with simcuda's exact kernel times and the program's own
#     launch log added as CUPTI records (tests/report/add_cupti.c). The idle split (setup, gaps,
#     under the floor, tail) and the busy share each within 3 points of the kernel times; the
#     parts sum to the idle time; under the floor names the launching thread, prepare_launch,
#     launch-bound with share >= 0.8; the host's time between launches p50 at least the 150 us
#     spent before each and under the floor, the kernels' p50 the truth's.
#   API tier, attached (-p): no busy figure that is not a bound ("at most"), the idle under the
#     floor said to be not measured (null in summary.json, no kernel times), and still the
#     launching thread named launch-bound in prepare_launch.
#   Both: the time between launches counted in BPF (every launch, not only the trace's): its
#     p50 against the launch log's.
# Everything is compared within one run against its own truth: nothing depends on the load.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
cd "$GAPSCOPE_ROOT"
SIM=$(realpath "$BUILD/simcuda/libcuda.so.1")
$CC -O2 -g -fno-omit-frame-pointer -o "$TMP/launchbound" tests/report/launchbound.c -ldl ||
	die "cannot build launchbound"
$CC $SAN_FLAGS -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/add_cupti" tests/report/add_cupti.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build add_cupti"
ARGS="20 200 150"

# under SUMMARY: the launching thread is launcher, launch-bound in prepare_launch, share >= 0.8.
under() {
	python3 - "$1" <<'PY' || die "$1: the idle under the floor is not launch-bound in prepare_launch"
import json, sys
u = json.load(open(sys.argv[1]))["under_floor"]
kinds = {k["kind"]: k["share"] for k in u["kinds"]}
print("under the floor: %s, %s, launch-bound %.3f, %d of %d samples; frames %s" % (
    u["comm"], u["function"], kinds.get("launch_bound", 0), u["function_samples"],
    u["samples"], u["frames"][:3]))
sys.exit(u["comm"] != "launcher" or u["function"] != "prepare_launch" or
         kinds.get("launch_bound", 0) < 0.8)
PY
}

# intervals SUMMARY TIER: the time between the launcher's 4000 launches, counted in BPF: 3999
# intervals, the p50's bucket holds the CUPTI tier's p50 (the program's own launch log) give or
# take a bucket (the two take their times a few microseconds apart), and at least the 150 us.
intervals() {
	python3 - "$1" "$TMP/c.rep/summary.json" <<'PY' || die "$2: the time between launches (BPF)"
import json, sys
i = json.load(open(sys.argv[1]))["under_floor"]["launch_intervals"]
cupti = json.load(open(sys.argv[2]))["devices"][0]["launch_timing"]["host_p50_ns"]
lo, hi = i["p50_ns"]
print("BPF: %d intervals, p50 in [%.0f, %.0f) us, p99 from %.0f us; CUPTI's launch log p50 %.0f us"
      % (i["n"], lo / 1e3, hi / 1e3, i["p99_ns"][0] / 1e3, cupti / 1e3))
sys.exit(i["n"] != 3999 or hi <= 150000 or not lo / 1.5 <= cupti < hi * 1.5 or
         i["p99_ns"][0] < lo)
PY
}

# 1. Launch mode, CUPTI records from the truth.
SIMCUDA_TRACE=$TMP/sim.jsonl "$GS" record -o "$TMP/t.gsc" -- "$TMP/launchbound" "$SIM" $ARGS \
	"$TMP/launches.jsonl" >"$TMP/rec.out" 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; die "record"; }
grep -q '^launched 4000 ' "$TMP/rec.out" || die "the program did not make its launches"
sed 's/^{"device":\([0-9]*\),"kernel":"[^"]*","start_ns":\([0-9]*\),"end_ns":\([0-9]*\)}$/{"kind":"gpu_busy","gpu":\1,"start_ns":\2,"end_ns":\3}/' \
	"$TMP/sim.jsonl" >"$TMP/truth"
assert_eq "$(grep -c gpu_busy "$TMP/truth")" 4000 "kernels in the truth"
"$TMP/add_cupti" "$TMP/t.gsc" "$TMP/truth" "$TMP/c.gsc" "$TMP/launches.jsonl" || die "add_cupti"
"$GS" report "$TMP/c.gsc" -o "$TMP/c.rep" >"$TMP/c.txt" 2>"$TMP/c.err" || { cat "$TMP/c.err"; die "report"; }
sed -n '1,/^gaps:/p' "$TMP/c.txt"
grep -q '^device 0: busy [0-9.]*% (.* CUPTI); [0-9.]*% of the run$' "$TMP/c.txt" ||
	die "CUPTI tier: the headline busy figure"
grep -q '^device 0 idle: .* under the floor [0-9.]* ms (' "$TMP/c.txt" || die "CUPTI tier: no idle under the floor"
python3 tests/report/split_check.py truth "$TMP/c.rep/summary.json" "$TMP/truth" 3 || die "CUPTI tier: idle split"
under "$TMP/c.rep/summary.json"
python3 - "$TMP/c.rep/summary.json" "$TMP/truth" <<'PY' || die "CUPTI tier: launch timing"
import json, sys
t = json.load(open(sys.argv[1]))["devices"][0]["launch_timing"]
k = sorted(r["end_ns"] - r["start_ns"] for r in map(json.loads, open(sys.argv[2])))
print("between launches p50 %.3f ms p99 %.3f ms (%d); kernels p50 %.3f ms (truth %.3f ms)" % (
    t["host_p50_ns"] / 1e6, t["host_p99_ns"] / 1e6, t["host_n"], t["kernel_p50_ns"] / 1e6,
    k[len(k) // 2] / 1e6))
sys.exit(t["host_n"] != 3999 or not 150000 <= t["host_p50_ns"] < 1000000 or
         t["host_p99_ns"] < t["host_p50_ns"] or t["kernel_n"] != 4000 or
         abs(t["kernel_p50_ns"] - k[len(k) // 2]) > 1)
PY
intervals "$TMP/c.rep/summary.json" "launch mode"

# 2. Attached: the API tier.
python3 - "$TMP" "$SIM" $ARGS <<'PY'
import os, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, sim = sys.argv[1:3]
t = subprocess.Popen([os.path.join(tmp, "launchbound"), sim] + sys.argv[3:] + ["--wait"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = Lines(t.stdout)
if out.wait(r"^ready$") is None:
    die("launchbound never got ready: %s" % out.join())
rec, err = start_record(t.pid, os.path.join(tmp, "a.gsc"), [])
t.stdin.write(b"go\n")
t.stdin.close()
t.wait()
rec.wait()
if t.returncode != 0 or rec.returncode != 0:
    die("target exit %s, recorder exit %s:\n%s" % (t.returncode, rec.returncode,
                                                  "\n".join(err.join())))
PY
"$GS" report "$TMP/a.gsc" -o "$TMP/a.rep" >"$TMP/a.txt" 2>"$TMP/a.err" || { cat "$TMP/a.err"; die "report -p"; }
sed -n '1,/^gaps:/p' "$TMP/a.txt"
# A bound ("at most"), or a range (busy time no completion signal backs, from its lower end to
# the bound).
grep -Eq '^device 0: busy (at most [0-9.]+%|[0-9.]+-[0-9.]+%) \(.*API-inferred.*\); at most [0-9.]+% of the run$' "$TMP/a.txt" ||
	die "API tier: a busy figure not said to be a bound"
grep -q '^device 0 idle: .* under the 1 ms floor not measured (no kernel times: counted busy)' "$TMP/a.txt" ||
	die "API tier: does not say the idle under the floor was not measured"
grep -E 'busy [0-9.]+%' "$TMP/a.txt" && die "API tier: a busy figure without its bound"
python3 - "$TMP/a.rep/summary.json" <<'PY' || die "API tier: summary.json"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
print("API tier: busy at most %.1f%% of the active window, under the floor %s" % (
    d["active_busy_pct"], d["idle_split"]["under_floor_ns"]))
sys.exit(not d["busy_bound"] or d["idle_split"]["under_floor_ns"] is not None)
PY
python3 tests/report/split_check.py sum "$TMP/a.rep/summary.json" || die "API tier: idle split"
under "$TMP/a.rep/summary.json"
intervals "$TMP/a.rep/summary.json" attached
echo ok
