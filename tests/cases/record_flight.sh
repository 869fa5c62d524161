#!/usr/bin/env bash
# record --flight (issue 24): zkengine tracker-trim for over a minute under --flight 5, with
# -o writing the whole recording of the same run beside it. simcuda's device time is scaled
# (SIMCUDA_TIME_SCALE=10) so that the minute is mostly the simulated GPU's, whatever the load on
# the machine: tracker-trim's gaps are malloc_trim's CPU time, not the device's. The recorder's
# resident size, read every second, peaks in the run's second half within 1.2x of its first
# half's peak; every dump is a valid trace whose report blames its trigger gap on malloc_trim
# via the tracker lock; the gaps of every dump are those of the whole recording over the same
# window (from a second after its start, the analysis's look-back, to its end); `fixed` at the
# same threshold writes no dump; and the hourly cap holds, tested with SIGUSR1; and a GPU busy
# since before the ring gets a dump that holds its trigger. The cost line counts every dump's
# report process with the recorder's own CPU and peak RSS.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$BUILD/gapscope
ZK=$BUILD/zkengine
# A trigger most of tracker-trim's trims pass on a fast machine too (a quiet 2-CPU VM: gaps of
# 100-700 ms, two of them over 250 ms in a minute).
TRIGGER_MS=100

# flight SCENARIO PARTITIONS: records into $TMP/SCENARIO/, RSS (KiB) every second in rss. The
# engine is given more partitions than a minute holds and ended (SIGTERM) 65 s into the
# recording, however fast the machine is.
flight() {
	local d=$TMP/$1 pid t=0 rss
	mkdir -p "$d/dumps"
	SIMCUDA_TIME_SCALE=10 "$GS" record --flight 5 --trigger-gap $TRIGGER_MS --dump-dir "$d/dumps" \
		--dump-max-per-hour 12 -o "$d/full.gsc" -- \
		"$ZK" --device sim --scenario "$1" --partitions "$2" >"$d/out" 2>"$d/err" &
	pid=$!
	# Seconds from when the recording is in full swing: the engine has loaded (simcuda's)
	# libcuda and its probes are on (on a loaded machine that can take seconds).
	while rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$rss" ]; do
		if grep -q 'CUDA probes' "$d/err"; then
			echo "$t $rss" >>"$d/rss"
			t=$((t + 1))
			[ "$t" = 65 ] && pkill -TERM -P "$pid" -x zkengine
		fi
		sleep 1
	done
	# Ended by the test: the recorder exits as its target did (128 + SIGTERM).
	wait "$pid" || [ $? = 143 ] || { cat "$d/err"; die "record --flight of $1 failed"; }
	grep '^gapscope: flight' "$d/err"
	"$GS" report "$d/full.gsc" -o "$d/full.report" >/dev/null 2>"$d/report.err" ||
		{ cat "$d/report.err"; die "report of the whole recording failed"; }
}

flight tracker-trim 1000
d=$TMP/tracker-trim
grep -q 'flight: the last 5 s of trace kept in at most 32 MiB' "$d/err" || die "no memory bound said"
secs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration_ns"] // 10**9)' \
	"$d/full.report/summary.json")
[ "$secs" -ge 60 ] || die "the run lasted $secs s, not 60"
# The live analysis reads files to name frames and lets go of them every 5 s: the size saws up and
# down within each 5 s. Growth is the peak of the run's second half against its first's (from 10 s
# on, each half holding five turns of the saw at least), not a sample against a sample.
half=$(((secs + 10) / 2))
max1=$(awk -v h="$half" '$1 >= 10 && $1 < h && $2 > m { m = $2 } END { print m }' "$d/rss")
max2=$(awk -v h="$half" '$1 >= h && $2 > m { m = $2 } END { print m }' "$d/rss")
echo "RSS at most $max1 KiB from 10 s to $half s, $max2 KiB after (over $secs s)"
# Under the sanitizers freed memory waits in ASan's quarantine: the peak says nothing there.
[ -n "$SAN_FLAGS" ] || awk -v a="$max1" -v m="$max2" 'BEGIN { exit !(m <= 1.2 * a) }' ||
	die "RSS grew: its peak after $half s past 1.2x its peak before"

# Every dump: a valid trace holding the gap that triggered it, its report naming malloc_trim via
# the tracker lock, and the same gaps as the whole recording over its window.
# A dump starts where the live analysis last saw the GPU start work after a gap, before its
# window ("from an idle GPU"): its gaps are then the whole recording's. One whose window reached past what the ring
# held says so, and its GPU state at the start is not known: it is checked for the rest.
# A gap longer than the ring can hold (on a loaded machine malloc_trim can take seconds) leaves
# a dump that starts after it ("the ring no longer held its start"): checked as a trace and for
# its gaps, not for the trigger.
# "after the trigger" may follow "GPU state at its start unknown": anywhere in the parentheses.
sed -n 's/^gapscope: flight: dump \([^:]*\): gap of \([0-9.]*\) s .* window \([0-9]*\)\.\.\([0-9]*\) ns ([0-9.]* s, \(from an idle GPU\|GPU state\)\([^)]*\)).*/\1 \2 \3 \4 \5\6/p' \
	"$d/err" | sed 's/ from an idle GPU\(.*\)/ clean\1/; s/ GPU state\(.*\)/ cut\1/' |
	sed 's/ \(clean\|cut\)\(.*\), after the trigger.*/ \1-late/; s/ \(clean\|cut\)\([^-].*\)\?$/ \1/' \
	>"$d/dumps.txt"
n=$(wc -l <"$d/dumps.txt")
[ "$n" -ge 2 ] || die "$n dumps of tracker-trim"
# How many gaps pass the trigger depends on how fast this machine trims: the hourly cap is
# tested below with signals, here only kept.
[ "$n" -le 12 ] || die "$n dumps written, the cap is 12"
grep -q "^gapscope: flight: $n dump(s) written " "$d/err" || die "the dumps counted: $(grep 'dump(s) written' "$d/err")"
[ "$n" -eq "$(grep -c 'flight: dump .* window ' "$d/err")" ] || die "a dump line not understood"
clean=$(grep -c ' clean$' "$d/dumps.txt" || true)
late=$(grep -c -- '-late$' "$d/dumps.txt" || true)
echo "$n dumps, $clean from an idle GPU holding their trigger, $late after a trigger longer than the ring"
[ "$clean" -ge 2 ] || die "only $clean dumps from an idle GPU holding their trigger"
grep -c 'report written' "$d/err" | grep -qx "$n" || die "a dump without its report"
# What being always on cost counts every report's process, reaped, with the recorder's own.
cost=$(grep '^gapscope: flight: cost: ' "$d/err") || die "no cost line"
echo "$cost" | grep -q " of it in $n dump report(s); peak RSS " || die "reports not counted: $cost"
python3 - "$cost" <<'PY' || die "the cost line's figures do not add up: $cost"
import re, sys
m = re.search(r"cost: ([0-9.]+) s of CPU in (\d+) s \(([0-9.]+) s a minute\), ([0-9.]+) s of it in "
              r"\d+ dump report\(s\); peak RSS ([0-9.]+) MiB, ([0-9.]+) MiB with the largest "
              r"report's, against the stated (\d+) MiB", sys.argv[1])
cpu, secs, per_min, kids, own, both, bound = (float(x) for x in m.groups())
assert 0 < kids < cpu and secs >= 60 and abs(per_min - cpu * 60 / secs) < 0.01 * per_min + 0.002
assert 0 < own < both and bound > 0
PY
while read -r path gap w0 w1 start; do
	"$GS" script --no-stacks "$path" >/dev/null 2>"$d/script.err" ||
		die "$path is not a valid trace"
	[ -z "$(other_warnings "$d/script.err")" ] || { cat "$d/script.err"; die "$path: warnings"; }
	python3 - "$path.report/summary.json" "$d/full.report/summary.json" "$gap" "$w0" "$w1" \
		"$start" <<'PY' ||
import json, sys
dump, full = (json.load(open(f)) for f in sys.argv[1:3])
gap_ns, w0, w1 = float(sys.argv[3]) * 1e9, int(sys.argv[4]), int(sys.argv[5])
state = sys.argv[6]
trig = [g for g in dump["gaps"] if abs(g["duration_ns"] - gap_ns) < 1e6]
trim = [g for g in dump["gaps"] if g["cause"] and g["cause"]["kind"] == "malloc_trim" and
        any(l.get("lock") == "tracker_lock" for l in g["chain"])]
if not state.endswith("-late"):
    assert trig, "the trigger gap is not in the dump's report"
    assert trim, "no gap blamed on malloc_trim via tracker_lock"
def sel(gaps):
    return sorted((g["start_ns"], g["end_ns"], g["device"], g["cause"] and g["cause"]["kind"],
                   g["cause"] and g["cause"]["function"]) for g in gaps
                  if g["start_ns"] >= w0 + 10**9 and g["end_ns"] <= w1)
a, b = sel(dump["gaps"]), sel(full["gaps"])
if state.startswith("clean"):
    assert a == b, "gaps differ:\n dump %s\n full %s" % (a, b)
print("%s: trigger %.3f s (%s), %d via tracker_lock to malloc_trim, %d gaps as in the whole "
      "recording" % (sys.argv[1].split("/")[-2], gap_ns / 1e9,
                     trig[0]["cause"]["kind"] if trig else "not in it: " + state, len(trim),
                     len(a)))
PY
		die "dump $path"
done <"$d/dumps.txt"

# fixed, at the same threshold: no dump.
flight fixed 24
grep -q '^gapscope: flight: 0 dump(s) written' "$TMP/fixed/err" || die "fixed was dumped"
[ -z "$(ls "$TMP/fixed/dumps")" ] || die "fixed left files: $(ls "$TMP/fixed/dumps")"
longest=$(python3 -c 'import json,sys; print(max([g["duration_ns"] for g in json.load(open(sys.argv[1]))["gaps"]] + [0]) // 10**6)' \
	"$TMP/fixed/full.report/summary.json")
echo "fixed: longest gap $longest ms, trigger $TRIGGER_MS ms"
[ "$longest" -lt $TRIGGER_MS ] || die "fixed had a gap of $longest ms"

# The hourly cap, by SIGUSR1 alone: --dump-max-per-hour 2 and three signals, each sent once the
# last was answered. With --dump-after 0 a signal's window ends where it was taken, so the next
# one, taken later, is never inside it: two dumps written, the third counted as over the cap.
d=$TMP/signals
mkdir -p "$d/dumps"
SIMCUDA_TIME_SCALE=10 "$GS" record --flight 5 --dump-after 0 --dump-max-per-hour 2 \
	--dump-no-report --dump-dir "$d/dumps" -- \
	"$ZK" --device sim --scenario fixed --partitions 100000 >"$d/out" 2>"$d/err" &
pid=$!
# wait_for PATTERN: until the recorder's stderr has a line matching PATTERN (it is still running).
wait_for() {
	until grep -q "$1" "$d/err"; do
		kill -0 "$pid" 2>/dev/null || { cat "$d/err"; die "the recorder ended before: $1"; }
		sleep 0.1
	done
}
wait_for 'CUDA probes'
kill -USR1 "$pid"
wait_for 'flight: dump .*: SIGUSR1 from pid'
kill -USR1 "$pid"
until [ "$(grep -c 'flight: dump .*: SIGUSR1 from pid' "$d/err")" = 2 ]; do
	kill -0 "$pid" 2>/dev/null || { cat "$d/err"; die "the recorder ended before its second dump"; }
	sleep 0.1
done
kill -USR1 "$pid"
wait_for 'dump of SIGUSR1 from pid [0-9]* not written: --dump-max-per-hour reached'
pkill -TERM -P "$pid" -x zkengine
wait "$pid" || [ $? = 143 ] || { cat "$d/err"; die "record --flight with signals failed"; }
grep '^gapscope: flight' "$d/err"
grep -q '^gapscope: flight: 2 dump(s) written .*, 1 not written for the limits, 0 inside' "$d/err" ||
	die "the hourly cap: $(grep 'dump(s) written' "$d/err")"
[ "$(ls "$d/dumps" | grep -c '\.gsc$')" = 2 ] || die "dumps on disk: $(ls "$d/dumps")"

# A GPU busy since before the ring: tests/report/feeder.c's busy mode keeps the device working
# for 3 s (two streams, each synchronized while the other has a kernel queued: no moment where
# it is seen idle), then 300 ms on the CPU, then 3 s more. The one dump cannot start where the
# GPU was idle (the trigger is its first gap): it starts at its window (the GPU's state there
# unknown), holds the gap, and its report gives the gap and cause of the whole recording.
d=$TMP/busy
mkdir -p "$d/dumps"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"
"$GS" record --flight 5 --trigger-gap 150 --dump-dir "$d/dumps" -o "$d/full.gsc" -- \
	"$TMP/feeder" "$(realpath "$BUILD/simcuda/libcuda.so.1")" busy 3000 300 >"$d/out" 2>"$d/err" ||
	{ cat "$d/err"; die "record --flight of the busy feeder failed"; }
grep '^gapscope: flight: dump' "$d/err"
[ "$(grep -c '^gapscope: flight: dump .*: gap of' "$d/err")" = 1 ] || die "not one dump of the busy feeder"
grep -q 'GPU state at its start unknown), ' "$d/err" || die "the busy feeder's dump did not start at its window"
"$GS" report "$d/full.gsc" -o "$d/full.report" >/dev/null 2>"$d/report.err" ||
	{ cat "$d/report.err"; die "report of the busy feeder failed"; }
python3 - "$d/full.report/summary.json" "$d"/dumps/*.gsc.report/summary.json <<'PY' || die "the busy feeder's dump"
import json, sys
full, dump = (json.load(open(f)) for f in sys.argv[1:3])
# The gap's cause among its own roots: on a loaded machine other processes' preemption of the
# feeder ("preempted", "NAME (pid N)") can outweigh it; what else runs is not this test's business.
def cause(g):
    own = [r for r in g["roots"] if not (r["kind"] == "preempted" and "(pid " in r["function"])]
    top = max(own, key=lambda r: r["ns"]) if own else None
    return top and (top["kind"], top["function"])
def gaps(s):
    return [(g["start_ns"], g["end_ns"]) + (cause(g) or (None, None))
            for g in s["gaps"] if g["duration_ns"] >= 150e6]
print("busy feeder: the whole recording %s, the dump %s" % (gaps(full), gaps(dump)))
assert len(gaps(full)) == 1 and gaps(full)[0][2:] == ("on_cpu", "compute_input"), "whole recording"
assert gaps(dump) == gaps(full), "the dump's gap is not the whole recording's"
PY
echo ok
