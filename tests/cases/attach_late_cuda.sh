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

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" "$SIMCUDA" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, simcuda = sys.argv[1:]
N = 40


def run(execs):
    trace = os.path.join(tmp, "late-%d.gsc" % execs)
    t = subprocess.Popen([os.path.join(tmp, "latecuda"), simcuda, str(N)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = Lines(t.stdout)

    def say(cmd, answer, at):
        t.stdin.write((cmd + "\n").encode())
        t.stdin.flush()
        i = out.wait("^%s$" % answer, at)
        if i is None:
            die("latecuda did not answer %s with %s" % (cmd, answer))
        return i + 1

    at = out.wait(r"^ready$") + 1
    rec, err = start_record(t.pid, trace)
    for _ in range(execs):
        at = say("exec", "ready", at)
    at = say("load", "loaded", at)
    # The recorder's word that the late library is probed: calls after it are recorded.
    if err.wait(r"^gapscope: pid %d mapped .*libcuda\.so\.1: probes attached$" % t.pid,
                deadline=60) is None:
        t.stdin.close()
        t.wait()
        rec.wait()
        die("the recorder never attached to the late libcuda (%d exec): %s" %
            (execs, "\n".join(err.join())))
    at = say("call", "called", at)
    t.stdin.close()
    t.wait()
    rec.wait()
    if t.returncode != 0 or rec.returncode != 0:
        die("target exit %s, recorder exit %s:\n%s" % (t.returncode, rec.returncode,
                                                      "\n".join(err.join())))
    rc, txt, warn = script(trace, "--no-stacks")
    calls = len(re.findall(r"cuda:cuCtxSynchronize\b", txt))
    print("%d exec: %d of %d cuCtxSynchronize calls recorded" % (execs, calls, N))
    if calls != N:
        die("%d exec: %d calls recorded, %d made" % (execs, calls, N))


run(0)
run(1)
print("ok")
PY
