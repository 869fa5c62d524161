#!/usr/bin/env bash
# CPU-quota throttling on the GPU machine (carry build/gapscope-portable): a PyTorch feeder
# (tests/gpu/progs/torch_throttle.py: ~3 ms of Python a step, then a 4096^2 matmul and a
# synchronize) in a cgroup v2 with cpu.max "20000 100000" (20% of a CPU), attached with -p for
# 8 s, then launched under record; the same feeder without a quota as a control. For each: the
# top cause and its share, the what-if line ("needs ... has 0.20"), and the cgroup's own cpu.stat
# over the run. Issue 34 expects `throttled  cgroup /gs_throttle_... (cpu.max 20 ms per 100 ms)`
# first, and the what-if line, in both quota runs; the control not throttled.
#   OUT=DIR tests/gpu/throttle.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
RES=${OUT:-$BUILD/gpu-throttle}
mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
GS=$PWD/$BUILD/gapscope-portable
PROG=$PWD/tests/gpu/progs/torch_throttle.py
W=$(mktemp -d)
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RES/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ -z "$V2" ] || ! grep -qw cpu "$V2/cgroup.controllers"; then
	say "no cgroup v2 with the cpu controller: $(grep cgroup /proc/self/mountinfo | head -3)"
	exit 1
fi
grep -qw cpu "$V2/cgroup.subtree_control" || echo +cpu >"$V2/cgroup.subtree_control" ||
	say "cannot enable cpu in $V2/cgroup.subtree_control"
CG=$V2/gs_throttle_$$
mkdir -p "$CG" && echo "20000 100000" >"$CG/cpu.max" || { say "cannot make $CG"; exit 1; }
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$W"' EXIT

# summarize NAME: the report's top cause, its share, the what-if line, cpu.stat's change.
summarize() {
	"$GS" report -f -o "$W/$1.rep" "$W/$1.gsc" >"$RES/$1.summary.txt" 2>&1
	cp "$W/$1.rep/summary.json" "$RES/$1.summary.json" 2>/dev/null
	python3 - "$W/$1.rep/summary.json" "$1" "$2" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
c = s['causes'][0] if s['causes'] else {'kind': '-', 'function': '-', 'share': 0}
q = s.get('quota')
print('%-8s %-10s %5.2f  %s' % (sys.argv[2], c['kind'], c['share'], c['function']))
print('         gaps %d, %.0f ms; %s' % (len(s['gaps']), s['gap_ns'] / 1e6, sys.argv[3]))
if q:
    print('         what-if: needs %s%.2f CPU at its peak second (%.2f on average), has %.2f; '
          '%d of %d periods throttled, %.0f ms runnable while throttled' %
          ('~' if q['use_known'] else '>=', q['peak_cpus'], q['mean_cpus'], q['has_cpus'],
           q['nr_throttled'], q['nr_periods'], q['throttled_ns'] / 1e6))
else:
    print('         what-if: none (no quota throttled)')
PY
	grep '^CPU quota:' "$RES/$1.summary.txt" | tee -a "$table"
}

cpustat() { grep -E '^(nr_periods|nr_throttled|throttled_usec)' "$CG/cpu.stat" | tr '\n' ' '; }

# 1. -p: the feeder started in the cgroup, attached once it runs, 8 s.
coproc P { exec sh -c "echo \$\$ >$CG/cgroup.procs; exec python3 $PROG --seconds 30"; }
read -r -t 240 line <&"${P[0]}" || line=
case $line in ready*) ;; *) say "attach: the feeder did not start"; exit 1 ;; esac
pid=${line#ready }
before=$(cpustat)
timeout 120 "$GS" record -f -o "$W/attach.gsc" -p "$pid" --duration 8 >"$RES/attach.record.txt" 2>&1
after=$(cpustat)
kill "$pid" 2>/dev/null
wait "$P_PID" 2>/dev/null
summarize attach "cpu.stat before: $before; after: $after"

# 2. Launch mode: the shell joins the cgroup, then becomes the feeder (12 s).
before=$(cpustat)
timeout 120 "$GS" record -f -o "$W/launch.gsc" -- sh -c \
	"echo \$\$ >$CG/cgroup.procs; exec python3 $PROG --seconds 12" >"$RES/launch.record.txt" 2>&1
summarize launch "cpu.stat before: $before; after: $(cpustat)"

# 3. Control: no quota (the feeder in the recorder's own cgroup).
timeout 120 "$GS" record -f -o "$W/control.gsc" -- python3 "$PROG" --seconds 8 \
	>"$RES/control.record.txt" 2>&1
summarize control "no quota"
echo; cat "$table"
