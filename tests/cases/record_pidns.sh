#!/usr/bin/env bash
# Recording inside a pid namespace (as in every container): the BPF side sees the kernel's
# global ids, the recorder its namespace's. With unshare --pid --fork --mount-proc, a launched
# command and a -p target (which dlopen()s simcuda after the attach, tests/record/late_cuda.py)
# are recorded whole: every call in the trace, under the target's pid, its threads named. And a
# recording that gets nothing from its target says so (a warning), never a silent success.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and makes pid namespaces"
GS=$(realpath "$BUILD/gapscope")
CC=${CC:-cc}
SIMCUDA=$(realpath "$BUILD/simcuda/libcuda.so.1")
[ -e "$SIMCUDA" ] || die "$SIMCUDA not built"
$CC -O2 -g -o "$TMP/latecuda" tests/record/latecuda.c -ldl
inns() { unshare --pid --fork --mount-proc "$@"; }

# Launch mode: the command's calls, exec and thread name, under one pid.
N=25
printf 'load\ncall\n' | inns "$GS" record -o "$TMP/launch.gsc" -- "$TMP/latecuda" "$SIMCUDA" $N \
	>"$TMP/launch.out" 2>"$TMP/launch.err" || { cat "$TMP/launch.err"; die "record in a pid namespace"; }
cat "$TMP/launch.err"
! grep -q "nothing was recorded" "$TMP/launch.err" || die "launch mode recorded nothing"
"$GS" script --no-stacks "$TMP/launch.gsc" >"$TMP/launch.txt"
pid=$(sed -n 's/^# target pid=\([0-9]*\) launch .*/\1/p' "$TMP/launch.txt")
[ -n "$pid" ] || die "no target record"
calls=$(grep -c "^ *latecuda *[0-9]*/$pid .*: cuda:cuCtxSynchronize " "$TMP/launch.txt" || true)
assert_eq "$calls" $N "calls of the launched command recorded under its pid $pid"
grep -q "^ *latecuda *$pid/$pid .*: sched:exec .*latecuda$" "$TMP/launch.txt" || die "no exec event"

# -p inside the namespace, the driver loaded after the attach.
inns python3 tests/record/late_cuda.py "$TMP" "$SIMCUDA" 0 || die "-p in a pid namespace"

# Nothing from the target: a process that never runs while recorded.
rc=0
inns sh -c 'sleep 1000 & p=$!; "$1" record -o "$2" -p $p --duration 0.3; r=$?; kill $p; exit $r' sh \
	"$GS" "$TMP/idle.gsc" 2>"$TMP/idle.err" || rc=$?
cat "$TMP/idle.err"
assert_eq "$rc" 0 "exit of a -p recording of an idle process"
grep -q "^gapscope: warning: nothing was recorded from pid [0-9]*: " "$TMP/idle.err" ||
	die "no warning for a recording that got nothing"
echo ok
