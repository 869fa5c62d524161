#!/usr/bin/env bash
# record --flight --metrics under a connection flood: 4 local threads open connections as fast as
# they can and send nothing, each keeping its last 400 open. 20 scrapes, one every 0.3 s, are
# all answered (curl's 10 s bound only turns a hang into a failure; the times are printed).
# Before, a newcomer took the slot of the oldest connection whatever it was doing, and the
# listener's backlog of 64 dropped handshakes: 3 to 6 of 20 scrapes failed at 5 s.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
REC_PID= FLOOD_PID=
stop() {
	[ -z "$FLOOD_PID" ] || kill "$FLOOD_PID" 2>/dev/null || true
	[ -z "$REC_PID" ] || kill "$REC_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	cleanup
}
trap stop EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat >"$TMP/flood.py" <<'EOF'
import socket, sys, threading, time
port = int(sys.argv[1])
def run():
    held = []
    while True:
        try:
            s = socket.socket(); s.setblocking(False)
            try: s.connect(("127.0.0.1", port))
            except BlockingIOError: pass
            held.append(s)
            if len(held) > 400: held.pop(0).close()
        except OSError:
            time.sleep(0.001)
for _ in range(4): threading.Thread(target=run, daemon=True).start()
open(sys.argv[2], "w").close()
time.sleep(600)
EOF
# The target runs while the scrapes come; the linger keeps the server up should it end first.
"$GS" record --flight 5 --metrics "127.0.0.1:$PORT" --metrics-linger 300 -o "$TMP/m.gsc" -- \
	"$ZK" --device sim --scenario tracker-trim -n 400 >/dev/null 2>"$TMP/err" &
REC_PID=$!
until curl -sf -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics"; do
	kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/err"; die "the recorder ended"; }
	sleep 0.1
done
python3 "$TMP/flood.py" "$PORT" "$TMP/flooding" &
FLOOD_PID=$!
until [ -e "$TMP/flooding" ]; do sleep 0.1; done
sleep 1
ok=0 times=
for _ in $(seq 20); do
	rm -f "$TMP/scrape"
	rc=0
	t=$(curl -sf -m 10 -o "$TMP/scrape" -w '%{time_total}' "http://127.0.0.1:$PORT/metrics") || rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^gapscope_recording_done ' "$TMP/scrape"; then
		ok=$((ok + 1))
		times="$times $t"
	else
		times="$times FAILED($t s, curl $rc)"
	fi
	sleep 0.3
done
echo "scrape times under the flood (s):$times"
echo "$times" | tr ' ' '\n' | grep -v FAILED | sort -n | tail -1 | sed 's/^/slowest answered: /'
kill "$FLOOD_PID"
wait "$FLOOD_PID" 2>/dev/null || true
FLOOD_PID=
# SIGTERM goes on to the target; once the recording is done, a second one ends the linger.
kill -TERM "$REC_PID"
until curl -sf -m 10 "http://127.0.0.1:$PORT/metrics" | grep -q '^gapscope_recording_done 1$'; do
	kill -0 "$REC_PID" 2>/dev/null || break
	sleep 0.2
done
kill -TERM "$REC_PID" 2>/dev/null || true
wait "$REC_PID" || true
REC_PID=
assert_eq "$ok" 20 "scrapes answered under the flood, of 20"
echo ok
