#!/usr/bin/env bash
# tokengine (the engine on tokio) under the recorder, real probes, simcuda: the runtime's task
# functions are found by symbol and probed (poll, wake, the async locks' release), with the
# binary as built and with its debug info stripped (symbols kept); the trace holds polls and
# wakes of tasks. Stripped of its symbols too, the recorder says (from its read-only data) that
# it cannot probe the tokio runtime in it, and the report notes that chains follow threads only.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$BUILD/gapscope
TK=$BUILD/tokengine
[ -x "$TK" ] || die "$TK not built"

# Copies next to a link to simcuda, which the engine finds beside itself.
mkdir "$TMP/debug" "$TMP/all"
cp "$TK" "$TMP/debug/tokengine" && strip --strip-debug "$TMP/debug/tokengine"
cp "$TK" "$TMP/all/tokengine" && strip --strip-all "$TMP/all/tokengine"
ln -s "$(cd "$BUILD" && pwd)/simcuda" "$TMP/debug/simcuda"
ln -s "$(cd "$BUILD" && pwd)/simcuda" "$TMP/all/simcuda"

for v in built debug; do
	bin=$TK
	[ $v = debug ] && bin=$TMP/debug/tokengine
	timeout 300 "$GS" record -o "$TMP/$v.gsc" -- "$bin" --device sim --partitions 6 \
		>"$TMP/$v.out" 2>&1 || { cat "$TMP/$v.out"; die "record $v"; }
	n=$(sed -n 's/.*tokengine: \([0-9]*\) async task probes$/\1/p' "$TMP/$v.out")
	echo "$v: ${n:-0} task probes"
	[ "${n:-0}" -ge 4 ] || { cat "$TMP/$v.out"; die "$v: the runtime's task functions were not probed"; }
	"$GS" script "$TMP/$v.gsc" >"$TMP/$v.script" || die "script $v"
	for fn in raw::poll 'waker::wake_by_' add_permits_locked; do
		grep -q "^# probe .* task .*$fn" "$TMP/$v.script" || die "$v: no task probe on $fn"
	done
	polls=$(grep -c 'probe:tokio::runtime::task::raw::poll ' "$TMP/$v.script" || true)
	wakes=$(grep -c 'probe:tokio::runtime::task::waker::wake_by_' "$TMP/$v.script" || true)
	echo "$v: $polls polls, $wakes wakes"
	# every partition: its synthesis, GPU and finalizer tasks are polled; the GPU tasks woken
	[ "$polls" -ge 18 ] || die "$v: $polls task polls for 6 partitions"
	[ "$wakes" -ge 6 ] || die "$v: $wakes task wakes for 6 partitions"
	"$GS" report "$TMP/$v.gsc" -o "$TMP/$v.rep" >"$TMP/$v.txt" 2>&1 || die "report $v"
	grep -q 'symbols are absent' "$TMP/$v.txt" && die "$v: the report says the symbols are absent"
done

timeout 300 "$GS" record -o "$TMP/all.gsc" -- "$TMP/all/tokengine" --device sim --partitions 4 \
	>"$TMP/all.out" 2>&1 || { cat "$TMP/all.out"; die "record stripped"; }
grep -q 'no symbol table: the async runtime in it (tokio) cannot be probed' "$TMP/all.out" ||
	{ cat "$TMP/all.out"; die "stripped: the recorder does not say it cannot probe the runtime"; }
"$GS" report "$TMP/all.gsc" -o "$TMP/all.rep" >"$TMP/all.txt" 2>&1 || die "report stripped"
grep -q "^note: tokio worker threads but no task polls: the runtime's symbols are absent" \
	"$TMP/all.txt" || { cat "$TMP/all.txt"; die "stripped: no note that the symbols are absent"; }
echo "ok"
