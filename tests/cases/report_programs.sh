#!/usr/bin/env bash
# gapscope report on GPU programs not shaped like zkengine (tests/report/feeder.c on simcuda,
# real probes): a feeder paced by nanosleep (cause sleep), one that reads its input from a FIFO
# another recorded process fills every 15 ms (the writer's sleep, through the pipe), one that waits on a condition variable for a helper thread that
# computes each input (on_cpu, through the cond wait), and one that replays a captured graph
# with CPU work in between (on_cpu; the launches made while capturing are not GPU work). Each
# expected cause must rank first and explain at least half of the gap time.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/report/report_check.py"
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

# run NAME MODE [FILE]: 20 iterations, 15 ms apart. FILE's writer, where set in WRITER (a
# command), runs beside the feeder as a child of the recorded shell (--follow-children).
run() {
	local rc=0
	if [ -n "${WRITER:-}" ]; then
		timeout 120 "$GS" record --follow-children -o "$TMP/$1.gsc" -- sh -c \
			"$WRITER >'$3' & exec '$TMP/feeder' '$LIBCUDA' '$2' 20 15 '$3'" \
			>"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	else
		timeout 120 "$GS" record -o "$TMP/$1.gsc" -- "$TMP/feeder" "$LIBCUDA" "$2" 20 15 \
			${3:-} >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		cat "$TMP/$1.out" "$TMP/$1.err"
		grep -q 'feeder: cu.*: undefined symbol' "$TMP/$1.err" && return 77
		die "record $1"
	fi
	"$GS" report "$TMP/$1.gsc" -o "$TMP/$1.rep" --top 2 >"$TMP/$1.txt" ||
		die "report $1"
	echo "== $1"
	cat "$TMP/$1.txt"
	n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['gaps']))" \
		"$TMP/$1.rep/summary.json")
	# 20 submissions after the first: 19 gaps of about 15 ms each (graph: 20).
	[ "$n" -ge 17 ] && [ "$n" -le 21 ] || die "$1: $n gaps, expected 19"
}

run sleep sleep
$CHECK cause "$TMP/sleep.rep/summary.json" sleep --min 0.5 || die "sleep feeder"
grep -q '"function":"clock_nanosleep"\|"function":"nanosleep"' "$TMP/sleep.rep/summary.json" ||
	die "sleep feeder: the sleep is not named"

mkfifo "$TMP/in.fifo"
# The writer is another process, recorded too: its 15 ms sleeps are what the reads wait for,
# and the chain goes from the feeder's read of the pipe to the writer's sleep.
WRITER="python3 -c 'import sys, time
for i in range(25):
    time.sleep(0.015)
    sys.stdout.buffer.write(bytes(4096))
    sys.stdout.flush()'" run file file "$TMP/in.fifo"
$CHECK cause "$TMP/file.rep/summary.json" sleep --min 0.5 || die "file feeder"
grep -q '"kind":"io","ns":[0-9]*,"function":"read (pipe)","detail":"woken by python3 (pid ' \
	"$TMP/file.rep/summary.json" || die "file feeder: no chain from the pipe's read to its writer"

run helper helper
$CHECK cause "$TMP/helper.rep/summary.json" on_cpu --min 0.5 || die "helper feeder"
grep -q '^feeder;.*\[cond [^]]*\];--;\[woken by helper\];.*compute_input' \
	"$TMP/helper.rep/gaps/all.folded" || die "helper feeder: no chain through the cond wait"

rc=0
run graph graph || rc=$?
if [ "$rc" -eq 77 ]; then
	echo "graph replay: simcuda lacks the graph API, not checked"
else
	$CHECK cause "$TMP/graph.rep/summary.json" on_cpu --min 0.5 || die "graph feeder"
	# A gap before every replay, the first included: had the captured launches been taken
	# for work, the device would look busy from the capture to the first replay.
	[ "$n" -eq 20 ] || die "graph feeder: $n gaps, expected one before each of 20 replays"
	grep -q 'cuGraphLaunch by feeder' "$TMP/graph.rep/summary.json" ||
		die "graph feeder: gaps not ended by graph launches"
fi
