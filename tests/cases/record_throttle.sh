#!/usr/bin/env bash
# A CPU quota's throttling is not preemption. A simcuda feeder (tests/report/feeder.c, cpu mode:
# 0.5 ms of its own CPU time before each submission, under the 1 ms a gap needs, so its gaps are
# the time it could not run; 0.6 ms of kernels a step) needs about half a CPU. In a cgroup the
# test makes with a 20% quota (20 ms per 100 ms, the v1 cpu controller or cgroup v2's cpu.max),
# recorded under launch mode and with -p: the top cause is `throttled`, named by the cgroup's path
# and quota, with at least 0.8 of the gap time, and the summary says what it would need. The same
# feeder without a quota beside two CPU hogs pinned to its CPUs (in a cgroup of 10 times the
# weight of any other, so that they hold them) is `preempted` by the hogs; pinned to one CPU
# beside one hog, preempted by it with the affinity named (the switch-out records the CPUs the
# thread was allowed). Holds beside two more CPU hogs (make check's): the quota leaves the feeder
# most of the time, and the hogs outweigh everything else on their CPUs.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"

# The CPU controller: cgroup v1's, else v2's where v2 has it.
CG_NAME=gs_throttle_$$
if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	CG=/sys/fs/cgroup/cpu/$CG_NAME
	HOGS=/sys/fs/cgroup/cpu/gs_hogs_$$
	HOG_WEIGHT="cpu.shares 10240"
	QUOTA_NAME="cpu.cfs_quota_us 20 ms per 100 ms"
	ACCT=
	[ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ] && ACCT=/sys/fs/cgroup/cpuacct/$CG_NAME
else
	V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	if [ -z "$V2" ] || ! grep -qw cpu "$V2/cgroup.controllers"; then
		[ -n "${CI:-}" ] && die "no cgroup CPU controller (v1 cpu, or v2 with cpu) in CI"
		skip "no cgroup CPU controller (v1 cpu, or v2 with cpu)"
	fi
	grep -qw cpu "$V2/cgroup.subtree_control" || echo +cpu >"$V2/cgroup.subtree_control" ||
		die "cannot enable the cpu controller below $V2"
	CG=$V2/$CG_NAME
	HOGS=$V2/gs_hogs_$$
	HOG_WEIGHT="cpu.weight 1000"
	QUOTA_NAME="cpu.max 20 ms per 100 ms"
	ACCT=
fi

PIDS=()
# stop: the processes started (a feeder, hogs) ended and waited for.
stop() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
teardown() {
	stop
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
	[ -d "$HOGS" ] && rmdir "$HOGS" 2>/dev/null || true
	[ -n "$ACCT" ] && [ -d "$ACCT" ] && rmdir "$ACCT" 2>/dev/null || true
}
trap 'rc=$?; teardown; (exit $rc); cleanup' EXIT

mkdir "$CG" || die "cannot make $CG"
# Ten times the weight of others as well (a container's CPU request, beside its limit): on a
# loaded machine the quota, not the competition, is what stops it.
echo "${HOG_WEIGHT#* }" >"$CG/${HOG_WEIGHT% *}"
if [ -f "$CG/cpu.max" ]; then
	echo "20000 100000" >"$CG/cpu.max"
else
	echo 100000 >"$CG/cpu.cfs_period_us"
	echo 20000 >"$CG/cpu.cfs_quota_us"
	# simcuda's device threads run at real-time priority where allowed, as a GPU does not
	# compete for the host's CPUs: give the group real-time time for them, else they fall back
	# to normal priority and the quota throttles the modelled GPU too.
	[ -f "$CG/cpu.rt_runtime_us" ] && echo 100000 >"$CG/cpu.rt_runtime_us"
fi
[ -n "$ACCT" ] && mkdir "$ACCT"
# The hogs' own cgroup, at 10 times the weight of a session's (autogroup) or a cgroup's: they
# hold their CPUs whatever else runs on the machine.
mkdir "$HOGS" && echo "${HOG_WEIGHT#* }" >"$HOGS/${HOG_WEIGHT% *}" ||
	die "cannot make the hogs' cgroup $HOGS"
# hog CPU: a CPU hog pinned to CPU, in the hogs' cgroup.
hog() {
	sh -c "echo \$\$ >$HOGS/cgroup.procs; exec taskset -c $1 $TMP/cpuhog" &
	PIDS+=($!)
}
# What a shell writes to join the cgroup(s) before its exec.
JOIN="echo \$\$ >$CG/cgroup.procs"
[ -n "$ACCT" ] && JOIN="$JOIN; echo \$\$ >$ACCT/cgroup.procs"

$CC -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" tests/report/feeder.c \
	-ldl || die "cannot build the feeder"
printf 'int main(void) { for (;;) ; }\n' | $CC -O1 -x c -o "$TMP/cpuhog" - ||
	die "cannot build the hog"
NCPUS=$(nproc)
export SIMCUDA_TIME_SCALE=0.2 # 0.6 ms of kernels a step: the feeder needs ~0.45 CPU

# check NAME KIND FUNCTION_ERE MIN: the top cause is KIND, its function matches the ERE, it
# holds at least MIN of all the gap time.
check() {
	"$GS" report -f "$TMP/$1.gsc" -o "$TMP/$1.rep" >"$TMP/$1.txt" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.err"; die "report $1"; }
	echo "== $1"
	sed -n '1,/^longest/p' "$TMP/$1.txt"
	python3 - "$TMP/$1.rep/summary.json" "$2" "$3" "$4" <<'PY' || die "$1: wrong top cause"
import json, re, sys
s = json.load(open(sys.argv[1]))
kind, fn, least = sys.argv[2], sys.argv[3], float(sys.argv[4])
if len(s['gaps']) < 10:
    sys.exit('%d gaps: too few to judge' % len(s['gaps']))
top = s['causes'][0]
if top['kind'] != kind or not re.search(fn, top['function']):
    sys.exit('top cause %s %r, expected %s matching %r' % (top['kind'], top['function'], kind, fn))
# Every process a cause of this kind names counts (two hogs of one name are two processes).
share = sum(c['share'] for c in s['causes'] if c['kind'] == kind and re.search(fn, c['function']))
if share < least:
    sys.exit('%s %s: share %.3f, expected >= %.2f' % (kind, fn, share, least))
print('%s %s: share %.3f of %d gaps' % (kind, top['function'], share, len(s['gaps'])))
PY
}

# check_quota NAME: the what-if line, and its numbers: has 0.20, needs more, periods throttled.
check_quota() {
	grep -q "^CPU quota: cgroup /$CG_NAME ($QUOTA_NAME) throttled [0-9]* of [0-9]* periods;.* needs \(≈\|≥\) [0-9.]* CPU at its peak second ([0-9.]* on average), has 0.20$" \
		"$TMP/$1.txt" || die "$1: no what-if line"
	python3 - "$TMP/$1.rep/summary.json" <<'PY' || die "$1: wrong what-if"
import json, sys
q = json.load(open(sys.argv[1]))['quota']
if abs(q['has_cpus'] - 0.2) > 1e-6 or q['peak_cpus'] <= 0.25 or q['nr_throttled'] < 5:
    sys.exit('quota %r: expected has 0.20, a peak above 0.25, >= 5 periods throttled' % q)
PY
}

THROTTLED_FN="^cgroup /$CG_NAME \\($QUOTA_NAME\\)\$"
QUOTA_RE=${THROTTLED_FN//./\\.}

# 1. Launch mode: the shell joins the cgroup, then becomes the feeder.
timeout 120 "$GS" record -o "$TMP/launch.gsc" -- sh -c "$JOIN; exec $TMP/feeder $LIBCUDA cpu 1500 0.5" \
	>"$TMP/launch.out" 2>"$TMP/launch.err" || { cat "$TMP/launch.err"; die "record launch"; }
"$GS" script "$TMP/launch.gsc" >"$TMP/launch.script"
grep -q "^# cgroup pid=[0-9]* id=[0-9]* v[12] depth=0 /$CG_NAME quota_us=20000 period_us=100000 " \
	"$TMP/launch.script" || die "launch: the cgroup and its quota are not in the trace"
grep -q "^# cpustat pid=.* throttled=[1-9]" "$TMP/launch.script" ||
	die "launch: no cpu.stat sample counts a throttled period"
grep -q "sched:offcpu preempted .* throttled=yes" "$TMP/launch.script" ||
	die "launch: no switch-out flagged throttled"
check launch throttled "$QUOTA_RE" 0.8
check_quota launch

# 2. -p: the feeder runs in the cgroup before the recorder attaches; 4 s of it recorded.
sh -c "$JOIN; exec $TMP/feeder $LIBCUDA cpu 100000 0.5" >/dev/null 2>&1 &
FEEDER=$!
PIDS+=("$FEEDER")
# Attached once it is the feeder (its shell has joined the cgroup and exec'ed): a guard of 10 s.
for _ in $(seq 1000); do
	[ "$(cat /proc/$FEEDER/comm 2>/dev/null)" = feeder ] && break
	sleep 0.01
done
[ "$(cat /proc/$FEEDER/comm)" = feeder ] || die "the feeder did not start"
timeout 120 "$GS" record -o "$TMP/attach.gsc" -p "$FEEDER" --duration 4 \
	>"$TMP/attach.out" 2>"$TMP/attach.err" || { cat "$TMP/attach.err"; die "record -p"; }
kill "$FEEDER"
check attach throttled "$QUOTA_RE" 0.8
check_quota attach

# 3. No quota, two hogs pinned one to each of the feeder's CPUs (all of them). The feeder
# computes 5 ms a step here: its gaps are that work stretched by the hogs, and the task that ran
# longest on its CPU meanwhile is a hog, however many short ones came between.
for c in 0 1; do
	[ "$c" -lt "$NCPUS" ] && hog "$c"
done
timeout 120 "$GS" record -o "$TMP/hogs.gsc" -- "$TMP/feeder" "$LIBCUDA" cpu 30 5 \
	>"$TMP/hogs.out" 2>"$TMP/hogs.err" || { cat "$TMP/hogs.err"; die "record hogs"; }
check hogs preempted '^cpuhog \(pid [0-9]+\)$' 0.5
grep -q "^CPU quota:" "$TMP/hogs.txt" && die "hogs: a quota said to throttle without one"
! grep -q '"kind":"throttled"' "$TMP/hogs.rep/summary.json" || die "hogs: throttled without a quota"
stop

# 4. The feeder pinned to one CPU, shared with one hog: preempted by it, the affinity named.
if [ "$NCPUS" -ge 2 ]; then
	hog 1
	timeout 120 "$GS" record -o "$TMP/pinned.gsc" -- taskset -c 1 "$TMP/feeder" "$LIBCUDA" cpu \
		30 5 >"$TMP/pinned.out" 2>"$TMP/pinned.err" ||
		{ cat "$TMP/pinned.err"; die "record pinned"; }
	check pinned preempted "^cpuhog \\(pid [0-9]+\\), affinity 1 of $NCPUS CPUs\$" 0.5
fi
echo "ok"
