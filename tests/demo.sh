#!/usr/bin/env bash
# The main job: run zkengine (real GPU when present, else simcuda) and show what it did.
# Once `gapscope record`/`report` exist, the engine runs under the recorder and a report follows.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-$BUILD/demo}
mkdir -p "$out"
engine=("$BUILD/zkengine" --device auto --scenario tracker-trim --partitions 8 --log2n 14 --verify)
if [ -x "$BUILD/gapscope" ] && "$BUILD/gapscope" record --help >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	"$BUILD/gapscope" record -f -o "$out/trace.gsc" -- "${engine[@]}"
	if "$BUILD/gapscope" report --help >/dev/null 2>&1; then
		"$BUILD/gapscope" report "$out/trace.gsc" -o "$out/report"
		cat "$out/report/summary.txt"
	else
		# Until `gapscope report` exists: what the trace holds, event by event kind.
		echo "== $out/trace.gsc: events by kind"
		"$BUILD/gapscope" script "$out/trace.gsc" |
			awk '$4 ~ /^[0-9.]+:$/ { n[$5]++ } END { for (k in n) printf "%8d  %s\n", n[k], k }' |
			sort -rn
		echo "(one event per line: $BUILD/gapscope script $out/trace.gsc)"
	fi
else
	"${engine[@]}"
fi
