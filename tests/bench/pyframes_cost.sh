#!/usr/bin/env bash
# make bench: what reading Python frames costs (bpf/pystack.bpf.h). A pure-Python CPU loop
# (Debian's python3, two threads: the main one spinning, another waiting on a lock and sleeping)
# run plain, recorded, and recorded with --no-python, interleaved (BENCH_PY_REPS, default 7):
# its iterations a second, medians and ratios to plain; then, in one recording of each kind, the
# CPU sample program's mean run time (kernel.bpf_stats_enabled): a sample's cost with and without
# the frame walk. The launch path takes no Python frames (tests/bench/launch_cost.sh).
# Prints a table last and appends it to tests/bench/results.txt.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$BUILD/gapscope
PY=/usr/bin/python3
REPS=${BENCH_PY_REPS:-7}
RESULTS=tests/bench/results.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
cat >"$TMP/loop.py" <<'EOF'
import threading, time
lock = threading.Lock()
def waiter():
    while not done:
        with lock:
            time.sleep(0.002)
def inner(n):
    return sum(i * i for i in range(n))
def outer(seconds):
    end, k = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        inner(2000)
        k += 1
    return k
done = False
t = threading.Thread(target=waiter)
t.start()
print("iterations/s %.0f" % (outer(3.0) / 3.0), flush=True)
done = True
t.join()
EOF
rate() { sed -n 's/^iterations\/s //p'; }
for i in $(seq "$REPS"); do
	p=$("$PY" "$TMP/loop.py" | rate)
	r=$("$GS" record -f -o "$TMP/r.gsc" -- "$PY" "$TMP/loop.py" 2>/dev/null | rate)
	n=$("$GS" record -f -o "$TMP/n.gsc" --no-python -- "$PY" "$TMP/loop.py" 2>/dev/null | rate)
	echo "$p $r $n" >>"$TMP/rates"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(cut -d' ' -f1 "$TMP/rates" | median)
mr=$(cut -d' ' -f2 "$TMP/rates" | median)
mn=$(cut -d' ' -f3 "$TMP/rates" | median)
recs=$("$GS" script "$TMP/r.gsc" 2>/dev/null | grep -c ': pystack of=' || true)

# A sample's mean run time, with and without the frame walk.
sample_ns() { # RECORD-OPTIONS...: mean ns of the sample programs in one recording
	sysctl -qw kernel.bpf_stats_enabled=1
	"$GS" record -f -o "$TMP/s.gsc" "$@" -- "$PY" "$TMP/loop.py" >/dev/null 2>&1 &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		bpftool -j prog show >"$TMP/p.new" 2>/dev/null && mv "$TMP/p.new" "$TMP/p.json"
		sleep 0.2
	done
	wait "$pid" || true
	python3 - "$TMP/p.json" <<'PY'
import json, sys
t = n = 0
for p in json.load(open(sys.argv[1])):
    if p.get("name") in ("tick_taken", "cpu_sample"):
        t += p.get("run_time_ns", 0)
        n += p.get("run_cnt", 0)
print("%.0f" % (t / n if n else 0))
PY
}
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sp=$(sample_ns)
sn=$(sample_ns --no-python)
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
{
	echo "# pyframes bench $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r), $("$PY" -V), $REPS reps"
	awk -v p="$mp" -v r="$mr" -v n="$mn" -v c="$recs" 'BEGIN {
		printf "python loop iterations/s (median): plain %.0f, recorded %.0f (%.3f), " \
		       "recorded --no-python %.0f (%.3f); %d Python-frame records in a recording\n",
		       p, r, r / p, n, n / p, c }'
	echo "sample program mean run time: with Python frames $sp ns, --no-python $sn ns"
} | tee -a "$RESULTS"
