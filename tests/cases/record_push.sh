#!/usr/bin/env bash
# record --flight --push (issue 24): a gap profile per interval POSTed the way Pyroscope's
# /ingest takes them, to a small HTTP receiver started here on a loopback port (python3
# http.server), and written to --pprof-dir. Every push carries name, from, until and
# format=pprof, and a multipart part "profile" that go tool pprof reads; the pushed profiles
# add up to the gaps of the report of the same run's whole recording (-o), and are the files.
# A store that takes connections and never answers: each push is said to time out, and the
# recorder exits within 2 x 2 s (the push in flight, then the last) of its target, not ~18 s;
# --pprof-dir's files are 0600.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
command -v go >/dev/null || die "go not installed (make deps: golang-go)"
export HOME=$TMP
GS=$BUILD/gapscope
RECV_PID=
trap '[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null; cleanup' EXIT

mkdir "$TMP/recv" "$TMP/pprof" "$TMP/dumps"
python3 - "$TMP/recv" >"$TMP/port" 2>"$TMP/recv.log" <<'PY' &
import cgi, http.server, io, os, sys, threading, urllib.parse
out = sys.argv[1]
n = 0
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global n
        u = urllib.parse.urlparse(self.path)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        env = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": self.headers["Content-Type"],
               "CONTENT_LENGTH": str(len(body))}
        form = cgi.FieldStorage(fp=io.BytesIO(body), environ=env)
        n += 1
        open(os.path.join(out, "%03d.pb.gz" % n), "wb").write(form["profile"].value)
        open(os.path.join(out, "%03d.query" % n), "w").write(u.path + "?" + u.query + "\n")
        self.send_response(200)
        self.end_headers()
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
threading.Timer(300, srv.shutdown).start()  # bounded: it stops by itself
srv.serve_forever()
PY
RECV_PID=$!
until [ -s "$TMP/port" ]; do
	kill -0 "$RECV_PID" 2>/dev/null || die "the receiver did not start"
	sleep 0.1
done
PORT=$(cat "$TMP/port")
[ -n "$PORT" ] || die "the receiver did not start"

# simcuda's device time x10: the run lasts over 6 s of modelled GPU time (three intervals or
# more) however fast this machine's CPUs trim.
SIMCUDA_TIME_SCALE=10 "$GS" record --flight 10 --dump-dir "$TMP/dumps" --push "http://127.0.0.1:$PORT/ingest" \
	--push-interval 2 --pprof-dir "$TMP/pprof" -o "$TMP/full.gsc" -- \
	"$BUILD/zkengine" --device sim --scenario tracker-trim --partitions 24 \
	>"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; die "record failed"; }
grep '^gapscope: flight' "$TMP/err"
"$GS" report "$TMP/full.gsc" -o "$TMP/rep" >/dev/null 2>&1 || die "report failed"

n=$(ls "$TMP/recv"/*.pb.gz | wc -l)
[ "$n" -ge 2 ] || die "$n profiles received"
grep -q "^gapscope: flight: $n gap profile(s) pushed, 0 failed, 0 skipped" "$TMP/err" ||
	die "pushed: $(grep 'profile(s) pushed' "$TMP/err")"
[ "$(ls "$TMP/pprof" | wc -l)" -eq "$n" ] || die "--pprof-dir has $(ls "$TMP/pprof" | wc -l) files"
total=0
for f in "$TMP/recv"/*.pb.gz; do
	q=$(cat "${f%.pb.gz}.query")
	for k in 'name=gapscope.gaps' 'format=pprof' 'from=[0-9]\+' 'until=[0-9]\+'; do
		echo "$q" | grep -q "^/ingest?.*$k" || die "$q: no $k"
	done
	go tool pprof -unit ns -raw "$f" >/dev/null 2>&1 || die "go tool pprof cannot read $f"
	t=$(go tool pprof -unit ns -top "$f" 2>/dev/null | sed -n 's/.* of \([0-9]*\)ns total.*/\1/p')
	total=$((total + ${t:-0}))
	cmp -s "$f" "$(ls "$TMP/pprof"/* | sed -n "$(basename "$f" .pb.gz | sed 's/^0*//')p")" ||
		die "$f differs from its --pprof-dir file"
done
want=$(python3 -c 'import json,sys; print(sum(g["duration_ns"] for g in json.load(open(sys.argv[1]))["gaps"]))' \
	"$TMP/rep/summary.json")
echo "$n profiles, $total ns of gaps; the report of the whole recording: $want ns"
awk -v t="$total" -v w="$want" 'BEGIN { d = t - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.01 * w) }' ||
	die "the pushed profiles hold $total ns of gaps, the report $want"
for f in "$TMP/pprof"/*; do
	assert_eq "$(stat -c %a "$f")" 600 "$f: mode"
done

# A store that accepts and never answers.
python3 - "$TMP/hport" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    held.append(s.accept()[0])
PY
HOLD=$!
trap '[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null; kill "$HOLD" 2>/dev/null; cleanup' EXIT
until [ -s "$TMP/hport" ]; do sleep 0.1; done
t0=$(date +%s%N)
"$GS" record --flight 5 --push "http://127.0.0.1:$(cat "$TMP/hport")/ingest" --push-interval 1 \
	-o "$TMP/hung.gsc" -- sleep 3 2>"$TMP/hung.err" || die "record failed: $(cat "$TMP/hung.err")"
ms=$((($(date +%s%N) - t0) / 1000000))
grep 'profile(s) pushed\|pushing a profile' "$TMP/hung.err"
echo "a store that never answers: the recording of sleep 3 took $ms ms"
[ "$ms" -lt 9000 ] || die "the recorder took $ms ms for a 3 s target"
grep -q 'pushing a profile to http://127.0.0.1:[0-9]*/ingest failed: Connection timed out' "$TMP/hung.err" ||
	die "the timeout is not said as one"
echo ok
