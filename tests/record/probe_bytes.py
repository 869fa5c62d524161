#!/usr/bin/env python3
# probe_bytes.py PID SCRIPT_TXT (clean|int3) [DIR]
#
# For every uprobe the trace lists ('# probe ID cuda|libc|user LIB:SYM ... off=0x...'), find the
# address that file offset has in the process (its /proc/PID/maps), and compare the bytes there
# (/proc/PID/mem) with the library file's bytes at that offset (read through /proc/PID/root).
#   clean: every probed address must hold the file's bytes (nothing left behind by a detach)
#   int3:  every probed address must hold an int3 (0xcc) where the file has something else
#          (the probes are live: shows that this check can see a breakpoint at all)
# With DIR, only the probes of files under DIR: a file every process maps (libc) may hold another
# recording's breakpoints, which are not this one's to remove.
# Exits 0 when all agree; prints one line per disagreement and a summary.
import os, re, sys

pid, script, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
under = os.path.join(sys.argv[4], "") if len(sys.argv) > 4 else "/"
N = 16

probes = []
for line in open(script, errors="replace"):
    m = re.match(r"^# probe \d+ (cuda|libc|user) (/\S+):(\S+) live-since=\S+.* off=0x([0-9a-f]+)$",
                 line.rstrip("\n"))
    if m and m.group(2).startswith(under):
        probes.append((m.group(2), m.group(3), int(m.group(4), 16)))
if not probes:
    sys.exit("probe_bytes: no attached uprobes listed in %s" % script)

maps = []
for line in open("/proc/%d/maps" % pid):
    f = line.split(maxsplit=5)
    if len(f) < 6:
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    maps.append((f[5].strip(), lo, hi, int(f[2], 16), f[1]))

ids = {}


def file_id(path):
    """The file behind PATH in the process's view: the same file may be listed under another
    name than the one the probe was attached by (a launched target's libc resolved as
    /lib/x86_64-linux-gnu/libc.so.6 is mapped as /usr/lib/..., /lib being a link)."""
    if path not in ids:
        try:
            st = os.stat("/proc/%d/root%s" % (pid, path))
            ids[path] = (st.st_dev, st.st_ino)
        except OSError:
            ids[path] = None
    return ids[path]


def same_file(a, b):
    return a == b or (file_id(a) is not None and file_id(a) == file_id(b))


bad = checked = 0
with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
    for path, sym, off in probes:
        addr = None
        for p, lo, hi, pgoff, perms in maps:
            if same_file(p, path) and pgoff <= off < pgoff + (hi - lo) and "x" in perms:
                addr = lo + off - pgoff
                break
        if addr is None:
            print("not mapped: %s:%s off=0x%x" % (path, sym, off))
            bad += 1
            continue
        with open("/proc/%d/root%s" % (pid, path), "rb") as f:
            f.seek(off)
            want = f.read(N)
        mem.seek(addr)
        got = mem.read(len(want))
        checked += 1
        if mode == "clean" and got != want:
            print("CHANGED %s:%s at 0x%x: memory %s, file %s" % (path, sym, addr, got.hex(),
                                                                 want.hex()))
            bad += 1
        elif mode == "int3" and not (got[0] == 0xCC and got[1:] == want[1:] and want[0] != 0xCC):
            print("no breakpoint at %s:%s 0x%x: memory %s, file %s" % (path, sym, addr,
                                                                      got.hex(), want.hex()))
            bad += 1
print("probe_bytes: %d probed addresses checked (%s), %d bad" % (checked, mode, bad))
sys.exit(1 if bad else 0)
