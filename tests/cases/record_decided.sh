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
echo "ok: every scenario and program gives the same gaps from the decided launches"
