#!/usr/bin/env bash
# index.html in headless Chromium (Debian's), opened from the file system: no console errors,
# no network requests; a click on a gap in the timeline shows its chain naming the lock and its
# flame graph holding the frame, which zooms and searches. Screenshots go to
# build/tests/render/. Checked on a small generated report (or the report in REPORT_DIR, with
# RENDER_FRAME and RENDER_CHAIN to look for) and on a generated hour-long one.
set -eu
. "$(dirname "$0")/../lib.sh"

gen=$BUILD/tests/render/render_gen
chromium=${CHROMIUM:-/usr/bin/chromium}
frame=${RENDER_FRAME:-malloc_trim}
chain=${RENDER_CHAIN:-tracker}
shots=$BUILD/tests/render
[ -x "$gen" ] || die "$gen not built (reports/render/assets.mk)"
for need in "$chromium" tests/browser/node_modules/puppeteer-core; do
	if [ ! -e "$need" ] || ! command -v node >/dev/null; then
		[ -n "${CI:-}" ] && die "$need or node missing in CI (make deps installs them)"
		skip "$need or node missing (make deps installs them)"
	fi
done
mkdir -p "$shots"
export CHROMIUM=$chromium

dir=${REPORT_DIR:-}
if [ -z "$dir" ]; then
	dir=$TMP/small
	"$gen" "$dir" >/dev/null
elif [ ! -e "$dir/index.html" ]; then
	# A report written before `gapscope report` renders pages: render a copy of it here.
	cp -r "$dir" "$TMP/given"
	dir=$TMP/given
	"$gen" --from "$dir"
fi
rm -f "$shots/index.png"
node tests/browser/check_page.js "$dir/index.html" "$shots/index.png" "$frame" "$chain"
python3 - "$shots/index.png" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
w, h = struct.unpack('>II', data[16:24])
assert w >= 1000 and h >= 900, f'screenshot {w}x{h}'
print(f'screenshot {sys.argv[1]}: {w}x{h}, {len(data)} bytes')
PY

# A report without gaps (the fixed scenario's, say) says so, without errors.
"$gen" --empty "$TMP/empty" >/dev/null
node tests/browser/check_page.js "$TMP/empty/index.html" "$shots/index-empty.png" - -

# An hour-long report stays usable: it loads and a gap clicked after zooming shows its graph.
"$gen" --hour "$TMP/hour" | grep index.html
start=$(date +%s%N)
node tests/browser/check_page.js "$TMP/hour/index.html" "$shots/index-hour.png" malloc_trim tracker
echo "hour-long page checked in $((($(date +%s%N) - start) / 1000000)) ms"
