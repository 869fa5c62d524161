#!/usr/bin/env bash
# An off-CPU interval whose switch-in the scheduler's tracepoint never reports (bpf/offcpu.bpf.h:
# on this project's test VM no switch away from the machine's init threads reaches sched_switch)
# ends at its thread's next sign of running, flagged, and the report counts it. The missed
# switch-in is made here, not waited for: while the target spins, the test puts an off-CPU start
# for it into the recorder's map, as a switch-out whose switch-in went unseen leaves it. The
# target runs SCHED_FIFO alone on CPU 1 and spins (stat(2) of a file the test creates to end it)
# from the test's word on, for well under the real-time throttle's 0.95 s, so nothing switches it
# out meanwhile; the next tick on its CPU must end the interval, at the start the test wrote, and
# take the entry out, which the test waits for:
#  - exactly one off-CPU event starts there, flagged resume=unseen (not two: the tick, a futex
#    call and a switch-out would each end it);
#  - it ends before the target exits (a tick saw it running, not the exit);
#  - the report counts it (summary.txt's losses line, summary.json), without a warning.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and writes into a BPF map"
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}
[ -x "$BPFTOOL" ] || die "bpftool not found"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs: the target spins on CPU 1"

# Where SCHED_FIFO is refused (a cgroup given no real-time time, as on the GPU machine), the target
# spins at normal priority alone on its CPU: nothing else runs there on an idle machine, but
# nothing guarantees it, and a preemption at the wrong moment fails the test with its reason.
rt="chrt -f 1"
chrt -f 1 true 2>/dev/null || { rt=; echo "SCHED_FIFO refused here: the target spins at normal priority"; }
# The target says who it is, waits for the word, then spins until told to stop (or 30 s pass).
mkfifo "$TMP/ready" "$TMP/go"
# Opened read-write, neither FIFO blocks an open here, and a read times out.
exec 3<>"$TMP/ready" 4<>"$TMP/go"
"$GS" record -o "$TMP/t.gsc" -- $rt taskset -c 1 bash -c \
	'echo $$ >"$1"; read -r _ <"$2"; while [ ! -e "$3" ] && [ "$SECONDS" -lt 30 ]; do :; done' \
	spin "$TMP/ready" "$TMP/go" "$TMP/stop" >"$TMP/out" 2>"$TMP/err" &
rec=$!
# Whatever happens, the target ends before the files go.
trap 'rc=$?; touch "$TMP/stop"; echo >&4; wait "$rec" 2>/dev/null; (exit $rc); cleanup' EXIT
read -t 60 -r tid <&3 || { cat "$TMP/err"; die "the target did not start"; }
# struct off_state { u64 ts; u32 state, prev_state, cpu; s32 syscall; u16 flags, pad;
# u32 next_tid, next_tgid; char next_comm[16]; u32 nr_cpus_allowed; u64 cpus_allowed;
# struct fault_last { u64 ino, index, ts; u32 dev, pad; } fault; } (96 bytes): preempted on
# CPU 1, what ran next not recorded (flags 0), no fault.
read -r key value start < <(python3 - "$tid" <<'PY'
import struct, sys, time
tid, ts = int(sys.argv[1]), time.monotonic_ns() - 1000000
hexs = lambda b: ",".join("%02x" % x for x in b)
state = struct.pack("<QIIIiHHII16sIQQQQII", ts, 1, 0, 1, -1, 0, 0, 0, 0, b"", 0, 0, 0, 0, 0, 0, 0)
print(hexs(struct.pack("<I", tid)), hexs(state), ts)
PY
)
# The recorder's own offs map (another recorder may be running): by the map ids of its fds.
map=
for id in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$rec"/fdinfo/* 2>/dev/null); do
	"$BPFTOOL" map show id "$id" 2>/dev/null | grep -q " name offs " && map=$id
done
[ -n "$map" ] || die "no offs map among the recorder's"
lookup() { "$BPFTOOL" map lookup id "$map" key hex ${key//,/ } >/dev/null 2>&1; }
# Let it spin: once its switch-in is seen (its entry gone), the start goes in while it runs.
echo go >&4
running=0
for _ in $(seq 1000); do lookup || { running=1; break; }; done
[ "$running" = 1 ] || die "the target did not run: its entry stayed"
"$BPFTOOL" map update id "$map" key hex ${key//,/ } value hex ${value//,/ } noexist ||
	die "cannot write the off-CPU start"
# The next sign of running takes the entry out: wait for that, then let the target end.
gone=0
for _ in $(seq 1000); do lookup || { gone=1; break; }; done
touch "$TMP/stop"
wait "$rec" || { cat "$TMP/err"; die "record failed"; }
[ "$gone" = 1 ] || die "the entry was still there after 1000 looks"

"$GS" script --no-stacks --no-meta "$TMP/t.gsc" >"$TMP/events"
secs=$(awk -v t="$start" 'BEGIN { printf "%d.%06d", t / 1e9, (t % 1e9) / 1e3 }')
grep " $tid/$tid .* $secs: sched:offcpu " "$TMP/events" >"$TMP/ours" || true
cat "$TMP/ours"
assert_eq "$(wc -l <"$TMP/ours")" 1 "off-CPU events starting at the written start"
grep -q ' sched:offcpu preempted state=0x0 resume=unseen dur=' "$TMP/ours" ||
	die "the interval is not flagged resume=unseen"
python3 - "$TMP/ours" "$TMP/events" "$start" "$tid" <<'PY' || die "the interval did not end at a tick"
import re, sys
ours, events, start, tid = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4]
v, u = re.search(r"dur=([\d.]+)(ms|us|s)\b", ours).groups()
end = start + float(v) * {"s": 1e9, "ms": 1e6, "us": 1e3}[u]
m = re.search(r" %s/%s +\[\d+\] ([\d.]+): sched:exit" % (tid, tid), events)
assert m, "no exit event of the target"
exit_ns = float(m.group(1)) * 1e9
print("ended %.3f ms after its start, %.3f ms before the target's exit" % ((end - start) / 1e6, (exit_ns - end) / 1e6))
sys.exit(0 if end < exit_ns else 1)
PY

"$GS" report "$TMP/t.gsc" -o "$TMP/rep" >"$TMP/report.out" 2>"$TMP/report.err" ||
	{ cat "$TMP/report.err"; die "report"; }
grep 'resumed unseen' "$TMP/report.err" && die "the report warned of it"
# Not a warning (nothing is missing): counted on the losses line and in summary.json.
grep -q '^losses: .*; [0-9]* off-CPU interval(s) resumed unseen (their switch back in was not seen: each ends where its thread was next seen running)$' "$TMP/rep/summary.txt" ||
	die "the report's losses line does not count it"
n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["offcpu_resume_unseen"])' \
	"$TMP/rep/summary.json")
[ "$n" -ge 1 ] || die "summary.json counts $n intervals resumed unseen"
echo ok
