#!/usr/bin/env bash
# Golden test of `gapscope report`, without root: the checked-in synthetic trace
# tests/golden/report/trace.gsc (written by tests/golden/report_gen.c: a lock held across
# malloc_trim, a sleep, on-CPU work, on a simulated device) must give exactly the files under
# tests/golden/report/expected/: summary.txt, summary.json and the folded stacks of every gap.
# The trace's mapped files exist nowhere, so user frames are module+offset on every machine, and
# its times, tids and clock record are fixed.
#
# Besides the diffs, the answer itself is checked from summary.json, so the golden files cannot
# silently hold a wrong one: the lock gap is malloc_trim's via the lock, the sleep gap sleep's.
#
#   tests/cases/report_golden.sh           compare; diff -u on a difference
#   tests/cases/report_golden.sh --regen   write the trace again and its expected report
set -eu
GAPSCOPE_ROOT=${GAPSCOPE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
GOLDEN=tests/golden/report
EXPECTED=$GOLDEN/expected
FILES="summary.txt summary.json gaps/0001.folded gaps/0002.folded gaps/0003.folded gaps/all.folded"
[ -x "$BUILD/gapscope" ] || die "$BUILD/gapscope not built"
need_built "$BUILD/lib/libgapscope.a"

generator() {
	${CC:-cc} $SAN_FLAGS -O2 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Ibpf -Ilib \
		tests/golden/report_gen.c tests/golden/report_program.c "$BUILD/lib/libgapscope.a" \
		-o "$TMP/report_gen" -lz -lzstd ||
		die "cannot build tests/golden/report_gen.c"
	"$TMP/report_gen" "$1" || die "report_gen failed"
}

# report TRACE DIR: the report of TRACE in DIR; what it printed in DIR.stdout.
report() {
	# No debuginfod: the build-ids in the trace are made up, nothing is to be fetched.
	env -u DEBUGINFOD_URLS "$BUILD/gapscope" report -f "$1" -o "$2" >"$2.stdout" \
		2>"$2.stderr" || { cat "$2.stderr"; die "gapscope report failed"; }
}

# The answer, from summary.json alone (the generator's design, not the golden files).
check_answer() {
	python3 - "$1/summary.json" <<'PY' || die "the report's answer is wrong (see above)"
import json, sys

s = json.load(open(sys.argv[1]))
bad = []

def check(what, got, want):
    if got != want:
        bad.append(f"{what}: got {got!r}, expected {want!r}")

T0 = 4242 * 10**9
gaps = s["gaps"]
check("gaps", len(gaps), 3)
check("devices", [d["id"] for d in s["devices"]], [0])
if len(gaps) == 3:
    g1, g2, g3 = gaps
    # Gap 1: gpu-worker-0 blocked on the tracker lock held by finalizer-0 in malloc_trim.
    check("gap 1 closer", g1["closer"]["comm"], "gpu-worker-0")
    check("gap 1 cause", (g1["cause"]["kind"], g1["cause"]["function"], g1["cause"]["comm"]),
          ("malloc_trim", "malloc_trim", "finalizer-0"))
    check("gap 1 first link", (g1["chain"][0]["kind"], g1["chain"][0].get("detail")),
          ("lock", "held by finalizer-0"))
    check("gap 1 root tid (the lock owner)", g1["chain"][-1]["tid"], 31003)
    # malloc_trim returns at 157.95 ms; the gap opens at 130.0 (+ up to 14 us, the return).
    trim = T0 + 157950000 - max(g1["start_ns"], T0 + 130000000)
    if not trim - 20000 <= g1["cause"]["ns"] <= trim:
        bad.append(f"gap 1 malloc_trim ns {g1['cause']['ns']}, expected about {trim}")
    if g1["cause"]["ns"] < 0.95 * g1["duration_ns"]:
        bad.append("gap 1: malloc_trim explains under 95% of it")
    # Gap 2: gpu-worker-0 asleep in clock_nanosleep until 181.99 ms.
    check("gap 2 closer", g2["closer"]["comm"], "gpu-worker-0")
    check("gap 2 cause", (g2["cause"]["kind"], g2["cause"]["function"]),
          ("sleep", "clock_nanosleep"))
    # Gap 3: gpu-worker-1 on-CPU, three samples: two in one stack, one in another. Both
    # stacks are the executable's (unnamed: its file is missing), one leaf in libc: one
    # root, named by the executable, with two leaves.
    check("gap 3 closer", g3["closer"]["comm"], "gpu-worker-1")
    check("gap 3 cause kind", g3["cause"]["kind"], "on_cpu")
    check("gap 3 roots", [r["function"] for r in g3["roots"]], ["zkengine (missing)"])
    ns3 = sorted(l["ns"] for r in g3["roots"] for l in r.get("leaves", []))
    if len(ns3) != 2 or abs(ns3[1] - 2 * ns3[0]) > 2:
        bad.append(f"gap 3 leaves {ns3}: expected two, one twice the other")
    for g, start, end in ((g1, 130.0, 158.106), (g2, 175.0, 182.106), (g3, 191.0, 203.006)):
        # The closing edge is the first kernel launch; the opening one within 14 us of the
        # synchronize's wakeup.
        check(f"gap {g['id']} end", g["end_ns"], T0 + round(end * 1e6))
        if not 0 <= g["start_ns"] - (T0 + round(start * 1e6)) <= 14000:
            bad.append(f"gap {g['id']} starts at {g['start_ns'] - T0} ns, expected {start} ms")
        # The earliest the device may have gone idle: the synchronize's wakeup, exactly.
        check(f"gap {g['id']} start_earliest_ns", g.get("start_earliest_ns"),
              T0 + round(start * 1e6))
# The 0.4 ms idle window (106.0 -> 106.4 ms) is under --min-gap: no gap.
check("ranked causes", [c["kind"] for c in s["causes"]][:3], ["malloc_trim", "on_cpu", "sleep"])
check("lost events", s["lost_events"], 0)
# Each gap has one cause and nothing else the closer waited for: fixing it gives its time back
# (the sleep's with the wakeup's wait for a CPU after it), the lock's hop the trim under it and
# the holder's few us beside; the run is the device's.
check("recoverable, own time", [0 <= c["recoverable_ns"] - c["ns"] <= 20000 and
                                c["recoverable_range_ns"][0] == c["recoverable_ns"]
                                for c in s["causes"]][:3], [True, True, True])
check("the tracker hop", [0 <= h["recoverable_ns"] - s["causes"][0]["ns"] <= 20000
                          for h in s["hops"]][:1], [True])
check("run_ns", s["run_ns"], s["devices"][0]["busy_ns"] + s["devices"][0]["idle_ns"])
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

if [ "${1:-}" = --regen ]; then
	mkdir -p "$EXPECTED/gaps"
	generator "$GOLDEN/trace.gsc"
	report "$GOLDEN/trace.gsc" "$TMP/out"
	check_answer "$TMP/out"
	for f in $FILES; do
		cp "$TMP/out/$f" "$EXPECTED/$f"
	done
	echo "regenerated $GOLDEN/trace.gsc ($(stat -c %s "$GOLDEN/trace.gsc") bytes) and" \
		"$EXPECTED/: $FILES"
	exit 0
fi

[ -f "$GOLDEN/trace.gsc" ] || die "no golden trace: run $0 --regen"
# The checked-in trace is what the generator writes (it is reproducible to the byte).
generator "$TMP/trace.gsc"
cmp -s "$TMP/trace.gsc" "$GOLDEN/trace.gsc" ||
	die "$GOLDEN/trace.gsc is not what tests/golden/report_gen.c writes (regenerate: $0 --regen)"

report "$GOLDEN/trace.gsc" "$TMP/out"
# simcuda's stream threads say they stand for device 0 (gapscope_device_thread), readably.
"$BUILD/gapscope" script "$GOLDEN/trace.gsc" >"$TMP/script.txt" 2>/dev/null || die "script failed"
n=$(grep -cE '^ +simcuda-dev0 +3100[45]/31000 .*: cuda:gapscope_device_thread device=0 ' \
	"$TMP/script.txt" || true)
assert_eq "$n" 2 "device-thread events in the script of the golden trace"
fail=0
for f in $FILES; do
	cmp -s "$EXPECTED/$f" "$TMP/out/$f" && continue
	fail=1
	# summary.json holds a gap a line: its diff is shown key by key, unless only the layout
	# changed.
	if [ "$f" = summary.json ] &&
		python3 -m json.tool --sort-keys "$EXPECTED/$f" >"$TMP/want.json" 2>/dev/null &&
		python3 -m json.tool --sort-keys "$TMP/out/$f" >"$TMP/got.json" 2>/dev/null &&
		! cmp -s "$TMP/want.json" "$TMP/got.json"; then
		echo "$f (key by key):"
		diff -u --label "$EXPECTED/$f" --label "$TMP/out/$f" "$TMP/want.json" \
			"$TMP/got.json" || true
		continue
	fi
	diff -u "$EXPECTED/$f" "$TMP/out/$f" || true
done
# Every gap has its folded file, and no more gaps than expected.
got=$(cd "$TMP/out" && LC_ALL=C ls gaps/*.folded | tr '\n' ' ')
want=$(cd "$EXPECTED" && LC_ALL=C ls gaps/*.folded | tr '\n' ' ')
[ "$got" = "$want" ] || { echo "folded files: got '$got', expected '$want'"; fail=1; }
# What report prints is summary.txt.
diff -u "$TMP/out/summary.txt" "$TMP/out.stdout" || fail=1
[ "$fail" -eq 0 ] || die "gapscope report output differs from $EXPECTED (regenerate: $0 --regen)"
check_answer "$TMP/out"
echo "report of $GOLDEN/trace.gsc: $FILES as expected"
