#!/usr/bin/env bash
# Blame across processes and waits other than futex (tests/record/workers.c on simcuda, real
# probes): a GPU feeder reads its batches from two worker processes, forked before anything is
# recorded, that compute each batch in augment_batch; the batches come through a pipe, a Unix
# socket pair or an eventfd. Recorded in launch mode with --follow-children, and attached with
# -p to the parent after the workers exist (the recorder takes its descendants). Each time the
# report's top cause is on_cpu in augment_batch with share >= 0.8 of the gap time that is not
# CPU contention (preemption: the machine's load, or the workers' own), and its longest such
# gap's chain goes from the feeder's wait, named with its system call and file kind, to a
# data_worker thread of another process. The program runs at nice -19 so that the machine's
# other work takes little of its CPU time. With one -p, library calls made only by descendants
# (a child that exists at the attach, and three forked after it) are all in the trace: every
# malloc_trim and cuStreamSynchronize of each: those forked later call once the recorder says
# their probes are in place, and the trace says how long each ran without them.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
$CC -O2 -g -fno-omit-frame-pointer -Iengine -o "$TMP/workers" tests/record/workers.c -ldl ||
	die "cannot build the workers program"

# check NAME LINK: the report of NAME.gsc names augment_batch, through a wait named LINK.
check() {
	"$GS" report -o "$TMP/$1.rep" "$TMP/$1.gsc" >"$TMP/$1.txt" 2>"$TMP/$1.rerr" ||
		{ cat "$TMP/$1.rerr"; die "report $1"; }
	python3 - "$TMP/$1.rep/summary.json" "$2" "$1" <<'PY' || { cat "$TMP/$1.txt"; die "$1"; }
import json, sys
s = json.load(open(sys.argv[1]))
link, name = sys.argv[2], sys.argv[3]
causes = [c for c in s["causes"] if c["kind"] != "preempted"]
total = sum(c["ns"] for c in causes)
assert causes, "%s: no causes but preemption" % name
top = causes[0]
share = top["ns"] / total
assert top["kind"] == "on_cpu" and top["function"].startswith("augment_batch"), \
    "%s: top cause %s %s" % (name, top["kind"], top["function"])
assert share >= 0.8, "%s: augment_batch %.2f of the gap time" % (name, share)
feeder = [g for g in s["gaps"] if g["chain"] and g["chain"][0]["comm"] == "gpu_feeder" and
          any(l["comm"] == "data_worker" for l in g["chain"])]
assert feeder, "%s: no chain from the feeder to a worker" % name
g = max(feeder, key=lambda g: g["duration_ns"])
first = g["chain"][0]
assert first["function"] == link and first["kind"] == "io", \
    "%s: the feeder's wait is %s %s" % (name, first["kind"], first["function"])
assert "woken by data_worker (pid " in first["detail"], "%s: %s" % (name, first["detail"])
print("%s: augment_batch %.2f of the gap time (%d of %d gaps through %s)" % (
    name, share, len(feeder), len(s["gaps"]), link))
PY
}

# attached NAME MODE CGROUP HOW: runs the program (in CGROUP when given) until its workers
# exist and wait, records it attached (HOW: -p for the parent, pids for the parent and both
# workers given with -p each, cgroup for --cgroup CGROUP), lets it run, and waits for both.
attached() {
	local name=$1 mode=$2 cg=$3 how=$4 line pid rp wpid fd args
	coproc W { [ -z "$cg" ] || echo $BASHPID >"$cg/cgroup.procs"
		exec nice -n -19 "$TMP/workers" "$LIBCUDA" "$mode" 40 20 wait; }
	wpid=$W_PID
	read -r -t 60 line <&"${W[0]}" || die "$name: the program did not start"
	pid=${line#ready }
	case $how in
	-p) args=(-p "$pid") ;;
	pids) args=(-p "$pid"); for c in $(cat /proc/"$pid"/task/"$pid"/children); do args+=(-p "$c"); done ;;
	cgroup) args=(--cgroup "$cg") ;;
	esac
	# Its stderr through a FIFO, read line by line until it says it is recording.
	mkfifo "$TMP/$name.fifo"
	"$GS" record -o "$TMP/$name.gsc" "${args[@]}" 2>"$TMP/$name.fifo" &
	rp=$!
	exec {fd}<"$TMP/$name.fifo"
	read_until "$fd" "$TMP/$name.err" "*recording pid * and 2 more process(es)*" ||
		{ cat "$TMP/$name.err"; die "$name: no attach to the three processes"; }
	cat <&$fd >>"$TMP/$name.err" &
	echo go >&"${W[1]}"
	cat <&"${W[0]}" >"$TMP/$name.out"
	wait "$wpid" || die "$name: the program failed"
	wait "$rp" || { cat "$TMP/$name.err"; die "record $name"; }
	grep -q "batches 40" "$TMP/$name.out" || die "$name: the program did not finish"
}

for mode in pipe socket eventfd; do
	link="read ($mode)"
	# Launch mode: the workers are forked under the recorder.
	timeout 120 nice -n -19 "$GS" record --follow-children -o "$TMP/$mode.gsc" -- \
		"$TMP/workers" "$LIBCUDA" "$mode" 40 20 >"$TMP/$mode.out" 2>"$TMP/$mode.err" ||
		{ cat "$TMP/$mode.out" "$TMP/$mode.err"; die "record $mode"; }
	check "$mode" "$link"

	# Attached: the workers exist, waiting for the word, before the recorder starts.
	attached "$mode.p" "$mode" "" -p
	check "$mode.p" "$link"
done

# Several -p (the parent and each worker), and --cgroup with the program in a cgroup of its own.
attached pids pipe "" pids
check pids "read (pipe)"
grep -q "recording pid .* and 2 more process(es) (0 of them descendants)" "$TMP/pids.err" ||
	die "pids: the three -p were not taken as given"
cg=
for h in /sys/fs/cgroup/unified /sys/fs/cgroup/pids /sys/fs/cgroup; do
	[ -f "$h/cgroup.procs" ] && mkdir "$h/gapscope-test-$$" 2>/dev/null && cg=$h/gapscope-test-$$ && break
done
[ -n "$cg" ] || die "cannot make a cgroup"
attached cgroup pipe "$cg" cgroup
rmdir "$cg"
check cgroup "read (pipe)"
# One -p: the descendants' library calls, none of them the parent's.
$CC -O2 -g -o "$TMP/treecalls" tests/record/treecalls.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
coproc T { exec "$TMP/treecalls" "$TMP/libcuda.so.1" 50 3; }
tpid=$T_PID
read -r -t 60 line <&"${T[0]}" || die "treecalls did not start"
mkfifo "$TMP/tree.fifo"
"$GS" record -v -o "$TMP/tree.gsc" -p "${line#ready }" 2>"$TMP/tree.fifo" &
rp=$!
exec {fd}<"$TMP/tree.fifo"
read_until "$fd" "$TMP/tree.err" "*recording pid * and 1 more process(es)*" ||
	{ cat "$TMP/tree.err"; die "tree: no attach to the parent and its child"; }
# Each child forked from now on calls once the recorder says its probes are in place.
echo go >&"${T[1]}"
for i in 1 2 3; do
	read -r -t 60 line <&"${T[0]}" && [ "${line%% *}" = forked ] || die "tree: no child forked"
	read_until "$fd" "$TMP/tree.err" "*pid ${line#forked }: * probe links after *" ||
		{ cat "$TMP/tree.err"; die "tree: no probes for child ${line#forked }"; }
	echo probed >&"${T[1]}"
done
cat <&$fd >>"$TMP/tree.err" &
cat <&"${T[0]}" >"$TMP/tree.out"
wait "$tpid" || die "treecalls failed"
wait "$rp" || { cat "$TMP/tree.err"; die "record tree"; }
want=$(sed -n 's/^calls=//p' "$TMP/tree.out")
assert_eq "$want" 200 "treecalls' calls"
"$GS" script --no-stacks --no-meta "$TMP/tree.gsc" >"$TMP/tree.events"
trims=$(grep -c ' probe:malloc_trim ' "$TMP/tree.events" || true)
syncs=$(grep -c ' cuda:cuStreamSynchronize' "$TMP/tree.events" || true)
echo "one -p, calls of descendants: $trims of $want malloc_trim, $syncs of $want cuStreamSynchronize"
assert_eq "$trims" "$want" "one -p: the descendants' malloc_trim calls"
assert_eq "$syncs" "$want" "one -p: the descendants' cuStreamSynchronize calls"
"$GS" script --no-stacks "$TMP/tree.gsc" >"$TMP/tree.script"
grep -q '^# losses total=0 ' "$TMP/tree.script" || die "tree: events lost"
assert_eq "$(grep -c '^# unprobed pid=[0-9]* why=fork for_ns=[0-9]* links=[1-9]' "$TMP/tree.script")" 3 \
	"tree: the windows of the children forked after the attach"

echo "ok: the workers' augment_batch is named through pipe, socket and eventfd waits, with -p, several -p and --cgroup"
