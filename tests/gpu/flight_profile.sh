#!/usr/bin/env bash
# Where record --flight spends its CPU, attached to a PyTorch process (issue 37: <= 1 s a
# minute):   OUT=DIR tests/gpu/flight_profile.sh     (carry build/gapscope-portable; ~90 s)
# tests/gpu/progs/torch_stall.py runs its steady loop; a flight recorder attaches to it as
# tests/gpu/flight.sh's does; after 20 s a second recorder samples the first for 40 s
# (--sampler timer --freq 997: on-CPU stacks at ~1 kHz) into OUT/self.gsc, for
# tests/gpu/fold_self.sh to fold where the same build is. The first recorder's CPU over the
# same 40 s is measured from /proc apart (the second's BPF programs run in its context, so
# that figure is a little high). OUT gets table.txt (printed last) and log.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-flight-profile}
. tests/gpu/lib.sh
mkdir -p "$OUT/dumps"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
torch_stall 150 /dev/null
"$GS" record --flight 30 --trigger-gap 50 --dump-dir "$OUT/dumps" --metrics "127.0.0.1:$PORT" \
	-p "$TPID" >"$OUT/flight.out" 2>"$OUT/flight.err" &
RPID=$!
sleep 20
cpu0=$(awk '{ print $14 + $15 }' /proc/$RPID/stat)
"$GS" record -p "$RPID" --sampler timer --freq 997 --duration 40 --no-python \
	-o "$OUT/self.gsc" 2>"$OUT/self.err"
cpu1=$(awk '{ print $14 + $15 }' /proc/$RPID/stat)
tck=$(getconf CLK_TCK)
say "flight recorder CPU while sampled: $(awk -v a="$cpu0" -v b="$cpu1" -v t="$tck" 'BEGIN { printf "%.2f s in 40 s = %.2f s/min", (b - a) / t, (b - a) / t * 1.5 }')"
kill -INT $RPID
wait $RPID
kill $TPID 2>/dev/null
# The trace comes back as is: its user frames are named where the portable binary is (its
# symbols are the same everywhere), by tests/gpu/fold_self.sh.
ls -la "$OUT/self.gsc" | tee -a "$table"
