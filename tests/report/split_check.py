#!/usr/bin/env python3
"""For tests/cases/report_launchbound.sh and report_scenarios.sh: a report's idle split.

  split_check.py sum SUMMARY
      every device's idle_split parts sum to its idle_ns (within 0.1%), its gaps part is the
      sum of its gaps' durations (within 0.1% of the idle time), and the headline figure is
      the busy time over the active window.
  split_check.py truth SUMMARY TRUTH TOL
      the parts (and the busy share) against the kernel intervals of TRUTH (gpu_busy lines):
      each part's share of the run within TOL points of the truth's.
"""
import json
import sys

MS = 1000000


def fail(msg):
    sys.exit("FAIL: " + msg)


def check_sum(s):
    for d in s["devices"]:
        sp = d["idle_split"]
        parts = sp["setup_ns"] + sp["gaps_ns"] + (sp["under_floor_ns"] or 0) + sp["tail_ns"]
        idle = d["idle_ns"]
        gaps = sum(g["duration_ns"] for g in s["gaps"] if g["device"] == d["id"])
        print("device %d: idle %.3f ms = setup %.3f + gaps %.3f + under %s + tail %.3f "
              "(parts %.3f); the gap list %.3f ms" % (
                  d["id"], idle / 1e6, sp["setup_ns"] / 1e6, sp["gaps_ns"] / 1e6,
                  "-" if sp["under_floor_ns"] is None else "%.3f" % (sp["under_floor_ns"] / 1e6),
                  sp["tail_ns"] / 1e6, parts / 1e6, gaps / 1e6))
        if abs(parts - idle) > 0.001 * max(idle, 1):
            fail("device %d: the parts sum to %d, idle_ns %d" % (d["id"], parts, idle))
        if abs(gaps - sp["gaps_ns"]) > 0.001 * max(idle, MS):
            fail("device %d: gaps part %d, the gaps %d" % (d["id"], sp["gaps_ns"], gaps))
        active = d["active_end_ns"] - d["active_start_ns"]
        want = 100.0 * min(d["busy_ns"], active) / active if active else 0
        if abs(d["active_busy_pct"] - want) > 0.01:
            fail("device %d: active_busy_pct %.2f, busy over the window %.2f" % (
                d["id"], d["active_busy_pct"], want))


def truth_split(path, dev, t0, t1):
    busy = sorted((r["start_ns"], r["end_ns"]) for r in map(json.loads, open(path))
                  if r.get("kind") == "gpu_busy" and r["gpu"] == dev)
    runs = []
    for a, b in busy:
        a, b = max(a, t0), min(b, t1)
        if b <= a:
            continue
        if runs and a <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b])
    win = [runs[i][0] - runs[i - 1][1] for i in range(1, len(runs))]
    return {"busy": sum(b - a for a, b in runs), "setup": runs[0][0] - t0,
            "tail": t1 - runs[-1][1], "gaps": sum(w for w in win if w >= MS),
            "under": sum(w for w in win if w < MS),
            "active": runs[-1][1] - runs[0][0]}


def check_truth(s, truth, tol):
    t0, run = s["start_ns"], s["duration_ns"]
    for d in s["devices"]:
        t = truth_split(truth, d["id"], t0, t0 + run)
        sp = d["idle_split"]
        got = {"setup": sp["setup_ns"], "gaps": sp["gaps_ns"], "under": sp["under_floor_ns"],
               "tail": sp["tail_ns"], "busy": d["busy_ns"]}
        for k in ("busy", "setup", "gaps", "under", "tail"):
            g = got[k]
            print("device %d %-5s truth %5.1f%%  report %s" % (
                d["id"], k, 100.0 * t[k] / run, "-" if g is None else "%5.1f%%" % (100.0 * g / run)))
            if g is None:
                fail("device %d: %s not measured" % (d["id"], k))
            if abs(100.0 * (g - t[k]) / run) > tol:
                fail("device %d: %s %.1f%% of the run, the truth %.1f%%" % (
                    d["id"], k, 100.0 * g / run, 100.0 * t[k] / run))
        tb = 100.0 * t["busy"] / t["active"]
        print("device %d: busy over the active window: truth %.1f%%, report %.1f%%" % (
            d["id"], tb, d["active_busy_pct"]))
        if abs(d["active_busy_pct"] - tb) > tol:
            fail("device %d: headline busy %.1f%%, the truth %.1f%%" % (
                d["id"], d["active_busy_pct"], tb))


s = json.load(open(sys.argv[2]))
if sys.argv[1] == "sum":
    check_sum(s)
elif sys.argv[1] == "truth":
    check_sum(s)
    check_truth(s, sys.argv[3], float(sys.argv[4]))
else:
    fail("usage: split_check.py sum SUMMARY | truth SUMMARY TRUTH TOL")
