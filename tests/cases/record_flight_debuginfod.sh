#!/usr/bin/env bash
# record --flight with DEBUGINFOD_URLS naming a server that accepts and never answers (red-team
# D1): the live analysis runs on the recording's thread and must never wait on the network. A
# stripped engine (its symbols would be asked of debuginfod) is recorded with --metrics and -o:
# gapscope_events_total rises between two scrapes 2 s apart, the -o trace grows, nothing is
# lost, and SIGINT ends the recording at once (the engine gets it and ends; the recorder with it).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
need_built "$GS" "$ZK" "$LIBCUDA"
SRV_PID=
REC_PID=
stop() {
	# A recorder killed takes no signal to its engine: that one goes by its exact command line.
	[ -n "$REC_PID" ] && kill -KILL "$REC_PID" 2>/dev/null &&
		pkill -KILL -xf './zk-stripped --device sim --scenario tracker-trim --partitions 100000'
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	cleanup
}
trap stop EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
SPORT=$(free_port)
MPORT=$(free_port)

GS=$(realpath "$GS")
cp "$ZK" "$TMP/zk-stripped"
cp "$LIBCUDA" "$TMP/libcuda.so.1"
cd "$TMP"
strip zk-stripped
mkdir simcuda && mv libcuda.so.1 simcuda/
python3 - "$SPORT" <<'PY' &
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
threading.Timer(300, lambda: __import__("os")._exit(0)).start()  # bounded: it ends by itself
held = []
while True:
    held.append(s.accept()[0])  # accepted, never answered
PY
SRV_PID=$!
until python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $SPORT)).close()" 2>/dev/null; do
	kill -0 "$SRV_PID" || die "the debuginfod stand-in did not start"
	sleep 0.1
done

scrape() { curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics" | awk '/^gapscope_events_total[{ ]/ { s += $NF } END { print s + 0 }'; }

# env --default-signal: a background job of a script starts with SIGINT ignored, and the engine
# (which gets the recorder's SIGINT) would keep that.
DEBUGINFOD_URLS=http://127.0.0.1:$SPORT DEBUGINFOD_CACHE_PATH=$TMP/dc env --default-signal=INT \
	"$GS" record --flight 5 --metrics "127.0.0.1:$MPORT" --dump-dir "$TMP" \
	-o hang.gsc -f -- ./zk-stripped --device sim --scenario tracker-trim --partitions 100000 \
	>out 2>err &
REC_PID=$!
# Until the engine's CUDA probes are on and the live analysis has had records (a guard, not a
# timing: 60 s).
for _ in $(seq 600); do
	grep -q 'CUDA probes' err && e=$(scrape) && [ "${e:-0}" -gt 1000 ] && break
	kill -0 "$REC_PID" 2>/dev/null || { cat err; die "the recorder ended"; }
	sleep 0.1
done
e1=$(scrape) || die "no /metrics"
s1=$(stat -c %s hang.gsc)
sleep 2
e2=$(scrape) || die "no /metrics 2 s later"
s2=$(stat -c %s hang.gsc)
echo "events_total $e1 -> $e2, trace $s1 -> $s2 bytes, 2 s apart"
[ "$e2" -gt "$e1" ] || die "events_total did not rise: the recording is stalled"
[ "$s2" -gt "$s1" ] || die "the trace did not grow: the recording is stalled"
t0=$(date +%s%N)
kill -INT "$REC_PID"
rc=0
wait "$REC_PID" || rc=$?
REC_PID=
ms=$((($(date +%s%N) - t0) / 1000000))
echo "SIGINT to exit: $ms ms (exit $rc)"
grep '^gapscope: .* lost' err || { cat err; die "no end line"; }
grep -q '^gapscope: [0-9]* events, .*, 0 lost$' err || die "events lost"
[ "$ms" -le 2000 ] || die "SIGINT took $ms ms to end the recorder"

kill "$SRV_PID"
SRV_PID=

# A dump's report beside a debuginfod that trickles (red-team D27): each request gets 300 KB at
# once, then a byte a second, and is logged with its path, and again once the client has gone.
# The report asked for the engine's debug file 4 times (a cut download was not remembered) and
# SIGINT waited for it: 43 s. Now the report asks once a build-id, and SIGINT ends the recorder
# and cuts the report (SIGTERM to it: the dump's trace is whole), saying so.
python3 - "$TMP/tport" "$TMP/requests" <<'PY' &
import os, socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
threading.Timer(300, lambda: os._exit(0)).start()  # bounded: it ends by itself
log = open(sys.argv[2], "a", buffering=1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def trickle(c):
    req = "?"
    try:
        req = c.recv(65536).split(b"\r\n")[0].decode()
        log.write("GET " + req.split()[1] + "\n")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n" + b"\0" * 300000)
        while True:
            c.send(b"\0"); time.sleep(1)
    except (OSError, IndexError):
        log.write("closed " + (req.split() + ["?", "?"])[1] + "\n")
while True:
    threading.Thread(target=trickle, args=(s.accept()[0],), daemon=True).start()
PY
SRV_PID=$!
until [ -s "$TMP/tport" ]; do
	kill -0 "$SRV_PID" || die "the trickling debuginfod stand-in did not start"
	sleep 0.1
done
mkdir "$TMP/dumps"
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$TMP/tport") DEBUGINFOD_CACHE_PATH=$TMP/dc2 \
	env --default-signal=INT "$GS" record --flight 5 --dump-dir "$TMP/dumps" -- \
	./zk-stripped --device sim --scenario tracker-trim --partitions 100000 >/dev/null 2>err2 &
REC_PID=$!
for _ in $(seq 600); do
	grep -q 'CUDA probes' err2 && break
	kill -0 "$REC_PID" 2>/dev/null || { cat err2; die "the recorder ended"; }
	sleep 0.1
done
grep -q 'CUDA probes' err2 || die "the engine's CUDA probes never came on"
kill -USR1 "$REC_PID"
# Until the dump's report has asked debuginfod (a guard, not a timing: 60 s).
for _ in $(seq 600); do
	grep -q '^GET ' "$TMP/requests" 2>/dev/null && break
	kill -0 "$REC_PID" 2>/dev/null || die "the recorder ended"
	sleep 0.1
done
grep -q '^GET ' "$TMP/requests" || die "the dump's report never asked debuginfod"
t0=$(date +%s%N)
kill -INT "$REC_PID"
rc=0
wait "$REC_PID" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
REC_PID=
echo "SIGINT to the recorder's end, its dump's report asking a trickling debuginfod: $ms ms (exit $rc)"
grep 'report of .* cut at exit' err2 || { cat err2; die "the report's cut was not said"; }
grep -q '^gapscope: flight: 1 dump report(s) cut at exit' err2 || die "the cut not counted"
# The report is gone: its connection closes (a guard: 60 s).
for _ in $(seq 600); do
	[ "$(grep -c '^closed ' "$TMP/requests")" -ge "$(grep -c '^GET ' "$TMP/requests")" ] && break
	sleep 0.1
done
sort "$TMP/requests" | uniq -c
[ "$(grep -c '^closed ' "$TMP/requests")" -ge "$(grep -c '^GET ' "$TMP/requests")" ] ||
	die "a request still open 60 s after the recorder ended: its report still runs"
[ -z "$(grep '^GET ' "$TMP/requests" | sort | uniq -d)" ] || die "a build-id asked for twice"
[ "$ms" -le 10000 ] || die "SIGINT took $ms ms to end the recorder"
echo ok
