#!/usr/bin/env bash
# A gap filled by one async task polled over and over (tests/report/gen_taskpolls.c: a poll every
# 4 us, each woken by a timer thread, the next launch made inside the last one). A gap's blame
# walks back through the task's polls one hop at a time: that walk is bounded (blame.h's
# BLAME_MAX_TASK_HOPS), the hops not taken said in a note, and the report runs on a 1 MiB stack
# (it died of a stack overflow at 75,000 polls a gap). The task tables follow the window, not the
# trace: the report of 12 such gaps stays within 1.5x the peak memory of one of 3.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$GS" "$BUILD/lib/libgapscope.a"
$CC $SAN_FLAGS -O2 -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/gen" \
	tests/report/gen_taskpolls.c tests/report/genlib.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build gen_taskpolls"

peak_kb() { # TRACE OUT: report TRACE into OUT on a 1 MiB stack; prints its peak RSS in KiB
	(
		ulimit -s 1024
		exec /usr/bin/time -f "%M" -o "$TMP/$2.rss" "$GS" report "$1" -o "$TMP/$2" \
			>"$TMP/$2.out" 2>"$TMP/$2.err"
	) || {
		rc=$?
		cat "$TMP/$2.err"
		die "report of $1: exit $rc"
	}
	cat "$TMP/$2.rss"
}

"$TMP/gen" "$TMP/g3.gsc" 3 300 >/dev/null
"$TMP/gen" "$TMP/g12.gsc" 12 300 >/dev/null
k3=$(peak_kb "$TMP/g3.gsc" r3)
k12=$(peak_kb "$TMP/g12.gsc" r12)
echo "peak RSS: 3 gaps $k3 KiB, 12 gaps $k12 KiB"
python3 - "$TMP/r3" "$TMP/r12" "$k3" "$k12" "${SAN_FLAGS:+sanitized}" <<'EOF' || die "task polls"
import json, sys
for d, gaps in ((sys.argv[1], 3), (sys.argv[2], 12)):
    s = json.load(open(d + "/summary.json"))
    if len(s["gaps"]) != gaps:
        sys.exit("%s: %d gaps, expected %d" % (d, len(s["gaps"]), gaps))
    notes = [n for n in s["notes"] if "hops through async tasks not followed" in n]
    if not notes or not notes[0].startswith("%d hops" % gaps):
        sys.exit("%s: the hops not taken are not said, one a gap: %s" % (d, s["notes"]))
    # every gap explained to its end: the worker polling the task, on its own time
    for g in s["gaps"]:
        roots = sum(r["ns"] for r in g["roots"])
        if abs(roots - g["duration_ns"]) > g["duration_ns"] // 100:
            sys.exit("gap %d: roots %d ns of %d" % (g["id"], roots, g["duration_ns"]))
        if g["cause"]["comm"] != "tokio-runtime-w":
            sys.exit("gap %d: cause %s" % (g["id"], g["cause"]))
k3, k12 = int(sys.argv[3]), int(sys.argv[4])
# Under the sanitizers freed memory waits in ASan's quarantine: the peak says nothing there.
if sys.argv[5] != "sanitized" and k12 > 1.5 * k3:
    sys.exit("peak RSS grows with the trace: %d KiB for 3 gaps, %d KiB for 12" % (k3, k12))
print("3 and 12 gaps: every gap explained, the bound said; peak RSS x%.2f" % (k12 / k3))
EOF
