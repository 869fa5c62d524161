#!/usr/bin/env bash
# record -p, and a CUDA driver (simcuda) the process dlopen()s long after the attach, also after
# an exec: the recorder probes it through the mapping's /proc/PID/map_files link (the loader has
# closed its fd by the time the event is read), says so, and every call made after that line is
# in the trace. tests/record/latecuda.c loads the library and calls it only when told to: the
# test tells it once the recorder said it attached, and each wait is for a line. A driver loaded
# from a directory whose name holds ESC, OSC, CR and LF is named on the recorder's stderr through
# the \xHH escaper: no byte below 0x20 but the newlines that end its lines.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
CC=${CC:-cc}
SIMCUDA=$(realpath "$BUILD/simcuda/libcuda.so.1")
[ -e "$SIMCUDA" ] || die "$SIMCUDA not built"
$CC -O2 -g -o "$TMP/latecuda" tests/record/latecuda.c -ldl

python3 tests/record/late_cuda.py "$TMP" "$SIMCUDA" 0 1

# A late driver under a hostile directory name: the recorder's own lines stay lines.
d="$TMP/$(printf 'x\033]0;OWNED\007\r\nforged: line')"
mkdir -p "$d"
cp "$SIMCUDA" "$d/libcuda.so.1"
mkfifo "$TMP/in" "$TMP/rec.fifo"
"$TMP/latecuda" "$d/libcuda.so.1" 10 <"$TMP/in" >"$TMP/late.out" &
P=$!
exec {w}>"$TMP/in"
"$GS" record -o "$TMP/hostile.gsc" -p "$P" 2>"$TMP/rec.fifo" {w}>&- &
R=$!
exec {r}<"$TMP/rec.fifo"
read_until "$r" "$TMP/rec.err" "*recording pid*" || die "no attach: $(cat -v "$TMP/rec.err")"
echo load >&$w
read_until "$r" "$TMP/rec.err" "*probes attached*" || die "the late driver not probed: $(cat -v "$TMP/rec.err")"
echo call >&$w
exec {w}>&-
cat <&$r >>"$TMP/rec.err"
wait "$P" || die "latecuda failed"
wait "$R" || die "record failed: $(cat -v "$TMP/rec.err")"
cat -v "$TMP/rec.err"
# Bytes below 0x20 other than newline ('\r' of the progress line aside: stderr is no terminal).
bad=$(LC_ALL=C tr -d '\n' <"$TMP/rec.err" | LC_ALL=C tr -cd '\000-\037' | wc -c)
assert_eq "$bad" 0 "control bytes on the recorder's stderr"
grep -qF 'x\x1b]0;OWNED\x07\x0d\x0aforged: line/libcuda.so.1: probes attached' "$TMP/rec.err" ||
	die "the path is not shown escaped"
! grep -q '^forged: line' "$TMP/rec.err" || die "a forged line"
echo ok
