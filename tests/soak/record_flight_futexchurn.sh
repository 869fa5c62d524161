#!/usr/bin/env bash
# Memory against futex words never used twice (red-team D22): two threads ping-ponging through a
# new pair of words each round (tests/record/futexchurn.c). The analysis kept a wait list per
# word ever waited on: the flight recorder grew from 398 MB at 10 s to 2.2 GB at 60 s against
# its stated 160 MiB, losing 366,766 events, and a report of a 10 s recording took 687 MB, 1.8x
# one of 5 s. Now words go once their waits are pruned, at most THREADS_WAKES_MAX waits are held
# (reports/analysis/threads.h), the rest counted: the flight recorder's RSS at 60 s is within
# 1.3x of its RSS at 10 s and within its stated bound, with 0 events lost, and says what its
# analysis let go of; a report of 10 s is within 1.5x of one of 5 s, and counts the words.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
need_built "$GS"
$CC -O2 -pthread -o "$TMP/futexchurn" tests/record/futexchurn.c || die "cannot build futexchurn"

# report_rss SECONDS: the peak RSS (KiB) of the report of a futexchurn that ran so long.
report_rss() {
	"$GS" record -o "$TMP/r$1.gsc" -- "$TMP/futexchurn" "$1" >"$TMP/r$1.out" 2>"$TMP/r$1.err" ||
		{ cat "$TMP/r$1.err"; die "recording futexchurn failed"; }
	/usr/bin/time -f '%M' -o "$TMP/r$1.rss" "$GS" report "$TMP/r$1.gsc" -o "$TMP/r$1.rep" \
		>/dev/null 2>&1 || die "report of the $1 s futexchurn failed"
	python3 - "$TMP/r$1.rep/summary.json" "$(sed -n 's/^rounds=//p' "$TMP/r$1.out")" <<'PY' >&2 ||
import json, sys
s = json.load(open(sys.argv[1]))
t, l = s["tables"], s["losses"]
print("tables:", t, "evicted:", l["futex_waits_evicted"], "rounds:", sys.argv[2])
# Most rounds block on at least one word; each word waited on is let go of or evicted, bar
# those held at the end.
assert t["futex_words_forgotten"] + l["futex_waits_evicted"] >= int(sys.argv[2]) // 2
assert t["futex_words_max"] <= 131072
PY
		die "the $1 s report does not account for the words"
	cat "$TMP/r$1.rss"
}
r5=$(report_rss 5)
r10=$(report_rss 10)
echo "report RSS: $r5 KiB (5 s), $r10 KiB (10 s)"
awk -v a="$r5" -v b="$r10" 'BEGIN { exit !(b <= 1.5 * a) }' || die "the report's RSS grew with the run"

# The flight recorder over 60 s of futexchurn.
mkdir "$TMP/d"
"$GS" record --flight 5 --flight-mb 16 --dump-dir "$TMP/d" -o "$TMP/f.gsc" -- "$TMP/futexchurn" 65 \
	>"$TMP/f.out" 2>"$TMP/f.err" &
pid=$!
flight_rss "$pid" "$TMP/f.err"
wait "$pid" || { cat "$TMP/f.err"; die "record --flight of futexchurn failed"; }
bound=$(sed -n 's/^gapscope: flight: memory: about \([0-9]*\) MiB in all .*/\1/p' "$TMP/f.err")
echo "flight RSS: ${at10:-?} KiB at 10 s, ${at60:-?} KiB at 60 s; stated bound $bound MiB"
grep '^gapscope: flight: the live analysis let go of' "$TMP/f.err" ||
	die "the flight recorder did not say what its analysis let go of"
grep -E '^gapscope: [0-9]+ events, .*, 0 lost$' "$TMP/f.err" || { cat "$TMP/f.err"; die "events lost"; }
[ -n "${at60:-}" ] || die "the recording did not last 60 s"
awk -v a="$at10" -v b="$at60" 'BEGIN { exit !(b <= 1.3 * a) }' || die "the flight recorder's RSS grew past 1.3x"
[ "$at60" -le $((bound << 10)) ] || die "the flight recorder's RSS is over its stated bound"
