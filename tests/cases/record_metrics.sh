#!/usr/bin/env bash
# record --flight --metrics (issue 24) scraped by a real Prometheus server (Debian's), started
# here on a loopback port with a configuration written here: once the recording is done, PromQL
# over the scraped series gives the gap seconds by root cause and in all of the report of the
# same run's whole recording (-o) within 1%, its causes table's top row by (kind, function) too,
# and `promtool check metrics` passes the exposition.
# Then under attack: threads named with bytes that are no UTF-8 (their names in the cause labels)
# leave an exposition that promtool passes, the labels carrying U+FFFD; with a client trickling a
# byte every 0.4 s and 30 idle connections open, a scrape is answered within 1 s, SIGTERM ends
# the linger within 1 s, and a recorder whose target ended exits within --metrics-linger + 1 s.
# A port out of 1..65535, or one in use, is refused as an option error (exit 64) before the
# recording starts; an empty host is said to be every interface.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	die "prometheus not installed (make deps)"
GS=$BUILD/gapscope
PROM_PID= REC_PID=
stop() {
	[ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	cleanup
}
trap stop EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
MPORT=$(free_port)
PPORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gapscope
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOC
promtool check config "$TMP/prometheus.yml" >/dev/null || die "promtool rejects the config"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
PROM_PID=$!
query() { # PROMQL: the result's [labels..., value] lines
	python3 - "$PPORT" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[1], urllib.parse.urlencode({"query": sys.argv[2]}))
for r in json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]:
    print(" ".join(list(r["metric"].values()) + [r["value"][1]]))
PY
}
until curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null; do
	kill -0 "$PROM_PID" 2>/dev/null || { cat "$TMP/prom.log"; die "prometheus did not start"; }
	sleep 0.2
done

mkdir "$TMP/dumps"
"$GS" record --flight 10 --dump-dir "$TMP/dumps" --metrics "127.0.0.1:$MPORT" \
	--metrics-linger 300 -o "$TMP/full.gsc" -- \
	"$BUILD/zkengine" --device sim --scenario tracker-trim --partitions 24 \
	>"$TMP/out" 2>"$TMP/err" &
REC_PID=$!
# Until Prometheus has scraped the recorder after every gap was counted. The recorder answers
# /metrics for up to 300 s after the recording (--metrics-linger), and is ended by the test
# (SIGTERM ends the linger) once the queries below are answered: they read live series.
until query 'gapscope_recording_done' | grep -q ' 1$'; do
	kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/err"; die "the recorder ended before a last scrape"; }
	sleep 0.2
done
query 'gapscope_recording_done' | grep -q ' 1$' || die "no scrape after the recording ended"
curl -sf "http://127.0.0.1:$MPORT/metrics" >"$TMP/metrics.txt" || die "no /metrics"
promtool check metrics <"$TMP/metrics.txt" || die "promtool check metrics failed"
# By kind: the exact counter (a kind's function series, re-ranked as gaps come, do not sum to it).
query 'sum by (kind) (gapscope_gap_cause_kind_seconds_total)' | sort >"$TMP/by_kind"
# By (kind, function) too, as JSON: the rows of the causes table (names hold spaces).
curl -sf "http://127.0.0.1:$PPORT/api/v1/query" \
	--data-urlencode 'query=sum by (kind, function) (gapscope_gap_cause_seconds_total)' \
	>"$TMP/by_row.json" || die "no answer by (kind, function)"
query 'sum(gapscope_gap_seconds_total)' >"$TMP/total"
query 'sum(gapscope_gap_duration_seconds_count)' >"$TMP/count"
query 'sum(gapscope_gpu_idle_split_seconds{device="0"})' >"$TMP/split"
query 'sum(gapscope_gpu_idle_seconds_total{device="0"})' >"$TMP/idle"
query 'sum(gapscope_gpu_idle_split_seconds{device="0",part="gaps"})' >"$TMP/split_gaps"
kill "$REC_PID" 2>/dev/null || true
t0=$(date +%s)
wait "$REC_PID" || true
REC_PID=
# The linger ended on the signal, not at its 300 s (a bound that only turns a hang into a failure).
[ $(($(date +%s) - t0)) -lt 60 ] || die "SIGTERM did not end the metrics linger"
grep '^gapscope: flight' "$TMP/err"
# --help's memory figure is the one the recorder computed and said at the start.
need=$(sed -n 's/^gapscope: flight: memory: about \([0-9]*\) MiB in all.*/\1/p' "$TMP/err")
[ -n "$need" ] || die "no memory line at the start"
"$GS" record --help | tr '\n' ' ' | grep -q "for the live analysis ($need MiB by default)" ||
	die "--help does not say $need MiB: $("$GS" record --help | grep -A3 '^MEMORY')"
"$GS" report "$TMP/full.gsc" -o "$TMP/rep" >/dev/null 2>&1 || die "report failed"
python3 - "$TMP/rep/summary.json" "$TMP/by_kind" "$TMP/total" "$TMP/count" "$TMP/by_row.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
want = {}
for c in s["causes"]:  # rows by (kind, function): a kind's total is its rows' sum
    want[c["kind"]] = want.get(c["kind"], 0) + c["ns"] / 1e9
got = dict((l.split()[0], float(l.split()[1])) for l in open(sys.argv[2]) if l.strip())
total, count = float(open(sys.argv[3]).read()), float(open(sys.argv[4]).read())
want_total = sum(g["duration_ns"] for g in s["gaps"]) / 1e9
print("PromQL by cause:", got)
print("summary.json:   ", want)
print("total %.6f s (summary %.6f s), %d gaps (summary %d)" % (total, want_total, count, len(s["gaps"])))
assert want and set(got) == set(want), "causes differ"
for k in want:
    assert abs(got[k] - want[k]) <= 0.01 * want[k], "%s: %f s, summary %f s" % (k, got[k], want[k])
assert abs(total - want_total) <= 0.01 * want_total, "total"
assert "malloc_trim" in want
# The causes table's top row, by its (kind, function), is the same series' value.
rows = {(r["metric"].get("kind"), r["metric"].get("function")): float(r["value"][1])
        for r in json.load(open(sys.argv[5]))["data"]["result"]}
top = s["causes"][0]
got = rows.get((top["kind"], top["function"]), 0)
print("top row %s %s: %.6f s, summary %.6f s" % (top["kind"], top["function"], got, top["ns"] / 1e9))
assert abs(got - top["ns"] / 1e9) <= 0.01 * top["ns"] / 1e9, "the top row differs"
PY
# The idle split (setup, gaps, tail: the API tier has no part under the floor) sums to the idle
# time, and its gaps are the report's, from the recording's last analysis.
python3 - "$TMP/rep/summary.json" "$TMP/split" "$TMP/idle" "$TMP/split_gaps" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
split, idle, gaps = (float(open(p).read()) for p in sys.argv[2:5])
print("idle split %.6f s, idle %.6f s; gaps %.6f s (summary %.6f s)" % (
    split, idle, gaps, d["idle_split"]["gaps_ns"] / 1e9))
assert abs(split - idle) <= 0.001 * idle, "the split does not sum to the idle time"
assert abs(gaps - d["idle_split"]["gaps_ns"] / 1e9) <= 0.01 * gaps, "gaps"
PY

ms() { echo $(($(date +%s%N) / 1000000)); }
# hold PORT: 30 connections that send nothing and one that trickles a request head, until killed.
hold() {
	python3 - "$1" "$TMP/held" <<'PY' &
import socket, sys, time
idle = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(30)]
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2], "w").close()
for c in b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 4000:
    try:
        s.send(bytes([c]))
    except OSError:  # closed at its deadline: come back, as a slowloris client does
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    time.sleep(0.4)
PY
	HOLD_PID=$!
	until [ -e "$TMP/held" ]; do sleep 0.1; done
}
# scrape PORT FILE: /metrics into FILE; the milliseconds it took.
scrape() {
	local t0
	t0=$(ms)
	curl -sf -m 10 "http://127.0.0.1:$1/metrics" >"$2" || die "no answer to a scrape"
	echo $(($(ms) - t0))
}
# done_wait PORT: until the recorder says every gap is counted.
done_wait() {
	until curl -sf -m 10 "http://127.0.0.1:$1/metrics" | grep -q '^gapscope_recording_done 1$'; do
		kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/b.err"; die "the recorder ended"; }
		sleep 0.1
	done
}
HOLD_PID=
stop_hold() { [ -z "$HOLD_PID" ] || kill "$HOLD_PID" 2>/dev/null || true; wait "$HOLD_PID" 2>/dev/null || true; HOLD_PID=; }
trap 'stop_hold; stop' EXIT

$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
$CC -O1 -g -fno-omit-frame-pointer -pthread -o "$TMP/badnames" tests/record/badnames.c -ldl
BPORT=$(free_port)
"$GS" record --flight 20 --metrics "127.0.0.1:$BPORT" --metrics-linger 300 -o "$TMP/b.gsc" -- \
	"$TMP/badnames" "$TMP/libcuda.so.1" 5 >/dev/null 2>"$TMP/b.err" &
REC_PID=$!
until curl -sf -m 10 "http://127.0.0.1:$BPORT/metrics" >/dev/null; do
	kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/b.err"; die "the recorder ended"; }
	sleep 0.1
done
hold "$BPORT"
t=$(scrape "$BPORT" "$TMP/b1.txt")
echo "a scrape beside 30 idle connections and a trickling one, while recording: $t ms"
[ "$t" -lt 1000 ] || die "a scrape took $t ms"
done_wait "$BPORT"
t=$(scrape "$BPORT" "$TMP/b.txt")
echo "a scrape beside them, lingering: $t ms"
[ "$t" -lt 1000 ] || die "a scrape took $t ms"
promtool check metrics <"$TMP/b.txt" || die "promtool check metrics failed on hostile names"
grep '^gapscope_gap_cause_seconds_total' "$TMP/b.txt" | LC_ALL=C grep -c $'\xef\xbf\xbd' >"$TMP/fffd" ||
	die "no U+FFFD in a cause label: $(grep '^gapscope_gap_cause' "$TMP/b.txt")"
echo "cause labels with U+FFFD: $(cat "$TMP/fffd")"
t0=$(ms)
kill -TERM "$REC_PID"
wait "$REC_PID" || true
REC_PID=
t=$(($(ms) - t0))
echo "SIGTERM to exit, lingering beside them: $t ms"
[ "$t" -lt 1000 ] || die "SIGTERM took $t ms to end the recorder"
stop_hold

# A linger of 2 s with the same clients: the recorder exits on its own within 3 s.
SPORT=$(free_port)
"$GS" record --flight 5 --metrics "127.0.0.1:$SPORT" --metrics-linger 2 -o "$TMP/s.gsc" -- \
	"$BUILD/zkengine" --device sim --scenario tracker-trim -n 8 >/dev/null 2>"$TMP/b.err" &
REC_PID=$!
until curl -sf -m 10 "http://127.0.0.1:$SPORT/metrics" >/dev/null; do
	kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/b.err"; die "the recorder ended"; }
	sleep 0.1
done
rm -f "$TMP/held"
hold "$SPORT"
done_wait "$SPORT"
t0=$(ms)
wait "$REC_PID" || die "record failed"
REC_PID=
t=$(($(ms) - t0))
echo "from the recording's end to the recorder's exit, --metrics-linger 2: $t ms"
[ "$t" -lt 3000 ] || die "the recorder took $t ms to exit"
stop_hold

# --metrics addresses: a port out of range, and a port in use, are refused as any option is (exit
# 64, one line, before the recording starts: no flight summary line).
for a in 127.0.0.1:99999 0.0.0.0:65536 127.0.0.1:0 127.0.0.1: 127.0.0.1:x; do
	rc=0
	"$GS" record --flight 5 --metrics "$a" -o "$TMP/a.gsc" -f -- true >/dev/null 2>"$TMP/a.err" || rc=$?
	assert_eq "$rc" 64 "--metrics $a: exit status"
	grep -q "^gapscope record: --metrics wants ADDR:PORT with a port from 1 to 65535, got $a$" "$TMP/a.err" ||
		die "--metrics $a: $(cat "$TMP/a.err")"
	! grep -q 'gapscope: flight' "$TMP/a.err" || die "--metrics $a: a flight summary line"
done
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TMP/busy" &
BUSY_PID=$!
until [ -s "$TMP/busy" ]; do sleep 0.1; done
rc=0
"$GS" record --flight 5 --metrics "127.0.0.1:$(cat "$TMP/busy")" -o "$TMP/a.gsc" -f -- true \
	>/dev/null 2>"$TMP/a.err" || rc=$?
kill "$BUSY_PID"
assert_eq "$rc" 64 "--metrics on a port in use: exit status"
grep -q "^gapscope record: --metrics 127.0.0.1:$(cat "$TMP/busy"): Address already in use$" "$TMP/a.err" ||
	die "--metrics on a port in use: $(cat "$TMP/a.err")"
! grep -q 'gapscope: flight' "$TMP/a.err" || die "--metrics on a port in use: a flight summary line"
APORT=$(free_port)
"$GS" record --flight 5 --metrics ":$APORT" -o "$TMP/a.gsc" -f -- true >/dev/null 2>"$TMP/a.err" ||
	die "--metrics :PORT failed: $(cat "$TMP/a.err")"
grep -q "^gapscope: metrics on http://HOST:$APORT/metrics, HOST any address of this machine (bound to all interfaces: " \
	"$TMP/a.err" || die "--metrics :PORT: $(grep metrics "$TMP/a.err")"
echo ok
