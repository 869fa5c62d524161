#!/usr/bin/env bash
# gapscope report on zkengine's pathological scenarios (simcuda, real probes): each scenario's
# expected root cause ranks first with its share of gap time (tests/report/report_check.py
# says how the share is judged), its chain passes through the expected lock; fixed has at most
# a quarter of tracker-trim's gap time; tracker-trim's blamed holders agree with the engine's
# own truth file (its gaps against the truth: report_truth.sh); each device's idle split sums to
# its idle time (tests/report/split_check.py). Each check compares within one run: nothing is
# retried.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/report/report_check.py"
need_built "$ZK"

run() {
	local s=$1
	timeout 300 "$GS" record -o "$TMP/$s.gsc" -- "$ZK" --device sim --scenario "$s" --truth "$TMP/$s.truth" \
		>"$TMP/$s.out" 2>"$TMP/$s.err" || { cat "$TMP/$s.out" "$TMP/$s.err"; die "record $s"; }
	"$GS" report "$TMP/$s.gsc" -o "$TMP/$s.rep" --top 3 >"$TMP/$s.txt" 2>"$TMP/$s.rerr" ||
		{ cat "$TMP/$s.rerr"; die "report $s"; }
	echo "== $s"
	sed -n '1,/^longest gaps/p' "$TMP/$s.txt"
	grep '^gap ' "$TMP/$s.txt" || true
	[ -s "$TMP/$s.rerr" ] && { cat "$TMP/$s.rerr"; die "report $s warned"; }
	[ -s "$TMP/$s.rep/gaps/all.folded" ] || [ "$s" = fixed ] || die "$s: no folded stacks"
	# Every idle ns in one part: setup, gaps, (under the floor,) tail sum to the idle time.
	python3 "$GAPSCOPE_ROOT/tests/report/split_check.py" sum "$TMP/$s.rep/summary.json" ||
		die "$s: idle split"
	return 0
}

for s in tracker-trim fixed gpu-lock-wide starved pageable oversubscribed; do
	run "$s"
done

$CHECK cause "$TMP/tracker-trim.rep/summary.json" malloc_trim --truth "$TMP/tracker-trim.truth" \
	--lock tracker --root malloc_trim || die "tracker-trim"
$CHECK holders "$TMP/tracker-trim.rep/summary.json" "$TMP/tracker-trim.truth" ||
	die "tracker-trim: holders"
$CHECK ratio "$TMP/fixed.rep/summary.json" "$TMP/tracker-trim.rep/summary.json" \
	"$TMP/fixed.truth" "$TMP/tracker-trim.truth" || die "fixed"
# The holder's host work under the GPU lock is preempted by the engine's own CPU-bound threads
# and by whatever else runs on a 2-CPU machine: the report blames that time on preemption, the
# engine's truth counts it as hold time. Judged among the other causes.
$CHECK cause "$TMP/gpu-lock-wide.rep/summary.json" on_cpu --truth "$TMP/gpu-lock-wide.truth" \
	--without-preemption || die "gpu-lock-wide"
# Its lock: the per-GPU mutex lives in a heap struct, named by the function that waits on it.
grep -q '\[lock by [^]]*gpu[^]]*\]' "$TMP/gpu-lock-wide.rep/gaps/all.folded" ||
	die "gpu-lock-wide: no chain through a lock named by a gpu function"
$CHECK cause "$TMP/starved.rep/summary.json" on_cpu --truth "$TMP/starved.truth" \
	--without-preemption || die "starved"
grep -q '\[cond ' "$TMP/starved.rep/gaps/all.folded" || die "starved: no chain through a cond wait"
# The copying thread preempted by the engine's own threads (or anything else on a loaded
# machine) is preemption in the report and copy time in the truth: judged among the others.
$CHECK cause "$TMP/pageable.rep/summary.json" cuda --truth "$TMP/pageable.truth" \
	--without-preemption || die "pageable"
grep -q '"function":"cuMemcpyHtoD' "$TMP/pageable.rep/summary.json" ||
	die "pageable: the synchronous copy is not named"
$CHECK cause "$TMP/oversubscribed.rep/summary.json" preempted --truth "$TMP/oversubscribed.truth" ||
	die "oversubscribed"

# Folded stacks of tracker-trim: the engine functions that waited on the tracker lock, and those
# that called malloc_trim, past the hop.
grep -q 'gpu_worker_main.*\[lock [^]]*tracker[^]]*\];--;\[held by [^]]*\].*process_partition_result' \
	"$TMP/tracker-trim.rep/gaps/all.folded" || die "tracker-trim: folded stacks lack the chain"
