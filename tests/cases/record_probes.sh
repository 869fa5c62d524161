#!/usr/bin/env bash
# gapscope record on a target with known behaviour (tests/record/target.c), which loads a stand-in
# libcuda.so.1 (tests/record/fakecuda.c) late with dlopen: every driver call it makes is in the
# trace with its arguments and kernel names, none it does not make; malloc_trim calls, the
# contended mutex (futex wait, its owner, the waker), samples, thread names and the exit status
# are all there, and nothing is lost. The target runs SCHED_FIFO: on a loaded machine the tick
# sees a CFS task less often than its CPU time says (record_sampler.sh says why), and the sample
# count is judged against that CPU time.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes

mkdir -p "$TMP/lib"
$CC -O2 -g -fno-omit-frame-pointer -shared -fPIC -o "$TMP/lib/libcuda.so.1" \
	tests/record/fakecuda.c
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/target" tests/record/target.c -ldl

N=25 S=4 T=6
rc=0
"$GS" record --all-launches -o "$TMP/t.gsc" -- chrt -f 1 "$TMP/target" --dlopen "$TMP/lib/libcuda.so.1" --launches $N \
	--syncs $S --trims $T --contend --burn 0.5 --exit 3 >"$TMP/out" 2>"$TMP/err" || rc=$?
cat "$TMP/out" "$TMP/err"
assert_eq "$rc" 3 "gapscope's exit status (the target's)"
"$GS" script "$TMP/t.gsc" >"$TMP/script" 2>"$TMP/script.err"
"$GS" script --no-stacks --no-meta "$TMP/t.gsc" >"$TMP/events"
[ -n "$(other_warnings "$TMP/script.err")" ] && { cat "$TMP/script.err"; die "script warned"; }

val() { sed -n "s/^$1=//p" "$TMP/out"; }
count() { grep -c -- "$1" "$TMP/events" || true; }

# Late load: the library was mapped after start, the thread stopped until the probes were live.
grep -q 'mmap .* libcuda.so.1 watched stopped-for-attach' "$TMP/events" ||
	die "no stop-for-attach of the late libcuda"
grep -q "^# probe .* cuda $TMP/lib/libcuda.so.1:cuLaunchKernel live-since=" "$TMP/script" ||
	die "no live cuLaunchKernel probe"
grep -q 'cuCtxGetCurrent' "$TMP/script" && die "cuCtxGetCurrent must not be probed"

# Launches with their arguments and kernel names (module function; library kernel -> function).
assert_eq "$(count 'cuda:cuLaunchKernel kernel=gs_test_kernel .* grid=(7,8,9) block=(32,1,1) shmem=48 stream=0x1234 ')" $N "cuLaunchKernel events"
assert_eq "$(count 'cuda:cuLaunchKernel_ptsz kernel=gs_test_kernel ')" $N "cuLaunchKernel_ptsz events"
assert_eq "$(count 'cuda:cuLaunchKernelEx kernel=gs_lib_kernel .* grid=(11,12,13) block=(64,2,1) shmem=96 stream=0x5678 ')" $N "cuLaunchKernelEx events"
assert_eq "$(count 'cuda:cuLaunch')" $((3 * N)) "all launch events"
# The recorder's own counts (every launch, whatever the trace holds).
assert_eq "$(launch_count "$TMP/script" ' fn=cuLaunchKernel kernel=gs_test_kernel.* stream=0x1234 ')" $N \
	"cuLaunchKernel counted"
assert_eq "$(launch_count "$TMP/script" ' fn=cuLaunchKernelEx kernel=gs_lib_kernel.* stream=0x5678 ')" $N \
	"cuLaunchKernelEx counted"
assert_eq "$(launch_count "$TMP/script" .)" $((3 * N)) "launches counted"
grep -q '^# launches total=.* all-launches$' "$TMP/script" || die "the counts do not say --all-launches"
assert_eq "$(count 'cuda:cuModuleGetFunction name=gs_test_kernel ')" 1 "cuModuleGetFunction"
assert_eq "$(count "func=$(val lib_kernel_function) kernel=.* name=gs_lib_kernel")" 1 "cuKernelGetFunction"

# Synchronization: entry and return in one event, with the result.
assert_eq "$(count 'cuda:cuStreamSynchronize stream=0x1234 dur=.* ret=0 ')" $S "cuStreamSynchronize"
assert_eq "$(count 'cuda:cuCtxSynchronize dur=.* ret=0 ')" $S "cuCtxSynchronize"
assert_eq "$(count 'cuda:cuCtxSynchronize_v2 ctx=0xc0 dur=.* ret=0 ')" $S "cuCtxSynchronize_v2"
assert_eq "$(count 'cuda:cuEventQuery event=0xe0 .* ret=600 ')" $S "cuEventQuery (not ready)"
assert_eq "$(count 'cuda:cuMemcpyHtoDAsync_v2 bytes=4096 stream=0x1234 ')" $S "cuMemcpyHtoDAsync_v2"

# malloc_trim: every call, as an interval with its caller.
assert_eq "$(count 'probe:malloc_trim dur=')" $T "malloc_trim events"

# The contended mutex: the waiter's futex wait names the holder as owner; it was woken by it.
holder=$(val holder_tid) waiter=$(val waiter_tid) lock=$(val lock)
grep -q "^ *gs-waiter *$waiter/[0-9]* .* futex:wait uaddr=$lock op=WAIT .* owner=$holder " \
	"$TMP/events" || die "no futex wait of $waiter on $lock owned by $holder"
grep -q "^ *gs-waiter *$waiter/.* sched:offcpu blocked state=0x[0-9a-f]* in=futex .* waker=target/$holder/" "$TMP/events" ||
	die "no off-CPU interval of the waiter, inside its futex wait, woken by the holder"

# Samples: the target's CPU time (utime + stime from wait4) over the period one sample stands
# for (the sampler record), within 30%.
samples=$(count ' sample:')
check_samples "$TMP/script" "$samples" 101 0.3

# Thread names over time, exit, clean end, no losses.
grep -q 'comm gs-waiter' "$TMP/events" || die "thread rename not recorded"
grep -q '^# exit pid=[0-9]* status=0x300 ' "$TMP/script" || die "exit status not recorded"
grep -q '^# losses total=0 ' "$TMP/script" || die "losses: $(grep '^# losses' "$TMP/script")"
grep -q '^# end events=' "$TMP/script" || die "no end record"
grep -q "^# map pid=$(val pid) .* r-x .*$TMP/target build-id=[0-9a-f]\{40\}" "$TMP/script" ||
	die "no executable mapping with build-id"
echo "ok: $((3 * N)) launches, $T trims, $samples samples"
