#!/usr/bin/env bash
# record --flight --metrics (issue 24) scraped by a real Prometheus server (Debian's), started
# here on a loopback port with a configuration written here: once the recording is done, PromQL
# over the scraped series gives the gap seconds by root cause and in all of the report of the
# same run's whole recording (-o) within 1%, its causes table's top row by (kind, function) too,
# and `promtool check metrics` passes the exposition.
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
query 'sum by (kind) (gapscope_gap_cause_seconds_total)' | sort >"$TMP/by_kind"
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
echo ok
