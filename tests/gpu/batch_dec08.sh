#!/usr/bin/env bash
# This batch's checks on the GPU machine in one start (carry build/gapscope-portable and
# build/zkengine-portable):   OUT=$OUT tests/gpu/batch_dec08.sh   (about 6 minutes)
#
# flight.sh (issue 48: the flight recorder attached to a PyTorch loop for 5 minutes, its CPU and
# memory against the budget) runs in the background from the start; meanwhile, one after the
# other: batch_dec07.sh (the real driver after the bounded stream tables, the device-thread hook,
# the one pre-pass, gapscope diff), faults.sh and pygc.sh (issue 46: a fault, the collector, a
# library under the user's function, named on PyTorch) and recover.sh (issue 47: predicted
# recoverable time against the twin without the trim). The flight recorder's CPU is its own
# process's and its children's, which the others running beside it do not change; the 16 CPUs
# leave each program a CPU. QUICK=1: no flight.sh, the other four at once (about 3 minutes;
# recover.sh's two runs then share the machine with the others, alike). Each script's table
# under OUT/NAME/, all of them last.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu-batch}
mkdir -p "$OUT"
if [ -z "${QUICK:-}" ]; then
	OUT=$OUT/flight timeout 420 tests/gpu/flight.sh >/dev/null 2>&1 &
	fl=$!
	OUT=$OUT/batch timeout 150 tests/gpu/batch_dec07.sh >/dev/null 2>&1
	for s in faults pygc recover; do
		OUT=$OUT/$s timeout 150 tests/gpu/$s.sh >/dev/null 2>&1
		echo "$s: exit $?" >>"$OUT/exits.txt"
	done
	wait $fl
	echo "flight: exit $?" >>"$OUT/exits.txt"
else
	OUT=$OUT/batch timeout 170 tests/gpu/batch_dec07.sh >/dev/null 2>&1 &
	for s in faults pygc recover; do
		(OUT=$OUT/$s timeout 170 tests/gpu/$s.sh >/dev/null 2>&1
		 echo "$s: exit $?" >>"$OUT/exits.txt") &
	done
	wait
fi
for s in batch faults pygc recover flight; do
	echo "== $s"
	cat "$OUT/$s/table.txt" "$OUT/$s/batch.txt" 2>/dev/null
done
cat "$OUT/exits.txt"
