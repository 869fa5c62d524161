#!/usr/bin/env bash
# report --debug-dir: a stripped program whose debug file lies only under DIR, by build-id
# (DIR/.build-id/xx/rest.debug). tests/report/feeder.c in helper mode (each input computed by a
# helper thread, on-CPU in compute_input, a static function: only the debug file names it):
# the top cause is named compute_input with --debug-dir, and not without. SCHED_FIFO, so that
# on a loaded machine the helper's work is on-CPU rather than preempted by other processes.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$BUILD/gapscope
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
[ -f "$LIBCUDA" ] || die "$LIBCUDA not built"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Wl,--build-id -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"
id=$(readelf -n "$TMP/feeder" | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
[ -n "$id" ] || die "no build-id"
mkdir -p "$TMP/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$TMP/feeder" "$TMP/debug/.build-id/${id:0:2}/${id:2}.debug"
objcopy --strip-all "$TMP/feeder"
timeout 120 "$GS" record -o "$TMP/t.gsc" -- chrt -f 1 "$TMP/feeder" "$LIBCUDA" helper 20 15 >"$TMP/out" \
	2>"$TMP/err" || { cat "$TMP/out" "$TMP/err"; die "record"; }
top() { python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["causes"][0]
print(c["kind"], c.get("function") or "")' "$1"; }
"$GS" report "$TMP/t.gsc" -o "$TMP/plain" >/dev/null 2>&1 || die "report"
"$GS" report "$TMP/t.gsc" -o "$TMP/dbg" --debug-dir "$TMP/debug" >/dev/null 2>&1 ||
	die "report --debug-dir"
echo "without --debug-dir: $(top "$TMP/plain/summary.json"); with: $(top "$TMP/dbg/summary.json")"
assert_eq "$(top "$TMP/dbg/summary.json")" "on_cpu compute_input" "top cause with --debug-dir"
[ "$(top "$TMP/plain/summary.json")" != "on_cpu compute_input" ] ||
	die "the stripped program was named without its debug file"
echo ok
