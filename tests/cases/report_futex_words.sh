#!/usr/bin/env bash
# Futex words never used twice, at ten times red-team D22's size (issue 44, item 3): a generated
# trace (tests/report/futexgen.c) of 7,000,000 rounds of two threads ping-ponging through new
# words (14,000,000 words; a 10 s futexchurn recording holds about 1,400,000), with a new pair of
# threads every 64 rounds (218,750 threads). Before the analysis let go of words and exited
# threads, a report of a tenth of it took 1.4 GB. Now the report's peak RSS stays within 150 MB;
# every wait is accounted for in summary.json (let go of by the prune, evicted over the bound, or
# held at the end), the evicted among the losses; the flight recorder replaying it (every record,
# the end record with them) stays within the bound it states.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$GS" "$BUILD/lib/libgapscope.a"
ROUNDS=7000000
$CC $SAN_FLAGS -O2 -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/futexgen" \
	tests/report/futexgen.c tests/report/genlib.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build futexgen"
"$TMP/futexgen" "$TMP/w.gsc" "$ROUNDS" || die "futexgen failed"

/usr/bin/time -f '%M' -o "$TMP/rss" "$GS" report "$TMP/w.gsc" -o "$TMP/rep" >/dev/null \
	2>"$TMP/rep.err" || { cat "$TMP/rep.err"; die "report failed"; }
rss=$(cat "$TMP/rss")
echo "report of $ROUNDS rounds: peak RSS $rss KiB"
python3 - "$TMP/rep/summary.json" "$ROUNDS" <<'PY' || die "the waits are not accounted for"
import json, sys
s = json.load(open(sys.argv[1]))
rounds = int(sys.argv[2])
l, t = s["losses"], s["tables"]
print("losses:", {k: l[k] for k in ("futex_waits_evicted", "threads_evicted", "names_evicted")})
print("tables:", t)
# Each word has one wait: let go of, evicted, or among those held at the end.
held = 2 * rounds - t["futex_words_forgotten"] - l["futex_waits_evicted"]
assert l["futex_waits_evicted"] > 0, "200,000 waits a second: over the bound, evicted"
assert 0 <= held <= t["futex_words_max"] <= 131072, held
# Threads: each pair exits; all but the last pair and the process's main thread let go of.
threads = 2 * ((rounds + 63) // 64)
assert t["threads_forgotten"] + l["threads_evicted"] >= threads - 8192, t
assert t["threads_max"] <= 8192 + 16, t
assert s["lost_events"] == 0
PY
grep -q '^note: [0-9]* futex wait(s) and [0-9]* exited thread(s) let go of before their time' \
	"$TMP/rep/summary.txt" || die "no note of the evictions in summary.txt"
[ "$rss" -le $((150 << 10)) ] || die "the report took $rss KiB, over 150 MB"

# The flight recorder replaying it: its RSS, sampled from /proc, within the bound it states.
mkdir "$TMP/d"
"$GS" record --flight 5 --flight-mb 16 --replay "$TMP/w.gsc" --dump-dir "$TMP/d" \
	2>"$TMP/f.err" &
pid=$!
peak=0
while rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$rss" ]; do
	[ "$rss" -gt "$peak" ] && peak=$rss
	sleep 0.5
done
wait "$pid" || { cat "$TMP/f.err"; die "record --flight --replay failed"; }
bound=$(sed -n 's/^gapscope: flight: memory: about \([0-9]*\) MiB in all .*/\1/p' "$TMP/f.err")
grep '^gapscope: flight: the live analysis let go of' "$TMP/f.err" ||
	die "the flight recorder did not say what its analysis let go of"
echo "replay: peak RSS $peak KiB, stated bound ${bound:-?} MiB"
[ -n "$bound" ] || die "the replay stated no bound"
[ "$peak" -le $((bound << 10)) ] || die "the replay's RSS $peak KiB is over its bound"
grep -q "replayed $((4 * ROUNDS + 2 * ((ROUNDS + 63) / 64) * 2 + 1)) record(s)" "$TMP/f.err" ||
	die "the replay did not read every record"
