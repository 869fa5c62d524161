#!/usr/bin/env bash
# Red team D21: a library truncated while the recorder reads it. Truncating a file unmaps its
# pages from every process that maps it, and the next read of one raises SIGBUS: the recorder
# reads the target's ELF files with pread, never mapped, and a file that changes under it is
# said once ("changed while read: its frames unnamed") and read no more. Three runs, each ending
# with the recording (or report) going on, the trace complete and exit 0:
#  1. record --flight, the live analysis naming and unwinding the feeder's frames in libspin.so:
#     truncated once the recorder holds the file (its descriptor), as its owner may;
#  2. record -p's attach scan of a library of 100,000 symbols: truncated under one of the
#     scan's reads (tests/record/truncwatch.c holds the read with fanotify until the file is
#     truncated: the window is hit by design, the read numbered from a run that counts them);
#  3. report of the flight run's trace, its libspin.so put back as it was and truncated under
#     the report's reads of it the same way: summary.json's state for the file says so.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
$CC -O2 -Wall -o "$TMP/truncwatch" tests/record/truncwatch.c
$CC -O1 -g -fno-omit-frame-pointer -o "$TMP/truncfeed" tests/record/truncfeed.c -ldl
cp "$LIBCUDA" "$TMP/libcuda.so.1"
echo 'void spin_here(void) { for (volatile long i = 0; i < 20000000; i++) ; }' >"$TMP/spin.c"
$CC -O1 -g -fno-omit-frame-pointer -shared -fPIC -o "$TMP/libspin.so" "$TMP/spin.c"
cp "$TMP/libspin.so" "$TMP/libspin.orig"
P='' R=''
trap 'rc=$?; kill $P $R 2>/dev/null || true; (exit $rc); cleanup' EXIT

# said ERR FILE: how many times ERR says FILE changed while read.
said() { grep -c "^gapscope: $2 changed while read: its frames unnamed$" "$1" || true; }
# holds PID FILE: whether process PID has FILE open.
holds() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

# 1. Flight mode. The feeder, a child of P, spins in libspin.so after each launch; P waits on a
# FIFO once the feeder is gone (truncated under it, its code faults too).
mkfifo "$TMP/p.in" "$TMP/r.err"
(
	exec 3<"$TMP/p.in"
	"$TMP/truncfeed" "$TMP/libcuda.so.1" "$TMP/libspin.so" 100000 3<&- || true
	read -r _ <&3
) &
P=$!
exec {w}>"$TMP/p.in"
mkdir "$TMP/dumps"
"$GS" record --flight 5 --dump-dir "$TMP/dumps" -o "$TMP/flight.gsc" -p "$P" 2>"$TMP/r.err" {w}>&- &
R=$!
exec {r}<"$TMP/r.err"
read_until "$r" "$TMP/flight.err" "*recording pid*" || die "no attach: $(cat "$TMP/flight.err")"
# The live analysis opens the file to name and unwind frames in it, and holds it from then on.
for _ in $(seq 1200); do
	holds "$R" "$TMP/libspin.so" && break
	kill -0 "$R" || die "the recorder ended: $(cat "$TMP/flight.err")"
	sleep 0.05
done
holds "$R" "$TMP/libspin.so" || die "the live analysis never read libspin.so"
truncate -s 0 "$TMP/libspin.so"
if ! read_until "$r" "$TMP/flight.err" "*libspin.so changed while read*"; then
	wait "$R" && rc=0 || rc=$?
	die "flight: the change not said (exit $rc): $(cat "$TMP/flight.err")"
fi
echo >&$w
exec {w}>&-
cat <&$r >>"$TMP/flight.err"
exec {r}<&-
wait "$R" || die "record --flight failed ($?): $(cat "$TMP/flight.err")"
R=
wait "$P" || true
P=
cat "$TMP/flight.err"
assert_eq "$(said "$TMP/flight.err" "$TMP/libspin.so")" 1 "flight: the change said"
"$GS" script "$TMP/flight.gsc" >"$TMP/flight.script" 2>"$TMP/flight.script.err" ||
	die "script of the flight trace failed: $(cat "$TMP/flight.script.err")"
grep -q '^# end events=' "$TMP/flight.script" || die "the flight trace has no end record"
[ -z "$(other_warnings "$TMP/flight.script.err")" ] || die "$(cat "$TMP/flight.script.err")"

# 2. The attach scan: P maps libbig.so (100,000 functions); its symbol tables are read in
# windows while the recorder attaches. A first run counts the recorder's reads of the file; the
# second truncates it under the one halfway through them.
python3 -c 'import sys
with open(sys.argv[1], "w") as f:
    f.write(".text\n")
    for i in range(100000):
        n = "big_function_name_padding_%08d" % i
        f.write(".globl %s\n.type %s,@function\n%s:\nret\n.size %s,1\n" % (n, n, n, n))' "$TMP/big.s"
$CC -shared -nostdlib -o "$TMP/libbig.so" "$TMP/big.s"
cp "$TMP/libbig.so" "$TMP/libbig.orig"

# scan N NAME: record -p of a process that maps libbig.so, under truncwatch at read N.
scan() {
	local out=$TMP/$2
	cp "$TMP/libbig.orig" "$TMP/libbig.so"
	rm -f "$TMP/p.in" "$TMP/r.err"
	mkfifo "$TMP/p.in" "$TMP/r.err"
	"$TMP/truncfeed" "$TMP/libbig.so" - 0 <"$TMP/p.in" >"$out.out" &
	P=$!
	exec {w}>"$TMP/p.in"
	until grep -q loaded "$out.out"; do
		kill -0 "$P" || die "truncfeed failed"
		sleep 0.01
	done
	"$TMP/truncwatch" "$TMP/libbig.so" "$1" "$GS" record -o "$out.gsc" -p "$P" \
		2>"$TMP/r.err" {w}>&- &
	R=$!
	exec {r}<"$TMP/r.err"
	if ! read_until "$r" "$out.err" "*recording pid*"; then
		wait "$R" && rc=0 || rc=$?
		die "$2: no attach (exit $rc): $(cat "$out.err")"
	fi
	exec {w}>&-
	cat <&$r >>"$out.err"
	exec {r}<&-
	wait "$R" || die "$2: record failed ($?): $(cat "$out.err")"
	R=
	wait "$P" || die "$2: truncfeed failed"
	P=
	cat "$out.err"
	"$GS" script "$out.gsc" >"$out.script" 2>"$out.script.err" ||
		die "$2: script failed: $(cat "$out.script.err")"
	grep -q '^# end events=' "$out.script" || die "$2: the trace has no end record"
	[ -z "$(other_warnings "$out.script.err")" ] || die "$2: $(cat "$out.script.err")"
}
scan 0 count
reads=$(sed -n 's/^truncwatch: \([0-9]*\) reads$/\1/p' "$TMP/count.err")
echo "the recorder read libbig.so ${reads:-0} times"
assert_eq "$(said "$TMP/count.err" "$TMP/libbig.so")" 0 "untouched: nothing said"
# (A recorder that maps the file reads it without a read call: truncated once it maps it.)
cut=$((${reads:-0} / 2 + 1))
scan "$cut" cut
# The symbol tables, 2.4 MB each, read in windows of 768 KiB: at least 8 reads.
[ "${reads:-0}" -ge 8 ] || die "libbig.so read ${reads:-0} times: no scan in windows"
grep -q "^truncwatch: truncated at read $cut$" "$TMP/cut.err" || die "not truncated under a read"
assert_eq "$(said "$TMP/cut.err" "$TMP/libbig.so")" 1 "the attach scan: the change said"

# 3. The report of the flight trace, libspin.so put back as it was (the same build-id) and
# truncated under the report's reads of it: counted first, then cut halfway.
report() {
	cp "$TMP/libspin.orig" "$TMP/libspin.so"
	rm -rf "$TMP/$2.report"
	"$TMP/truncwatch" "$TMP/libspin.so" "$1" "$GS" report "$TMP/flight.gsc" \
		-o "$TMP/$2.report" >/dev/null 2>"$TMP/$2.err" ||
		die "$2: report failed ($?): $(cat "$TMP/$2.err")"
	cat "$TMP/$2.err"
}
report 0 rcount
reads=$(sed -n 's/^truncwatch: \([0-9]*\) reads$/\1/p' "$TMP/rcount.err")
echo "the report read libspin.so ${reads:-0} times"
cut=$((${reads:-0} / 2 + 1))
report "$cut" rcut
[ "${reads:-0}" -ge 2 ] || die "the report read libspin.so ${reads:-0} times"
grep -q "^truncwatch: truncated at read $cut$" "$TMP/rcut.err" || die "not truncated under a read"
assert_eq "$(said "$TMP/rcut.err" "$TMP/libspin.so")" 1 "report: the change said"
python3 - "$TMP/rcut.report/summary.json" "$TMP/libspin.so" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["symbols"]["unnamed_files"]
states = {f["path"]: f["state"] for f in files}
assert states.get(sys.argv[2]) == "changed", states
PY
echo "PASS: truncated libraries: flight, attach scan and report went on, each said it once"
