#!/usr/bin/env python3
"""How much of each long futex wait its thread's off-CPU intervals cover.

    offcpu_cover.py SCRIPT [MIN_MS] [SHARE]

SCRIPT is `gapscope script --no-stacks` output. A thread inside a futex wait that lasts MIN_MS
(default 2) or more is asleep, or woken and waiting for a CPU, for all of it but the microseconds
it spends entering and leaving the system call: its off-CPU intervals must cover SHARE (default
0.9) of the wait. A wait covered less lost an off-CPU interval: the interval from a switch-out
whose switch-in the scheduler's tracepoint never reported, which the recorder must end at the
thread's next sign of running (bpf/offcpu.bpf.h). Prints the waits checked and the least covered;
exits 1 if any is under SHARE, 2 if there is no such wait to check.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*.*?\s+(\d+)/\d+\s+\[\d+\]\s+(\d+\.\d+):\s+(\S+)\s(.*)$")
DUR = re.compile(r"\bdur=(\d+(?:\.\d+)?)(s|ms|us|ns)\b")
UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def main():
    path = sys.argv[1]
    min_s = float(sys.argv[2] if len(sys.argv) > 2 else 2) / 1e3
    share = float(sys.argv[3] if len(sys.argv) > 3 else 0.9)
    waits, offs = defaultdict(list), defaultdict(list)
    unseen = 0
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            tid, ts, kind, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
            d = DUR.search(rest)
            if not d:
                continue
            dur = float(d.group(1)) * UNIT[d.group(2)]
            if kind == "futex:wait" and dur >= min_s:
                waits[tid].append((ts, ts + dur, line.strip()))
            elif kind == "sched:offcpu":
                offs[tid].append((ts, ts + dur))
                unseen += "resume=unseen" in rest
    n, bad, least = 0, 0, (2.0, "")
    for tid, ws in waits.items():
        for a, b, text in ws:
            cov = sum(max(0.0, min(b, e) - max(a, s)) for s, e in offs[tid] if s < b and e > a)
            frac = cov / (b - a)
            n += 1
            least = min(least, (frac, text))
            if frac < share:
                bad += 1
                print("covered %.0f%%: %s" % (100 * frac, text))
    if not n:
        print("no futex wait of %g ms or more" % (min_s * 1e3))
        return 2
    print("%d futex waits of %g ms or more, %d covered less than %.0f%%, least %.0f%% "
          "(%d off-CPU intervals resumed unseen)"
          % (n, min_s * 1e3, bad, 100 * share, 100 * least[0], unseen))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
