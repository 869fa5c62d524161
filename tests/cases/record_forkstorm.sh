#!/usr/bin/env bash
# A fork storm under `record -p` (tests/record/forkstorm.c): the attached parent forks 50 children
# at once, each making 20 driver calls as soon as it runs, then (once the recorder says its own
# probes are in place, and the test tells it) 20 more. Each child runs without probes from its
# birth until they are in place (loader/uprobes.h): the kernel's filter drops its calls before
# any BPF program runs, so they cannot be counted; what can be, is:
#   - the trace holds each child's window (one "unprobed ... why=fork" record per child, with
#     the links made for it), and the report says them in its losses and notes;
#   - every call a child made after its probes were in place is in the trace: between 20 and 40
#     of each child's 40, the rest made in its window (printed per child: window, calls in it).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "attaches BPF programs"
cd "$GAPSCOPE_ROOT"
need_built "$GS"
$CC -O2 -g -o "$TMP/forkstorm" tests/record/forkstorm.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
N=50 K=20 M=20

# The target, the recorder (-v: it says when each child's probes are in place), and the relay of
# that word to the child.
python3 - "$TMP" "$GS" "$N" "$K" "$M" <<'PY' || die "the storm's recording failed"
import os, re, signal, subprocess, sys, threading
tmp, gs, n, k, m = sys.argv[1:]
t = subprocess.Popen([tmp + "/forkstorm", tmp + "/libcuda.so.1", n, k, m], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
assert t.stdout.readline() == "ready\n"
r = subprocess.Popen([gs, "record", "-v", "-o", tmp + "/t.gsc", "-p", str(t.pid)],
                     stderr=subprocess.PIPE, text=True, errors="replace")
live = threading.Event()
def relay():
    with open(tmp + "/rec.err", "w", buffering=1) as err:
        for line in r.stderr:
            err.write(line)
            if "recording pid" in line:
                live.set()
            p = re.search(r"pid (\d+): \d+ probe links after ", line)
            if p:
                os.kill(int(p.group(1)), signal.SIGUSR1)
th = threading.Thread(target=relay)
th.start()
if not live.wait(60):
    sys.exit("no recording")
t.stdin.write("go\n")
t.stdin.flush()
out = t.stdout.read()
open(tmp + "/storm.out", "w").write(out)
t.wait()
sys.exit(r.wait() or t.returncode)
PY
cat "$TMP/storm.out"
grep -qx "children=$N" "$TMP/storm.out" || die "not every child ended well: $(cat "$TMP/rec.err")"

"$GS" script --no-stacks "$TMP/t.gsc" >"$TMP/t.txt" 2>"$TMP/t.serr" || die "script: $(cat "$TMP/t.serr")"
grep -q '^# losses total=0 ' "$TMP/t.txt" || die "$(grep '^# losses' "$TMP/t.txt")"
python3 - "$TMP/t.txt" "$N" "$K" "$M" <<'PY' || die "the storm's trace"
import re, sys
path, n, k, m = sys.argv[1], *map(int, sys.argv[2:])
windows, calls, parent = {}, {}, None
for line in open(path, errors="replace"):
    w = re.match(r"# unprobed pid=(\d+) why=fork for_ns=(\d+) links=(\d+) ", line)
    if w:
        assert int(w.group(3)) > 0, "no links made for a child: " + line
        windows[int(w.group(1))] = int(w.group(2))
    c = re.match(r"\s*\S+\s+\d+/(\d+)\s.*cuda:cuStreamSynchronize", line)
    if c:
        calls[int(c.group(1))] = calls.get(int(c.group(1)), 0) + 1
assert len(windows) == n, "%d children's windows in the trace, want %d" % (len(windows), n)
for pid, ns in sorted(windows.items()):
    got = calls.get(pid, 0)
    print("child %d: unprobed %.3f ms, %d of its %d calls recorded, %d made in its window"
          % (pid, ns / 1e6, got, k + m, k + m - got))
    assert m <= got <= k + m, "child %d: %d calls recorded, want %d..%d" % (pid, got, m, k + m)
assert set(calls) <= set(windows), "calls of processes that are not the children"
PY

# The report says them: in its losses line and in a note.
"$GS" report -o "$TMP/rep" "$TMP/t.gsc" >"$TMP/rep.txt" 2>"$TMP/rep.err" || die "report: $(cat "$TMP/rep.err")"
grep -q "unprobed_processes $N," "$TMP/rep.txt" || die "report's losses: $(grep '^losses' "$TMP/rep.txt")"
grep -q "$N process(es) ran before their probes were in place (fork $N)" "$TMP/rep.txt" ||
	die "report's note: $(cat "$TMP/rep.txt")"
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert s["losses"]["unprobed_processes"] == int(sys.argv[2]), s["losses"]' "$TMP/rep/summary.json" "$N" ||
	die "summary.json's losses"
echo "fork storm: $N windows in the trace and the report; every call after them recorded"
