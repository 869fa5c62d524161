#!/usr/bin/env bash
# record -p, and a CUDA driver (simcuda) the process dlopen()s long after the attach, also after
# an exec: the recorder probes it through the mapping's /proc/PID/map_files link (the loader has
# closed its fd by the time the event is read), says so, and every call made after that line is
# in the trace. tests/record/latecuda.c loads the library and calls it only when told to: the
# test tells it once the recorder said it attached, and each wait is for a line.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
CC=${CC:-cc}
SIMCUDA=$(realpath "$BUILD/simcuda/libcuda.so.1")
[ -e "$SIMCUDA" ] || die "$SIMCUDA not built"
$CC -O2 -g -o "$TMP/latecuda" tests/record/latecuda.c -ldl

python3 tests/record/late_cuda.py "$TMP" "$SIMCUDA" 0 1
