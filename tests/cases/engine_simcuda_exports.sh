#!/usr/bin/env bash
# simcuda exports only names the real driver exports (the toolkit's stubs/libcuda.so lists them),
# and the one hook a driver stand-in has for a profiler (gapscope_device_thread: bpf/cuda.h), is
# named libcuda.so.1, and zkengine does not link a libcuda at all (it dlopens one).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LIB=$BUILD/simcuda/libcuda.so.1
STUB=$CUDA_HOME/lib64/stubs/libcuda.so
[ -f "$LIB" ] || die "$LIB not built"
[ -f "$STUB" ] || die "$STUB missing: CUDA toolkit not installed"

nm -D --defined-only "$STUB" | awk '{print $NF}' | sort -u >"$TMP/stub"
nm -D --defined-only "$LIB" | awk '{print $NF}' | sort -u >"$TMP/all"
grep -qx gapscope_device_thread "$TMP/all" || die "simcuda does not export gapscope_device_thread"
nm -D --defined-only "$LIB" | grep -qE ' T gapscope_device_thread$' ||
	die "gapscope_device_thread is no function"
grep -vx gapscope_device_thread "$TMP/all" >"$TMP/sim"
# Its first instruction the kernel emulates at a probe's hit (push %rbp): a bare ret is stepped
# out of line, ten times the cost of a hit, taken before each simulated operation.
first=$(objdump -d --no-show-raw-insn "$LIB" | grep -A1 '<gapscope_device_thread>:$' | tail -1)
case "$first" in *push*%rbp*) ;; *) die "gapscope_device_thread starts with: $first" ;; esac
extra=$(comm -23 "$TMP/sim" "$TMP/stub")
[ -z "$extra" ] || die "simcuda exports names the driver does not: $extra"
n=$(wc -l <"$TMP/sim")
[ "$n" -ge 40 ] || die "only $n exports"
grep -vq '^cu' "$TMP/sim" && die "non-driver export: $(grep -v '^cu' "$TMP/sim")"

# the versioned names cuda.h binds, not the legacy unversioned ones
for sym in cuMemAlloc_v2 cuMemFree_v2 cuMemcpyHtoDAsync_v2 cuMemcpyDtoHAsync_v2 \
	   cuStreamDestroy_v2 cuEventDestroy_v2 cuEventElapsedTime_v2 cuCtxSynchronize \
	   cuCtxSynchronize_v2 cuLaunchKernel cuModuleLoadData cuModuleGetFunction; do
	grep -qx "$sym" "$TMP/sim" || die "simcuda lacks $sym"
done
for sym in cuMemAlloc cuMemFree cuStreamDestroy cuEventDestroy; do
	! grep -qx "$sym" "$TMP/sim" || die "simcuda exports the legacy $sym"
done

soname=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
assert_eq "$soname" libcuda.so.1 "simcuda soname"
! readelf -d "$BUILD/zkengine" | grep NEEDED | grep -q libcuda || die "zkengine links libcuda"
echo "simcuda: $n exports, all in $STUB"
