#!/usr/bin/env bash
# Issue 4's acceptance run: gapscope record of zkengine on simcuda, real probes. The engine
# dlopens simcuda's libcuda.so.1 (late: attached while the loading thread is stopped), and the
# trace must hold exactly the kernel launches, malloc_trim calls and synchronize calls the engine
# reports, malloc_trim intervals within 1 ms of the engine's --truth, futex waits and off-CPU
# intervals (covering each long wait), CPU samples within 30% of the engine's CPU time over the
# sampling period, and no loss.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"

"$GS" record -o "$TMP/zk.gsc" -- "$ZK" --device sim --partitions 4 --log2n 10 --verify \
	--scenario tracker-trim --truth "$TMP/truth.jsonl" \
	>"$TMP/out" 2>"$TMP/err" || { cat "$TMP/out" "$TMP/err"; die "record failed"; }
cat "$TMP/out" "$TMP/err"
grep -q '^verification passed' "$TMP/out" || die "the engine did not verify under gapscope"
"$GS" script --no-stacks "$TMP/zk.gsc" >"$TMP/script" 2>"$TMP/script.err"
[ -n "$(other_warnings "$TMP/script.err")" ] && { cat "$TMP/script.err"; die "script warned"; }
count() { grep -c -- "$1" "$TMP/script" || true; }

engine_launches=$(sed -n 's/^launches: \([0-9]*\)$/\1/p' "$TMP/out")
[ -n "$engine_launches" ] && [ "$engine_launches" -gt 0 ] || die "the engine reported no launches"
# Launches decided in the kernel: every one counted, those that can end a gap in the trace.
assert_eq "$(launch_count "$TMP/script" ' fn=cuLaunchKernel ')" "$engine_launches" "launches counted"
assert_eq "$(launch_count "$TMP/script" ' kernel=\? ')" 0 "launches without a kernel name"
streamed=$(count 'cuda:cuLaunchKernel ')
[ "$streamed" -gt 0 ] && [ "$streamed" -lt "$engine_launches" ] ||
	die "$streamed of $engine_launches launches in the trace: the kernel decided nothing"
assert_eq "$(count 'cuda:cuLaunchKernel kernel=?')" 0 "launch records without a kernel name"
grep -q 'mmap .* libcuda.so.1 watched stopped-for-attach' "$TMP/script" ||
	die "simcuda was not attached late"

# malloc_trim: every call, each interval within 1 ms of the engine's own measurement.
engine_trims=$(sed -n 's/^malloc_trim calls: \([0-9]*\)$/\1/p' "$TMP/out")
[ -n "$engine_trims" ] && [ "$engine_trims" -gt 0 ] || die "the engine reported no malloc_trim"
assert_eq "$(count 'probe:malloc_trim ')" "$engine_trims" "malloc_trim events"
sed -n 's/.*"kind":"malloc_trim","tid":\([0-9]*\),.*"start_ns":\([0-9]*\),.*"ns":\([0-9]*\),.*/\1 \2 \3/p' \
	"$TMP/truth.jsonl" >"$TMP/truth.trims"
assert_eq "$(wc -l <"$TMP/truth.trims")" "$engine_trims" "malloc_trim lines in --truth"
grep 'probe:malloc_trim ' "$TMP/script" |
	sed 's#^ *.* \([0-9]*\)/[0-9]* *\[[0-9]*\] \([0-9.]*\): probe:malloc_trim dur=\([0-9.]*\)\(ms\|us\) .*#\1 \2 \3 \4#' \
	>"$TMP/trace.trims"
awk 'NR == FNR { s[$1 " " NR] = $2; d[$1 " " NR] = ($4 == "ms" ? $3 * 1e6 : $3 * 1e3); n = NR; next }
     { matched = 0
       for (k in s) {
	       split(k, t, " ")
	       if (t[1] != $1 || (s[k] * 1e9 - $2) > 1e6 || ($2 - s[k] * 1e9) > 1e6)
		       continue
	       diff = d[k] - $3; if (diff < 0) diff = -diff
	       printf "tid %s: trace %.3f ms, truth %.3f ms\n", $1, d[k] / 1e6, $3 / 1e6
	       if (diff > 1e6) { print "  off by more than 1 ms"; bad = 1 }
	       matched = 1
       }
       if (!matched) { print "tid " $1 ": truth interval at " $2 " not in the trace"; bad = 1 } }
     END { exit bad }' "$TMP/trace.trims" "$TMP/truth.trims" || die "malloc_trim intervals differ"

# Synchronize calls, per function (the engine counts after its teardown's syncs).
engine_sync() { sed -n "s/^sync calls $1: \([0-9]*\)$/\1/p" "$TMP/out"; }
assert_eq "$(count 'cuda:cuStreamSynchronize ')" \
	"$(engine_sync cuStreamSynchronize)" "cuStreamSynchronize"
assert_eq "$(count 'cuda:cuEventSynchronize ')" "$(engine_sync cuEventSynchronize)" \
	"cuEventSynchronize"
assert_eq "$(count 'cuda:cuCtxSynchronize\(_v2\)\? ')" "$(engine_sync cuCtxSynchronize)" \
	"cuCtxSynchronize"
assert_eq "$(count 'cuda:cuMemcpyHtoD\(_v2\)\? ')" "$(engine_sync cuMemcpyHtoD)" \
	"synchronous cuMemcpyHtoD"

[ "$(count 'futex:wait ')" -gt 0 ] || die "no futex waits"
[ "$(count 'sched:offcpu blocked ')" -gt 0 ] || die "no blocked off-CPU intervals"
[ "$(count 'cuda:cuStreamSynchronize .* ret=0 ')" -gt 0 ] || die "no stream synchronizations"
# Each long futex wait is off-CPU time of its thread, also where the scheduler's tracepoint
# missed the thread's switch-in (record_resume_unseen.sh).
python3 "$GAPSCOPE_ROOT/tests/record/offcpu_cover.py" "$TMP/script" 2 0.9 ||
	die "futex waits without their off-CPU time"

samples=$(count ' sample:')
echo "launches $engine_launches"
check_samples "$TMP/script" "$samples" 50 0.3
grep -q '^# losses total=0 ' "$TMP/script" || die "losses: $(grep '^# losses' "$TMP/script")"
grep -q '^# end ' "$TMP/script" || die "no end record"
echo ok
