#!/usr/bin/env bash
# --cgroup follows the cgroup, not a list taken at the attach: a process that joins it while the
# recorder runs is recorded from then on (red team D15). The cgroup holds one process at the
# attach. A second process (tests/record/latecuda.c) loads a CUDA driver outside the cgroup, is
# moved into it, and once the recorder says it took it, makes 40 driver calls: all 40 are in the
# trace, probed through the mapping it had when it joined. A third process that loaded the same
# driver and stays outside makes the same calls: none of them is in the trace.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "attaches BPF programs and makes a cgroup"
cd "$GAPSCOPE_ROOT"
GS=$BUILD/gapscope
$CC -O2 -g -o "$TMP/latecuda" tests/record/latecuda.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c

cg=
for h in /sys/fs/cgroup/unified /sys/fs/cgroup/pids /sys/fs/cgroup; do
	[ -f "$h/cgroup.procs" ] && mkdir "$h/gapscope-join-$$" 2>/dev/null && cg=$h/gapscope-join-$$ && break
done
[ -n "$cg" ] || die "cannot make a cgroup"
A= B= C= rp=
cleanup_cg() {
	for p in $A $B $C $rp; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rmdir "$cg" 2>/dev/null || true
}
trap 'cleanup_cg; rm -rf "$TMP"' EXIT

# say COPROC-FDS WORD REPLY: one line to the process, and wait for its answer.
say() {
	local -n p=$1
	echo "$2" >&"${p[1]}"
	read -r -t 30 l <&"${p[0]}" && [ "$l" = "$3" ] || die "no '$3' after '$2' (got '${l:-}')"
}

# A: in the cgroup from the start, holding the recording open until it is told to end.
coproc AP { echo $BASHPID >"$cg/cgroup.procs"; echo in; read -r _; }
A=$AP_PID
read -r -t 30 _ <&"${AP[0]}" || die "the first process did not join the cgroup"
# B and C: the driver loaded, outside the cgroup.
coproc BP { exec "$TMP/latecuda" "$TMP/libcuda.so.1" 40; }
B=$BP_PID BPID=$BP_PID
read -r -t 30 _ <&"${BP[0]}" && say BP load loaded
coproc CP { exec "$TMP/latecuda" "$TMP/libcuda.so.1" 40; }
C=$CP_PID
read -r -t 30 _ <&"${CP[0]}" && say CP load loaded

mkfifo "$TMP/err.fifo"
"$GS" record -o "$TMP/t.gsc" --cgroup "$cg" 2>"$TMP/err.fifo" &
rp=$!
exec {fd}<"$TMP/err.fifo"
read_until "$fd" "$TMP/err" "*recording pid $A*" || { cat "$TMP/err"; die "no attach to the cgroup"; }

# B joins after the attach; the recorder looks every second and says when it took it.
echo "$B" >"$cg/cgroup.procs"
read_until "$fd" "$TMP/err" "*pid $B joined the cgroup: recording it*" ||
	{ cat "$TMP/err"; die "the recorder did not take the process that joined"; }
cat <&$fd >>"$TMP/err" &
say BP call called
say CP call called
exec {BP[1]}>&- {CP[1]}>&-
wait "$B" "$C" || die "the driver's callers failed"
B= C=
echo end >&"${AP[1]}"
wait "$A" || true
A=
wait "$rp" || { cat "$TMP/err"; die "record failed"; }
rp=

"$GS" script --no-stacks --no-meta "$TMP/t.gsc" >"$TMP/events"
syncs=$(grep -c " cuda:cuCtxSynchronize" "$TMP/events" || true)
echo "joined after the attach: $syncs of 40 cuCtxSynchronize recorded (40 more outside the cgroup: not to be)"
assert_eq "$syncs" 40 "cuCtxSynchronize calls of the process that joined, none of the one outside"
"$GS" script --no-stacks "$TMP/t.gsc" >"$TMP/meta"
grep -q '^# losses total=0 ' "$TMP/meta" || die "events lost"
# Its window before its probes were in place, since the recorder's last look, is in the trace.
assert_eq "$(grep -c "^# unprobed pid=$BPID why=join for_ns=[0-9]* links=[1-9]" "$TMP/meta")" 1 \
	"the window of the process that joined"
echo "ok: a process that joined the cgroup after the attach is recorded, one outside it is not"
