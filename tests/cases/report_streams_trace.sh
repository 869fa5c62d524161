#!/usr/bin/env bash
# Generated traces of many stream and event handles (tests/report/gen_streams.c), at ten times
# and more the red team's sizes (D20, D23):
#  - a chain of 1,000,000 streams, each waiting on an event recorded on the next, then a
#    synchronize of the default stream and 5 gaps of 50 ms after it: the report ends with exit
#    0 and the 5 gaps; `record --flight 5 --replay` of it ends with status 0, its live analysis
#    going on through the chain to the gaps after it (one dump, the other 4 gaps inside its
#    window). The stream table's bound keeps the last 4,096 streams of the chain: the evidence
#    runs down those, and the streams let go of had their work taken as done.
#  - 2,000,000 distinct stream handles, each with an event: the report's peak RSS stays within
#    150 MB, and the streams and events let go of are counted in summary.json's losses.
# Sanitized builds take a fifth of the sizes (their memory is not measured).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
need_built "$GS" "$BUILD/lib/libgapscope.a"
div=1
[ -z "$SAN_FLAGS" ] || div=5
CHAIN=${STREAMS_CHAIN:-$((1000000 / div))}
DISTINCT=${STREAMS_DISTINCT:-$((2000000 / div))}
$CC $SAN_FLAGS -O2 -Wall -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/gen_streams" \
	tests/report/gen_streams.c tests/report/genlib.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build gen_streams"

# rss_report TRACE DIR: the report of TRACE into DIR; prints its peak RSS in KB.
rss_report() {
	python3 - "$GS" "$1" "$2" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "report", "-o", sys.argv[3], sys.argv[2]],
                   stdout=subprocess.DEVNULL, stderr=open(sys.argv[3] + ".err", "w"))
if r.returncode:
    sys.exit("report: exit %d: %s" % (r.returncode, open(sys.argv[3] + ".err").read()[-300:]))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

"$TMP/gen_streams" "$TMP/chain.gsc" chain "$CHAIN" >/dev/null
rss=$(rss_report "$TMP/chain.gsc" "$TMP/chain") || die "report of the $CHAIN-stream chain"
python3 - "$TMP/chain/summary.json" <<'PY' || die "the chain's report"
import json, sys
s = json.load(open(sys.argv[1]))
gaps = [g for g in s["gaps"] if 45e6 <= g["end_ns"] - g["start_ns"] <= 55e6]
assert len(gaps) == 5, [(g["start_ns"], g["end_ns"]) for g in s["gaps"]]
assert s["stream_handles"]["kept"] <= 4097, s["stream_handles"]
PY
echo "a chain of $CHAIN streams: report exit 0 (peak RSS $rss KB), its 5 gaps after the chain"
mkdir "$TMP/dumps"
rc=0
"$GS" record --flight 5 --replay "$TMP/chain.gsc" --dump-dir "$TMP/dumps" --trigger-gap 20 \
	2>"$TMP/replay.err" || rc=$?
[ "$rc" = 0 ] || die "record --flight --replay of the chain: exit $rc: $(tail -3 "$TMP/replay.err")"
! grep -q "the live analysis stopped" "$TMP/replay.err" || die "$(grep stopped "$TMP/replay.err")"
grep -q "^gapscope: flight: replayed $((3 * CHAIN + 18)) record(s)" "$TMP/replay.err" ||
	die "not every record replayed: $(grep replayed "$TMP/replay.err")"
grep -q "^gapscope: flight: 1 dump(s) written .* 4 inside another's window" "$TMP/replay.err" ||
	die "the gaps after the chain: $(grep 'dump(s) written' "$TMP/replay.err")"
grep '^gapscope: flight: .*dump(s) written' "$TMP/replay.err"

"$TMP/gen_streams" "$TMP/distinct.gsc" distinct "$DISTINCT" >/dev/null
rss=$(rss_report "$TMP/distinct.gsc" "$TMP/distinct") || die "report of $DISTINCT handles"
python3 - "$TMP/distinct/summary.json" "$DISTINCT" <<'PY' || die "the handles' losses"
import json, sys
s, n = json.load(open(sys.argv[1])), int(sys.argv[2])
h, l = s["stream_handles"], s["losses"]
assert h["launches"] == n and h["kept"] <= 4096 and h["events_kept"] <= 4096, h
assert h["let_go"] == n - h["kept"] and h["events_let_go"] == n - h["events_kept"], h
assert l["stream_handles_let_go"] == h["let_go"] and l["event_handles_let_go"] == h["events_let_go"], l
assert l["stream_calls_refused"] == 0, l
print("%d handles: %d streams and %d events let go of, %.3f work per launch"
      % (n, h["let_go"], h["events_let_go"], h["work_per_launch"]))
PY
echo "report of $DISTINCT handles: peak RSS $rss KB"
[ -n "$SAN_FLAGS" ] || [ "$rss" -le 153600 ] || die "peak RSS $rss KB, over 150 MB"
