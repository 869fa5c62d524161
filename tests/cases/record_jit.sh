#!/usr/bin/env bash
# Generated code named from its perf map: tests/record/jit.c feeds a simcuda device between
# bursts of CPU work in two functions it writes into anonymous memory and names in
# /tmp/perf-PID.map, as a JIT does for perf. The recorder keeps the map in the trace
# (GS_REC_PERF_MAP, the header marked TRACE_F_PERF_MAP); the map file is then removed, so every
# name below comes from the trace alone: script names the frames, and the report's gaps are
# on-CPU time in jit_work_inner called from jit_work_outer, in that order in the folded stacks.
# The program runs SCHED_FIFO, so that on a loaded machine its bursts are on-CPU, not preempted
# by other processes: naming, not scheduling, is what this test is about.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -o "$TMP/jit" tests/record/jit.c -ldl ||
	die "cannot build the jit program"
rc=0
timeout 120 "$GS" record -o "$TMP/t.gsc" -- chrt -f 1 "$TMP/jit" "$LIBCUDA" 20 20 >"$TMP/out" \
	2>"$TMP/err" || rc=$?
pid=$(sed -n 's/^jit: pid \([0-9]*\)$/\1/p' "$TMP/out")
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
[ "$rc" -eq 0 ] || { cat "$TMP/out" "$TMP/err"; die "record"; }
grep -q "perf-$pid.map: 2 symbols of generated code kept" "$TMP/err" ||
	{ cat "$TMP/err"; die "the recorder did not keep the perf map"; }
"$GS" script "$TMP/t.gsc" >"$TMP/script" 2>"$TMP/script.err"
[ -n "$(other_warnings "$TMP/script.err")" ] && { cat "$TMP/script.err"; die "script warned"; }
n=$(grep -c " jit_work_inner+0x[0-9a-f]* (/tmp/perf-$pid.map)" "$TMP/script" || true)
[ "$n" -gt 0 ] || die "script names no frame jit_work_inner"
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" >"$TMP/rep.txt" 2>"$TMP/rep.err" ||
	{ cat "$TMP/rep.err"; die "report"; }
sed -n '1,/^longest/p' "$TMP/rep.txt"
grep -q ';jit_work_outer;jit_work_inner ' "$TMP/rep/gaps/all.folded" ||
	{ head -5 "$TMP/rep/gaps/all.folded"; die "no gap stack through jit_work_outer;jit_work_inner"; }
python3 - "$TMP/rep/summary.json" <<'PY' || die "the gaps are not on-CPU in the generated code"
import json, sys
s = json.load(open(sys.argv[1]))
c = s["causes"][0] if s["causes"] else {}
print("top cause %s %s %.2f, %d gaps" % (c.get("kind"), c.get("function"), c.get("share", 0),
                                         len(s["gaps"])))
sys.exit(0 if c.get("kind") == "on_cpu" and c.get("function") == "jit_work_inner" and
         c["share"] >= 0.5 else 1)
PY
echo "ok: $n script frames and the report's gap stacks named from the trace's perf map"
