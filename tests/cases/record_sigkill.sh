#!/usr/bin/env bash
# Issue 5, "what it must show" 3: a recorder killed with SIGKILL mid-run leaves its target
# unharmed and running, and a trace readable up to its last whole chunk (gapscope script works
# on it and warns that the recording did not finish).
#   -p: zkengine attached; SIGKILL once the recorder says it is recording and its trace holds a
#       chunk of events; the engine finishes verified, its probed bytes restored.
#   launch: the target loads a libcuda late (dlopen), which stops it for the attach; the recorder
#       is killed while the target is stopped there: the guardian's SIGCONT must wake it, and
#       it finishes.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
[ -x "$BUILD/zkengine" ] || die "$BUILD/zkengine not built"
cd "$GAPSCOPE_ROOT"
$CC -O2 -g -pthread -o "$TMP/target" tests/record/target.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
# A target that maps libcuda late, when told to on stdin.
cat >"$TMP/late.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char line[16];

	printf("pid=%d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || !dlopen(argv[1], RTLD_NOW))
		return 2;
	printf("loaded\n");
	return 0;
}
EOF
$CC -O2 -o "$TMP/late" "$TMP/late.c" -ldl

python3 - "$TMP" <<'PY'
import os, signal, sys, threading, time
sys.path.insert(0, "tests/record")
from attach import *

tmp = sys.argv[1]

# -p mode.
trace = os.path.join(tmp, "p.gsc")
args = ["--device", "sim", "--partitions", "60", "--log2n", "12", "--verify", "--seed", "3"]
engine, out = start_engine(args)
rec, err = start_record(engine.pid, trace)
# Wait until the trace's whole chunks hold a launch (the recorder writes a chunk on its periodic
# tick): a state read from the trace itself, not a time or a file size, since the attach-time
# records (maps, kernel symbols) alone can fill the first chunks.
while rec.poll() is None and engine.poll() is None:
    if "cuda:cuLaunchKernel" in script(trace, "--no-stacks")[1]:
        break
    time.sleep(0.05)
rec.send_signal(signal.SIGKILL)
rec.wait()
if engine.poll() is not None:
    die("the engine ended before the kill, before its release")
st = open("/proc/%d/stat" % engine.pid).read().rsplit(")", 1)[1].split()[0]
if st in "tT":
    die("the target is stopped after the recorder's death")
rc, txt, warn = script(trace, "--no-stacks")
print(warn, end="")
if rc != 0:
    die("gapscope script failed on the cut trace")
if "recording did not finish" not in warn:
    die("no warning about the unfinished recording")
if "# end events" in txt or "cuda:cuLaunchKernel" not in txt:
    die("the cut trace lacks its events (or has an end record)")
open(os.path.join(tmp, "p.txt"), "w").write(txt)
if not probe_bytes(engine.pid, os.path.join(tmp, "p.txt"), "clean"):
    die("a breakpoint stayed behind after the recorder's death")
release(engine)
engine.wait()
lines = out.join()
if engine.returncode != 0 or not any(l.startswith("verification passed") for l in lines):
    die("the engine did not finish verified after the recorder's death")
print("-p: %d events read from the cut trace, engine verified" % txt.count("\n"))

# Launch mode, killed while the target is stopped for a late attach. The recorder is stopped
# (SIGSTOP) first, so that it cannot send the SIGCONT itself; then the target dlopens libcuda,
# BPF stops it, and the recorder dies: only the guardian can wake it.
trace = os.path.join(tmp, "l.gsc")
rec = subprocess.Popen([GS, "record", "-f", "-o", trace, "--", os.path.join(tmp, "late"),
                        os.path.join(tmp, "libcuda.so.1")], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
tout = Lines(rec.stdout)
i = tout.wait(r"^pid=\d+$")
if i is None:
    die("the late-loading target did not start: %s" % rec.stderr.read())
tpid = int(tout.lines[i].split("=")[1])
rec.send_signal(signal.SIGSTOP)
rec.stdin.write(b"go\n")
rec.stdin.flush()

def state(pid):
    return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]

while state(tpid) != "T":  # BPF stopped it at the mmap of libcuda: a state, not a time
    time.sleep(0.01)
rec.send_signal(signal.SIGKILL)
rec.wait()
# The guardian's SIGCONT: the target runs on and finishes. (Without it this wait would never end;
# the bound only turns such a hang into a failure.)
done = threading.Event()
threading.Thread(target=lambda: (tout.wait(r"^loaded$"), done.set()), daemon=True).start()
if not done.wait(60) or tout.wait(r"^loaded$") is None:
    die("the launched target stayed stopped after the recorder's death (state %s)" % state(tpid))
rc, txt, warn = script(trace, "--no-stacks")
if rc != 0 or "recording did not finish" not in warn:
    die("launch mode: cut trace not read with a warning: %s" % warn)
print("launch: target stopped for the attach, recorder killed, target resumed and finished")
print("ok")
PY
