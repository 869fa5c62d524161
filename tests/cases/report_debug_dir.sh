#!/usr/bin/env bash
# Symbols of a stripped program from every source but the program itself, in a report:
# tests/report/feeder.c in helper mode (each input computed by a helper thread, on-CPU in
# compute_input, a static function: only a symbol table beyond .dynsym names it), recorded once
# stripped, then reported with the file in place of the recorded one (the same build-id) as:
#   - stripped, no other source: the top cause is not named compute_input, and summary.json's
#     symbols count the program's unnamed addresses;
#   - --debug-dir DIR holding its debug file by build-id (DIR/.build-id/xx/rest.debug);
#   - stripped with MiniDebugInfo (.gnu_debugdata, tests/symbols/minidebuginfo.sh);
#   - its debug file served by a debuginfod server (a local HTTP server, DEBUGINFOD_URLS), and
#     again with the server gone: from the client's cache.
# Each source names the top cause compute_input and says which source it was. SCHED_FIFO, so
# that on a loaded machine the helper's work is on-CPU rather than preempted by other processes.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Wl,--build-id -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"
id=$(readelf -n "$TMP/feeder" | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
[ -n "$id" ] || die "no build-id"
mkdir -p "$TMP/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$TMP/feeder" "$TMP/debug/.build-id/${id:0:2}/${id:2}.debug"
tests/symbols/minidebuginfo.sh "$TMP/feeder" "$TMP/feeder.mini" || die "minidebuginfo"
objcopy --strip-all "$TMP/feeder"
cp "$TMP/feeder" "$TMP/feeder.stripped"
timeout 120 "$GS" record -o "$TMP/t.gsc" -- chrt -f 1 "$TMP/feeder" "$LIBCUDA" helper 20 15 >"$TMP/out" \
	2>"$TMP/err" || { cat "$TMP/out" "$TMP/err"; die "record"; }
top() { python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["causes"][0]
print(c["kind"], c.get("function") or "")' "$1"; }
# The program's entry in summary.json's symbols: "SOURCE UNNAMED", "- 0" when none is unnamed.
feeder_syms() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["symbols"]
f = [x for x in s["unnamed_files"] if x["path"].endswith("/feeder")]
print("%s %d" % (f[0]["source"], f[0]["unnamed"]) if f else "- 0")' "$1"; }
unset DEBUGINFOD_URLS
report() { # DIR [ARGS]: the report of the trace in DIR
	local dir=$1
	shift
	"$GS" report "$TMP/t.gsc" -o "$TMP/$dir" "$@" >"$TMP/$dir.out" 2>&1 ||
		{ cat "$TMP/$dir.out"; die "report $*"; }
	echo "$dir: top cause $(top "$TMP/$dir/summary.json"); $(grep '^symbols:' "$TMP/$dir/summary.txt")"
}

report plain
[ "$(top "$TMP/plain/summary.json")" != "on_cpu compute_input" ] ||
	die "the stripped program was named without a source for its symbols"
read -r src unnamed <<<"$(feeder_syms "$TMP/plain/summary.json")"
assert_eq "$src" dynsym "the stripped program's source"
[ "$unnamed" -gt 0 ] || die "the stripped program's unnamed addresses were not counted"
grep -q '^symbols: .* feeder [0-9]* (stripped, no debug file' "$TMP/plain/summary.txt" ||
	die "summary.txt does not print the loss"

report dbg --debug-dir "$TMP/debug"
assert_eq "$(top "$TMP/dbg/summary.json")" "on_cpu compute_input" "top cause with --debug-dir"

cp "$TMP/feeder.mini" "$TMP/feeder"
report mini
assert_eq "$(top "$TMP/mini/summary.json")" "on_cpu compute_input" "top cause with MiniDebugInfo"
cp "$TMP/feeder.stripped" "$TMP/feeder"

# debuginfod: GET /buildid/ID/debuginfo, served from a folder on a port of its own choosing.
mkdir -p "$TMP/srv/buildid/$id"
cp "$TMP/debug/.build-id/${id:0:2}/${id:2}.debug" "$TMP/srv/buildid/$id/debuginfo"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$TMP/srv" >"$TMP/http.log" 2>&1 &
srv=$!
port=
until [ -n "$port" ]; do
	kill -0 "$srv" 2>/dev/null || { cat "$TMP/http.log"; die "the HTTP server did not start"; }
	sleep 0.1
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/http.log" | head -1)
done
export DEBUGINFOD_CACHE_PATH=$TMP/debuginfod-cache
DEBUGINFOD_URLS=http://127.0.0.1:$port report dinfo
kill "$srv"
wait "$srv" 2>/dev/null || true
grep -q "GET /buildid/$id/debuginfo" "$TMP/http.log" || die "the server was not asked"
assert_eq "$(top "$TMP/dinfo/summary.json")" "on_cpu compute_input" "top cause with debuginfod"
# The server gone, the client's cache answers.
DEBUGINFOD_URLS=http://127.0.0.1:$port report cached
assert_eq "$(top "$TMP/cached/summary.json")" "on_cpu compute_input" "top cause from the cache"
echo ok
