#!/usr/bin/env bash
# tracker-trim with the engine's threads renamed (tests/report/rename.c) and its binary stripped
# of every symbol table: the report still blames malloc_trim through a lock, the lock now named
# by what is left (the waiting callsite's address), and the holders are the truth's.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/report/report_check.py"
need_built "$ZK"
mkdir -p "$TMP/bin"
objcopy --strip-all "$BUILD/zkengine" "$TMP/bin/zkengine"
ln -s "$PWD/$BUILD/simcuda" "$TMP/bin/simcuda"	# found next to the engine
nm "$TMP/bin/zkengine" 2>&1 | grep -q 'no symbols' || die "the copy is not stripped"
$CC -O2 -g -shared -fPIC -o "$TMP/rename.so" tests/report/rename.c -ldl

LD_PRELOAD=$TMP/rename.so timeout 300 "$GS" record -o "$TMP/t.gsc" -- "$TMP/bin/zkengine" --device sim \
	--scenario tracker-trim --truth "$TMP/truth" >"$TMP/out" 2>"$TMP/err" ||
	{ cat "$TMP/out" "$TMP/err"; die "record"; }
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" --top 3 >"$TMP/txt" || die "report"
cat "$TMP/txt"
# Names of processes outside the recording ("finalizer-1 (pid N)", another engine on a busy machine
# preempting ours) are theirs, not this one's: only the recording's own strings are judged.
grep -o '"[^"]*\(gpu-worker\|finalizer\|tracker\)[^"]*"' "$TMP/rep/summary.json" |
	grep -qv '(pid [0-9]*)' && die "names the renamed threads or the stripped symbols"
$CHECK cause "$TMP/rep/summary.json" malloc_trim --truth "$TMP/truth" --lock by --root malloc_trim ||
	die "stripped, renamed"
$CHECK holders "$TMP/rep/summary.json" "$TMP/truth" || die "stripped, renamed: holders"
