# record -p of tests/record/latecuda.c, which dlopen()s LIBCUDA when told to, after the
# recorder said it attached (after EXECS execs of itself, for each EXECS given): every call it
# makes after the recorder's "probes attached" line must be in the trace, and the window in
# which its calls could not be seen, from the mapping to the probes, is in the trace and in the
# report's losses (red team D31: it used to say "0 lost" alone). Run by
# tests/cases/attach_late_cuda.sh, and inside a pid namespace by tests/cases/record_pidns.sh.
# usage: late_cuda.py TMP LIBCUDA EXECS...
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attach import *

tmp, simcuda = sys.argv[1:3]
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
    # The trace's pids are one kind (the kernel's): its target's is the calls'.
    target = re.search(r"^# target pid=(\d+) attach", txt, re.M)
    tgids = set(re.findall(r"^\s*\S+\s+\d+/(\d+)\s+\[\d+\] [0-9.]+: cuda:cuCtxSynchronize\b", txt,
                           re.M))
    if not target or tgids - {target.group(1)}:
        die("the calls' pids %s are not the target's %s" % (tgids, target and target.group(1)))
    calls = len(re.findall(r"cuda:cuCtxSynchronize\b", txt))
    print("%d exec: %d of %d cuCtxSynchronize calls recorded" % (execs, calls, N))
    if calls != N:
        die("%d exec: %d calls recorded, %d made" % (execs, calls, N))
    windows = re.findall(r"^# unprobed pid=%s why=dlopen for_ns=(\d+) links=[1-9]" %
                         target.group(1), txt, re.M)
    if len(windows) != 1:
        die("%d exec: %d dlopen windows in the trace, want 1" % (execs, len(windows)))
    rep = subprocess.run([GS, "report", "-f", "-o", trace + ".rep",
                          trace], capture_output=True, text=True)
    if rep.returncode or "unprobed_processes 1," not in rep.stdout or \
            "1 process(es) ran before their probes were in place (dlopen 1)" not in rep.stdout:
        die("%d exec: the report does not say the window:\n%s%s" % (execs, rep.stdout,
                                                                   rep.stderr))
    print("%d exec: unprobed %.3f ms from the mapping to the probes" %
          (execs, int(windows[0]) / 1e6))


for execs in sys.argv[3:]:
    run(int(execs))
print("ok")
