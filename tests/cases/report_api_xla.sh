#!/usr/bin/env bash
# The API tier on a program driven the way XLA drives the driver (tests/report/feeder.c's xla
# mode on simcuda, real probes): each step prepares its batch on the CPU (10 ms), replays a
# captured graph on one stream, records an event that a second stream waits for, queues a
# kernel and a host function there, and waits on a condition variable that the host function
# signals from the driver's callback thread: no synchronize. The recorder probes the host
# function once it sees it queued; its calls close the second stream's work, and through the
# event the graph's. Against simcuda's own kernel intervals (SIMCUDA_TRACE), from the probe's
# start: recall and precision of the gaps >= 95%, busy within 3 points. Launched; then with the
# host function in anonymous memory (a libffi closure's shape), which no probe reaches: the
# only news is the callback thread woken by simcuda's device thread (its interrupt) and the
# host thread woken by it, launched and attached with -p. The feeder runs at nice -19, yet on a
# loaded machine its thread is at times kept off its CPU between two launches of a step: the
# simulated device idles where no call can tell (the tier counts such time unconfirmed). A
# kernel-to-kernel idle window for at least 80% of which the launching thread was runnable but
# not running (its preempted intervals in the trace) is that, not a step's gap: it counts as
# busy in the truth, and the test says how many there were (3 of 58 at load 10-14; the steps'
# gaps had the thread preempted for 0-60% of theirs).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

check() { # check NAME [anon]: NAME.gsc against NAME.jsonl
	"$GS" report "$TMP/$1.gsc" -o "$TMP/$1.rep" --top 2 >"$TMP/$1.txt" || die "$1: report"
	"$GS" script "$TMP/$1.gsc" >"$TMP/$1.script" 2>/dev/null || die "$1: script"
	if [ "${2:-}" = anon ]; then
		# No probe can reach the host function: the chain from the device's wakeup is the
		# only news; the truth is taken from when the driver's probes went live.
		grep -q '^# probe .* host_fn .*host function .*FAILED' "$TMP/$1.script" ||
			die "$1: the anonymous host function was probed: $(grep 'host' "$TMP/$1.script" | head -3)"
		live=$(sed -n 's/^# probe .* cuda .*:cuLaunchHostFunc live-since=\([0-9.]*\) .*/\1/p' \
			"$TMP/$1.script" | head -1)
		[ -n "$live" ] || die "$1: cuLaunchHostFunc was not probed"
		starts=$(python3 -c 'import json,sys; print(sum(1 for g in json.load(open(sys.argv[1]))["gaps"] if "through its waiters" in g.get("start_edge", "") or "host function ran" in g.get("start_edge", "")))' "$TMP/$1.rep/summary.json")
		[ "$starts" -ge 20 ] || die "$1: $starts gaps opened by the chain from the device's wakeup"
		echo "== $1 (anonymous host function; $starts gaps opened by the wake chain; probes from $live s)"
	else
		live=$(sed -n 's/^# probe .* host_fn .*host function .* live-since=\([0-9.]*\) .*/\1/p' \
			"$TMP/$1.script" | head -1)
		[ -n "$live" ] || die "$1: the host function was not probed: $(grep 'host' "$TMP/$1.script" | head -3)"
		echo "== $1 (host function probed from $live s)"
	fi
	cat "$TMP/$1.txt"
	python3 - "$TMP/$1.jsonl" "$TMP/$1.rep/summary.json" "$live" "$1" "$TMP/$1.script" <<'PY' || die "$1: the API tier against simcuda's truth"
import json, re, sys
live = int(float(sys.argv[3]) * 1e9)
kernels = sorted((k["start_ns"], k["end_ns"]) for k in map(json.loads, open(sys.argv[1])))
# The launching thread (the graph's) and its preempted intervals, from the script's lines.
ev = re.compile(r"\s*\S+\s+(\d+)/\d+\s+\[\d+\]\s+([\d.]+): (\S+) ")
unit = {"us": 1e3, "ms": 1e6, "s": 1e9}
launcher, pre = None, []
for line in open(sys.argv[5]):
    m = ev.match(line)
    if not m:
        continue
    if m.group(3) == "cuda:cuGraphLaunch":
        launcher = int(m.group(1))
    elif m.group(3) == "sched:offcpu" and " preempted " in line:
        d = re.search(r" dur=([\d.]+)(us|ms|s) ", line)
        a = int(round(float(m.group(2)) * 1e9))
        pre.append((int(m.group(1)), a, a + int(float(d.group(1)) * unit[d.group(2)])))
pre = [(a, b) for tid, a, b in pre if tid == launcher]
starved = lambda a, b: sum(max(0, min(y, b) - max(x, a)) for x, y in pre) >= 0.8 * (b - a)
runs = []
for a, b in kernels:
    if runs and (a - runs[-1][1] < 1000000 or starved(runs[-1][1], a)):
        runs[-1][2] += a - runs[-1][1] >= 1000000
        runs[-1][1] = max(runs[-1][1], b)
    else:
        runs.append([a, b, 0])
runs = [r for r in runs if r[0] > live]
t0, t1 = runs[0][0], runs[-1][1]
truth = [(a[1], b[0]) for a, b in zip(runs, runs[1:])]
nstarved = sum(r[2] for r in runs)
s = json.load(open(sys.argv[2]))
api = [(g["start_ns"], g["end_ns"]) for g in s["gaps"] if g["end_ns"] > t0 and g["start_ns"] < t1]
hit = lambda g, gs: any(x[0] < g[1] and x[1] > g[0] for x in gs)
recall = sum(hit(g, api) for g in truth) / len(truth)
precision = sum(hit(g, truth) for g in api) / len(api) if api else 0
clip = lambda g: max(0, min(g[1], t1) - max(g[0], t0))
busy_truth = sum(b - a for a, b, _ in runs) / (t1 - t0) * 100
busy_api = (1 - sum(clip(g) for g in api) / (t1 - t0)) * 100
print("%s: %d truth gaps (%d idle windows of a starved launching thread counted busy), %d api "
      "gaps: recall %.3f precision %.3f; busy %.1f%% (truth %.1f%%)"
      % (sys.argv[4], len(truth), nstarved, len(api), recall, precision, busy_api, busy_truth))
ok = len(truth) >= 20 and recall >= 0.95 and precision >= 0.95 and abs(busy_api - busy_truth) <= 3
sys.exit(0 if ok else 1)
PY
}

SIMCUDA_TRACE=$TMP/launch.jsonl timeout 120 "$GS" record -o "$TMP/launch.gsc" -- \
	nice -n -19 "$TMP/feeder" \
	"$LIBCUDA" xla 60 10 >"$TMP/launch.out" 2>"$TMP/launch.err" || {
	cat "$TMP/launch.out" "$TMP/launch.err"
	grep -q 'feeder: cu.*: undefined symbol' "$TMP/launch.err" && skip "the driver has no cuLaunchHostFunc"
	die "record"
}
check launch

# The host function out of the probes' reach: the device's wakeup chain alone.
SIMCUDA_TRACE=$TMP/anon.jsonl timeout 120 "$GS" record -o "$TMP/anon.gsc" -- \
	nice -n -19 "$TMP/feeder" "$LIBCUDA" xla 60 10 anon >"$TMP/anon.out" 2>"$TMP/anon.err" || {
	cat "$TMP/anon.out" "$TMP/anon.err"
	die "record (anon)"
}
check anon anon

# Attached, the host function anonymous too: the program waits for a line once it is ready;
# the recorder attaches first. The callback thread went to sleep before the recorder attached:
# its first wakeup, the first step's news, comes in an interval from the attach
# (OFFCPU_F_ASLEEP_BEFORE, since=watched in the script), woken by the device's thread.
coproc P { SIMCUDA_TRACE=$TMP/attach.jsonl exec nice -n -19 "$TMP/feeder" "$LIBCUDA" xla 60 10 hold anon; }
fpid=$P_PID
read -r -t 60 line <&"${P[0]}" || die "the feeder did not start"
pid=${line##* }
mkfifo "$TMP/err.fifo"
timeout 120 "$GS" record -o "$TMP/attach.gsc" -p "$pid" 2>"$TMP/err.fifo" &
rp=$!
exec {fd}<"$TMP/err.fifo"
read_until "$fd" "$TMP/attach.err" "*recording pid $pid *" ||
	{ cat "$TMP/attach.err"; die "no attach to the feeder"; }
cat <&$fd >>"$TMP/attach.err" &
echo go >&"${P[1]}"
cat <&"${P[0]}" >"$TMP/attach.out"
wait "$fpid" || die "the feeder failed"
wait "$rp" || { cat "$TMP/attach.err"; die "record -p failed"; }
check attach anon
# Attached after simcuda's stream threads started: each said again that it stands for its device
# before its next wakeup, so the report knew the device's wakeups for its interrupt (the gaps
# the wake chain opened, above) without a thread name.
grep -qE '^ +simcuda-dev0 +[0-9]+/'"$pid"' .*: cuda:gapscope_device_thread device=0 ' \
	"$TMP/attach.script" ||
	die "attached: no device-thread event: $(grep -m3 device_thread "$TMP/attach.script")"
grep -q 'simcuda-cb .* blocked .*since=watched .*waker=simcuda-dev' "$TMP/attach.script" ||
	die "no interval from the attach for the callback thread: $(grep 'since=watched' "$TMP/attach.script" | head -3)"
