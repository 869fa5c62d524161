#!/usr/bin/env bash
# Analysis speed and memory of `gapscope report` on generated traces (tests/report/gen_trace.c)
# of 5M and 50M events: events per second of CPU time (user + system) of the analysis alone
# (tests/report/bench_analysis.c: analysis__run, no output) against a bare decode pass over the
# same file in the same run, and peak RSS; the whole command (renderers included) for reference.
# Targets: >= 3M events/s, >= 0.5x the decode pass, RSS at 50M <= 1.5x RSS at 5M.
# Needs a built tree (make): the analysis is linked from the build's objects.
# usage: tests/report/bench.sh [BUILD]   (BENCH_REPORT_EVENTS="5000000 50000000" to change)
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
$CC -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/gen_trace" \
	tests/report/gen_trace.c tests/report/genlib.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd
$CC -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/decode_pass" tests/report/decode_pass.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd
$CC -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -Ireports -Ireports/render -Ireports/analysis -Ireports/symbols -o "$TMP/bench_analysis" \
	tests/report/bench_analysis.c "$BUILD/loader/libloader.a" "$BUILD/reports/libreports.a" "$BUILD/lib/libgapscope.a" -lzstd -liberty -lprotobuf-c -ljansson \
	-lbpf -ldw -lelf -lz -lstdc++ -pthread
# measure CMD...: "cpu_seconds max_rss_kb" of one run.
measure() {
	/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$@" >/dev/null
	awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$TMP/time"
}
fail=0
declare -A rss
for n in ${BENCH_REPORT_EVENTS:-5000000 50000000}; do
	"$TMP/gen_trace" "$TMP/t.gsc" "$n" >/dev/null
	read -r dcpu drss < <(measure "$TMP/decode_pass" "$TMP/t.gsc")
	read -r acpu arss < <(measure "$TMP/bench_analysis" "$TMP/t.gsc")
	read -r rcpu rrss < <(measure "$BUILD/gapscope" report -f "$TMP/t.gsc" -o "$TMP/rep")
	rate=$(awk -v n="$n" -v c="$acpu" 'BEGIN { printf "%.2f", n / c / 1e6 }')
	drate=$(awk -v n="$n" -v c="$dcpu" 'BEGIN { printf "%.2f", n / c / 1e6 }')
	ratio=$(awk -v a="$rate" -v d="$drate" 'BEGIN { printf "%.2f", a / d }')
	echo "events $n: analysis ${rate}M events/s (${acpu} s CPU, peak RSS $((arss / 1024)) MB);" \
		"decode pass ${drate}M events/s; ratio $ratio; whole report command" \
		"$(awk -v n="$n" -v c="$rcpu" 'BEGIN { printf "%.2f", n / c / 1e6 }')M events/s," \
		"peak RSS $((rrss / 1024)) MB"
	rss[$n]=$arss
	awk -v r="$rate" -v q="$ratio" 'BEGIN { exit !(r >= 3 && q >= 0.5) }' ||
		{ echo "bench: below 3M events/s or 0.5x the decode pass"; fail=1; }
	rm -f "$TMP/t.gsc"
done
if [ -n "${rss[5000000]:-}" ] && [ -n "${rss[50000000]:-}" ]; then
	growth=$(awk -v a="${rss[50000000]}" -v b="${rss[5000000]}" 'BEGIN { printf "%.2f", a / b }')
	echo "peak RSS 50M/5M: $growth (target <= 1.5)"
	awk -v g="$growth" 'BEGIN { exit !(g <= 1.5) }' || fail=1
fi
exit $fail
