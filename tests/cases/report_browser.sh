#!/usr/bin/env bash
# The report a user opens: zkengine tracker-trim recorded on simcuda (real probes), reported, and
# its index.html opened from the file system in headless Chromium (tests/cases/render_browser.sh
# does the driving): no console errors, no network requests, and after a click on a gap its
# flame graph holds a malloc_trim frame and its chain names the tracker lock; the causes table
# has summary.json's rows, malloc_trim first, each with its share and breakdown. The screenshot is
# left in build/tests/render/index.png.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"
timeout 300 "$GS" record -o "$TMP/t.gsc" -- "$ZK" --device sim --scenario tracker-trim \
	>"$TMP/rec.out" 2>&1 || { cat "$TMP/rec.out"; die "record"; }
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" >"$TMP/rep.txt" 2>&1 || { cat "$TMP/rep.txt"; die "report"; }
cat "$TMP/rep.txt"
for f in index.html timeline.json gaps.speedscope.json gaps/all.svg gaps/all.folded; do
	[ -s "$TMP/rep/$f" ] || die "report wrote no $f"
done
grep -q '\[woken by \|\[held by \|\[lock ' "$TMP/rep/gaps/all.folded" || die "no annotated frames"
grep -q 'malloc_trim' "$TMP/rep/gaps/all.folded" || die "no malloc_trim frame in the folded stacks"
REPORT_DIR=$TMP/rep RENDER_FRAME=malloc_trim RENDER_CHAIN=tracker RENDER_CAUSE=malloc_trim \
	"$GAPSCOPE_ROOT/tests/cases/render_browser.sh"
