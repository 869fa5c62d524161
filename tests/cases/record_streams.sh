#!/usr/bin/env bash
# Launches on stream handles never seen before (red team D23): the probes record a launch at
# its entry, before a driver refuses a handle it never made, so each is a stream to the report.
# The API tier keeps streams in hash tables with bounds (reports/analysis/gputime.h): the work
# of finding and visiting streams per launch (summary.json's stream_handles.work_per_launch,
# entries looked at) stays flat from 20,000 handles to 200,000, as does the report's memory
# (within 1.5x), and the streams let go of are counted in the losses. Before, every launch
# walked every handle seen: the report of 200,000 did not end in 120 s. Live, the flight
# recorder takes 150,000 handles paced (tests/record/streams.c's slow variant) and the ordinary
# loop after them without losing a ring-buffer event, its CPU time under 20% of the loop's wall
# clock (one run's ratio; it was a whole CPU).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
need_probes
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
$CC -O2 -o "$TMP/streams" tests/record/streams.c -ldl

# report_of N: records N handles, reports; prints "peak_rss_kb work_per_launch let_go kept".
report_of() {
	"$GS" record -o "$TMP/s$1.gsc" -- "$TMP/streams" "$TMP/libcuda.so.1" "$1" 2>"$TMP/rec$1.err" ||
		die "record of $1 handles: $(tail -3 "$TMP/rec$1.err")"
	python3 - "$GS" "$TMP/s$1.gsc" "$TMP/r$1" "$1" <<'PY' || die "report of $1 handles"
import json, resource, subprocess, sys
gs, trace, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
subprocess.run([gs, "report", "-o", out, trace], check=True, stdout=subprocess.DEVNULL)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
s = json.load(open(out + "/summary.json"))
h = s["stream_handles"]
assert h["launches"] >= n, h
assert h["kept"] <= 4096 and h["let_go"] + h["calls_refused"] >= n - 4096, h
assert s["losses"]["stream_handles_let_go"] == h["let_go"], s["losses"]
assert any("stream handles not followed" in x for x in s["notes"]), s["notes"]
print(rss, h["work_per_launch"], h["let_go"], h["kept"])
PY
}
read -r rss1 work1 let1 kept1 < <(report_of 20000)
read -r rss2 work2 let2 kept2 < <(report_of 200000)
echo "20,000 handles: peak RSS $rss1 KB, $work1 work per launch, $let1 let go of, $kept1 kept"
echo "200,000 handles: peak RSS $rss2 KB, $work2 work per launch, $let2 let go of, $kept2 kept"
awk -v a="$work1" -v b="$work2" 'BEGIN { exit !(b <= 1.5 * a) }' ||
	die "work per launch grows with the handles: $work1 -> $work2"
# The sanitizers' shadow memory and quarantine are no report's own.
[ -n "$SAN_FLAGS" ] || awk -v a="$rss1" -v b="$rss2" 'BEGIN { exit !(b <= 1.5 * a) }' ||
	die "peak RSS grows with the handles: $rss1 KB -> $rss2 KB"
grep -q "stream_handles_let_go $let2" "$TMP/r200000/summary.txt" || die "summary.txt's losses"

# Live: the recorder's CPU time over the loop after the handles, between the program's two
# lines, against the wall clock between them.
mkdir "$TMP/dumps"
cpu_s() { awk '{ printf "%.2f", ($14 + $15) / '"$(getconf CLK_TCK)"' }' "/proc/$1/stat"; }
coproc REC { exec "$GS" record --flight 5 --dump-dir "$TMP/dumps" -o "$TMP/f.gsc" -- \
	"$TMP/streams" "$TMP/libcuda.so.1" 150000 slow 600 2>"$TMP/flight.err"; }
R=$REC_PID
read_until "${REC[0]}" "$TMP/out" "handles done" || die "no 'handles done': $(tail -3 "$TMP/flight.err")"
c0=$(cpu_s "$R") t0=$(date +%s.%N)
read_until "${REC[0]}" "$TMP/out" "loop done" || die "no 'loop done': $(tail -3 "$TMP/flight.err")"
c1=$(cpu_s "$R") t1=$(date +%s.%N)
rc=0
wait "$R" || rc=$?
[ "$rc" = 0 ] || die "record --flight: exit $rc: $(tail -3 "$TMP/flight.err")"
ratio=$(awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.3f", (c1 - c0) / (t1 - t0) }')
echo "flight: recorder CPU $c0 -> $c1 s over $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s of the loop: ratio $ratio"
grep '^gapscope: flight: .* stream handle(s) not followed' "$TMP/flight.err" ||
	die "the flight recorder did not count the handles not followed"
! grep -E 'lost.* ringbuf=[1-9]' "$TMP/flight.err" || die "ring-buffer events lost: $(grep lost "$TMP/flight.err")"
awk -v r="$ratio" 'BEGIN { exit !(r < 0.2) }' || die "the recorder's CPU after the handles: $ratio of the wall clock"
