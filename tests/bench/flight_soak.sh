#!/usr/bin/env bash
# make bench: record --flight soaked on a mixed load (issues 24, 48). FLIGHT_SOAK_S (default 600)
# seconds of zkengine on simcuda cycling through every scenario (gaps of every cause, and none
# in `fixed`), two CPU-bound processes beside it, under one recorder in flight mode with gap
# triggers, Prometheus metrics (scraped every 5 s here) and a gap profile every 30 s on disk.
# The recorder attaches (-p) to the load's shell, so that its children are its dumps' reports
# alone: its CPU a minute counts theirs (cutime + cstime), its peak RSS theirs (the recorder's
# cost line). Prints the recorder's RSS (every 5 s) and VmHWM, its CPU seconds a minute, each
# dump's latency (window's end to the file written) and its report's time, the metrics' series
# and the profiles' bytes an hour: the per-host figures of ARCHITECTURE.md's cost model; then
# flight_verdict.py's RESULT lines against the budget (0.3 s a minute, the stated bound).
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$PWD/$BUILD/gapscope
ZK=$PWD/$BUILD/zkengine
SOAK=${FLIGHT_SOAK_S:-600}
TMP=$(mktemp -d)
HOGS=
trap 'kill $HOGS 2>/dev/null; rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$TMP/dumps" "$TMP/pprof"
for _ in 1 2; do
	timeout "$((SOAK + 60))" sh -c 'while :; do :; done' &
	HOGS="$HOGS $!"
done
cat >"$TMP/load.sh" <<EOS
#!/bin/sh
end=\$((\$(date +%s) + $SOAK))
while [ "\$(date +%s)" -lt "\$end" ]; do
	for s in tracker-trim fixed gpu-lock-wide starved pageable oversubscribed; do
		"$ZK" --device sim --scenario \$s --partitions 8 >/dev/null 2>&1
	done
done
EOS
chmod +x "$TMP/load.sh"
"$TMP/load.sh" &
LPID=$!
HOGS="$HOGS $LPID"
"$GS" record --flight 10 --trigger-gap 200 --dump-dir "$TMP/dumps" --dump-max-per-hour 60 \
	--metrics "127.0.0.1:$PORT" --pprof-dir "$TMP/pprof" --push-interval 30 -p $LPID \
	>"$TMP/out" 2>"$TMP/err" &
RPID=$!
start=$(date +%s)
# RSS, VmHWM (KiB), CPU ticks of its own and of its reaped children, every 5 s.
while kill -0 $RPID 2>/dev/null; do
	mem=$(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' \
		/proc/$RPID/status 2>/dev/null) || break
	ticks=$(awk '{ print $14 + $15, $16 + $17 }' /proc/$RPID/stat 2>/dev/null) || break
	[ -n "$ticks" ] && echo "$(($(date +%s) - start)) $mem $ticks" >>"$TMP/rss"
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics" 2>/dev/null || true
	sleep 5
done
wait $RPID || { tail -5 "$TMP/err"; echo "flight soak: record failed" >&2; exit 1; }
echo "== flight soak: ${SOAK} s, 6 scenarios in turn and 2 CPU hogs, $(nproc) CPUs"
grep '^gapscope: flight: [0-9m]\|^gapscope: flight: cost' "$TMP/err" || true
awk 'NR == 1 { r0 = $2 } $2 > m { m = $2 } { r = $2 }
     END { printf "recorder RSS: first %d KiB, largest %d KiB, last %d KiB\n", r0, m, r }' "$TMP/rss"
sed -n 's/.*written in \([0-9]*\) ms (\([0-9]*\) ms after the window), report [a-zA-Z]* in \([0-9]*\) ms/\1 \2 \3/p' \
	"$TMP/err" | sort -n -k2 | awk '{ w[NR] = $2; r += $3; n = NR }
	END { if (!n) { print "dumps: none"; exit }
	      printf "dumps: %d, latency (window end to file) p50 %d ms, max %d ms; report %.0f ms on average\n",
		     n, w[int((n + 1) / 2)], w[n], r / n }'
echo "metrics: $(grep -vc '^#' "$TMP/metrics") series, $(wc -c <"$TMP/metrics") bytes a scrape"
n=$(ls "$TMP/pprof" | wc -l)
bytes=$(cat "$TMP/pprof"/* 2>/dev/null | wc -c)
echo "profiles: $n of 30 s, $bytes bytes, $((bytes * 3600 / (SOAK > 0 ? SOAK : 1))) bytes an hour"
python3 tests/bench/flight_verdict.py --err "$TMP/err" --samples "$TMP/rss" --tck "$(getconf CLK_TCK)"
