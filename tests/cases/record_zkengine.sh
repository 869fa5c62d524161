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

# malloc_trim: every call, each interval within 1 ms of the engine's own measurement (but for
# the time the thread was off the CPU between them).
engine_trims=$(sed -n 's/^malloc_trim calls: \([0-9]*\)$/\1/p' "$TMP/out")
[ -n "$engine_trims" ] && [ "$engine_trims" -gt 0 ] || die "the engine reported no malloc_trim"
assert_eq "$(count 'probe:malloc_trim ')" "$engine_trims" "malloc_trim events"
sed -n 's/.*"kind":"malloc_trim","tid":\([0-9]*\),.*"start_ns":\([0-9]*\),.*"ns":\([0-9]*\),.*/\1 \2 \3/p' \
	"$TMP/truth.jsonl" >"$TMP/truth.trims"
assert_eq "$(wc -l <"$TMP/truth.trims")" "$engine_trims" "malloc_trim lines in --truth"
# Each truth interval (the engine's clock read before and after the call) holds one probed
# interval of its thread, whose edges are within 1 ms of its own but for the time the thread
# spent off the CPU between them (a preemption right after the engine read its clock).
python3 - "$TMP/script" "$TMP/truth.trims" <<'PY' || die "malloc_trim intervals differ"
import re, sys
script, truth = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
unit = {"ms": 1e6, "us": 1e3, "s": 1e9}
def ns(v, u):
    return float(v) * unit[u]
trims, off = [], []
for m in re.finditer(r"^\s*\S+\s+(\d+)/\d+\s+\[\d+\] ([0-9.]+): (probe:malloc_trim|sched:offcpu) .*?dur=([0-9.]+)(ms|us|s) ", script, re.M):
    tid, t, what, d = int(m.group(1)), round(float(m.group(2)) * 1e9), m.group(3), ns(m.group(4), m.group(5))
    (trims if what == "probe:malloc_trim" else off).append((tid, t, t + d))
def offcpu(tid, a, b):
    return sum(max(0, min(b, e) - max(a, s)) for t, s, e in off if t == tid)
bad = 0
for line in filter(None, truth):
    tid, t0, n = map(int, line.split())
    t1 = t0 + n
    held = [(s, e) for t, s, e in trims if t == tid and s >= t0 - 1e4 and e <= t1 + 1e4]
    if len(held) != 1:
        print("tid %d: the truth interval at %d holds %d probed ones" % (tid, t0, len(held)))
        bad = 1
        continue
    s, e = held[0]
    away = offcpu(tid, t0, s) + offcpu(tid, e, t1)
    print("tid %d: trace %.3f ms, truth %.3f ms, %.3f ms off the CPU at its edges" %
          (tid, (e - s) / 1e6, n / 1e6, away / 1e6))
    if (s - t0) + (t1 - e) > 1e6 + away:
        print("  off by more than 1 ms")
        bad = 1
sys.exit(bad)
PY

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

# The events the recorder says it wrote are those the report reads (the launched command's name,
# which the recorder read from /proc before its exec, among them).
said=$(sed -n 's/^gapscope: \([0-9]*\) events, .* written to .*/\1/p' "$TMP/err")
"$GS" report "$TMP/zk.gsc" -o "$TMP/report" >"$TMP/report.txt"
read=$(sed -n 's/^duration [0-9]* ms, \([0-9]*\) events,.*/\1/p' "$TMP/report.txt")
[ -n "$said" ] || die "the recorder said no event count"
assert_eq "$read" "$said" "events the report read against those the recorder wrote"
echo "events: $said written, $read read"
echo ok
