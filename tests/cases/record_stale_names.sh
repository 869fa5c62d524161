#!/usr/bin/env bash
# A kernel handle freed by cuModuleUnload and handed out again for another kernel, without a
# lookup by name (cuModuleEnumerateFunctions), does not keep the old kernel's name as certain.
# tests/record/stale_names.c, on simcuda (which hands freed functions out again), names fr_scale
# in module A and launches it, unloads A, takes module B's functions, one of them the same
# handle (now fr_powers), and launches that.
#   launch mode: the handle is read afresh after the unload: fr_powers(handle);
#   launch mode, a driver whose handles carry no name (SIMCUDA_HANDLE_NAMES=0): fr_scale?, the
#     lookup's name in doubt, in the script and in the report's timeline;
#   -p after the lookup: fr_scale(handle) before the unload, fr_powers(handle) after.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
GS=$(realpath "$BUILD/gapscope")
SIM=$(realpath "$BUILD/simcuda/libcuda.so.1")
$CC -O2 -g -o "$TMP/stale_names" tests/record/stale_names.c -ldl
N=4

# launches FILE: "kernel func" of every launch in the trace, in order.
launches() {
	"$GS" script --no-stacks --no-meta "$1" >"$1.txt"
	sed -n 's/.* cuda:cuLaunchKernel kernel=\([^ ]*\) func=\(0x[0-9a-f]*\) .*/\1 \2/p' "$1.txt"
}
# expect FILE HANDLE FIRST SECOND: N launches named FIRST, then N named SECOND, all of HANDLE.
expect() {
	local want
	want=$( (for _ in $(seq $N); do echo "$3 $2"; done; for _ in $(seq $N); do echo "$4 $2"; done))
	launches "$1" >"$1.got"
	echo "$want" | diff -u - "$1.got" || die "$1: launches not named as expected"
	grep -q "cuda:cuModuleUnload owner=0x[0-9a-f]* dur=.* ret=0 " "$1.txt" || die "$1: no unload"
	grep -q '^# losses total=0 ' <("$GS" script "$1") || die "$1: losses"
}

run() { # TRACE ENV...: record stale_names in launch mode
	local trace=$1
	shift
	env "$@" "$GS" record --all-launches -o "$trace" -- "$TMP/stale_names" "$SIM" $N >"$TMP/out" 2>"$TMP/err" ||
		{ cat "$TMP/err"; die "record failed"; }
	cat "$TMP/out"
	handle=$(sed -n 's/^handle=//p' "$TMP/out")
	assert_eq "$(sed -n 's/^second=//p' "$TMP/out")" fr_powers "the reused handle's new kernel"
}

run "$TMP/launch.gsc"
expect "$TMP/launch.gsc" "$handle" fr_scale "fr_powers(handle)"

run "$TMP/hidden.gsc" SIMCUDA_HANDLE_NAMES=0
expect "$TMP/hidden.gsc" "$handle" fr_scale "fr_scale?"
grep -q 'cuda:cuModuleGetFunction name=fr_scale .* handle-name=DISAGREES' "$TMP/hidden.gsc.txt" ||
	die "the lookup did not find the handle's name missing"
"$GS" report "$TMP/hidden.gsc" -o "$TMP/rep" >/dev/null
python3 - "$TMP/rep/timeline.json" "$N" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = [e["args"]["kernel"] for e in ev if e.get("cat") == "cuda" and "kernel" in e.get("args", {})]
n = int(sys.argv[2])
if names != ["fr_scale"] * n + ["fr_scale?"] * n:
    sys.exit("FAIL: timeline kernels: %r" % names)
PY

# -p: attached after the lookup; names read from the handle, afresh after the unload.
cd "$GAPSCOPE_ROOT"
python3 - "$TMP" "$SIM" "$N" <<'PY'
import os, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, sim, n = sys.argv[1:]
t = subprocess.Popen([os.path.join(tmp, "stale_names"), sim, n, "--wait"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
out = Lines(t.stdout)
if out.wait(r"^ready$") is None:
    die("stale_names never got ready: %s" % out.join())
rec, err = start_record(t.pid, os.path.join(tmp, "attach.gsc"), ["--all-launches"])
t.stdin.write(b"go\n")
t.stdin.close()
t.wait()
rec.wait()
if t.returncode != 0 or rec.returncode != 0:
    die("target exit %s, recorder exit %s:\n%s" % (t.returncode, rec.returncode,
                                                  "\n".join(err.join())))
open(os.path.join(tmp, "attach.out"), "w").write("\n".join(out.join()) + "\n")
PY
handle=$(sed -n 's/^handle=//p' "$TMP/attach.out")
expect "$TMP/attach.gsc" "$handle" "fr_scale(handle)" "fr_powers(handle)"
echo ok
