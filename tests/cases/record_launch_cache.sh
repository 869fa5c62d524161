#!/usr/bin/env bash
# Launch counts through the threads' launch caches (bpf/cuda.bpf.c, cu_thread): 6 threads, 300
# kernels on 3 streams, 30000 launches, counted exactly per kernel and stream whether the
# threads exit before the recording ends or live on past it, and without caches (a kernel that
# gives uprobes no task storage: every launch streamed) (tests/record/launch_cache.py).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
${CC:-cc} -O2 -g -pthread -o "$TMP/launchmix" tests/record/launchmix.c -ldl ||
	die "cannot build launchmix"
${CC:-cc} -O2 -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c ||
	die "cannot build the stand-in libcuda"
python3 tests/record/launch_cache.py "$TMP" "$TMP/libcuda.so.1"
