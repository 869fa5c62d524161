#!/usr/bin/env bash
# Foundation check on the GPU machine (issue 2): zkengine drives the real driver through
# dlopen("libcuda.so.1"), runs the H polynomial on the GPU and verifies every partition against
# the GMP reference, at log2n 22 (and 24 when 22 was fast).  Prints a table of GPU stage times
# per partition last.  Output goes to $OUT when set (else build/gpu-foundation).
#
# Builds zkengine there when GMP's header is present; otherwise uses a carried
# build/zkengine-portable (`make zkengine-portable` on a dev machine: GMP linked statically,
# glibc dynamic).  The H200 machine seen in Nov 2026 had no GMP headers, so:
#   here:  make zkengine-portable
#   there: OUT=$OUT tests/gpu/foundation.sh      (carrying build/zkengine-portable)
# Output of such a run is kept in tests/gpu/foundation-h200/.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-foundation}
PARTITIONS=${PARTITIONS:-4}
mkdir -p "$OUT"
summary=$OUT/foundation.txt
: >"$summary"

say() { echo "$@" | tee -a "$summary"; }

say "== machine"
say "kernel $(uname -r), $(nproc) CPUs"
{
	nvidia-smi -L || echo "nvidia-smi -L failed"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
	ldconfig -p | grep 'libcuda\.so\.1 ' || echo "ldconfig: no libcuda.so.1"
	nvcc --version | tail -n 1 || echo "no nvcc on PATH"
} 2>&1 | tee -a "$summary"

say "== build"
ZK=
if [ -f /usr/include/gmp.h ] || [ -f /usr/include/x86_64-linux-gnu/gmp.h ]; then
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	cuda_home=$(dirname "$(dirname "$nvcc")")
	make -j"$(nproc)" CUDA_HOME="$cuda_home" NVCC="$nvcc" "$BUILD/zkengine" 2>&1 | tail -n 20
	ZK=$BUILD/zkengine
	say "built $ZK here (nvcc and GMP of this machine)"
elif [ -x "$BUILD/zkengine-portable" ]; then
	ZK=$BUILD/zkengine-portable
	say "no GMP headers here: using the carried $ZK"
else
	say "no GMP headers here and no carried $BUILD/zkengine-portable:" \
	    "run 'make zkengine-portable' on a dev machine and carry build/zkengine-portable"
	exit 1
fi
ldd "$ZK" | tee -a "$summary"

say "== device auto picks the real driver"
"$ZK" --device auto --partitions 1 --log2n 12 --verify 2>&1 | tee "$OUT/auto.txt"
if ! grep -q '^zkengine: device cuda ' "$OUT/auto.txt"; then
	say "FAIL: --device auto did not pick cuda"
	exit 1
fi

status=0
run_size() { # run_size LOG2N: verified run, output to $OUT/log2n-LOG2N.txt
	local k=$1 start end rc=0
	say "== --device cuda --verify --log2n $k --partitions $PARTITIONS"
	start=$(date +%s%N)
	"$ZK" --device cuda --verify --log2n "$k" --partitions "$PARTITIONS" \
		>"$OUT/log2n-$k.txt" 2>&1 || rc=$?
	end=$(date +%s%N)
	cat "$OUT/log2n-$k.txt"
	say "log2n $k: exit $rc, $(((end - start) / 1000000)) ms wall (GMP verification included)"
	[ "$rc" -eq 0 ] || status=1
	return "$rc"
}

t0=$(date +%s)
run_size 22 || true
if [ "$status" -eq 0 ] && [ $(($(date +%s) - t0)) -lt 150 ]; then
	run_size 24 || true
fi

say ""
say "== GPU stage times per partition (ms, from CUDA events)"
{
	printf '%-6s %s\n' log2n "$(grep -m1 '^part ' "$OUT/log2n-22.txt" || echo '(no table)')"
	for f in "$OUT"/log2n-*.txt; do
		k=${f##*/log2n-}
		k=${k%.txt}
		grep -E '^ +[0-9]+ +[0-9]+ ' "$f" | sed "s/^/$(printf '%-6s' "$k") /"
		grep -E 'verification (passed|FAILED)' "$f" | sed "s/^/$(printf '%-6s' "$k") /"
	done
} | tee -a "$summary"
exit "$status"
