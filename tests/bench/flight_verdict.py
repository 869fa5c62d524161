#!/usr/bin/env python3
"""The flight recorder's budget, judged from what a run left (issue 48): the RESULT lines of
tests/bench/flight_soak.sh and tests/gpu/flight.sh, each saying yes or NO for its own reason.
tests/cases/flight_verdict.sh feeds it canned runs.

  flight_verdict.py --err RECORD.ERR --samples FILE [--tck 100] [--cpu-max 0.3]
                    [--bound-max 160] [--min-secs S] [--stall S0 S1]

--samples: a line every few seconds, "SECONDS VMRSS_KB VMHWM_KB SELF_TICKS CHILD_TICKS": the
recorder's /proc/PID/status and stat (utime + stime, cutime + cstime: the dumps' reports, which
it reaps). CPU a minute is the last line's ticks, own and children's, less those of the first line
at least --warmup (30) seconds in, over the seconds between them: the cost once started (the
whole run's, start-up included, is printed too). The peak RSS is the recorder's cost line (its VmHWM and the largest
report's added) where it printed one, else the largest VmHWM sampled (the reports' unknown: NO).
--stall: the injected stall's CLOCK_MONOTONIC ns; a dump whose report has a gap overlapping it
blamed on malloc_trim through a lock is what the stall's RESULT line asks for.
"""
import argparse
import json
import re


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--err", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--tck", type=int, default=100)
    p.add_argument("--cpu-max", type=float, default=0.3)
    p.add_argument("--bound-max", type=int, default=160)
    p.add_argument("--min-secs", type=int, default=0)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--stall", type=int, nargs=2)
    return p.parse_args(argv)


def yes(ok):
    return "yes" if ok else "NO"


def stall_dumps(err, s0, s1):
    """Each dump's line, and whether one names malloc_trim through a lock over the stall."""
    found = False
    for m in re.finditer(r"dump (\S+): (.*?), window (\d+)\.\.(\d+) ns \(([0-9.]+) s, ([^)]*)\).*"
                         r"written in (\d+) ms \((\d+) ms after the window\), (.*?) in (\d+) ms",
                         err):
        path, why = m.group(1), m.group(2)
        try:
            with open(path + ".report/summary.json") as f:
                s = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: %s: no report (%s)" % (path.split("/")[-1], why, e))
            continue
        hit = [g for g in s["gaps"] if g["start_ns"] < s1 and g["end_ns"] > s0]
        trim = [g for g in hit if g.get("cause") and g["cause"].get("kind") == "malloc_trim" and
                any(link.get("lock") for link in g.get("chain", []))]
        top = s["causes"][0] if s.get("causes") else {}
        print("%s: %s | %s | written %s ms (%s ms after the window), report %s ms | top %s %s"
              " %.2f | overlaps the stall: %d gap(s), %d malloc_trim via a lock" % (
                  path.split("/")[-1], why, m.group(6), m.group(7), m.group(8), m.group(10),
                  top.get("kind"), top.get("function"), top.get("share", 0), len(hit),
                  len(trim)))
        found |= bool(trim)
    return found


def main(argv=None):
    a = parse(argv)
    with open(a.err) as f:
        err = f.read()
    with open(a.samples) as f:
        rows = [ln.split() for ln in f if len(ln.split()) == 5]
    lines = []

    if a.stall:
        found = stall_dumps(err, a.stall[0], a.stall[1])
        lines.append("RESULT: the injected stall's dump names malloc_trim via the lock: %s"
                     % yes(found))

    summ = re.search(r"(\d+) chunk\(s\) let go early for --flight-mb, (\d+) record\(s\) dropped",
                     err)
    if summ:
        lines.append("RESULT: records dropped: %s (%s chunk(s) let go early): %s" % (
            summ.group(2), summ.group(1), yes(summ.group(2) == "0")))
    else:
        lines.append("RESULT: no flight summary line (records dropped unknown): NO")

    secs = 0
    if len(rows) >= 2:
        r0, r1 = [int(x) for x in rows[0]], [int(x) for x in rows[-1]]
        secs = r1[0] - r0[0]
    if secs > 0:
        own = (r1[3] - r0[3]) / a.tck
        kids = (r1[4] - r0[4]) / a.tck
        print("recorder CPU over %d s sampled: %.2f s own, %.2f s in its children (the dumps'"
              " reports): %.3f s/min with its start-up" % (secs, own, kids,
                                                          (own + kids) * 60 / secs))
    # Always on: what it costs once started (loading and attaching its BPF programs took about
    # 0.9 s of CPU on the 2-CPU machine), from the first sample at least --warmup s in.
    base = next(([int(x) for x in r] for r in rows if int(r[0]) - int(rows[0][0]) >= a.warmup),
                None)
    steady = r1[0] - base[0] if secs > 0 and base else 0
    if steady > 0:
        own = (r1[3] - base[3]) / a.tck
        kids = (r1[4] - base[4]) / a.tck
        cpu = (own + kids) * 60 / steady
        print("recorder CPU over %d s from %d s in: %.2f s own, %.2f s in its children" % (
            steady, base[0] - r0[0], own, kids))
        lines.append("RESULT: CPU %.3f s/min (children included, from %d s in) <= %g: %s" % (
            cpu, base[0] - r0[0], a.cpu_max, yes(cpu <= a.cpu_max)))
    else:
        lines.append("RESULT: CPU not measured (no sample after the first %d s): NO" % a.warmup)

    if a.min_secs:
        lines.append("RESULT: sampled over %d s, at least %d s: %s" % (
            secs, a.min_secs, yes(secs >= a.min_secs)))

    bound = re.search(r"flight: memory: about (\d+) MiB in all", err)
    cost = re.search(r"flight: cost: .*; peak RSS ([0-9.]+) MiB, ([0-9.]+) MiB with the largest "
                     r"report's, against the stated (\d+) MiB", err)
    hwm = max([int(r[2]) for r in rows] or [0]) / 1024
    if rows:
        print("recorder VmRSS sampled %d..%d KiB (first %d), VmHWM sampled %d KiB" % (
            min(int(r[1]) for r in rows), max(int(r[1]) for r in rows), int(rows[0][1]),
            hwm * 1024))
    if not bound:
        lines.append("RESULT: no memory bound stated at start-up: NO")
    else:
        b = int(bound.group(1))
        lines.append("RESULT: the stated bound %d MiB <= %d MiB: %s" % (
            b, a.bound_max, yes(b <= a.bound_max)))
        if cost:
            own, both = float(cost.group(1)), float(cost.group(2))
            peak = max(both, hwm)
            lines.append("RESULT: peak RSS %.1f MiB (VmHWM %.1f MiB, with the largest dump "
                         "report's) within the stated %d MiB: %s" % (
                             peak, max(own, hwm), b, yes(peak <= b and int(cost.group(3)) == b)))
        else:
            lines.append("RESULT: no cost line from the recorder (the reports' peak RSS "
                         "unknown), VmHWM sampled %.1f MiB of the stated %d MiB: NO" % (hwm, b))
    for ln in lines:
        print(ln)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
