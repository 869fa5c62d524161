#!/usr/bin/env bash
# Golden test of `gapscope script`, without root: the checked-in trace tests/golden/script.gsc
# (a short recording of tests/record/target.c against tests/record/fakecuda.c) must print exactly
# tests/golden/script.txt (standard output, then the warnings). script prints user frames as
# dso+offset from the trace's own maps and kernel frames from its own symbols, so its output
# depends on the trace alone, not on the files of the machine it runs on.
#
#   tests/cases/script_golden.sh           compare; diff -u on a difference
#   tests/cases/script_golden.sh --regen   record a new trace (root) and its expected output
#
# The recording is made from a fixed directory, and the clock record's host and kernel names are
# replaced, so the trace names nothing of the machine it was made on.
set -eu
GAPSCOPE_ROOT=${GAPSCOPE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
GOLDEN=tests/golden
[ -x "$BUILD/gapscope" ] || die "$BUILD/gapscope not built"

print() {
	"$BUILD/gapscope" script "$@" >"$TMP/out.txt" 2>"$TMP/err.txt" || {
		cat "$TMP/err.txt"
		die "gapscope script failed"
	}
	cat "$TMP/out.txt" "$TMP/err.txt"
}

regen() {
	local dir=/tmp/gapscope-golden
	need_root "records the golden trace"
	CC=${CC:-cc}
	rm -rf "$dir" && mkdir -p "$dir"
	$CC -O2 -g -pthread -o "$dir/target" tests/record/target.c -ldl
	$CC -O2 -g -shared -fPIC -o "$dir/libcuda.so.1" tests/record/fakecuda.c
	(cd "$dir" && "$GAPSCOPE_ROOT/$BUILD/gapscope" record -f --uncompressed -o "$dir/t.gsc" -- ./target \
		--dlopen ./libcuda.so.1 --launches 6 --syncs 2 --trims 1 --contend --burn 0.02) \
		>/dev/null 2>"$TMP/record.err" || { cat "$TMP/record.err"; die "record failed"; }
	python3 - "$dir/t.gsc" "$GOLDEN/script.gsc" <<'PY'
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
            # gs_hdr 32, mono/real/boot 24, freq and cpus 8: then host[64], kernel[64].
            data[p + 64:p + 128] = b"golden".ljust(64, b"\0")
            data[p + 128:p + 192] = b"linux".ljust(64, b"\0")
        p += size
    struct.pack_into("<I", data, off + 20, 0)
    struct.pack_into("<I", data, off + 20, zlib.crc32(bytes(data[off:end])))
    off = end
open(sys.argv[2], "wb").write(data)
PY
	rm -rf "$dir"
	print "$GOLDEN/script.gsc" >"$GOLDEN/script.txt"
	echo "regenerated $GOLDEN/script.gsc ($(stat -c %s "$GOLDEN/script.gsc") bytes)" \
		"and $GOLDEN/script.txt ($(wc -l <"$GOLDEN/script.txt") lines)"
}

if [ "${1:-}" = --regen ]; then
	regen
	exit 0
fi
[ -f "$GOLDEN/script.gsc" ] || die "no golden trace: run $0 --regen"
print "$GOLDEN/script.gsc" >"$TMP/got.txt"
diff -u "$GOLDEN/script.txt" "$TMP/got.txt" ||
	die "gapscope script output differs from $GOLDEN/script.txt (regenerate: $0 --regen)"
echo "script output of $GOLDEN/script.gsc: $(wc -l <"$TMP/got.txt") lines as expected"
