#!/usr/bin/env bash
# gapscope report on tokengine's scenarios (the engine on tokio, simcuda, real probes), each
# against the engine's own truth file, with the binary as built and with its debug info
# stripped (symbols kept: the task probes and the names still work):
#   tracker-trim  malloc_trim first with share >= 0.8 (tests/report/report_check.py cause), at
#                 least 0.8 of its gaps' time in chains through the async tracker lock named
#                 by its symbol (`async tokengine::TRACKER`), every trim blamed at a time the
#                 truth lists that thread trimming under the lock;
#   fixed         malloc_trim at most a quarter of its gap time, and its gap time at most a
#                 quarter of tracker-trim's (both over the truths' steady state);
#   starved       among the causes other than preemption (the CPU-heavy tasks' workers share
#                 two CPUs with whatever else runs), on-CPU time in the CPU-heavy tasks'
#                 function, hog_crunch, first, reached through a task hop (a GPU task runnable
#                 until a busy worker polled it).
# The engine's trims are sized (tens of thousands of free chunks each, engine/tokio/src/main.rs),
# not timed; each check compares within one run: nothing is retried.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$BUILD/gapscope
TK=$BUILD/tokengine
CHECK="python3 $GAPSCOPE_ROOT/tests/report/report_check.py"
[ -x "$TK" ] || die "$TK not built"

# A copy stripped of its debug info, next to a link to simcuda, which it finds beside itself.
mkdir "$TMP/debug"
cp "$TK" "$TMP/debug/tokengine" && strip --strip-debug "$TMP/debug/tokengine"
ln -s "$(cd "$BUILD" && pwd)/simcuda" "$TMP/debug/simcuda"

for v in built debug; do
	bin=$TK
	[ $v = debug ] && bin=$TMP/debug/tokengine
	for s in tracker-trim fixed starved; do
		r=$TMP/$v-$s
		timeout 300 "$GS" record -o "$r.gsc" -- "$bin" --device sim --scenario "$s" \
			--truth "$r.truth" >"$r.out" 2>&1 || { cat "$r.out"; die "record $v $s"; }
		"$GS" report "$r.gsc" -o "$r.rep" --top 3 >"$r.txt" 2>"$r.err" ||
			{ cat "$r.err"; die "report $v $s"; }
		echo "== $v $s"
		grep 'busy:' "$r.out" || true
		sed -n '/^root causes/,/^longest gaps/p' "$r.txt"
		grep '^gap ' "$r.txt" || true
		[ -s "$r.err" ] && { cat "$r.err"; die "report $v $s warned"; }
	done
	r=$TMP/$v
	$CHECK cause "$r-tracker-trim.rep/summary.json" malloc_trim --truth "$r-tracker-trim.truth" \
		--root malloc_trim || die "$v tracker-trim"
	$CHECK lockshare "$r-tracker-trim.rep/summary.json" malloc_trim 'async tokengine::TRACKER' 0.8 ||
		die "$v tracker-trim: chains through the async tracker lock"
	$CHECK holders "$r-tracker-trim.rep/summary.json" "$r-tracker-trim.truth" ||
		die "$v tracker-trim: holders"
	$CHECK share "$r-fixed.rep/summary.json" malloc_trim 0.25 "$r-fixed.truth" || die "$v fixed"
	$CHECK ratio "$r-fixed.rep/summary.json" "$r-tracker-trim.rep/summary.json" \
		"$r-fixed.truth" "$r-tracker-trim.truth" || die "$v fixed against tracker-trim"
	$CHECK cause "$r-starved.rep/summary.json" on_cpu --truth "$r-starved.truth" \
		--without-preemption --function hog_crunch || die "$v starved"
	grep -q 'runnable, polled by' "$r-starved.rep/summary.json" ||
		die "$v starved: no chain through a task waiting for a worker"
done
echo "ok"
