#!/usr/bin/env bash
# A quiet recorder: by default a recording says what it attached to, the runtimes it found and
# its losses, in at most 10 lines on stderr, never a note per library; -v adds the probed
# functions and the count of files without a symbol table ("no async runtime in N files"),
# -vv libbpf's debug output and a line per such file. Recorded: `sleep 1` launched, and a
# Python program (tests/record/pyfeeder.py, Debian's python3, driving simcuda through ctypes)
# attached with -p, each without and with -v.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
PY=/usr/bin/python3
[ -x "$PY" ] || die "$PY missing (make deps)"
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
need_built "$LIBCUDA"

# at_most N FILE WHAT: FILE holds at most N lines.
at_most() {
	echo "$3: $(wc -l <"$2") lines on stderr"
	sed 's/^/    /' "$2" | cut -c1-160
	[ "$(wc -l <"$2")" -le "$1" ] || die "$3: $(wc -l <"$2") lines on stderr, at most $1"
}
no_notes() {
	! grep -q 'no symbol table' "$1" || die "$2: a note per library without -v"
}

for v in "" -v; do
	"$GS" record $v -f -o "$TMP/sleep.gsc" -- sleep 1 >/dev/null 2>"$TMP/sleep$v.err" ||
		{ cat "$TMP/sleep$v.err"; die "record sleep 1 $v"; }
done
at_most 10 "$TMP/sleep.err" "sleep 1"
no_notes "$TMP/sleep.err" "sleep 1"
grep -q '^gapscope: no async runtime in [0-9]* files without a symbol table' "$TMP/sleep-v.err" ||
	{ cat "$TMP/sleep-v.err"; die "sleep 1 -v: no count of the files without a symbol table"; }

cd "$GAPSCOPE_ROOT"
for v in "" -v; do
	python3 - "$PY" "$LIBCUDA" "$TMP/py$v.gsc" "$TMP/py$v.err" $v <<'PY'
import os, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

py, libcuda, trace, errfile = sys.argv[1:5]
_, err = record_gated([py, "tests/record/pyfeeder.py", libcuda, "10", "5"], "pyfeeder", trace,
                      sys.argv[5:])
open(errfile, "w").write("".join(l + "\n" for l in err.join()))
PY
done
at_most 10 "$TMP/py.err" "python3 -p"
no_notes "$TMP/py.err" "python3 -p"
grep -q 'Python 3\.[0-9]* .*frames read' "$TMP/py.err" || die "python3 -p: the interpreter found is not said"
grep -q 'CUDA probes$' "$TMP/py.err" || die "python3 -p: what it attached to is not said"
grep -q 'cuLaunchKernel' "$TMP/py.err" && die "python3 -p: the probe list without -v"
grep -q '^ .*cuLaunchKernel' "$TMP/py-v.err" || { cat "$TMP/py-v.err"; die "python3 -p -v: no probe list"; }
grep -q '^gapscope: no async runtime in [0-9]* files without a symbol table' "$TMP/py-v.err" ||
	{ cat "$TMP/py-v.err"; die "python3 -p -v: no count of the files without a symbol table"; }
echo "python3 -p -v: $(wc -l <"$TMP/py-v.err") lines"
echo ok
