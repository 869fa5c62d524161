#!/usr/bin/env bash
# A dump directory that another user owns (not sticky) can be raced: that user renames each new
# *.report directory away and plants a link to a directory of root's in its place. The dump's
# report and `report -o` under such a parent open every output relative to the directory fd they
# took once (O_NOFOLLOW, checked to be their own): the victim directory stays empty, and each
# report lands in the directory it made (renamed away, whole) or fails in one line. The recorder
# warns at the start that --dump-dir and --pprof-dir can be changed by their owner.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and runs a swapper as nobody"
GS=$(realpath "$BUILD/gapscope")
ZK=$(realpath "$BUILD/zkengine")
mkdir "$TMP/nbd" "$TMP/victim" "$TMP/pp"
chmod 755 "$TMP"
chown nobody "$TMP/nbd" "$TMP/pp"
chmod 700 "$TMP/victim"
cat >"$TMP/swap.py" <<'PY'
import os, sys, time
d, v, stop = sys.argv[1], sys.argv[2], sys.argv[3]
while not os.path.exists(stop):
    for n in os.listdir(d):
        p = os.path.join(d, n)
        if n.endswith('.report') and os.path.isdir(p) and not os.path.islink(p):
            os.rename(p, p + '.moved'); os.symlink(v, p)
    time.sleep(0.0005)
PY
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$TMP/swap.py" "$TMP/nbd" "$TMP/victim" \
	"$TMP/stop" &
SWAP=$!
trap 'touch "$TMP/stop"; wait $SWAP 2>/dev/null || true; cleanup' EXIT

"$GS" record --flight 5 --trigger-gap 300 --dump-dir "$TMP/nbd" --pprof-dir "$TMP/pp" -o "$TMP/t.gsc" \
	-- "$ZK" --device sim --scenario tracker-trim -n 24 >/dev/null 2>"$TMP/err" ||
	{ cat "$TMP/err"; die "record failed"; }
grep -q "^gapscope: warning: --dump-dir $TMP/nbd can be changed by its owner: " "$TMP/err" ||
	die "no warning about --dump-dir"
grep -q "^gapscope: warning: --pprof-dir $TMP/pp can be changed by its owner: " "$TMP/err" ||
	die "no warning about --pprof-dir"
# report -o under the same parent, three times.
for i in 1 2 3; do
	"$GS" report -o "$TMP/nbd/r$i.report" "$TMP/t.gsc" >/dev/null 2>"$TMP/r$i.err" || true
done
touch "$TMP/stop"
wait $SWAP || die "the swapper failed"
grep '^gapscope: flight: dump' "$TMP/err" || die "no dump written"

swapped=$(find "$TMP/nbd" -maxdepth 1 -name '*.report.moved' | wc -l)
echo "$swapped report directories swapped for a link; the victim holds: $(ls -A "$TMP/victim" | tr '\n' ' ')"
[ "$swapped" -ge 1 ] || die "the swapper never swapped a report directory"
assert_eq "$(ls -A "$TMP/victim" | wc -l)" 0 "files written into the victim directory"
# Each dump's report: whole in the directory it made, or "report FAILED".
for m in "$TMP"/nbd/*.gsc.report.moved; do
	[ -e "$m" ] || continue
	if [ -e "$m/index.html" ]; then
		for f in summary.txt summary.json timeline.json gaps.speedscope.json gaps/all.svg; do
			[ -s "$m/$f" ] || die "$m: no $f"
		done
	else
		grep -q "dump $TMP/nbd/$(basename "$m" .report.moved): .*report FAILED" "$TMP/err" ||
			die "$m: neither whole nor said to have failed"
	fi
done
# report -o: whole, or one line saying why not.
for i in 1 2 3; do
	if [ -s "$TMP/r$i.err" ]; then
		assert_eq "$(wc -l <"$TMP/r$i.err")" 1 "report -o r$i: lines on stderr"
		cat "$TMP/r$i.err"
	else
		[ -s "$TMP/nbd/r$i.report/index.html" ] || [ -s "$TMP/nbd/r$i.report.moved/index.html" ] ||
			die "report -o r$i: said nothing, wrote nothing"
	fi
done
echo ok
