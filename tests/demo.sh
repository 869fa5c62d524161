#!/usr/bin/env bash
# The main job (make demo): zkengine's tracker-trim scenario under the recorder (a real GPU when
# there is one, else simcuda), then its report: the summary, and where index.html is.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-$BUILD/demo}
mkdir -p "$out"
[ "$(id -u)" -eq 0 ] || { echo "make demo: gapscope record needs root (or CAP_BPF and CAP_PERFMON)" >&2; exit 1; }
engine=("$BUILD/zkengine" --device auto --scenario tracker-trim --partitions 16)
echo "== recording: ${engine[*]}"
"$BUILD/gapscope" record -f -o "$out/trace.gsc" -- "${engine[@]}" >"$out/engine.log"
grep -E '^zkengine: device|^gpu [0-9]+ busy' "$out/engine.log"
echo "== gapscope report $out/trace.gsc -o $out/report"
"$BUILD/gapscope" report -f "$out/trace.gsc" -o "$out/report"
echo
echo "open $out/report/index.html (flame graph per gap, timeline, causes);"
echo "$out/report/timeline.json opens in the Perfetto UI, gaps.speedscope.json in speedscope"
