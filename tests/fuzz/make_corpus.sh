#!/usr/bin/env bash
# Records the fuzz targets' seed corpus (as root): small real traces of tests/record/target.c
# (a late-loaded stand-in libcuda, a contended mutex, malloc_trim, CPU burn; once with
# --lock-holds), of Debian's python3 (Python frames) and of zkengine on simcuda (tracker-trim, two tiny partitions), plus the golden
# traces. Recorded from a fixed directory, with the clock record's host and kernel names
# replaced (as tests/cases/script_golden.sh does), so the seeds name nothing of the machine.
# Regression inputs (tests/fuzz/corpus/*/regress-*) are kept.
#   tests/fuzz/make_corpus.sh [BUILD]
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
ROOT=$PWD
[ "$(id -u)" -eq 0 ] || { echo "make_corpus.sh: recording needs root" >&2; exit 1; }
dir=/tmp/gapscope-fuzz-seeds
CC=${CC:-cc}
rm -rf "$dir" && mkdir -p "$dir"
$CC -O2 -g -pthread -o "$dir/target" tests/record/target.c -ldl
$CC -O2 -g -shared -fPIC -o "$dir/libcuda.so.1" tests/record/fakecuda.c

record() { # NAME ARGS... (run in $dir)
	local name=$1
	shift
	(cd "$dir" && "$ROOT/$BUILD/gapscope" record -f --uncompressed -o "$dir/$name.raw" "$@") \
		>/dev/null 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; exit 1; }
}
record target -- ./target --dlopen ./libcuda.so.1 --launches 3 --syncs 1 --trims 1 --contend \
	--burn 0.01
record lockholds --lock-holds -- ./target --dlopen ./libcuda.so.1 --launches 1 --syncs 1 \
	--trims 1 --contend --burn 0.005
# Python frames and code records (GS_EV_PYSTACK, GS_REC_PYCODE): Debian's python3 at work.
record python --freq 97 -- /usr/bin/python3 -c 'def spin(n):
    return sum(i * i for i in range(n))
[spin(20000) for _ in range(30)]'
record zkengine --freq 97 -- "$ROOT/$BUILD/zkengine" --device sim --scenario tracker-trim \
	--partitions 2 --log2n 4 --synth-threads 1 --seed 1

anonymize() { # IN OUT
	python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
data = bytearray(open(sys.argv[1], "rb").read())
FH, CH, CLOCK = 32, 32, 0x100
off = FH
while off + CH <= len(data):
    magic, ln = struct.unpack_from("<II", data, off)
    assert magic == 0x4b434753
    p, end = off + CH, off + CH + ln
    while p < end:
        typ, size = struct.unpack_from("<II", data, p)
        if typ == CLOCK:
            data[p + 64:p + 128] = b"seed".ljust(64, b"\0")
            data[p + 128:p + 192] = b"linux".ljust(64, b"\0")
        p += size
    struct.pack_into("<I", data, off + 20, 0)
    struct.pack_into("<I", data, off + 20, zlib.crc32(bytes(data[off:end])))
    off = end
open(sys.argv[2], "wb").write(data)
PY
}
for t in trace script report; do
	out=tests/fuzz/corpus/$t
	mkdir -p "$out"
	find "$out" -name 'seed-*' -delete
	for n in target lockholds python; do
		anonymize "$dir/$n.raw" "$out/seed-$n.gsc"
	done
	# zkengine's (170 KB: page-fault stacks of malloc_trim) for the report alone, which needs
	# GPU idle windows and chains
	[ $t = report ] && anonymize "$dir/zkengine.raw" "$out/seed-zkengine.gsc"
	cp tests/golden/script.gsc "$out/seed-golden-script.gsc"
	cp tests/golden/report/trace.gsc "$out/seed-golden-report.gsc"
done
rm -rf "$dir"
du -sh tests/fuzz/corpus/*
