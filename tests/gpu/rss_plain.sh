#!/usr/bin/env bash
# The plain recorder's memory attached to a PyTorch process (issue 37's "plain <= 100 MB"):
#   OUT=DIR tests/gpu/rss_plain.sh        (carry build/gapscope-portable; about 1 minute)
# tests/gpu/progs/torch_stall.py runs its steady matmul loop (libtorch_cpu, libtorch_cuda and
# 60-odd more libraries mapped); `record -p PID --duration 40` attaches. The recorder's VmHWM,
# polled every 0.5 s, is its peak resident size; at 35 s its memory by mapping (the ring buffer
# shows as anon_inode:bpf-map, mapped twice). OUT gets table.txt (printed last) and log.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-rss}
. tests/gpu/lib.sh
torch_stall 120 /dev/null
say "target: $(grep -c '\.so' /proc/$TPID/maps) library mappings, $(awk '/^VmRSS:/ { print $2 }' /proc/$TPID/status) KiB resident"
"$GS" record -p "$TPID" --duration 40 -o "$OUT/t.gsc" 2>"$OUT/record.err" &
RPID=$!
hwm=0 n=0
while kill -0 $RPID 2>/dev/null; do
	h=$(awk '/^VmHWM:/ { print $2 }' /proc/$RPID/status 2>/dev/null) && [ -n "$h" ] && hwm=$h
	n=$((n + 1))
	if [ $n -eq 70 ]; then
		awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anon]" : $6) } /^Rss:/ { rss[name] += $2 }
			END { for (k in rss) if (rss[k] >= 512) printf "%8d KiB %s\n", rss[k], k }' \
			"/proc/$RPID/smaps" | sort -rn >"$OUT/smaps.txt"
	fi
	sleep 0.5
done
wait $RPID
rc=$?
kill $TPID 2>/dev/null
say "record -p exit $rc; $(grep -m1 'events' "$OUT/record.err")"
say "recorder memory by mapping at 35 s (KiB, the largest): $(head -6 "$OUT/smaps.txt" | awk '{ printf "%s %s; ", $1, $3 }')"
say "RESULT: plain record -p peak RSS $hwm KiB ($((hwm / 1024)) MiB), goal <= 100 MB: $([ "$hwm" -le 97656 ] && echo yes || echo NO)"
rm -f "$OUT/t.gsc"
