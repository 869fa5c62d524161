#!/usr/bin/env bash
# engine/cuda_api.h, the driver API zkengine and simcuda use, declared for a build without the
# CUDA toolkit, against the toolkit's cuda.h: a program that prints every function's bound
# symbol (cuMemAlloc -> cuMemAlloc_v2: the dlsym string and simcuda's export), every constant
# and every type's size gives the same lines compiled with either. Then the engine, simcuda and
# their test are built with CUDA_HOME=/nonexistent (as on a machine without the toolkit): the
# build says so in one line, the engine verifies its results on simcuda, and --device cuda
# refuses in one line.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -e "$CUDA_HOME/include/cuda.h" ] || skip "no CUDA toolkit at $CUDA_HOME to compare with"

funcs=$(sed -n 's/^CUresult \(cu[A-Za-z0-9_]*\)(.*/\1/p' engine/cuda_api.h)
consts=$(sed -n -e 's/^\t\(CU[A-Z0-9_]*\) = .*/\1/p' -e 's/^#define \(CU_[A-Z0-9_]*\) .*/\1/p' \
	engine/cuda_api.h)
[ "$(echo "$funcs" | wc -l)" -ge 50 ] || die "too few functions found in cuda_api.h"
{
	echo '#include <stdio.h>'
	echo '#include "cuda_api.h"'
	echo '#define STR_(x) #x'
	echo '#define STR(x) STR_(x)'
	echo 'int main(void) {'
	for f in $funcs; do
		echo "	printf(\"$f %s\\n\", STR($f));"
		echo "	{ __typeof__($f) *p = $f; (void)p; }"
	done
	for c in $consts; do
		case $c in
		CU_STREAM_LEGACY | CU_STREAM_PER_THREAD) echo "	printf(\"$c %p\\n\", (void *)$c);" ;;
		*) echo "	printf(\"$c %lld\\n\", (long long)$c);" ;;
		esac
	done
	for t in CUresult CUdevice CUdeviceptr CUcontext CUstream CUdevice_attribute \
		CUstreamCaptureStatus CUstreamCaptureMode; do
		echo "	printf(\"sizeof $t %zu\\n\", sizeof($t));"
	done
	echo '	printf("CUDA_VERSION %d\n", CUDA_VERSION / 1000);'
	echo '	return 0; }'
} >"$TMP/names.c"
# Taking each function's address (and not calling it) needs its declaration, not the library.
${CC:-cc} -Iengine -I"$CUDA_HOME/include" -Wl,--unresolved-symbols=ignore-all \
	"$TMP/names.c" -o "$TMP/toolkit"
${CC:-cc} -Iengine -DZK_NO_CUDA_TOOLKIT -Wall -Werror -Wl,--unresolved-symbols=ignore-all \
	"$TMP/names.c" -o "$TMP/declared"
"$TMP/toolkit" >"$TMP/toolkit.txt"
"$TMP/declared" >"$TMP/declared.txt"
diff -u "$TMP/toolkit.txt" "$TMP/declared.txt" || die "cuda_api.h differs from $CUDA_HOME's cuda.h"
echo "cuda_api.h: $(grep -c . "$TMP/declared.txt") names, values and sizes as the toolkit's"

# Nothing else the no-GPU path builds names the toolkit's headers: only the CUPTI collector and
# its test (skipped without it) and the GPU machine's programs (tests/gpu/progs) may.
left=$(git grep -l -E '#include <(cuda|cupti|cuda_runtime)[a-z_]*\.h>' -- '*.c' '*.h' '*.cc' |
	grep -v -E '^(engine/cuda_api\.h|loader/cupti/|tests/unit/test_cupti_records\.c|tests/gpu/)' || true)
[ -z "$left" ] || die "needs the toolkit's headers, but is built without it: $left"

# Built without the toolkit: simcuda and the engine work, a real GPU is refused in one line.
b=$TMP/b
# As a make run from a shell: under make check, MAKELEVEL and MAKEFLAGS are make check's.
env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS make --no-print-directory CUDA_HOME=/nonexistent \
	BUILD="$b" "$b/zkengine" "$b/simcuda/libcuda.so.1" "$b/tests/test_simcuda" \
	>"$TMP/make.out" 2>&1 ||
	{ cat "$TMP/make.out"; die "the engine does not build without the toolkit"; }
assert_eq "$(grep -c 'no CUDA toolkit at /nonexistent: building for simcuda only' "$TMP/make.out")" 1 \
	"the build's line about the toolkit"
"$b/tests/test_simcuda" >/dev/null || die "test_simcuda built without the toolkit failed"
"$b/zkengine" --device sim --partitions 2 --log2n 10 --verify >"$TMP/zk.out" 2>&1 ||
	{ cat "$TMP/zk.out"; die "zkengine built without the toolkit failed on simcuda"; }
grep -q '^verification passed' "$TMP/zk.out" || die "zkengine did not verify"
rc=0
"$b/zkengine" --device cuda >"$TMP/cuda.out" 2>&1 || rc=$?
assert_eq "$rc" 1 "zkengine --device cuda without kernels: exit"
assert_eq "$(cat "$TMP/cuda.out")" \
	"zkengine: --device cuda: built without the CUDA toolkit, so without GPU kernels (install cuda-toolkit-13-0 and rebuild)" \
	"zkengine --device cuda without kernels"
echo "built without the toolkit: simcuda verified, --device cuda refused in one line"
