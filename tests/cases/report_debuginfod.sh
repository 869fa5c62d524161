#!/usr/bin/env bash
# report of a stripped program's trace with DEBUGINFOD_URLS naming a loopback server that
# answers each request with 300 KB quickly and then a byte a second: each download is cut at
# DEBUGINFOD_MAXTIME (10 s where unset, reports/symbols/symbols.h), so the report ends within 10 s a
# request (counted by the server) plus 30 s, with its frames named from what the files hold.
# Before, libdebuginfod's timeout (for no progress at all) never fired and the report hung.
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
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
n = 0
def trickle(c):
    try:
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n" + b"\0" * 300000)
        while True:
            c.send(b"\0"); time.sleep(1)
    except OSError:
        pass
while True:
    c = s.accept()[0]
    n += 1
    open(sys.argv[2], "w").write(str(n))
    threading.Thread(target=trickle, args=(c,), daemon=True).start()
PY
SRV=$!
trap 'kill $SRV 2>/dev/null; cleanup' EXIT
until [ -s "$TMP/port" ]; do sleep 0.1; done
t0=$(date +%s)
rc=0
env -u DEBUGINFOD_MAXTIME DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$TMP/port")" \
	DEBUGINFOD_CACHE_PATH="$TMP/cache" timeout 600 "$GS" report "$TMP/t.gsc" -o "$TMP/rep" \
	>/dev/null 2>"$TMP/rep.err" || rc=$?
secs=$(($(date +%s) - t0))
n=$(cat "$TMP/requests" 2>/dev/null || echo 0)
echo "report beside a trickling debuginfod: exit $rc in $secs s, $n requests"
assert_eq "$rc" 0 "report's exit status"
[ "$n" -ge 1 ] || die "debuginfod was never asked"
[ "$secs" -le $((10 * n + 30)) ] || die "$secs s for $n requests (10 s each at most, and 30 s)"
echo ok
