#!/usr/bin/env bash
# record --flight --replay (issue 37): a real PyTorch recording, shared/traces/stall_attach.gsc
# (30 s attached to a steady matmul loop, one 91 ms malloc_trim stall injected under the feeder's
# lock at 119451950902..119543128764 ns), fed through the flight recorder with its own timestamps
# as the clock. At --flight 30 --trigger-gap 50 the stall triggers a dump whose report names
# malloc_trim via the lock; the ring stays within --flight-mb, letting go early (counted) and
# dropping nothing. At a --flight-mb above the file's 30 s nothing is let go early; at 8 MiB it
# lets go early and the stall's dump still holds the stall's gap. Then a simulated recording
# (zkengine tracker-trim, recorded plainly) replayed at --flight 5: every malloc_trim gap over
# the trigger in the whole recording's report gets a dump that names it. The live analysis's gap
# profiles (--pprof-dir) name the Python functions of the real recording, none left unnamed.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$GS"
TRACES=${GAPSCOPE_TRACES:-$GAPSCOPE_ROOT/../shared/traces}
STALL0=119451950902
STALL1=119543128764

# replay NAME TRACE ARGS...: the replay into $TMP/NAME/, its stderr in $TMP/NAME/err.
replay() {
	local d=$TMP/$1 trace=$2
	shift 2
	mkdir -p "$d/dumps"
	"$GS" record --replay "$trace" --dump-dir "$d/dumps" "$@" 2>"$d/err" ||
		{ cat "$d/err"; die "replay $1 failed"; }
	grep '^gapscope: flight' "$d/err"
}

# summary NAME: "dumps let_go dropped sticky_dropped ring_max_mib" of the replay's last line.
summary() {
	sed -n 's/^gapscope: flight: \([0-9]*\) dump(s) written .*; \([0-9]*\) chunk(s) let go early for --flight-mb, \([0-9]*\) record(s) dropped, \([0-9]*\) not kept for every dump; the ring held at most \([0-9.]*\) MiB (dumps being written included)$/\1 \2 \3 \4 \5/p' \
		"$TMP/$1/err"
}

# stall_dump NAME: the dump whose report holds a gap overlapping the stall, blamed on
# malloc_trim through a wait (the lock) on the thread that launches: prints its gap.
stall_dump() {
	python3 - "$TMP/$1/dumps" "$STALL0" "$STALL1" <<'PY'
import glob, json, sys
d, s0, s1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for f in sorted(glob.glob(d + "/*.report/summary.json")):
    for g in json.load(open(f))["gaps"]:
        kinds = [c["kind"] for c in g["chain"]]
        if g["start_ns"] < s1 and g["end_ns"] > s0 and g["cause"]["kind"] == "malloc_trim" \
                and g["cause"].get("function") == "malloc_trim" and len(kinds) >= 2 \
                and kinds[0] in ("cond", "futex", "mutex", "lock") and kinds[-1] == "malloc_trim":
            print(g["start_ns"], g["end_ns"], "->".join(kinds))
            sys.exit(0)
sys.exit(1)
PY
}

# Bad input: one line, a non-zero exit.
rc=0
"$GS" record --flight 5 --replay "$TMP/none.gsc" 2>"$TMP/bad.err" || rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] || die "a missing trace: exit $rc, $(cat "$TMP/bad.err")"
echo garbage >"$TMP/bad.gsc"
rc=0
"$GS" record --flight 5 --replay "$TMP/bad.gsc" --dump-dir "$TMP" 2>"$TMP/bad.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'not a gapscope trace' "$TMP/bad.err" || die "a bad trace: exit $rc"
rc=0
"$GS" record --flight 5 --replay "$TMP/bad.gsc" -p 1 2>/dev/null || rc=$?
assert_eq "$rc" 64 "--replay with -p"

# A trace whose clock leaps 3,500 s at every record (red-team D26): the seed's records, read
# again until 3,000, each moved k x 3,500 s. The replay ticked through every leap, 70,000 ticks
# a record (210 million in all, about 17 minutes); across a leap past the window it restarts the
# ticks at the leap's end, once nothing is due: a few ticks a record, each leap counted.
$CC $SAN_FLAGS -O2 -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/retime" "$GAPSCOPE_ROOT/tests/record/retime.c" \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build retime"
"$TMP/retime" "$GAPSCOPE_ROOT/tests/fuzz/corpus/report/seed-zkengine.gsc" "$TMP/leaps.gsc" 3500 3000
mkdir -p "$TMP/leaps"
t0=$(date +%s)
timeout 300 "$GS" record --flight 5 --replay "$TMP/leaps.gsc" --dump-dir "$TMP/leaps" \
	2>"$TMP/leaps/err" || { cat "$TMP/leaps/err"; die "replaying the leaping trace failed"; }
secs=$(($(date +%s) - t0))
read -r records ticks leaps far <<<"$(sed -n 's/^gapscope: flight: replayed \([0-9]*\) record(s) of .* in \([0-9]*\) tick(s); \([0-9]*\) leap(s) of it over 2 s restarted the ticks there, \([0-9]*\) stamp(s) an hour or more ahead not taken as time$/\1 \2 \3 \4/p' "$TMP/leaps/err")"
[ -n "${far:-}" ] || { cat "$TMP/leaps/err"; die "no replayed line"; }
echo "3,000 records 3,500 s apart: $ticks ticks, $leaps leaps, $far stamps over an hour ahead, $secs s"
assert_eq "$records" 3000 "records replayed"
[ "$leaps" -ge 1000 ] || die "$leaps leaps counted: the file leaps at every record"
# At most the lag's and a leap's ticks a record (the live analysis reads 500 ms behind; 2 s of
# ticks where a leap is shorter than the threshold): 50 a record, against 70,000.
[ "$ticks" -le $((50 * records)) ] || die "$ticks ticks for $records records"
[ "$secs" -le 120 ] || die "$secs s to replay 3,000 records (a backstop: the ticks are the measure)"

# SIGINT ends a replay where it is, with the usual lines: 200,000 records 9.9 s apart, a replay
# of minutes at a dozen ticks a record (the line that it started is waited for, not a time).
"$TMP/retime" "$GAPSCOPE_ROOT/tests/fuzz/corpus/report/seed-zkengine.gsc" "$TMP/slow.gsc" 9.9 200000 >/dev/null
mkdir -p "$TMP/int"
"$GS" record --flight 100 --replay "$TMP/slow.gsc" --dump-dir "$TMP/int" 2>"$TMP/int/err" &
pid=$!
for _ in $(seq 600); do
	grep -q 'kept in at most' "$TMP/int/err" && break
	kill -0 "$pid" 2>/dev/null || { cat "$TMP/int/err"; die "the replay ended before SIGINT"; }
	sleep 0.1
done
t0=$(date +%s%N)
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "SIGINT to the end of a replay: $ms ms, exit $rc"
grep '^gapscope: flight: replay of .* cut by SIGINT after [0-9]* record(s)$' "$TMP/int/err" ||
	{ cat "$TMP/int/err"; die "the replay did not say it was cut"; }
grep -q '^gapscope: flight: replayed [0-9]* record(s) of ' "$TMP/int/err" || die "no replayed line"
grep -q '^gapscope: flight: [0-9]* dump(s) written ' "$TMP/int/err" || die "no summary line"
assert_eq "$rc" 130 "the exit status of a replay cut by SIGINT"
[ "$ms" -le 10000 ] || die "SIGINT took $ms ms to end the replay"

if [ -r "$TRACES/stall_attach.gsc" ]; then
	T=$TRACES/stall_attach.gsc
	mkdir -p "$TMP/stall.pprof"
	replay stall "$T" --flight 30 --trigger-gap 50 --pprof-dir "$TMP/stall.pprof" --push-interval 5
	# The live analysis names Python frames from the code objects the stream carries (it has no
	# file to read them from first): the gap profiles it writes hold the stall's Python function.
	# The live analysis unwinds 64 snapshots a second of the trace's clock, the rest left to the
	# dumps' reports and counted: all but about 64 x 31 s of the ~8,000 the report unwinds.
	"$GS" report -f -o "$TMP/stall.report" -F json "$T" 2>/dev/null >"$TMP/stall.json"
	python3 - "$TMP/stall/err" "$TMP/stall.json" <<'PY' || die "the live unwinding budget"
import json, re, sys
err = open(sys.argv[1]).read()
left = int(re.search(r"^gapscope: flight: (\d+) stack snapshot\(s\) left to the dumps' reports: "
                     r"the live analysis unwinds 64 a second", err, re.M).group(1))
secs = float(re.search(r"replayed \d+ record\(s\) of .*, ([0-9.]+) s of its clock", err).group(1))
total = json.load(open(sys.argv[2]))["stacks"]["captured"]
print("snapshots: %d in the trace (report), %d left by the live analysis over %.1f s" %
      (total, left, secs))
sys.exit(0 if total - 64 * (secs + 1) <= left <= total else 1)
PY
	python3 - "$TMP/stall.pprof" <<'PY' || die "the live analysis left Python frames unnamed"
import glob, gzip, sys
data = b"".join(gzip.open(f).read() for f in glob.glob(sys.argv[1] + "/*.pb.gz"))
named, unnamed = data.count(b"housekeeping (torch_stall.py"), data.count(b"[python code 0x")
print("gap profiles: %d frames named housekeeping (torch_stall.py), %d unnamed code objects" %
      (named, unnamed))
sys.exit(0 if named and not unnamed else 1)
PY
	read -r dumps early dropped sticky ring <<<"$(summary stall)"
	[ -n "${ring:-}" ] || die "no summary line"
	echo "default --flight-mb 32: $dumps dump(s), $early let go early, $dropped dropped, ring at most $ring MiB"
	grep -q 'dump .*: gap of 0\.0[0-9]* s on gpu0 (malloc_trim' "$TMP/stall/err" ||
		die "no dump triggered by the stall's gap"
	gap=$(stall_dump stall) || die "no dump's report names malloc_trim via the lock over the stall"
	echo "the stall's dump: gap $gap"
	awk -v r="$ring" 'BEGIN { exit !(r <= 32) }' || die "the ring held $ring MiB, over --flight-mb 32"
	[ "$early" -gt 0 ] || die "103 MB of records in 30 s fit 32 MiB without letting go early?"
	assert_eq "$dropped" 0 "records dropped at --flight-mb 32"
	assert_eq "$sticky" 0 "records not kept for every dump"

	# Item 2: room for the busiest 30 s (the file holds ~100 MB of records) lets nothing go.
	replay big "$T" --flight 30 --flight-mb 256 --trigger-gap 50
	read -r dumps early dropped sticky ring <<<"$(summary big)"
	echo "--flight-mb 256: $early let go early, $dropped dropped, ring at most $ring MiB"
	assert_eq "$early" 0 "chunks let go early at --flight-mb 256"
	assert_eq "$dropped" 0 "records dropped at --flight-mb 256"
	stall_dump big >/dev/null || die "--flight-mb 256: no dump names the stall"

	replay small "$T" --flight 30 --flight-mb 8 --trigger-gap 50
	read -r dumps early dropped sticky ring <<<"$(summary small)"
	echo "--flight-mb 8: $early let go early, $dropped dropped, ring at most $ring MiB"
	[ "$early" -gt 0 ] || die "--flight-mb 8 let nothing go early"
	awk -v r="$ring" 'BEGIN { exit !(r <= 8) }' || die "the ring held $ring MiB, over --flight-mb 8"
	assert_eq "$dropped" 0 "records dropped at --flight-mb 8"
	gap=$(stall_dump small) || die "--flight-mb 8: the stall's dump lost the stall's gap"
	echo "--flight-mb 8: the stall's dump holds gap $gap"
else
	echo "no $TRACES/stall_attach.gsc: the real trace's cases not run"
	real_skipped=1
fi

# A simulated recording, recorded plainly, replayed: the live analysis asks for a dump of each
# gap of at least the trigger that the whole recording's report finds (written, or inside
# another's window), each named by its length and cause as the report has it. (What a dump holds
# against the whole recording is record_flight.sh's.)
need_root "records zkengine (loads BPF programs and attaches uprobes)"
need_built "$ZK"
TRIG_MS=30
mkdir -p "$TMP/sim"
SIMCUDA_TIME_SCALE=10 "$GS" record -o "$TMP/sim/full.gsc" -- \
	"$ZK" --device sim --scenario tracker-trim --partitions 40 >/dev/null 2>"$TMP/sim/rec.err" ||
	{ cat "$TMP/sim/rec.err"; die "recording zkengine failed"; }
"$GS" report "$TMP/sim/full.gsc" -o "$TMP/sim/full.report" >/dev/null 2>&1 || die "report failed"
replay simr "$TMP/sim/full.gsc" --flight 5 --trigger-gap $TRIG_MS --dump-max-per-hour 100 \
	--dump-no-report
read -r dumps early dropped sticky ring <<<"$(summary simr)"
assert_eq "$dropped" 0 "records dropped replaying zkengine"
covered=$(sed -n "s/.* \([0-9]*\) not written for the limits, \([0-9]*\) inside another's window.*/\1 \2/p" \
	"$TMP/simr/err")
sed -n 's/^gapscope: flight: dump .*: gap of \([0-9.]*\) s on gpu0 (\([a-z_]*\) .*/\1 \2/p' \
	"$TMP/simr/err" >"$TMP/simr/asked"
# shellcheck disable=SC2086 # $covered: two numbers
python3 - "$TMP/sim/full.report/summary.json" "$TMP/simr/asked" "$TRIG_MS" "$dumps" $covered <<'PY'
import json, sys
full, asked, trig = sys.argv[1], sys.argv[2], float(sys.argv[3])
dumps, limited, covered = (int(a) for a in sys.argv[4:7])
want = [g for g in json.load(open(full))["gaps"] if g["duration_ns"] >= trig * 1e6]
print(f"whole report: {len(want)} gap(s) of at least {trig} ms; replay: {dumps} dump(s), "
      f"{covered} inside another's window, {limited} not written for the limits")
if not any(g["cause"]["kind"] == "malloc_trim" for g in want):
    sys.exit(f"FAIL: the whole recording has no malloc_trim gap over {trig} ms")
if dumps + covered + limited != len(want):
    sys.exit(f"FAIL: the live analysis asked for {dumps + covered + limited} dumps, the report has {len(want)} gaps")
for line in open(asked):
    s, kind = line.split()
    if not any(abs(g["duration_ns"] / 1e9 - float(s)) <= 0.0006 and g["cause"]["kind"] == kind for g in want):
        sys.exit(f"FAIL: a dump of a {s} s gap ({kind}) that the whole report does not have")
PY
[ -z "${real_skipped:-}" ] || skip "no $TRACES/stall_attach.gsc (the simulated cases passed)"
