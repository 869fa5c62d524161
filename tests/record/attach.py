# Helpers for tests/cases/attach_*.sh: start a target and wait for its output lines, start
# `gapscope record -p` and wait for its "recording pid" line, list our BPF programs and links.
# Every wait is for a line or an exit, never for a time.
import os, re, subprocess, sys, threading

ROOT = os.environ.get("GAPSCOPE_ROOT", ".")
BUILD = os.environ.get("BUILD", "build")
GS = os.path.realpath(os.path.join(ROOT, BUILD, "gapscope"))
ZK = os.path.realpath(os.path.join(ROOT, BUILD, "zkengine"))

# Every program name in bpf/*.bpf.c: how our programs are told from anyone else's.
OUR_PROGS = set()
for f in os.listdir(os.path.join(ROOT, "bpf")):
    if f.endswith(".bpf.c"):
        src = open(os.path.join(ROOT, "bpf", f)).read()
        OUR_PROGS |= set(re.findall(r"^int BPF_PROG\((\w+)", src, re.M))
        OUR_PROGS |= set(re.findall(r"^int (\w+)\(", src, re.M))
OUR_PROGS.discard("smoke")


def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Lines:
    """A child's output stream, read by a thread; wait() blocks until a line matches."""

    def __init__(self, stream, echo=None):
        self.lines, self.cv, self.eof = [], threading.Condition(), False
        self.echo = echo
        threading.Thread(target=self._run, args=(stream,), daemon=True).start()

    def _run(self, stream):
        for raw in stream:
            line = raw.decode(errors="replace").rstrip("\n")
            if self.echo:
                print(self.echo + line, flush=True)
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()
        with self.cv:
            self.eof = True
            self.cv.notify_all()

    def wait(self, pattern, start=0, deadline=None):
        """Index of the first line from START matching PATTERN; None at EOF without one, or
        after DEADLINE seconds (a guard against a line that never comes, not a timing)."""
        import time
        rx = re.compile(pattern)
        end = time.monotonic() + deadline if deadline else None
        with self.cv:
            i = start
            while True:
                while i < len(self.lines):
                    if rx.search(self.lines[i]):
                        return i
                    i += 1
                if self.eof:
                    return None
                left = end - time.monotonic() if end else None
                if left is not None and left <= 0:
                    return None
                self.cv.wait(left)

    def join(self):
        with self.cv:
            while not self.eof:
                self.cv.wait()
        return self.lines


def start_engine(args):
    """zkengine held before its last partition (--hold-last) until the test calls release():
    the run outlasts whatever the test does meanwhile, on a machine of any speed."""
    p = subprocess.Popen([ZK] + args + ["--hold-last"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = Lines(p.stdout)
    # The first result row: the engine is mid-run, its libcuda (simcuda) mapped and in use.
    if out.wait(r"^\s*\d+\s+\d+\s+[0-9.]+ ") is None:
        die("the engine ended before its first partition: " + "\n".join(out.join()))
    return p, out


def release(engine):
    """Let an engine from start_engine() prove its last partition and finish."""
    engine.stdin.close()


def start_record(pid, trace, extra=()):
    p = subprocess.Popen([GS, "record", "-f", "-o", trace, "-p", str(pid)] + list(extra),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = Lines(p.stderr)
    if err.wait(r"^gapscope: recording pid %d " % pid) is None:
        p.wait()
        die("the recorder never said it was recording (exit %s):\n%s" %
            (p.returncode, "\n".join(err.lines)))
    return p, err


def record_gated(cmd, name, trace, extra=()):
    """Run CMD, a program that prints "NAME: pid N" and waits for "go" on its standard input;
    attach `gapscope record -p N` to it, let it go, and wait for both to end (either failing
    is the test's failure). Returns the program's output lines and the recorder's stderr."""
    t = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = Lines(t.stdout)
    i = out.wait(r"^%s: pid \d+$" % re.escape(name))
    if i is None:
        die("%s never started: %s" % (name, out.join()))
    rec, err = start_record(int(out.lines[i].split()[-1]), trace, extra)
    t.stdin.write(b"go\n")
    t.stdin.close()
    t.wait()
    rec.wait()
    if t.returncode != 0 or rec.returncode != 0:
        die("%s exit %s, recorder exit %s:\n%s" % (name, t.returncode, rec.returncode,
                                                   "\n".join(err.join())))
    out.join()
    return out, err


def bpf_ids(pid):
    """The BPF programs, links and maps a process holds, from its fds' fdinfo: exactly ours,
    whatever else runs on the machine."""
    ids = {"prog": set(), "link": set(), "map": set()}
    fd_dir = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(fd_dir):
        try:
            info = open(os.path.join(fd_dir, fd)).read()
        except OSError:
            continue
        link = re.search(r"^link_id:\s*(\d+)", info, re.M)
        prog = re.search(r"^prog_id:\s*(\d+)", info, re.M)
        mp = re.search(r"^map_id:\s*(\d+)", info, re.M)
        if link:
            ids["link"].add(int(link.group(1)))
        if prog:
            ids["prog"].add(int(prog.group(1)))
        if mp:
            ids["map"].add(int(mp.group(1)))
    return ids


def bpf_listed(kind):
    """IDs bpftool lists now: kind prog, link or map."""
    out = subprocess.run(["bpftool", kind, "list"], capture_output=True, text=True).stdout
    ids = {int(m.group(1)) for m in re.finditer(r"^(\d+): ", out, re.M)}
    if kind == "link":  # and the programs links hold
        ids |= {("prog", int(p)) for p in re.findall(r"\bprog (\d+)", out)}
    return ids


def pinned():
    found = []
    for d, _, files in os.walk("/sys/fs/bpf"):
        found += [os.path.join(d, f) for f in files]
    return sorted(found)


def script(trace, *opts):
    r = subprocess.run([GS, "script"] + list(opts) + [trace], capture_output=True, text=True,
                       errors="replace")
    return r.returncode, r.stdout, r.stderr


def probe_bytes(pid, script_file, mode):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests/record/probe_bytes.py"),
                        str(pid), script_file, mode], capture_output=True, text=True)
    print(r.stdout, end="")
    return r.returncode == 0


def result_hash(lines):
    """What an engine run computed, without its timings: verdict per partition, counts."""
    import hashlib
    keep = []
    for l in lines:
        m = re.match(r"^\s*(\d+)\s+\d+\s+[0-9. ]+\s(\w+)$", l)
        if m:
            keep.append("part %s %s" % (m.group(1), m.group(2)))
        elif re.match(r"^(verification|partitions done|launches|malloc_trim calls|sync calls)", l):
            keep.append(l)
    return hashlib.sha256("\n".join(sorted(keep)).encode()).hexdigest(), len(keep)
