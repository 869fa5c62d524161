#!/usr/bin/env bash
# report of a stripped program's trace with DEBUGINFOD_URLS naming a loopback server that
# answers each request with 300 KB quickly and then a byte a second: each download is cut at
# DEBUGINFOD_MAXTIME (10 s where unset, reports/symbols/symbols.h), so the report ends within 10 s a
# request (counted by the server) plus 30 s, with its frames named from what the files hold.
# Before, libdebuginfod's timeout (for no progress at all) never fired and the report hung.
# A build-id is asked for once a report (red-team D27: the engine's 4 times, 44 s, as each Dwfl
# that opened it asked again after a cut download), and a report's downloads get 30 s in all:
# with DEBUGINFOD_MAXTIME 600 the one download is cut at what is left of those.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "records a trace"
GS=$(realpath "$BUILD/gapscope")
mkdir "$TMP/bin" "$TMP/bin/simcuda"
cp "$BUILD/zkengine" "$TMP/bin/zk-stripped"
strip "$TMP/bin/zk-stripped"
cp "$BUILD/simcuda/libcuda.so.1" "$TMP/bin/simcuda/"
env -u DEBUGINFOD_URLS "$GS" record -o "$TMP/t.gsc" -- "$TMP/bin/zk-stripped" --device sim \
	--scenario tracker-trim -n 4 >/dev/null 2>"$TMP/rec.err" || die "record: $(cat "$TMP/rec.err")"

python3 - "$TMP/port" "$TMP/requests" <<'PY' &
import os, socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
threading.Timer(600, lambda: os._exit(0)).start()  # bounded: it ends by itself
log = open(sys.argv[2], "a", buffering=1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def trickle(c):
    try:
        log.write(c.recv(65536).split(b"\r\n")[0].decode().split()[1] + "\n")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n" + b"\0" * 300000)
        while True:
            c.send(b"\0"); time.sleep(1)
    except (OSError, IndexError):
        pass
while True:
    threading.Thread(target=trickle, args=(s.accept()[0],), daemon=True).start()
PY
SRV=$!
trap 'kill $SRV 2>/dev/null; cleanup' EXIT
until [ -s "$TMP/port" ]; do sleep 0.1; done

# report_run NAME [ENV...]: a report of the trace beside the server, its own cache; prints
# "EXIT SECONDS REQUESTS" (the requests the server logged for it) and its stderr to NAME.err.
report_run() {
	local name=$1 rc=0 t0 before
	shift
	before=$(wc -l <"$TMP/requests" 2>/dev/null || echo 0)
	t0=$(date +%s)
	# Sanitized (make check-asan): libdebuginfod's leak on each cut download is not the
	# report's (tests/report/debuginfod.supp).
	env -u DEBUGINFOD_MAXTIME DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$TMP/port")" \
		DEBUGINFOD_CACHE_PATH="$TMP/cache.$name" \
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0" \
		LSAN_OPTIONS="suppressions=$GAPSCOPE_ROOT/tests/report/debuginfod.supp" \
		"$@" timeout 600 "$GS" report "$TMP/t.gsc" -o "$TMP/rep.$name" >/dev/null \
		2>"$TMP/$name.err" || rc=$?
	tail -n +$((before + 1)) "$TMP/requests" >"$TMP/$name.requests"
	echo "$rc $(($(date +%s) - t0)) $(wc -l <"$TMP/$name.requests")"
}

read -r rc secs n <<<"$(report_run plain)"
echo "report beside a trickling debuginfod: exit $rc in $secs s, $n requests"
sort "$TMP/plain.requests" | uniq -c
cat "$TMP/plain.err"
assert_eq "$rc" 0 "report's exit status"
[ "$n" -ge 1 ] || die "debuginfod was never asked"
[ -z "$(sort "$TMP/plain.requests" | uniq -d)" ] || die "a build-id asked for twice in one report"
grep -q '^gapscope: debuginfod: the debug file of build-id [0-9a-f]* cut at 10 s' "$TMP/plain.err" ||
	die "the cut download not said"
[ "$secs" -le $((10 * n + 30)) ] || die "$secs s for $n requests (10 s each at most, and 30 s)"

# A user's DEBUGINFOD_MAXTIME longer than the report's 30 s for debuginfod: the download gets
# what is left of those (each build-id still once), and the report says the 30 s are spent.
read -r rc secs n <<<"$(report_run long DEBUGINFOD_MAXTIME=600)"
echo "with DEBUGINFOD_MAXTIME 600: exit $rc in $secs s, $n requests"
cat "$TMP/long.err"
assert_eq "$rc" 0 "report's exit status (DEBUGINFOD_MAXTIME 600)"
[ "$n" -ge 1 ] || die "debuginfod was never asked (DEBUGINFOD_MAXTIME 600)"
[ -z "$(sort "$TMP/long.requests" | uniq -d)" ] || die "a build-id asked for twice (DEBUGINFOD_MAXTIME 600)"
grep -Eq '^gapscope: debuginfod: the debug file of build-id [0-9a-f]* cut at ([0-9]|[12][0-9]|30) s' "$TMP/long.err" ||
	die "the download was not cut at what was left of the 30 s"
# A backstop, generous for a loaded machine: one download alone would take 600 s.
[ "$secs" -le 150 ] || die "$secs s with DEBUGINFOD_MAXTIME 600 (30 s for debuginfod in all)"
echo ok
