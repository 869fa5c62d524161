#!/usr/bin/env bash
# Launches decided in the kernel (bpf/cuda.bpf.c) lose nothing the report needs. Every zkengine
# scenario and the programs of report_programs (tests/report/feeder.c) are recorded once with
# --all-launches, which streams every launch and flags those the default recording leaves out;
# the report of that trace and of the same trace read --decided-only (the default recording of
# the same run) must give the same gaps and top cause (tests/report/decided_check.py), and the
# recorder's launch counts must equal the launches recorded and the engine's own count. The
# default recording itself is checked against the engine's count in record_zkengine.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/report/decided_check.py"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

# compare NAME [LAUNCHES]: the two reports of NAME.gsc.
compare() {
	"$GS" report "$TMP/$1.gsc" -o "$TMP/$1.all" >/dev/null 2>"$TMP/$1.rerr" || {
		cat "$TMP/$1.rerr"
		die "report $1"
	}
	"$GS" report --decided-only "$TMP/$1.gsc" -o "$TMP/$1.dec" >/dev/null 2>"$TMP/$1.rerr" || {
		cat "$TMP/$1.rerr"
		die "report --decided-only $1"
	}
	$CHECK "$TMP/$1.all/summary.json" "$TMP/$1.dec/summary.json" "$@" || die "$1"
}

for s in fixed tracker-trim gpu-lock-wide starved pageable oversubscribed; do
	timeout 300 "$GS" record --all-launches -o "$TMP/$s.gsc" -- "$ZK" --device sim \
		--scenario "$s" >"$TMP/$s.out" 2>"$TMP/$s.err" || {
		cat "$TMP/$s.out" "$TMP/$s.err"
		die "record $s"
	}
	compare "$s" "$(sed -n 's/^launches: \([0-9]*\)$/\1/p' "$TMP/$s.out")"
done

mkfifo "$TMP/in.fifo"
for m in sleep file helper graph; do
	[ $m = file ] && (for i in $(seq 25); do sleep 0.015; head -c 4096 /dev/zero; done >"$TMP/in.fifo") &
	timeout 120 "$GS" record --all-launches -o "$TMP/$m.gsc" -- "$TMP/feeder" "$LIBCUDA" $m 20 15 \
		$([ $m = file ] && echo "$TMP/in.fifo") >"$TMP/$m.out" 2>"$TMP/$m.err" || {
		cat "$TMP/$m.out" "$TMP/$m.err"
		die "record $m"
	}
	wait
	compare "$m"
done

# Async memsets (cuBLAS puts one before each launch) are counted, never streamed by default,
# and do not make the launch after them streamed: 2000 memsets and launches (1000 of them
# warm-up), one launch record, exact counts; with --all-launches each has its flagged record.
${CC:-cc} -O2 -o "$TMP/launchloop" tests/bench/launchloop.c -ldl || die "cannot build launchloop"
${CC:-cc} -O2 -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c ||
	die "cannot build the stand-in libcuda"
for mode in default all; do
	o=; [ $mode = all ] && o=--all-launches
	"$GS" record $o -o "$TMP/ms.$mode.gsc" -- "$TMP/launchloop" "$TMP/libcuda.so.1" 1000 memset \
		>/dev/null 2>"$TMP/ms.err" || { cat "$TMP/ms.err"; die "record launchloop memset"; }
	"$GS" script "$TMP/ms.$mode.gsc" >"$TMP/ms.$mode.txt" 2>/dev/null || die "script memset"
	ms=$(grep '^# memset-count ' "$TMP/ms.$mode.txt" | grep 'fn=cuMemsetD8Async' |
		sed 's/.* n=//' | awk '{ s += $1 } END { print s + 0 }')
	assert_eq "$ms" 2000 "$mode: async memsets counted"
	assert_eq "$(launch_count "$TMP/ms.$mode.txt" 'fn=cuLaunchKernel ')" 2000 "$mode: launches counted"
	recs=$(grep -c ' cuda:cuMemsetD8Async' "$TMP/ms.$mode.txt" || true)
	lrecs=$(grep -c ' cuda:cuLaunchKernel ' "$TMP/ms.$mode.txt" || true)
	if [ $mode = default ]; then
		assert_eq "$recs" 0 "default: async memset records"
		assert_eq "$lrecs" 1 "default: launch records"
	else
		assert_eq "$recs" 2000 "--all-launches: async memset records"
		assert_eq "$lrecs" 2000 "--all-launches: launch records"
	fi
	# The trace's chunks are compressed (trace.h: raw_len, the chunk header's last word).
	python3 - "$TMP/ms.$mode.gsc" <<'PY' || die "$mode: chunks not compressed"
import struct, sys
d = open(sys.argv[1], "rb").read()
off, z, n = struct.unpack_from("<I", d, 12)[0], 0, 0
while off + 32 <= len(d):
    ln, raw = struct.unpack_from("<I", d, off + 4)[0], struct.unpack_from("<I", d, off + 28)[0]
    n, z = n + 1, z + (raw > ln)
    off += 32 + ln
assert n and z, "%d chunks, %d compressed" % (n, z)
PY
	"$GS" report -o "$TMP/ms.$mode.rep" "$TMP/ms.$mode.gsc" >/dev/null 2>&1 || die "report memset"
	python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["launches"]; assert l["total"] == 2000 and l["async_memsets"] == 2000, l' \
		"$TMP/ms.$mode.rep/summary.json" || die "$mode: summary.json launches"
done
echo "ok: every scenario and program gives the same gaps from the decided launches"
