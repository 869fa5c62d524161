#!/usr/bin/env bash
# Off-CPU intervals on the GPU machine (H200), with the portable binaries carried from a dev
# machine (make -j2 all zkengine-portable; carry build/gapscope-portable, build/zkengine-portable,
# and build/gpu-tools/ where the machine has no bpftool):
#   OUT=$OUT tests/gpu/offcpu.sh
# Every zkengine scenario on the real GPU, launched under record: how many off-CPU intervals
# resumed unseen by sched_switch (bpf/offcpu.bpf.h), and whether off-CPU time covers each futex
# wait of 2 ms or more (tests/record/offcpu_cover.py), with the report's top cause. Then the
# test that makes a switch-in go unseen on purpose (tests/cases/record_resume_unseen.sh). A short
# table last; the scripts' output and logs go to $OUT.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-offcpu}
GS=$PWD/$BUILD/gapscope-portable
ZK=$PWD/$BUILD/zkengine-portable
W=$(mktemp -d) # traces, scripts and reports: only the table, logs and summaries go to OUT
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
T=$OUT/table.txt
printf '%-16s %-8s %-8s %-10s %-58s %s\n' scenario events unseen lost cover "top cause" | tee "$T"
uname -r; nproc; nvidia-smi -L 2>&1 | head -1
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing || true
for s in fixed tracker-trim gpu-lock-wide starved pageable oversubscribed; do
	timeout 120 "$GS" record -f -o "$W/$s.gsc" --no-cupti -- "$ZK" --device cuda --scenario "$s" \
		>"$W/$s.out" 2>"$OUT/$s.err"
	echo "$s: record exit $?"; tail -1 "$OUT/$s.err"
	"$GS" script --no-stacks "$W/$s.gsc" >"$W/$s.txt" 2>"$W/$s.script.err"
	cover=$(python3 tests/record/offcpu_cover.py "$W/$s.txt" 2 0.9 | tail -1)
	"$GS" report -f "$W/$s.gsc" -o "$W/$s.rep" >/dev/null 2>"$W/$s.report.err"
	cause=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["causes"]; print("%s %.2f" % (c[0]["kind"], c[0]["share"]) if c else "-")' "$W/$s.rep/summary.json" 2>/dev/null)
	unseen=$(grep -c 'resume=unseen' "$W/$s.txt")
	lost=$(sed -n 's/.* \([0-9]*\) lost$/\1/p' "$OUT/$s.err")
	events=$(sed -n 's/^gapscope: \([0-9]*\) events,.*/\1/p' "$OUT/$s.err")
	printf '%-16s %-8s %-8s %-10s %-58s %s\n' "$s" "$events" "$unseen" "${lost:-?}" \
		"$(sed 's/ futex waits of 2 ms or more,/ waits,/; s/ (.*//' <<<"$cover")" "$cause" | tee -a "$T"
	cp "$W/$s.rep/summary.txt" "$OUT/$s.summary.txt" 2>/dev/null
	rm -f "$W/$s.gsc"
done
[ -e "$BUILD/gapscope" ] || ln -s gapscope-portable "$BUILD/gapscope"
# bpftool: the machine's, or one carried in build/gpu-tools/ (with its libraries, run by a wrapper).
[ -x "$BUILD/gpu-tools/bpftool" ] && export BPFTOOL=$PWD/$BUILD/gpu-tools/bpftool
GAPSCOPE_ROOT=$PWD BUILD=$PWD/$BUILD timeout 120 tests/cases/record_resume_unseen.sh >"$OUT/resume_unseen.log" 2>&1
echo "record_resume_unseen: exit $? ($(tail -2 "$OUT/resume_unseen.log" | head -1))" | tee -a "$T"
echo; cat "$T"
