#!/usr/bin/env bash
# The GPU's own feeds where there is no GPU: --nvml without libnvidia-ml and --cupti with a
# driver that never loads the collector (a program without CUDA; simcuda) each warn in one line
# and the recording succeeds, its trace whole and not marked for CUPTI's records (the report then
# says nothing of CUPTI); --cupti with -p says it needs a launched command.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
need_built "$ZK"
ldconfig -p | grep -q 'libnvidia-ml.so.1 ' && skip "libnvidia-ml is installed here"

"$GS" record --nvml -o "$TMP/n.gsc" -- true 2>"$TMP/n.err" || { cat "$TMP/n.err"; die "--nvml failed"; }
cat "$TMP/n.err"
assert_eq "$(grep -c 'warning: --nvml' "$TMP/n.err")" 1 "--nvml warnings"
"$GS" script "$TMP/n.gsc" >"$TMP/n.txt" || die "script"
grep -q '^# end events=' "$TMP/n.txt" || die "--nvml: the trace has no end"

"$GS" record --cupti -o "$TMP/c.gsc" -- "$ZK" --device sim --partitions 2 >/dev/null \
	2>"$TMP/c.err" || { cat "$TMP/c.err"; die "--cupti failed"; }
grep -i 'cupti' "$TMP/c.err" || true
assert_eq "$(grep -c 'warning: --cupti: the target.s CUDA driver did not load the collector' \
	"$TMP/c.err")" 1 "--cupti warning"
"$GS" report "$TMP/c.gsc" -o "$TMP/c.rep" >"$TMP/c.txt" 2>&1 || die "report"
grep -q 'CUPTI' "$TMP/c.txt" && die "the report speaks of CUPTI for a trace without it"
grep -q '"cupti"' "$TMP/c.rep/summary.json" && die "summary.json has a cupti block"

"$ZK" --device sim --partitions 400 >/dev/null 2>&1 &
zk=$!
trap 'kill $zk 2>/dev/null; cleanup' EXIT
"$GS" record --cupti -p $zk --duration 0.3 -o "$TMP/p.gsc" 2>"$TMP/p.err" ||
	{ cat "$TMP/p.err"; die "--cupti -p failed"; }
assert_eq "$(grep -c 'warning: --cupti needs a launched command' "$TMP/p.err")" 1 "--cupti -p warning"
echo "ok"
